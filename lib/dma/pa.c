/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pa.c - IOVA mode pa: the device is given physical addresses, read from
 * /proc/self/pagemap once per unit (the arena's smallest page) when a
 * segment is mapped: at pp_dma_map_arena(), and at each growth of a
 * growable arena, whose table covers its whole span. The per-page translation is the unit table plus the
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

/*
 * The table covers the whole span: a growable arena's uncommitted units
 * stay 0 (pp_dma_map_page() refuses them). calloc() leaves the pages of
 * a large table untouched until a segment's entries are written.
 */
static int pa_map_arena(void *priv, struct pp_dma_arena *a)
{
	(void)priv;
	a->unit_iova = pp_os_calloc(a->size >> a->unit_shift,
				    sizeof(*a->unit_iova));
	if (!a->unit_iova) {
		PP_ERR("dma: arena %s: out of memory for %zu physical addresses",
		       a->name, a->size >> a->unit_shift);
		return -ENOMEM;
	}
	return 0;
}

static int pa_unmap_arena(void *priv, struct pp_dma_arena *a)
{
	(void)priv;
	/* The arena is out of the table: no reader can still see this. */
	free(a->unit_iova);
	a->unit_iova = NULL;
	return 0;
}

/* One pagemap read per unit of the segment. */
static int pa_map_segment(void *priv, struct pp_dma_arena *a,
			  const struct pp_arena_segment *seg)
{
	size_t first = ((uintptr_t)seg->addr - a->base) >> a->unit_shift;
	size_t u, n = seg->len >> a->unit_shift;
	uint64_t *pa;
	int err;

	(void)priv;
	pa = pp_os_calloc(n, sizeof(*pa));
	if (!pa) {
		PP_ERR("dma: arena %s: out of memory for %zu physical addresses",
		       a->name, n);
		return -ENOMEM;
	}
	err = pp_os_virt_to_phys(seg->addr, a->unit, n, pa);
	if (err == -EPERM) {
		PP_ERR("dma: arena %s: pagemap hides physical addresses: run as root (CAP_SYS_ADMIN) or use IOVA mode va",
		       a->name);
		goto out;
	}
	if (err == -EFAULT) {
		PP_ERR("dma: arena %s: a page of the segment at offset %zu KiB is not present in /proc/self/pagemap: IOVA mode pa needs a populated, locked arena",
		       a->name, ((uintptr_t)seg->addr - a->base) >> 10);
		goto out;
	}
	if (err) {
		PP_ERR("dma: arena %s: reading /proc/self/pagemap failed (%s): IOVA mode pa needs procfs mounted",
		       a->name, strerror(-err));
		goto out;
	}
	for (u = 0; u < n; u++) {
		/* A hugepage is naturally aligned in physical memory too;
		 * anything else is not a hugepage. */
		if (pa[u] & (a->unit - 1)) {
			PP_ERR("dma: arena %s: physical address 0x%llx of a %zu KiB page is misaligned: refusing IOVA mode pa",
			       a->name, (unsigned long long)pa[u],
			       a->unit >> 10);
			err = -EFAULT;
			goto out;
		}
	}
	/* Relaxed: the data path reads them only for pages the allocator
	 * hands out after this segment is committed. */
	for (u = 0; u < n; u++)
		__atomic_store_n(&a->unit_iova[first + u], pa[u],
				 __ATOMIC_RELAXED);
out:
	free(pa);
	return err;
}

static void pa_unmap_segment(void *priv, struct pp_dma_arena *a,
			     const struct pp_arena_segment *seg)
{
	size_t first = ((uintptr_t)seg->addr - a->base) >> a->unit_shift;
	size_t u, n = seg->len >> a->unit_shift;

	(void)priv;
	for (u = first; u < first + n; u++)
		__atomic_store_n(&a->unit_iova[u], 0, __ATOMIC_RELAXED);
}

const struct pp_dma_mode pp_dma_mode_pa = {
	.name = "pa",
	.xlate = PP_DMA_XLATE_UNITS,
	.map_arena = pa_map_arena,
	.unmap_arena = pa_unmap_arena,
	.map_segment = pa_map_segment,
	.unmap_segment = pa_unmap_segment,
};
