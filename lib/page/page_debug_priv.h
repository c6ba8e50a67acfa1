/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_debug_priv.h - what the allocator does to a block as it leaves for
 * a caller and as it comes back, by build: nothing in release builds;
 * state flags with double-free and foreign-page reports at debug level 1;
 * poisoning of freed pages, checked when handed out again, at level 2;
 * ASan shadow poisoning of freed pages' data in ASan builds. The kernel
 * keeps the same apart in mm/page_poison.c and its debug hooks.
 *
 * The hooks are inline (they run on every page of the data path, and are
 * empty in release builds); the report of a poison mismatch is out of
 * line, in page_debug.c.
 */
#ifndef PP_PAGE_DEBUG_PRIV_H
#define PP_PAGE_DEBUG_PRIV_H

#include <string.h>

#include "pp_log.h"
#include "page_alloc_priv.h"

#if defined(__SANITIZE_ADDRESS__)
#define PP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PP_ASAN 1
#endif
#endif
#ifndef PP_ASAN
#define PP_ASAN 0
#endif
#if PP_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define PP_ALWAYS_INLINE inline __attribute__((always_inline))

/*
 * In a release build without ASan, handing out or taking back an order-0
 * page through a thread cache touches nothing but pointers, so the bulk
 * paths may move them with plain copies.
 */
#define PAGE_HOOKS_NOOP (PP_DEBUG == 0 && !PP_ASAN)

/* Report the first byte of @page that lost its poison (level 2). */
void pp_page_poison_check(struct pp_zone *z, struct pp_page *page);

/* ASan builds: poison (or unpoison) all of @alloc's arena memory. */
void pp_page_asan_arenas(struct pp_allocator *alloc, bool poison);

/*
 * A block leaves a cache or zone for the caller; under that cache's or
 * zone's lock (see page_alloc_priv.h for why flags need it).
 */
static PP_ALWAYS_INLINE void page_on_alloc(struct pp_zone *z,
					   struct pp_page *page,
					   unsigned int order)
{
	(void)z;
	/* Order-0 pages got refcount and order from page_prep_order0(). */
	if (order) {
		__atomic_store_n(&page->refcount, 1, __ATOMIC_RELAXED);
		page->order = (uint8_t)order;
	}
#if PP_ASAN
	ASAN_UNPOISON_MEMORY_REGION(page->addr, PP_PAGE_SIZE << order);
#endif
#if PP_DEBUG >= 2
	for (unsigned long i = 0; i < 1UL << order; i++) {
		uint16_t f = page_flags(page + i);

		if (f & PP_PAGE_F_POISONED) {
			pp_page_poison_check(z, page + i);
			page_set_flags(page + i, f & ~PP_PAGE_F_POISONED);
		}
	}
#endif
#if PP_DEBUG >= 1
	page_set_flags(page, page_flags(page) | PP_PAGE_F_ALLOCATED);
#endif
}

/*
 * The zone of a page being freed, or NULL when the free must be ignored
 * (debug builds report why). Release builds trust the caller and, with one
 * zone, do not even read the descriptor.
 */
static PP_ALWAYS_INLINE struct pp_zone *
free_check(struct pp_allocator *alloc, struct pp_page *page,
	   unsigned int order, const char *fn)
{
#if PP_DEBUG >= 1
	struct pp_zone *z = page_zone_checked(alloc, page);

	if (PP_UNLIKELY(!z)) {
		PP_ERR("%s: %p is not a page descriptor of this allocator (a foreign page); ignored: give pages back to the allocator they came from",
		       fn, (void *)page);
		return NULL;
	}
	if (PP_UNLIKELY(!(page_flags(page) & PP_PAGE_F_ALLOCATED))) {
		PP_ERR("%s: page %lu of zone %u (node %d) is not allocated: a double free, or not the first page of its block; ignored",
		       fn, page_index(z, page), z->index, z->node);
		return NULL;
	}
	if (PP_UNLIKELY(pp_page_ref_count(page) != 1)) {
		PP_ERR("%s: page %lu of zone %u freed with refcount %u: other references remain; ignored: drop them with pp_put_page(), which frees the page at the last one",
		       fn, page_index(z, page), z->index,
		       pp_page_ref_count(page));
		return NULL;
	}
	if (PP_UNLIKELY(page->order != order)) {
		PP_ERR("%s: page %lu of zone %u was allocated with order %u but freed with order %u; ignored: free with the order it was allocated with",
		       fn, page_index(z, page), z->index, page->order, order);
		return NULL;
	}
	return z;
#else
	(void)order;
	(void)fn;
	if (PP_LIKELY(alloc->nr_zones == 1))
		return &alloc->zones[0];
	return page_zone(alloc, page);
#endif
}

/* A checked block goes back; under the lock of the cache or zone it enters. */
static PP_ALWAYS_INLINE void page_on_free(struct pp_page *page,
					  unsigned int order)
{
#if PP_DEBUG >= 2
	for (unsigned long i = 0; i < 1UL << order; i++) {
		memset(page[i].addr, PP_POISON_BYTE, PP_PAGE_SIZE);
		page_set_flags(page + i,
			       page_flags(page + i) | PP_PAGE_F_POISONED);
	}
#endif
#if PP_ASAN
	ASAN_POISON_MEMORY_REGION(page->addr, PP_PAGE_SIZE << order);
#endif
#if PP_DEBUG >= 1
	page_set_flags(page, page_flags(page) & ~PP_PAGE_F_ALLOCATED);
#endif
	(void)page;
	(void)order;
}

#endif /* PP_PAGE_DEBUG_PRIV_H */
