/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dma.c - IOVA domains over real arenas: VA, PA from pagemap (as
 * root, and with CAP_SYS_ADMIN dropped in a child, where pagemap hides the
 * frame numbers and the mapping must fail with -EPERM and say why), and a
 * caller's ops table (segment hooks once per segment, failures undone).
 *
 * Growth: a domain follows a growable arena (doc/growth.md): each segment
 * the allocator grows by is mapped before a page of it is handed out and
 * unmapped when it is given back (an ops backend that logs its calls,
 * and PA); a mapping that fails leaves the zone as it was.
 *
 * Cases: va, pa_2m, pa_4k, pa_noperm, ops, errors, grow_ops,
 * grow_ops_fail, grow_pa, grow_race.
 */
#include <linux/capability.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pp_test.h"

#define MiB (1UL << 20)

static struct pp_dma *dma_new(enum pp_iova_mode mode,
			      const struct pp_dma_ops *ops, void *ctx)
{
	struct pp_dma_opts o = {
		.sz = sizeof(o), .mode = mode, .ops = ops, .ops_ctx = ctx,
	};
	struct pp_dma *dma = pp_dma_create(&o);

	REQUIRE(dma != NULL);
	return dma;
}

static void test_va(void)
{
	struct pp_arena *arena = pp_test_arena(4 * MiB, PP_PAGE_SIZE_4K);
	struct pp_dma *dma = dma_new(PP_IOVA_VA, NULL, NULL);
	char *base = pp_arena_base(arena);
	uint64_t iova = 0;
	int x;

	CHECK_EQ(pp_dma_mode(dma), PP_IOVA_VA);
	CHECK_EQ(pp_dma_map_page(dma, base, 0, PP_DMA_FROM_DEVICE, &iova),
		 -ENOENT);
	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	CHECK_EQ(pp_dma_map_arena(dma, arena), -EEXIST);
	CHECK_EQ(pp_dma_map_page(dma, base + 5 * PP_PAGE_SIZE, 0,
				 PP_DMA_FROM_DEVICE, &iova), 0);
	CHECK(iova == (uint64_t)(uintptr_t)(base + 5 * PP_PAGE_SIZE));
	/* VA is contiguous for any order. */
	CHECK_EQ(pp_dma_map_page(dma, base, 3, PP_DMA_FROM_DEVICE, &iova), 0);
	/* Outside every mapped arena, and errno left alone. */
	errno = 1234;
	CHECK_EQ(pp_dma_map_page(dma, &x, 0, PP_DMA_FROM_DEVICE, &iova),
		 -ENOENT);
	CHECK_EQ(errno, 1234);
	CHECK_EQ(pp_dma_destroy(dma), -EBUSY);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), -ENOENT);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

static void need_root(void)
{
	if (geteuid() != 0)
		pp_test_skip("PA mode reads physical addresses from /proc/self/pagemap, which needs root (CAP_SYS_ADMIN)");
}

/* PA on hugepages: one IOVA per hugepage, stable, aligned, offsets kept. */
static void test_pa_2m(void)
{
	struct pp_arena *arena;
	struct pp_dma *dma, *again;
	char *base;
	uint64_t hp0, hp1, iova, iova2;
	size_t off;

	need_root();
	arena = pp_test_arena(4 * MiB, PP_PAGE_SIZE_2M);
	base = pp_arena_base(arena);
	dma = dma_new(PP_IOVA_PA, NULL, NULL);
	REQUIRE(pp_dma_map_arena(dma, arena) == 0);

	REQUIRE(pp_dma_map_page(dma, base, 0, PP_DMA_FROM_DEVICE, &hp0) == 0);
	REQUIRE(pp_dma_map_page(dma, base + 2 * MiB, 0, PP_DMA_FROM_DEVICE,
				&hp1) == 0);
	CHECK(hp0 != 0 && hp1 != 0 && hp0 != hp1);
	CHECK_EQ(hp0 & (2 * MiB - 1), 0);
	CHECK_EQ(hp1 & (2 * MiB - 1), 0);
	/* Every 4 KiB page: base of its hugepage plus its offset. */
	for (off = 0; off < 4 * MiB; off += PP_PAGE_SIZE) {
		CHECK_EQ(pp_dma_map_page(dma, base + off, 0,
					 PP_DMA_FROM_DEVICE, &iova), 0);
		CHECK(iova == (off < 2 * MiB ? hp0 + off : hp1 + off - 2 * MiB));
		CHECK_EQ(iova & (PP_PAGE_SIZE - 1), 0);
	}
	/* A block within one hugepage is contiguous; across two it is not. */
	CHECK_EQ(pp_dma_map_page(dma, base + 2 * MiB - 4 * PP_PAGE_SIZE, 2,
				 PP_DMA_FROM_DEVICE, &iova), 0);
	CHECK_EQ(pp_dma_map_page(dma, base + 2 * MiB - 2 * PP_PAGE_SIZE, 2,
				 PP_DMA_FROM_DEVICE, &iova), -EINVAL);
	CHECK_EQ(pp_dma_map_page(dma, base, 9, PP_DMA_FROM_DEVICE, &iova), 0);
	CHECK(iova == hp0);

	/* Stable: a second domain reads the same physical addresses. */
	again = dma_new(PP_IOVA_PA, NULL, NULL);
	REQUIRE(pp_dma_map_arena(again, arena) == 0);
	CHECK_EQ(pp_dma_map_page(again, base + 2 * MiB + 3 * PP_PAGE_SIZE, 0,
				 PP_DMA_FROM_DEVICE, &iova2), 0);
	CHECK(iova2 == hp1 + 3 * PP_PAGE_SIZE);
	CHECK_EQ(pp_dma_unmap_arena(again, arena), 0);
	CHECK_EQ(pp_dma_destroy(again), 0);

	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

/* PA on 4 KiB pages: order 0 works, order > 0 is refused (-EINVAL). */
static void test_pa_4k(void)
{
	struct pp_arena *arena;
	struct pp_dma *dma;
	char *base;
	uint64_t a, b;

	need_root();
	arena = pp_test_arena(1 * MiB, PP_PAGE_SIZE_4K);
	base = pp_arena_base(arena);
	dma = dma_new(PP_IOVA_PA, NULL, NULL);
	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	CHECK_EQ(pp_dma_map_page(dma, base, 0, PP_DMA_FROM_DEVICE, &a), 0);
	CHECK_EQ(pp_dma_map_page(dma, base + PP_PAGE_SIZE, 0,
				 PP_DMA_FROM_DEVICE, &b), 0);
	CHECK(a != 0 && b != 0 && a != b);
	CHECK_EQ(a & (PP_PAGE_SIZE - 1), 0);
	CHECK_EQ(pp_dma_map_page(dma, base, 1, PP_DMA_FROM_DEVICE, &a),
		 -EINVAL);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

/* Drop CAP_SYS_ADMIN from the calling thread's sets (no libcap needed). */
static int drop_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	unsigned int word = CAP_SYS_ADMIN / 32, bit = CAP_SYS_ADMIN % 32;

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[word].effective &= ~(1u << bit);
	data[word].permitted &= ~(1u << bit);
	data[word].inheritable &= ~(1u << bit);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/*
 * Without CAP_SYS_ADMIN the kernel reads PFNs as zero: the mapping must
 * fail with -EPERM and the message that tells the operator what to do,
 * and never produce an address. Runs in a child so the test keeps root.
 */
static void test_pa_noperm(void)
{
	struct pp_arena *arena;
	pid_t pid;
	int status;

	need_root();
	arena = pp_test_arena(1 * MiB, PP_PAGE_SIZE_4K);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct pp_dma *dma;
		uint64_t iova = 0;
		int err;

		volatile char *mem = pp_arena_base(arena);
		size_t off;

		if (drop_sys_admin())
			_exit(77);
		/* fork() does not copy the page tables of shared mappings:
		 * fault the arena in again, or pagemap says "not present". */
		for (off = 0; off < pp_arena_size(arena); off += PP_PAGE_SIZE)
			(void)mem[off];
		pp_test_capture_log();
		dma = dma_new(PP_IOVA_PA, NULL, NULL);
		err = pp_dma_map_arena(dma, arena);
		if (err != -EPERM) {
			fprintf(stderr, "map_arena without CAP_SYS_ADMIN: %d\n",
				err);
			_exit(2);
		}
		if (!pp_test_log_has("pagemap hides physical addresses: run as root (CAP_SYS_ADMIN) or use IOVA mode va"))
			_exit(3);
		/* Nothing stayed mapped: no address is handed out. */
		if (pp_dma_map_page(dma, pp_arena_base(arena), 0,
				    PP_DMA_FROM_DEVICE, &iova) != -ENOENT ||
		    iova != 0)
			_exit(4);
		if (pp_dma_destroy(dma) != 0)
			_exit(5);
		_exit(0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	REQUIRE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		pp_test_skip("cannot drop CAP_SYS_ADMIN here (capset failed)");
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

/* ---- ops ---- */

struct ops_ctx {
	unsigned int seg_maps;
	unsigned int seg_unmaps;
	unsigned int fail_seg; /* segment_map fails on this call (1-based) */
	unsigned int page_maps;
	unsigned int page_unmaps;
	unsigned int syncs_dev;
	unsigned int syncs_cpu;
};

static int ops_segment_map(void *ctx, const struct pp_arena_segment *seg)
{
	struct ops_ctx *c = ctx;

	(void)seg;
	if (c->fail_seg && c->seg_maps + 1 == c->fail_seg)
		return -ENOSPC;
	c->seg_maps++;
	return 0;
}

static void ops_segment_unmap(void *ctx, const struct pp_arena_segment *seg)
{
	struct ops_ctx *c = ctx;

	(void)seg;
	c->seg_unmaps++;
}

static int ops_page_map(void *ctx, void *addr, size_t len,
			enum pp_dma_dir dir, uint64_t *iova)
{
	struct ops_ctx *c = ctx;

	(void)len;
	(void)dir;
	c->page_maps++;
	*iova = 0x100000000ULL + ((uintptr_t)addr & 0xffffffffULL);
	return 0;
}

static void ops_page_unmap(void *ctx, uint64_t iova, size_t len,
			   enum pp_dma_dir dir)
{
	struct ops_ctx *c = ctx;

	(void)iova;
	(void)dir;
	CHECK_EQ(len, 2 * PP_PAGE_SIZE);
	c->page_unmaps++;
}

static void ops_sync_dev(void *ctx, uint64_t iova, size_t len,
			 enum pp_dma_dir dir)
{
	(void)iova;
	(void)len;
	(void)dir;
	((struct ops_ctx *)ctx)->syncs_dev++;
}

static void ops_sync_cpu(void *ctx, uint64_t iova, size_t len,
			 enum pp_dma_dir dir)
{
	(void)iova;
	(void)len;
	(void)dir;
	((struct ops_ctx *)ctx)->syncs_cpu++;
}

static const struct pp_dma_ops counting_ops = {
	.sz = sizeof(struct pp_dma_ops),
	.name = "test",
	.segment_map = ops_segment_map,
	.segment_unmap = ops_segment_unmap,
	.page_map = ops_page_map,
	.page_unmap = ops_page_unmap,
	.sync_for_device = ops_sync_dev,
	.sync_for_cpu = ops_sync_cpu,
};

static void test_ops(void)
{
	struct pp_arena *arena = pp_test_arena(4 * MiB, PP_PAGE_SIZE_4K);
	unsigned int nseg = pp_arena_segment_count(arena);
	struct ops_ctx c = { 0 };
	struct pp_dma *dma = dma_new(PP_IOVA_OPS, &counting_ops, &c);
	char *base = pp_arena_base(arena);
	uint64_t iova;

	REQUIRE(nseg >= 1);
	/* A failing segment: the ones mapped before it are unmapped. */
	c.fail_seg = nseg;
	pp_test_capture_log();
	CHECK_EQ(pp_dma_map_arena(dma, arena), -ENOSPC);
	CHECK(pp_test_log_has("failed to map segment"));
	CHECK_EQ(c.seg_maps, nseg - 1);
	CHECK_EQ(c.seg_unmaps, nseg - 1);
	CHECK_EQ(pp_dma_map_page(dma, base, 0, PP_DMA_FROM_DEVICE, &iova),
		 -ENOENT);
	CHECK_EQ(pp_dma_destroy(dma), 0);

	memset(&c, 0, sizeof(c));
	dma = dma_new(PP_IOVA_OPS, &counting_ops, &c);
	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	CHECK_EQ(c.seg_maps, nseg); /* once per segment */
	CHECK_EQ(pp_dma_map_page(dma, base + PP_PAGE_SIZE * 2, 1,
				 PP_DMA_FROM_DEVICE, &iova), 0);
	CHECK_EQ(c.page_maps, 1);
	pp_dma_sync_for_device(dma, iova, 64, PP_DMA_FROM_DEVICE);
	pp_dma_sync_for_cpu(dma, iova, 64, PP_DMA_FROM_DEVICE);
	pp_dma_unmap_page(dma, iova, 1, PP_DMA_FROM_DEVICE);
	CHECK_EQ(c.page_unmaps, 1);
	CHECK_EQ(c.syncs_dev, 1);
	CHECK_EQ(c.syncs_cpu, 1);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(c.seg_unmaps, nseg);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

/* ---- growth: a domain follows a growable arena's segments ---- */

/*
 * An ops backend that logs its segment calls and keeps the set of
 * segments mapped now; page_map refuses a page outside them, so a page
 * handed out before its segment was mapped shows up as an error.
 */
#define LOG_MAX 64

struct seg_log {
	unsigned int maps, unmaps, fails;
	int fail_err;             /* segment_map returns it while set */
	unsigned int nr_mapped;
	struct { void *addr; size_t len; } mapped[LOG_MAX];
	char ops[LOG_MAX][48];    /* "map +OFF_KIB LEN_KIB" / "unmap ..." */
	unsigned int nr_ops;
	uintptr_t base;
};

static void log_op(struct seg_log *l, const char *what,
		   const struct pp_arena_segment *seg)
{
	if (l->nr_ops < LOG_MAX)
		snprintf(l->ops[l->nr_ops++], sizeof(l->ops[0]), "%s +%zu %zu",
			 what, ((uintptr_t)seg->addr - l->base) >> 10,
			 seg->len >> 10);
}

static int log_segment_map(void *ctx, const struct pp_arena_segment *seg)
{
	struct seg_log *l = ctx;

	if (l->fail_err) {
		l->fails++;
		log_op(l, "fail", seg);
		return l->fail_err;
	}
	REQUIRE(l->nr_mapped < LOG_MAX);
	l->mapped[l->nr_mapped].addr = seg->addr;
	l->mapped[l->nr_mapped].len = seg->len;
	l->nr_mapped++;
	l->maps++;
	log_op(l, "map", seg);
	return 0;
}

static void log_segment_unmap(void *ctx, const struct pp_arena_segment *seg)
{
	struct seg_log *l = ctx;
	unsigned int i;

	for (i = 0; i < l->nr_mapped; i++)
		if (l->mapped[i].addr == seg->addr)
			break;
	REQUIRE(i < l->nr_mapped);
	CHECK_EQ(l->mapped[i].len, seg->len);
	l->mapped[i] = l->mapped[--l->nr_mapped];
	l->unmaps++;
	log_op(l, "unmap", seg);
}

/* IOVA: a window of its own at 1 TiB, the arena offset kept. */
#define LOG_IOVA_BASE (1ULL << 40)

static int log_page_map(void *ctx, void *addr, size_t len,
			enum pp_dma_dir dir, uint64_t *iova)
{
	struct seg_log *l = ctx;
	uintptr_t a = (uintptr_t)addr;

	(void)dir;
	for (unsigned int i = 0; i < l->nr_mapped; i++) {
		uintptr_t s = (uintptr_t)l->mapped[i].addr;

		if (a - s < l->mapped[i].len &&
		    len <= l->mapped[i].len - (a - s)) {
			*iova = LOG_IOVA_BASE + (a - l->base);
			return 0;
		}
	}
	return -EFAULT;
}

static const struct pp_dma_ops logging_ops = {
	.sz = sizeof(struct pp_dma_ops),
	.name = "log",
	.segment_map = log_segment_map,
	.segment_unmap = log_segment_unmap,
	.page_map = log_page_map,
};

#define GROW_MIN (4 * MiB)
#define GROW_STEP (4 * MiB)
#define GROW_MAX (16 * MiB)

/* A growable arena of @page_size pages: GROW_MIN committed, up to
 * GROW_MAX in GROW_STEP segments. */
static struct pp_arena *grow_arena(size_t page_size)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o), .size = GROW_MIN, .page_size = page_size,
		.numa_node = PP_NUMA_NODE_ANY, .name = "grow",
		.max_size = GROW_MAX, .grow_step = GROW_STEP,
	};
	struct pp_arena *a;

	if (page_size != PP_PAGE_SIZE_4K &&
	    pp_hugepages_free(page_size, PP_NUMA_NODE_ANY) <
		    (long)((GROW_MIN + GROW_STEP) / page_size))
		pp_test_skip("fewer than %zu free %zu KiB hugepages for a growable arena (run scripts/setup.sh)",
			     (GROW_MIN + GROW_STEP) / page_size,
			     page_size >> 10);
	a = pp_arena_create(&o);
	REQUIRE(a != NULL);
	REQUIRE(pp_arena_growable(a));
	CHECK_EQ(pp_arena_size(a), GROW_MAX);
	CHECK_EQ(pp_arena_committed(a), GROW_MIN);
	return a;
}

/* Growth by hand: no growth thread races the test's steps. */
static struct pp_allocator *grow_allocator(struct pp_arena *arena)
{
	struct pp_allocator_opts o = {
		.sz = sizeof(o), .arenas = &arena, .nr_arenas = 1,
		.flags = PP_ALLOCATOR_F_MANUAL_RESIZE,
	};
	struct pp_allocator *alloc = pp_allocator_create(&o);

	REQUIRE(alloc != NULL);
	return alloc;
}

static struct pp_zone_growth zone_growth(struct pp_allocator *alloc)
{
	struct pp_zone_growth g = { .sz = sizeof(g) };

	REQUIRE(pp_allocator_zone_growth(alloc, 0, &g) == 0);
	return g;
}

/* Take every page the allocator has (it cannot grow by itself here). */
static unsigned int take_all(struct pp_allocator *alloc, struct pp_page **held,
			     unsigned int max)
{
	unsigned int n = 0;

	while (n < max && (held[n] = pp_alloc_page(alloc)) != NULL)
		n++;
	REQUIRE(n < max);
	return n;
}

static void give_back(struct pp_allocator *alloc, struct pp_page **held,
		      unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		pp_free_page(alloc, held[i]);
	pp_allocator_drain_thread(alloc);
}

static void check_allocator(struct pp_allocator *alloc)
{
	unsigned long allocated = 1;

	CHECK_EQ(pp_allocator_check(alloc, &allocated), 0);
	CHECK_EQ(allocated, 0);
}

/*
 * OPS: pp_allocator_grow() maps the new segment in the domain before a
 * page of it is handed out (the log, and the IOVA of such a page);
 * pp_allocator_shrink() unmaps it; the domain's unmap unmaps the rest.
 */
static void test_grow_ops(void)
{
	struct pp_arena *arena = grow_arena(PP_PAGE_SIZE_4K);
	struct seg_log l = { .base = (uintptr_t)pp_arena_base(arena) };
	struct pp_dma *dma = dma_new(PP_IOVA_OPS, &logging_ops, &l);
	struct pp_allocator *alloc;
	struct pp_page **held, *pg;
	struct pp_zone_growth g;
	unsigned int n, max = GROW_MAX / PP_PAGE_SIZE + 1;
	char *base = pp_arena_base(arena), *addr;
	uint64_t iova;

	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	CHECK_EQ(l.maps, 1);
	CHECK(!strcmp(l.ops[0], "map +0 4096"));
	alloc = grow_allocator(arena);
	held = calloc(max, sizeof(*held));
	REQUIRE(held != NULL);

	/* The minimum, all taken: nothing beyond it is handed out. */
	n = take_all(alloc, held, max);
	CHECK_EQ(n, GROW_MIN / PP_PAGE_SIZE);
	for (unsigned int i = 0; i < n; i++)
		CHECK((char *)pp_page_address(held[i]) < base + GROW_MIN);
	/* Uncommitted: the ops backend was never told of it. */
	CHECK_EQ(pp_dma_map_page(dma, base + GROW_MIN, 0, PP_DMA_FROM_DEVICE,
				 &iova), -EFAULT);

	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(l.maps, 2);
	CHECK(!strcmp(l.ops[1], "map +4096 4096"));
	CHECK_EQ(pp_arena_committed(arena), GROW_MIN + GROW_STEP);
	g = zone_growth(alloc);
	CHECK_EQ(g.grows, 1);
	CHECK_EQ(g.committed_bytes, GROW_MIN + GROW_STEP);
	/* The next page comes from the new segment, mapped already. */
	pg = pp_alloc_page(alloc);
	REQUIRE(pg != NULL);
	addr = pp_page_address(pg);
	CHECK(addr >= base + GROW_MIN && addr < base + GROW_MIN + GROW_STEP);
	CHECK_EQ(pp_dma_map_page(dma, addr, 0, PP_DMA_FROM_DEVICE, &iova), 0);
	CHECK(iova == LOG_IOVA_BASE + (uint64_t)(addr - base));
	held[n++] = pg;
	CHECK_EQ(pp_allocator_check(alloc, NULL), 0);

	/* All free again: shrink gives the step back, unmapped first. */
	give_back(alloc, held, n);
	CHECK_EQ(pp_allocator_shrink(alloc, 0), 1);
	CHECK_EQ(l.unmaps, 1);
	CHECK(!strcmp(l.ops[2], "unmap +4096 4096"));
	CHECK_EQ(l.nr_mapped, 1);
	CHECK_EQ(pp_arena_committed(arena), GROW_MIN);
	g = zone_growth(alloc);
	CHECK_EQ(g.shrinks, 1);
	CHECK_EQ(g.committed_bytes, GROW_MIN);
	CHECK_EQ(pp_dma_map_page(dma, addr, 0, PP_DMA_FROM_DEVICE, &iova),
		 -EFAULT);
	check_allocator(alloc);

	/* Grown twice, then the domain lets go: every segment unmapped,
	 * the highest first. */
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(l.maps, 4);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(l.unmaps, 4);
	CHECK_EQ(l.nr_mapped, 0);
	CHECK(!strcmp(l.ops[l.nr_ops - 3], "unmap +8192 4096"));
	CHECK(!strcmp(l.ops[l.nr_ops - 1], "unmap +0 4096"));
	/* Growth without the domain: the backend hears nothing. */
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(l.maps, 4);
	check_allocator(alloc);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	free(held);
}

/*
 * A segment_map that fails during growth: the growth returns its error
 * after the backend's message, the zone is as it was (committed bytes,
 * free pages) and counts the failure, nothing stays mapped, and the
 * arena works on: pages come and go, the walker passes, and the next
 * growth (the backend well again) succeeds.
 */
static void test_grow_ops_fail(void)
{
	struct pp_arena *arena = grow_arena(PP_PAGE_SIZE_4K);
	struct seg_log l = { .base = (uintptr_t)pp_arena_base(arena) };
	struct pp_dma *dma = dma_new(PP_IOVA_OPS, &logging_ops, &l);
	struct pp_allocator *alloc = grow_allocator(arena);
	struct pp_zone_growth before, after;
	struct pp_page *pg;
	uint64_t iova;

	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	before = zone_growth(alloc);
	l.fail_err = -ENOSPC;
	pp_test_capture_log();
	CHECK_EQ(pp_allocator_grow(alloc, 0), -ENOSPC);
	CHECK(pp_test_log_has("dma: arena grow: backend log failed to map segment at offset 4096 KiB (4096 KiB): No space left on device"));
	CHECK_EQ(l.fails, 1);
	CHECK_EQ(l.maps, 1);
	CHECK_EQ(l.nr_mapped, 1);
	CHECK_EQ(pp_arena_committed(arena), GROW_MIN);
	CHECK_EQ(pp_arena_segment_count(arena), 1);
	after = zone_growth(alloc);
	CHECK_EQ(after.committed_bytes, before.committed_bytes);
	CHECK_EQ(after.free_pages, before.free_pages);
	CHECK_EQ(after.grows, before.grows);
	CHECK_EQ(after.grow_failures, before.grow_failures + 1);
	CHECK_EQ(after.last_error, -ENOSPC);
	check_allocator(alloc);

	/* Still usable, on its first segment. */
	pg = pp_alloc_page(alloc);
	REQUIRE(pg != NULL);
	CHECK((char *)pp_page_address(pg) <
	      (char *)pp_arena_base(arena) + GROW_MIN);
	CHECK_EQ(pp_dma_map_page(dma, pp_page_address(pg), 0,
				 PP_DMA_TO_DEVICE, &iova), 0);
	pp_free_page(alloc, pg);
	pp_allocator_drain_thread(alloc);

	l.fail_err = 0;
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(l.maps, 2);
	CHECK_EQ(zone_growth(alloc).grows, before.grows + 1);
	check_allocator(alloc);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(l.nr_mapped, 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

/*
 * PA: the new segment's hugepages get their physical addresses at
 * growth, before a page of them is handed out; released, they are
 * unknown again (-ENOENT, never a stale address).
 */
static void test_grow_pa(void)
{
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_dma *dma;
	struct pp_page **held, *pg;
	unsigned int n, max = GROW_MAX / PP_PAGE_SIZE + 1;
	char *base, *addr;
	uint64_t iova, first;

	need_root();
	arena = grow_arena(PP_PAGE_SIZE_2M);
	base = pp_arena_base(arena);
	dma = dma_new(PP_IOVA_PA, NULL, NULL);
	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	alloc = grow_allocator(arena);
	held = calloc(max, sizeof(*held));
	REQUIRE(held != NULL);

	CHECK_EQ(pp_dma_map_page(dma, base, 0, PP_DMA_FROM_DEVICE, &first),
		 0);
	CHECK(first != 0);
	CHECK_EQ(pp_dma_map_page(dma, base + GROW_MIN, 0, PP_DMA_FROM_DEVICE,
				 &iova), -ENOENT);
	n = take_all(alloc, held, max);
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	pg = pp_alloc_page(alloc);
	REQUIRE(pg != NULL);
	addr = pp_page_address(pg);
	CHECK(addr >= base + GROW_MIN && addr < base + GROW_MIN + GROW_STEP);
	iova = 0;
	CHECK_EQ(pp_dma_map_page(dma, addr, 0, PP_DMA_FROM_DEVICE, &iova), 0);
	CHECK(iova != 0);
	/* The page's place in its 2 MiB page, on a 2 MiB-aligned base. */
	CHECK_EQ(iova & (2 * MiB - 1), (uintptr_t)addr & (2 * MiB - 1));
	/* The first segment's addresses did not move. */
	CHECK_EQ(pp_dma_map_page(dma, base, 0, PP_DMA_FROM_DEVICE, &iova), 0);
	CHECK(iova == first);
	held[n++] = pg;

	give_back(alloc, held, n);
	CHECK_EQ(pp_allocator_shrink(alloc, 0), 1);
	CHECK_EQ(pp_dma_map_page(dma, addr, 0, PP_DMA_FROM_DEVICE, &iova),
		 -ENOENT);
	check_allocator(alloc);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	free(held);
}

/*
 * Growth and shrink on one thread while another allocates pages and
 * translates them (PA: the unit table the growth fills and the shrink
 * clears): every page handed out has its address already, never 0, and
 * the walker is clean at the end. Under TSan (a b_sanitize=thread
 * build) this is the race check of the table's stores and loads.
 */
struct race {
	struct pp_allocator *alloc;
	struct pp_dma *dma;
	unsigned long mapped, bad;
	bool stop;
};

static void *race_user(void *arg)
{
	struct race *r = arg;
	struct pp_page *pg[32];
	uint64_t iova;
	unsigned int i, n;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		for (n = 0; n < 32 && (pg[n] = pp_alloc_page(r->alloc)); n++)
			;
		for (i = 0; i < n; i++) {
			iova = 0;
			if (pp_dma_map_page(r->dma, pp_page_address(pg[i]), 0,
					    PP_DMA_FROM_DEVICE, &iova) || !iova)
				r->bad++;
			else
				r->mapped++;
			*(volatile char *)pp_page_address(pg[i]) = 1;
		}
		for (i = 0; i < n; i++)
			pp_free_page(r->alloc, pg[i]);
	}
	pp_allocator_drain_thread(r->alloc);
	return NULL;
}

static void test_grow_race(void)
{
	struct pp_arena *arena;
	struct race r = { 0 };
	unsigned int grows = 0, shrinks = 0;
	pthread_t t;
	long got;

	need_root();
	arena = grow_arena(PP_PAGE_SIZE_4K);
	r.dma = dma_new(PP_IOVA_PA, NULL, NULL);
	REQUIRE(pp_dma_map_arena(r.dma, arena) == 0);
	r.alloc = grow_allocator(arena);
	REQUIRE(pthread_create(&t, NULL, race_user, &r) == 0);
	for (unsigned int i = 0; i < 200; i++) {
		if (pp_allocator_grow(r.alloc, 0) == 0)
			grows++;
		got = pp_allocator_shrink(r.alloc, 0);
		CHECK(got >= 0);
		shrinks += got > 0 ? (unsigned int)got : 0;
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	REQUIRE(pthread_join(t, NULL) == 0);
	printf("grow_race: %u growths, %u steps given back, %lu pages translated\n",
	       grows, shrinks, r.mapped);
	CHECK(grows > 0);
	CHECK(r.mapped > 0);
	CHECK_EQ(r.bad, 0);
	while (pp_allocator_shrink(r.alloc, 0) > 0)
		;
	check_allocator(r.alloc);
	CHECK_EQ(pp_allocator_destroy(r.alloc), 0);
	CHECK_EQ(pp_dma_unmap_arena(r.dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(r.dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

static void test_errors(void)
{
	struct pp_dma_opts o = { .sz = sizeof(o), .mode = (enum pp_iova_mode)7 };
	struct pp_dma_ops no_map = { .sz = sizeof(no_map) };

	pp_test_capture_log();
	errno = 0;
	CHECK(pp_dma_create(&o) == NULL && errno == EINVAL);
	CHECK(pp_test_log_has("unknown IOVA mode"));
	o.mode = PP_IOVA_OPS;
	errno = 0;
	CHECK(pp_dma_create(&o) == NULL && errno == EINVAL);
	o.ops = &no_map;
	errno = 0;
	CHECK(pp_dma_create(&o) == NULL && errno == EINVAL);
	CHECK(pp_test_log_has("page_map"));
	o.sz = 0;
	o.mode = PP_IOVA_VA;
	errno = 0;
	CHECK(pp_dma_create(&o) == NULL && errno == EINVAL);
	CHECK(pp_test_log_has("struct pp_dma_opts: sz is 0"));
	CHECK_EQ(pp_dma_destroy(NULL), 0);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "all";
	int all = !strcmp(c, "all");

	if (all || !strcmp(c, "va"))
		RUN_TEST(test_va);
	if (all || !strcmp(c, "pa_2m"))
		RUN_TEST(test_pa_2m);
	if (all || !strcmp(c, "pa_4k"))
		RUN_TEST(test_pa_4k);
	if (all || !strcmp(c, "pa_noperm"))
		RUN_TEST(test_pa_noperm);
	if (all || !strcmp(c, "ops"))
		RUN_TEST(test_ops);
	if (all || !strcmp(c, "errors"))
		RUN_TEST(test_errors);
	if (all || !strcmp(c, "grow_ops"))
		RUN_TEST(test_grow_ops);
	if (all || !strcmp(c, "grow_ops_fail"))
		RUN_TEST(test_grow_ops_fail);
	if (all || !strcmp(c, "grow_pa"))
		RUN_TEST(test_grow_pa);
	if (all || !strcmp(c, "grow_race"))
		RUN_TEST(test_grow_race);
	return pp_test_result();
}
