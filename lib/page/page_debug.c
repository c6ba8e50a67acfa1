/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_debug.c - the out-of-line part of the allocator's debug hooks
 * (page_debug_priv.h): the report of a poisoned page written after free,
 * and the ASan shadow over a whole allocator's arenas.
 */
#include "page_debug_priv.h"

void pp_page_poison_check(struct pp_zone *z, struct pp_page *page)
{
	const unsigned char *data = page->addr;
	const uint64_t poison = 0x0101010101010101ULL * PP_POISON_BYTE;
	size_t i = 0;

	/* Eight bytes at a time (every handed-out page passes here at
	 * level 2); the first bad word is then searched byte by byte. */
	for (; i < PP_PAGE_SIZE; i += sizeof(poison)) {
		uint64_t word;

		memcpy(&word, data + i, sizeof(word));
		if (word != poison)
			break;
	}
	for (; i < PP_PAGE_SIZE; i++) {
		if (data[i] == PP_POISON_BYTE)
			continue;
		PP_ERR("page %lu of zone %u was written after free (byte %zu is %#x, not the poison %#x): a use after free in the program; find who kept a pointer to %p",
		       page_index(z, page), z->index, i, data[i],
		       PP_POISON_BYTE, page->addr);
		return;
	}
}

/*
 * ASan builds: every page is poisoned while the allocator holds it, so a
 * program touching a page it does not own is reported. Unpoisoned again
 * when the allocator is destroyed and the arenas are the owner's.
 */
void pp_page_asan_arenas(struct pp_allocator *alloc, bool poison)
{
#if PP_ASAN
	for (unsigned int i = 0; i < alloc->nr_zones; i++) {
		struct pp_zone *z = &alloc->zones[i];
		size_t len = z->span_pages << PP_PAGE_SHIFT;

		if (poison)
			ASAN_POISON_MEMORY_REGION((void *)z->base, len);
		else
			ASAN_UNPOISON_MEMORY_REGION((void *)z->base, len);
	}
#else
	(void)alloc;
	(void)poison;
#endif
}
