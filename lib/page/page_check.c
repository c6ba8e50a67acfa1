/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_check.c - looking at the allocator from outside the data path:
 * statistics per zone (zone counters plus every live thread cache's), the
 * same as JSON, and pp_allocator_check(), the invariant walker that tests
 * run after every step.
 *
 * The statistics are for any thread at any time, so they cost the
 * threads that allocate nothing: they read the zone's and each cache's
 * counters and stack counts with relaxed loads, holding only the list
 * lock (which no allocation or free takes but a thread's first and last,
 * and a drain of every cache when the zones ran dry), and never hold a
 * cache: holding every cache stops each owner and sends a membarrier()
 * IPI to every CPU running a thread, which cut another thread's fast
 * path to 0.01x with a reader in a loop. Only the walker, which needs
 * one exact picture, still holds them all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "pp_strbuf.h"
#include "pp_os_fault.h"
#include "page_alloc_priv.h"

static void add_counters(struct pp_zone_stats *out, const struct pp_tcache_counters_ *c)
{
	out->alloc_calls += counter_read(&c->alloc_calls);
	out->bulk_calls += counter_read(&c->bulk_calls);
	out->pages_allocated += counter_read(&c->pages_allocated);
	out->pages_freed += counter_read(&c->pages_freed);
	out->alloc_failed += counter_read(&c->alloc_failed);
}

int pp_allocator_zone_stats(struct pp_allocator *alloc, unsigned int zone,
			    struct pp_zone_stats *out)
{
	unsigned long cached = 0;
	struct pp_zone *z;

	if (!alloc || !out || zone >= alloc->nr_zones)
		return -EINVAL;
	z = &alloc->zones[zone];
	memset(out, 0, sizeof(*out));
	out->node = z->node;
	out->managed_pages = __atomic_load_n(&z->managed_pages,
					     __ATOMIC_RELAXED);
	out->free_pages = zone_free_pages(z);
	out->wmark_low = z->wmark_low;
	out->thread_cache_refills = counter_read(&z->thread_cache_refills);
	out->thread_cache_drains = counter_read(&z->thread_cache_drains);
	out->remote_drains = counter_read(&z->remote_drains);

	/*
	 * The list lock keeps each cache alive and its counters out of
	 * @retired while we read both (a dying cache is unlinked and folded
	 * under it), so no cache is counted twice or missed, and each
	 * counter only grows. The stacks' counts move as we read them: a
	 * batch between a cache and the zone may be seen on both sides, or
	 * neither.
	 */
	pthread_mutex_lock(&alloc->tcache_list_lock);
	add_counters(out, &z->retired);
	for (struct pp_tcache *tc = alloc->tcache_list; tc; tc = tc->next) {
		cached += __atomic_load_n(&tc->v.z[zone].count,
					  __ATOMIC_RELAXED);
		add_counters(out, &tc->v.z[zone].c);
	}
	pthread_mutex_unlock(&alloc->tcache_list_lock);
	/* Seen on both sides: never report more pages than the zone has. */
	if (cached > out->managed_pages - out->free_pages)
		cached = out->managed_pages - out->free_pages;
	out->thread_cache_pages = cached;
	return 0;
}

int pp_allocator_stats_json(struct pp_allocator *alloc, char *buf, size_t len)
{
	struct pp_strbuf o = { buf, len, 0 };

	if (buf && len)
		buf[0] = '\0';
	pp_strbuf_printf(&o, "{\"zones\":[");
	for (unsigned int i = 0; i < alloc->nr_zones; i++) {
		struct pp_zone_growth g = { .sz = sizeof(g) };
		struct pp_zone_stats s;

		pp_allocator_zone_stats(alloc, i, &s);
		pp_strbuf_printf(&o,
			   "%s{\"zone\":%u,\"node\":%d,\"managed_pages\":%lu,"
			   "\"free_pages\":%lu,\"thread_cache_pages\":%lu,"
			   "\"wmark_low\":%lu,\"alloc_calls\":%llu,"
			   "\"bulk_calls\":%llu,\"pages_allocated\":%llu,"
			   "\"pages_freed\":%llu,\"thread_cache_refills\":%llu,"
			   "\"thread_cache_drains\":%llu,\"remote_drains\":%llu,"
			   "\"alloc_failed\":%llu",
			   i ? "," : "", i, s.node, s.managed_pages,
			   s.free_pages, s.thread_cache_pages, s.wmark_low,
			   (unsigned long long)s.alloc_calls,
			   (unsigned long long)s.bulk_calls,
			   (unsigned long long)s.pages_allocated,
			   (unsigned long long)s.pages_freed,
			   (unsigned long long)s.thread_cache_refills,
			   (unsigned long long)s.thread_cache_drains,
			   (unsigned long long)s.remote_drains,
			   (unsigned long long)s.alloc_failed);
		/* Growth: under "growth", present for fixed zones too, so a
		 * collector reads one shape (growable false). */
		pp_allocator_zone_growth(alloc, i, &g);
		pp_strbuf_printf(&o,
			   ",\"growth\":{\"growable\":%s,\"pinned\":%s,"
			   "\"committed_bytes\":%zu,\"min_bytes\":%zu,"
			   "\"max_bytes\":%zu,\"step_bytes\":%zu,"
			   "\"isolated_pages\":%lu,\"grows\":%llu,"
			   "\"grow_failures\":%llu,\"shrinks\":%llu,"
			   "\"drains_cancelled\":%llu,\"last_error\":%d}}",
			   g.growable ? "true" : "false",
			   g.pinned ? "true" : "false", g.committed_bytes,
			   g.min_bytes, g.max_bytes, g.step_bytes,
			   g.isolated_pages, (unsigned long long)g.grows,
			   (unsigned long long)g.grow_failures,
			   (unsigned long long)g.shrinks,
			   (unsigned long long)g.drains_cancelled,
			   g.last_error);
	}
	pp_strbuf_printf(&o, "]}");
	return (int)o.pos;
}

/* ---- the invariant walker ---- */

enum where {
	NOWHERE = 0,
	IN_BUDDY,
	IN_TCACHE,
	IN_CALLER,
	IN_DEPOT,
	IN_ABSENT,
	IN_ISOLATED,
};

#define BROKEN(...)                                                         \
	do {                                                                \
		PP_ERR("pp_allocator_check: " __VA_ARGS__);                 \
		return -EFAULT;                                             \
	} while (0)

static int mark(struct pp_zone *z, unsigned char *where, unsigned long idx,
		unsigned long n, enum where w)
{
	static const char *const names[] = { "nowhere", "a buddy list",
					      "a thread cache", "the caller",
					      "the zone's depot",
					      "a slot not committed",
					      "a slot being given back" };

	for (unsigned long i = idx; i < idx + n; i++) {
		if (where[i] != NOWHERE)
			BROKEN("page %lu of zone %u is in %s and in %s", i,
			       z->index, names[where[i]], names[w]);
		where[i] = (unsigned char)w;
	}
	return 0;
}

/* Buddy lists: aligned blocks, marked heads, unmergeable, counted. */
static int check_buddy(struct pp_zone *z, unsigned char *where)
{
	unsigned long pages = 0;

	for (unsigned int o = 0; o <= PP_MAX_ORDER_LIMIT; o++) {
		struct free_area *fa = &z->area[o];
		struct pp_page *prev = NULL;
		unsigned long blocks = 0;

		if (o > z->max_order && (fa->head || fa->nr))
			BROKEN("zone %u has blocks of order %u above its max order %u",
			       z->index, o, z->max_order);
		for (struct pp_page *p = fa->head; p; prev = p, p = p->next) {
			uintptr_t off = (uintptr_t)p - (uintptr_t)z->pages;
			unsigned long idx, buddy;

			if (off >= z->span_pages * sizeof(*p) ||
			    off % sizeof(*p))
				BROKEN("zone %u's order-%u list holds %p, not one of its descriptors",
				       z->index, o, (void *)p);
			idx = off / sizeof(*p);
			if (p->prev != prev)
				BROKEN("zone %u: page %lu's back link on the order-%u list is wrong",
				       z->index, idx, o);
			if (!(page_flags(p) & PP_PAGE_F_BUDDY) || p->order != o)
				BROKEN("zone %u: page %lu is on the order-%u list but marked %s order %u",
				       z->index, idx, o,
				       page_flags(p) & PP_PAGE_F_BUDDY ?
				       "free with" : "not free, with",
				       p->order);
			if (idx & ((1UL << o) - 1) ||
			    idx + (1UL << o) > z->span_pages)
				BROKEN("zone %u: order-%u block at page %lu is misaligned or runs past the zone",
				       z->index, o, idx);
			if (PP_DEBUG >= 1 &&
			    page_flags(p) & PP_PAGE_F_ALLOCATED)
				BROKEN("zone %u: free block at page %lu is marked allocated",
				       z->index, idx);
			buddy = idx ^ (1UL << o);
			if (o < z->max_order && buddy < z->span_pages &&
			    page_flags(&z->pages[buddy]) & PP_PAGE_F_BUDDY &&
			    z->pages[buddy].order == o)
				BROKEN("zone %u: free order-%u blocks at pages %lu and %lu are buddies left unmerged",
				       z->index, o, idx, buddy);
			if (mark(z, where, idx, 1UL << o, IN_BUDDY))
				return -EFAULT;
			if (++blocks > z->span_pages)
				BROKEN("zone %u: the order-%u list loops",
				       z->index, o);
			pages += 1UL << o;
		}
		if (blocks != fa->nr)
			BROKEN("zone %u: the order-%u list holds %lu blocks but counts %lu",
			       z->index, o, blocks, fa->nr);
	}
	if (pages + z->depot_count != z->free_pages)
		BROKEN("zone %u: the buddy lists hold %lu pages and the depot %u, but free_pages is %lu",
		       z->index, pages, z->depot_count, z->free_pages);
	return 0;
}

/* The depot: order-0 pages of this zone, prepared, not on a list. */
static int check_depot(struct pp_allocator *alloc, struct pp_zone *z,
		       unsigned char *where)
{
	if (z->depot_count > PP_ZONE_DEPOT)
		BROKEN("zone %u's depot counts %u pages, above its %u",
		       z->index, z->depot_count, PP_ZONE_DEPOT);
	for (unsigned int i = 0; i < z->depot_count; i++) {
		struct pp_page *p = z->depot[i];
		unsigned long idx;

		if (page_zone_checked(alloc, p) != z)
			BROKEN("zone %u's depot holds %p, not a page of that zone",
			       z->index, (void *)p);
		idx = page_index(z, p);
		if (page_flags(p) & PP_PAGE_F_BUDDY || p->order)
			BROKEN("page %lu of zone %u is in the depot but marked as a free buddy block or order %u",
			       idx, z->index, p->order);
		if (PP_DEBUG >= 1 && page_flags(p) & PP_PAGE_F_ALLOCATED)
			BROKEN("page %lu of zone %u is in the depot but marked allocated",
			       idx, z->index);
		if (mark(z, where, idx, 1, IN_DEPOT))
			return -EFAULT;
	}
	return 0;
}

static int check_tcache(struct pp_allocator *alloc, struct pp_zone *z,
			unsigned char *where, unsigned long *cached)
{
	for (struct pp_tcache *tc = alloc->tcache_list; tc; tc = tc->next) {
		struct pp_tcache_zone_ *tcz = &tc->v.z[z->index];

		if (tcz->count > alloc->tcache_size)
			BROKEN("a thread cache holds %u pages of zone %u, above its high mark %u",
			       tcz->count, z->index, alloc->tcache_size);
		for (unsigned int i = 0; i < tcz->count; i++) {
			struct pp_page *p = tcz->stack[i];
			unsigned long idx;

			if (page_zone_checked(alloc, p) != z)
				BROKEN("a thread cache's zone-%u stack holds %p, not a page of that zone",
				       z->index, (void *)p);
			idx = page_index(z, p);
			if (page_flags(p) & PP_PAGE_F_BUDDY)
				BROKEN("page %lu of zone %u is cached but marked as a free buddy block",
				       idx, z->index);
			if (PP_DEBUG >= 1 &&
			    page_flags(p) & PP_PAGE_F_ALLOCATED)
				BROKEN("page %lu of zone %u is cached but marked allocated",
				       idx, z->index);
			if (mark(z, where, idx, 1, IN_TCACHE))
				return -EFAULT;
		}
		*cached += tcz->count;
	}
	return 0;
}

/*
 * Slots: a slot not committed holds nothing; a slot being given back
 * holds its isolated blocks, which add up to its count; the zone's
 * counts add up to the committed slots.
 */
static int check_slots(struct pp_zone *z, unsigned char *where)
{
	unsigned long committed = 0, isolated = 0;
	unsigned int isolating = 0;

	for (unsigned int k = 0; k < z->nr_slots; k++) {
		struct zone_slot *s = &z->slots[k];
		unsigned long start = (unsigned long)k * z->slot_pages;
		unsigned long end = start + z->slot_pages, found = 0;

		if (s->state == SLOT_ABSENT) {
			for (unsigned long i = start; i < end; i++)
				if (where[i] != NOWHERE)
					BROKEN("zone %u: page %lu is on a list but its slot %u is not committed",
					       z->index, i, k);
			if (mark(z, where, start, z->slot_pages, IN_ABSENT))
				return -EFAULT;
			continue;
		}
		committed += z->slot_pages;
		if (s->state != SLOT_ISOLATING) {
			if (s->isolated)
				BROKEN("zone %u: live slot %u counts %lu isolated pages",
				       z->index, k, s->isolated);
			continue;
		}
		isolating++;
		for (unsigned long i = start; i < end; i++) {
			struct pp_page *p = &z->pages[i];
			unsigned long n;

			if (!(page_flags(p) & PP_PAGE_F_ISOLATED))
				continue;
			n = 1UL << p->order;
			if (i & (n - 1) || i + n > end)
				BROKEN("zone %u: isolated order-%u block at page %lu is misaligned or leaves slot %u",
				       z->index, p->order, i, k);
			if (mark(z, where, i, n, IN_ISOLATED))
				return -EFAULT;
			found += n;
			i += n - 1;
		}
		if (found != s->isolated)
			BROKEN("zone %u: slot %u has %lu pages isolated but counts %lu",
			       z->index, k, found, s->isolated);
		isolated += found;
	}
	if (committed != z->managed_pages)
		BROKEN("zone %u: %lu pages in committed slots but managed_pages is %lu",
		       z->index, committed, z->managed_pages);
	if (isolated != z->isolated_pages || isolating != z->nr_isolating)
		BROKEN("zone %u: %lu pages isolated in %u slots but the zone counts %lu in %u",
		       z->index, isolated, isolating, z->isolated_pages,
		       z->nr_isolating);
	return 0;
}

/* Debug builds: what is neither free nor cached is an allocated block. */
static int check_allocated(struct pp_zone *z, unsigned char *where,
			   unsigned long expect)
{
	unsigned long found = 0;

	for (unsigned long idx = 0; idx < z->span_pages; idx++) {
		struct pp_page *p = &z->pages[idx];
		unsigned long n;

		if (where[idx] != NOWHERE)
			continue;
		if (!(page_flags(p) & PP_PAGE_F_ALLOCATED))
			BROKEN("page %lu of zone %u is neither free, cached nor allocated (lost)",
			       idx, z->index);
		n = 1UL << p->order;
		if (idx & (n - 1) || idx + n > z->span_pages)
			BROKEN("zone %u: allocated order-%u block at page %lu is misaligned",
			       z->index, p->order, idx);
		if (mark(z, where, idx, n, IN_CALLER))
			return -EFAULT;
		found += n;
	}
	if (found != expect)
		BROKEN("zone %u: %lu pages are marked allocated but the counts say %lu",
		       z->index, found, expect);
	return 0;
}

static int check_zone(struct pp_allocator *alloc, struct pp_zone *z,
		      unsigned long *allocated)
{
	unsigned long cached = 0, in_use;
	unsigned char *where;
	int err;

	where = pp_os_calloc(z->span_pages, 1);
	if (!where)
		return -ENOMEM;
	err = check_buddy(z, where);
	if (!err)
		err = check_slots(z, where);
	if (!err)
		err = check_depot(alloc, z, where);
	if (!err)
		err = check_tcache(alloc, z, where, &cached);
	if (!err && z->free_pages + z->isolated_pages + cached >
			    z->managed_pages) {
		PP_ERR("pp_allocator_check: zone %u counts %lu free, %lu isolated and %lu cached pages of %lu",
		       z->index, z->free_pages, z->isolated_pages, cached,
		       z->managed_pages);
		err = -EFAULT;
	}
	in_use = err ? 0 :
		       z->managed_pages - z->free_pages - z->isolated_pages -
			       cached;
	if (!err && PP_DEBUG >= 1)
		err = check_allocated(z, where, in_use);
	free(where);
	*allocated += in_use;
	return err;
}

int pp_allocator_check(struct pp_allocator *alloc,
		       unsigned long *allocated_out)
{
	unsigned long allocated = 0;
	int err = 0;

	/* Lock order: list, every cache, every zone (page_alloc_priv.h). */
	pthread_mutex_lock(&alloc->tcache_list_lock);
	pp_tcache_hold_all(alloc);
	for (unsigned int i = 0; i < alloc->nr_zones; i++)
		zone_lock(&alloc->zones[i]);

	for (unsigned int i = 0; i < alloc->nr_zones && !err; i++)
		err = check_zone(alloc, &alloc->zones[i], &allocated);

	for (unsigned int i = alloc->nr_zones; i-- > 0;)
		zone_unlock(&alloc->zones[i]);
	pp_tcache_release_all(alloc);
	pthread_mutex_unlock(&alloc->tcache_list_lock);

	if (!err && allocated_out)
		*allocated_out = allocated;
	return err;
}
