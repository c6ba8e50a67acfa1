/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * zone.c - one zone: the descriptor array of one arena and its buddy free
 * lists (orders 0 to max_order), all under the zone lock.
 *
 * A block of order k covers 2^k pages whose first index is a multiple of
 * 2^k; arenas are aligned to their page size (and to 2 MiB at least), and
 * max_order is the arena's page order, so a block never crosses a
 * hugepage. A free block is marked on its head only (PP_PAGE_F_BUDDY, with
 * page->order), as the kernel marks PageBuddy; the rest of its pages carry
 * nothing, so handing out or taking back a block touches one descriptor.
 *
 * Everything here but init/fini runs with the zone lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pagepool/pp_vmalloc.h>

#include "pp_log.h"
#include "pp_arena_user.h"
#include "pp_vm_area.h"
#include "pp_os_fault.h"
#include "page_alloc_priv.h"

/*
 * Descriptor arrays of at least one 2 MiB page (arenas of 128 MiB and up)
 * go in a huge vmalloc area on the zone's node, as the kernel's vmemmap is
 * mapped with huge pages: a 1 GiB arena's 16 MiB of descriptors then cost
 * 8 TLB entries instead of 4096. Smaller ones stay on the heap, where a
 * huge mapping would buy nothing. Falling back to base pages is allowed:
 * the descriptors must never fail for want of hugepages the arena itself
 * did not need. The area's base pages are anonymous (lib/mem's own, no
 * source): descriptors cannot come from the allocator they describe.
 */
#define DESC_VMALLOC_MIN PP_PAGE_SIZE_2M

static struct pp_page *descs_alloc(struct pp_zone *z, struct pp_arena *arena,
				   unsigned long n)
{
	size_t bytes = n * sizeof(struct pp_page);
	struct pp_vmalloc_opts o = {
		.sz = sizeof(o),
		.numa_node = pp_arena_node(arena),
		.name = "pp-descriptors",
	};
	void *mem;

	if (bytes >= DESC_VMALLOC_MIN) {
		z->pages_area = pp_vm_area_create(bytes, &o, NULL);
		/* Zeroed, like the memset below. */
		return z->pages_area ? pp_vm_area_addr(z->pages_area) : NULL;
	}
	if (pp_os_posix_memalign(&mem, PP_CACHE_LINE, bytes)) {
		PP_ERR("allocator: arena '%s': out of memory for %lu page descriptors (%zu bytes)",
		       pp_arena_name(arena), n, bytes);
		return NULL;
	}
	memset(mem, 0, bytes);
	return mem;
}

static void descs_free(struct pp_zone *z)
{
	if (z->pages_area)
		pp_vfree(z->pages_area);
	else
		free(z->pages);
	z->pages_area = NULL;
	z->pages = NULL;
}

void zone_area_add(struct pp_zone *z, struct pp_page *page,
		     unsigned int order)
{
	struct free_area *fa = &z->area[order];

	page->order = (uint8_t)order;
	page->prev = NULL;
	page->next = fa->head;
	if (fa->head)
		fa->head->prev = page;
	fa->head = page;
	fa->nr++;
	page_set_flags(page, page_flags(page) | PP_PAGE_F_BUDDY);
}

void zone_area_del(struct pp_zone *z, struct pp_page *page,
		     unsigned int order)
{
	struct free_area *fa = &z->area[order];

	if (page->prev)
		page->prev->next = page->next;
	else
		fa->head = page->next;
	if (page->next)
		page->next->prev = page->prev;
	page->next = NULL;
	page->prev = NULL;
	fa->nr--;
	page_set_flags(page, page_flags(page) & ~PP_PAGE_F_BUDDY);
}

/*
 * Put the free pages [@start, @end) on the lists as the largest aligned
 * blocks that fit. Used for the initial fill and for the tail of a block
 * that was carved for order-0 pages; no block made here can merge with
 * its buddy, which is either inside the range (already coalesced by the
 * greedy choice) or allocated.
 */
void zone_put_range(struct pp_zone *z, unsigned long start,
		      unsigned long end)
{
	while (start < end) {
		unsigned int order = start ?
			(unsigned int)__builtin_ctzl(start) : z->max_order;

		if (order > z->max_order)
			order = z->max_order;
		while (start + (1UL << order) > end)
			order--;
		zone_area_add(z, &z->pages[start], order);
		start += 1UL << order;
	}
}

/* Free one block, merging it with its buddies as far as they are free. */
void zone_merge_free(struct pp_zone *z, unsigned long idx,
		       unsigned int order)
{
	while (order < z->max_order) {
		unsigned long buddy = idx ^ (1UL << order);
		struct pp_page *b;

		if (buddy >= z->span_pages)
			break;
		b = &z->pages[buddy];
		/*
		 * The flag is read racily by design when the buddy is not
		 * free (see page_flags()); its order is read only when it is
		 * free, that is, owned by this zone and this lock.
		 */
		if (!(page_flags(b) & PP_PAGE_F_BUDDY) || b->order != order)
			break;
		zone_area_del(z, b, order);
		idx &= ~(1UL << order);
		order++;
	}
	zone_area_add(z, &z->pages[idx], order);
}

/* See zone_lock() for why a mutex, and why adaptive. */
static int zone_lock_init(pthread_mutex_t *lock)
{
	pthread_mutexattr_t attr;
	int err;

	pthread_mutexattr_init(&attr);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	err = pthread_mutex_init(lock, &attr);
	pthread_mutexattr_destroy(&attr);
	return err;
}

int pp_zone_init(struct pp_zone *z, struct pp_arena *arena, unsigned int index,
		 unsigned long wmark_low)
{
	size_t page_size = pp_arena_page_size(arena);
	uintptr_t base = (uintptr_t)pp_arena_base(arena);
	unsigned long n = pp_arena_size(arena) >> PP_PAGE_SHIFT;
	int err;

	memset(z, 0, sizeof(*z));
	if (page_size < PP_PAGE_SIZE || (page_size & (page_size - 1)) ||
	    page_size > PP_PAGE_SIZE << PP_MAX_ORDER_LIMIT || n == 0) {
		PP_ERR("allocator: arena '%s' has a page size of %zu bytes and %lu pages; use an arena of 4 KiB, 2 MiB or 1 GiB pages",
		       pp_arena_name(arena), page_size, n);
		return -EINVAL;
	}
	z->max_order = (unsigned int)__builtin_ctzl(page_size >> PP_PAGE_SHIFT);
	if (z->max_order < PP_ORDER_4K_ARENA)
		z->max_order = PP_ORDER_4K_ARENA;
	/* Blocks are aligned by index, so the base must be by address. */
	if (base & ((PP_PAGE_SIZE << z->max_order) - 1)) {
		PP_ERR("allocator: arena '%s' at %p is not aligned to %lu KiB; its buddy blocks would cross hugepages",
		       pp_arena_name(arena), (void *)base,
		       (PP_PAGE_SIZE << z->max_order) >> 10);
		return -EINVAL;
	}

	/*
	 * Descriptors live apart from the data (doc/design.md decision 2),
	 * for the whole span: a growable arena's slots come and go, their
	 * descriptors stay (64 bytes per 4 KiB page reserved, 1.6 %).
	 */
	z->pages = descs_alloc(z, arena, n);
	if (!z->pages)
		return -ENOMEM;
	for (unsigned long i = 0; i < n; i++) {
		z->pages[i].addr = (void *)(base + (i << PP_PAGE_SHIFT));
		z->pages[i].zone = (uint8_t)index;
	}

	z->nr_slots = pp_arena_slot_count(arena);
	z->min_slots = pp_arena_min_slots(arena);
	z->slot_pages = pp_arena_slot_size(arena) >> PP_PAGE_SHIFT;
	z->slots = pp_os_calloc(z->nr_slots, sizeof(*z->slots));
	z->depot = pp_os_malloc(PP_ZONE_DEPOT * sizeof(*z->depot));
	if (!z->depot || !z->slots) {
		PP_ERR("allocator: arena '%s': out of memory for the zone's depot and slots",
		       pp_arena_name(arena));
		err = -ENOMEM;
		goto err_free;
	}
	err = -zone_lock_init(&z->lock);
	if (err)
		goto err_free;

	z->arena = arena;
	z->base = base;
	z->span_pages = n;
	z->index = index;
	z->node = pp_arena_node(arena);
	/* The minimum is committed: its slots are the zone's first pages. */
	for (unsigned int k = 0; k < z->min_slots; k++)
		pp_zone_slot_add(z, k);
	z->wmark_low = wmark_low ? wmark_low :
				   z->managed_pages / PP_WMARK_DIVISOR;
	if (z->wmark_low == 0)
		z->wmark_low = 1;
	return 0;

err_free:
	free(z->slots);
	free(z->depot);
	descs_free(z);
	return err;
}

void pp_zone_fini(struct pp_zone *z)
{
	if (!z->pages)
		return;
	pthread_mutex_destroy(&z->lock);
	free(z->slots);
	free(z->depot);
	descs_free(z);
}

/* Every page of the depot into the buddy lists. */
static void depot_flush(struct pp_zone *z)
{
	for (unsigned int i = 0; i < z->depot_count; i++)
		zone_merge_free(z, page_index(z, z->depot[i]), 0);
	z->depot_count = 0;
}

unsigned int pp_zone_take_order0(struct pp_zone *z, struct pp_page **out,
				 unsigned int n)
{
	unsigned int got = z->depot_count < n ? z->depot_count : n;

	/*
	 * The depot first, the hottest pages on top: they left a thread
	 * cache as refcount-1 order-0 pages and are still prepared.
	 */
	z->depot_count -= got;
	memcpy(out, &z->depot[z->depot_count], got * sizeof(*out));

	while (got < n) {
		struct pp_page *page = z->area[0].head;
		unsigned long idx, size, take;
		unsigned int order;

		if (page) {
			zone_area_del(z, page, 0);
			page_prep_order0(page);
			out[got++] = page;
			continue;
		}
		for (order = 1; order <= z->max_order; order++)
			if (z->area[order].head)
				break;
		if (order > z->max_order)
			break;
		/*
		 * Carve the smallest free block: hand out its first pages
		 * straight away, without splitting it down order by order,
		 * and put the rest back as aligned blocks.
		 */
		page = z->area[order].head;
		zone_area_del(z, page, order);
		idx = page_index(z, page);
		size = 1UL << order;
		take = n - got < size ? n - got : size;
		for (unsigned long i = 0; i < take; i++) {
			page_prep_order0(page + i);
			out[got++] = page + i;
		}
		zone_put_range(z, idx + take, idx + size);
	}
	zone_add_free(z, -(long)got);
	return got;
}

/* pp_zone_put_order0() while slots are being given back: each page of
 * an ISOLATING slot is set aside, the rest go back as usual. */
static void put_order0_isolating(struct pp_zone *z, struct pp_page **pages,
				 unsigned int n)
{
	unsigned int freed = 0;

	for (unsigned int i = 0; i < n; i++) {
		unsigned long idx = page_index(z, pages[i]);

		if (pp_zone_isolate_freed(z, idx, 0))
			continue;
		if (z->depot_count < PP_ZONE_DEPOT)
			z->depot[z->depot_count++] = pages[i];
		else
			zone_merge_free(z, idx, 0);
		freed++;
	}
	zone_add_free(z, freed);
}

void pp_zone_put_order0(struct pp_zone *z, struct pp_page **pages,
			unsigned int n)
{
	unsigned int room = PP_ZONE_DEPOT - z->depot_count;
	unsigned int keep = n < room ? n : room;

	if (PP_UNLIKELY(z->nr_isolating)) {
		put_order0_isolating(z, pages, n);
		return;
	}
	memcpy(&z->depot[z->depot_count], pages, keep * sizeof(*pages));
	z->depot_count += keep;
	for (unsigned int i = keep; i < n; i++)
		zone_merge_free(z, page_index(z, pages[i]), 0);
	zone_add_free(z, n);
}

struct pp_page *pp_zone_take_block(struct pp_zone *z, unsigned int order)
{
	struct pp_page *page;
	unsigned int o;

	if (order > z->max_order)
		return NULL;
	for (o = order; o <= z->max_order; o++)
		if (z->area[o].head)
			break;
	if (o > z->max_order && z->depot_count) {
		/* The depot's pages may complete a block: merge them. */
		depot_flush(z);
		for (o = order; o <= z->max_order; o++)
			if (z->area[o].head)
				break;
	}
	if (o > z->max_order)
		return NULL;
	page = z->area[o].head;
	zone_area_del(z, page, o);
	/* Split: the upper halves go back, one per order on the way down. */
	while (o > order) {
		o--;
		zone_area_add(z, page + (1UL << o), o);
	}
	page->order = (uint8_t)order;
	zone_add_free(z, -(long)(1UL << order));
	return page;
}

void pp_zone_put_block(struct pp_zone *z, struct pp_page *head,
		       unsigned int order)
{
	if (PP_UNLIKELY(z->nr_isolating) &&
	    pp_zone_isolate_freed(z, page_index(z, head), order))
		return;
	zone_merge_free(z, page_index(z, head), order);
	zone_add_free(z, (long)(1UL << order));
}
