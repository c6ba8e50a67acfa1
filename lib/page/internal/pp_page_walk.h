/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_page_walk.h - the descriptor arrays of an allocator's zones, for the
 * layers above that report on pages without owning them (the in-flight
 * report of lib/page_pool). A descriptor stays valid memory for the
 * allocator's life; what an owner writes in it may be read racily, with
 * relaxed loads, and is only as current as such a read.
 */
#ifndef PP_INTERNAL_PAGE_WALK_H
#define PP_INTERNAL_PAGE_WALK_H

struct pp_allocator;
struct pp_page;

/* Zone @z's descriptors: *@pages, *@nr of them. 0, or -EINVAL. */
int pp_allocator_zone_pages(struct pp_allocator *alloc, unsigned int z,
			    struct pp_page **pages, unsigned long *nr);

#endif /* PP_INTERNAL_PAGE_WALK_H */
