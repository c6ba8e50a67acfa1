/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_pool_inflight.h - where a pool's pages are (pp_where.h), counted by
 * walking the allocator's descriptors: for lib/telemetry's
 * /pagepool/inflight and the leak report of pp_pool_destroy().
 *
 * The walk reads each page's pool and holder word with relaxed loads while
 * the data path runs: it stops nobody, and its counts are as exact as a
 * snapshot of moving pages can be. Pages out of the pool that still read
 * "pool" (taken by a caller that records no holder) are counted as "app":
 * those that read "pool" minus the cache's and ring's count.
 */
#ifndef PP_INTERNAL_POOL_INFLIGHT_H
#define PP_INTERNAL_POOL_INFLIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include <pagepool/pp_where.h>

struct pp_page;
struct pp_pool;

/* Age buckets: under 1 ms, 1 s, 1 min, older, and no time recorded. */
enum pp_inflight_age {
	PP_AGE_UNDER_1MS,
	PP_AGE_UNDER_1S,
	PP_AGE_UNDER_1MIN,
	PP_AGE_OLDER,
	PP_AGE_UNKNOWN,
	PP_AGE_NR
};

/* Distinct holders a report keeps; more are counted in the last. */
#define PP_INFLIGHT_HOLDERS 32

struct pp_inflight_holder {
	uint32_t code;          /* PP_HOLDER(): kind, port, queue */
	uint64_t pages;
	bool aged;              /* at least one page had a time */
	double oldest_s;        /* the oldest such page's age */
};

struct pp_inflight {
	uint64_t pages;          /* in flight: held minus cache and ring */
	uint64_t in_pool;        /* in the cache and the ring */
	uint64_t block_bytes;    /* bytes of one of the pool's blocks */
	uint64_t age[PP_AGE_NR];
	unsigned int nr_holders;
	struct pp_inflight_holder holder[PP_INFLIGHT_HOLDERS];
	/* The oldest page with a time: its holder and age. */
	bool have_oldest;
	uint32_t oldest_code;
	double oldest_s;
	/* The walk's own. */
	uint64_t pool_marked;    /* pages that read "pool" */
	uint32_t now;
	double hz;
};

/*
 * Walk @pool's pages into @out (zeroed first): a page in a driver's ring
 * that keeps no stamps (pp_holders.h) counts under that ring, any other
 * by its word. Any thread, while the pool is alive (registered, or
 * detached with pages out); not under the port table's lock.
 */
void pp_pool_inflight_walk(struct pp_pool *pool, struct pp_inflight *out);

/* After the walk: what still reads "pool" beyond the cache
 * and ring is the application's ("app", age unknown). */
void pp_pool_inflight_finish(struct pp_inflight *in);

/* The pool's own name (not a registered one). */
const char *pp_pool_name_(const struct pp_pool *pool);

/*
 * Pools destroyed while pages were out (pp_pool_destroy() returned
 * -EBUSY), until their last page comes back: @fn for each, with the time
 * of the destroy (seconds since the epoch, the kernel's detach-time),
 * under the lock that the freeing of such a pool takes, so @fn may walk
 * it. Stops at and returns @fn's first non-zero value.
 */
int pp_pool_detached_each(int (*fn)(struct pp_pool *pool, int64_t detach_time,
				    void *arg),
			  void *arg);

#endif /* PP_INTERNAL_POOL_INFLIGHT_H */
