/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_page.h - page descriptors and the bulk page allocator.
 *
 * Every 4 KiB page of an arena has a 64-byte descriptor in a dense array
 * kept apart from the data (doc/design.md decision 2), like the kernel's
 * struct page in vmemmap. The allocator hands out descriptors; the data is
 * at pp_page_address().
 *
 * Zones: one per arena, each on one NUMA node; buddy free lists from order 0
 * up to the arena's page order (order 9 for 2 MiB, 18 for 1 GiB, 9 for
 * 4 KiB arenas, whose higher orders are only virtually contiguous). Each
 * thread has a cache of order-0 pages per zone in front of it (the kernel
 * has per-CPU ones, its pcp lists), refilled and drained in batches under
 * one zone lock.
 */
#ifndef PAGEPOOL_PP_PAGE_H
#define PAGEPOOL_PP_PAGE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_arena.h>
#include <pagepool/pp_common.h>
#include <pagepool/pp_tcache.h>
#include <pagepool/pp_where.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pp_allocator;
struct pp_pool;

/*
 * struct pp_page - one 4 KiB page's descriptor. 64 bytes, one cache line.
 * Fields other than those with helpers below belong to the current owner:
 * the allocator while the page is free, page_pool while it is in a pool.
 */
struct pp_page {
	struct pp_page *next;   /* pp_page_list link; buddy free list link */
	union {
		/* buddy free list link (allocator only, while free) */
		struct pp_page *prev;
		/*
		 * While a page_pool holds the page. The allocator never
		 * reads prev of an allocated page and rewrites it when the
		 * page goes back on a free list, so the two never overlap
		 * in time.
		 */
		struct {
			/* How many of its fragments are out, counting, for
			 * the block being split, those the owner may still
			 * hand out (1 for a whole page); pp_page_pool.h
			 * explains the count. A block holds fewer than
			 * 2^31 fragments. */
			int32_t pp_ref_count;
			/* page_pool's signature: it is the pool's page */
			uint32_t pp_magic;
		};
	};
	void *addr;             /* the data: fixed for the page's life */
	struct pp_pool *pp;     /* owning page_pool, NULL outside pools */
	uint64_t dma_addr;      /* IOVA while a pool keeps it mapped */
	uint32_t refcount;      /* 1 when allocated; atomic via helpers */
	uint16_t flags;         /* PP_PAGE_F_*: the allocator's, always */
	uint8_t order;          /* order of the block this page heads */
	uint8_t zone;           /* index of its zone in the allocator */
	uint64_t private_data;  /* the owner's: frames, requests, drivers */
	uint64_t pp_where;      /* a pool's page: holder and time (pp_where.h) */
};
static_assert(sizeof(struct pp_page) == 64, "descriptor is one cache line");

/*
 * page->flags bits. Only the allocator writes them, also while a page is
 * allocated (other threads read them under the allocator's locks): owners
 * keep their state in pp, private_data, pp_magic and pp_where.
 */
#define PP_PAGE_F_BUDDY     0x0001u /* heads a free block in a zone */
#define PP_PAGE_F_ALLOCATED 0x0002u /* handed out (debug_level >= 1) */
#define PP_PAGE_F_POISONED  0x0004u /* data poisoned at free (debug_level 2) */
#define PP_PAGE_F_ISOLATED  0x0008u /* heads a free block set aside to be given back */

/* A singly linked list of pages, for the list form of the bulk call. */
struct pp_page_list {
	struct pp_page *head;
	struct pp_page *tail;
	unsigned long count;
};

#define PP_NODEMASK_PREFERRED_ONLY 0ULL
#define PP_NODEMASK_ALL (~0ULL)

struct pp_allocator_opts {
	size_t sz;                 /* sizeof(struct pp_allocator_opts) */
	struct pp_arena **arenas;  /* one zone each; at most one per node */
	unsigned int nr_arenas;
	unsigned int thread_cache_size;     /* thread cache size; 0: 512 */
	unsigned int thread_cache_batch;    /* refill/drain batch; 0: 64 */
	unsigned long wmark_low;   /* bulk watermark in pages; 0: zone/256 */
	/*
	 * Zones over growable arenas (pp_arena_opts.max_size; doc/growth.md);
	 * ignored for fixed ones. 0: the default.
	 */
	/* Grow a step when the zone's free pages fall below; 0: one step. */
	unsigned long grow_wmark;
	/* Give steps back while free pages stay above this...; 0: 2 steps */
	unsigned long shrink_wmark;
	/* ...for this long, in ms; 0: 1000 */
	unsigned int shrink_delay_ms;
	unsigned int flags;        /* enum pp_allocator_flags */
};

enum pp_allocator_flags {
	/*
	 * No growth thread: the caller grows and shrinks with
	 * pp_allocator_grow() and pp_allocator_shrink() (tests, and
	 * programs with a control loop of their own).
	 */
	PP_ALLOCATOR_F_MANUAL_RESIZE = 1u << 0,
};

/*
 * pp_allocator_create - build zones over @opts->arenas.
 * Returns NULL with errno EINVAL (no arenas, two arenas on one node,
 * thread_cache_batch > thread_cache_size, bad opts->sz) or ENOMEM.
 * The arenas must outlive the allocator (pp_arena_destroy returns -EBUSY
 * meanwhile).
 */
PP_API struct pp_allocator *
pp_allocator_create(const struct pp_allocator_opts *opts);

/*
 * pp_allocator_destroy - returns 0, or -EBUSY (and frees nothing) while
 * pages are still allocated; the message says how many, per zone.
 * Thread caches of all threads are returned first. When it frees, it
 * first unregisters the allocator from telemetry (pp_telemetry.h).
 * Context: no other thread may use the allocator during or after the call.
 */
PP_API int pp_allocator_destroy(struct pp_allocator *alloc);

/*
 * pp_alloc_pages - allocate one block of 2^@order pages, preferring @nid
 * (PP_NUMA_NODE_ANY: the calling thread's node) and falling back to any
 * zone. Order 0 is served from the thread cache; when every zone is dry,
 * other threads' caches are drained before giving up. The single-page path
 * may go below the bulk watermark down to the last page.
 * Returns the head page with refcount 1, or NULL (errno untouched).
 */
PP_API struct pp_page *pp_alloc_pages(struct pp_allocator *alloc, int nid,
				      unsigned int order);

/* Inline when the thread's cache can serve (pp_tcache.h). */
static inline struct pp_page *pp_alloc_page(struct pp_allocator *alloc)
{
	struct pp_page *page = pp_tcache_alloc_one_(alloc);

	if (PP_LIKELY(page != NULL))
		return page;
	return pp_alloc_pages(alloc, PP_NUMA_NODE_ANY, 0);
}

/*
 * pp_free_pages - return a block allocated with pp_alloc_pages() (or an
 * order-0 page from any bulk call). The caller holds the only reference,
 * so refcount is 1 (to share a page, use pp_page_ref_inc() and
 * pp_put_page()); order-0 pages keep that refcount while free, which is
 * why the release build neither reads nor writes the descriptor here.
 * Any thread may free any page.
 * Debug builds report and ignore a double free, a foreign page, and a free
 * while other references remain.
 */
PP_API void pp_free_pages(struct pp_allocator *alloc, struct pp_page *page,
			  unsigned int order);

/* Inline when the thread's cache has room (pp_tcache.h). */
static inline void pp_free_page(struct pp_allocator *alloc, struct pp_page *page)
{
	if (PP_LIKELY(pp_tcache_free_one_(alloc, page)))
		return;
	pp_free_pages(alloc, page, 0);
}

/*
 * pp_alloc_pages_bulk - the bulk order-0 allocator (Linux 5.13
 * __alloc_pages_bulk semantics; doc/design.md has the list):
 *
 *  - @nr_pages <= 0 returns 0 and allocates nothing.
 *  - Exactly one of @list and @array is non-NULL. With both NULL the call
 *    allocates nothing and returns 0, after one error message per process
 *    (the kernel's WARN_ON_ONCE).
 *  - Array form: only NULL entries of @array[0..nr_pages) are filled;
 *    entries already set are kept. Returns the number of populated entries,
 *    counting those that were already there; if all are populated returns
 *    @nr_pages at once. @array[nr_pages] is never read.
 *  - List form: allocated pages are appended to @list; returns the number
 *    of pages added.
 *  - If exactly one page is missing, or the fast path can get none, the
 *    single-page path is tried once, so a call makes progress when any page
 *    can be had.
 *  - If the preferred zone is below its low watermark plus the request, the
 *    call takes what the single-page path can give (one attempt). It never
 *    blocks or sleeps.
 *  - @preferred_nid (PP_NUMA_NODE_ANY: the calling thread's node) is tried
 *    first; other zones only if their node is in @nodemask
 *    (PP_NODEMASK_PREFERRED_ONLY allows none, PP_NODEMASK_ALL all).
 *  - The watermark is checked and statistics counted once per call.
 *  - Fewer pages than asked is a normal result.
 * Returns pages as for pp_alloc_pages(): refcount 1, order 0.
 * Context: any thread. Data path: errno untouched.
 */
PP_API unsigned long pp_alloc_pages_bulk(struct pp_allocator *alloc,
					 int preferred_nid, uint64_t nodemask,
					 int nr_pages,
					 struct pp_page_list *list,
					 struct pp_page **array);

static inline unsigned long
pp_alloc_pages_bulk_list(struct pp_allocator *alloc, int nr_pages,
			 struct pp_page_list *list)
{
	return pp_alloc_pages_bulk(alloc, PP_NUMA_NODE_ANY,
				   PP_NODEMASK_PREFERRED_ONLY, nr_pages, list,
				   NULL);
}

static inline unsigned long
pp_alloc_pages_bulk_array(struct pp_allocator *alloc, int nr_pages,
			  struct pp_page **array)
{
	/* Inline for an empty array the thread's cache covers. */
	unsigned long got = pp_tcache_alloc_array_(alloc, nr_pages, array);

	if (PP_LIKELY(got != 0))
		return got;
	return pp_alloc_pages_bulk(alloc, PP_NUMA_NODE_ANY,
				   PP_NODEMASK_PREFERRED_ONLY, nr_pages, NULL,
				   array);
}

static inline unsigned long
pp_alloc_pages_bulk_array_node(struct pp_allocator *alloc, int nid,
			       int nr_pages, struct pp_page **array)
{
	return pp_alloc_pages_bulk(alloc, nid, PP_NODEMASK_PREFERRED_ONLY,
				   nr_pages, NULL, array);
}

/* Out of line: what pp_free_pages_bulk() does not do in place. */
PP_API void pp_free_pages_bulk_slow(struct pp_allocator *alloc,
				    struct pp_page **pages, unsigned long nr);

/*
 * pp_free_pages_bulk - free @nr order-0 pages (NULL entries are skipped).
 * One thread-cache operation, inline when the cache has room for all and
 * none is NULL; drains to the zone in batches.
 */
static inline void pp_free_pages_bulk(struct pp_allocator *alloc,
				      struct pp_page **pages,
				      unsigned long nr)
{
	if (PP_LIKELY(pp_tcache_free_array_(alloc, pages, nr)))
		return;
	pp_free_pages_bulk_slow(alloc, pages, nr);
}

/* pp_free_page_list - free every order-0 page on @list and empty it. */
PP_API void pp_free_page_list(struct pp_allocator *alloc,
			      struct pp_page_list *list);

/*
 * pp_virt_to_page - the descriptor of the page holding @addr, or NULL when
 * @addr lies in none of the allocator's arenas. O(number of zones).
 */
PP_API struct pp_page *pp_virt_to_page(const struct pp_allocator *alloc,
				       const void *addr);

/* pp_page_arena - the arena a page belongs to. */
PP_API struct pp_arena *pp_page_arena(const struct pp_allocator *alloc,
				      const struct pp_page *page);

/* pp_page_to_nid - the NUMA node of the zone a page belongs to. */
PP_API int pp_page_to_nid(const struct pp_allocator *alloc,
			  const struct pp_page *page);

/* pp_allocator_max_order - the largest order every zone can serve. */
PP_API unsigned int pp_allocator_max_order(const struct pp_allocator *alloc);

/* pp_allocator_drain_thread - return the calling thread's caches to the
 * zones now (threads do this by themselves when they exit). */
PP_API void pp_allocator_drain_thread(struct pp_allocator *alloc);

struct pp_zone_stats {
	int node;
	unsigned long managed_pages;   /* pages in the zone */
	unsigned long free_pages;      /* in the buddy lists */
	unsigned long thread_cache_pages;       /* in all threads' caches */
	unsigned long wmark_low;
	/* Counted once per call (per batch for refill and drain). */
	uint64_t alloc_calls;          /* single-page or higher-order calls,
					* and bulk calls that took the
					* single-page path */
	uint64_t bulk_calls;           /* bulk calls served by the fast path */
	uint64_t pages_allocated;
	uint64_t pages_freed;
	uint64_t thread_cache_refills;          /* zone -> thread cache batches */
	uint64_t thread_cache_drains;           /* thread cache -> zone batches */
	uint64_t remote_drains;        /* other threads' caches drained */
	uint64_t alloc_failed;         /* calls that returned no page */
};

PP_API unsigned int pp_allocator_zone_count(const struct pp_allocator *alloc);
/*
 * pp_allocator_zone_stats - zone @zone's statistics: its own counters
 * plus every thread cache's. Any thread, at any time, at no cost to the
 * threads that allocate: the figures are read with plain (relaxed)
 * loads, holding only a lock that allocations and frees do not take; no
 * thread is stopped and no IPI is sent, so a monitor may poll it.
 *
 * While other threads use the allocator the figures are approximate:
 * each is whole, and a counter never goes back between two reads, but
 * they are not one snapshot. free_pages + thread_cache_pages may miss or
 * count twice a batch on its way between a cache and the zone
 * (thread_cache_pages is clamped so that the sum never exceeds
 * managed_pages). Once those threads are quiescent (joined, or waiting on
 * something the caller synchronised with), the figures are exact. For an
 * exact picture of a running allocator use pp_allocator_check(), which
 * stops every thread. Returns 0, or -EINVAL for an index past the last
 * zone.
 */
PP_API int pp_allocator_zone_stats(struct pp_allocator *alloc,
				   unsigned int zone,
				   struct pp_zone_stats *out);

/*
 * pp_allocator_stats_json - write all zones' statistics as one JSON object
 * into @buf, read as pp_allocator_zone_stats() reads them (any thread,
 * approximate while threads run). Returns the length snprintf would
 * write (may be >= @len).
 */
PP_API int pp_allocator_stats_json(struct pp_allocator *alloc, char *buf,
				   size_t len);

/*
 * pp_allocator_check - the invariant walker: every page is in exactly one
 * of buddy lists, thread caches or allocated; buddies are aligned and not
 * mergeable; counters match the lists. Returns 0 or -EFAULT with a message
 * naming the first broken invariant. Takes every lock and holds every
 * thread's cache (a membarrier() IPI): slow, for tests, never a monitor.
 * @allocated_out (may be NULL) receives the number of pages allocated.
 */
PP_API int pp_allocator_check(struct pp_allocator *alloc,
			      unsigned long *allocated_out);

/*
 * Growth (doc/growth.md). A zone over a growable arena grows by one step
 * when its free pages fall below grow_wmark, and gives steps back once
 * its free pages have stayed above shrink_wmark for shrink_delay_ms: it
 * isolates its highest step (pages freed there leave the free lists) and
 * returns it to the kernel when the last of its pages is free. A thread
 * of the allocator's own ("pp-grow") does both, polling every
 * millisecond; allocations and frees never wait for it and never call
 * the kernel for it.
 */
struct pp_zone_growth {
	size_t sz;                 /* sizeof(struct pp_zone_growth), set by
				    * the caller: newer fields are left
				    * alone for an older one */
	bool growable;
	bool pinned;               /* a consumer registered it once */
	size_t committed_bytes;
	size_t min_bytes;
	size_t max_bytes;
	size_t step_bytes;
	unsigned long free_pages;
	unsigned long isolated_pages; /* free, in steps being given back */
	uint64_t grows;
	uint64_t grow_failures;
	uint64_t shrinks;
	uint64_t drains_cancelled; /* isolations undone: memory was wanted */
	int last_error;            /* -errno of the last failed growth, or 0 */
};

/* Returns 0, or -EINVAL (zone past the last, @out NULL or out->sz 0). */
PP_API int pp_allocator_zone_growth(struct pp_allocator *alloc,
				    unsigned int zone,
				    struct pp_zone_growth *out);

/*
 * pp_allocator_grow - grow zone @zone by one step now (see pp_arena_grow
 * in doc/growth.md for what a step does). Returns 0, or -errno after a
 * message, the zone unchanged: -EINVAL (no such zone, or a fixed arena),
 * -ENOSPC (at max_size), -EPERM (pinned by a consumer that registered it
 * once: an AF_XDP UMEM), -ENOMEM (hugepages or memlock short), or a DMA
 * domain's mapping error. Control path, any thread.
 */
PP_API int pp_allocator_grow(struct pp_allocator *alloc, unsigned int zone);

/*
 * pp_allocator_shrink - give back now every step of zone @zone (above its
 * minimum) whose pages are all free, after returning every thread's cache
 * to the zones. Returns the number of steps given back, or -EINVAL.
 * Control path, any thread; it pauses each thread's cache for the drain,
 * as pp_allocator_check() does.
 */
PP_API long pp_allocator_shrink(struct pp_allocator *alloc, unsigned int zone);

/* ---- inline helpers ---- */

static inline void *pp_page_address(const struct pp_page *page)
{
	return page->addr;
}

static inline uint64_t pp_page_dma_addr(const struct pp_page *page)
{
	return page->dma_addr;
}

/*
 * pp_page_set_where - record that a pool's page went to the holder of
 * @stamp (pp_where_stamp()); one store, read racily by reports.
 * pp_page_where - the last one recorded.
 */
static inline void pp_page_set_where(struct pp_page *page, uint64_t stamp)
{
#if PP_HOLDERS
	__atomic_store_n(&page->pp_where, stamp, __ATOMIC_RELAXED);
#else
	(void)page;
	(void)stamp;
#endif
}

static inline uint64_t pp_page_where(const struct pp_page *page)
{
	return __atomic_load_n(&page->pp_where, __ATOMIC_RELAXED);
}

static inline uint32_t pp_page_ref_count(const struct pp_page *page)
{
	return __atomic_load_n(&page->refcount, __ATOMIC_RELAXED);
}

static inline void pp_page_ref_inc(struct pp_page *page)
{
	__atomic_fetch_add(&page->refcount, 1, __ATOMIC_RELAXED);
}

/*
 * pp_page_ref_dec_and_test - drop one reference; true when it was the last.
 * Acquire-release: the release orders this holder's writes to the page
 * before the drop; the acquire makes the final dropper, which frees the
 * page, see every other holder's writes (it pairs with their releases).
 * A locked decrement on x86 either way; and unlike a separate acquire
 * fence, ThreadSanitizer understands it.
 */
static inline bool pp_page_ref_dec_and_test(struct pp_page *page)
{
	return __atomic_sub_fetch(&page->refcount, 1, __ATOMIC_ACQ_REL) == 0;
}

/*
 * pp_put_page - drop a reference and free the block when it was the last.
 * The last holder owns the page outright, so it may put refcount back to 1
 * with a plain store: free pages keep refcount 1 (see pp_free_pages).
 */
static inline void pp_put_page(struct pp_allocator *alloc, struct pp_page *page)
{
	if (pp_page_ref_dec_and_test(page)) {
		__atomic_store_n(&page->refcount, 1, __ATOMIC_RELAXED);
		pp_free_pages(alloc, page, page->order);
	}
}

static inline void pp_page_list_init(struct pp_page_list *list)
{
	list->head = NULL;
	list->tail = NULL;
	list->count = 0;
}

static inline void pp_page_list_add_tail(struct pp_page_list *list,
					 struct pp_page *page)
{
	page->next = NULL;
	if (list->tail)
		list->tail->next = page;
	else
		list->head = page;
	list->tail = page;
	list->count++;
}

static inline struct pp_page *pp_page_list_pop(struct pp_page_list *list)
{
	struct pp_page *page = list->head;

	if (!page)
		return NULL;
	list->head = page->next;
	if (!list->head)
		list->tail = NULL;
	list->count--;
	page->next = NULL;
	return page;
}

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_PAGE_H */
