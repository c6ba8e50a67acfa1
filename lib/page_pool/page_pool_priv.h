/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_pool_priv.h - the pool object, shared by page_pool.c (data path,
 * create/destroy) and page_pool_stats.c (statistics and the checker).
 */
#ifndef PP_PAGE_POOL_PRIV_H
#define PP_PAGE_POOL_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <pagepool/pp_page_pool.h>

#include "pp_recycle_ring.h"

/* Kept in page->pp_magic while a page belongs to a pool ("PPOL"); the
 * low bit says whether the page holds a DMA mapping. */
#define PP_POOL_MAGIC 0x50504f4cu
#define PP_POOL_MAGIC_MAPPED (PP_POOL_MAGIC | 1u)

/* pool->state: pages held minus released, and this bit once destroying. */
#define PP_POOL_DESTROYING (1ULL << 63)
#define PP_POOL_COUNT_MASK (PP_POOL_DESTROYING - 1)

#define PP_POOL_NAME_MAX 32

struct pp_pool {
	/* First: the inline fast path casts the pool to it. Owner only. */
	struct pp_pool_alloc_cache alloc;

	/* Construction-only parameters, read-mostly. */
	struct pp_allocator *allocator;
	/* The allocator's count of steps being given back: read once per
	 * burst of direct returns, without a call (pp_page_growth.h). */
	const unsigned int *isolating;
	struct pp_dma *dma;
	struct pp_recycle_ring *ring;
	unsigned int order;
	unsigned int max_len;
	unsigned int offset;
	unsigned int flags;    /* params.flags: alloc.flags is the owner's */
	int nid;
	enum pp_dma_dir dma_dir;
	enum pp_pool_refill refill;
	bool refill_inline;    /* array refill may take the inline path */
	uint64_t owner;        /* pool_thread_id() of the owner, 0 once
				  destroyed; relaxed atomic */
	bool owner_warned;
	char name[PP_POOL_NAME_MAX];

	/* Owner-only counters outside the inline cache struct. */
	uint64_t hold;
	uint64_t map_failed;
	/*
	 * Pages the owner released and has not yet subtracted from state:
	 * it does so with its next adoption of pages, or destroy does.
	 * Owner-only; relaxed atomic stores for pp_pool_inflight().
	 */
	uint64_t owner_released;

	/*
	 * Written by any thread that returns pages, on the rare paths only
	 * (relaxed atomics: they order nothing). Kept off the owner's lines.
	 * The common paths count nothing: pages into the ring are read off
	 * the ring's head, and pages released are hold minus state.
	 */
	struct {
		uint64_t ring_full;
		uint64_t released_refcnt;
	} xstats __attribute__((aligned(PP_CACHE_LINE)));

	/*
	 * Pages held minus pages released, plus PP_POOL_DESTROYING once
	 * destroy has drained the pool. page_pool.c explains the protocol.
	 */
	uint64_t state __attribute__((aligned(PP_CACHE_LINE)));

	/* Destroyed with pages out: on page_pool_inflight.c's list until
	 * freed. Written before destroy's last RMW of state, read by the
	 * freer after its own. */
	bool detached;
	int64_t detach_time;       /* seconds since the epoch */
	struct pp_pool *detached_next;
};

#if PP_STATS
#define POOL_XSTAT_ADD(pool, field, n) \
	__atomic_fetch_add(&(pool)->xstats.field, (n), __ATOMIC_RELAXED)
#define POOL_STAT_ADD(field, n) \
	__atomic_store_n(&(field), (field) + (n), __ATOMIC_RELAXED)
#else
#define POOL_XSTAT_ADD(pool, field, n) ((void)(n))
#define POOL_STAT_ADD(field, n) ((void)(n))
#endif

/* page_pool_frag.c: drop @nr fragments' counts of one page; true when the
 * caller held the last and now recycles the page. */
bool pool_frag_put(struct pp_pool *pool, struct pp_page *page, int64_t nr);
/* page_pool_frag.c: the owner (allow_direct) returns @nr fragments of
 * a block it no longer splits; true when they were the page's last. */
bool pool_frag_put_direct(struct pp_pool *pool, struct pp_page *page,
			  unsigned int nr);
/* page_pool_frag.c: drop the owner's gathered returns from their page's
 * count (recycling it if they were the last). */
void pool_frag_flush(struct pp_pool *pool);
/* page_pool_frag.c: destroy gives up the block being split. */
void pool_frag_drain(struct pp_pool *pool);
/* Whether the allocator is giving memory back now (pp_page_growth.h). */
static inline bool pool_isolating(const struct pp_pool *pool)
{
	return __atomic_load_n(pool->isolating, __ATOMIC_RELAXED) != 0;
}
/* pp_pool_recycle_direct_bulk() while the allocator gives memory back:
 * whole pages of the steps it is emptying go to their zone, not to the
 * cache (page_pool.c). */
void pool_recycle_isolating(struct pp_pool *pool, struct pp_page **pages,
			    unsigned int n);

/* page_pool_inflight.c: destroy found pages out: who holds them, per
 * holder the pages, bytes and the oldest one's age, in words into @buf
 * for its message; and the list of detached pools, which keeps the pool
 * until pool_free() takes it off. */
void pool_leak_report(struct pp_pool *pool, char *buf, size_t len);
void pool_detach(struct pp_pool *pool);
void pool_detached_forget(struct pp_pool *pool);

#endif /* PP_PAGE_POOL_PRIV_H */
