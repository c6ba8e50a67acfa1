/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * zone_grow.c - a growable zone's slots (struct zone_slot): a committed
 * slot's pages joining the buddy lists, and a slot being given back:
 * isolated (its free blocks leave the lists, pages freed into it are set
 * aside), then removed once every page is back. The kernel offlines
 * memory the same way (isolate the range, wait for it to be free); there
 * is no migration here, so a slot with a page held long stays isolating
 * until the page comes back or the zone needs the memory again (cancel).
 *
 * Everything here runs with the zone lock held. A slot never shares a
 * buddy block with another (slots are whole blocks of the largest
 * order), so isolating one never touches a neighbour's lists.
 */
#include <string.h>

#include "page_alloc_priv.h"

static unsigned long slot_start(const struct pp_zone *z, unsigned int k)
{
	return (unsigned long)k * z->slot_pages;
}

/* Lock held; relaxed, for the statistics that read it without. */
static void add_isolated(struct pp_zone *z, long delta)
{
	__atomic_store_n(&z->isolated_pages,
			 z->isolated_pages + (unsigned long)delta,
			 __ATOMIC_RELAXED);
}

static void set_aside(struct pp_zone *z, struct zone_slot *s,
		      struct pp_page *page, unsigned int order)
{
	uint16_t f = page_flags(page) & ~(PP_PAGE_F_BUDDY |
					 PP_PAGE_F_ALLOCATED);

	page_set_flags(page, f | PP_PAGE_F_ISOLATED);
	page->order = (uint8_t)order;
	/* Relaxed: the growth thread reads it without the lock. */
	__atomic_store_n(&s->isolated, s->isolated + (1UL << order),
			 __ATOMIC_RELAXED);
	add_isolated(z, 1L << order);
}

void pp_zone_slot_add(struct pp_zone *z, unsigned int k)
{
	unsigned long start = slot_start(z, k);

	/* A slot given back before left its descriptors' flags clear. */
	zone_put_range(z, start, start + z->slot_pages);
	__atomic_store_n(&z->slots[k].isolated, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&z->slots[k].state, SLOT_LIVE, __ATOMIC_RELAXED);
	__atomic_store_n(&z->managed_pages, z->managed_pages + z->slot_pages,
			 __ATOMIC_RELAXED);
	zone_add_free(z, (long)z->slot_pages);
}

/* The depot's pages of slot @k join the isolated ones. */
static void isolate_depot(struct pp_zone *z, unsigned int k)
{
	unsigned int kept = 0, moved = 0;

	for (unsigned int i = 0; i < z->depot_count; i++) {
		struct pp_page *page = z->depot[i];

		if (zone_slot_of(z, page_index(z, page)) != k) {
			z->depot[kept++] = page;
			continue;
		}
		set_aside(z, &z->slots[k], page, 0);
		moved++;
	}
	z->depot_count = kept;
	zone_add_free(z, -(long)moved);
}

bool pp_zone_slot_isolate(struct pp_zone *z, unsigned int k,
			  unsigned long *cursor, unsigned long max_pages)
{
	struct zone_slot *s = &z->slots[k];
	unsigned long start = slot_start(z, k), end = start + z->slot_pages;
	unsigned long idx = start + *cursor, stop, taken = 0;

	if (s->state != SLOT_ISOLATING) {
		/* From now on, pages freed into the slot are set aside. */
		__atomic_store_n(&s->state, SLOT_ISOLATING, __ATOMIC_RELAXED);
		__atomic_store_n(&z->nr_isolating, z->nr_isolating + 1,
				 __ATOMIC_RELAXED);
		isolate_depot(z, k);
	}
	stop = idx + max_pages < end ? idx + max_pages : end;
	while (idx < stop) {
		struct pp_page *page = &z->pages[idx];
		unsigned int order;

		if (!(page_flags(page) & PP_PAGE_F_BUDDY)) {
			idx++;
			continue;
		}
		order = page->order;
		zone_area_del(z, page, order);
		set_aside(z, s, page, order);
		taken += 1UL << order;
		idx += 1UL << order;
	}
	zone_add_free(z, -(long)taken);
	*cursor = idx - start;
	return idx >= end;
}

void pp_zone_slot_cancel(struct pp_zone *z, unsigned int k)
{
	struct zone_slot *s = &z->slots[k];
	unsigned long start = slot_start(z, k), end = start + z->slot_pages;
	unsigned long back = s->isolated;

	if (s->state != SLOT_ISOLATING)
		return;
	/* LIVE first: the merges below must not set the pages aside. */
	__atomic_store_n(&s->state, SLOT_LIVE, __ATOMIC_RELAXED);
	__atomic_store_n(&z->nr_isolating, z->nr_isolating - 1,
			 __ATOMIC_RELAXED);
	for (unsigned long idx = start; idx < end;) {
		struct pp_page *page = &z->pages[idx];
		unsigned int order;

		if (!(page_flags(page) & PP_PAGE_F_ISOLATED)) {
			idx++;
			continue;
		}
		order = page->order;
		page_set_flags(page, page_flags(page) & ~PP_PAGE_F_ISOLATED);
		zone_merge_free(z, idx, order);
		idx += 1UL << order;
	}
	add_isolated(z, -(long)back);
	__atomic_store_n(&s->isolated, 0, __ATOMIC_RELAXED);
	zone_add_free(z, (long)back);
}

bool pp_zone_slot_remove(struct pp_zone *z, unsigned int k)
{
	struct zone_slot *s = &z->slots[k];
	unsigned long start = slot_start(z, k);

	if (s->state != SLOT_ISOLATING || s->isolated != z->slot_pages)
		return false;
	/* Clean descriptors for the day the slot is committed again. */
	for (unsigned long i = 0; i < z->slot_pages; i++)
		page_set_flags(&z->pages[start + i], 0);
	__atomic_store_n(&s->state, SLOT_ABSENT, __ATOMIC_RELAXED);
	__atomic_store_n(&z->nr_isolating, z->nr_isolating - 1,
			 __ATOMIC_RELAXED);
	add_isolated(z, -(long)z->slot_pages);
	__atomic_store_n(&s->isolated, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&z->managed_pages, z->managed_pages - z->slot_pages,
			 __ATOMIC_RELAXED);
	return true;
}

bool pp_zone_isolate_freed(struct pp_zone *z, unsigned long idx,
			   unsigned int order)
{
	struct zone_slot *s = &z->slots[zone_slot_of(z, idx)];

	if (s->state != SLOT_ISOLATING)
		return false;
	set_aside(z, s, &z->pages[idx], order);
	return true;
}

/* Free pages of slot @k: its listed blocks and its pages in the depot. */
static unsigned long slot_free_pages(const struct pp_zone *z, unsigned int k)
{
	unsigned long start = slot_start(z, k), end = start + z->slot_pages;
	unsigned long free = 0;

	for (unsigned long idx = start; idx < end;) {
		const struct pp_page *page = &z->pages[idx];

		if (!(page_flags(page) & PP_PAGE_F_BUDDY)) {
			idx++;
			continue;
		}
		free += 1UL << page->order;
		idx += 1UL << page->order;
	}
	for (unsigned int i = 0; i < z->depot_count; i++)
		if (zone_slot_of(z, page_index(z, z->depot[i])) == k)
			free++;
	return free;
}

bool pp_zone_slot_take_free(struct pp_zone *z, unsigned int k)
{
	unsigned long cursor = 0;

	if (z->slots[k].state != SLOT_LIVE ||
	    slot_free_pages(z, k) != z->slot_pages)
		return false;
	pp_zone_slot_isolate(z, k, &cursor, z->slot_pages);
	return pp_zone_slot_remove(z, k);
}
