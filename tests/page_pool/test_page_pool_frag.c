/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_page_pool_frag.c - page_pool fragments: offsets and rounding, the
 * half-block rule of pp_pool_alloc(), a page recycled only with its last
 * fragment, returns in any order and in bulk, fragments and whole pages
 * from one pool, reuse in place, the DMA sync ranges, destroy with
 * fragments in flight, misuse reported, and fragments of shared pages
 * returned by several threads at once, also while the owner splits the
 * pages they come back as (pipeline). pp_pool_check() and the
 * allocator's count close every case.
 *
 * Usage: test_page_pool_frag CASE [4k|2m]. The 4 KiB arena runs anywhere;
 * the 2 MiB one skips when no hugepages are free.
 */
#include <inttypes.h>

#include "pp_test.h"

#define MiB (1UL << 20)

static size_t page_size = PP_PAGE_SIZE_4K;

/* Counts what the pool asks of the DMA backend; no fault injection. */
struct dma_log {
	unsigned int mapped;
	unsigned int syncs;
	uint64_t last_sync_iova;
	size_t last_sync_len;
};

static int log_page_map(void *ctx, void *addr, size_t len,
			enum pp_dma_dir dir, uint64_t *iova)
{
	struct dma_log *l = ctx;

	(void)len;
	(void)dir;
	l->mapped++;
	*iova = (uint64_t)(uintptr_t)addr;
	return 0;
}

static void log_page_unmap(void *ctx, uint64_t iova, size_t len,
			   enum pp_dma_dir dir)
{
	struct dma_log *l = ctx;

	(void)iova;
	(void)len;
	(void)dir;
	l->mapped--;
}

static void log_sync(void *ctx, uint64_t iova, size_t len, enum pp_dma_dir dir)
{
	struct dma_log *l = ctx;

	(void)dir;
	l->syncs++;
	l->last_sync_iova = iova;
	l->last_sync_len = len;
}

static const struct pp_dma_ops log_ops = {
	.sz = sizeof(struct pp_dma_ops),
	.name = "log",
	.page_map = log_page_map,
	.page_unmap = log_page_unmap,
	.sync_for_device = log_sync,
};

struct env {
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_dma *dma;
	struct pp_pool *pool;
	unsigned int block;
};

static struct env env_new(struct dma_log *log, unsigned int flags)
{
	struct pp_dma_opts o = {
		.sz = sizeof(o),
		.mode = log ? PP_IOVA_OPS : PP_IOVA_VA,
		.ops = log ? &log_ops : NULL,
		.ops_ctx = log,
	};
	struct pp_pool_params p = {
		.sz = sizeof(p),
		.flags = PP_POOL_F_DMA_MAP | flags,
		.nid = PP_NUMA_NODE_ANY,
		.dma_dir = PP_DMA_FROM_DEVICE,
		.name = "frag",
	};
	struct env e;

	e.arena = pp_test_arena(16 * MiB, page_size);
	e.alloc = pp_test_allocator(e.arena);
	e.dma = pp_dma_create(&o);
	REQUIRE(e.dma != NULL);
	REQUIRE(pp_dma_map_arena(e.dma, e.arena) == 0);
	p.allocator = e.alloc;
	p.dma = e.dma;
	e.pool = pp_pool_create(&p);
	REQUIRE(e.pool != NULL);
	/* Order 0: 4 KiB blocks, also over 2 MiB arena pages. */
	e.block = PP_PAGE_SIZE;
	return e;
}

static unsigned long allocated(struct env *e)
{
	unsigned long n = ~0UL;

	CHECK_EQ(pp_allocator_check(e->alloc, &n), 0);
	return n;
}

static struct pp_pool_stats stats(struct env *e)
{
	struct pp_pool_stats s;

	CHECK_EQ(pp_pool_get_stats(e->pool, &s), 0);
	return s;
}

/* The pool's invariants hold, and the allocator sees only its pages. */
static void balanced(struct env *e)
{
	struct pp_pool_stats s = stats(e);

	CHECK_EQ(pp_pool_check(e->pool), 0);
	CHECK_EQ(s.cache_count + s.ring_count + s.inflight,
		 pp_pool_inflight(e->pool));
	CHECK_EQ(allocated(e), pp_pool_inflight(e->pool));
}

/* Destroy with nothing in flight, then check nothing leaked. */
static void env_free(struct env *e)
{
	balanced(e);
	CHECK_EQ(pp_pool_destroy(e->pool), 0);
	CHECK_EQ(allocated(e), 0);
	CHECK_EQ(pp_dma_unmap_arena(e->dma, e->arena), 0);
	CHECK_EQ(pp_dma_destroy(e->dma), 0);
	CHECK_EQ(pp_allocator_destroy(e->alloc), 0);
	CHECK_EQ(pp_arena_destroy(e->arena), 0);
}

static struct pp_page *frag(struct env *e, unsigned int size,
			    unsigned int *offset)
{
	struct pp_page *page = pp_pool_alloc_frag(e->pool, offset, size);

	REQUIRE(page != NULL);
	CHECK(pp_page_pool(page) == e->pool);
	CHECK(*offset + size <= e->block);
	return page;
}

/* ---- offsets, rounding, pages recycled with their last fragment ---- */

static void test_basic(void)
{
	struct env e = env_new(NULL, 0);
	unsigned int per_page = e.block / 128, i, off;
	struct pp_page *first, *page, *next;
	struct pp_pool_stats s;
	uint64_t cached;

	/* 100 bytes round up to two cache lines: 128-byte steps. */
	first = frag(&e, 100, &off);
	CHECK_EQ(off, 0);
	for (i = 1; i < per_page; i++) {
		page = frag(&e, 100, &off);
		CHECK(page == first);
		CHECK_EQ(off, i * 128);
	}
	/* The block is full: the next one starts another block. */
	next = frag(&e, 1, &off);
	CHECK(next != first);
	CHECK_EQ(off, 0);
	s = stats(&e);
	CHECK_EQ(s.frag_alloc, per_page + 1);
	CHECK_EQ(s.frag_pages, 2);
	balanced(&e);

	/* The first block comes back only with its last fragment, from
	 * the owner: straight into the cache. */
	cached = s.recycle.cached;
	for (i = 0; i < per_page - 1; i++)
		pp_pool_recycle_direct(e.pool, first);
	s = stats(&e);
	CHECK_EQ(s.recycle.cached, cached);
	CHECK_EQ(s.inflight, 2);
	pp_pool_recycle_direct(e.pool, first);
	s = stats(&e);
	CHECK_EQ(s.recycle.cached, cached + 1);
	CHECK_EQ(s.inflight, 1);
	balanced(&e);

	/* The other block is still being split: its one fragment back
	 * does not recycle it (the owner's count keeps it), and with none
	 * out the owner splits it again from the start. */
	pp_pool_recycle_direct(e.pool, next);
	s = stats(&e);
	CHECK_EQ(s.inflight, 1);
	page = frag(&e, 64, &off);
	CHECK(page == next);
	CHECK_EQ(off, 0);

	/* One fragment back through the ring (another thread's return):
	 * the owner's own count stays above 0 when it takes the other
	 * back, so the block is not split again under the first... */
	page = frag(&e, 64, &off);
	CHECK(page == next);
	CHECK_EQ(off, 64);
	pp_pool_put_page(e.pool, next, (unsigned int)-1, false);
	pp_pool_recycle_direct(e.pool, next);
	page = frag(&e, 64, &off);
	CHECK(page == next);
	CHECK_EQ(off, 128);
	/* ...and the count, not the owner, has the last word: all are
	 * back, so when the owner moves on it finds the block unused and
	 * splits it again, no second page taken. */
	pp_pool_recycle_direct(e.pool, next);
	page = frag(&e, e.block, &off);
	CHECK(page == next);
	CHECK_EQ(off, 0);
	s = stats(&e);
	CHECK_EQ(s.inflight, 1);
	CHECK_EQ(s.frag_pages, 2);
	pp_pool_recycle_direct(e.pool, page);
	env_free(&e);
}

/* ---- pp_pool_alloc(): a fragment up to half a block ---- */

static void test_alloc(void)
{
	struct env e = env_new(NULL, 0);
	unsigned int half = e.block / 2, off, size;
	struct pp_page *whole, *a, *b;
	struct pp_pool_stats s;

	size = half + 1;
	REQUIRE((whole = pp_pool_alloc(e.pool, &off, &size)) != NULL);
	CHECK_EQ(off, 0);
	CHECK_EQ(size, e.block);
	s = stats(&e);
	CHECK_EQ(s.frag_alloc, 0);

	size = half;
	REQUIRE((a = pp_pool_alloc(e.pool, &off, &size)) != NULL);
	CHECK(a != whole);
	CHECK_EQ(off, 0);
	CHECK_EQ(size, half);
	/* The second half is the last that fits: it takes the rest. */
	size = half - 100;
	REQUIRE((b = pp_pool_alloc(e.pool, &off, &size)) == a);
	CHECK_EQ(off, half);
	CHECK_EQ(size, half);
	s = stats(&e);
	CHECK_EQ(s.frag_alloc, 2);
	CHECK_EQ(s.frag_pages, 1);
	/* The block is closed: even a small one starts another. */
	size = 64;
	REQUIRE((b = pp_pool_alloc(e.pool, &off, &size)) != a);
	CHECK_EQ(off, 0);
	CHECK_EQ(size, 64);

	pp_pool_recycle_direct(e.pool, whole);
	pp_pool_put_page(e.pool, a, (unsigned int)-1, false);
	pp_pool_put_page(e.pool, a, (unsigned int)-1, false);
	pp_pool_recycle_direct(e.pool, b);
	env_free(&e);
}

/* ---- any order, bulk, and whole pages from the same pool ---- */

static void test_mixed(void)
{
	enum { N = 600 };
	struct env e = env_new(NULL, 0);
	struct pp_page *pages[N], *tmp;
	struct pp_pool_stats s;
	unsigned int i, j, off, nfrag = 0, nwhole = 0;
	uint32_t seed = 12345;

	for (i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		if (seed >> 28 == 0) {
			REQUIRE((pages[i] = pp_pool_alloc_pages(e.pool)) !=
				NULL);
			nwhole++;
		} else {
			pages[i] = frag(&e, 64u << (seed >> 29 & 3), &off);
			nfrag++;
		}
	}
	s = stats(&e);
	CHECK_EQ(s.frag_alloc, nfrag);
	balanced(&e);
	/* Shuffle, so that fragments of a page come back in any order,
	 * between whole pages. */
	for (i = N - 1; i > 0; i--) {
		seed = seed * 1103515245u + 12345u;
		j = (seed >> 8) % (i + 1);
		tmp = pages[i];
		pages[i] = pages[j];
		pages[j] = tmp;
	}
	/* A third one by one from the owner, a third from another thread's
	 * view (no direct), the rest in one bulk call. */
	for (i = 0; i < N / 3; i++)
		pp_pool_recycle_direct(e.pool, pages[i]);
	for (; i < 2 * N / 3; i++)
		pp_pool_put_page(e.pool, pages[i], (unsigned int)-1, false);
	pp_pool_put_pages_bulk(e.pool, pages + i, N - i);
	/* Only the block still being split is out, once the owner's
	 * gathered returns are dropped (pp_pool_check() does that). */
	CHECK_EQ(pp_pool_check(e.pool), 0);
	s = stats(&e);
	CHECK_EQ(s.inflight, 1);
	CHECK_EQ(s.recycle.released_refcnt, 0);
	env_free(&e);
}

/* ---- a block whose fragments all came back is split again ---- */

static void test_sync(void)
{
	struct dma_log log = { 0 };
	struct env e = env_new(&log, PP_POOL_F_DMA_SYNC_DEV);
	unsigned int half = e.block / 2, off, syncs;
	struct pp_page *page, *p2;
	uint64_t dma;

	page = frag(&e, half, &off);
	dma = pp_page_dma_addr(page);
	/* A fresh page was synced whole when it was mapped: no more. */
	syncs = log.syncs;
	CHECK(frag(&e, half, &off) == page);
	CHECK_EQ(off, half);
	CHECK_EQ(log.syncs, syncs);
	/* The block was full: the last of its fragments back recycles the
	 * page, synced for device as a whole. */
	pp_pool_put_page(e.pool, page, (unsigned int)-1, true);
	CHECK_EQ(log.syncs, syncs);
	pp_pool_put_page(e.pool, page, (unsigned int)-1, true);
	CHECK_EQ(log.syncs, syncs + 1);
	CHECK(log.last_sync_iova == dma);
	CHECK_EQ(log.last_sync_len, e.block);
	/* Split again from the cache, synced already: nothing more. */
	CHECK(frag(&e, 100, &off) == page);
	CHECK_EQ(off, 0);
	CHECK_EQ(log.syncs, syncs + 1);
	CHECK_EQ(stats(&e).frag_pages, 2);
	/* Its one fragment back with the block still being split: the
	 * block, unsynced since, is split again in place, each fragment
	 * synced for device over its own range as it goes out. */
	pp_pool_put_page(e.pool, page, (unsigned int)-1, true);
	CHECK_EQ(log.syncs, syncs + 1);
	syncs = log.syncs;
	CHECK(frag(&e, 100, &off) == page);
	CHECK_EQ(off, 0);
	CHECK_EQ(log.syncs, syncs + 1);
	CHECK(log.last_sync_iova == dma);
	CHECK_EQ(log.last_sync_len, 128);
	CHECK(frag(&e, 1000, &off) == page);
	CHECK_EQ(off, 128);
	CHECK_EQ(log.syncs, syncs + 2);
	CHECK(log.last_sync_iova == dma + 128);
	CHECK_EQ(log.last_sync_len, 1024);
	/* Split again in place: no other page taken for splitting. */
	CHECK_EQ(stats(&e).frag_pages, 2);

	/* Move on while both are out; the last return syncs the block
	 * (fragments are returned with -1, pp_page_pool.h says why). */
	p2 = frag(&e, e.block, &off);
	CHECK(p2 != page);
	syncs = log.syncs;
	pp_pool_put_page(e.pool, page, (unsigned int)-1, false);
	CHECK_EQ(log.syncs, syncs);
	pp_pool_put_page(e.pool, page, (unsigned int)-1, false);
	CHECK_EQ(log.syncs, syncs + 1);
	CHECK(log.last_sync_iova == dma);
	CHECK_EQ(log.last_sync_len, e.block);
	pp_pool_recycle_direct(e.pool, p2);
	env_free(&e);
	CHECK_EQ(log.mapped, 0);
}

/* ---- destroy with fragments out ---- */

struct returner {
	struct pp_pool *pool;
	struct pp_page **pages;
	unsigned int n;
};

static void *return_frags(void *arg)
{
	struct returner *r = arg;
	unsigned int i;

	for (i = 0; i < r->n; i++)
		pp_pool_put_page(r->pool, r->pages[i], (unsigned int)-1, false);
	return NULL;
}

static void test_destroy(void)
{
	struct env e = env_new(NULL, 0);
	struct pp_page *f[3], *whole;
	struct returner r;
	unsigned int i, off;
	pthread_t t;

	for (i = 0; i < 3; i++)
		f[i] = frag(&e, 256, &off);
	REQUIRE((whole = pp_pool_alloc_pages(e.pool)) != NULL);
	balanced(&e);
	pp_test_capture_log();
	pp_test_log_reset();
	CHECK_EQ(pp_pool_destroy(e.pool), -EBUSY);
	CHECK(pp_test_log_has("pool frag: destroy deferred, 2 pages in flight"));
	CHECK_EQ(allocated(&e), 2);
	pp_pool_recycle_direct(e.pool, f[0]);
	pp_pool_put_page(e.pool, f[1], (unsigned int)-1, false);
	CHECK_EQ(allocated(&e), 2);
	/* The last fragment, from another thread, frees the page. */
	r = (struct returner){ e.pool, f + 2, 1 };
	REQUIRE(pthread_create(&t, NULL, return_frags, &r) == 0);
	pthread_join(t, NULL);
	CHECK_EQ(allocated(&e), 1);
	pp_pool_put_page(e.pool, whole, (unsigned int)-1, false);
	CHECK_EQ(allocated(&e), 0);
	CHECK_EQ(pp_dma_unmap_arena(e.dma, e.arena), 0);
	CHECK_EQ(pp_dma_destroy(e.dma), 0);
	CHECK_EQ(pp_allocator_destroy(e.alloc), 0);
	CHECK_EQ(pp_arena_destroy(e.arena), 0);
}

/* ---- the owner's returns gathered, another thread's counted ---- */

static void return_on_thread(struct env *e, struct pp_page **pages,
			     unsigned int n)
{
	struct returner r = { e->pool, pages, n };
	pthread_t t;

	REQUIRE(pthread_create(&t, NULL, return_frags, &r) == 0);
	pthread_join(t, NULL);
}

static void test_gather(void)
{
	struct env e = env_new(NULL, 0);
	unsigned int quarter = e.block / 4, off, i;
	struct pp_page *f[4], *page, *mixed[64];
	uint64_t cached;

	/* Four quarters: the fourth closes the block, and the owner's
	 * four returns recycle it with no flush. */
	for (i = 0; i < 4; i++)
		f[i] = frag(&e, quarter, &off);
	page = f[0];
	CHECK(f[3] == page);
	mixed[0] = frag(&e, quarter, &off);
	CHECK(mixed[0] != page);
	CHECK_EQ(off, 0);
	for (i = 0; i < 4; i++)
		pp_pool_recycle_direct(e.pool, f[i]);
	CHECK_EQ(stats(&e).inflight, 1);
	/* The block being split, its one fragment back: split again. */
	pp_pool_recycle_direct(e.pool, mixed[0]);
	CHECK(frag(&e, quarter, &off) == mixed[0]);
	CHECK_EQ(off, 0);
	pp_pool_recycle_direct(e.pool, mixed[0]);

	/* Another thread returns one first; the owner's three: the third
	 * finds it holds all that is out and recycles the page at once. */
	for (i = 0; i < 4; i++)
		f[i] = frag(&e, quarter, &off);
	page = f[0];
	return_on_thread(&e, f, 1);
	cached = stats(&e).recycle.cached;
	pp_pool_recycle_direct(e.pool, f[1]);
	pp_pool_recycle_direct(e.pool, f[2]);
	CHECK_EQ(stats(&e).recycle.cached, cached);
	CHECK_EQ(stats(&e).inflight, 1);
	pp_pool_recycle_direct(e.pool, f[3]);
	CHECK_EQ(stats(&e).recycle.cached, cached + 1);
	CHECK_EQ(stats(&e).inflight, 0);

	/* The owner returns two first and another thread the other two:
	 * the other thread's last return is not the last, the owner's
	 * two still count, until the owner drops them (its next return of
	 * another page's fragment, refill or pp_pool_check()). */
	for (i = 0; i < 4; i++)
		f[i] = frag(&e, quarter, &off);
	pp_pool_recycle_direct(e.pool, f[0]);
	pp_pool_recycle_direct(e.pool, f[1]);
	return_on_thread(&e, f + 2, 2);
	CHECK_EQ(stats(&e).inflight, 1);
	CHECK_EQ(pp_pool_check(e.pool), 0);
	CHECK_EQ(stats(&e).inflight, 0);

	/* A large fragment, then small ones: the count grows before the
	 * last it allows goes out, so the small ones fill the block. */
	page = frag(&e, e.block / 2, &off);
	CHECK(page != NULL);
	for (i = 0; i < 32; i++) {
		mixed[i] = frag(&e, 64, &off);
		CHECK(mixed[i] == page);
		CHECK_EQ(off, e.block / 2 + i * 64);
	}
	mixed[32] = frag(&e, 64, &off);
	CHECK(mixed[32] != page);
	/* Half back from another thread, half from the owner, and the
	 * large one last: recycled with it. */
	return_on_thread(&e, mixed, 16);
	for (i = 16; i < 32; i++)
		pp_pool_recycle_direct(e.pool, mixed[i]);
	CHECK_EQ(pp_pool_check(e.pool), 0);
	CHECK_EQ(stats(&e).inflight, 2);
	pp_pool_put_page(e.pool, page, (unsigned int)-1, false);
	CHECK_EQ(stats(&e).inflight, 1);
	pp_pool_recycle_direct(e.pool, mixed[32]);
	env_free(&e);
}

/*
 * pp_pool_recycle_direct_bulk: runs of one page's fragments dropped
 * together, beside whole pages, a page held twice, the block being split
 * and another thread's returns; the accounting balances throughout.
 */
static void test_direct_bulk(void)
{
	struct env e = env_new(NULL, 0);
	unsigned int half = e.block / 2, off, i;
	struct pp_page *b[16], *whole, *shared, *page;
	uint64_t cached;

	/* Three pages of two halves each, a whole page between them, and
	 * a whole page held twice, which leaves the pool on its return. */
	for (i = 0; i < 6; i++)
		b[i] = frag(&e, half, &off);
	CHECK(b[0] == b[1] && b[2] == b[3] && b[4] == b[5]);
	CHECK(b[1] != b[2] && b[3] != b[4]);
	whole = pp_pool_alloc_pages(e.pool);
	shared = pp_pool_alloc_pages(e.pool);
	CHECK(whole && shared);
	pp_page_ref_inc(shared);
	CHECK_EQ(stats(&e).inflight, 5);
	cached = stats(&e).recycle.cached;
	struct pp_page *burst[] = { b[0], b[1], whole, b[2], b[3],
				    shared, b[4], b[5] };
	pp_pool_recycle_direct_bulk(e.pool, burst, 8);
	/* Each two-fragment page at once and the whole page to the
	 * cache; the shared page released, its other holder's to free. */
	CHECK_EQ(stats(&e).inflight, 0);
	CHECK_EQ(stats(&e).recycle.cached, cached + 4);
	CHECK_EQ(pp_page_pool(shared), NULL);
	pp_put_page(e.alloc, shared);
	CHECK_EQ(pp_pool_check(e.pool), 0);

	/* Another thread returns one of a page's four quarters; the
	 * owner's run of the other three finds it holds all that is out. */
	for (i = 0; i < 4; i++)
		b[i] = frag(&e, e.block / 4, &off);
	CHECK(b[0] == b[3]);
	return_on_thread(&e, b, 1);
	pp_pool_recycle_direct_bulk(e.pool, b + 1, 3);
	CHECK_EQ(pp_pool_check(e.pool), 0);
	CHECK_EQ(stats(&e).inflight, 0);

	/* A run that is only part of what is out: gathered, and dropped
	 * when the other half comes back from another thread and the owner
	 * checks. */
	for (i = 0; i < 4; i++)
		b[i] = frag(&e, e.block / 4, &off);
	pp_pool_recycle_direct_bulk(e.pool, b, 2);
	return_on_thread(&e, b + 2, 2);
	CHECK_EQ(pp_pool_check(e.pool), 0);
	CHECK_EQ(stats(&e).inflight, 0);
	/* Fragments of the block being split: plain decrements, and the
	 * block is split again from its start when all are back. */
	page = frag(&e, 64, &off);
	b[0] = page;
	for (i = 1; i < 4; i++)
		b[i] = frag(&e, 64, &off);
	CHECK(b[3] == page);
	pp_pool_recycle_direct_bulk(e.pool, b, 4);
	CHECK(frag(&e, 64, &off) == page);
	CHECK_EQ(off, 0);
	pp_pool_recycle_direct(e.pool, page);

	env_free(&e);
}

/* ---- misuse: reported, nothing lost ---- */

static void test_misuse(void)
{
	struct env e = env_new(NULL, 0);
	struct pp_page *page, *next;
	unsigned int off, size;

	pp_test_capture_log();
	pp_test_log_reset();
	CHECK(pp_pool_alloc_frag(e.pool, &off, 0) == NULL);
	CHECK(pp_test_log_has("fragment of 0 bytes"));
	pp_test_log_reset();
	CHECK(pp_pool_alloc_frag(e.pool, &off, e.block + 1) == NULL);
	CHECK(pp_test_log_has("ask for 1 to"));
	CHECK(pp_pool_alloc_frag(e.pool, &off, UINT32_MAX) == NULL);
	size = e.block + 1;
	pp_test_log_reset();
	CHECK(pp_pool_alloc(e.pool, &off, &size) == NULL);
	CHECK(pp_test_log_has("is larger than the pool's 4096-byte block"));
	CHECK_EQ(size, e.block + 1);
	CHECK_EQ(stats(&e).frag_alloc, 0);
	CHECK_EQ(pp_pool_inflight(e.pool), 0);

	/* A fragment cannot leave the pool: it is returned instead. */
	page = frag(&e, 64, &off);
	CHECK(frag(&e, 64, &off) == page);
	next = frag(&e, e.block, &off);
	pp_test_log_reset();
	pp_pool_release_page(e.pool, page);
	CHECK(pp_test_log_has("is split into fragments and cannot leave"));
	CHECK_EQ(stats(&e).inflight, 2);
	pp_pool_put_page(e.pool, page, (unsigned int)-1, false);
	CHECK_EQ(stats(&e).inflight, 1);
	pp_pool_recycle_direct(e.pool, next);
	env_free(&e);
}

/* ---- fragments of shared pages returned by several threads ---- */

enum { THREADS = 3, ROUNDS = 300, PER_ROUND = 96 };

struct worker {
	struct pp_pool *pool;
	struct pp_page *pages[PER_ROUND];
	unsigned char *data[PER_ROUND];
	unsigned int len[PER_ROUND];
	unsigned int n;
	unsigned char tag;
};

/* Write the fragment (a user of the data), then return it: with TSan this
 * shows any return that would let the page be reused too early. */
static void *worker_run(void *arg)
{
	struct worker *w = arg;
	unsigned int i;

	for (i = w->n; i-- > 0;) {
		memset(w->data[i], w->tag, w->len[i]);
		pp_pool_put_page(w->pool, w->pages[i], (unsigned int)-1, false);
	}
	return NULL;
}

static void test_threads(void)
{
	struct env e = env_new(NULL, 0);
	struct worker w[THREADS + 1];
	pthread_t t[THREADS];
	struct pp_pool_stats s;
	unsigned int round, i, k, off, size;
	uint32_t seed = 777;
	uint64_t nfrag = 0;

	for (round = 0; round < ROUNDS; round++) {
		for (k = 0; k <= THREADS; k++) {
			w[k].pool = e.pool;
			w[k].n = 0;
			w[k].tag = (unsigned char)(round + k);
		}
		/* Deal consecutive fragments (mostly of one page) to
		 * different holders, the owner (w[THREADS]) among them. */
		for (i = 0; i < PER_ROUND; i++) {
			struct worker *to;

			seed = seed * 1103515245u + 12345u;
			to = &w[(seed >> 16) % (THREADS + 1)];
			size = 64u << (seed >> 28 & 3);
			if ((seed >> 8 & 31) == 0) {
				/* Now and then a whole page between them. */
				to->pages[to->n] = pp_pool_alloc_pages(e.pool);
				off = 0;
				size = e.block;
			} else {
				to->pages[to->n] =
					pp_pool_alloc_frag(e.pool, &off, size);
				nfrag++;
			}
			REQUIRE(to->pages[to->n] != NULL);
			to->data[to->n] = (unsigned char *)
				pp_page_address(to->pages[to->n]) + off;
			to->len[to->n] = size;
			to->n++;
		}
		for (k = 0; k < THREADS; k++)
			REQUIRE(pthread_create(&t[k], NULL, worker_run,
					       &w[k]) == 0);
		/* The owner returns its share at the same time, direct. */
		for (i = 0; i < w[THREADS].n; i++) {
			memset(w[THREADS].data[i], 0xee, w[THREADS].len[i]);
			pp_pool_recycle_direct(e.pool, w[THREADS].pages[i]);
		}
		for (k = 0; k < THREADS; k++)
			pthread_join(t[k], NULL);
		/* All back but the block being split, once the owner's
		 * gathered returns are dropped. */
		CHECK_EQ(pp_pool_check(e.pool), 0);
		s = stats(&e);
		CHECK_EQ(s.inflight, 1);
		if (round % 50 == 0)
			balanced(&e);
	}
	s = stats(&e);
	CHECK_EQ(s.frag_alloc, nfrag);
	CHECK_EQ(s.recycle.released_refcnt, 0);
	env_free(&e);
}

/*
 * ---- a pipeline: the owner splits pages while holders return ----
 *
 * Here the owner hands fragments out while the workers return earlier
 * ones, so a page comes back to the owner and is split again while other
 * threads still use the pool. The only order between a worker that
 * returns a fragment (not the last) and the owner that writes the same
 * bytes after the page was recycled is the count's release sequence: each
 * queue below orders owner to worker only (the owner reads the worker's
 * position relaxed), so that TSan sees a return that orders too little.
 */
enum { PIPE_SLOTS = 256, PIPE_FRAGS = 60000, PIPE_WORKERS = 2 };

struct pipe_slot {
	struct pp_page *page;   /* relaxed atomics: published by tail */
	unsigned char *data;
	unsigned int len;
};

struct pipe {
	struct pp_pool *pool;
	struct pipe_slot slot[PIPE_SLOTS];
	uint64_t head;          /* worker's; read relaxed by the owner */
	uint64_t tail;          /* owner's; release, read acquire */
	int done;
};

static void *pipe_worker(void *arg)
{
	struct pipe *q = arg;
	uint64_t head = 0;

	for (;;) {
		uint64_t tail = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
		struct pipe_slot *sl;
		struct pp_page *page;
		unsigned char *data;
		unsigned int len;

		if (head == tail) {
			if (__atomic_load_n(&q->done, __ATOMIC_ACQUIRE) &&
			    head == __atomic_load_n(&q->tail,
						    __ATOMIC_ACQUIRE))
				break;
			continue;
		}
		sl = &q->slot[head % PIPE_SLOTS];
		page = __atomic_load_n(&sl->page, __ATOMIC_RELAXED);
		data = __atomic_load_n(&sl->data, __ATOMIC_RELAXED);
		len = __atomic_load_n(&sl->len, __ATOMIC_RELAXED);
		__atomic_store_n(&q->head, ++head, __ATOMIC_RELAXED);
		memset(data, 0x5a, len);
		pp_pool_put_page(q->pool, page, (unsigned int)-1, false);
	}
	return NULL;
}

static void test_pipeline(void)
{
	struct env e = env_new(NULL, 0);
	struct pipe *q = calloc(PIPE_WORKERS, sizeof(*q));
	pthread_t t[PIPE_WORKERS];
	struct pp_pool_stats s;
	unsigned int i, k, off, size;
	uint32_t seed = 4242;

	REQUIRE(q != NULL);
	for (k = 0; k < PIPE_WORKERS; k++) {
		q[k].pool = e.pool;
		REQUIRE(pthread_create(&t[k], NULL, pipe_worker, &q[k]) == 0);
	}
	for (i = 0; i < PIPE_FRAGS; i++) {
		struct pp_page *page;
		unsigned char *data;
		struct pipe *to;
		struct pipe_slot *sl;

		seed = seed * 1103515245u + 12345u;
		size = 64u << (seed >> 28 & 3);
		page = pp_pool_alloc_frag(e.pool, &off, size);
		REQUIRE(page != NULL);
		data = (unsigned char *)pp_page_address(page) + off;
		/* The owner's write: races with an earlier holder's unless
		 * the returns ordered it. */
		memset(data, 0xa5, size);
		k = (seed >> 16) % (PIPE_WORKERS + 1);
		if (k == PIPE_WORKERS) {
			pp_pool_recycle_direct(e.pool, page);
			continue;
		}
		to = &q[k];
		while (to->tail - __atomic_load_n(&to->head,
						  __ATOMIC_RELAXED) ==
		       PIPE_SLOTS)
			; /* full: wait for the worker */
		sl = &to->slot[to->tail % PIPE_SLOTS];
		__atomic_store_n(&sl->page, page, __ATOMIC_RELAXED);
		__atomic_store_n(&sl->data, data, __ATOMIC_RELAXED);
		__atomic_store_n(&sl->len, size, __ATOMIC_RELAXED);
		__atomic_store_n(&to->tail, to->tail + 1, __ATOMIC_RELEASE);
	}
	for (k = 0; k < PIPE_WORKERS; k++) {
		__atomic_store_n(&q[k].done, 1, __ATOMIC_RELEASE);
		pthread_join(t[k], NULL);
	}
	CHECK_EQ(pp_pool_check(e.pool), 0);
	s = stats(&e);
	CHECK_EQ(s.frag_alloc, PIPE_FRAGS);
	CHECK_EQ(s.inflight, 1);
	CHECK_EQ(s.recycle.released_refcnt, 0);
	free(q);
	env_free(&e);
}

static const struct pp_test_case cases[] = {
	{ "basic", test_basic },
	{ "alloc", test_alloc },
	{ "mixed", test_mixed },
	{ "sync", test_sync },
	{ "destroy", test_destroy },
	{ "misuse", test_misuse },
	{ "gather", test_gather },
	{ "direct_bulk", test_direct_bulk },
	{ "threads", test_threads },
	{ "pipeline", test_pipeline },
};

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "all";
	char label[32];

#if !PP_STATS
	pp_test_skip("page_pool statistics are compiled out (built with -Dstats=false)");
#endif
	if (argc > 2 && !strcmp(argv[2], "2m"))
		page_size = PP_PAGE_SIZE_2M;
	snprintf(label, sizeof(label), "(%zu KiB pages)", page_size >> 10);
	return pp_test_run_cases(cases, sizeof(cases) / sizeof(cases[0]), c,
				 label);
}
