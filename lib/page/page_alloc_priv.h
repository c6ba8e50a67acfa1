/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_alloc_priv.h - the page allocator's insides, shared by its four
 * files: zones (zone.c), thread caches (thread_cache.c), the public
 * alloc/free calls (page_alloc.c) and the statistics and invariant
 * walker (page_check.c).
 * Never installed.
 *
 * Where a page can be, and who may touch its descriptor there:
 *   - in a zone's buddy lists (PP_PAGE_F_BUDDY on the block's head):
 *     the zone lock holder;
 *   - on a thread cache's stack: whoever holds the cache (its owner
 *     inside a call, see tcache_lock(), or a thread draining it);
 *   - allocated: the caller, except page->flags, which only the allocator
 *     writes, under the lock of the cache or zone the page enters or leaves.
 * A zone lock may be taken while holding a cache lock, never the reverse,
 * and the allocator's cache-list lock comes before both.
 */
#ifndef PP_PAGE_ALLOC_PRIV_H
#define PP_PAGE_ALLOC_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <pagepool/pp_config.h>
#include <pagepool/pp_page.h>

#include "pp_os_handshake.h"

/* Functions shared between the allocator's files but not exported. */
#ifndef PP_HIDDEN
#define PP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* 1 GiB / 4 KiB = 2^18: the largest block, one 1 GiB hugepage. */
#define PP_MAX_ORDER_LIMIT 18
/* doc/design.md: order 9 (2 MiB) for 4 KiB arenas too. */
#define PP_ORDER_4K_ARENA 9
/* Node masks are 64 bits wide, so zones are too. */
#define PP_MAX_ZONES 64

/* Defaults from the kernel's pcp lists (high 512 ~ 2 MiB, batch 63 ~ 64). */
#define PP_TCACHE_SIZE_DEFAULT 512
#define PP_TCACHE_BATCH_DEFAULT 64
/* Zone size / 256 for the bulk watermark: 0.4 %, a few batches per GiB. */
#define PP_WMARK_DIVISOR 256
/* Pages a zone's depot holds: two thread caches' worth at the defaults. */
#define PP_ZONE_DEPOT 1024

/* Debug level 2 fills freed pages with this byte and checks it on reuse. */
#define PP_POISON_BYTE 0x6b

/*
 * A growable zone's slots (doc/growth.md): one per slot of its arena.
 * ABSENT: not committed, its descriptors unused. LIVE: its free pages are
 * on the buddy lists. ISOLATING: being given back: its free blocks are
 * off the lists, marked PP_PAGE_F_ISOLATED on their head, and counted in
 * @isolated; pages freed into it join them instead of the lists. When
 * @isolated reaches the slot's size, every page is back and the slot can
 * leave. Under the zone lock; @state is also read racily by page_pool
 * (pp_page_growth.h), which only uses it as a hint.
 */
enum zone_slot_state {
	SLOT_ABSENT = 0,
	SLOT_LIVE,
	SLOT_ISOLATING,
};

struct zone_slot {
	uint8_t state;
	unsigned long isolated;
};

/* Growth statistics of a zone, written by the growth path under its
 * lock, read racily (relaxed) by pp_allocator_zone_growth(). */
struct zone_growth_counters {
	uint64_t grows;
	uint64_t grow_failures;
	uint64_t shrinks;
	uint64_t drains_cancelled;
	int last_error;
};

struct free_area {
	struct pp_page *head;	/* blocks of this order, through next/prev */
	unsigned long nr;	/* blocks on the list */
};

/*
 * Counters kept per zone and per thread cache (struct
 * pp_tcache_counters_, pp_tcache.h). A cache's are written only by its
 * owner thread with relaxed atomics (a load and a store, no locked
 * instruction) and read by the statistics calls with relaxed loads; they
 * need no ordering with anything, only to be whole. When a cache dies its
 * counters are added to its zone's with atomic adds.
 */

struct pp_zone {
	/* Hot: under @lock, except free_pages, read racily (see below). */
	pthread_mutex_t lock;
	/*
	 * Pages in the buddy lists. Written under @lock with relaxed stores
	 * and read without it by the bulk watermark check, which is a
	 * heuristic the kernel also makes without the lock.
	 */
	unsigned long free_pages;
	struct free_area area[PP_MAX_ORDER_LIMIT + 1];
	/*
	 * The depot: order-0 pages that thread caches gave back, kept as a
	 * stack of pointers instead of merged into the buddy lists, so that
	 * the next cache refill takes them with one copy. A thread that frees
	 * what another allocates (a consumer of a producer's pages) moves
	 * batches through here without touching a page descriptor, and holds
	 * the zone lock for a copy of 64 pointers, not 64 merges. Counted in
	 * free_pages. Merged into the buddy lists when a block of a higher
	 * order is wanted and none is free.
	 */
	struct pp_page **depot;
	unsigned int depot_count;

	/*
	 * Pages in slots being given back (see struct zone_slot), not
	 * counted in free_pages; and how many slots are ISOLATING, which
	 * the free paths test before looking a page's slot up.
	 */
	unsigned long isolated_pages;
	unsigned int nr_isolating;
	/* Committed pages: changes as the zone grows and shrinks. */
	unsigned long managed_pages;

	/* Read-only after pp_allocator_create(). */
	struct pp_page *pages __attribute__((aligned(PP_CACHE_LINE)));
	uintptr_t base;
	unsigned long span_pages;	/* descriptors: the arena's span */
	unsigned long slot_pages;
	unsigned int nr_slots;
	unsigned int min_slots;
	struct zone_slot *slots;
	struct zone_growth_counters growth;
	unsigned long wmark_low;
	unsigned int max_order;
	unsigned int index;
	int node;		/* the arena's node; < 0 when mixed/unknown */
	struct pp_arena *arena;
	struct pp_vm_area *pages_area;	/* @pages' area; NULL: heap */

	/* Batches (under @lock or not: atomic adds) and dead caches' sums. */
	uint64_t thread_cache_refills __attribute__((aligned(PP_CACHE_LINE)));
	uint64_t thread_cache_drains;
	uint64_t remote_drains;
	struct pp_tcache_counters_ retired;
} __attribute__((aligned(PP_CACHE_LINE)));

/*
 * struct pp_tcache - one thread's cache for one allocator (the kernel's
 * per-cpu pages, per thread here because userspace cannot pin a thread to
 * a CPU's data without restartable sequences).
 *
 * The owner uses it on every call; another thread only to drain it when
 * its zones ran dry, for the invariant walker and destroy. The statistics
 * only read its counters and counts (page_check.c), without holding it.
 * The owner and the drainers are kept apart by the handshake in v.hs
 * (pp_handshake.h says how, both ways: asymmetric, the owner paying no
 * atomic read-modify-write and the drainer a membarrier(), where that
 * works; a lock word elsewhere): the owner enters it for each call and
 * waits while a drainer holds it (tcache_lock()); a drainer holds it
 * for one pass over the stacks (pp_tcache_hold()).
 */
struct pp_tcache {
	unsigned int nr_zones;
	struct pp_allocator *alloc;
	/* On alloc->tcache_list, under tcache_list_lock. */
	struct pp_tcache *next, *prev;
	/*
	 * The handshake and the zones' stacks: the part the inline fast
	 * paths of pp_page.h use too (pp_tcache.h), last because its zones
	 * are a flexible array.
	 */
	struct pp_tcache_view_ v;
};

struct pp_allocator {
	/* Read by every call; the head is struct pp_allocator_view_. */
	uint64_t id;		/* unique per process lifetime; see tcache_get() */
	unsigned int nr_zones;
	unsigned int tcache_size;
	const unsigned long *z0_free;	/* &zones[0].free_pages */
	unsigned long z0_wmark_low;	/* zones[0].wmark_low */
	unsigned int tcache_batch;
	unsigned int max_order;	/* the smallest zone's */
	pthread_key_t key;	/* this thread's struct pp_tcache */

	/* The caches of all threads, for remote drain, stats and destroy. */
	pthread_mutex_t tcache_list_lock;
	struct pp_tcache *tcache_list;

	/* Growth (page_grow.c): one grower at a time, the thread or a caller. */
	struct pp_alloc_growth *growth;	/* NULL: no growable zone */
	/* Slots isolating in all zones, for page_pool's one-load test
	 * (pp_allocator_isolating_word()); written by the grower. */
	unsigned int isolating;

	struct pp_zone zones[];
};

/* ---- descriptors ---- */

/*
 * page->flags is read by other threads that hold only the zone lock (a
 * buddy merge looks at its neighbour, which may sit in some cache or be
 * allocated), so every access is a relaxed atomic. Writers never race
 * each other: the bits change only as the page moves between zone, cache
 * and caller, and each move is made under the lock of its destination or
 * source.
 */
static inline uint16_t page_flags(const struct pp_page *page)
{
	return __atomic_load_n(&page->flags, __ATOMIC_RELAXED);
}

static inline void page_set_flags(struct pp_page *page, uint16_t flags)
{
	__atomic_store_n(&page->flags, flags, __ATOMIC_RELAXED);
}

/*
 * An order-0 page leaving the buddy lists gets its handed-out state here,
 * once: refcount 1, order 0. It keeps that state while it moves between
 * callers and thread caches, because a free requires the caller to hold
 * the only reference (pp_put_page() restores refcount 1 before freeing),
 * so the hot paths through a thread cache write no descriptor at all, as
 * DPDK's mempool cache touches no object.
 */
static inline void page_prep_order0(struct pp_page *page)
{
	__atomic_store_n(&page->refcount, 1, __ATOMIC_RELAXED);
	page->order = 0;
}

static inline unsigned long page_index(const struct pp_zone *z,
				       const struct pp_page *page)
{
	return (unsigned long)(page - z->pages);
}

static inline struct pp_zone *page_zone(struct pp_allocator *alloc,
					const struct pp_page *page)
{
	return &alloc->zones[page->zone];
}

/* The zone whose descriptor array holds @page, or NULL (debug checks). */
static inline struct pp_zone *page_zone_checked(struct pp_allocator *alloc,
						const struct pp_page *page)
{
	for (unsigned int i = 0; i < alloc->nr_zones; i++) {
		struct pp_zone *z = &alloc->zones[i];
		uintptr_t off = (uintptr_t)page - (uintptr_t)z->pages;

		if (off < z->span_pages * sizeof(*page) &&
		    off % sizeof(*page) == 0)
			return z;
	}
	return NULL;
}

/* ---- zone.c: the zone lock must be held for all but init/fini ---- */

PP_HIDDEN int pp_zone_init(struct pp_zone *z, struct pp_arena *arena,
			   unsigned int index, unsigned long wmark_low);
PP_HIDDEN void pp_zone_fini(struct pp_zone *z);
/* Take up to @n order-0 pages into @out; returns how many. */
PP_HIDDEN unsigned int pp_zone_take_order0(struct pp_zone *z,
					   struct pp_page **out,
					   unsigned int n);
/* Give back @n order-0 pages, merging buddies. */
PP_HIDDEN void pp_zone_put_order0(struct pp_zone *z, struct pp_page **pages,
				  unsigned int n);
/* One block of 2^@order pages (head returned), or NULL. */
PP_HIDDEN struct pp_page *pp_zone_take_block(struct pp_zone *z,
					     unsigned int order);
PP_HIDDEN void pp_zone_put_block(struct pp_zone *z, struct pp_page *head,
				 unsigned int order);

/* zone.c's buddy list primitives, shared with zone_grow.c (lock held). */
PP_HIDDEN void zone_area_add(struct pp_zone *z, struct pp_page *page,
			     unsigned int order);
PP_HIDDEN void zone_area_del(struct pp_zone *z, struct pp_page *page,
			     unsigned int order);
PP_HIDDEN void zone_put_range(struct pp_zone *z, unsigned long start,
			      unsigned long end);
PP_HIDDEN void zone_merge_free(struct pp_zone *z, unsigned long idx,
			       unsigned int order);

/* ---- zone_grow.c: a growable zone's slots, the zone lock held ---- */

/* Slot @k's pages join the buddy lists (the arena committed it). */
PP_HIDDEN void pp_zone_slot_add(struct pp_zone *z, unsigned int k);
/* Isolate up to @max_pages pages' worth of slot @k's free blocks from
 * *@cursor on (the caller drops the lock between calls); the first call
 * (*@cursor 0) makes the slot ISOLATING. Returns true when the walk is
 * done. */
PP_HIDDEN bool pp_zone_slot_isolate(struct pp_zone *z, unsigned int k,
				    unsigned long *cursor,
				    unsigned long max_pages);
/* Put an ISOLATING slot's isolated pages back on the lists (LIVE). */
PP_HIDDEN void pp_zone_slot_cancel(struct pp_zone *z, unsigned int k);
/* An ISOLATING slot whose every page is isolated becomes ABSENT and
 * leaves the zone's counts; returns false (and does nothing) otherwise. */
PP_HIDDEN bool pp_zone_slot_remove(struct pp_zone *z, unsigned int k);
/* A LIVE slot whose every page is free leaves at once, as
 * pp_zone_slot_isolate() then pp_zone_slot_remove() would; returns false
 * (and does nothing) when a page of it is not free. */
PP_HIDDEN bool pp_zone_slot_take_free(struct pp_zone *z, unsigned int k);
/*
 * The free paths: when @idx lies in an ISOLATING slot, set the block
 * aside (isolated) and return true; the caller then neither lists nor
 * counts it as free.
 */
PP_HIDDEN bool pp_zone_isolate_freed(struct pp_zone *z, unsigned long idx,
				     unsigned int order);

static inline unsigned int zone_slot_of(const struct pp_zone *z,
					unsigned long idx)
{
	return (unsigned int)(idx / z->slot_pages);
}

/*
 * The zone lock: a pthread mutex, created adaptive where glibc offers it
 * (a short spin, then the futex). Not a pure spinlock: with more threads
 * than cores the holder may be preempted in its critical section, and
 * spinners would burn the holder's time slice (4 threads on 2 cores
 * livelock a naive spinlock). The lock is taken once per batch of 64
 * pages, so its ~20 ns uncontended cost is a fraction of a ns per page.
 */
static inline void zone_lock(struct pp_zone *z)
{
	pthread_mutex_lock(&z->lock);
}

static inline void zone_unlock(struct pp_zone *z)
{
	pthread_mutex_unlock(&z->lock);
}

static inline void zone_add_free(struct pp_zone *z, long delta)
{
	/* Lock held; the relaxed store pairs with zone_free_pages(). */
	__atomic_store_n(&z->free_pages, z->free_pages + (unsigned long)delta,
			 __ATOMIC_RELAXED);
}

static inline unsigned long zone_free_pages(const struct pp_zone *z)
{
	return __atomic_load_n(&z->free_pages, __ATOMIC_RELAXED);
}

static inline void zone_count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

/* ---- page_grow.c: growth policy and its thread ---- */

struct pp_allocator_opts;
/* After the zones are built: take the options, start "pp-grow" if a
 * zone is growable and the caller did not ask for manual resizing. */
PP_HIDDEN int pp_growth_start(struct pp_allocator *alloc,
			      const struct pp_allocator_opts *opts);
/* Stop and join the thread, free the state (destroy). */
PP_HIDDEN void pp_growth_stop(struct pp_allocator *alloc);
/* Check the growth options (pp_allocator_create). */
PP_HIDDEN int pp_growth_check_opts(const struct pp_allocator_opts *opts);

/* ---- thread_cache.c ---- */

/*
 * The calling thread's memo of the last allocator it used,
 * pp_tcache_memo_ (pp_tcache.h): comparing an id is cheaper than
 * pthread_getspecific(), a library call. The id, not the pointer, is
 * compared, so that an allocator destroyed and another created at the
 * same address never finds the dead one's cache.
 */
PP_HIDDEN struct pp_tcache *pp_tcache_get_slow(struct pp_allocator *alloc);
/*
 * Another thread's hold on caches: pp_tcache_hold_all() holds every cache of
 * @alloc (the caller holds tcache_list_lock), with one membarrier for all;
 * pp_tcache_hold() one cache. Released by the matching release call.
 */
PP_HIDDEN void pp_tcache_hold_all(struct pp_allocator *alloc);
PP_HIDDEN void pp_tcache_release_all(struct pp_allocator *alloc);
PP_HIDDEN void pp_tcache_hold(struct pp_tcache *tc);
PP_HIDDEN void pp_tcache_release(struct pp_tcache *tc);
PP_HIDDEN void pp_tcache_destructor(void *arg);
/* Return @tc's pages of every zone (its lock held). */
PP_HIDDEN void pp_tcache_drain_locked(struct pp_tcache *tc, bool remote);
/* Drain every thread's cache into the zones; returns pages moved. */
PP_HIDDEN unsigned long pp_tcache_drain_all(struct pp_allocator *alloc);
/* Drain and free every cache (destroy); the caller holds tcache_list_lock. */
PP_HIDDEN void pp_tcache_free_all(struct pp_allocator *alloc);
PP_HIDDEN void pp_tcache_fold_counters(struct pp_tcache *tc);

/* The calling thread's cache, made on first use; NULL if out of memory. */
static inline struct pp_tcache *tcache_get(struct pp_allocator *alloc)
{
	if (PP_LIKELY(pp_tcache_memo_.id == alloc->id))
		return pp_tcache_memo_.tc;
	return pp_tcache_get_slow(alloc);
}

/*
 * The owner enters its cache for one call, either way of the handshake:
 * asymmetric, the inline paths' entry (pp_tcache_enter_()); waiting
 * while another thread holds the cache.
 */
static inline void tcache_lock(struct pp_tcache *tc)
{
	pp_handshake_enter(&tc->v.hs);
}

/* The call's changes to the stack are seen by the next holder. */
static inline void tcache_unlock(struct pp_tcache *tc)
{
	pp_handshake_exit(&tc->v.hs);
}

/* Owner-only counter update; see struct pp_tcache_counters_. */
/* The inline paths' owner-only counter update (pp_tcache.h). */
static inline void counter_add(uint64_t *c, uint64_t n)
{
	pp_tcache_count_(c, n);
}

static inline uint64_t counter_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* Every write of a stack's count (the cache held): the statistics read
 * it without holding the cache (pp_tcache_set_count_()). */
static inline void tcache_set_count(struct pp_tcache_zone_ *tcz,
				    unsigned int n)
{
	pp_tcache_set_count_(tcz, n);
}

#endif /* PP_PAGE_ALLOC_PRIV_H */
