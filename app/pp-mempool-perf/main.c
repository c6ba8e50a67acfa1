/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp-mempool-perf - DPDK's mempool_perf_autotest matrix, comparing two
 * rte_mempool ops drivers in one run: ring_mp_mc (DPDK's default) and
 * pagepool (loaded as a plugin with -d, as applications load it; without
 * -d, the plugin of this build run from its build tree, else the
 * installed one: see default_plugin()).
 *
 * Each lcore repeatedly gets n_keep objects in bulks of `bulk` and puts
 * them back the same way, as mempool_perf does; the figure is objects
 * got and put per second, summed over lcores. Cells: lcores 1/2 x cache
 * 0/512 x bulk 1/4/32/128. With cache 0 every call reaches the driver,
 * so that column measures the backend; with 512 DPDK's lcore cache
 * serves most calls and the driver is behind it.
 *
 * Runs alternate the order of the two drivers (ring first on even runs,
 * pagepool first on odd ones) and the table gives medians over runs and
 * the median of the per-run ratios. Prints a table (on stderr when the
 * JSON goes to stdout, --json -); --json FILE writes
 * the same as JSON. A benchmark: it prints figures and checks none.
 *
 * --ref OPS compares with another DPDK driver (stack, say) instead of
 * ring_mp_mc; --cell L,C,B measures one cell only.
 *
 * --memory prints, instead of the matrix, what a pktmbuf pool costs in
 * memory per object under each driver (mem_table()): DPDK's own figure
 * (rte_mempool_dump()'s "avg bytes/object", the pool's memory chunks
 * over its objects) and everything the pool holds, hugepage and process
 * heap together.
 *
 * usage: pp-mempool-perf [-d <librte_mempool_pagepool.so>] [--runs N]
 *        [--ms MS] [--json FILE] [--cores LIST] [--cell L,C,B] [--ref OPS]
 *        [--keep N] [--memory]
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_mempool.h>
#include <rte_version.h>

#include "pp_cli.h"

/* mempool_perf_autotest's element size, and its n_keeps: 128 unless
 * --keep says 32 or 512. */
#define ELT_SIZE 2048
#define N_KEEP_MAX 512
static unsigned int n_keep = 128;
/*
 * Pool size: per lcore, n_keep held plus a full cache and its flush
 * threshold (1.5 x 512), for two lcores, as a power of two minus one
 * (the ring under ring_mp_mc holds 2^k - 1): 2 x (512 + 512 + 768) =
 * 3,584 at the largest n_keep.
 */
#define POOL_SIZE 4095
/* EAL heap in MiB: the ring pool's objects (about 9 MiB) and caches;
 * with --memory, the largest ring_mp_mc pool of mem_rows (64 K default
 * mbufs, 155 MiB). */
#define EAL_MB 64
#define EAL_MB_MEMORY 256
#define MAX_RUNS 32

/* The reference driver (--ref, default DPDK's default) and pagepool. */
static const char *ops_names[2] = { "ring_mp_mc", "pagepool" };
static const unsigned int caches[] = { 0, 512 };
static const unsigned int bulks[] = { 1, 4, 32, 128 };

struct job {
	struct rte_mempool *mp;
	unsigned int bulk;
	uint64_t cycles;        /* how long each lcore runs */
	atomic_uint ready;
	atomic_bool go;
	uint64_t objs[RTE_MAX_LCORE];
	uint64_t spent[RTE_MAX_LCORE];
	atomic_uint failed;
};

/* One lcore's loop, after mempool_perf's per_lcore_mempool_test. */
static int lcore_loop(void *arg)
{
	struct job *j = arg;
	unsigned int id = rte_lcore_id();
	void *objs[N_KEEP_MAX];
	uint64_t start, end, n = 0;

	atomic_fetch_add(&j->ready, 1);
	while (!atomic_load_explicit(&j->go, memory_order_acquire))
		rte_pause();
	start = rte_rdtsc();
	end = start + j->cycles;
	do {
		for (int rep = 0; rep < 64; rep++) {
			for (unsigned int i = 0; i < n_keep; i += j->bulk)
				if (rte_mempool_get_bulk(j->mp, objs + i,
							 j->bulk) < 0) {
					atomic_fetch_add(&j->failed, 1);
					return -1;
				}
			for (unsigned int i = 0; i < n_keep; i += j->bulk)
				rte_mempool_put_bulk(j->mp, objs + i, j->bulk);
			n += n_keep;
		}
	} while (rte_rdtsc() < end);
	j->spent[id] = rte_rdtsc() - start;
	j->objs[id] = n;
	return 0;
}

static struct rte_mempool *pool_make(const char *ops, unsigned int cache)
{
	struct rte_mempool *mp;

	mp = rte_mempool_create_empty("pp_perf", POOL_SIZE, ELT_SIZE, cache, 0,
				      (int)rte_socket_id(), 0);
	if (!mp)
		return NULL;
	if (rte_mempool_set_ops_byname(mp, ops, NULL) != 0 ||
	    rte_mempool_populate_default(mp) < 0) {
		rte_mempool_free(mp);
		return NULL;
	}
	return mp;
}

/* Objects per second over @cores lcores, or a negative value. */
static double cell_run(const char *ops, unsigned int cores,
		       unsigned int cache, unsigned int bulk, unsigned int ms)
{
	struct job *j = calloc(1, sizeof(*j));
	unsigned int lcore, launched = 0;
	double rate = 0;

	if (!j)
		return -1;
	j->mp = pool_make(ops, cache);
	if (!j->mp) {
		fprintf(stderr, "pp-mempool-perf: pool with ops %s: %s\n", ops,
			rte_strerror(rte_errno));
		free(j);
		return -1;
	}
	j->bulk = bulk;
	j->cycles = rte_get_tsc_hz() / 1000 * ms;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (launched + 1 >= cores)
			break;
		if (rte_eal_remote_launch(lcore_loop, j, lcore) == 0)
			launched++;
	}
	while (atomic_load(&j->ready) < launched)
		rte_pause();
	atomic_store_explicit(&j->go, true, memory_order_release);
	lcore_loop(j);
	rte_eal_mp_wait_lcore();
	if (atomic_load(&j->failed)) {
		rate = -1;
	} else {
		for (unsigned int i = 0; i < RTE_MAX_LCORE; i++)
			if (j->spent[i])
				rate += (double)j->objs[i] * rte_get_tsc_hz() /
					(double)j->spent[i];
	}
	rte_mempool_free(j->mp);
	free(j);
	return rate;
}

/* ---- --memory: bytes per object ---- */

/*
 * The pools measured: data rooms for a 1,500-byte frame behind DPDK's
 * headroom, DPDK's default (2,048 + headroom) and a 9,000-byte jumbo
 * frame; 8 K mbufs (about what one port pair needs at testpmd's
 * descriptor and cache defaults) and 64 K, to show that pagepool's
 * arena rounds up to whole 2 MiB pages per pool while ring_mp_mc's
 * objects share the EAL's hugepages. Sizes are 2^k - 1 so that
 * ring_mp_mc's ring is not doubled.
 */
static const struct {
	unsigned int size, room;
} mem_rows[] = {
	{ 8191, RTE_PKTMBUF_HEADROOM + 1500 },
	{ 65535, RTE_PKTMBUF_HEADROOM + 1500 },
	{ 8191, RTE_MBUF_DEFAULT_BUF_SIZE },
	{ 65535, RTE_MBUF_DEFAULT_BUF_SIZE },
	{ 8191, RTE_PKTMBUF_HEADROOM + 9000 },
};

struct mem_cost {
	size_t obj;          /* header + element + trailer */
	double dump_bpo;     /* rte_mempool_dump()'s avg bytes/object */
	size_t huge;         /* hugepage bytes the pool holds */
	size_t heap;         /* process heap (malloc) bytes */
};

static void chunk_len_add(struct rte_mempool *mp, void *arg,
			  struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	(void)mp;
	(void)idx;
	*(size_t *)arg += memhdr->len;
}

/*
 * What a pktmbuf pool of @room bytes of data room costs under @ops.
 * Hugepages: the pool's header memzone (struct rte_mempool and its lcore
 * caches, the same for every driver), plus for ring_mp_mc (or another
 * driver that keeps its memory in DPDK's heap) its object chunks and its
 * ring's memzone, and for pagepool its arena (the external heap
 * "pp:<pool>", which holds the object memzone and the ring of free
 * objects). Process heap: what malloc handed out while the pool was
 * made (pagepool's state; nothing for ring_mp_mc).
 */
static int mem_cost_of(const char *ops, unsigned int size, unsigned int room,
		       struct mem_cost *c)
{
	struct rte_malloc_socket_stats st;
	struct mallinfo2 before = mallinfo2(), after;
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;
	struct rte_mempool *mp;
	size_t chunks = 0;
	int socket;

	mp = rte_pktmbuf_pool_create_by_ops("pp_mem", size, 0, 0,
					    (uint16_t)room,
					    (int)rte_socket_id(), ops);
	if (!mp)
		return -rte_errno;
	after = mallinfo2();
	memset(c, 0, sizeof(*c));
	c->obj = mp->header_size + mp->elt_size + mp->trailer_size;
	rte_mempool_mem_iter(mp, chunk_len_add, &chunks);
	c->dump_bpo = (double)chunks / mp->size;
	c->huge = mp->mz->len;
	socket = rte_malloc_heap_get_socket("pp:pp_mem");
	if (socket >= 0 && rte_malloc_get_socket_stats(socket, &st) == 0) {
		c->huge += st.heap_totalsz_bytes;
	} else {
		c->huge += chunks;
		/* rte_ring_create()'s memzone for the pool's ring. */
		snprintf(name, sizeof(name), "RG_%s%s", RTE_MEMPOOL_MZ_PREFIX,
			 mp->name);
		mz = rte_memzone_lookup(name);
		if (mz)
			c->huge += mz->len;
	}
	/* Small blocks and mmap()ed large ones (a big ring). */
	after.uordblks += after.hblkhd;
	before.uordblks += before.hblkhd;
	c->heap = after.uordblks > before.uordblks ?
			  after.uordblks - before.uordblks : 0;
	rte_mempool_free(mp);
	return 0;
}

/* The --memory table (and JSON); returns 0, or 1 after a message. */
static int mem_table(FILE *out, FILE *json)
{
	fprintf(out, "# %s; pktmbuf pools, no cache; bytes per object\n",
		rte_version());
	fprintf(out, "# dump = rte_mempool_dump()'s avg bytes/object; total = (hugepages + process heap) / objects\n");
	fprintf(out, "%-6s %-6s %-12s %7s %9s %9s %9s %8s\n", "mbufs",
		"room", "ops", "object", "dump", "hugepage", "total", "vs ref");
	if (json) {
		fputc('{', json);
		pp_cli_json_ident(json, "pp-mempool-perf");
		fprintf(json, "\"dpdk\":\"%s\",\"memory\":[", rte_version());
	}
	for (unsigned int i = 0; i < RTE_DIM(mem_rows); i++) {
		unsigned int size = mem_rows[i].size, room = mem_rows[i].room;
		struct mem_cost c[2];
		double total[2];

		for (unsigned int k = 0; k < 2; k++) {
			int err = mem_cost_of(ops_names[k], size, room, &c[k]);

			if (err) {
				fprintf(stderr, "pp-mempool-perf: a pool of %u mbufs with ops %s: %s; free 2 MiB hugepages\n",
					size, ops_names[k], rte_strerror(-err));
				return 1;
			}
			total[k] = (double)(c[k].huge + c[k].heap) / size;
		}
		for (unsigned int k = 0; k < 2; k++) {
			fprintf(out, "%-6u %-6u %-12s %7zu %9.1f %9.1f %9.1f %7.3fx\n",
				size, room, ops_names[k], c[k].obj,
				c[k].dump_bpo, (double)c[k].huge / size,
				total[k], total[k] / total[0]);
			if (json)
				fprintf(json, "%s{\"mbufs\":%u,\"data_room\":%u,\"ops\":\"%s\",\"object\":%zu,\"dump_bytes_per_object\":%.1f,\"hugepage_bytes\":%zu,\"heap_bytes\":%zu,\"total_bytes_per_object\":%.1f,\"vs_ref\":%.3f}",
					i + k ? "," : "", size, room,
					ops_names[k], c[k].obj, c[k].dump_bpo,
					c[k].huge, c[k].heap, total[k],
					total[k] / total[0]);
		}
	}
	if (json)
		fprintf(json, "]}\n");
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pp-mempool-perf [-d <librte_mempool_pagepool.so>] [OPTION]...\n"
		"       pp-mempool-perf -h|--help | -V|--version\n"
		"  -d PLUGIN    the pagepool mempool driver, as the EAL's -d takes it\n"
		"               (default: this build's, run from the build tree,\n"
		"               else %s)\n"
		"  --runs N     runs per cell, drivers alternating, 1-%d (default 5)\n"
		"  --ms MS      milliseconds per measurement (default 200)\n"
		"  --json FILE  also write the results as JSON to FILE ('-': stdout,\n"
		"               and the table then goes to stderr)\n"
		"  --cores LIST the two CPUs for the EAL's lcores (default 0,1)\n"
		"  --cell L,C,B one cell only: lcores, cache, bulk, for profiling\n"
		"               (default: all the cells)\n"
		"  --ref OPS    the driver pagepool is compared with (default\n"
		"               ring_mp_mc)\n"
		"  --keep N     objects each lcore holds: 32, 128 or 512, as\n"
		"               mempool_perf_autotest's n_keep (bulks above N\n"
		"               skipped; default 128)\n"
		"  --memory     bytes per object of pktmbuf pools, not the matrix\n"
		"  -h, --help   this text\n"
		"  -V, --version  the version, and the commit it was built from\n"
		"Runs the DPDK EAL: root, and %d MiB of free 2 MiB hugepages.\n",
		PP_MEMPOOL_PLUGIN_INSTALLED, MAX_RUNS, EAL_MB + 32);
}

/*
 * The plugin without -d: the one this build made when this executable
 * runs from the build tree, else the installed one (meson passes both).
 */
static const char *default_plugin(void)
{
	char exe[PATH_MAX], dir[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0 || !realpath(PP_MEMPOOL_PERF_BUILD_DIR, dir))
		return PP_MEMPOOL_PLUGIN_INSTALLED;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	return strcmp(exe, dir) ? PP_MEMPOOL_PLUGIN_INSTALLED :
				  PP_MEMPOOL_PLUGIN_BUILD;
}

/*
 * --cores: a CPU list this process may run on, checked before the EAL,
 * whose own refusal comes buried in its usage text. Returns whether it
 * is one; says why not.
 */
static bool cores_ok(const char *cpus)
{
	cpu_set_t want, allowed;

	if (pp_cli_parse_cpus(cpus, &want) < 1) {
		fprintf(stderr, "pp-mempool-perf: --cores takes a CPU list such as 0,1 or 2-3, not '%s'\n",
			cpus);
		return false;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return true; /* the EAL checks it too */
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (CPU_ISSET(i, &want) && !CPU_ISSET(i, &allowed)) {
			fprintf(stderr, "pp-mempool-perf: --cores %s: CPU %d is not one this process may run on (see taskset -p %d)\n",
				cpus, i, (int)getpid());
			return false;
		}
	}
	return true;
}

/*
 * After a failed rte_eal_init(): the EAL's own line above says what went
 * wrong; this adds the fix where its errno (eal.c) tells which one.
 * ENOMEM is its "Cannot init memory": the free 2 MiB pages are short of
 * @need_mb when the counts say so.
 */
static void eal_fix(int err, const char *plugin, unsigned long need_mb)
{
	switch (err) {
	case EACCES:
	case EPERM:
		fprintf(stderr, "pp-mempool-perf: run it as root\n");
		break;
	case EINVAL:
		/* The arguments are ours, --cores checked: the plugin. */
		fprintf(stderr, "pp-mempool-perf: the EAL did not load the plugin %s: doc/troubleshooting.md, \"DPDK plugins\", has the fixes\n",
			plugin);
		break;
	case ENOMEM:
		pp_cli_hugepage_hint("pp-mempool-perf", need_mb);
		break;
	default:
		break;
	}
}

/* --cell L,C,B: three whole numbers. */
static int parse_cell(const char *arg, int only[3])
{
	char copy[64], *tok, *save = NULL;
	unsigned long long v;
	int i = 0;

	if (strlen(arg) >= sizeof(copy))
		return -1;
	strcpy(copy, arg);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (i == 3 || pp_cli_parse_uint(tok, 0, 1u << 20, &v))
			return -1;
		only[i++] = (int)v;
	}
	return i == 3 ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "ms", required_argument, NULL, 'm' },
		{ "json", required_argument, NULL, 'j' },
		{ "cores", required_argument, NULL, 'c' },
		{ "cell", required_argument, NULL, 'x' },
		{ "ref", required_argument, NULL, 'f' },
		{ "memory", no_argument, NULL, 'M' },
		{ "keep", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct pp_cli_opts cli = {
		.tool = "pp-mempool-perf",
		.shortopts = "d:",
		.longopts = longopts,
		.usage = usage,
	};
	const char *plugin = NULL, *json_path = NULL, *cpus = "0,1";
	unsigned int runs = 5, ms = 200, max_cores;
	char mem[16], limit[32];
	char *eal[20];
	FILE *json = NULL, *out = stdout;
	int opt, n = 0, only[3] = { -1, -1, -1 };
	bool first = true, memory = false;

	while ((opt = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (opt) {
		case 'd': plugin = optarg; break;
		case 'r':
			runs = (unsigned int)pp_cli_uint("pp-mempool-perf", "--runs",
							 optarg, 1, MAX_RUNS);
			break;
		case 'm':
			ms = (unsigned int)pp_cli_uint("pp-mempool-perf", "--ms",
						       optarg, 1, 3600 * 1000);
			break;
		case 'j': json_path = optarg; break;
		case 'c': cpus = optarg; break;
		case 'f': ops_names[0] = optarg; break;
		case 'M': memory = true; break;
		case 'k':
			n_keep = (unsigned int)pp_cli_uint("pp-mempool-perf", "--keep",
							   optarg, 32, N_KEEP_MAX);
			if (n_keep != 32 && n_keep != 128 && n_keep != 512) {
				fprintf(stderr, "pp-mempool-perf: --keep takes 32, 128 or 512 (mempool_perf_autotest's n_keeps), not %u\n",
					n_keep);
				return 2;
			}
			break;
		case 'x':
			if (parse_cell(optarg, only)) {
				fprintf(stderr, "pp-mempool-perf: --cell takes LCORES,CACHE,BULK (three whole numbers), not '%s'\n",
					optarg);
				return 2;
			}
			break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (!plugin) {
		plugin = default_plugin();
		if (access(plugin, R_OK)) {
			fprintf(stderr, "pp-mempool-perf: no pagepool plugin at %s (%s): install it (meson install), or give its path with -d\n",
				plugin, strerror(errno));
			return 1;
		}
	} else if (access(plugin, R_OK)) {
		fprintf(stderr, "pp-mempool-perf: -d %s: %s: give the path of librte_mempool_pagepool.so\n",
			plugin, strerror(errno));
		return 2;
	}
	if (!cores_ok(cpus))
		return 2;
	if (json_path)
		pp_cli_json_writable("pp-mempool-perf", json_path);
	if (json_path && !strcmp(json_path, "-"))
		out = stderr;
	snprintf(mem, sizeof(mem), "%d", memory ? EAL_MB_MEMORY : EAL_MB);
	snprintf(limit, sizeof(limit), "--socket-limit=%d",
		 memory ? EAL_MB_MEMORY : EAL_MB);
	eal[n++] = argv[0];
	eal[n++] = "--no-pci";
	eal[n++] = "--no-telemetry";
	eal[n++] = "--in-memory";
	eal[n++] = "--log-level=error";
	eal[n++] = "-l";
	eal[n++] = (char *)cpus;
	eal[n++] = "-m";
	eal[n++] = mem;
	eal[n++] = limit;
	eal[n++] = "-d";
	eal[n++] = (char *)plugin;
	eal[n] = NULL;
	rte_openlog_stream(stderr);
	if (rte_eal_init(n, eal) < 0) {
		int err = rte_errno;

		fprintf(stderr, "pp-mempool-perf: EAL init failed (%s): see the EAL's message above\n",
			rte_strerror(err));
		eal_fix(err, plugin,
			(unsigned long)(memory ? 2 * EAL_MB_MEMORY : EAL_MB) + 32);
		return 1;
	}
	max_cores = rte_lcore_count() < 2 ? rte_lcore_count() : 2;
	if (json_path) {
		json = pp_cli_json_open(json_path);
		if (!json) {
			fprintf(stderr, "pp-mempool-perf: cannot write %s: %s\n",
				json_path, strerror(errno));
			return 1;
		}
	}
	if (memory) {
		int rc = mem_table(out, json);

		if (json && pp_cli_json_close(json)) {
			fprintf(stderr, "pp-mempool-perf: cannot write %s\n",
				json_path);
			rc = 1;
		}
		rte_eal_cleanup();
		return rc;
	}
	if (json) {
		fputc('{', json);
		pp_cli_json_ident(json, "pp-mempool-perf");
		fprintf(json, "\"dpdk\":\"%s\",\"elt_size\":%d,\"n_keep\":%d,\"pool_size\":%d,\"runs\":%u,\"ms\":%u,\"tsc_hz\":%llu,\"cells\":[",
			rte_version(), ELT_SIZE, n_keep, POOL_SIZE, runs, ms,
			(unsigned long long)rte_get_tsc_hz());
	}

	fprintf(out, "# %s; elt %d B, n_keep %d, pool %d; %u runs x %u ms per cell, drivers alternating\n",
	       rte_version(), ELT_SIZE, n_keep, POOL_SIZE, runs, ms);
	fprintf(out, "# Mobj/s = objects got and put per second (all lcores), medians\n");
	fprintf(out, "%-6s %-6s %-5s %14s %14s %8s\n", "lcores", "cache", "bulk",
	       ops_names[0], "pagepool", "ratio");
	for (unsigned int cores = 1; cores <= max_cores; cores++) {
		for (unsigned int ci = 0; ci < 2; ci++) {
			for (unsigned int bi = 0; bi < 4; bi++) {
				double r[2][MAX_RUNS], ratio[MAX_RUNS];
				double med[2], med_ratio;

				if (bulks[bi] > n_keep ||
				    (only[0] >= 0 && only[0] != (int)cores) ||
				    (only[1] >= 0 && only[1] != (int)caches[ci]) ||
				    (only[2] >= 0 && only[2] != (int)bulks[bi]))
					continue;
				for (unsigned int run = 0; run < runs; run++) {
					for (unsigned int k = 0; k < 2; k++) {
						unsigned int o = (k + run) % 2;

						r[o][run] = cell_run(ops_names[o], cores,
								     caches[ci], bulks[bi], ms);
						if (r[o][run] < 0) {
							fprintf(stderr, "pp-mempool-perf: %s failed a get in a cell that never runs out; giving up\n",
								ops_names[o]);
							return 1;
						}
					}
					ratio[run] = r[1][run] / r[0][run];
				}
				med[0] = median(r[0], runs);
				med[1] = median(r[1], runs);
				med_ratio = median(ratio, runs);
				fprintf(out, "%-6u %-6u %-5u %14.1f %14.1f %7.2fx\n",
				       cores, caches[ci], bulks[bi], med[0] / 1e6,
				       med[1] / 1e6, med_ratio);
				fflush(out);
				if (json) {
					fprintf(json, "%s{\"lcores\":%u,\"cache\":%u,\"bulk\":%u,\"ref\":\"%s\",\"ref_mops\":%.2f,\"pagepool_mops\":%.2f,\"ratio\":%.3f}",
						first ? "" : ",", cores, caches[ci],
						bulks[bi], ops_names[0], med[0] / 1e6,
						med[1] / 1e6, med_ratio);
					first = false;
				}
			}
		}
	}
	if (json) {
		fprintf(json, "]}\n");
		if (pp_cli_json_close(json)) {
			fprintf(stderr, "pp-mempool-perf: cannot write %s\n",
				json_path);
			rte_eal_cleanup();
			return 1;
		}
	}
	rte_eal_cleanup();
	return 0;
}
