/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_page_growth.h - what page_pool needs to know of a growable zone: is
 * memory being given back, and does a page lie in it. A pool that holds
 * such a page gives it to the allocator instead of reusing it, as the
 * kernel's page_pool gives back pages of a remote node, so that the slot
 * empties while traffic flows and can leave (doc/growth.md).
 */
#ifndef PP_INTERNAL_PAGE_GROWTH_H
#define PP_INTERNAL_PAGE_GROWTH_H

#include <stdbool.h>

#ifndef PP_HIDDEN
#define PP_HIDDEN __attribute__((visibility("hidden")))
#endif

struct pp_allocator;
struct pp_page;

/* The count of slots being given back in every zone of @alloc: a
 * relaxed load of it says whether any is, cheap enough once per burst
 * (a pool keeps the pointer). */
PP_HIDDEN const unsigned int *
pp_allocator_isolating_word(const struct pp_allocator *alloc);

/* Whether @page (allocated, of @alloc) lies in a slot being given back. */
PP_HIDDEN bool pp_page_in_isolating_slot(const struct pp_allocator *alloc,
					 const struct pp_page *page);

/*
 * Free @n blocks of 2^@order pages straight to their zones, past the
 * calling thread's cache (one hold of a zone's lock per 64 order-0
 * pages): a page given back for that reason must reach its slot now,
 * not sit in a cache that may not be drained for long.
 */
PP_HIDDEN void pp_free_pages_to_zone(struct pp_allocator *alloc,
				     struct pp_page **pages, unsigned int n,
				     unsigned int order);

#endif /* PP_INTERNAL_PAGE_GROWTH_H */
