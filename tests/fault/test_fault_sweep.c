/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fault_sweep.c - make each kernel call and heap allocation of a
 * small workload fail in turn, and check that every failure is clean.
 *
 * The workload builds what a forwarder builds (4 KiB and 2 MiB arenas,
 * allocators, VA and PA DMA domains, page_pools with DMA mapping, a null
 * port forwarding into a veth pair, an af_xdp port on a kernel veth pair
 * of the test's own, a verbs DMA domain where there is an RDMA device),
 * moves some pages and frames and tears it all down; and a growable arena
 * (2 MiB pages where there are, else 4 KiB) under an allocator resized
 * by hand, mapped in the VA and PA domains, grown to its maximum, used,
 * shrunk and grown again: every kernel call and heap allocation of
 * pp_allocator_grow() and pp_allocator_shrink() (the slot's file, its
 * pages, the listeners' mappings) fails in turn. A clean run passes H
 * fault sites (lib/os's seam, pp_os_fault.h). Run n (1..H) forks a child
 * that fails the n-th hit and checks:
 *   - no crash, and the step that failed returns NULL/-errno;
 *   - the library said something (a message at WARN or worse), unless the
 *     failure was absorbed (the workload completed anyway);
 *   - nothing leaked: the same open descriptors and /proc/self/maps
 *     entries as before, the allocators balanced (pp_allocator_check),
 *     and in the ASan build LeakSanitizer at the child's exit;
 *   - the growable allocator is still usable at the size it says it has:
 *     every page of its committed steps can be allocated and freed, and
 *     the walker passes;
 *   - the same workload then succeeds with nothing injected.
 * Run H + 1 must inject nothing: the sweep covered every hit.
 *
 * A site hit many times in one step fails the same way each time (the
 * 4 KiB arena asks the node of each of its 2048 pages), so by default
 * only the first hit of each (site, step) pair is failed: about 60 runs
 * instead of 2000. PP_FAULT_ALL=1 fails every hit.
 *
 * The workload is single-threaded, so the n-th hit is the same site in
 * every run. Teardown runs disarmed: its only fallible site is the
 * allocator walker's scratch array, and failing the check that looks for
 * leaks would only hide them.
 */
#include <dirent.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/wait.h>

#ifdef PP_SWEEP_VERBS
#include <infiniband/verbs.h>
#endif
#ifdef PP_SWEEP_AF_XDP
#include <linux/if_link.h>
#include <bpf/libbpf.h>
#endif

#include <pagepool/pp_drivers.h>

#include "pp_os_fault.h"
#include "pp_test.h"
#include "pp_test_proc.h"

#define MiB (1UL << 20)

/* Child exit codes besides 0 (clean) and 1 (a check failed). */
#define EXIT_NOT_FIRED 10 /* the workload made fewer than n hits */
#define EXIT_SPURIOUS 11  /* failed with nothing injected: retry */

static bool with_2m = true;
static bool with_pa;

/*
 * af_xdp: a veth pair of this process's own (both ends here, down, so no
 * frame arrives), made and deleted by the parent. xdp_dev is the port's
 * device string; empty when the step is left out.
 */
static char xdp_if[IF_NAMESIZE], xdp_peer[IF_NAMESIZE], xdp_dev[64];
static pid_t xdp_owner;

/* verbs: whether the machine has an RDMA device to open (soft-RoCE). */
static bool with_verbs;

/*
 * ASan keeps freed memory in a quarantine and maps fresh memory meanwhile,
 * which would show in /proc/self/maps as a leak. Without a quarantine its
 * allocator reuses what the first runs mapped. Only an ASan build reads
 * this; the test setup's ASAN_OPTIONS still apply on top.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=0:thread_local_quarantine_size_kb=0";
}

/* The step running now, and each hit of a clean run: site and step. */
static const char *cur_step;
struct hit {
	const char *site, *step;
};
static struct hit *trace;
static unsigned long trace_len, trace_cap;

static void trace_hit(const char *site)
{
	if (trace_len == trace_cap) {
		trace_cap = trace_cap ? 2 * trace_cap : 1024;
		trace = realloc(trace, trace_cap * sizeof(*trace));
		REQUIRE(trace != NULL);
	}
	trace[trace_len].site = site;
	trace[trace_len].step = cur_step;
	trace_len++;
}

/* Whether hit @n (from 1) repeats an earlier hit's site and step. */
static bool repeats(unsigned long n)
{
	for (unsigned long i = 0; i + 1 < n; i++)
		if (trace[i].site == trace[n - 1].site &&
		    trace[i].step == trace[n - 1].step)
			return true;
	return false;
}

/* Messages the library logged at WARN or worse, and the last one. */
static unsigned int nr_logs;
static char last_log[256];

static void count_log(enum pp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level > PP_LOG_WARN)
		return;
	nr_logs++;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

struct work {
	struct pp_arena *a4k, *a2m;
	struct pp_allocator *alloc, *alloc2m;
	struct pp_dma *va, *pa;
	bool va_mapped, pa_mapped;
	struct pp_pool *pool, *pool2m;
	/* The growable arena, its allocator (manual resize) and pool. */
	struct pp_arena *agrow;
	struct pp_allocator *allocgrow;
	struct pp_pool *poolgrow;
	bool grow_va_mapped, grow_pa_mapped;
	struct pp_port *null0, *veth0, *xsk;
	struct ibv_context *vctx;
	struct ibv_pd *vpd;
	struct pp_dma *verbs;
	bool verbs_mapped;
	const char *step; /* the step that failed */
};

static struct pp_arena *arena_new(size_t size, size_t page_size, int node)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o), .size = size, .page_size = page_size,
		.numa_node = node, .name = "fault",
	};

	return pp_arena_create(&o);
}

static struct pp_allocator *allocator_new(struct pp_arena *arena)
{
	struct pp_allocator_opts o = {
		.sz = sizeof(o), .arenas = &arena, .nr_arenas = 1,
	};

	return pp_allocator_create(&o);
}

/* Growable: one step at creation, two more to grow; a step is one 2 MiB
 * page, or 512 pages of 4 KiB without hugepages. */
#define GROW_STEP (2 * MiB)
#define GROW_MAX (3 * GROW_STEP)

static struct pp_arena *arena_growable_new(void)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o), .size = GROW_STEP, .max_size = GROW_MAX,
		.grow_step = GROW_STEP,
		.page_size = with_2m ? PP_PAGE_SIZE_2M : PP_PAGE_SIZE_4K,
		.numa_node = PP_NUMA_NODE_ANY, .name = "fault-grow",
	};

	return pp_arena_create(&o);
}

/* No growth thread: the workload is single-threaded, so that the n-th
 * hit is the same site in every run. */
static struct pp_allocator *allocator_manual_new(struct pp_arena *arena)
{
	struct pp_allocator_opts o = {
		.sz = sizeof(o), .arenas = &arena, .nr_arenas = 1,
		.flags = PP_ALLOCATOR_F_MANUAL_RESIZE,
	};

	return pp_allocator_create(&o);
}

/*
 * Every page @alloc has: taken one at a time, then freed. Returns how
 * many, and -ENOMEM (after a message) when that is not every page of the
 * committed steps the zone reports.
 */
static long take_all(struct pp_allocator *alloc)
{
	struct pp_zone_growth g = { .sz = sizeof(g) };
	struct pp_page_list list;
	struct pp_page *p;
	long n = 0;

	pp_allocator_drain_thread(alloc);
	if (pp_allocator_zone_growth(alloc, 0, &g))
		return -EINVAL;
	pp_page_list_init(&list);
	while ((p = pp_alloc_pages(alloc, PP_NUMA_NODE_ANY, 0))) {
		pp_page_list_add_tail(&list, p);
		n++;
	}
	pp_free_page_list(alloc, &list);
	if ((size_t)n != g.committed_bytes >> PP_PAGE_SHIFT) {
		fprintf(stderr, "growable allocator: %ld pages could be allocated, the zone says %zu KiB are committed\n",
			n, g.committed_bytes >> 10);
		return -ENOMEM;
	}
	return n;
}

static struct pp_pool *pool_new(struct pp_allocator *alloc,
				struct pp_dma *dma)
{
	struct pp_pool_params p = {
		.sz = sizeof(p), .allocator = alloc, .dma = dma,
		.flags = dma ? PP_POOL_F_DMA_MAP : 0, .pool_size = 256,
		.nid = PP_NUMA_NODE_ANY, .dma_dir = PP_DMA_FROM_DEVICE,
		.name = "fault",
	};

	return pp_pool_create(&p);
}

static struct pp_dma *dma_new(enum pp_iova_mode mode)
{
	struct pp_dma_opts o = { .sz = sizeof(o), .mode = mode };

	return pp_dma_create(&o);
}

/* Take @n pages from @pool and give them back to its cache. */
static int pool_churn(struct pp_pool *pool, unsigned int n)
{
	struct pp_page *pages[200];
	unsigned int i, got;

	for (got = 0; got < n; got++)
		if (!(pages[got] = pp_pool_alloc_pages(pool)))
			break;
	for (i = 0; i < got; i++)
		pp_pool_recycle_direct(pool, pages[i]);
	return got == n ? 0 : -ENOMEM;
}

static void redirect_all(const struct pp_prog_ctx *ctx,
			 struct pp_frame *frames, uint16_t *verdicts,
			 unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_REDIRECT;
}

#define STEP(w, name, ok)                                                  \
	do {                                                               \
		cur_step = (w)->step = (name);                             \
		if (!(ok))                                                 \
			return errno ? -errno : -EIO;                      \
	} while (0)

#define STEP_RC(w, name, call)                                             \
	do {                                                               \
		int rc_;                                                   \
		cur_step = (w)->step = (name);                             \
		rc_ = (call);                                              \
		if (rc_ < 0)                                               \
			return rc_;                                        \
	} while (0)

/* Build and use everything; returns 0 or the -errno of the failed step,
 * leaving what was built in @w for work_fini(). */
static int work_run(struct work *w)
{
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .nid = PP_NUMA_NODE_ANY, .ring_size = 64,
		.pool_size = 256,
	};
	struct pp_prog prog = { .sz = sizeof(prog), .fn = redirect_all };

	memset(w, 0, sizeof(*w));
	errno = 0;
	STEP(w, "arena 4k", w->a4k = arena_new(8 * MiB, PP_PAGE_SIZE_4K,
					       PP_NUMA_NODE_ANY));
	STEP(w, "allocator 4k", w->alloc = allocator_new(w->a4k));
	STEP(w, "dma va", w->va = dma_new(PP_IOVA_VA));
	STEP_RC(w, "dma va map", pp_dma_map_arena(w->va, w->a4k));
	w->va_mapped = true;
	if (with_2m) {
		/* On node 0: the arena binds its memory (mbind, policy). */
		STEP(w, "arena 2m", w->a2m = arena_new(2 * MiB,
						       PP_PAGE_SIZE_2M, 0));
		STEP(w, "allocator 2m", w->alloc2m = allocator_new(w->a2m));
	}
	if (with_pa) {
		STEP(w, "dma pa", w->pa = dma_new(PP_IOVA_PA));
		STEP_RC(w, "dma pa map",
			pp_dma_map_arena(w->pa, w->a2m ? w->a2m : w->a4k));
		w->pa_mapped = true;
	}
	STEP(w, "pool", w->pool = pool_new(w->alloc, w->va));
	STEP_RC(w, "pool churn", pool_churn(w->pool, 100));
	if (w->alloc2m) {
		STEP(w, "pool 2m", w->pool2m = pool_new(w->alloc2m, w->pa));
		STEP_RC(w, "pool 2m churn", pool_churn(w->pool2m, 100));
	}

	/* Growth: a growable arena in both domains, grown step by step
	 * (each step mapped by each domain), used, shrunk, grown again. */
	STEP(w, "arena growable", w->agrow = arena_growable_new());
	STEP(w, "allocator growable",
	     w->allocgrow = allocator_manual_new(w->agrow));
	STEP_RC(w, "dma va map growable", pp_dma_map_arena(w->va, w->agrow));
	w->grow_va_mapped = true;
	if (w->pa) {
		STEP_RC(w, "dma pa map growable",
			pp_dma_map_arena(w->pa, w->agrow));
		w->grow_pa_mapped = true;
	}
	STEP_RC(w, "grow", pp_allocator_grow(w->allocgrow, 0));
	STEP(w, "pool growable", w->poolgrow = pool_new(w->allocgrow, w->va));
	STEP_RC(w, "pool growable churn", pool_churn(w->poolgrow, 100));
	STEP_RC(w, "grow to max", pp_allocator_grow(w->allocgrow, 0));
	cur_step = w->step = "pool growable destroy";
	pp_pool_destroy(w->poolgrow);
	w->poolgrow = NULL;
	STEP_RC(w, "take all", (int)take_all(w->allocgrow));
	STEP_RC(w, "shrink", (int)pp_allocator_shrink(w->allocgrow, 0));
	STEP_RC(w, "grow after shrink", pp_allocator_grow(w->allocgrow, 0));
	STEP_RC(w, "take all after shrink", (int)take_all(w->allocgrow));

	conf.allocator = w->alloc;
	conf.dma = w->va;
	STEP(w, "port null0", w->null0 = pp_port_open("null0", &conf));
	STEP(w, "port veth0", w->veth0 = pp_port_open("veth0,peer=veth1",
						      &conf));
	prog.targets[0] = w->veth0;
	prog.nr_targets = 1;
	STEP_RC(w, "set prog", pp_port_set_prog(w->null0, &prog));
	cur_step = w->step = "poll";
	if (pp_port_poll(w->null0, 0, 2 * PP_NET_BURST) != 2 * PP_NET_BURST)
		return -EIO;
	/* The af_xdp port: bpffs, the lock file, the XDP program, the
	 * arena's UMEM, a socket bound in copy mode after zero-copy fails
	 * (veth has none), the program's map. */
	if (xdp_dev[0])
		STEP(w, "port af_xdp", w->xsk = pp_port_open(xdp_dev, &conf));
#ifdef PP_SWEEP_VERBS
	/* The verbs backend: open the first device, a protection domain
	 * of the test's own, a domain over it, the 4 KiB arena registered. */
	if (with_verbs) {
		struct pp_dma_opts vo = {
			.sz = sizeof(vo), .mode = PP_IOVA_VERBS,
		};

		STEP(w, "verbs open", w->vctx = pp_dma_verbs_open(NULL, 1));
		STEP(w, "verbs pd", w->vpd = ibv_alloc_pd(w->vctx));
		vo.verbs_pd = w->vpd;
		STEP(w, "dma verbs", w->verbs = pp_dma_create(&vo));
		STEP_RC(w, "dma verbs map", pp_dma_map_arena(w->verbs, w->a4k));
		w->verbs_mapped = true;
	}
#endif
	w->step = NULL;
	return 0;
}

/* The allocator has every page back. Returns the failed checks. */
static int balanced(struct pp_allocator *alloc, const char *what)
{
	unsigned long n = ~0UL;
	int err;

	pp_allocator_drain_thread(alloc);
	err = pp_allocator_check(alloc, &n);
	if (err || n) {
		fprintf(stderr, "%s: allocator check %d, %lu pages allocated\n",
			what, err, n);
		return 1;
	}
	return 0;
}

#define FINI_RC(call)                                                      \
	do {                                                               \
		int rc_ = (call);                                          \
		if (rc_) {                                                 \
			fprintf(stderr, "%s: %s\n", #call, strerror(-rc_)); \
			bad++;                                             \
		}                                                          \
	} while (0)

/* Tear down whatever work_run() built. Returns the failed checks. */
static int work_fini(struct work *w)
{
	int bad = 0;

	if (w->xsk)
		FINI_RC(pp_port_close(w->xsk));
#ifdef PP_SWEEP_VERBS
	if (w->verbs_mapped)
		FINI_RC(pp_dma_unmap_arena(w->verbs, w->a4k));
	if (w->verbs)
		FINI_RC(pp_dma_destroy(w->verbs));
	if (w->vpd)
		FINI_RC(-ibv_dealloc_pd(w->vpd));
	if (w->vctx)
		FINI_RC(-ibv_close_device(w->vctx));
#endif
	/* veth0 first: it sends null0's frames home as it closes. */
	if (w->veth0)
		FINI_RC(pp_port_close(w->veth0));
	if (w->null0)
		FINI_RC(pp_port_close(w->null0));
	if (w->poolgrow)
		FINI_RC(pp_pool_destroy(w->poolgrow));
	if (w->pool2m)
		FINI_RC(pp_pool_destroy(w->pool2m));
	if (w->pool)
		FINI_RC(pp_pool_destroy(w->pool));
	if (w->grow_pa_mapped)
		FINI_RC(pp_dma_unmap_arena(w->pa, w->agrow));
	if (w->grow_va_mapped)
		FINI_RC(pp_dma_unmap_arena(w->va, w->agrow));
	if (w->pa_mapped)
		FINI_RC(pp_dma_unmap_arena(w->pa, w->a2m ? w->a2m : w->a4k));
	if (w->pa)
		FINI_RC(pp_dma_destroy(w->pa));
	if (w->va_mapped)
		FINI_RC(pp_dma_unmap_arena(w->va, w->a4k));
	if (w->va)
		FINI_RC(pp_dma_destroy(w->va));
	if (w->allocgrow) {
		/* Usable at the size it says, whatever failed. */
		if (take_all(w->allocgrow) < 0)
			bad++;
		bad += balanced(w->allocgrow, "allocator growable");
		FINI_RC(pp_allocator_destroy(w->allocgrow));
	}
	if (w->alloc2m) {
		bad += balanced(w->alloc2m, "allocator 2m");
		FINI_RC(pp_allocator_destroy(w->alloc2m));
	}
	if (w->alloc) {
		bad += balanced(w->alloc, "allocator 4k");
		FINI_RC(pp_allocator_destroy(w->alloc));
	}
	if (w->agrow)
		FINI_RC(pp_arena_destroy(w->agrow));
	if (w->a2m)
		FINI_RC(pp_arena_destroy(w->a2m));
	if (w->a4k)
		FINI_RC(pp_arena_destroy(w->a4k));
	return bad;
}

/* What each open descriptor is, one "fd -> target" line each. */
static char *list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t cap = 1 << 14, len = 0;
	char *buf = malloc(cap), link[PATH_MAX], path[300];
	struct dirent *de;

	REQUIRE(d != NULL && buf != NULL);
	buf[0] = '\0';
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		if (len + strlen(link) + 32 < cap)
			len += (size_t)snprintf(buf + len, cap - len, "%s -> %s\n",
						de->d_name, link);
	}
	closedir(d);
	return buf;
}

/* /proc/self/maps, and its number of lines. */
static char *read_maps(int *lines)
{
	FILE *f = fopen("/proc/self/maps", "re");
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	int c;

	REQUIRE(f != NULL && buf != NULL);
	*lines = 0;
	while ((c = fgetc(f)) != EOF) {
		if (len + 2 > cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			REQUIRE(buf != NULL);
		}
		buf[len++] = (char)c;
		*lines += c == '\n';
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* Print the lines of @after that are not in @before. */
static void print_new_maps(const char *before, char *after)
{
	for (char *line = strtok(after, "\n"); line; line = strtok(NULL, "\n"))
		if (!strstr(before, line))
			printf("     new: %s\n", line);
}

/*
 * What a failed af_xdp open must not leave behind: an XDP program on the
 * interface, libxdp's dispatcher pinned in bpffs, the driver's lock file.
 * Returns the failed checks.
 */
static int xdp_leftovers(void)
{
	int bad = 0;
#ifdef PP_SWEEP_AF_XDP
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int ifindex = (int)if_nametoindex(xdp_if);
	char path[128], prefix[64];
	struct dirent *de;
	DIR *d;

	if (!xdp_dev[0])
		return 0;
	if (bpf_xdp_query(ifindex, 0, &q) ||
	    q.attach_mode != XDP_ATTACHED_NONE) {
		printf("     FAIL: an XDP program is still attached to %s (mode %u)\n",
		       xdp_if, q.attach_mode);
		bad++;
	}
	snprintf(prefix, sizeof(prefix), "dispatch-%d-", ifindex);
	if ((d = opendir("/sys/fs/bpf/xdp"))) {
		while ((de = readdir(d)))
			if (!strncmp(de->d_name, prefix, strlen(prefix))) {
				printf("     FAIL: libxdp state left in bpffs: /sys/fs/bpf/xdp/%s\n",
				       de->d_name);
				bad++;
			}
		closedir(d);
	}
	snprintf(path, sizeof(path), "/run/pagepool/af_xdp-%s.lock", xdp_if);
	if (!access(path, F_OK)) {
		printf("     FAIL: the lock file %s is left\n", path);
		bad++;
	}
#endif
	return bad;
}

static void xdp_pair_del(void)
{
	char cmd[128];

	if (!xdp_dev[0] || getpid() != xdp_owner)
		return;
	snprintf(cmd, sizeof(cmd), "ip link del %s >/dev/null 2>&1", xdp_if);
	if (system(cmd)) {
		/* gone already */
	}
	xdp_dev[0] = '\0';
}

static void xdp_on_signal(int sig)
{
	xdp_pair_del();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The veth pair for the af_xdp step, or a SKIP line saying why not. */
static void xdp_pair_add(void)
{
	const char *why = NULL;
	char cmd[256];
	int fd;

#ifndef PP_SWEEP_AF_XDP
	why = "the af_xdp driver is not built (libxdp, libbpf: -Dxdp)";
#else
	if (geteuid() != 0)
		why = "af_xdp needs root";
#endif
	if (!why) {
		fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
		if (fd < 0 && errno == EAFNOSUPPORT)
			why = "this kernel has no AF_XDP sockets";
		if (fd >= 0)
			close(fd);
	}
	if (!why) {
		snprintf(xdp_if, sizeof(xdp_if), "ppf%da", (int)getpid() % 1000000);
		snprintf(xdp_peer, sizeof(xdp_peer), "ppf%db", (int)getpid() % 1000000);
		snprintf(cmd, sizeof(cmd),
			 "ip link add %s numtxqueues 1 numrxqueues 1 type veth peer name %s numtxqueues 1 numrxqueues 1",
			 xdp_if, xdp_peer);
		if (system(cmd))
			why = "cannot create a veth pair (ip link add ... type veth: iproute2, veth)";
	}
	if (why) {
		pp_test_skip_part("port af_xdp", "%s", why);
		return;
	}
	xdp_owner = getpid();
	snprintf(xdp_dev, sizeof(xdp_dev), "af_xdp:%s", xdp_if);
	atexit(xdp_pair_del);
	/* SIGPIPE too: the sweep's output piped into head. */
	signal(SIGINT, xdp_on_signal);
	signal(SIGTERM, xdp_on_signal);
	signal(SIGHUP, xdp_on_signal);
	signal(SIGPIPE, xdp_on_signal);
}

/* The verbs step, or a SKIP line saying why not. */
static void verbs_probe(void)
{
#ifdef PP_SWEEP_VERBS
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	if (n > 0) {
		with_verbs = true;
		return;
	}
	pp_test_skip_part("dma verbs", "no RDMA device here (soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev IFACE; the rdma suite's guest has one)");
#else
	pp_test_skip_part("dma verbs", "pagepool was built without libibverbs");
#endif
}

/* One run in a forked child: fail hit @nth, check, exit. */
static __attribute__((noreturn)) void child(unsigned long nth)
{
	int fds = pp_test_count_fds(), maps, maps_after, rc, err = 0, bad = 0;
	char *fds_text = list_fds();
	char *maps_text = read_maps(&maps), *after;
	struct work w;
	const char *site, *step;

	nr_logs = 0;
	last_log[0] = '\0';
	pp_os_fault_arm(nth);
	rc = work_run(&w);
	site = pp_os_fault_fired(&err);
	pp_os_fault_arm(0);
	step = w.step;
	bad += work_fini(&w);
	bad += xdp_leftovers();
	if (!site) {
		if (rc)
			printf("%4lu nothing injected, yet %s failed: %s\n", nth,
			       step, strerror(-rc));
		exit(bad ? 1 : rc ? EXIT_SPURIOUS : EXIT_NOT_FIRED);
	}
	if (rc == 0) {
		printf("%4lu %-28s %-9s absorbed\n", nth, site,
		       strerrorname_np(err));
	} else {
		printf("%4lu %-28s %-9s -> %s: %s\n", nth, site,
		       strerrorname_np(err), step, strerrorname_np(-rc));
		if (!nr_logs) {
			printf("     FAIL: %s failed and the library logged nothing\n",
			       step);
			bad++;
		} else {
			printf("     log: %s\n", last_log);
		}
	}
	if (pp_test_count_fds() != fds) {
		char *now = list_fds();

		printf("     FAIL: %d descriptors open, %d before\n",
		       pp_test_count_fds(), fds);
		print_new_maps(fds_text, now);
		free(now);
		bad++;
	}
	free(fds_text);
	after = read_maps(&maps_after);
	if (maps_after != maps) {
		printf("     FAIL: %d mappings, %d before\n", maps_after, maps);
		print_new_maps(maps_text, after);
		bad++;
	}
	free(after);
	free(maps_text);
	rc = work_run(&w);
	if (rc) {
		printf("     FAIL: the rerun with nothing injected failed at %s: %s\n",
		       w.step, strerror(-rc));
		bad++;
	}
	bad += work_fini(&w);
	bad += xdp_leftovers();
	fflush(stdout);
	exit(bad ? 1 : 0);
}

/* Run hit @nth in a child. Returns its exit code, or -1 for a crash. */
static int run_child(unsigned long nth)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		child(nth);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	if (WIFSIGNALED(status)) {
		printf("%4lu FAIL: killed by signal %d (%s)\n", nth,
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
		return -1;
	}
	return WEXITSTATUS(status);
}

/* A clean run in this process; drops a part the machine cannot give. */
static void probe(void)
{
	struct work w;
	int rc;

	with_pa = geteuid() == 0;
	if (!with_pa)
		pp_test_skip_part("dma pa", "PA mode reads /proc/self/pagemap, which needs root");
	for (;;) {
		rc = work_run(&w);
		CHECK_EQ(work_fini(&w), 0);
		if (rc == 0)
			return;
		if (with_2m && w.step && !strcmp(w.step, "arena 2m")) {
			pp_test_skip_part("arena 2m", "no 2 MiB hugepage free on node 0 (%s)",
					  strerror(-rc));
			with_2m = false;
			continue;
		}
		if (xdp_dev[0] && w.step && !strcmp(w.step, "port af_xdp")) {
			pp_test_skip_part("port af_xdp", "cannot open %s here: %s (%s)",
					  xdp_dev, strerror(-rc), last_log);
			xdp_pair_del();
			continue;
		}
		fprintf(stderr, "the workload fails with nothing injected, at %s: %s (%s)\n",
			w.step, strerror(-rc), last_log);
		exit(1);
	}
}

int main(void)
{
	const char *all = getenv("PP_FAULT_ALL");
	unsigned long hits, nth, runs = 0;
	unsigned int sites;
	int failed = 0, code = 0;
	struct work w;

	if (!pp_os_fault_enabled())
		pp_test_skip("pagepool was built without the fault seam (meson setup -Dfault_injection=true)");
	pp_log_set_handler(count_log, NULL, PP_LOG_WARN);
	xdp_pair_add();
	verbs_probe();

	/* Twice: the first run may fill caches (sysfs reads) once. */
	probe();
	probe();
	pp_os_fault_arm(0);
	pp_os_fault_trace(trace_hit);
	REQUIRE(work_run(&w) == 0);
	pp_os_fault_trace(NULL);
	hits = pp_os_fault_hits();
	sites = pp_os_fault_sites();
	REQUIRE(trace_len == hits);
	REQUIRE(work_fini(&w) == 0);
	REQUIRE(xdp_leftovers() == 0);

	for (nth = 1; nth <= hits + 1; nth++) {
		if (nth <= hits && !(all && *all == '1') && repeats(nth))
			continue;
		for (int tries = 0; tries < 5; tries++) {
			code = run_child(nth);
			if (code != EXIT_SPURIOUS)
				break;
			/* Another process took the free hugepages. */
			sleep(1);
		}
		runs++;
		if (code == EXIT_NOT_FIRED)
			break;
		if (code != 0) {
			printf("%4lu FAIL (child exit %d)\n", nth, code);
			failed++;
		}
	}
	if (code != EXIT_NOT_FIRED) {
		printf("FAIL: run %lu still injected a fault; a clean run made %lu hits\n",
		       hits + 1, hits);
		failed++;
	}
	printf("fault sweep: %u sites, %lu hits in a clean run, %lu runs, %d failed\n",
	       sites, hits, runs, failed);
	free(trace);
	return failed ? 1 : 0;
}
