/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dma.c - IOVA domains over real arenas: VA, PA from pagemap (as
 * root, and with CAP_SYS_ADMIN dropped in a child, where pagemap hides the
 * frame numbers and the mapping must fail with -EPERM and say why), and a
 * caller's ops table (segment hooks once per segment, failures undone).
 *
 * Cases: va, pa_2m, pa_4k, pa_noperm, ops, errors.
 */
#include <linux/capability.h>
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
	return pp_test_result();
}
