/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_pool.c - the recycling cache: create and destroy, the allocation
 * slow path (ring, then allocator), the recycling slow paths, release, and
 * the deferred destroy. The fast paths are inline in pp_page_pool.h.
 *
 * Behaviour follows the kernel's net/core/page_pool.c (5.13 and the later
 * fixes); the code is our own.
 *
 * Where a page can be, and who may touch it there:
 *   alloc cache  - the owner thread only (no atomics);
 *   recycle ring - any thread puts, the owner takes (pp_recycle_ring.h);
 *   in flight    - whoever the owner handed it to;
 *   allocator    - not the pool's any more (released).
 * pool->state counts pages held minus released, so it covers the first
 * three. A page is "held" from the moment it is mapped for the pool until
 * it is released (unmapped, pp fields cleared), and every release is
 * followed, as the releasing thread's last touch of the pool, by
 * subtracting it from pool->state.
 *
 * Deferred destroy and the returner race (CVE-2025-38129)
 * --------------------------------------------------------
 * The pool must be freed exactly once, by whoever drops the last count,
 * and nobody may touch it afterwards. pool->state holds the count in its
 * low 63 bits and PP_POOL_DESTROYING in the top bit:
 *
 *  1. A thread may touch the pool only while it owns part of the count:
 *     a page of the pool it holds, or released pages it has not yet
 *     subtracted. Its last access is the subtraction of everything it
 *     owns (pool_put_count()), or the push that hands its last page to
 *     the ring; the one whose subtraction leaves exactly
 *     PP_POOL_DESTROYING frees the pool. All changes to state are atomic
 *     read-modify-writes with acquire-release ordering, so every thread's
 *     accesses to the pool happen before the free.
 *  2. The count never rises once the bit is set: the owner allocates
 *     (adding held pages) only before destroy. So the transition to
 *     DESTROYING|0 happens once, and exactly one thread frees.
 *  3. The destroyer closes the recycle ring, empties the cache, drains the
 *     ring, and only then sets the bit and drops the drained pages in one
 *     RMW. Until that RMW the bit is clear, so nobody frees; the drained
 *     pages, still counted, keep the count above zero. If nothing was in
 *     flight the destroyer's RMW leaves DESTROYING|0 and it frees the pool
 *     itself and returns 0; otherwise it warns and returns -EBUSY.
 *  4. A page pushed into the ring after the destroyer drained it would be
 *     stranded (the pool never freed, the page never returned). The ring's
 *     close prevents that: it is an RMW of the ring's head, and a push
 *     reserves its slots with a compare-and-swap of the same word. Either
 *     the reservation comes first in head's modification order, and then
 *     it lies below the closed head and the drain waits until the page is
 *     written and takes it; or the close comes first, the compare-and-swap
 *     fails and the returner sees the ring closed. Such a returner keeps
 *     its pages and gives them to the allocator itself (point 1). A
 *     returner whose last page went into the ring stops touching the pool
 *     at the push: the drain that takes the page waits for the push's last
 *     store, which is therefore before any free.
 *  5. The owner's puts after destroy find the ring closed too: destroy
 *     sets PP_POOL_F_NO_DIRECT_ first, which turns the inline direct path
 *     off, and the slow path's push fails.
 *  6. The owner's own releases (pp_pool_release_page() on the thread that
 *     allocates, the XDP_PASS case) are not subtracted one by one: they
 *     accumulate in pool->owner_released, which the owner subtracts with
 *     its next adoption of pages (one RMW that adds the new pages and
 *     drops the released ones) and destroy subtracts with its own RMW.
 *     Holding them back only keeps the count higher than the truth before
 *     destroy, when nobody frees; destroy, run by the owner or after it,
 *     takes the rest and clears pool->owner so that the owner's later
 *     releases subtract like anyone's. The owner is told by a per-thread
 *     number that is never reused, not by pthread_self(), which a thread
 *     started later may inherit from a finished one.
 * The cost of a ring return is therefore the one compare-and-swap of the
 * push: no guard, no re-check, no final drop (an earlier version took a
 * guard on state around each push and paid three more RMWs of one line),
 * and its recycle_ring statistic is read off the ring's head instead of
 * being counted. The owner takes the pages back with no RMW at all.
 *
 * Every atomic read-modify-write left, and what it is for:
 *   ring head CAS (pp_recycle_ring_push)   one per ring return, single or
 *       bulk: reserves slots against other returners, and orders the
 *       return against destroy's close (point 4);
 *   ring head fetch_or (pp_recycle_ring_close)   once, in destroy;
 *   state add in pages_adopt()   once per refill from the allocator (64
 *       pages): counts the new pages, drops the owner's held-back
 *       releases (point 6);
 *   state sub in pool_put_count()   one per call that releases pages off
 *       the owner thread (a bulk call pays one for all), or whose pages
 *       the ring refused: its result says who frees (point 1);
 *   state add in pp_pool_destroy()   once: sets the bit (point 3);
 *   xstats adds   the rare paths only (ring full, page still referenced);
 *   page->pp_ref_count sub (page_pool_frag.c)   one per fragment returned
 *       while others of its page are out (one per run of a page's
 *       fragments in a bulk return; none for the owner's own return of a
 *       fragment of the block it is splitting), and one when the owner
 *       moves on from a block whose fragments are not all back: the
 *       kernel's pp_ref_count, which orders every holder's use before the
 *       reuse.
 * The rest are plain loads and stores that are atomic only so that other
 * threads may read them (the owner's counters and c->count), or that order
 * (the ring's seq acquire loads and release stores, plain moves on x86).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "pp_opts.h"
#include "pp_os_fault.h"
#include "pp_unregister.h"
#include "pp_page_growth.h"
#include "page_pool_priv.h"

/* The kernel caps its ptr_ring at 32768 entries; so do we. */
#define POOL_RING_DEFAULT 1024
#define POOL_RING_MAX 32768

/* ---- the owner thread ---- */

/* This thread's number, 0 until first asked; see point 6 above. */
static __thread uint64_t this_thread_id
	__attribute__((tls_model("initial-exec")));
static uint64_t last_thread_id;

static uint64_t pool_thread_id(void)
{
	if (PP_UNLIKELY(!this_thread_id))
		this_thread_id = __atomic_add_fetch(&last_thread_id, 1,
						    __ATOMIC_RELAXED);
	return this_thread_id;
}

static bool on_owner_thread(struct pp_pool *pool)
{
	return __atomic_load_n(&pool->owner, __ATOMIC_RELAXED) ==
	       pool_thread_id();
}

/* ---- page ownership ---- */

/* Make a new page the pool's: map it and stamp it. False if mapping failed. */
static bool page_adopt(struct pp_pool *pool, struct pp_page *page)
{
	uint64_t iova;

	if (pool->flags & PP_POOL_F_DMA_MAP) {
		if (pp_dma_map_page(pool->dma, pp_page_address(page),
				    pool->order, pool->dma_dir, &iova))
			return false;
		page->dma_addr = iova;
		page->pp_magic = PP_POOL_MAGIC_MAPPED;
		/* A fresh page may hold CPU writes: give the device a clean
		 * view, as the kernel does in page_pool_dma_map(). */
		if (pool->flags & PP_POOL_F_DMA_SYNC_DEV)
			pp_dma_sync_for_device(pool->dma, iova + pool->offset,
					       pool->max_len, pool->dma_dir);
	} else {
		page->dma_addr = 0;
		page->pp_magic = PP_POOL_MAGIC;
	}
	/* Relaxed store: the in-flight walk reads it from other threads. */
	__atomic_store_n(&page->pp, pool, __ATOMIC_RELAXED);
	/* A whole page (pp_page_pool.h, "Fragments"); prev held garbage. */
	__atomic_store_n(&page->pp_ref_count, 1, __ATOMIC_RELAXED);
	pp_page_set_where(page, PP_HOLDER_POOL_CODE_);
	return true;
}

/*
 * Adopt @n pages fresh from the allocator, in place: the ones that could not
 * be mapped go back to the allocator and are dropped from @pages. Returns
 * how many are left, which are now counted as held. Owner only.
 */
static unsigned int pages_adopt(struct pp_pool *pool, struct pp_page **pages,
				unsigned int n)
{
	unsigned int i, kept = 0;

	for (i = 0; i < n; i++) {
		if (PP_LIKELY(page_adopt(pool, pages[i]))) {
			pages[kept++] = pages[i];
			continue;
		}
		pp_free_pages(pool->allocator, pages[i], pool->order);
	}
	if (PP_UNLIKELY(kept < n))
		POOL_STAT_ADD(pool->map_failed, n - kept);
	if (kept) {
		/*
		 * Only the owner touches its held-back releases: a thread
		 * that allocates without having been made the owner (a
		 * misuse the debug build reports) leaves them to destroy.
		 */
		uint64_t released = on_owner_thread(pool) ?
				    pool->owner_released : 0;

		POOL_STAT_ADD(pool->hold, kept);
		/*
		 * Add the new pages and drop the owner's held-back releases
		 * (point 6) in one RMW: the count stays above zero, as the
		 * new pages are in it. Relaxed: these pages reach other
		 * threads only through later synchronisation of the caller's
		 * own (a ring, a queue), which orders this add before their
		 * subtraction, and nobody frees the pool before destroy.
		 */
		__atomic_fetch_add(&pool->state, kept - released,
				   __ATOMIC_RELAXED);
		if (released)
			__atomic_store_n(&pool->owner_released, 0,
					 __ATOMIC_RELAXED);
	}
	return kept;
}

/* The page leaves the pool: unmap it and clear the pool's fields. */
static void page_release(struct pp_pool *pool, struct pp_page *page)
{
	if (page->pp_magic == PP_POOL_MAGIC_MAPPED)
		pp_dma_unmap_page(pool->dma, page->dma_addr, pool->order,
				  pool->dma_dir);
	__atomic_store_n(&page->pp, NULL, __ATOMIC_RELAXED);
	page->pp_magic = 0;
	page->dma_addr = 0;
	pp_page_set_where(page, 0);
}

/*
 * Release @n pages and give them to the allocator. The caller subtracts
 * them from pool->state afterwards (pool_put_count()).
 */
static void pages_return(struct pp_pool *pool, struct pp_page **pages,
			 unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		page_release(pool, pages[i]);
		pp_free_pages(pool->allocator, pages[i], pool->order);
	}
}

static void pool_free(struct pp_pool *pool)
{
	PP_DEBUG_LOG("pool %s: freed", pool->name);
	if (pool->detached)
		pool_detached_forget(pool);
	pp_recycle_ring_free(pool->ring);
	free(pool);
}

/*
 * Drop @n counts (released pages). The caller's last access to
 * @pool: the one that leaves exactly PP_POOL_DESTROYING frees it.
 * Acquire-release: every subtraction is an RMW, so they form one release
 * sequence; the freer's acquire makes all earlier users' accesses happen
 * before the free, and each user's release puts its own accesses first.
 */
static void pool_put_count(struct pp_pool *pool, uint64_t n)
{
	if (__atomic_sub_fetch(&pool->state, n, __ATOMIC_ACQ_REL) ==
	    PP_POOL_DESTROYING)
		pool_free(pool);
}

/*
 * Pages released from the pool because their memory is wanted elsewhere
 * (another node's, or a step the allocator is giving back): straight to
 * their zone, counted as waived, and dropped from the pool's count.
 */
static void pages_give_back(struct pp_pool *pool, struct pp_page **pages,
			    unsigned int n)
{
	if (!n)
		return;
	pp_free_pages_to_zone(pool->allocator, pages, n, pool->order);
	POOL_STAT_ADD(pool->alloc.alloc_stats.waive, n);
	/* Before destroy: cannot reach DESTROYING|0. */
	pool_put_count(pool, n);
}

/* After the close, empty the ring to the allocator; returns how many pages
 * came out. The destroyer subtracts them. */
static uint64_t ring_drain(struct pp_pool *pool)
{
	struct pp_page *pages[PP_POOL_CACHE_REFILL];
	uint64_t total = 0;
	unsigned int n;

	while ((n = pp_recycle_ring_drain(pool->ring, (void **)pages,
					  PP_POOL_CACHE_REFILL))) {
		pages_return(pool, pages, n);
		total += n;
	}
	return total;
}

/* ---- returning pages through the ring (any thread) ---- */

/*
 * Push @n pages into the ring; those it cannot take (full, or closed by
 * destroy) are released to the allocator here. Returns the count the
 * caller must subtract from state: when it is 0 every page went in and the
 * caller must not touch the pool again (point 1 of the protocol above).
 */
static unsigned int ring_return_pages(struct pp_pool *pool,
				      struct pp_page **pages, unsigned int n)
{
	bool closed = false;
	unsigned int done, i;

	/* Before the push: once in, the owner may hand a page out. */
	for (i = 0; i < n; i++)
		pp_page_set_where_pool_(pages[i]);
	done = pp_recycle_ring_push(pool->ring, (void *const *)pages, n,
				    &closed);
	if (PP_LIKELY(done == n))
		return 0;
	/* We still hold pages + done..n, so the pool is alive. */
	if (!closed)
		POOL_XSTAT_ADD(pool, ring_full, n - done);
	pages_return(pool, pages + done, n - done);
	return n - done;
}

static inline void sync_for_device(struct pp_pool *pool, struct pp_page *page,
				   unsigned int dma_sync_size)
{
	unsigned int len = dma_sync_size < pool->max_len ? dma_sync_size :
							   pool->max_len;

	pp_dma_sync_for_device(pool->dma, page->dma_addr + pool->offset, len,
			       pool->dma_dir);
}

static bool page_is_foreign(struct pp_pool *pool, struct pp_page *page)
{
#if PP_DEBUG >= 1
	if (PP_UNLIKELY(page->pp != pool ||
			(page->pp_magic & ~1u) != PP_POOL_MAGIC)) {
		PP_ERR("pool %s: page %p returned to a pool it does not belong to (pool %p): ignored; return pages to pp_page_pool(page)",
		       pool->name, pp_page_address(page), (void *)page->pp);
		return true;
	}
#else
	(void)pool;
	(void)page;
#endif
	return false;
}

/* ---- the put slow path ---- */

/*
 * Someone else still holds a reference: the page leaves the pool (the
 * kernel's released_refcnt), and the caller's reference is dropped. The
 * last holder frees it to the allocator as a plain page.
 */
static void put_shared_page(struct pp_pool *pool, struct pp_page *page)
{
	struct pp_allocator *alloc = pool->allocator;

	page_release(pool, page);
	POOL_XSTAT_ADD(pool, released_refcnt, 1);
	pool_put_count(pool, 1);
	/* The pool may be gone now; the page is the allocator's. */
	pp_put_page(alloc, page);
}

void pp_pool_put_page_slow(struct pp_pool *pool, struct pp_page *page,
			   unsigned int dma_sync_size, bool allow_direct)
{
	struct pp_pool_alloc_cache *c = &pool->alloc;
	unsigned int dropped;

	if (page_is_foreign(pool, page))
		return;
	/* A fragment: only the last one's return goes on (the kernel's
	 * page_pool_put_page() does the same, through pp_ref_count). */
	if (PP_UNLIKELY(__atomic_load_n(&page->pp_ref_count,
					__ATOMIC_ACQUIRE) != 1)) {
		/* The owner gathers its returns (page_pool_frag.c). */
		bool direct = allow_direct && !(c->flags & PP_POOL_F_NO_DIRECT_);

		if (direct && page == c->frag.page) {
			pp_pool_put_page(pool, page, dma_sync_size, true);
			return;
		}
		if (!(direct ? pool_frag_put_direct(pool, page, 1) :
			       pool_frag_put(pool, page, 1)))
			return;
		dma_sync_size = (unsigned int)-1;
	}
	if (PP_UNLIKELY(pp_page_ref_count(page) != 1)) {
		put_shared_page(pool, page);
		return;
	}
	if (pool->flags & PP_POOL_F_DMA_SYNC_DEV)
		sync_for_device(pool, page, dma_sync_size);

	/* c->flags is read only by the owner, which alone passes true. */
	if (allow_direct && !(c->flags & PP_POOL_F_NO_DIRECT_)) {
		unsigned int n = c->count;

		if (PP_LIKELY(n < PP_POOL_CACHE_SIZE)) {
			POOL_STAT_ADD(c->recycle_cached, 1);
			pp_page_set_where_pool_(page);
			c->cache[n] = page;
			__atomic_store_n(&c->count, n + 1, __ATOMIC_RELAXED);
			return;
		}
		POOL_STAT_ADD(c->recycle_cache_full, 1);
	}
	dropped = ring_return_pages(pool, &page, 1);
	if (PP_UNLIKELY(dropped))
		pool_put_count(pool, dropped);
}

void pp_pool_put_pages_bulk(struct pp_pool *pool, struct pp_page **pages,
			    unsigned int n)
{
	struct pp_page *chunk[PP_POOL_CACHE_REFILL];
	struct pp_allocator *alloc = pool->allocator;
	unsigned int i, k, shared = 0;
	uint64_t drop = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		if (page_is_foreign(pool, pages[i]) ||
		    pp_page_ref_count(pages[i]) != 1 ||
		    __atomic_load_n(&pages[i]->pp_ref_count,
				    __ATOMIC_ACQUIRE) != 1)
			shared++;
	}

	if (PP_LIKELY(!shared)) {
		/* The common case: one ring operation for the lot. */
		if (pool->flags & PP_POOL_F_DMA_SYNC_DEV)
			for (i = 0; i < n; i++)
				sync_for_device(pool, pages[i],
						(unsigned int)-1);
		drop = ring_return_pages(pool, pages, n);
		if (PP_UNLIKELY(drop))
			pool_put_count(pool, drop);
		return;
	}
	/*
	 * Some pages are shared, fragments or foreign: drop the fragments
	 * that are not their page's last, release the shared pages, and
	 * push the others in chunks without writing to the caller's array.
	 * The released pages are subtracted only at the end, so that their
	 * counts keep the pool alive across the pushes (point 1).
	 */
	for (i = 0, k = 0; i < n; i++) {
		struct pp_page *page = pages[i];

		if (PP_UNLIKELY(page->pp != pool))
			continue; /* foreign: reported above */
		if (__atomic_load_n(&page->pp_ref_count, __ATOMIC_ACQUIRE) !=
		    1) {
			/*
			 * Fragments of one page side by side (a burst
			 * received into one block) drop the count together:
			 * one atomic for the run, none when it was the last.
			 */
			unsigned int run = 1;

			while (i + run < n && pages[i + run] == page)
				run++;
			i += run - 1;
			/* Not the last fragments: nothing more to do. */
			if (!pool_frag_put(pool, page, run))
				continue;
		}
		if (pp_page_ref_count(page) != 1) {
			page_release(pool, page);
			POOL_XSTAT_ADD(pool, released_refcnt, 1);
			drop++;
			pp_put_page(alloc, page);
			continue;
		}
		if (pool->flags & PP_POOL_F_DMA_SYNC_DEV)
			sync_for_device(pool, page, (unsigned int)-1);
		chunk[k++] = page;
		if (k == PP_POOL_CACHE_REFILL) {
			drop += ring_return_pages(pool, chunk, k);
			k = 0;
		}
	}
	if (k)
		drop += ring_return_pages(pool, chunk, k);
	if (drop)
		pool_put_count(pool, drop);
}

/*
 * A fragment cannot leave the pool: its page is shared with the other
 * fragments. Say so, and return the fragment instead, which loses nothing
 * (the caller's other pages keep the pool alive).
 */
static __attribute__((cold, noinline)) void
split_page_released(struct pp_pool *pool, struct pp_page *page)
{
	PP_ERR("pool %s: page %p is split into fragments and cannot leave the pool: returned the fragment instead; use pp_pool_put_page() for fragments",
	       pool->name, pp_page_address(page));
	pp_pool_put_page_slow(pool, page, (unsigned int)-1, false);
}

/* Both release calls, inlined into each: the single one is the XDP_PASS
 * per-page path, where a call more shows. */
static inline void release_pages(struct pp_pool *pool, struct pp_page **pages,
				 unsigned int n)
{
	unsigned int i, released = 0;

	for (i = 0; i < n; i++) {
		if (page_is_foreign(pool, pages[i]))
			continue;
		/* Relaxed: a misuse check, it orders nothing. */
		if (PP_UNLIKELY(__atomic_load_n(&pages[i]->pp_ref_count,
						__ATOMIC_RELAXED) != 1)) {
			split_page_released(pool, pages[i]);
			continue;
		}
		page_release(pool, pages[i]);
		released++;
	}
	if (!released)
		return;
	/* The owner's are subtracted later, with its next refill (point 6). */
	if (on_owner_thread(pool)) {
		__atomic_store_n(&pool->owner_released,
				 pool->owner_released + released,
				 __ATOMIC_RELAXED);
		return;
	}
	/* The release statistic is hold minus the count: no RMW of its own. */
	pool_put_count(pool, released);
}

void pp_pool_release_page(struct pp_pool *pool, struct pp_page *page)
{
	release_pages(pool, &page, 1);
}

void pp_pool_release_pages_bulk(struct pp_pool *pool, struct pp_page **pages,
				unsigned int n)
{
	release_pages(pool, pages, n);
}

/* ---- the allocation slow path (owner only) ---- */

static void check_owner(struct pp_pool *pool)
{
#if PP_DEBUG >= 1
	if (PP_UNLIKELY(!on_owner_thread(pool) && !pool->owner_warned)) {
		pool->owner_warned = true;
		PP_ERR("pool %s: allocation from a thread that is not the pool's owner: call pp_pool_set_owner() from the allocating thread",
		       pool->name);
	}
#else
	(void)pool;
#endif
}

/*
 * Whether a pool should give @page back rather than reuse it: it is from
 * another node than the pool's (the kernel's rule, so that a pool drifts
 * back to local memory), or from memory its allocator is giving back to
 * the kernel (doc/growth.md).
 */
static bool page_waived(struct pp_pool *pool, struct pp_page *page,
			bool isolating)
{
	if (pool->nid != PP_NUMA_NODE_ANY &&
	    pp_page_to_nid(pool->allocator, page) != pool->nid)
		return true;
	return isolating && pp_page_in_isolating_slot(pool->allocator, page);
}

/*
 * Keep the pages of @pages[0..n) the pool may reuse, in order, and give
 * the others back. Returns how many are kept.
 */
static unsigned int waive_pages(struct pp_pool *pool, struct pp_page **pages,
				unsigned int n)
{
	bool isolating = pool_isolating(pool);
	struct pp_page *waived[PP_POOL_CACHE_REFILL];
	unsigned int i, kept = 0, k = 0;

	if (pool->nid == PP_NUMA_NODE_ANY && PP_LIKELY(!isolating))
		return n;
	for (i = 0; i < n; i++) {
		struct pp_page *page = pages[i];

		if (PP_LIKELY(!page_waived(pool, page, isolating))) {
			pages[kept++] = page;
			continue;
		}
		page_release(pool, page);
		waived[k++] = page;
		if (k == PP_POOL_CACHE_REFILL) {
			pages_give_back(pool, waived, k);
			k = 0;
		}
	}
	pages_give_back(pool, waived, k);
	return kept;
}

/*
 * Refill the empty cache from the ring, up to 64 pages in one burst,
 * without the pages the pool should give back (waive_pages()).
 */
static struct pp_page *refill_from_ring(struct pp_pool *pool)
{
	struct pp_pool_alloc_cache *c = &pool->alloc;
	unsigned int n, kept;

	n = pp_recycle_ring_pop(pool->ring, (void **)c->cache,
				PP_POOL_CACHE_REFILL);
	if (!n) {
		POOL_STAT_ADD(c->alloc_stats.empty, 1);
		return NULL;
	}
	kept = waive_pages(pool, c->cache, n);
	if (!kept)
		return NULL;
	POOL_STAT_ADD(c->alloc_stats.refill, 1);
	__atomic_store_n(&c->count, kept - 1, __ATOMIC_RELAXED);
	return c->cache[kept - 1];
}

void pool_recycle_isolating(struct pp_pool *pool, struct pp_page **pages,
			    unsigned int n)
{
	struct pp_page *given[PP_POOL_CACHE_REFILL];
	unsigned int i, k = 0;

	for (i = 0; i < n; i++) {
		struct pp_page *page = pages[i];

		/* Whole pages of this pool only; the rest as always. */
		if (page->pp != pool || !pp_pool_page_sole_(page) ||
		    !pp_page_in_isolating_slot(pool->allocator, page)) {
			pp_pool_recycle_direct(pool, page);
			continue;
		}
		page_release(pool, page);
		given[k++] = page;
		if (k == PP_POOL_CACHE_REFILL) {
			pages_give_back(pool, given, k);
			k = 0;
		}
	}
	pages_give_back(pool, given, k);
}

unsigned int pp_pool_trim(struct pp_pool *pool)
{
	struct pp_pool_alloc_cache *c = &pool->alloc;
	struct pp_page *pages[PP_POOL_CACHE_REFILL];
	unsigned int n, kept, back, rounds, given;

	if (PP_LIKELY(!pool_isolating(pool)))
		return 0;
	check_owner(pool);
	kept = waive_pages(pool, c->cache, c->count);
	given = c->count - kept;
	__atomic_store_n(&c->count, kept, __ATOMIC_RELAXED);
	/* Each page of the ring once: what is kept goes in at the tail. */
	rounds = pp_recycle_ring_count(pool->ring) / PP_POOL_CACHE_REFILL + 1;
	while (rounds-- &&
	       (n = pp_recycle_ring_pop(pool->ring, (void **)pages,
					PP_POOL_CACHE_REFILL))) {
		kept = waive_pages(pool, pages, n);
		given += n - kept;
		if (!kept)
			continue;
		back = ring_return_pages(pool, pages, kept);
		if (back)
			pool_put_count(pool, back);
	}
	return given;
}

/* Refill the empty cache from the allocator, the way params.refill says. */
static struct pp_page *refill_from_allocator(struct pp_pool *pool)
{
	struct pp_pool_alloc_cache *c = &pool->alloc;
	struct pp_page_list list;
	struct pp_page *page;
	unsigned int i, n = 0;

	switch (pool->refill) {
	case PP_REFILL_ARRAY:
		/*
		 * The thread cache's inline path first, as a caller of
		 * pp_alloc_pages_bulk_array() gets it: the cache is scratch
		 * space, so it need not be cleared for it.
		 */
		if (PP_LIKELY(pool->refill_inline)) {
			n = (unsigned int)pp_tcache_take_(
				pool->allocator, PP_POOL_CACHE_REFILL,
				c->cache);
			if (PP_LIKELY(n))
				break;
		}
		/* The array form fills only NULL entries. */
		memset(c->cache, 0, PP_POOL_CACHE_REFILL * sizeof(c->cache[0]));
		n = (unsigned int)pp_alloc_pages_bulk(
			pool->allocator, pool->nid, PP_NODEMASK_PREFERRED_ONLY,
			PP_POOL_CACHE_REFILL, NULL, c->cache);
		/* All populated: nothing to close up (the usual case). */
		if (PP_LIKELY(n == PP_POOL_CACHE_REFILL))
			break;
		for (i = 0, n = 0; i < PP_POOL_CACHE_REFILL; i++)
			if (c->cache[i])
				c->cache[n++] = c->cache[i];
		break;
	case PP_REFILL_LIST:
		pp_page_list_init(&list);
		pp_alloc_pages_bulk(pool->allocator, pool->nid,
				    PP_NODEMASK_PREFERRED_ONLY,
				    PP_POOL_CACHE_REFILL, &list, NULL);
		while (n < PP_POOL_CACHE_REFILL &&
		       (page = pp_page_list_pop(&list)))
			c->cache[n++] = page;
		break;
	case PP_REFILL_SINGLE:
		page = pp_alloc_pages(pool->allocator, pool->nid, 0);
		if (page)
			c->cache[n++] = page;
		break;
	}
	n = pages_adopt(pool, c->cache, n);
	if (!n)
		return NULL;
	POOL_STAT_ADD(c->alloc_stats.slow, 1);
	__atomic_store_n(&c->count, n - 1, __ATOMIC_RELAXED);
	return c->cache[n - 1];
}

/* Order > 0: one block per call, handed out directly (the kernel's
 * __page_pool_alloc_page_order()). */
static struct pp_page *alloc_high_order(struct pp_pool *pool)
{
	struct pp_page *page;

	page = pp_alloc_pages(pool->allocator, pool->nid, pool->order);
	if (!page || !pages_adopt(pool, &page, 1))
		return NULL;
	POOL_STAT_ADD(pool->alloc.alloc_stats.slow_high_order, 1);
	return page;
}

struct pp_page *pp_pool_alloc_pages_slow(struct pp_pool *pool)
{
	struct pp_page *page;

	check_owner(pool);
	/* The owner's gathered fragment returns may hold a page. */
	pool_frag_flush(pool);
	if (pool->alloc.count)
		return pp_pool_alloc_pages(pool);
	page = refill_from_ring(pool);
	if (page)
		return page;
	if (pool->order)
		return alloc_high_order(pool);
	return refill_from_allocator(pool);
}



/* ---- create, destroy, owner ---- */

/*
 * Whether the allocator's inline bulk path serves this pool's refills:
 * it serves one zone, so the pool must take any node's pages or that
 * zone's (anything else is the library's to refuse or place).
 */
static bool refill_inline_ok(struct pp_allocator *alloc, int nid)
{
	struct pp_zone_stats z;

	if (nid == PP_NUMA_NODE_ANY)
		return true;
	return pp_allocator_zone_count(alloc) == 1 &&
	       !pp_allocator_zone_stats(alloc, 0, &z) && z.node == nid;
}

static int params_check(const struct pp_pool_params *p)
{
	size_t block;

	if (pp_opts_valid(p, sizeof(*p), sizeof(*p), "struct pp_pool_params"))
		return -EINVAL;
	if (!p->allocator) {
		PP_ERR("page_pool: params.allocator is NULL: create the pool over a pp_allocator");
		return -EINVAL;
	}
	if (p->flags & ~(unsigned int)(PP_POOL_F_DMA_MAP |
				       PP_POOL_F_DMA_SYNC_DEV)) {
		PP_ERR("page_pool: params.flags 0x%x has unknown bits: use PP_POOL_F_DMA_MAP and PP_POOL_F_DMA_SYNC_DEV only",
		       p->flags);
		return -EINVAL;
	}
	if ((p->flags & PP_POOL_F_DMA_MAP) && !p->dma) {
		PP_ERR("page_pool: params.dma is NULL with PP_POOL_F_DMA_MAP: pass a pp_dma with the arena mapped");
		return -EINVAL;
	}
	if ((p->flags & PP_POOL_F_DMA_SYNC_DEV) &&
	    !(p->flags & PP_POOL_F_DMA_MAP)) {
		PP_ERR("page_pool: params.flags has PP_POOL_F_DMA_SYNC_DEV without PP_POOL_F_DMA_MAP: nothing to sync");
		return -EINVAL;
	}
	if (p->dma_dir != PP_DMA_BIDIRECTIONAL &&
	    p->dma_dir != PP_DMA_FROM_DEVICE) {
		/* RX buffers are written by the device (the kernel's rule);
		 * XDP_TX needs bidirectional. */
		PP_ERR("page_pool: params.dma_dir %d: use PP_DMA_FROM_DEVICE or PP_DMA_BIDIRECTIONAL",
		       (int)p->dma_dir);
		return -EINVAL;
	}
	if (p->order > pp_allocator_max_order(p->allocator)) {
		PP_ERR("page_pool: params.order %u is above the allocator's largest order %u: use a smaller order or bigger arena pages",
		       p->order, pp_allocator_max_order(p->allocator));
		return -EINVAL;
	}
	if (p->pool_size > POOL_RING_MAX) {
		PP_ERR("page_pool: params.pool_size %u is above %u: use a smaller recycle ring",
		       p->pool_size, POOL_RING_MAX);
		return -EINVAL;
	}
	if (p->nid < PP_NUMA_NODE_ANY) {
		PP_ERR("page_pool: params.nid %d: use PP_NUMA_NODE_ANY or a node number",
		       p->nid);
		return -EINVAL;
	}
	block = PP_PAGE_SIZE << p->order;
	if (p->offset >= block || p->max_len > block - p->offset) {
		PP_ERR("page_pool: params.offset %u + params.max_len %u exceed the %zu-byte block: shrink them",
		       p->offset, p->max_len, block);
		return -EINVAL;
	}
	if (p->refill != PP_REFILL_ARRAY && p->refill != PP_REFILL_LIST &&
	    p->refill != PP_REFILL_SINGLE) {
		PP_ERR("page_pool: params.refill %d: use PP_REFILL_ARRAY, PP_REFILL_LIST or PP_REFILL_SINGLE",
		       (int)p->refill);
		return -EINVAL;
	}
	return 0;
}

static unsigned int roundup_pow2(unsigned int v)
{
	unsigned int r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

struct pp_pool *pp_pool_create(const struct pp_pool_params *params)
{
	unsigned int ring_size;
	struct pp_pool *pool;
	size_t bytes;
	int err;

	err = params_check(params);
	if (err) {
		errno = -err;
		return NULL;
	}
	bytes = (sizeof(*pool) + PP_CACHE_LINE - 1) &
		~(size_t)(PP_CACHE_LINE - 1);
	pool = pp_os_aligned_alloc(PP_CACHE_LINE, bytes);
	if (!pool) {
		PP_ERR("pp_pool_create: %s: out of memory for the pool (%zu bytes)",
		       params->name ? params->name : "pool", bytes);
		errno = ENOMEM;
		return NULL;
	}
	memset(pool, 0, sizeof(*pool));
	/* At least 2 slots: the ring's sequence numbers need two. */
	ring_size = params->pool_size ? params->pool_size : POOL_RING_DEFAULT;
	pool->ring = pp_recycle_ring_create(roundup_pow2(ring_size < 2 ? 2 :
							 ring_size));
	if (!pool->ring) {
		err = errno;
		PP_ERR("pp_pool_create: %s: no recycle ring (%s)",
		       params->name ? params->name : "pool", strerror(err));
		goto err_free_pool;
	}
	pool->alloc.flags = params->flags;
	/* No block being split: no fragment fits until one is. */
	pool->alloc.frag.block = (unsigned int)(PP_PAGE_SIZE << params->order);
	pool->alloc.frag.offset = pool->alloc.frag.block;
	pool->flags = params->flags;
	pool->allocator = params->allocator;
	pool->isolating = pp_allocator_isolating_word(params->allocator);
	pool->dma = params->dma;
	pool->order = params->order;
	pool->offset = params->offset;
	pool->max_len = params->max_len ? params->max_len :
		(unsigned int)((PP_PAGE_SIZE << params->order) -
			       params->offset);
	pool->nid = params->nid;
	pool->refill_inline = refill_inline_ok(params->allocator, params->nid);
	pool->dma_dir = params->dma_dir;
	pool->refill = params->refill;
	pool->owner = pool_thread_id();
	snprintf(pool->name, sizeof(pool->name), "%s",
		 params->name ? params->name : "page_pool");
	return pool;

err_free_pool:
	free(pool);
	errno = err;
	return NULL;
}

int pp_pool_destroy(struct pp_pool *pool)
{
	struct pp_pool_alloc_cache *c;
	char name[PP_POOL_NAME_MAX], held[1024];
	uint64_t released, v, out;

	if (!pool)
		return 0;
	/* Out of telemetry's registry first: it reads the pool's counters,
	 * and a returner may free the pool once the count drops below. */
	pp_unregister_obj(pool);
	c = &pool->alloc;
	/* The block being split: unused, it joins the cache; else its
	 * fragments are in flight like pages. */
	pool_frag_drain(pool);
	/* Point 5: the owner's own puts stop using the cache. */
	c->flags |= PP_POOL_F_NO_DIRECT_;
	/* Point 4: from here on returners keep their pages. */
	pp_recycle_ring_close(pool->ring);

	/* Point 6: the owner's held-back releases are ours to drop, and
	 * its later ones subtract like anyone's. */
	__atomic_store_n(&pool->owner, 0, __ATOMIC_RELAXED);
	released = pool->owner_released;
	__atomic_store_n(&pool->owner_released, 0, __ATOMIC_RELAXED);

	released += c->count;
	pages_return(pool, c->cache, c->count);
	__atomic_store_n(&c->count, 0, __ATOMIC_RELAXED);
	released += ring_drain(pool);

	/*
	 * Pages still out (the count only falls now): say who holds them
	 * while the pool is surely alive, and list it for telemetry.
	 */
	out = (__atomic_load_n(&pool->state, __ATOMIC_ACQUIRE) &
	       PP_POOL_COUNT_MASK) - released;
	if (out) {
		memcpy(name, pool->name, sizeof(name));
		pool_leak_report(pool, held, sizeof(held));
		pool_detach(pool);
	}
	/*
	 * Point 3: set the bit (it was clear, so adding sets it) and drop
	 * what we released in one RMW; the count is at least @released, so
	 * the sum does not borrow from the bit.
	 */
	v = __atomic_add_fetch(&pool->state, PP_POOL_DESTROYING - released,
			       __ATOMIC_ACQ_REL);
	if (v == PP_POOL_DESTROYING) {
		pool_free(pool);
		return 0;
	}
	PP_WARN("pool %s: destroy deferred, %llu pages in flight; the pool is freed when the last one is returned; held by: %s",
		name, (unsigned long long)(v & PP_POOL_COUNT_MASK), held);
	return -EBUSY;
}

void pp_pool_set_owner(struct pp_pool *pool)
{
	__atomic_store_n(&pool->owner, pool_thread_id(), __ATOMIC_RELAXED);
	pool->owner_warned = false;
}
