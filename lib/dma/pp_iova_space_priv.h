/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_iova_space_priv.h - the free IOVA ranges of a domain (iova_space.c),
 * which the VFIO mode allocates arena IOVAs from and gives them back to.
 *
 * The free parts of the IOMMU's ranges, as disjoint inclusive [start, end]
 * ranges sorted by start, merged with their neighbours when space comes
 * back. An array, not a tree: the kernel reports a handful of ranges and a
 * domain maps at most 32 arenas (dma.c's table), each splitting one range
 * in at most three, so 64 entries do not run out; if they did, the smaller
 * part of a split range, or a freed run, would be left unused rather than
 * refused. None of this is on the data path. No locking (the caller's
 * lock covers it). Ranges may reach the top of the 64-bit space: no
 * computation wraps past 2^64 - 1.
 */
#ifndef PP_IOVA_SPACE_PRIV_H
#define PP_IOVA_SPACE_PRIV_H

#include <stdint.h>

#define PP_IOVA_SPACE_MAX 64

struct pp_iova_range {
	uint64_t start;
	uint64_t end; /* inclusive */
};

struct pp_iova_space {
	unsigned int nr;
	struct pp_iova_range free[PP_IOVA_SPACE_MAX];
};

/* Start with @nr ranges (sorted or not, disjoint), less everything below
 * @floor. Ranges past PP_IOVA_SPACE_MAX are ignored. */
void pp_iova_space_init(struct pp_iova_space *s,
			const struct pp_iova_range *ranges, unsigned int nr,
			uint64_t floor);
/* First fit: the lowest @align-aligned (a power of two) free run of @len
 * bytes. 0, -EINVAL (@len 0, @align not a power of two) or -ENOSPC. */
int pp_iova_space_alloc(struct pp_iova_space *s, uint64_t len, uint64_t align,
			uint64_t *iova);
/* Take exactly [@start, @start + @len): 0, or -EBUSY when any of it is
 * not free. */
int pp_iova_space_take(struct pp_iova_space *s, uint64_t start, uint64_t len);
/* Give [@start, @start + @len) back (it must have been taken). */
void pp_iova_space_free(struct pp_iova_space *s, uint64_t start, uint64_t len);
/* Free bytes, for tests and messages; UINT64_MAX when they do not fit. */
uint64_t pp_iova_space_free_bytes(const struct pp_iova_space *s);

#endif /* PP_IOVA_SPACE_PRIV_H */
