/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_alloc.c - the allocator's public calls: create and destroy, the
 * single-page and higher-order calls, the bulk order-0 call with Linux
 * 5.13 __alloc_pages_bulk() semantics (doc/design.md, "Bulk allocator
 * semantics"), and the frees.
 *
 * The fast path: find the thread's cache (a TLS compare), enter it (the
 * asymmetric handshake, or the lock word), move pages between the caller
 * and the cache's stack, touching no descriptor in release builds (an
 * order-0 page keeps refcount 1 and order 0 from the moment it leaves the
 * buddy lists: see page_prep_order0()), count statistics once per call,
 * leave. Its common case runs inline in the caller (pp_tcache.h); the
 * calls here take it too before their general paths. The zone lock is
 * taken once per batch, out of line.
 *
 * Debug builds (PP_DEBUG from pp_config.h) add checks as pages leave and
 * come back: page_debug_priv.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "pp_opts.h"
#include "pp_arena_user.h"
#include "pp_os_fault.h"
#include "pp_os.h"
#include "pp_unregister.h"
#include "pp_page_growth.h"
#include "page_alloc_priv.h"
#include "pp_page_walk.h"
#include "page_debug_priv.h"


#define PP_NOINLINE __attribute__((noinline))

/*
 * Allocator ids, so that a thread's cache memo never matches a destroyed
 * allocator whose address was reused (tcache_get()). Process-wide by
 * necessity, like the pthread keys it sits beside; relaxed: only
 * uniqueness matters, and 2^64 ids do not wrap.
 */
static uint64_t allocator_ids;

/* The inline fast paths (pp_tcache.h) read these structures through
 * views of their heads: the layouts must agree. */
#define SAME_OFFSET(a, b, field) \
	_Static_assert(offsetof(a, field) == offsetof(b, field), #field)
SAME_OFFSET(struct pp_allocator, struct pp_allocator_view_, id);
SAME_OFFSET(struct pp_allocator, struct pp_allocator_view_, nr_zones);
SAME_OFFSET(struct pp_allocator, struct pp_allocator_view_, tcache_size);
SAME_OFFSET(struct pp_allocator, struct pp_allocator_view_, z0_free);
SAME_OFFSET(struct pp_allocator, struct pp_allocator_view_, z0_wmark_low);
_Static_assert(sizeof(((struct pp_allocator *)0)->z0_wmark_low) ==
	       sizeof(((struct pp_zone *)0)->wmark_low), "wmark_low");
/* The thread cache's view is the library's own (struct pp_tcache ends
 * with it), but compiled into programs: its layout, the handshake's
 * two words then the zones, is the ABI's and stays where it was. */
_Static_assert(offsetof(struct pp_tcache_view_, hs.busy) == 0, "busy");
_Static_assert(offsetof(struct pp_tcache_view_, hs.stop) == 4, "stop");
_Static_assert(offsetof(struct pp_tcache_view_, z) == 8, "zones");

/* Statistics, once per call: to the thread's cache, or to the zone. */
#define COUNT(alloc, tc, zi, field, n)                                     \
	do {                                                                \
		if (PP_STATS) {                                             \
			if (tc)                                            \
				counter_add(&(tc)->v.z[zi].c.field, (n));    \
			else                                                \
				zone_count(&(alloc)->zones[zi].retired.field, \
					   (n));                            \
		}                                                           \
	} while (0)

/* ---- where the pages go: the caller's array or list ---- */

struct sink {
	struct pp_page **array;		/* array form, or NULL */
	struct pp_page_list *list;	/* list form */
	unsigned int pos;		/* array: no NULL entry before this */
	bool empty;			/* array: every entry from pos is NULL */
};

/* The array has a NULL entry left: the caller counted them. */
static PP_ALWAYS_INLINE void sink_put(struct sink *s, struct pp_page *page)
{
	if (s->array) {
		while (s->array[s->pos])
			s->pos++;
		s->array[s->pos++] = page;
	} else {
		pp_page_list_add_tail(s->list, page);
	}
}

/* ---- zones for a call ---- */

static inline bool node_allowed(uint64_t nodemask, int node)
{
	if (node < 0)
		return nodemask == PP_NODEMASK_ALL;
	return (nodemask >> node) & 1;
}

static int zone_of_node(const struct pp_allocator *alloc, int nid)
{
	for (unsigned int i = 0; i < alloc->nr_zones; i++)
		if (alloc->zones[i].node == nid)
			return (int)i;
	return -1;
}

/*
 * The preferred zone: @nid's, or for PP_NUMA_NODE_ANY the calling
 * thread's node's. Returns -1 for a node without a zone; zone 0 for ANY
 * when the thread runs on a node without one.
 */
static int preferred_zone(const struct pp_allocator *alloc, int nid)
{
	int zi;

	if (nid == PP_NUMA_NODE_ANY) {
		if (alloc->nr_zones == 1)
			return 0;
		zi = zone_of_node(alloc, pp_os_current_node());
		return zi < 0 ? 0 : zi;
	}
	return zone_of_node(alloc, nid);
}

/*
 * The zones a bulk call may use (a bit per zone index) and, in *@pz, the
 * one to try first: the preferred zone, or where it has none, the first
 * allowed. Returns 0 when no zone is allowed.
 */
static PP_ALWAYS_INLINE uint64_t zones_allowed(struct pp_allocator *alloc,
					       int nid, uint64_t nodemask,
					       unsigned int *pz)
{
	uint64_t allowed = 0;
	int pref;

	if (PP_LIKELY(alloc->nr_zones == 1)) {
		*pz = 0;
		return nid == PP_NUMA_NODE_ANY || nid == alloc->zones[0].node ||
		       node_allowed(nodemask, alloc->zones[0].node);
	}
	pref = preferred_zone(alloc, nid);
	if (pref >= 0)
		allowed = 1ULL << pref;
	for (unsigned int i = 0; i < alloc->nr_zones; i++)
		if (node_allowed(nodemask, alloc->zones[i].node))
			allowed |= 1ULL << i;
	*pz = pref >= 0 ? (unsigned int)pref :
	      allowed ? (unsigned int)__builtin_ctzll(allowed) : 0;
	return allowed;
}

/*
 * for_each_zone_from - visit zone @first, then every other zone of
 * @allowed in index order: the fallback order of every allocation path.
 * @it holds the zones not yet visited; a break leaves it.zi at the zone
 * the body stopped at.
 */
struct zone_iter {
	uint64_t left;
	unsigned int zi;
};

#define for_each_zone_from(it, allowed, first)                             \
	for ((it).left = (allowed) | 1ULL << (first), (it).zi = (first);     \
	     (it).left;                                                      \
	     (it).left &= ~(1ULL << (it).zi),                                \
	     (it).zi = (it).left ? (unsigned int)__builtin_ctzll((it).left) : 0)

static inline uint64_t all_zones(const struct pp_allocator *alloc)
{
	return alloc->nr_zones == 64 ? ~0ULL : (1ULL << alloc->nr_zones) - 1;
}

/* The kernel's check: enough free above the low mark for the request. */
static PP_ALWAYS_INLINE bool watermark_ok(const struct pp_zone *z,
					  unsigned int need)
{
	return zone_free_pages(z) >= z->wmark_low + need;
}

/* ---- thread cache operations; the cache is locked by the caller ---- */

/* The stack is full: give a batch (the top, the hottest) to the zone. */
static PP_NOINLINE void tcache_drain_batch(struct pp_allocator *alloc,
					   struct pp_tcache_zone_ *tcz,
					   struct pp_zone *z)
{
	unsigned int n = alloc->tcache_batch;

	zone_lock(z);
	pp_zone_put_order0(z, &tcz->stack[tcz->count - n], n);
	zone_unlock(z);
	tcache_set_count(tcz, tcz->count - n);
	zone_count(&z->thread_cache_drains, 1);
}

/*
 * The stack is empty and the caller needs @rem more pages: under one
 * zone lock, take them and a batch for the stack. A request bigger than
 * the stack can hold besides a batch is served straight to the caller,
 * in stack-sized chunks, still under that one lock. Returns the pages
 * given to @s.
 */
static PP_NOINLINE unsigned int tcache_refill(struct pp_allocator *alloc,
					      struct pp_tcache_zone_ *tcz,
					      struct pp_zone *z, unsigned int rem,
					      struct sink *s)
{
	unsigned int high = alloc->tcache_size, batch = alloc->tcache_batch;
	unsigned int got = 0, n, take;

	zone_lock(z);
	while (rem + batch > high) {
		take = rem < high ? rem : high;
		n = pp_zone_take_order0(z, tcz->stack, take);
		for (unsigned int i = 0; i < n; i++) {
			page_on_alloc(z, tcz->stack[i], 0);
			sink_put(s, tcz->stack[i]);
		}
		got += n;
		rem -= n;
		if (n < take) {
			zone_unlock(z);
			return got;
		}
	}
	n = pp_zone_take_order0(z, tcz->stack, rem + batch);
	zone_unlock(z);
	if (n)
		zone_count(&z->thread_cache_refills, 1);

	take = rem < n ? rem : n;
	for (unsigned int i = 0; i < take; i++) {
		struct pp_page *page = tcz->stack[--n];

		page_on_alloc(z, page, 0);
		sink_put(s, page);
	}
	tcache_set_count(tcz, n);
	return got + take;
}

/*
 * Up to @need pages of zone @zi from the cache, refilled once. The two
 * forms have their own loops with the cursor in a register: through
 * @s, which the out-of-line refill also takes, it would live in memory.
 */
static PP_ALWAYS_INLINE unsigned int tcache_take(struct pp_allocator *alloc,
						 struct pp_tcache *tc,
						 unsigned int zi,
						 unsigned int need,
						 struct sink *s)
{
	struct pp_tcache_zone_ *tcz = &tc->v.z[zi];
	struct pp_zone *z = &alloc->zones[zi];
	struct pp_page **stack = tcz->stack;
	unsigned int count = tcz->count;
	unsigned int got = need < count ? need : count;

	if (s->array && PAGE_HOOKS_NOOP && s->empty) {
		/* The common refill of an empty array: one copy. */
		count -= got;
		memcpy(&s->array[s->pos], &stack[count], got * sizeof(*stack));
		s->pos += got;
	} else if (s->array) {
		struct pp_page **array = s->array;
		unsigned int pos = s->pos;

		for (unsigned int i = 0; i < got; i++) {
			struct pp_page *page = stack[--count];

			page_on_alloc(z, page, 0);
			while (array[pos])
				pos++;
			array[pos++] = page;
		}
		s->pos = pos;
	} else {
		for (unsigned int i = 0; i < got; i++) {
			struct pp_page *page = stack[--count];

			page_on_alloc(z, page, 0);
			pp_page_list_add_tail(s->list, page);
		}
	}
	tcache_set_count(tcz, count);
	if (got < need)
		got += tcache_refill(alloc, tcz, z, need - got, s);
	return got;
}

/* One order-0 page of zone @zi through the cache, or NULL. */
static struct pp_page *tcache_take_one(struct pp_allocator *alloc,
				       struct pp_tcache *tc, unsigned int zi)
{
	struct pp_tcache_zone_ *tcz = &tc->v.z[zi];
	struct pp_zone *z = &alloc->zones[zi];
	struct pp_page *page = NULL;

	tcache_lock(tc);
	if (!tcz->count) {
		zone_lock(z);
		tcache_set_count(tcz, pp_zone_take_order0(z, tcz->stack,
							   alloc->tcache_batch));
		zone_unlock(z);
		if (tcz->count)
			zone_count(&z->thread_cache_refills, 1);
	}
	if (tcz->count) {
		page = tcz->stack[tcz->count - 1];
		tcache_set_count(tcz, tcz->count - 1);
		page_on_alloc(z, page, 0);
	}
	tcache_unlock(tc);
	return page;
}

/* Without a cache (the thread could not get memory for one). */
static struct pp_page *zone_take_one(struct pp_allocator *alloc,
				     unsigned int zi)
{
	struct pp_zone *z = &alloc->zones[zi];
	struct pp_page *page = NULL;

	zone_lock(z);
	if (pp_zone_take_order0(z, &page, 1))
		page_on_alloc(z, page, 0);
	zone_unlock(z);
	return page;
}

/*
 * Free one checked order-0 page of zone @z into the cache (locked).
 * Returns nothing: the caller counts.
 */
static PP_ALWAYS_INLINE void tcache_put(struct pp_allocator *alloc,
					struct pp_tcache *tc, struct pp_zone *z,
					struct pp_page *page)
{
	struct pp_tcache_zone_ *tcz = &tc->v.z[z->index];

	page_on_free(page, 0);
	if (PP_UNLIKELY(tcz->count == alloc->tcache_size))
		tcache_drain_batch(alloc, tcz, z);
	tcz->stack[tcz->count] = page;
	tcache_set_count(tcz, tcz->count + 1);
}

/* ---- the single-page and higher-order paths ---- */

/*
 * One order-0 page from the zones in @allowed, @pz first, through the
 * thread's cache; below the bulk watermark if need be, down to the last
 * page. When all are dry, drain every thread's cache and try once more.
 */
static PP_NOINLINE struct pp_page *alloc_one(struct pp_allocator *alloc,
					     uint64_t allowed, unsigned int pz)
{
	struct pp_tcache *tc = tcache_get(alloc);
	struct pp_page *page = NULL;
	struct zone_iter it = { 0, pz };

	for (int pass = 0; pass < 2 && !page; pass++) {
		for_each_zone_from(it, allowed, pz) {
			page = tc ? tcache_take_one(alloc, tc, it.zi) :
				     zone_take_one(alloc, it.zi);
			if (page)
				break;
		}
		if (!page && pass == 0)
			pp_tcache_drain_all(alloc);
	}
	if (page) {
		COUNT(alloc, tc, it.zi, alloc_calls, 1);
		COUNT(alloc, tc, it.zi, pages_allocated, 1);
	} else {
		COUNT(alloc, tc, pz, alloc_calls, 1);
		COUNT(alloc, tc, pz, alloc_failed, 1);
	}
	return page;
}

/* A block of 2^@order pages from the buddy lists of any zone, @pz first. */
static struct pp_page *alloc_block(struct pp_allocator *alloc,
				   unsigned int order, unsigned int pz)
{
	struct pp_tcache *tc = tcache_get(alloc);
	struct pp_page *page = NULL;
	struct zone_iter it = { 0, pz };

	for (int pass = 0; pass < 2 && !page; pass++) {
		for_each_zone_from(it, all_zones(alloc), pz) {
			struct pp_zone *z = &alloc->zones[it.zi];

			zone_lock(z);
			page = pp_zone_take_block(z, order);
			if (page)
				page_on_alloc(z, page, order);
			zone_unlock(z);
			if (page)
				break;
		}
		/* Cached order-0 pages may be what keeps a block split. */
		if (!page && pass == 0)
			pp_tcache_drain_all(alloc);
	}
	if (page) {
		COUNT(alloc, tc, it.zi, alloc_calls, 1);
		COUNT(alloc, tc, it.zi, pages_allocated, 1UL << order);
	} else {
		COUNT(alloc, tc, pz, alloc_calls, 1);
		COUNT(alloc, tc, pz, alloc_failed, 1);
	}
	return page;
}

static PP_NOINLINE struct pp_page *alloc_pages_slow(struct pp_allocator *alloc,
						    int nid, unsigned int order)
{
	int pz = preferred_zone(alloc, nid);

	/* Another node's zone is a fallback, not a failure. */
	if (pz < 0)
		pz = 0;
	if (order == 0)
		return alloc_one(alloc, all_zones(alloc), (unsigned int)pz);
	/* An order no zone has is a plain failure, not a reason to drain. */
	for (unsigned int i = 0; i < alloc->nr_zones; i++)
		if (order <= alloc->zones[i].max_order)
			return alloc_block(alloc, order, (unsigned int)pz);
	return NULL;
}

/*
 * The common call, an order-0 page of a one-zone allocator from a thread
 * whose cache holds one, is the inline path of pp_tcache.h (which callers
 * of pp_alloc_page() run in place); any node is zone 0's, as in
 * preferred_zone(). The rest is a tail call.
 */
struct pp_page *pp_alloc_pages(struct pp_allocator *alloc, int nid,
			       unsigned int order)
{
	struct pp_page *page;

	if (PP_LIKELY(!order)) {
		page = pp_tcache_alloc_one_(alloc);
		if (PP_LIKELY(page != NULL))
			return page;
	}
	return alloc_pages_slow(alloc, nid, order);
}

/* ---- the bulk call ---- */

/*
 * Neither a list nor an array: a caller's bug. The kernel's
 * __alloc_pages_bulk() has nowhere to put pages either; like its
 * WARN_ON_ONCE, this reports it once per process and the call returns 0.
 * Cold and out of line: the data path pays one compare. errno is kept,
 * as on every data path (the log callback may write to stderr).
 */
static PP_NOINLINE __attribute__((cold)) void bulk_no_sink(void)
{
	static bool warned;
	int saved = errno;

	if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
		PP_ERR("pp_alloc_pages_bulk: neither a list nor an array to put pages in: give exactly one (nothing allocated, 0 returned)");
	errno = saved;
}

/*
 * The common bulk call, an empty array that the thread's cache of a
 * one-zone allocator covers, is served in the caller by the inline
 * pp_alloc_pages_bulk_array() (pp_tcache.h); what reaches the library is
 * the rest, so it does not try that again.
 */
unsigned long pp_alloc_pages_bulk(struct pp_allocator *alloc, int preferred_nid,
				  uint64_t nodemask, int nr_pages,
				  struct pp_page_list *list,
				  struct pp_page **array)
{
	struct sink s = { .array = array, .list = list, .pos = 0,
			  .empty = false };
	unsigned int populated = 0, need, pz, zi, got;
	struct pp_page *page;
	struct pp_tcache *tc;
	uint64_t allowed;

	if (nr_pages <= 0)
		return 0;
	if (PP_UNLIKELY(!list && !array)) {
		bulk_no_sink();
		return 0;
	}
	if (array) {
		/* Bounded by nr_pages: array[nr_pages] is never read. */
		for (int i = 0; i < nr_pages; i++)
			populated += array[i] != NULL;
		if (populated == (unsigned int)nr_pages)
			return populated;
		s.empty = populated == 0;
	}
	need = (unsigned int)nr_pages - populated;

	allowed = zones_allowed(alloc, preferred_nid, nodemask, &pz);
	if (PP_UNLIKELY(!allowed))
		return populated;
	if (need == 1)
		goto single;

	/* The watermark, once per call: the preferred zone, then others. */
	zi = pz;
	if (PP_UNLIKELY(!watermark_ok(&alloc->zones[zi], need))) {
		struct zone_iter it;

		for_each_zone_from(it, allowed, pz)
			if (watermark_ok(&alloc->zones[it.zi], need))
				break;
		if (!it.left)
			goto single;
		zi = it.zi;
	}

	tc = tcache_get(alloc);
	if (PP_UNLIKELY(!tc))
		goto single;
	tcache_lock(tc);
	got = tcache_take(alloc, tc, zi, need, &s);
	if (PP_LIKELY(got)) {
		COUNT(alloc, tc, zi, bulk_calls, 1);
		COUNT(alloc, tc, zi, pages_allocated, got);
	}
	tcache_unlock(tc);
	if (PP_LIKELY(got))
		return populated + got;

single:
	/* Progress whenever any page can be had: one single-page attempt. */
	page = alloc_one(alloc, allowed, pz);
	if (page) {
		sink_put(&s, page);
		populated++;
	}
	return populated;
}


/* ---- frees ---- */

/*
 * pages_freed is counted once per run of pages of one zone, not once per
 * page: the bulk frees feed each page's zone here and flush at the end.
 */
struct freed_run {
	unsigned long n;
	unsigned int zi;
};

static PP_ALWAYS_INLINE void freed_run_add(struct pp_allocator *alloc,
					   struct pp_tcache *tc,
					   struct freed_run *run,
					   unsigned int zi)
{
	if (zi != run->zi) {
		COUNT(alloc, tc, run->zi, pages_freed, run->n);
		run->zi = zi;
		run->n = 0;
	}
	run->n++;
}

static PP_ALWAYS_INLINE void freed_run_flush(struct pp_allocator *alloc,
					     struct pp_tcache *tc,
					     struct freed_run *run)
{
	COUNT(alloc, tc, run->zi, pages_freed, run->n);
}

/* Free a block of order > 0 straight to its zone's buddy lists. */
static void free_block(struct pp_allocator *alloc, struct pp_page *page,
		       unsigned int order)
{
	struct pp_zone *z = free_check(alloc, page, order, "pp_free_pages");
	struct pp_tcache *tc;

	if (!z)
		return;
	zone_lock(z);
	page_on_free(page, order);
	pp_zone_put_block(z, page, order);
	zone_unlock(z);
	tc = tcache_get(alloc);
	COUNT(alloc, tc, z->index, pages_freed, 1UL << order);
}

/* Without a cache: order-0 pages straight to the zone. */
static void free_to_zone(struct pp_allocator *alloc, struct pp_page *page,
			 const char *fn)
{
	struct pp_zone *z = free_check(alloc, page, 0, fn);

	if (!z)
		return;
	zone_lock(z);
	page_on_free(page, 0);
	pp_zone_put_order0(z, &page, 1);
	zone_unlock(z);
	COUNT(alloc, (struct pp_tcache *)NULL, z->index, pages_freed, 1);
}

/* Order-0 pages of zone @z into its lists, under one hold of its lock. */
static void free_run_to_zone(struct pp_allocator *alloc, struct pp_zone *z,
			     struct pp_page **run, unsigned int k)
{
	if (!k)
		return;
	zone_lock(z);
	for (unsigned int i = 0; i < k; i++)
		page_on_free(run[i], 0);
	pp_zone_put_order0(z, run, k);
	zone_unlock(z);
	COUNT(alloc, (struct pp_tcache *)NULL, z->index, pages_freed, k);
}

void pp_free_pages_to_zone(struct pp_allocator *alloc, struct pp_page **pages,
			   unsigned int n, unsigned int order)
{
	struct pp_page *run[PP_TCACHE_BATCH_DEFAULT];
	struct pp_zone *z = NULL;
	unsigned int i, k = 0;

	if (order) {
		for (i = 0; i < n; i++)
			free_block(alloc, pages[i], order);
		return;
	}
	for (i = 0; i < n; i++) {
		struct pp_zone *pz = free_check(alloc, pages[i], 0,
						"pp_free_pages");

		if (!pz)
			continue;
		if (pz != z || k == PP_TCACHE_BATCH_DEFAULT) {
			if (z)
				free_run_to_zone(alloc, z, run, k);
			z = pz;
			k = 0;
		}
		run[k++] = pages[i];
	}
	if (z)
		free_run_to_zone(alloc, z, run, k);
}

static PP_NOINLINE void free_pages_slow(struct pp_allocator *alloc,
					struct pp_page *page,
					unsigned int order)
{
	struct pp_tcache *tc;
	struct pp_zone *z;

	if (PP_UNLIKELY(!page))
		return;
	if (PP_UNLIKELY(order)) {
		free_block(alloc, page, order);
		return;
	}
	tc = tcache_get(alloc);
	if (PP_UNLIKELY(!tc)) {
		free_to_zone(alloc, page, "pp_free_pages");
		return;
	}
	tcache_lock(tc);
	z = free_check(alloc, page, 0, "pp_free_pages");
	if (PP_LIKELY(z)) {
		tcache_put(alloc, tc, z, page);
		COUNT(alloc, tc, z->index, pages_freed, 1);
	}
	tcache_unlock(tc);
}

/* As pp_alloc_pages(). */
void pp_free_pages(struct pp_allocator *alloc, struct pp_page *page,
		   unsigned int order)
{
	if (PP_LIKELY(!order) && PP_LIKELY(pp_tcache_free_one_(alloc, page)))
		return;
	free_pages_slow(alloc, page, order);
}

/* One zone: the stack count stays in a register for the whole loop. */
static PP_ALWAYS_INLINE void free_bulk_one_zone(struct pp_allocator *alloc,
						struct pp_tcache *tc,
						struct pp_page **pages,
						unsigned long nr)
{
	struct pp_tcache_zone_ *tcz = &tc->v.z[0];
	struct pp_page **stack = tcz->stack;
	unsigned int count = tcz->count, high = alloc->tcache_size;
	unsigned long freed = 0;

	if (PAGE_HOOKS_NOOP && nr <= high - count) {
		/*
		 * Room for all: skip NULL entries without a branch. A NULL
		 * is stored at stack[count] and overwritten by the next page
		 * or left above the top; count + i < high keeps it in bounds.
		 */
		for (unsigned long i = 0; i < nr; i++) {
			stack[count] = pages[i];
			count += pages[i] != NULL;
		}
		freed = count - tcz->count;
		tcache_set_count(tcz, count);
		COUNT(alloc, tc, 0, pages_freed, freed);
		return;
	}
	for (unsigned long i = 0; i < nr; i++) {
		struct pp_page *page = pages[i];

		if (!page)
			continue;
		if (PP_DEBUG && !free_check(alloc, page, 0,
					    "pp_free_pages_bulk"))
			continue;
		page_on_free(page, 0);
		if (PP_UNLIKELY(count == high)) {
			tcache_set_count(tcz, count);
			tcache_drain_batch(alloc, tcz, &alloc->zones[0]);
			count = tcz->count;
		}
		stack[count++] = page;
		freed++;
	}
	tcache_set_count(tcz, count);
	COUNT(alloc, tc, 0, pages_freed, freed);
}

static PP_NOINLINE void free_bulk_slow(struct pp_allocator *alloc,
				       struct pp_page **pages,
				       unsigned long nr)
{
	struct pp_tcache *tc = tcache_get(alloc);
	struct freed_run run = { 0, 0 };

	if (PP_UNLIKELY(!tc)) {
		for (unsigned long i = 0; i < nr; i++)
			if (pages[i])
				free_to_zone(alloc, pages[i],
					     "pp_free_pages_bulk");
		return;
	}
	tcache_lock(tc);
	if (PP_LIKELY(alloc->nr_zones == 1)) {
		free_bulk_one_zone(alloc, tc, pages, nr);
		tcache_unlock(tc);
		return;
	}
	for (unsigned long i = 0; i < nr; i++) {
		struct pp_page *page = pages[i];
		struct pp_zone *z;

		if (!page)
			continue;
		z = free_check(alloc, page, 0, "pp_free_pages_bulk");
		if (!z)
			continue;
		tcache_put(alloc, tc, z, page);
		freed_run_add(alloc, tc, &run, z->index);
	}
	freed_run_flush(alloc, tc, &run);
	tcache_unlock(tc);
}

/* What pp_free_pages_bulk() (inline, pp_page.h) does not do in place. */
void pp_free_pages_bulk_slow(struct pp_allocator *alloc, struct pp_page **pages,
			     unsigned long nr)
{
	if (PP_LIKELY(pp_tcache_free_array_(alloc, pages, nr)))
		return;
	free_bulk_slow(alloc, pages, nr);
}

void pp_free_page_list(struct pp_allocator *alloc, struct pp_page_list *list)
{
	struct pp_tcache *tc = tcache_get(alloc);
	struct pp_page *page = list->head;
	struct freed_run run = { 0, 0 };

	if (PP_UNLIKELY(!tc)) {
		while (page) {
			struct pp_page *next = page->next;

			free_to_zone(alloc, page, "pp_free_page_list");
			page = next;
		}
		pp_page_list_init(list);
		return;
	}
	tcache_lock(tc);
	while (page) {
		/* Read the link first: a drain reuses it for the buddy list. */
		struct pp_page *next = page->next;
		struct pp_zone *z = free_check(alloc, page, 0,
					       "pp_free_page_list");

		if (z) {
			tcache_put(alloc, tc, z, page);
			freed_run_add(alloc, tc, &run, z->index);
		}
		page = next;
	}
	freed_run_flush(alloc, tc, &run);
	tcache_unlock(tc);
	pp_page_list_init(list);
}

/* ---- lookups ---- */

struct pp_page *pp_virt_to_page(const struct pp_allocator *alloc,
				const void *addr)
{
	for (unsigned int i = 0; i < alloc->nr_zones; i++) {
		const struct pp_zone *z = &alloc->zones[i];
		uintptr_t off = (uintptr_t)addr - z->base;

		if (off < z->span_pages << PP_PAGE_SHIFT)
			return &z->pages[off >> PP_PAGE_SHIFT];
	}
	return NULL;
}

struct pp_arena *pp_page_arena(const struct pp_allocator *alloc,
			       const struct pp_page *page)
{
	return alloc->zones[page->zone].arena;
}

int pp_page_to_nid(const struct pp_allocator *alloc, const struct pp_page *page)
{
	return alloc->zones[page->zone].node;
}

unsigned int pp_allocator_max_order(const struct pp_allocator *alloc)
{
	return alloc->max_order;
}

unsigned int pp_allocator_zone_count(const struct pp_allocator *alloc)
{
	return alloc->nr_zones;
}

int pp_allocator_zone_pages(struct pp_allocator *alloc, unsigned int z,
			    struct pp_page **pages, unsigned long *nr)
{
	if (z >= alloc->nr_zones)
		return -EINVAL;
	*pages = alloc->zones[z].pages;
	*nr = alloc->zones[z].span_pages;
	return 0;
}

void pp_allocator_drain_thread(struct pp_allocator *alloc)
{
	struct pp_tcache *tc = pthread_getspecific(alloc->key);

	if (!tc)
		return;
	tcache_lock(tc);
	pp_tcache_drain_locked(tc, false);
	tcache_unlock(tc);
}

/* ---- create and destroy ---- */

/* Checks the copy pp_allocator_create() made of the caller's options. */
static int check_opts(const struct pp_allocator_opts *opts)
{
	unsigned int high, batch;
	if (!opts->arenas || opts->nr_arenas == 0 ||
	    opts->nr_arenas > PP_MAX_ZONES) {
		PP_ERR("pp_allocator_create: %u arenas given; give 1 to %d, one per NUMA node",
		       opts->arenas ? opts->nr_arenas : 0, PP_MAX_ZONES);
		return -EINVAL;
	}
	if (pp_growth_check_opts(opts))
		return -EINVAL;
	high = opts->thread_cache_size ? opts->thread_cache_size :
					 PP_TCACHE_SIZE_DEFAULT;
	batch = opts->thread_cache_batch ? opts->thread_cache_batch :
					   PP_TCACHE_BATCH_DEFAULT;
	if (batch > high) {
		PP_ERR("pp_allocator_create: thread_cache_batch %u is larger than thread_cache_size %u; a batch must fit in the cache",
		       batch, high);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < opts->nr_arenas; i++) {
		struct pp_arena *a = opts->arenas[i];
		int node;

		if (!a) {
			PP_ERR("pp_allocator_create: arena %u is NULL", i);
			return -EINVAL;
		}
		node = pp_arena_node(a);
		if (node >= 64) {
			PP_ERR("pp_allocator_create: arena '%s' is on node %d; node masks cover nodes 0-63 only",
			       pp_arena_name(a), node);
			return -EINVAL;
		}
		for (unsigned int j = 0; j < i; j++) {
			struct pp_arena *b = opts->arenas[j];

			if (a == b || (node >= 0 && pp_arena_node(b) == node)) {
				PP_ERR("pp_allocator_create: arenas %u ('%s') and %u ('%s') are both on node %d; give one arena per node (a zone per node)",
				       j, pp_arena_name(b), i, pp_arena_name(a),
				       node);
				return -EINVAL;
			}
		}
	}
	return 0;
}

struct pp_allocator *
pp_allocator_create(const struct pp_allocator_opts *uopts)
{
	struct pp_allocator_opts copy, *opts = &copy;
	struct pp_allocator *alloc;
	unsigned int i, nr;
	size_t size;
	void *mem;
	int err;

	/* The first published struct ended before grow_wmark. */
	err = pp_opts_copy(&copy, uopts,
			   offsetof(struct pp_allocator_opts, grow_wmark),
			   sizeof(copy), "struct pp_allocator_opts");
	if (!err)
		err = check_opts(opts);
	if (err) {
		errno = -err;
		return NULL;
	}
	nr = opts->nr_arenas;
	size = sizeof(*alloc) + nr * sizeof(struct pp_zone);
	if (pp_os_posix_memalign(&mem, PP_CACHE_LINE, size)) {
		PP_ERR("pp_allocator_create: out of memory for the allocator (%zu bytes)",
		       size);
		errno = ENOMEM;
		return NULL;
	}
	alloc = mem;
	memset(alloc, 0, sizeof(*alloc));
	alloc->nr_zones = nr;
	alloc->tcache_size = opts->thread_cache_size ?
			     opts->thread_cache_size : PP_TCACHE_SIZE_DEFAULT;
	alloc->tcache_batch = opts->thread_cache_batch ?
			      opts->thread_cache_batch : PP_TCACHE_BATCH_DEFAULT;
	alloc->max_order = PP_MAX_ORDER_LIMIT;

	for (i = 0; i < nr; i++) {
		err = pp_arena_get_user(opts->arenas[i]);
		if (err)
			goto err_fini_zones;
		err = pp_zone_init(&alloc->zones[i], opts->arenas[i], i,
				   opts->wmark_low);
		if (err) {
			pp_arena_put_user(opts->arenas[i]);
			goto err_fini_zones;
		}
		if (alloc->zones[i].max_order < alloc->max_order)
			alloc->max_order = alloc->zones[i].max_order;
	}
	/* What the inline bulk path reads for the watermark check. */
	alloc->z0_free = &alloc->zones[0].free_pages;
	alloc->z0_wmark_low = alloc->zones[0].wmark_low;
	err = -pthread_mutex_init(&alloc->tcache_list_lock, NULL);
	if (err)
		goto err_fini_zones;
	err = -pthread_key_create(&alloc->key, pp_tcache_destructor);
	if (err) {
		PP_ERR("pp_allocator_create: no pthread key left for the thread caches (%s); destroy unused allocators",
		       strerror(-err));
		goto err_destroy_mutex;
	}
	alloc->id = __atomic_add_fetch(&allocator_ids, 1, __ATOMIC_RELAXED);
	pp_page_asan_arenas(alloc, true);
	err = pp_growth_start(alloc, opts);
	if (err)
		goto err_delete_key;
	return alloc;

err_delete_key:
	pp_page_asan_arenas(alloc, false);
	pthread_key_delete(alloc->key);
err_destroy_mutex:
	pthread_mutex_destroy(&alloc->tcache_list_lock);
err_fini_zones:
	while (i--) {
		pp_zone_fini(&alloc->zones[i]);
		pp_arena_put_user(opts->arenas[i]);
	}
	free(alloc);
	errno = -err;
	return NULL;
}

/* The message -EBUSY comes with: pages out, per zone. */
static void report_busy(struct pp_allocator *alloc, const unsigned long *out,
			unsigned long total)
{
	char buf[384];
	size_t len = 0;

	for (unsigned int i = 0; i < alloc->nr_zones && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%szone %u (node %d): %lu",
					i ? ", " : "", i,
					alloc->zones[i].node, out[i]);
	PP_ERR("pp_allocator_destroy: %lu pages still allocated (%s); nothing was destroyed: free them and call it again",
	       total, buf);
}

int pp_allocator_destroy(struct pp_allocator *alloc)
{
	unsigned long out[PP_MAX_ZONES], total = 0;

	if (!alloc)
		return 0;
	pthread_mutex_lock(&alloc->tcache_list_lock);
	pp_tcache_hold_all(alloc);
	for (struct pp_tcache *tc = alloc->tcache_list; tc; tc = tc->next)
		pp_tcache_drain_locked(tc, false);
	pp_tcache_release_all(alloc);
	for (unsigned int i = 0; i < alloc->nr_zones; i++) {
		struct pp_zone *z = &alloc->zones[i];

		zone_lock(z);
		out[i] = z->managed_pages - z->free_pages - z->isolated_pages;
		zone_unlock(z);
		total += out[i];
	}
	if (total) {
		pthread_mutex_unlock(&alloc->tcache_list_lock);
		report_busy(alloc, out, total);
		return -EBUSY;
	}

	/* Nothing to grow into any more; the thread takes the list lock. */
	pthread_mutex_unlock(&alloc->tcache_list_lock);
	pp_growth_stop(alloc);
	pthread_mutex_lock(&alloc->tcache_list_lock);
	/*
	 * No thread uses the allocator any more (the caller's promise).
	 * Deleting the key first means no destructor will run for a cache
	 * freed here, even in a thread that exits later.
	 */
	pthread_key_delete(alloc->key);
	pp_tcache_free_all(alloc);
	pthread_mutex_unlock(&alloc->tcache_list_lock);
	/*
	 * Out of telemetry's registry before anything is freed, and not
	 * under the list lock, which a request reading the statistics takes
	 * (it finishes first, finding no cache). Only now: an allocator
	 * that refused (-EBUSY) stays alive and registered.
	 */
	pp_unregister_obj(alloc);
	pthread_mutex_destroy(&alloc->tcache_list_lock);
	if (pp_tcache_memo_.id == alloc->id) {
		pp_tcache_memo_.id = 0;
		pp_tcache_memo_.tc = NULL;
		pp_tcache_memo_.leaf = NULL;
	}
	pp_page_asan_arenas(alloc, false);
	for (unsigned int i = 0; i < alloc->nr_zones; i++) {
		pp_zone_fini(&alloc->zones[i]);
		pp_arena_put_user(alloc->zones[i].arena);
	}
	free(alloc);
	return 0;
}
