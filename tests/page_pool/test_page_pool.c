/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_page_pool.c - the page_pool over a real allocator: refill by each
 * mode, direct and ring recycling, cache full and ring full, shared pages,
 * the release (XDP_PASS) path, deferred destroy, DMA-map failures injected
 * through an ops table, order > 0 pools, parameter checks, PA mapping and
 * statistics that add up. pp_pool_check() runs after every case, and the
 * allocator's own count of allocated pages must match the pool's held
 * pages at the end of every case.
 *
 * Usage: test_page_pool CASE [4k|2m]. The 4 KiB arena runs anywhere; the
 * 2 MiB one skips when no hugepages are free.
 */
#include <inttypes.h>

#include "pp_test.h"

#define MiB (1UL << 20)

static size_t page_size = PP_PAGE_SIZE_4K;

struct env {
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_dma *dma;
};

static struct env env_new(enum pp_iova_mode mode,
			  const struct pp_dma_ops *ops, void *ctx)
{
	struct pp_dma_opts o = {
		.sz = sizeof(o), .mode = mode, .ops = ops, .ops_ctx = ctx,
	};
	struct env e;

	e.arena = pp_test_arena(16 * MiB, page_size);
	e.alloc = pp_test_allocator(e.arena);
	e.dma = pp_dma_create(&o);
	REQUIRE(e.dma != NULL);
	REQUIRE(pp_dma_map_arena(e.dma, e.arena) == 0);
	return e;
}

static unsigned long allocated(struct env *e)
{
	unsigned long n = ~0UL;

	CHECK_EQ(pp_allocator_check(e->alloc, &n), 0);
	return n;
}

static void env_free(struct env *e)
{
	CHECK_EQ(allocated(e), 0);
	CHECK_EQ(pp_dma_unmap_arena(e->dma, e->arena), 0);
	CHECK_EQ(pp_dma_destroy(e->dma), 0);
	CHECK_EQ(pp_allocator_destroy(e->alloc), 0);
	CHECK_EQ(pp_arena_destroy(e->arena), 0);
}

static struct pp_pool_params params(struct env *e, enum pp_pool_refill refill)
{
	struct pp_pool_params p = {
		.sz = sizeof(p),
		.allocator = e->alloc,
		.dma = e->dma,
		.flags = PP_POOL_F_DMA_MAP,
		.nid = PP_NUMA_NODE_ANY,
		.dma_dir = PP_DMA_FROM_DEVICE,
		.refill = refill,
		.name = "test",
	};
	return p;
}

static struct pp_pool *pool_new(const struct pp_pool_params *p)
{
	struct pp_pool *pool = pp_pool_create(p);

	REQUIRE(pool != NULL);
	return pool;
}

static struct pp_pool_stats stats(struct pp_pool *pool)
{
	struct pp_pool_stats s;

	CHECK_EQ(pp_pool_get_stats(pool, &s), 0);
	return s;
}

/* Pages handed out by the pool: each comes from exactly one path. */
static uint64_t handed_out(const struct pp_pool_stats *s)
{
	return s->alloc.fast + s->alloc.slow + s->alloc.slow_high_order +
	       s->alloc.refill;
}

/* Check the pool, and that the allocator sees exactly the pool's held
 * blocks of 2^@order pages plus @extra pages the test holds outside it. */
static void pool_balanced(struct env *e, struct pp_pool *pool,
			  unsigned int order, unsigned long extra)
{
	struct pp_pool_stats s = stats(pool);

	CHECK_EQ(pp_pool_check(pool), 0);
	CHECK_EQ(s.hold - s.release, pp_pool_inflight(pool));
	CHECK_EQ(s.cache_count + s.ring_count + s.inflight,
		 pp_pool_inflight(pool));
	CHECK_EQ(allocated(e), (pp_pool_inflight(pool) << order) + extra);
}

/* ---- refill by each mode ---- */

static void refill_case(enum pp_pool_refill mode)
{
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, mode);
	struct pp_pool *pool = pool_new(&p);
	struct pp_page *pages[PP_POOL_CACHE_REFILL + 1];
	struct pp_pool_stats s;
	unsigned int i;

	for (i = 0; i < PP_POOL_CACHE_REFILL + 1; i++) {
		pages[i] = pp_pool_alloc_pages(pool);
		REQUIRE(pages[i] != NULL);
		CHECK(pp_page_pool(pages[i]) == pool);
		CHECK_EQ(pp_page_ref_count(pages[i]), 1);
		CHECK(pp_page_dma_addr(pages[i]) ==
		      (uint64_t)(uintptr_t)pp_page_address(pages[i]));
	}
	s = stats(pool);
	if (mode == PP_REFILL_SINGLE) {
		/* One allocator call per slow-path call, nothing cached. */
		CHECK_EQ(s.alloc.slow, PP_POOL_CACHE_REFILL + 1);
		CHECK_EQ(s.alloc.fast, 0);
		CHECK_EQ(s.hold, PP_POOL_CACHE_REFILL + 1);
		CHECK_EQ(s.cache_count, 0);
	} else {
		/* One bulk call of 64, then 63 from the cache, then again. */
		CHECK_EQ(s.alloc.slow, 2);
		CHECK_EQ(s.alloc.fast, PP_POOL_CACHE_REFILL - 1);
		CHECK_EQ(s.hold, 2 * PP_POOL_CACHE_REFILL);
		CHECK_EQ(s.cache_count, PP_POOL_CACHE_REFILL - 1);
	}
	CHECK_EQ(s.alloc.empty, s.alloc.slow); /* the ring was empty */
	CHECK_EQ(s.alloc.refill, 0);
	CHECK_EQ(handed_out(&s), PP_POOL_CACHE_REFILL + 1);
	CHECK_EQ(s.inflight, PP_POOL_CACHE_REFILL + 1);
	pool_balanced(&e, pool, 0, 0);

	for (i = 0; i < PP_POOL_CACHE_REFILL + 1; i++)
		pp_pool_recycle_direct(pool, pages[i]);
	s = stats(pool);
	CHECK_EQ(s.recycle.cached, PP_POOL_CACHE_REFILL + 1);
	CHECK_EQ(s.inflight, 0);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

static void test_refill_array(void)
{
	refill_case(PP_REFILL_ARRAY);
}

static void test_refill_list(void)
{
	refill_case(PP_REFILL_LIST);
}

static void test_refill_single(void)
{
	refill_case(PP_REFILL_SINGLE);
}

/* ---- the owner recycles into the cache ---- */

static void test_direct_recycle(void)
{
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool = pool_new(&p);
	struct pp_page *pages[10], *page;
	struct pp_pool_stats s;
	unsigned int i;

	for (i = 0; i < 10; i++)
		REQUIRE((pages[i] = pp_pool_alloc_pages(pool)) != NULL);
	for (i = 0; i < 10; i++)
		pp_pool_recycle_direct(pool, pages[i]);
	s = stats(pool);
	CHECK_EQ(s.recycle.cached, 10);
	CHECK_EQ(s.recycle.ring, 0);
	CHECK_EQ(s.cache_count, PP_POOL_CACHE_REFILL);
	CHECK_EQ(s.ring_count, 0);
	/* Last in, first out, from the cache without the allocator. */
	page = pp_pool_alloc_pages(pool);
	CHECK(page == pages[9]);
	s = stats(pool);
	CHECK_EQ(s.alloc.fast, 10);
	CHECK_EQ(s.alloc.slow, 1);
	CHECK_EQ(s.hold, PP_POOL_CACHE_REFILL);
	pool_balanced(&e, pool, 0, 0);
	pp_pool_recycle_direct(pool, page);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/*
 * ---- bulk: a burst taken from the cache and recycled in one step ----
 * pp_pool_alloc_bulk() and pp_pool_recycle_direct_bulk() count as the
 * page-by-page calls would: a burst the cache holds is taken at once, one
 * it does not is refilled; a burst of whole pages goes to the cache at
 * once up to a page still referenced elsewhere (released, as
 * pp_pool_recycle_direct() would), the pages after it the page-by-page
 * way; and a burst larger than the cache's room overflows to the ring.
 */
static void test_direct_bulk(void)
{
	enum { N = PP_POOL_CACHE_REFILL };
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool = pool_new(&p);
	struct pp_page *pages[PP_POOL_CACHE_SIZE + 4], *top, *shared;
	struct pp_pool_stats s;
	unsigned int i;

	/* An empty cache: refilled by the slow path, N pages all the same. */
	CHECK_EQ(pp_pool_alloc_bulk(pool, pages, N), N);
	s = stats(pool);
	CHECK_EQ(s.alloc.slow, 1);
	CHECK_EQ(s.alloc.fast, N - 1);
	CHECK_EQ(s.cache_count, 0);
	pp_pool_recycle_direct_bulk(pool, pages, N);
	s = stats(pool);
	CHECK_EQ(s.recycle.cached, N);
	CHECK_EQ(s.cache_count, N);
	CHECK_EQ(s.inflight, 0);
	/* From the cache in one step, the most recent first. */
	top = pages[N - 1];
	CHECK_EQ(pp_pool_alloc_bulk(pool, pages, N / 2), N / 2);
	CHECK(pages[0] == top);
	s = stats(pool);
	CHECK_EQ(s.alloc.fast, N - 1 + N / 2);
	CHECK_EQ(s.cache_count, N - N / 2);
	for (i = 1; i < N / 2; i++)
		CHECK(pages[i] != pages[i - 1]);
	pool_balanced(&e, pool, 0, 0);

	/* A page held twice in the middle: the pages before it cached at
	 * once, it released (its other holder frees it), the rest cached. */
	shared = pages[3];
	pp_page_ref_inc(shared);
	pp_pool_recycle_direct_bulk(pool, pages, N / 2);
	s = stats(pool);
	CHECK_EQ(s.recycle.cached, N + N / 2 - 1);
	CHECK_EQ(s.recycle.released_refcnt, 1);
	CHECK_EQ(s.inflight, 0);
	CHECK_EQ(pp_page_pool(shared), NULL);
	pp_put_page(e.alloc, shared);
	pool_balanced(&e, pool, 0, 0);

	/* More than the cache has room for: it fills, the rest to the ring. */
	for (i = 0; i < PP_POOL_CACHE_SIZE + 4; i += 4)
		REQUIRE(pp_pool_alloc_bulk(pool, pages + i, 4) == 4);
	unsigned int room = PP_POOL_CACHE_SIZE - stats(pool).cache_count;
	REQUIRE(room >= 2 && room + 4 <= i);
	pp_pool_recycle_direct_bulk(pool, pages, room - 2);
	pp_pool_recycle_direct_bulk(pool, pages + room - 2, 6);
	s = stats(pool);
	CHECK_EQ(s.cache_count, PP_POOL_CACHE_SIZE);
	CHECK_EQ(s.recycle.cache_full, 4);
	CHECK_EQ(s.ring_count, 4);
	pp_pool_recycle_direct_bulk(pool, pages + room + 4, i - room - 4);
	s = stats(pool);
	CHECK_EQ(s.inflight, 0);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- another thread's returns go through the ring ---- */

struct returner {
	struct pp_pool *pool;
	struct pp_page **pages;
	unsigned int n;
	bool bulk;
};

static void *return_pages(void *arg)
{
	struct returner *r = arg;
	unsigned int i;

	if (r->bulk) {
		pp_pool_put_pages_bulk(r->pool, r->pages, r->n);
		return NULL;
	}
	for (i = 0; i < r->n; i++)
		pp_pool_put_page(r->pool, r->pages[i], (unsigned int)-1, false);
	return NULL;
}

static void run_returner(struct pp_pool *pool, struct pp_page **pages,
			 unsigned int n, bool bulk)
{
	struct returner r = { pool, pages, n, bulk };
	pthread_t t;

	REQUIRE(pthread_create(&t, NULL, return_pages, &r) == 0);
	pthread_join(t, NULL);
}

static void test_ring_recycle(void)
{
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool = pool_new(&p);
	struct pp_page *pages[20], *rest[PP_POOL_CACHE_REFILL], *page;
	struct pp_pool_stats s;
	unsigned int i, nrest;
	bool from_ring;

	for (i = 0; i < 20; i++)
		REQUIRE((pages[i] = pp_pool_alloc_pages(pool)) != NULL);
	run_returner(pool, pages, 10, false);
	run_returner(pool, pages + 10, 10, true);
	s = stats(pool);
	CHECK_EQ(s.recycle.ring, 20);
	CHECK_EQ(s.recycle.cached, 0);
	CHECK_EQ(s.ring_count, 20);
	pool_balanced(&e, pool, 0, 0);

	/* Empty the cache; the next allocation takes the ring's pages. */
	nrest = (unsigned int)s.cache_count;
	for (i = 0; i < nrest; i++)
		REQUIRE((rest[i] = pp_pool_alloc_pages(pool)) != NULL);
	page = pp_pool_alloc_pages(pool);
	REQUIRE(page != NULL);
	from_ring = false;
	for (i = 0; i < 20; i++)
		from_ring |= page == pages[i];
	CHECK(from_ring);
	s = stats(pool);
	CHECK_EQ(s.alloc.refill, 1);
	CHECK_EQ(s.alloc.slow, 1); /* no allocator call for it */
	CHECK_EQ(s.ring_count, 0);
	CHECK_EQ(s.cache_count, 19);
	CHECK_EQ(handed_out(&s), 20 + nrest + 1);
	pool_balanced(&e, pool, 0, 0);

	pp_pool_recycle_direct(pool, page);
	for (i = 0; i < nrest; i++)
		pp_pool_recycle_direct(pool, rest[i]);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- cache full -> ring, ring full -> allocator ---- */

static void test_cache_full_ring_full(void)
{
	enum { RING = 64, N = 4 * PP_POOL_CACHE_REFILL };
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool;
	struct pp_page *pages[N];
	struct pp_pool_stats s;
	unsigned int i;

	p.pool_size = RING;
	pool = pool_new(&p);
	for (i = 0; i < N; i++)
		REQUIRE((pages[i] = pp_pool_alloc_pages(pool)) != NULL);
	s = stats(pool);
	CHECK_EQ(s.hold, N);
	CHECK_EQ(s.cache_count, 0);
	for (i = 0; i < N; i++)
		pp_pool_recycle_direct(pool, pages[i]);
	s = stats(pool);
	CHECK_EQ(s.recycle.cached, PP_POOL_CACHE_SIZE);
	CHECK_EQ(s.recycle.cache_full, N - PP_POOL_CACHE_SIZE);
	CHECK_EQ(s.recycle.ring, RING);
	CHECK_EQ(s.recycle.ring_full, N - PP_POOL_CACHE_SIZE - RING);
	CHECK_EQ(s.release, N - PP_POOL_CACHE_SIZE - RING);
	CHECK_EQ(s.cache_count, PP_POOL_CACHE_SIZE);
	CHECK_EQ(s.ring_count, RING);
	CHECK_EQ(s.inflight, 0);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- a page still referenced elsewhere leaves the pool ---- */

static void test_released_refcnt(void)
{
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool = pool_new(&p);
	struct pp_page *a, *b, *bulk[2];
	struct pp_pool_stats s;

	REQUIRE((a = pp_pool_alloc_pages(pool)) != NULL);
	REQUIRE((b = pp_pool_alloc_pages(pool)) != NULL);
	pp_page_ref_inc(a); /* e.g. a clone of the frame holds it */
	pp_pool_recycle_direct(pool, a);
	CHECK(pp_page_pool(a) == NULL);
	CHECK_EQ(pp_page_ref_count(a), 1);
	CHECK_EQ(pp_page_dma_addr(a), 0);
	s = stats(pool);
	CHECK_EQ(s.recycle.released_refcnt, 1);
	CHECK_EQ(s.recycle.cached, 0);
	CHECK_EQ(s.release, 1);
	/* Now a plain allocator page, which its holder frees. */
	pool_balanced(&e, pool, 0, 1);
	pp_put_page(e.alloc, a);
	pool_balanced(&e, pool, 0, 0);

	/* The same through the bulk put, beside a page it recycles. */
	REQUIRE((a = pp_pool_alloc_pages(pool)) != NULL);
	pp_page_ref_inc(a);
	bulk[0] = a;
	bulk[1] = b;
	pp_pool_put_pages_bulk(pool, bulk, 2);
	s = stats(pool);
	CHECK_EQ(s.recycle.released_refcnt, 2);
	CHECK_EQ(s.recycle.ring, 1);
	CHECK(pp_page_pool(a) == NULL);
	pool_balanced(&e, pool, 0, 1);
	pp_put_page(e.alloc, a);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- release: the XDP_PASS path ---- */

static void test_release(void)
{
	enum { N = 100 };
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool = pool_new(&p);
	struct pp_page *pages[N];
	struct pp_pool_stats s;
	unsigned int i;

	for (i = 0; i < N; i++)
		REQUIRE((pages[i] = pp_pool_alloc_pages(pool)) != NULL);
	/* One at a time, then the rest in one bulk call. */
	for (i = 0; i < N / 2; i++)
		pp_pool_release_page(pool, pages[i]);
	s = stats(pool);
	CHECK_EQ(s.release, N / 2);
	CHECK_EQ(s.inflight, N - N / 2);
	pp_pool_release_pages_bulk(pool, &pages[N / 2], N - N / 2);
	for (i = 0; i < N; i++) {
		CHECK(pp_page_pool(pages[i]) == NULL);
		CHECK_EQ(pp_page_dma_addr(pages[i]), 0);
	}
	s = stats(pool);
	CHECK_EQ(s.release, N);
	CHECK_EQ(s.inflight, 0);
	/* The stack owns them now: the allocator still counts them. */
	pool_balanced(&e, pool, 0, N);
	for (i = 0; i < N; i++)
		pp_put_page(e.alloc, pages[i]);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- the owner's releases, subtracted later ---- */

static void *release_in_thread(void *arg)
{
	struct returner *r = arg;

	pp_pool_release_pages_bulk(r->pool, r->pages, r->n);
	return NULL;
}

/*
 * The owner's releases are held back and subtracted with its next refill
 * from the allocator or by destroy; other threads' are subtracted at once.
 * Whichever way, the figures must agree with the allocator's own count,
 * and destroy must see the held-back ones: a pool whose pages all came
 * back is freed at once.
 */
static void test_owner_release(void)
{
	enum { N = 100 };
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool = pool_new(&p);
	struct pp_page *pages[N + 1], *more[PP_POOL_CACHE_SIZE];
	struct returner r;
	struct pp_pool_stats s;
	pthread_t t;
	unsigned int i, n;

	for (i = 0; i < N; i++)
		REQUIRE((pages[i] = pp_pool_alloc_pages(pool)) != NULL);
	/* The owner: 30 one at a time, 20 in bulk. */
	for (i = 0; i < 30; i++)
		pp_pool_release_page(pool, pages[i]);
	pp_pool_release_pages_bulk(pool, pages + 30, 20);
	s = stats(pool);
	CHECK_EQ(s.release, 50);
	CHECK_EQ(s.inflight, N - 50);
	pool_balanced(&e, pool, 0, 50);
	/* Another thread: 10 more. */
	r = (struct returner){ pool, pages + 50, 10, true };
	REQUIRE(pthread_create(&t, NULL, release_in_thread, &r) == 0);
	pthread_join(t, NULL);
	s = stats(pool);
	CHECK_EQ(s.release, 60);
	pool_balanced(&e, pool, 0, 60);
	for (i = 0; i < 60; i++)
		pp_put_page(e.alloc, pages[i]);
	pool_balanced(&e, pool, 0, 0);
	/* Empty the cache so that the next allocation refills from the
	 * allocator, which subtracts the held-back releases. */
	n = 0;
	while (stats(pool).cache_count)
		REQUIRE((more[n++] = pp_pool_alloc_pages(pool)) != NULL);
	REQUIRE((pages[N] = pp_pool_alloc_pages(pool)) != NULL);
	s = stats(pool);
	CHECK_EQ(s.release, 60);
	CHECK_EQ(s.alloc.slow, 3);
	pool_balanced(&e, pool, 0, 0);
	/* Give back all but 30 + 1, through the ring and by release. */
	pp_pool_put_pages_bulk(pool, more, n);
	pp_pool_release_pages_bulk(pool, pages + 60, 10);
	for (i = 60; i < 70; i++)
		pp_put_page(e.alloc, pages[i]);
	CHECK_EQ(pp_pool_destroy(pool), -EBUSY);
	/* After destroy the owner's releases are subtracted at once; the
	 * last return frees the pool (LeakSanitizer sees it if not). */
	for (i = 70; i < N; i++) {
		pp_pool_release_page(pool, pages[i]);
		pp_put_page(e.alloc, pages[i]);
	}
	CHECK_EQ(allocated(&e), 1);
	pp_pool_put_page(pool, pages[N], (unsigned int)-1, false);
	CHECK_EQ(allocated(&e), 0);

	/* All pages back, some held back by the owner: freed at once. */
	pool = pool_new(&p);
	for (i = 0; i < 10; i++)
		REQUIRE((pages[i] = pp_pool_alloc_pages(pool)) != NULL);
	pp_pool_release_pages_bulk(pool, pages, 10);
	for (i = 0; i < 10; i++)
		pp_put_page(e.alloc, pages[i]);
	CHECK_EQ(pp_pool_inflight(pool), PP_POOL_CACHE_REFILL - 10);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	CHECK_EQ(allocated(&e), 0);
	env_free(&e);
}

/* ---- destroy with pages in flight (single thread; the race is in
 * test_pool_destroy.c) ---- */

static void test_destroy_deferred(void)
{
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool = pool_new(&p);
	struct pp_page *pages[10];
	unsigned int i;

	for (i = 0; i < 10; i++)
		REQUIRE((pages[i] = pp_pool_alloc_pages(pool)) != NULL);
	pool_balanced(&e, pool, 0, 0);
	pp_test_capture_log();
	pp_test_log_reset();
	CHECK_EQ(pp_pool_destroy(pool), -EBUSY);
	CHECK(pp_test_log_has("pool test: destroy deferred, 10 pages in flight"));
	/* Cache emptied: only the 10 in flight are still allocated. */
	CHECK_EQ(allocated(&e), 10);
	/* Returns after destroy go straight to the allocator, whichever
	 * way they come; the last one frees the pool. */
	for (i = 0; i < 4; i++)
		pp_pool_recycle_direct(pool, pages[i]);
	CHECK_EQ(allocated(&e), 6);
	pp_pool_put_pages_bulk(pool, pages + 4, 3);
	CHECK_EQ(allocated(&e), 3);
	pp_pool_put_page(pool, pages[7], (unsigned int)-1, false);
	pp_pool_release_page(pool, pages[8]);
	pp_put_page(e.alloc, pages[8]);
	run_returner(pool, pages + 9, 1, false); /* the last, from a thread */
	CHECK_EQ(allocated(&e), 0);
	env_free(&e);
}

/* ---- DMA-map failures ---- */

struct fail_ctx {
	unsigned int every;   /* fail every Nth page_map call */
	unsigned int calls;
	unsigned int mapped;  /* live mappings */
	unsigned int unmapped;
	unsigned int syncs;
	uint64_t last_sync_iova;
	size_t last_sync_len;
};

static int fail_page_map(void *ctx, void *addr, size_t len,
			 enum pp_dma_dir dir, uint64_t *iova)
{
	struct fail_ctx *c = ctx;

	(void)len;
	(void)dir;
	if (c->every && ++c->calls % c->every == 0)
		return -ENOMEM;
	c->mapped++;
	*iova = (uint64_t)(uintptr_t)addr;
	return 0;
}

static void fail_page_unmap(void *ctx, uint64_t iova, size_t len,
			    enum pp_dma_dir dir)
{
	struct fail_ctx *c = ctx;

	(void)iova;
	(void)len;
	(void)dir;
	c->mapped--;
	c->unmapped++;
}

static void fail_sync(void *ctx, uint64_t iova, size_t len,
		      enum pp_dma_dir dir)
{
	struct fail_ctx *c = ctx;

	(void)dir;
	c->syncs++;
	c->last_sync_iova = iova;
	c->last_sync_len = len;
}

static const struct pp_dma_ops fail_ops = {
	.sz = sizeof(struct pp_dma_ops),
	.name = "fail-every-nth",
	.page_map = fail_page_map,
	.page_unmap = fail_page_unmap,
	.sync_for_device = fail_sync,
};

static void test_dma_map_fail(void)
{
	enum { EVERY = 5, N = 3 * PP_POOL_CACHE_REFILL };
	struct fail_ctx c = { .every = EVERY };
	struct env e = env_new(PP_IOVA_OPS, &fail_ops, &c);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool = pool_new(&p);
	struct pp_page *pages[N];
	struct pp_pool_stats s;
	unsigned int i, n = 0;

	while (n < N && (pages[n] = pp_pool_alloc_pages(pool)))
		n++;
	CHECK_EQ(n, N);
	s = stats(pool);
	/* Every call of every refill went to the backend once. */
	CHECK_EQ(c.calls, s.alloc.slow * PP_POOL_CACHE_REFILL);
	CHECK_EQ(s.map_failed, c.calls / EVERY);
	CHECK_EQ(s.hold, c.calls - c.calls / EVERY);
	CHECK_EQ(c.mapped, s.hold);
	/* The failed pages went back: the allocator has only held ones. */
	pool_balanced(&e, pool, 0, 0);
	for (i = 0; i < n; i++)
		pp_pool_recycle_direct(pool, pages[i]);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	/* Every mapping that succeeded was unmapped exactly once. */
	CHECK_EQ(c.mapped, 0);
	CHECK_EQ(c.unmapped, s.hold);
	env_free(&e);
}

/* Every page fails: the pool returns NULL and holds nothing. */
static void test_dma_map_fail_all(void)
{
	struct fail_ctx c = { .every = 1 };
	struct env e = env_new(PP_IOVA_OPS, &fail_ops, &c);
	struct pp_pool_params p = params(&e, PP_REFILL_LIST);
	struct pp_pool *pool = pool_new(&p);
	struct pp_pool_stats s;

	CHECK(pp_pool_alloc_pages(pool) == NULL);
	s = stats(pool);
	CHECK_EQ(s.map_failed, PP_POOL_CACHE_REFILL);
	CHECK_EQ(s.hold, 0);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- sync for device ---- */

static void test_sync_dev(void)
{
	struct fail_ctx c = { .every = 0 };
	struct env e = env_new(PP_IOVA_OPS, &fail_ops, &c);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool;
	struct pp_page *page;
	struct pp_pool_stats s;

	p.flags |= PP_POOL_F_DMA_SYNC_DEV;
	p.offset = 256;
	p.max_len = 1500;
	pool = pool_new(&p);
	REQUIRE((page = pp_pool_alloc_pages(pool)) != NULL);
	/* Each new page is synced once when mapped. */
	CHECK_EQ(c.syncs, PP_POOL_CACHE_REFILL);
	pp_pool_put_page(pool, page, 100, true);
	CHECK_EQ(c.syncs, PP_POOL_CACHE_REFILL + 1);
	CHECK_EQ(c.last_sync_len, 100);
	CHECK(c.last_sync_iova == pp_page_dma_addr(page) + 256);
	REQUIRE(pp_pool_alloc_pages(pool) == page);
	pp_pool_put_page(pool, page, 9000, true); /* clamped to max_len */
	CHECK_EQ(c.last_sync_len, 1500);
	s = stats(pool);
	CHECK_EQ(s.recycle.cached, 2);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- order > 0 ---- */

static void test_high_order(void)
{
	enum { ORDER = 2, N = 5 };
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool;
	struct pp_page *pages[N], *again;
	struct pp_pool_stats s;
	unsigned int i;

	p.order = ORDER;
	pool = pool_new(&p);
	for (i = 0; i < N; i++) {
		REQUIRE((pages[i] = pp_pool_alloc_pages(pool)) != NULL);
		CHECK_EQ(pages[i]->order, ORDER);
		CHECK_EQ((uintptr_t)pp_page_address(pages[i]) &
			 ((PP_PAGE_SIZE << ORDER) - 1), 0);
	}
	s = stats(pool);
	CHECK_EQ(s.alloc.slow_high_order, N);
	CHECK_EQ(s.alloc.slow, 0);
	CHECK_EQ(s.hold, N);
	pool_balanced(&e, pool, ORDER, 0);

	pp_pool_recycle_direct(pool, pages[0]);
	again = pp_pool_alloc_pages(pool);
	CHECK(again == pages[0]);
	s = stats(pool);
	CHECK_EQ(s.alloc.fast, 1);
	CHECK_EQ(handed_out(&s), N + 1);

	/* Release one: the whole block goes back with pp_put_page(). */
	pp_pool_release_page(pool, pages[1]);
	pool_balanced(&e, pool, ORDER, 1UL << ORDER);
	pp_put_page(e.alloc, pages[1]);
	pool_balanced(&e, pool, ORDER, 0);
	run_returner(pool, pages + 2, N - 2, false);
	pp_pool_recycle_direct(pool, pages[0]);
	pool_balanced(&e, pool, ORDER, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- PA mapping through a pool (root) ---- */

static void test_pa(void)
{
	struct env e;
	struct pp_pool_params p;
	struct pp_pool *pool;
	struct pp_page *page;
	struct pp_pool_stats s;
	uint64_t iova;

	if (geteuid() != 0)
		pp_test_skip("PA mode reads /proc/self/pagemap, which needs root");
	e = env_new(PP_IOVA_PA, NULL, NULL);
	p = params(&e, PP_REFILL_ARRAY);
	pool = pool_new(&p);
	REQUIRE((page = pp_pool_alloc_pages(pool)) != NULL);
	CHECK(pp_page_dma_addr(page) != 0);
	CHECK_EQ(pp_page_dma_addr(page) & (PP_PAGE_SIZE - 1), 0);
	CHECK_EQ(pp_dma_map_page(e.dma, pp_page_address(page), 0,
				 PP_DMA_FROM_DEVICE, &iova), 0);
	CHECK(iova == pp_page_dma_addr(page));
	pp_pool_recycle_direct(pool, page);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);

	/* Order > 0 on 4 KiB pages is not physically contiguous: every
	 * block fails to map and goes back to the allocator. */
	p.order = 1;
	pool = pool_new(&p);
	page = pp_pool_alloc_pages(pool);
	s = stats(pool);
	if (page_size == PP_PAGE_SIZE_4K) {
		CHECK(page == NULL);
		CHECK_EQ(s.map_failed, 1);
		CHECK_EQ(s.hold, 0);
	} else {
		REQUIRE(page != NULL);
		CHECK_EQ(s.map_failed, 0);
		pp_pool_recycle_direct(pool, page);
	}
	pool_balanced(&e, pool, 1, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- statistics add up over a mixed workload ---- */

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static void test_stats(void)
{
	enum { HELD_MAX = 600, STEPS = 20000 };
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool;
	struct pp_page *held[HELD_MAX], *page;
	unsigned long n_alloc = 0, n_direct = 0, n_ring = 0, n_release = 0;
	unsigned int nheld = 0, k, i;
	struct pp_pool_stats s;
	uint32_t seed = 12345;
	char json[1024], want[64];
	int len;

	p.pool_size = 128;
	pool = pool_new(&p);
	for (i = 0; i < STEPS; i++) {
		unsigned int op = lcg(&seed) % 8;

		if (i % 5000 == 2500) {
			/* A burst: fill up, then return everything directly,
			 * past the cache and the ring. */
			while (nheld < HELD_MAX) {
				REQUIRE((page = pp_pool_alloc_pages(pool)));
				held[nheld++] = page;
				n_alloc++;
			}
			while (nheld) {
				pp_pool_recycle_direct(pool, held[--nheld]);
				n_direct++;
			}
			continue;
		}

		if (op < 4 && nheld < HELD_MAX) {
			page = pp_pool_alloc_pages(pool);
			REQUIRE(page != NULL);
			held[nheld++] = page;
			n_alloc++;
			continue;
		}
		if (!nheld)
			continue;
		k = lcg(&seed) % nheld;
		page = held[k];
		held[k] = held[--nheld];
		switch (op) {
		case 4:
		case 5:
			pp_pool_recycle_direct(pool, page);
			n_direct++;
			break;
		case 6:
			pp_pool_put_page(pool, page, (unsigned int)-1, false);
			n_ring++;
			break;
		default:
			pp_pool_release_page(pool, page);
			pp_put_page(e.alloc, page);
			n_release++;
			break;
		}
	}
	s = stats(pool);
	CHECK_EQ(handed_out(&s), n_alloc);
	CHECK_EQ(s.recycle.cached + s.recycle.cache_full, n_direct);
	CHECK_EQ(s.recycle.ring + s.recycle.ring_full,
		 s.recycle.cache_full + n_ring);
	CHECK_EQ(s.release, s.recycle.ring_full + n_release);
	CHECK_EQ(s.inflight, nheld);
	CHECK(s.alloc.empty >= s.alloc.slow); /* slow only after an empty ring */
	CHECK(s.alloc.refill > 0 && s.recycle.cache_full > 0 &&
	      s.recycle.ring_full > 0); /* the workload reached every path */
	pool_balanced(&e, pool, 0, 0);

	len = pp_pool_stats_json(pool, json, sizeof(json));
	CHECK(len > 0 && (size_t)len < sizeof(json));
	CHECK(json[0] == '{' && json[len - 1] == '}');
	snprintf(want, sizeof(want), "\"alloc_fast\":%" PRIu64, s.alloc.fast);
	CHECK(strstr(json, want) != NULL);
	snprintf(want, sizeof(want), "\"recycle_ring_full\":%" PRIu64,
		 s.recycle.ring_full);
	CHECK(strstr(json, want) != NULL);
	CHECK(strstr(json, "\"name\":\"test\"") != NULL);
	/* Truncation reports the full length, like snprintf. */
	CHECK_EQ(pp_pool_stats_json(pool, json, 10), len);
	CHECK_EQ(strlen(json), 9);

	while (nheld)
		pp_pool_recycle_direct(pool, held[--nheld]);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- parameters ---- */

static void bad_param(struct pp_pool_params *p, const char *field)
{
	pp_test_log_reset();
	errno = 0;
	CHECK(pp_pool_create(p) == NULL);
	CHECK_EQ(errno, EINVAL);
	if (!pp_test_log_has(field)) {
		fprintf(stderr, "message does not name %s\n", field);
		CHECK(0);
	}
}

static void test_params(void)
{
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params good = params(&e, PP_REFILL_ARRAY), p;
	struct pp_pool *pool;

	pp_test_capture_log();
	p = good; p.sz = 0; bad_param(&p, "struct pp_pool_params: sz is 0");
	p = good; p.allocator = NULL; bad_param(&p, "params.allocator");
	p = good; p.dma = NULL; bad_param(&p, "params.dma");
	p = good; p.flags = 0x80; bad_param(&p, "params.flags");
	p = good; p.flags = PP_POOL_F_DMA_SYNC_DEV;
	bad_param(&p, "params.flags");
	p = good; p.order = 30; bad_param(&p, "params.order");
	p = good; p.pool_size = 1u << 20; bad_param(&p, "params.pool_size");
	p = good; p.nid = -7; bad_param(&p, "params.nid");
	p = good; p.dma_dir = PP_DMA_TO_DEVICE; bad_param(&p, "params.dma_dir");
	p = good; p.offset = PP_PAGE_SIZE; bad_param(&p, "params.offset");
	p = good; p.offset = 256; p.max_len = PP_PAGE_SIZE;
	bad_param(&p, "params.max_len");
	p = good; p.refill = (enum pp_pool_refill)9;
	bad_param(&p, "params.refill");
	errno = 0;
	CHECK(pp_pool_create(NULL) == NULL && errno == EINVAL);

	/* Without DMA: no mapping, dma may be NULL; odd ring sizes round up. */
	p = good;
	p.flags = 0;
	p.dma = NULL;
	p.pool_size = 100;
	p.name = NULL;
	pool = pool_new(&p);
	{
		struct pp_page *page = pp_pool_alloc_pages(pool);

		REQUIRE(page != NULL);
		CHECK_EQ(pp_page_dma_addr(page), 0);
		pp_pool_recycle_direct(pool, page);
	}
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	env_free(&e);
}

/* ---- ownership moves to another thread ---- */

static void *owner_thread(void *arg)
{
	struct pp_pool *pool = arg;
	struct pp_page *page;

	pp_pool_set_owner(pool);
	page = pp_pool_alloc_pages(pool);
	if (page)
		pp_pool_recycle_direct(pool, page);
	return page;
}

static void test_set_owner(void)
{
	struct env e = env_new(PP_IOVA_VA, NULL, NULL);
	struct pp_pool_params p = params(&e, PP_REFILL_ARRAY);
	struct pp_pool *pool = pool_new(&p);
	pthread_t t;
	void *ret;

	pp_test_capture_log();
	pp_test_log_reset();
	REQUIRE(pthread_create(&t, NULL, owner_thread, pool) == 0);
	pthread_join(t, &ret);
	CHECK(ret != NULL);
	CHECK_EQ(pp_test_log_count, 0); /* no "not the owner" complaint */
	pp_pool_set_owner(pool);
	pool_balanced(&e, pool, 0, 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	/* The allocating thread exited: its cache went back. */
	env_free(&e);
}

static const struct pp_test_case cases[] = {
	{ "refill_array", test_refill_array },
	{ "refill_list", test_refill_list },
	{ "refill_single", test_refill_single },
	{ "direct_recycle", test_direct_recycle },
	{ "ring_recycle", test_ring_recycle },
	{ "cache_full_ring_full", test_cache_full_ring_full },
	{ "released_refcnt", test_released_refcnt },
	{ "direct_bulk", test_direct_bulk },
	{ "release", test_release },
	{ "owner_release", test_owner_release },
	{ "destroy_deferred", test_destroy_deferred },
	{ "dma_map_fail", test_dma_map_fail },
	{ "dma_map_fail_all", test_dma_map_fail_all },
	{ "sync_dev", test_sync_dev },
	{ "high_order", test_high_order },
	{ "pa", test_pa },
	{ "stats", test_stats },
	{ "params", test_params },
	{ "set_owner", test_set_owner },
};

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "all";
	char label[32];

#if !PP_STATS
	/* Nearly every case checks its outcome through the counters. */
	pp_test_skip("page_pool statistics are compiled out (built with -Dstats=false)");
#endif
	if (argc > 2 && !strcmp(argv[2], "2m"))
		page_size = PP_PAGE_SIZE_2M;
	snprintf(label, sizeof(label), "(%zu KiB pages)", page_size >> 10);
	return pp_test_run_cases(cases, sizeof(cases) / sizeof(cases[0]), c,
				 label);
}
