/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_page_pool.h - the per-RX-queue recycling cache (the kernel's page_pool).
 *
 * A pool has an owner thread (the NAPI context in the kernel: the thread
 * that polls the RX queue). Only the owner allocates and recycles directly
 * into the 128-entry alloc cache, with no atomics. Any other thread returns
 * pages through a multi-producer recycle ring. When the cache is empty the
 * owner takes up to 64 pages from the ring, and when the ring is empty too
 * it refills 64 with one bulk array call (PP_REFILL_ARRAY; LIST and SINGLE
 * exist to measure the difference). Each new page is DMA-mapped once and
 * keeps its mapping until it leaves the pool.
 *
 * The alloc cache is exposed below only so that the fast path can inline;
 * do not access it directly.
 */
#ifndef PAGEPOOL_PP_PAGE_POOL_H
#define PAGEPOOL_PP_PAGE_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_common.h>
#include <pagepool/pp_config.h>
#include <pagepool/pp_dma.h>
#include <pagepool/pp_page.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The NAPI budget is 64 frames a poll, so a refill of 64 covers one poll and
 * a cache of twice that absorbs one poll's recycling without touching the
 * ring (the kernel's PP_ALLOC_CACHE_REFILL and PP_ALLOC_CACHE_SIZE).
 */
#define PP_POOL_CACHE_REFILL 64
#define PP_POOL_CACHE_SIZE 128

enum pp_pool_flags {
	PP_POOL_F_DMA_MAP = 1u << 0,      /* map each page once, via params.dma */
	PP_POOL_F_DMA_SYNC_DEV = 1u << 1, /* sync max_len for device on recycle */
};

/*
 * Internal, in pp_pool_alloc_cache.flags only: set by pp_pool_destroy() so
 * that the owner's puts stop going into the cache. The inline put path tests
 * it in the same mask as PP_POOL_F_DMA_SYNC_DEV, so it costs nothing there.
 */
#define PP_POOL_F_NO_DIRECT_ (1u << 31)

enum pp_pool_refill {
	PP_REFILL_ARRAY = 0, /* one bulk array call of 64 (the default) */
	PP_REFILL_LIST = 1,  /* one bulk list call of 64 */
	PP_REFILL_SINGLE = 2, /* one single-page call per slow-path call,
				 as the kernel did before 5.13 */
};

struct pp_pool_params {
	size_t sz;                  /* sizeof(struct pp_pool_params) */
	struct pp_allocator *allocator;
	struct pp_dma *dma;         /* required with PP_POOL_F_DMA_MAP */
	unsigned int flags;         /* enum pp_pool_flags */
	unsigned int order;         /* > 0 refills one block at a time */
	unsigned int pool_size;     /* recycle ring entries; 0: 1024; rounded
				       up to a power of two, at least 2 */
	int nid;                    /* PP_NUMA_NODE_ANY or a node */
	enum pp_dma_dir dma_dir;
	unsigned int max_len;       /* bytes to sync for device; 0: block
				       size minus offset */
	unsigned int offset;        /* where the device writes (headroom) */
	enum pp_pool_refill refill;
	const char *name;
};

/* Statistics, with the kernel's names. */
struct pp_pool_alloc_stats {
	uint64_t fast;            /* taken from the alloc cache */
	uint64_t slow;            /* order-0 slow-path calls */
	uint64_t slow_high_order; /* order > 0 slow-path calls */
	uint64_t empty;           /* refills that found the ring empty */
	uint64_t refill;          /* refills from the ring that got a page */
	uint64_t waive;           /* ring pages given back, not reused: of
				     another node, or of memory the
				     allocator is giving back */
};

struct pp_pool_recycle_stats {
	uint64_t cached;          /* into the alloc cache */
	uint64_t cache_full;      /* alloc cache was full */
	uint64_t ring;            /* into the recycle ring */
	uint64_t ring_full;       /* ring full: back to the allocator */
	uint64_t released_refcnt; /* still referenced: released from pool */
};

struct pp_pool_stats {
	struct pp_pool_alloc_stats alloc;
	struct pp_pool_recycle_stats recycle;
	uint64_t hold;            /* pages taken from the allocator */
	uint64_t release;         /* pages given back to the allocator */
	uint64_t map_failed;      /* pages freed because mapping failed */
	uint64_t cache_count;     /* now in the alloc cache */
	uint64_t ring_count;      /* now in the recycle ring */
	uint64_t inflight;        /* hold - release - cache - ring */
	uint64_t frag_alloc;      /* fragments handed out */
	uint64_t frag_pages;      /* pages taken to split (a block split
				     again in place is not counted) */
};

/*
 * struct pp_pool_alloc_cache - the owner's cache; first member of every
 * pool. Do not access directly.
 */
struct pp_pool_alloc_cache {
	unsigned int count;
	unsigned int flags;                /* params.flags */
	struct pp_pool_alloc_stats alloc_stats;   /* owner-only counters */
	uint64_t recycle_cached;
	uint64_t recycle_cache_full;
	/*
	 * The block being split into fragments ("Fragments" below): the
	 * next fragment's offset (the block size when there is no block,
	 * so that no fragment fits), how many fragments of it the owner
	 * handed out and did not take back itself, the count it set in
	 * the page, how many the inline path may hand out (the count, 0
	 * while each is synced), whether it was
	 * reused in place (each fragment then synced as it goes out); and
	 * the page whose fragments the owner is taking back, with how many
	 * it took back and has not yet dropped from the page's count.
	 */
	struct pp_pool_frag_block_ {
		struct pp_page *page;
		unsigned int offset;
		unsigned int users;
		unsigned int expect;
		unsigned int limit;
		unsigned int block;        /* PP_PAGE_SIZE << order */
		bool sync;
		struct pp_page *pend_page;
		uint64_t pend_nr;
		uint64_t alloc;            /* fragments handed out */
		uint64_t pages;            /* blocks split */
	} frag;
	struct pp_page *cache[PP_POOL_CACHE_SIZE];
};

/*
 * pp_pool_create - returns a pool, or NULL with errno EINVAL (no allocator,
 * DMA_MAP without dma, order above the arenas' page order, offset or
 * max_len past the block, bad params.sz) or ENOMEM.
 * The calling thread becomes the owner until pp_pool_set_owner().
 */
PP_API struct pp_pool *pp_pool_create(const struct pp_pool_params *params);

/*
 * pp_pool_destroy - stop the pool: empty the cache and ring back to the
 * allocator, unmapping every page. Returns 0 when no page is in flight and
 * the pool is freed; returns -EBUSY when pages are still in flight, after a
 * warning that says how many: the pool is then freed by whichever thread
 * returns the last of them, and the caller must not use @pool again.
 * Either way the pool is first unregistered from telemetry
 * (pp_telemetry.h).
 * Context: the owner thread; nobody may allocate from the pool afterwards.
 */
PP_API int pp_pool_destroy(struct pp_pool *pool);

/*
 * pp_pool_set_owner - hand the pool to the calling thread (e.g. an RX
 * thread that did not create it). Only while no other thread allocates,
 * and after the previous owner's last call on the pool (thread start or
 * join orders them): the owner's releases are counted without atomics.
 */
PP_API void pp_pool_set_owner(struct pp_pool *pool);

/*
 * pp_pool_trim - give the allocator the pages of the pool's cache and ring
 * that lie in memory it is giving back to the kernel (a growable arena's
 * step being emptied, doc/growth.md), so an idle pool does not keep that
 * step alive. The pool does the same by itself, without this call, each
 * time it refills its cache from the ring; pp_port_rx_burst() calls this
 * after runs of empty polls. Returns the pages given back; 0 at once (one
 * load per zone) when nothing is being given back.
 * Context: the owner thread.
 */
PP_API unsigned int pp_pool_trim(struct pp_pool *pool);

/* Out-of-line slow paths; call the inline functions below instead. */
PP_API struct pp_page *pp_pool_alloc_pages_slow(struct pp_pool *pool);
PP_API void pp_pool_put_page_slow(struct pp_pool *pool, struct pp_page *page,
				  unsigned int dma_sync_size,
				  bool allow_direct);
PP_API struct pp_page *pp_pool_alloc_frag_slow(struct pp_pool *pool,
					       unsigned int *offset,
					       unsigned int size);

/*
 * A page back in the pool says so (pp_where.h). Taking one out writes
 * nothing: until a port or driver says where it went, it still reads
 * "pool", and the reports count what is out as "app" by subtracting the
 * cache's and ring's pages from those. So a page that never left a
 * forwarder's poll costs a load and a compare here, not a store.
 */
#define PP_HOLDER_POOL_CODE_ PP_HOLDER(PP_HOLDER_POOL, 0, 0)

static inline void pp_page_set_where_pool_(struct pp_page *page)
{
#if PP_HOLDERS
	if (PP_UNLIKELY(pp_page_where(page) != PP_HOLDER_POOL_CODE_))
		pp_page_set_where(page, PP_HOLDER_POOL_CODE_);
#else
	(void)page;
#endif
}

static inline struct pp_pool_alloc_cache *pp_pool_cache_(struct pp_pool *pool)
{
	return (struct pp_pool_alloc_cache *)(void *)pool;
}

/*
 * Owner-only counters: a relaxed store of the owner's own plain read (no
 * atomic read-modify-write; a plain add on x86) so that pp_pool_get_stats()
 * may read them from another thread without a data race.
 */
#if PP_STATS
#define PP_POOL_STAT_ADD_(field, n) \
	__atomic_store_n(&(field), (field) + (n), __ATOMIC_RELAXED)
#else
#define PP_POOL_STAT_ADD_(field, n) ((void)(n))
#endif
#define PP_POOL_STAT_INC_(field) PP_POOL_STAT_ADD_(field, 1)

/*
 * pp_pool_alloc_pages - a page (block of 2^order) mapped for DMA, with
 * refcount 1, its pool set, or NULL when the allocator has none.
 * Context: owner thread only.
 */
static inline struct pp_page *pp_pool_alloc_pages(struct pp_pool *pool)
{
	struct pp_pool_alloc_cache *c = pp_pool_cache_(pool);
	unsigned int n = c->count;

	if (PP_LIKELY(n)) {
		PP_POOL_STAT_INC_(c->alloc_stats.fast);
		/* Relaxed store: pp_pool_get_stats() reads the count. */
		__atomic_store_n(&c->count, n - 1, __ATOMIC_RELAXED);
		return c->cache[n - 1];
	}
	return pp_pool_alloc_pages_slow(pool);
}

/*
 * pp_pool_alloc_bulk - up to @n pages into @pages; returns how many.
 * Context: owner thread only.
 *
 * When the cache holds @n, they are taken in one step: one store of the
 * count and one of the counter for the burst. Page by page, each
 * allocation's relaxed store of the count is read back by the next one
 * through memory, a chain of store-to-load forwards of about five cycles
 * a page that no amount of other work hides.
 */
static inline unsigned int pp_pool_alloc_bulk(struct pp_pool *pool,
					      struct pp_page **pages,
					      unsigned int n)
{
	struct pp_pool_alloc_cache *c = pp_pool_cache_(pool);
	unsigned int i, avail = c->count;

	if (PP_LIKELY(avail >= n)) {
		/* The top of the cache (the most recently used) first,
		 * as one pp_pool_alloc_pages() after another would. */
		for (i = 0; i < n; i++)
			pages[i] = c->cache[avail - 1 - i];
		PP_POOL_STAT_ADD_(c->alloc_stats.fast, n);
		__atomic_store_n(&c->count, avail - n, __ATOMIC_RELAXED);
		return n;
	}
	for (i = 0; i < n; i++) {
		pages[i] = pp_pool_alloc_pages(pool);
		if (PP_UNLIKELY(!pages[i]))
			break;
	}
	return i;
}

/*
 * Whether the returner is @page's only user: a whole page, or the last
 * fragment of a split one; either way it may go to the cache without an
 * atomic. The acquire pairs with the release of the other fragments'
 * returns, so that their accesses come before reuse.
 */
static inline bool pp_pool_page_sole_(struct pp_page *page)
{
	return pp_page_ref_count(page) == 1 &&
	       __atomic_load_n(&page->pp_ref_count, __ATOMIC_ACQUIRE) == 1;
}

/*
 * pp_pool_put_page - return a page of this pool, or one fragment of it
 * (the last fragment's return recycles the page as described here). With
 * @allow_direct (only the owner thread may pass true) it goes straight to
 * the alloc cache;
 * otherwise into the recycle ring; when both are full, back to the
 * allocator. A page whose refcount is above 1 is still used elsewhere: it is
 * released from the pool (unmapped) and its reference dropped.
 * @dma_sync_size: bytes the device may have written (-1: max_len), synced
 * for device when the pool has PP_POOL_F_DMA_SYNC_DEV.
 */
static inline void pp_pool_put_page(struct pp_pool *pool, struct pp_page *page,
				    unsigned int dma_sync_size,
				    bool allow_direct)
{
	struct pp_pool_alloc_cache *c = pp_pool_cache_(pool);

	/* Non-owners pass allow_direct false and never read the cache. */
	if (PP_LIKELY(allow_direct && c->count < PP_POOL_CACHE_SIZE &&
		      !(c->flags & (PP_POOL_F_DMA_SYNC_DEV |
				    PP_POOL_F_NO_DIRECT_)) &&
		      pp_pool_page_sole_(page))) {
		unsigned int n = c->count;

		PP_POOL_STAT_INC_(c->recycle_cached);
		pp_page_set_where_pool_(page);
		c->cache[n] = page;
		__atomic_store_n(&c->count, n + 1, __ATOMIC_RELAXED);
		return;
	}
	/*
	 * The owner takes back a fragment of the block it is splitting:
	 * one fewer of its own users, no atomic. When none is left out,
	 * nobody else can hold one either (their returns would have made
	 * the owner's count larger than what is out), so the block is
	 * split again from its start.
	 */
	if (allow_direct && page == c->frag.page) {
		if (PP_LIKELY(--c->frag.users))
			return;
		/* Nothing of it is out: it is the pool's again. */
		pp_page_set_where_pool_(page);
		c->frag.offset = 0;
		if (c->flags & PP_POOL_F_DMA_SYNC_DEV) {
			c->frag.sync = true;
			c->frag.limit = 0;
		}
		return;
	}
	/*
	 * Or a fragment of the page whose fragments it is taking back:
	 * counted with the others, dropped from the page's count together
	 * (pp_pool_put_page_slow() does that, and recycles the page when
	 * the owner holds all that is out, as the load tells).
	 */
	if (allow_direct && page == c->frag.pend_page &&
	    (int64_t)c->frag.pend_nr + 1 !=
		    __atomic_load_n(&page->pp_ref_count, __ATOMIC_ACQUIRE)) {
		c->frag.pend_nr++;
		return;
	}
	pp_pool_put_page_slow(pool, page, dma_sync_size, allow_direct);
}

/* pp_pool_recycle_direct - the owner returns a page it used itself. */
static inline void pp_pool_recycle_direct(struct pp_pool *pool,
					  struct pp_page *page)
{
	pp_pool_put_page(pool, page, (unsigned int)-1, true);
}

/*
 * pp_pool_recycle_direct_bulk - pp_pool_recycle_direct() for @n pages or
 * fragments, where a run of one page's fragments (a burst received into
 * one block) is dropped from the page's count in one step, and the page
 * recycled at once when they were all that was out. Whole pages that
 * all fit in the cache go there in one step (one store of the count).
 * Context: owner thread only.
 */
PP_API void pp_pool_recycle_direct_bulk(struct pp_pool *pool,
					struct pp_page **pages, unsigned int n);

/*
 * pp_pool_put_pages_bulk - return @n pages from any thread: one ring
 * operation for the lot; what the ring cannot take goes to the allocator.
 * Pages whose refcount is above 1 are released from the pool as in
 * pp_pool_put_page(). @pages itself is not modified. After
 * pp_pool_destroy() every page goes straight to the allocator.
 */
PP_API void pp_pool_put_pages_bulk(struct pp_pool *pool, struct pp_page **pages,
				   unsigned int n);

/*
 * pp_pool_release_page - the page leaves the pool (XDP_PASS into the
 * stack): it is unmapped, counted as released, and becomes a plain
 * allocator page that its new owner frees with pp_put_page() or
 * pp_free_pages(). Any thread; the pool must not be touched by the caller
 * after this returns unless it holds other pages of it. On the owner
 * thread it costs no atomic operation (the count is settled with the next
 * refill); elsewhere one.
 */
PP_API void pp_pool_release_page(struct pp_pool *pool, struct pp_page *page);

/*
 * pp_pool_release_pages_bulk - pp_pool_release_page() for @n pages of
 * @pool, with one update of the pool's count for the lot (an XDP_PASS
 * burst). Any thread.
 */
PP_API void pp_pool_release_pages_bulk(struct pp_pool *pool,
				       struct pp_page **pages, unsigned int n);

/*
 * Fragments (the kernel's page_pool_alloc_frag()): a pool also hands out
 * parts of a block, cut at rising offsets, each rounded up to a cache
 * line. The caller's rules:
 *  - only the owner thread allocates fragments; whole pages and fragments
 *    may be mixed on one pool;
 *  - every fragment goes back exactly once, with pp_pool_put_page() or a
 *    bulk form, from any thread, allow_direct only on the owner; with
 *    PP_POOL_F_DMA_SYNC_DEV, @dma_sync_size -1 (the page is synced whole);
 *  - a fragment never leaves the pool (pp_pool_release_page() of a split
 *    page returns it instead) and its page's refcount is never raised.
 * How the per-page count costs no atomic in the common cases: doc/design.md,
 * "Fragments".
 */
/*
 * pp_pool_alloc_frag - a fragment of @size bytes (rounded up to a cache
 * line) at *@offset bytes into the returned page's block, which stays
 * mapped as for pp_pool_alloc_pages(); the device address is
 * page->dma_addr + *@offset. NULL when the allocator has no page, or
 * after an error message when @size is 0 or larger than a block.
 * Context: owner thread only.
 */
static inline struct pp_page *pp_pool_alloc_frag(struct pp_pool *pool,
						 unsigned int *offset,
						 unsigned int size)
{
	struct pp_pool_frag_block_ *f = &pp_pool_cache_(pool)->frag;
	/* Rounded to cache lines, in 64 bits: no size wraps it to 0. */
	uint64_t len = ((uint64_t)size + PP_CACHE_LINE - 1) &
		       ~(uint64_t)(PP_CACHE_LINE - 1);

	uint64_t room = f->block - f->offset;
	struct pp_page *page = f->page;

	/* len - 1 wraps for size 0, which the slow path reports. */
	if (PP_LIKELY(len - 1 < room && f->users < f->limit)) {
		/* The last the page's count allows, with room left for
		 * more: the slow path raises the count first. */
		if (PP_UNLIKELY(f->users + 1 == f->expect && room - len >= len))
			return pp_pool_alloc_frag_slow(pool, offset, size);
		*offset = f->offset;
		f->offset += (unsigned int)len;
		PP_POOL_STAT_INC_(f->alloc);
		/* That one used up the count: the block is closed. */
		if (++f->users == f->expect) {
			f->page = NULL;
			f->offset = f->block;
		}
		return page;
	}
	return pp_pool_alloc_frag_slow(pool, offset, size);
}

/*
 * pp_pool_alloc - a fragment when *@size is at most half a block, else a
 * whole block (*@offset 0, *@size the block size). When the fragment
 * leaves too little of its block for another of the same size, *@size is
 * grown to the end of the block, so that the caller accounts the memory
 * it really holds (the kernel's truesize). Context: owner thread only.
 */
PP_API struct pp_page *pp_pool_alloc(struct pp_pool *pool,
				     unsigned int *offset, unsigned int *size);

/* pp_page_pool - the pool a page belongs to, or NULL. */
static inline struct pp_pool *pp_page_pool(const struct pp_page *page)
{
	return page->pp;
}

/* Fills @out; readable from any thread (counters are approximate while
 * other threads run). Returns 0. */
PP_API int pp_pool_get_stats(struct pp_pool *pool, struct pp_pool_stats *out);

/* Writes the statistics as a JSON object; returns snprintf's length. */
PP_API int pp_pool_stats_json(struct pp_pool *pool, char *buf, size_t len);

/* Pages held by the pool minus released: cache + ring + in flight. */
PP_API uint64_t pp_pool_inflight(struct pp_pool *pool);

/*
 * pp_pool_check - invariant walker: cache + ring + in flight == held minus
 * released; every cached and ringed page belongs to this pool, has
 * refcount 1 and (with DMA_MAP) a mapping, and none is stored twice.
 * Returns 0, -EFAULT with a message naming the broken invariant, or
 * -ENOMEM. Owner thread, with no concurrent returners; tests only.
 */
PP_API int pp_pool_check(struct pp_pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_PAGE_POOL_H */
