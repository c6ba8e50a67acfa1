/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iova_space.c - a domain's free IOVA ranges: a sorted array of disjoint
 * inclusive ranges, first-fit allocation, exact takes for identity
 * mappings, and frees merged with their neighbours (see
 * pp_iova_space_priv.h). Used by the VFIO mode under its lock.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "pp_log.h"
#include "pp_iova_space_priv.h"

/* Remove entry @i. */
static void space_remove(struct pp_iova_space *s, unsigned int i)
{
	memmove(&s->free[i], &s->free[i + 1],
		(s->nr - i - 1) * sizeof(s->free[0]));
	s->nr--;
}

/* Insert [start, end] at index @i; false when the array is full. */
static bool space_insert(struct pp_iova_space *s, unsigned int i,
			 uint64_t start, uint64_t end)
{
	if (s->nr == PP_IOVA_SPACE_MAX)
		return false;
	memmove(&s->free[i + 1], &s->free[i],
		(s->nr - i) * sizeof(s->free[0]));
	s->free[i].start = start;
	s->free[i].end = end;
	s->nr++;
	return true;
}

void pp_iova_space_init(struct pp_iova_space *s,
			const struct pp_iova_range *ranges, unsigned int nr,
			uint64_t floor)
{
	unsigned int i, k;

	s->nr = 0;
	for (i = 0; i < nr; i++) {
		uint64_t start = ranges[i].start < floor ? floor :
							   ranges[i].start;

		if (start > ranges[i].end)
			continue;
		/* Sorted insertion: the kernel's list is sorted already,
		 * but nothing promises it. */
		for (k = 0; k < s->nr && s->free[k].start < start; k++)
			;
		space_insert(s, k, start, ranges[i].end);
	}
}

/* Carve [at, at + len) out of entry @i, which holds it. */
static void space_carve(struct pp_iova_space *s, unsigned int i, uint64_t at,
			uint64_t len)
{
	struct pp_iova_range r = s->free[i];
	uint64_t last = at + len - 1;

	if (at == r.start && last == r.end) {
		space_remove(s, i);
	} else if (at == r.start) {
		s->free[i].start = last + 1;
	} else if (last == r.end) {
		s->free[i].end = at - 1;
	} else {
		s->free[i].end = at - 1;
		/* Full: keep the larger part, leave the smaller unused. */
		if (!space_insert(s, i + 1, last + 1, r.end) &&
		    r.end - last > at - r.start) {
			s->free[i].start = last + 1;
			s->free[i].end = r.end;
		}
	}
}

int pp_iova_space_alloc(struct pp_iova_space *s, uint64_t len, uint64_t align,
			uint64_t *iova)
{
	unsigned int i;

	if (!len || !align || (align & (align - 1)))
		return -EINVAL;
	for (i = 0; i < s->nr; i++) {
		uint64_t at = (s->free[i].start + align - 1) & ~(align - 1);

		if (at < s->free[i].start || at + len - 1 < at ||
		    at + len - 1 > s->free[i].end)
			continue;
		space_carve(s, i, at, len);
		*iova = at;
		return 0;
	}
	return -ENOSPC;
}

int pp_iova_space_take(struct pp_iova_space *s, uint64_t start, uint64_t len)
{
	unsigned int i;

	if (!len || start + len - 1 < start)
		return -EBUSY;
	for (i = 0; i < s->nr; i++) {
		if (start >= s->free[i].start &&
		    start + len - 1 <= s->free[i].end) {
			space_carve(s, i, start, len);
			return 0;
		}
	}
	return -EBUSY;
}

void pp_iova_space_free(struct pp_iova_space *s, uint64_t start, uint64_t len)
{
	uint64_t end = start + len - 1;
	unsigned int i;

	if (!len)
		return;
	for (i = 0; i < s->nr && s->free[i].start < start; i++)
		;
	/* Merge with the range below, the one above, or both. */
	if (i > 0 && s->free[i - 1].end + 1 == start) {
		s->free[i - 1].end = end;
		if (i < s->nr && end + 1 == s->free[i].start) {
			s->free[i - 1].end = s->free[i].end;
			space_remove(s, i);
		}
		return;
	}
	if (i < s->nr && end + 1 == s->free[i].start) {
		s->free[i].start = start;
		return;
	}
	if (!space_insert(s, i, start, end))
		PP_DEBUG_LOG("dma: vfio: IOVA free list full, 0x%llx+%llu stays unused",
			     (unsigned long long)start,
			     (unsigned long long)len);
}

uint64_t pp_iova_space_free_bytes(const struct pp_iova_space *s)
{
	uint64_t n = 0, len;
	unsigned int i;

	/* A range [0, 2^64 - 1] holds 2^64 bytes, one more than a uint64_t
	 * counts: saturate rather than wrap to a small number. */
	for (i = 0; i < s->nr; i++) {
		len = s->free[i].end - s->free[i].start;
		if (len == UINT64_MAX || n + len + 1 < n)
			return UINT64_MAX;
		n += len + 1;
	}
	return n;
}
