/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_grow.c - when a growable zone grows and shrinks (doc/growth.md),
 * and the thread that does it.
 *
 * The data path never waits for growth and never calls the kernel for
 * it: allocations and frees only move pages between lists, as always.
 * The "pp-grow" thread polls each zone's free count every millisecond
 * (one relaxed load of a word the allocation paths write anyway) and:
 *   - below grow_wmark: first takes back a slot being given back (its
 *     isolated pages rejoin the lists at once), else commits a new slot:
 *     pp_arena_grow() builds it and maps it in every DMA domain, and only
 *     then do its pages join the buddy lists;
 *   - above shrink_wmark for shrink_delay_ms: isolates the highest live
 *     slot (a walk in pieces, the zone lock dropped between them), and
 *     each tick removes the isolating slots whose pages are all back and
 *     gives them to the kernel (pp_arena_release()).
 * shrink_wmark is at least grow_wmark plus a slot, so taking a slot out
 * of a zone above it never pushes the zone below grow_wmark: no
 * oscillation.
 *
 * pp_allocator_grow() and pp_allocator_shrink() do the same steps for a
 * caller; growth_lock keeps one grower at a time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pp_log.h"
#include "pp_arena_user.h"
#include "pp_os_fault.h"
#include "pp_page_growth.h"
#include "page_alloc_priv.h"

#define GROW_POLL_NS 1000000L	/* 1 ms */
/* After a failed growth, wait this long before trying again. */
#define GROW_BACKOFF_NS 1000000000LL
/* Descriptors walked per hold of the zone lock while isolating. */
#define ISOLATE_CHUNK 512
#define SHRINK_DELAY_MS_DEFAULT 1000

struct zone_policy {
	unsigned long grow_wmark;
	unsigned long shrink_wmark;
	int64_t above_since;	/* ns; 0: not above shrink_wmark */
	int64_t retry_at;	/* ns; a failed growth waits until then */
};

struct pp_alloc_growth {
	pthread_mutex_t lock;	/* one grower at a time */
	pthread_t thread;
	bool thread_started;
	bool stop;		/* atomic */
	int64_t shrink_delay_ns;
	struct zone_policy zone[PP_MAX_ZONES];
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* After any isolation, cancel or removal: the count page_pool reads. */
static void publish_isolating(struct pp_allocator *alloc)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < alloc->nr_zones; i++)
		n += __atomic_load_n(&alloc->zones[i].nr_isolating,
				     __ATOMIC_RELAXED);
	__atomic_store_n(&alloc->isolating, n, __ATOMIC_RELAXED);
}

static bool zone_growable(const struct pp_zone *z)
{
	return z->nr_slots > z->min_slots;
}

int pp_growth_check_opts(const struct pp_allocator_opts *o)
{
	if (o->flags & ~(unsigned int)PP_ALLOCATOR_F_MANUAL_RESIZE) {
		PP_ERR("pp_allocator_create: unknown flags %#x",
		       o->flags & ~(unsigned int)PP_ALLOCATOR_F_MANUAL_RESIZE);
		return -EINVAL;
	}
	if (o->shrink_wmark && o->shrink_wmark <= o->grow_wmark) {
		PP_ERR("pp_allocator_create: shrink_wmark %lu must be above grow_wmark %lu (by a grow step at least): a zone would give back memory it then has to grow again",
		       o->shrink_wmark, o->grow_wmark);
		return -EINVAL;
	}
	return 0;
}

/* ---- one zone's steps, growth->lock held ---- */

static int grow_zone(struct pp_zone *z)
{
	int k = pp_arena_grow(z->arena);

	if (k < 0) {
		zone_count(&z->growth.grow_failures, 1);
		__atomic_store_n(&z->growth.last_error, k, __ATOMIC_RELAXED);
		return k;
	}
	zone_lock(z);
	pp_zone_slot_add(z, (unsigned int)k);
	zone_unlock(z);
	zone_count(&z->growth.grows, 1);
	return 0;
}

/* Take back the isolating slot with the most pages set aside. */
static bool cancel_one(struct pp_zone *z)
{
	unsigned int best = 0;
	unsigned long most = 0;
	bool found = false;

	zone_lock(z);
	for (unsigned int k = z->min_slots; k < z->nr_slots; k++) {
		if (z->slots[k].state == SLOT_ISOLATING &&
		    (!found || z->slots[k].isolated > most)) {
			best = k;
			most = z->slots[k].isolated;
			found = true;
		}
	}
	if (found)
		pp_zone_slot_cancel(z, best);
	zone_unlock(z);
	if (found)
		zone_count(&z->growth.drains_cancelled, 1);
	return found;
}

/* Isolate slot @k, a piece at a time so allocations never wait long. */
static void isolate_slot(struct pp_zone *z, unsigned int k)
{
	unsigned long cursor = 0;
	bool done;

	do {
		zone_lock(z);
		done = pp_zone_slot_isolate(z, k, &cursor, ISOLATE_CHUNK);
		zone_unlock(z);
	} while (!done);
}

/* Slot @k left the zone: the arena gives it back (or, pinned meanwhile,
 * keeps it, and the slot rejoins the zone). */
static bool release_slot(struct pp_zone *z, unsigned int k)
{
	if (pp_arena_release(z->arena, k)) {
		zone_lock(z);
		pp_zone_slot_add(z, k);
		zone_unlock(z);
		return false;
	}
	zone_count(&z->growth.shrinks, 1);
	return true;
}

/* Remove and give back every isolating slot whose pages are all back. */
static long release_done(struct pp_zone *z)
{
	long released = 0;

	for (unsigned int k = z->nr_slots; k-- > z->min_slots;) {
		bool removed;

		if (__atomic_load_n(&z->slots[k].state, __ATOMIC_RELAXED) !=
		    SLOT_ISOLATING)
			continue;
		zone_lock(z);
		removed = pp_zone_slot_remove(z, k);
		zone_unlock(z);
		/* No page of it is anywhere now: not listed, not cached,
		 * not allocated. */
		if (removed && release_slot(z, k))
			released++;
	}
	return released;
}

/*
 * Pages the isolating slots still have out: each will come back to be set
 * aside, and what it served will then be served from the zone's free
 * pages. Read racily; a hint for the next isolation.
 */
static unsigned long pending_pages(const struct pp_zone *z)
{
	unsigned long pending = 0;

	for (unsigned int k = z->min_slots; k < z->nr_slots; k++)
		if (__atomic_load_n(&z->slots[k].state, __ATOMIC_RELAXED) ==
		    SLOT_ISOLATING)
			pending += z->slot_pages -
				   __atomic_load_n(&z->slots[k].isolated,
						   __ATOMIC_RELAXED);
	return pending;
}

/* The highest live slot above the minimum, or -1. */
static int highest_live(struct pp_zone *z)
{
	for (unsigned int k = z->nr_slots; k-- > z->min_slots;)
		if (__atomic_load_n(&z->slots[k].state, __ATOMIC_RELAXED) ==
		    SLOT_LIVE)
			return (int)k;
	return -1;
}

static void zone_tick(struct pp_allocator *alloc, struct pp_alloc_growth *g,
		      unsigned int i, int64_t now)
{
	struct pp_zone *z = &alloc->zones[i];
	struct zone_policy *p = &g->zone[i];
	unsigned long free = zone_free_pages(z);
	int k;

	if (free < p->grow_wmark) {
		p->above_since = 0;
		if (cancel_one(z) || now < p->retry_at ||
		    __atomic_load_n(&z->managed_pages, __ATOMIC_RELAXED) >=
			    (unsigned long)z->nr_slots * z->slot_pages)
			return;
		if (grow_zone(z))
			p->retry_at = now + GROW_BACKOFF_NS;
		return;
	}
	release_done(z);
	/*
	 * Above the mark once what the isolating slots still have out has
	 * come back and been replaced from the free pages: isolating more
	 * before then would take the zone below grow_wmark as they drain,
	 * and undo it all at the next rise.
	 */
	if (free <= p->shrink_wmark + pending_pages(z) ||
	    pp_arena_pinned(z->arena)) {
		p->above_since = 0;
		return;
	}
	if (!p->above_since) {
		p->above_since = now;
		return;
	}
	if (now - p->above_since < g->shrink_delay_ns)
		return;
	k = highest_live(z);
	if (k < 0)
		return;
	/* Thread caches hold pages of every slot: return them first. */
	if (!__atomic_load_n(&z->nr_isolating, __ATOMIC_RELAXED))
		pp_tcache_drain_all(alloc);
	isolate_slot(z, (unsigned int)k);
}

static void *growth_thread(void *arg)
{
	struct pp_allocator *alloc = arg;
	struct pp_alloc_growth *g = alloc->growth;
	struct timespec poll = { 0, GROW_POLL_NS };

	while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
		int64_t now = now_ns();

		pthread_mutex_lock(&g->lock);
		for (unsigned int i = 0; i < alloc->nr_zones; i++)
			if (zone_growable(&alloc->zones[i]))
				zone_tick(alloc, g, i, now);
		publish_isolating(alloc);
		pthread_mutex_unlock(&g->lock);
		nanosleep(&poll, NULL);
	}
	return NULL;
}

int pp_growth_start(struct pp_allocator *alloc,
		    const struct pp_allocator_opts *opts)
{
	struct pp_alloc_growth *g;
	bool any = false;
	int err;

	for (unsigned int i = 0; i < alloc->nr_zones; i++)
		any |= zone_growable(&alloc->zones[i]);
	if (!any)
		return 0;
	g = pp_os_calloc(1, sizeof(*g));
	if (!g) {
		PP_ERR("pp_allocator_create: out of memory for the growth state");
		return -ENOMEM;
	}
	g->shrink_delay_ns = (int64_t)(opts->shrink_delay_ms ?
				       opts->shrink_delay_ms :
				       SHRINK_DELAY_MS_DEFAULT) * 1000000LL;
	for (unsigned int i = 0; i < alloc->nr_zones; i++) {
		struct pp_zone *z = &alloc->zones[i];
		struct zone_policy *p = &g->zone[i];

		/*
		 * A step of headroom: a step takes 7-9 ms to commit (32 MiB,
		 * doc/growth.md), and half a step lost frames at a rise of
		 * 560,000 buffers a second. Give back above two steps.
		 */
		p->grow_wmark = opts->grow_wmark ? opts->grow_wmark :
						   z->slot_pages;
		p->shrink_wmark = opts->shrink_wmark ?
					  opts->shrink_wmark :
					  p->grow_wmark + z->slot_pages;
		if (zone_growable(z) && p->shrink_wmark <
						p->grow_wmark + z->slot_pages) {
			PP_ERR("pp_allocator_create: arena '%s': shrink_wmark %lu is less than grow_wmark %lu plus a grow step (%lu pages): raise it, or a zone would give back memory it then has to grow again",
			       pp_arena_name(z->arena), p->shrink_wmark,
			       p->grow_wmark, z->slot_pages);
			free(g);
			return -EINVAL;
		}
	}
	err = -pthread_mutex_init(&g->lock, NULL);
	if (err) {
		free(g);
		return err;
	}
	alloc->growth = g;
	if (opts->flags & PP_ALLOCATOR_F_MANUAL_RESIZE)
		return 0;
	err = PP_OS_FAULT(EAGAIN);
	if (!err)
		err = pthread_create(&g->thread, NULL, growth_thread, alloc);
	if (err) {
		PP_ERR("pp_allocator_create: cannot start the growth thread: %s (raise the thread limit, or pass PP_ALLOCATOR_F_MANUAL_RESIZE and grow from your own control thread)",
		       strerror(err));
		pthread_mutex_destroy(&g->lock);
		free(g);
		alloc->growth = NULL;
		return -err;
	}
	pthread_setname_np(g->thread, "pp-grow");
	g->thread_started = true;
	return 0;
}

void pp_growth_stop(struct pp_allocator *alloc)
{
	struct pp_alloc_growth *g = alloc->growth;

	if (!g)
		return;
	if (g->thread_started) {
		__atomic_store_n(&g->stop, true, __ATOMIC_RELEASE);
		pthread_join(g->thread, NULL);
	}
	pthread_mutex_destroy(&g->lock);
	free(g);
	alloc->growth = NULL;
}

/* ---- the public calls ---- */

static struct pp_zone *growable_zone(struct pp_allocator *alloc,
				     unsigned int zone, const char *fn)
{
	if (!alloc || zone >= alloc->nr_zones) {
		PP_ERR("%s: no zone %u", fn, zone);
		return NULL;
	}
	if (!alloc->growth || !zone_growable(&alloc->zones[zone])) {
		PP_ERR("%s: zone %u's arena '%s' is fixed: create it with pp_arena_opts.max_size above its size to make it growable",
		       fn, zone, pp_arena_name(alloc->zones[zone].arena));
		return NULL;
	}
	return &alloc->zones[zone];
}

int pp_allocator_grow(struct pp_allocator *alloc, unsigned int zone)
{
	struct pp_zone *z = growable_zone(alloc, zone, "pp_allocator_grow");
	int err;

	if (!z)
		return -EINVAL;
	pthread_mutex_lock(&alloc->growth->lock);
	err = grow_zone(z);
	pthread_mutex_unlock(&alloc->growth->lock);
	return err;
}

long pp_allocator_shrink(struct pp_allocator *alloc, unsigned int zone)
{
	struct pp_zone *z = growable_zone(alloc, zone, "pp_allocator_shrink");
	long released;

	if (!z)
		return -EINVAL;
	if (pp_arena_pinned(z->arena))
		return 0;
	pthread_mutex_lock(&alloc->growth->lock);
	pp_tcache_drain_all(alloc);
	/* Isolating slots whose last pages came back meanwhile, then every
	 * live slot that is all free now; a slot with a page out is not
	 * touched, so allocations go on from it meanwhile. */
	released = release_done(z);
	for (unsigned int k = z->nr_slots; k-- > z->min_slots;) {
		bool taken;

		zone_lock(z);
		taken = pp_zone_slot_take_free(z, k);
		zone_unlock(z);
		if (taken && release_slot(z, k))
			released++;
	}
	publish_isolating(alloc);
	pthread_mutex_unlock(&alloc->growth->lock);
	return released;
}

int pp_allocator_zone_growth(struct pp_allocator *alloc, unsigned int zone,
			     struct pp_zone_growth *out)
{
	struct pp_zone_growth g = { 0 };
	const struct pp_zone *z;
	size_t n;

	if (!alloc || zone >= alloc->nr_zones || !out || !out->sz)
		return -EINVAL;
	z = &alloc->zones[zone];
	g.sz = sizeof(g);
	g.growable = zone_growable(z);
	g.pinned = pp_arena_pinned(z->arena);
	g.committed_bytes = pp_arena_committed(z->arena);
	g.min_bytes = (size_t)z->min_slots * z->slot_pages << PP_PAGE_SHIFT;
	g.max_bytes = (size_t)z->nr_slots * z->slot_pages << PP_PAGE_SHIFT;
	g.step_bytes = (size_t)z->slot_pages << PP_PAGE_SHIFT;
	g.free_pages = zone_free_pages(z);
	g.isolated_pages = __atomic_load_n(&z->isolated_pages,
					   __ATOMIC_RELAXED);
	g.grows = __atomic_load_n(&z->growth.grows, __ATOMIC_RELAXED);
	g.grow_failures = __atomic_load_n(&z->growth.grow_failures,
					  __ATOMIC_RELAXED);
	g.shrinks = __atomic_load_n(&z->growth.shrinks, __ATOMIC_RELAXED);
	g.drains_cancelled = __atomic_load_n(&z->growth.drains_cancelled,
					     __ATOMIC_RELAXED);
	g.last_error = __atomic_load_n(&z->growth.last_error,
				       __ATOMIC_RELAXED);
	/* An older caller's struct is shorter: fill what it has. */
	n = out->sz < sizeof(g) ? out->sz : sizeof(g);
	memcpy(out, &g, n);
	out->sz = n;
	return 0;
}

/* ---- for page_pool (pp_page_growth.h) ---- */

const unsigned int *pp_allocator_isolating_word(const struct pp_allocator *alloc)
{
	return &alloc->isolating;
}

bool pp_page_in_isolating_slot(const struct pp_allocator *alloc,
			       const struct pp_page *page)
{
	const struct pp_zone *z = &alloc->zones[page->zone];
	unsigned int k = zone_slot_of(z, page_index(z, page));

	return __atomic_load_n(&z->slots[k].state, __ATOMIC_RELAXED) ==
	       SLOT_ISOLATING;
}
