/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pa.c - IOVA mode pa: the device is given physical addresses, read from
 * /proc/self/pagemap once per unit (the arena's smallest page) when the
 * arena is mapped. The per-page translation is the unit table plus the
 * offset inside the unit, done inline by dma.c (PP_DMA_XLATE_UNITS): no
 * hook on the data path. Needs CAP_SYS_ADMIN (the kernel hides PFNs from
 * others) and a populated, locked arena.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "pp_dma_mode_priv.h"
#include "pp_os_fault.h"
#include "pp_pagemap.h"

static int pa_map_arena(void *priv, struct pp_dma_arena *a)
{
	unsigned int i, nr_segs = pp_arena_segment_count(a->arena);
	struct pp_arena_segment seg;
	size_t u, first, n;
	uint64_t *pa;
	int err;

	(void)priv;
	pa = pp_os_calloc(a->size >> a->unit_shift, sizeof(*pa));
	if (!pa) {
		PP_ERR("dma: arena %s: out of memory for %zu physical addresses",
		       pp_dma_arena_name(a->arena), a->size >> a->unit_shift);
		return -ENOMEM;
	}
	for (i = 0; i < nr_segs; i++) {
		err = pp_arena_segment(a->arena, i, &seg);
		if (err)
			goto err_free;
		first = ((uintptr_t)seg.addr - a->base) >> a->unit_shift;
		n = seg.len >> a->unit_shift;
		err = pp_os_virt_to_phys(seg.addr, a->unit, n, pa + first);
		if (err == -EPERM) {
			PP_ERR("dma: arena %s: pagemap hides physical addresses: run as root (CAP_SYS_ADMIN) or use IOVA mode va",
			       pp_dma_arena_name(a->arena));
			goto err_free;
		}
		if (err == -EFAULT) {
			PP_ERR("dma: arena %s: a page of segment %u is not present in /proc/self/pagemap: IOVA mode pa needs a populated, locked arena",
			       pp_dma_arena_name(a->arena), i);
			goto err_free;
		}
		if (err) {
			PP_ERR("dma: arena %s: reading /proc/self/pagemap failed (%s): IOVA mode pa needs procfs mounted",
			       pp_dma_arena_name(a->arena), strerror(-err));
			goto err_free;
		}
		for (u = first; u < first + n; u++) {
			/* A hugepage is naturally aligned in physical memory
			 * too; anything else is not a hugepage. */
			if (pa[u] & (a->unit - 1)) {
				PP_ERR("dma: arena %s: physical address 0x%llx of a %zu KiB page is misaligned: refusing IOVA mode pa",
				       pp_dma_arena_name(a->arena),
				       (unsigned long long)pa[u],
				       a->unit >> 10);
				err = -EFAULT;
				goto err_free;
			}
		}
	}
	a->unit_iova = pa;
	return 0;

err_free:
	free(pa);
	return err;
}

static int pa_unmap_arena(void *priv, struct pp_dma_arena *a)
{
	(void)priv;
	/* The arena is out of the table: no reader can still see this. */
	free(a->unit_iova);
	a->unit_iova = NULL;
	return 0;
}

const struct pp_dma_mode pp_dma_mode_pa = {
	.name = "pa",
	.xlate = PP_DMA_XLATE_UNITS,
	.map_arena = pa_map_arena,
	.unmap_arena = pa_unmap_arena,
};
