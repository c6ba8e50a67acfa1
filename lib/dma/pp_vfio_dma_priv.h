/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_vfio_dma_priv.h - the VFIO backend of lib/dma, as dma.c calls it.
 * dma.c keeps the arena table and the O(1) page lookup; vfio.c owns the
 * container, its groups and the IOVA space (allocated by iova_space.c).
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

#endif /* PP_VFIO_DMA_PRIV_H */
