/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_vfio_dma_priv.h - the VFIO mode of lib/dma beyond its struct
 * pp_dma_mode (pp_dma_mode_priv.h): the calls of the public VFIO API that
 * dma.c forwards to the container. vfio.c owns the container, its groups
 * and the IOVA space (iova_space.c); dma.c keeps the arena table and the
 * O(1) page lookup.
 */
#ifndef PP_VFIO_DMA_PRIV_H
#define PP_VFIO_DMA_PRIV_H

struct pp_vfio;

/* @v is the mode's state (the domain's mode_priv). */
int pp_vfio_add_device(struct pp_vfio *v, const char *pci_addr);
int pp_vfio_device_fd(struct pp_vfio *v, const char *pci_addr);

#endif /* PP_VFIO_DMA_PRIV_H */
