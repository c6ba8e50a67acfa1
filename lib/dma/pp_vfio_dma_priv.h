/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_vfio_dma_priv.h - the VFIO backend of lib/dma, as dma.c calls it.
 * dma.c keeps the arena table and the O(1) page lookup; vfio.c owns the
 * container, its groups and the IOVA space (whose allocator is below).
 */
#ifndef PP_VFIO_DMA_PRIV_H
#define PP_VFIO_DMA_PRIV_H

#include <stdint.h>

#include <pagepool/pp_dma.h>

struct pp_vfio;

/* NULL with errno (see pp_dma_create()). */
struct pp_vfio *pp_vfio_create(const struct pp_dma_opts *opts);
void pp_vfio_destroy(struct pp_vfio *v);

/* Map every segment of @arena; *@iova is the IOVA of its base. 0/-errno. */
int pp_vfio_map_arena(struct pp_vfio *v, struct pp_arena *arena,
		      uint64_t *iova);
void pp_vfio_unmap_arena(struct pp_vfio *v, struct pp_arena *arena,
			 uint64_t iova);

int pp_vfio_add_device(struct pp_vfio *v, const char *pci_addr);
int pp_vfio_device_fd(struct pp_vfio *v, const char *pci_addr);

/*
 * The IOVA space of a domain: the free parts of the IOMMU's ranges, as
 * disjoint inclusive [start, end] ranges sorted by start, merged with their
 * neighbours when space comes back. An array, not a tree: the kernel
 * reports a handful of ranges and a domain maps at most 32 arenas (dma.c's
 * table), each splitting one range in at most three, so 64 entries do not
 * run out; if they did, the smaller part of a split range, or a freed run,
 * would be left unused rather than refused. None of this is on the data path. Exposed here for the unit test; no locking (the
 * domain's lock covers it).
 */
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
 * bytes. 0, or -ENOSPC. */
int pp_iova_space_alloc(struct pp_iova_space *s, uint64_t len, uint64_t align,
			uint64_t *iova);
/* Take exactly [@start, @start + @len): 0, or -EBUSY when any of it is
 * not free. */
int pp_iova_space_take(struct pp_iova_space *s, uint64_t start, uint64_t len);
/* Give [@start, @start + @len) back (it must have been taken). */
void pp_iova_space_free(struct pp_iova_space *s, uint64_t start, uint64_t len);
/* Free bytes, for tests and messages. */
uint64_t pp_iova_space_free_bytes(const struct pp_iova_space *s);

#endif /* PP_VFIO_DMA_PRIV_H */
