/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool_cases.c - page_pool's three paths, per page, as the kernel's
 * bench_page_pool_simple measures them:
 *
 *   fast path     alloc from the 128-entry cache, recycle straight back
 *                 into it (the owner thread, XDP_DROP);
 *   ring recycle  every page returned with allow_direct=false, so it goes
 *                 through the multi-producer ring and comes back by the
 *                 refill-from-ring path (a page freed on another CPU);
 *   release       every page leaves the pool (XDP_PASS into the stack) and
 *                 is freed to the allocator, so each refill comes from the
 *                 allocator: once per refill mode (array, list, single),
 *                 which is where the bulk allocator pays off per page;
 *                 and the burst form lib/net uses for PASS (bulk release,
 *                 bulk free);
 *   fragment      the owner takes one fragment of 64, 256, 1024 or 2048
 *                 bytes and returns it at once (the fast path's pattern,
 *                 per fragment): the owner takes back a fragment of the
 *                 block it is splitting, which costs no atomic, and the
 *                 block is split again from its start;
 *   burst         a burst of 32 buffers (pages, or fragments of each
 *                 size) taken, then returned: one at a time by the owner
 *                 (direct), or in one pp_pool_put_pages_bulk() call, the
 *                 return of a thread that does not own the pool. Here
 *                 blocks fill and the owner moves on while their
 *                 fragments are out, so returns pay the count's atomics:
 *                 the honest figure for a driver that receives a burst.
 *
 * Pools are created without DMA mapping, as in the kernel benchmark: the
 * figures are the recycling cost, not an IOMMU's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "timing.h"

struct pool_arg {
	struct pp_pool *pool;
	struct pp_allocator *alloc;
	unsigned int frag_size;  /* 0: whole pages */
};

#define BURST 32

static int fast_path(void *p, unsigned long iters, struct bench_sample *s,
		     char *why, size_t why_len)
{
	struct pool_arg *a = p;
	unsigned long i;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		struct pp_page *page = pp_pool_alloc_pages(a->pool);

		if (PP_UNLIKELY(!page)) {
			snprintf(why, why_len, "pp_pool_alloc_pages returned NULL");
			return -1;
		}
		/* The page escapes, so the cache stores cannot be elided. */
		bench_keep(page);
		pp_pool_recycle_direct(a->pool, page);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

static int ring_recycle(void *p, unsigned long iters, struct bench_sample *s,
			char *why, size_t why_len)
{
	struct pool_arg *a = p;
	unsigned long i;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		struct pp_page *page = pp_pool_alloc_pages(a->pool);

		if (PP_UNLIKELY(!page)) {
			snprintf(why, why_len, "pp_pool_alloc_pages returned NULL");
			return -1;
		}
		bench_keep(page);
		pp_pool_put_page(a->pool, page, (unsigned int)-1, false);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

static int release_path(void *p, unsigned long iters, struct bench_sample *s,
			char *why, size_t why_len)
{
	struct pool_arg *a = p;
	unsigned long i;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		struct pp_page *page = pp_pool_alloc_pages(a->pool);

		if (PP_UNLIKELY(!page)) {
			snprintf(why, why_len, "pp_pool_alloc_pages returned NULL");
			return -1;
		}
		bench_keep(page);
		pp_pool_release_page(a->pool, page);
		pp_free_page(a->alloc, page);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

/*
 * The XDP_PASS burst as lib/net runs it: a burst of 64 pages from the
 * pool, released in one call, freed to the allocator in one call.
 */
static int release_burst(void *p, unsigned long iters, struct bench_sample *s,
			 char *why, size_t why_len)
{
	struct pool_arg *a = p;
	struct pp_page *pages[PP_POOL_CACHE_REFILL];
	unsigned long i;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		unsigned int n = pp_pool_alloc_bulk(a->pool, pages,
						    PP_POOL_CACHE_REFILL);

		if (PP_UNLIKELY(n != PP_POOL_CACHE_REFILL)) {
			snprintf(why, why_len, "pp_pool_alloc_bulk returned %u",
				 n);
			return -1;
		}
		bench_keep(pages[0]);
		pp_pool_release_pages_bulk(a->pool, pages, n);
		pp_free_pages_bulk(a->alloc, pages, n);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters * PP_POOL_CACHE_REFILL;
	return 0;
}

static int frag_path(void *p, unsigned long iters, struct bench_sample *s,
		     char *why, size_t why_len)
{
	struct pool_arg *a = p;
	unsigned long i;
	unsigned int offset;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		struct pp_page *page = pp_pool_alloc_frag(a->pool, &offset,
							  a->frag_size);

		if (PP_UNLIKELY(!page)) {
			snprintf(why, why_len, "pp_pool_alloc_frag returned NULL");
			return -1;
		}
		bench_keep(page);
		pp_pool_recycle_direct(a->pool, page);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

/* A burst of BURST pages or fragments; NULL when the pool ran dry. */
static bool take_burst(struct pool_arg *a, struct pp_page **bufs)
{
	unsigned int i, offset;

	if (!a->frag_size)
		return pp_pool_alloc_bulk(a->pool, bufs, BURST) == BURST;
	for (i = 0; i < BURST; i++) {
		bufs[i] = pp_pool_alloc_frag(a->pool, &offset, a->frag_size);
		if (PP_UNLIKELY(!bufs[i]))
			return false;
	}
	return true;
}

/* How burst_path() returns its burst. */
enum burst_return {
	RETURN_DIRECT,      /* the owner, one pp_pool_recycle_direct() each */
	RETURN_DIRECT_BULK, /* the owner, one pp_pool_recycle_direct_bulk() */
	RETURN_BULK,        /* any thread, one pp_pool_put_pages_bulk() */
};

/*
 * A burst taken, then returned as @how says. Inlined into each wrapper
 * below, so that the timed loop of each has no test of @how.
 */
static inline __attribute__((always_inline)) int
burst_path(void *p, unsigned long iters, struct bench_sample *s, char *why,
	   size_t why_len, enum burst_return how)
{
	struct pool_arg *a = p;
	struct pp_page *bufs[BURST];
	unsigned long i;
	unsigned int k;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		if (PP_UNLIKELY(!take_burst(a, bufs))) {
			snprintf(why, why_len, "the pool ran dry");
			return -1;
		}
		bench_keep(bufs[0]);
		if (how == RETURN_BULK) {
			pp_pool_put_pages_bulk(a->pool, bufs, BURST);
			continue;
		}
		if (how == RETURN_DIRECT_BULK) {
			pp_pool_recycle_direct_bulk(a->pool, bufs, BURST);
			continue;
		}
		for (k = 0; k < BURST; k++)
			pp_pool_recycle_direct(a->pool, bufs[k]);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters * BURST;
	return 0;
}

static int burst_direct(void *p, unsigned long iters, struct bench_sample *s,
			char *why, size_t why_len)
{
	return burst_path(p, iters, s, why, why_len, RETURN_DIRECT);
}

static int burst_direct_bulk(void *p, unsigned long iters,
			     struct bench_sample *s, char *why, size_t why_len)
{
	return burst_path(p, iters, s, why, why_len, RETURN_DIRECT_BULK);
}

static int burst_bulk(void *p, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	return burst_path(p, iters, s, why, why_len, RETURN_BULK);
}

static const char *const refill_names[] = {
	[PP_REFILL_ARRAY] = "array",
	[PP_REFILL_LIST] = "list",
	[PP_REFILL_SINGLE] = "single",
};

static int run_one(const struct bench_cfg *cfg, struct bench_results *out,
		   const char *name, enum pp_pool_refill refill, bench_fn fn,
		   unsigned int frag_size)
{
	struct pp_pool_params params;
	struct pool_arg a;
	struct bench_result *r;
	int ret;

	memset(&params, 0, sizeof(params));
	params.sz = sizeof(params);
	params.allocator = cfg->alloc;
	params.nid = PP_NUMA_NODE_ANY;
	params.dma_dir = PP_DMA_FROM_DEVICE;
	params.refill = refill;
	params.name = "pp-bench";

	a.alloc = cfg->alloc;
	a.frag_size = frag_size;
	a.pool = pp_pool_create(&params);
	if (!a.pool) {
		bench_fail(out, BENCH_POOL, name, 0, "page", "pp_pool_create: %s",
			   strerror(errno));
		return -1;
	}
	r = bench_run(cfg, out, BENCH_POOL, name, 0,
		      frag_size ? "frag" : "page", fn, &a);
	ret = pp_pool_destroy(a.pool);
	if (ret && !r->failed) {
		r->failed = true;
		snprintf(r->why, sizeof(r->why),
			 "pp_pool_destroy: %s (pages still in flight)",
			 strerror(-ret));
	}
	return 0;
}

static const unsigned int frag_sizes[] = { 64, 256, 1024, 2048 };

/* The rows of one burst case: whole pages, then each fragment size. */
static void run_burst_rows(const struct bench_cfg *cfg,
			   struct bench_results *out, const char *how,
			   bench_fn fn)
{
	char name[48];
	unsigned int i;

	snprintf(name, sizeof(name), "burst 32 pages, %s", how);
	run_one(cfg, out, name, PP_REFILL_ARRAY, fn, 0);
	for (i = 0; i < sizeof(frag_sizes) / sizeof(frag_sizes[0]); i++) {
		snprintf(name, sizeof(name), "burst 32 frags %u B, %s",
			 frag_sizes[i], how);
		run_one(cfg, out, name, PP_REFILL_ARRAY, fn, frag_sizes[i]);
	}
}

int bench_pool_cases(const struct bench_cfg *cfg, struct bench_results *out)
{
	char name[40];
	unsigned int i;
	int m;

	run_one(cfg, out, "fast path (direct recycle)", PP_REFILL_ARRAY,
		fast_path, 0);
	for (i = 0; i < sizeof(frag_sizes) / sizeof(frag_sizes[0]); i++) {
		snprintf(name, sizeof(name), "fragment %u B, direct recycle",
			 frag_sizes[i]);
		run_one(cfg, out, name, PP_REFILL_ARRAY, frag_path,
			frag_sizes[i]);
	}
	run_burst_rows(cfg, out, "direct", burst_direct);
	run_burst_rows(cfg, out, "direct bulk", burst_direct_bulk);
	run_burst_rows(cfg, out, "bulk return", burst_bulk);
	run_one(cfg, out, "ring recycle", PP_REFILL_ARRAY, ring_recycle, 0);
	for (m = PP_REFILL_ARRAY; m <= PP_REFILL_SINGLE; m++) {
		snprintf(name, sizeof(name), "release, refill %s",
			 refill_names[m]);
		run_one(cfg, out, name, (enum pp_pool_refill)m, release_path,
			0);
	}
	run_one(cfg, out, "burst release, refill array", PP_REFILL_ARRAY,
		release_burst, 0);
	return 0;
}
