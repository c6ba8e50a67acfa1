/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dma.c - IOVA domains, the part that does not depend on the mode: the
 * options checks, the table of mapped arenas, its lock and the lookup of
 * the arena a page lies in. Each mode is a struct pp_dma_mode
 * (pp_dma_mode_priv.h) in its own file: pa.c, ops.c, vfio.c, verbs.c.
 * Mode VA is here: it has no state and no hook (IOVA = the address, which
 * is the identity base every arena starts with), so a file of its own
 * would hold an empty table.
 *
 * The expensive part happens once per arena in pp_dma_map_arena(): the
 * mode's map_arena (the backend's segment_map for OPS, one pagemap read
 * per hugepage for PA, VFIO_IOMMU_MAP_DMA, ibv_reg_mr). pp_dma_map_page()
 * is then a lookup: find the mapped arena that contains the address (a
 * linear scan; a process has a handful of arenas), then translate the
 * offset as the mode's xlate says: inline for VA, PA and VFIO (no call),
 * through the mode's map_page for OPS and VERBS.
 *
 * Concurrency: map/unmap of arenas are control calls serialised by a mutex.
 * The data path reads the arena table without a lock: a table entry is
 * filled in completely before it is published with a release store, and
 * readers load it with acquire. Unmapping an arena while another thread
 * still maps pages of it is the caller's bug (the pages would be unusable
 * anyway); the entry is freed only after it is unpublished.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <pagepool/pp_dma.h>

#include "pp_log.h"
#include "pp_opts.h"
#include "pp_dma_mode_priv.h"
#include "pp_verbs_dma_priv.h"
#include "pp_vfio_dma_priv.h"
#include "pp_os_fault.h"

/* A handful of arenas per process (one per NUMA node, a few in tests). */
#define DMA_MAX_ARENAS 32

static const struct pp_dma_mode dma_mode_va = {
	.name = "va",
	.xlate = PP_DMA_XLATE_LINEAR,
};

/* Indexed by enum pp_iova_mode. */
static const struct pp_dma_mode *const dma_modes[] = {
	[PP_IOVA_VA] = &dma_mode_va,
	[PP_IOVA_PA] = &pp_dma_mode_pa,
	[PP_IOVA_OPS] = &pp_dma_mode_ops,
	[PP_IOVA_VFIO] = &pp_dma_mode_vfio,
	[PP_IOVA_VERBS] = &pp_dma_mode_verbs,
};

struct pp_dma {
	/* The mode's xlate, copied here: pp_dma_map_page() reads it on
	 * every call and need not load the mode's table for VA, PA, VFIO. */
	enum pp_dma_xlate xlate;
	enum pp_iova_mode mode;
	const struct pp_dma_mode *m;
	void *mode_priv; /* the mode's state, from its create */
	pthread_mutex_t lock; /* arena map/unmap; never on the data path */
	unsigned int nr_mapped;
	/* Slots below nr_slots may be in use; published with release. */
	unsigned int nr_slots;
	struct pp_dma_arena *slots[DMA_MAX_ARENAS];
};

struct pp_dma *pp_dma_create(const struct pp_dma_opts *opts)
{
	const struct pp_dma_mode *m;
	void *priv = NULL;
	struct pp_dma *dma;
	int err;

	if (pp_opts_valid(opts, sizeof(*opts), sizeof(*opts),
			  "struct pp_dma_opts")) {
		errno = EINVAL;
		return NULL;
	}
	if ((unsigned int)opts->mode >= sizeof(dma_modes) / sizeof(dma_modes[0])) {
		PP_ERR("dma: unknown IOVA mode %d: use PP_IOVA_VA, PP_IOVA_PA, PP_IOVA_OPS, PP_IOVA_VFIO or PP_IOVA_VERBS",
		       (int)opts->mode);
		errno = EINVAL;
		return NULL;
	}
	m = dma_modes[opts->mode];
	if (m->create) {
		err = m->create(opts, &priv);
		if (err) {
			errno = -err;
			return NULL;
		}
	}
	dma = pp_os_calloc(1, sizeof(*dma));
	if (!dma) {
		PP_ERR("pp_dma_create: out of memory for the domain");
		if (m->destroy)
			m->destroy(priv);
		errno = ENOMEM;
		return NULL;
	}
	dma->xlate = m->xlate;
	dma->mode = opts->mode;
	dma->m = m;
	dma->mode_priv = priv;
	pthread_mutex_init(&dma->lock, NULL);
	return dma;
}

int pp_dma_destroy(struct pp_dma *dma)
{
	unsigned int nr;

	if (!dma)
		return 0;
	pthread_mutex_lock(&dma->lock);
	nr = dma->nr_mapped;
	pthread_mutex_unlock(&dma->lock);
	if (nr) {
		PP_ERR("dma: destroy refused, %u arena(s) still mapped: pp_dma_unmap_arena() them first",
		       nr);
		return -EBUSY;
	}
	if (dma->m->destroy)
		dma->m->destroy(dma->mode_priv);
	pthread_mutex_destroy(&dma->lock);
	free(dma);
	return 0;
}

enum pp_iova_mode pp_dma_mode(const struct pp_dma *dma)
{
	return dma->mode;
}

/* Caller holds dma->lock. */
static int find_slot(struct pp_dma *dma, const struct pp_arena *arena)
{
	unsigned int i;

	for (i = 0; i < dma->nr_slots; i++)
		if (dma->slots[i] && dma->slots[i]->arena == arena)
			return (int)i;
	return -1;
}

int pp_dma_map_arena(struct pp_dma *dma, struct pp_arena *arena)
{
	struct pp_arena_segment seg;
	struct pp_dma_arena *a;
	unsigned int i, nr_segs;
	int slot = -1, err;

	if (!dma || !arena)
		return -EINVAL;
	pthread_mutex_lock(&dma->lock);
	if (find_slot(dma, arena) >= 0) {
		err = -EEXIST;
		goto err_unlock;
	}
	for (i = 0; i < DMA_MAX_ARENAS; i++) {
		if (!dma->slots[i]) {
			slot = (int)i;
			break;
		}
	}
	if (slot < 0) {
		PP_ERR("dma: arena %s: already %u arenas mapped: use fewer, larger arenas",
		       pp_dma_arena_name(arena), DMA_MAX_ARENAS);
		err = -ENOSPC;
		goto err_unlock;
	}
	a = pp_os_calloc(1, sizeof(*a));
	if (!a) {
		PP_ERR("dma: arena %s: out of memory for its mapping record",
		       pp_dma_arena_name(arena));
		err = -ENOMEM;
		goto err_unlock;
	}
	a->arena = arena;
	a->base = (uintptr_t)pp_arena_base(arena);
	a->size = pp_arena_size(arena);
	a->unit = pp_arena_page_size(arena);
	nr_segs = pp_arena_segment_count(arena);
	for (i = 0; i < nr_segs; i++) {
		err = pp_arena_segment(arena, i, &seg);
		if (err)
			goto err_free;
		if (seg.page_size < a->unit)
			a->unit = seg.page_size;
	}
	if (!a->unit || (a->unit & (a->unit - 1))) {
		err = -EINVAL;
		goto err_free;
	}
	a->unit_shift = (unsigned int)__builtin_ctzll(a->unit);
	a->iova = (uint64_t)a->base; /* identity, unless the mode moves it */
	if (dma->m->map_arena) {
		err = dma->m->map_arena(dma->mode_priv, a);
		if (err)
			goto err_free;
	}

	/* Pairs with the acquire loads in find_arena(): the entry is
	 * complete before a data-path reader can see it. */
	__atomic_store_n(&dma->slots[slot], a, __ATOMIC_RELEASE);
	if ((unsigned int)slot >= dma->nr_slots)
		__atomic_store_n(&dma->nr_slots, (unsigned int)slot + 1,
				 __ATOMIC_RELEASE);
	dma->nr_mapped++;
	pthread_mutex_unlock(&dma->lock);
	return 0;

err_free:
	free(a);
err_unlock:
	pthread_mutex_unlock(&dma->lock);
	return err;
}

int pp_dma_unmap_arena(struct pp_dma *dma, struct pp_arena *arena)
{
	struct pp_dma_arena *a;
	int slot, err = 0;

	if (!dma || !arena)
		return -EINVAL;
	pthread_mutex_lock(&dma->lock);
	slot = find_slot(dma, arena);
	if (slot < 0) {
		pthread_mutex_unlock(&dma->lock);
		return -ENOENT;
	}
	a = dma->slots[slot];
	__atomic_store_n(&dma->slots[slot], NULL, __ATOMIC_RELAXED);
	if (dma->m->unmap_arena)
		err = dma->m->unmap_arena(dma->mode_priv, a);
	dma->nr_mapped--;
	pthread_mutex_unlock(&dma->lock);
	free(a);
	return err;
}

static struct pp_dma_arena *find_arena(struct pp_dma *dma, uintptr_t addr)
{
	/* Pairs with the release stores in pp_dma_map_arena(). */
	unsigned int i, n = __atomic_load_n(&dma->nr_slots, __ATOMIC_ACQUIRE);
	struct pp_dma_arena *a;

	for (i = 0; i < n; i++) {
		a = __atomic_load_n(&dma->slots[i], __ATOMIC_ACQUIRE);
		if (a && addr - a->base < a->size)
			return a;
	}
	return NULL;
}

int pp_dma_map_page(struct pp_dma *dma, void *addr, unsigned int order,
		    enum pp_dma_dir dir, uint64_t *iova)
{
	uintptr_t va = (uintptr_t)addr;
	struct pp_dma_arena *a = find_arena(dma, va);
	size_t len, off, in;

	if (PP_UNLIKELY(!a))
		return -ENOENT;
	if (PP_UNLIKELY(order >= 8 * sizeof(size_t) - PP_PAGE_SHIFT))
		return -EINVAL;
	len = PP_PAGE_SIZE << order;
	off = va - a->base;
	if (PP_UNLIKELY(len > a->size - off))
		return -EINVAL;

	/* Inline translations for the modes that are arithmetic (see
	 * pp_dma_mode_priv.h), the linear one tested first: VA and VFIO,
	 * the modes of every driver that maps per packet. */
	if (PP_LIKELY(dma->xlate == PP_DMA_XLATE_LINEAR)) {
		/* VA: iova is base. VFIO: the arena is mapped as one
		 * IOVA-contiguous range. */
		*iova = a->iova + off;
		return 0;
	}
	if (dma->xlate == PP_DMA_XLATE_UNITS) {
		/* PA: physically contiguous only within one unit
		 * (hugepage). */
		in = off & (a->unit - 1);
		if (PP_UNLIKELY(in + len > a->unit))
			return -EINVAL;
		*iova = a->unit_iova[off >> a->unit_shift] + in;
		return 0;
	}
	return dma->m->map_page(dma->mode_priv, a, addr, off, len, dir, iova);
}

void pp_dma_unmap_page(struct pp_dma *dma, uint64_t iova, unsigned int order,
		       enum pp_dma_dir dir)
{
	if (dma->m->unmap_page)
		dma->m->unmap_page(dma->mode_priv, iova, PP_PAGE_SIZE << order,
				   dir);
}

void pp_dma_sync_for_device(struct pp_dma *dma, uint64_t iova, size_t len,
			    enum pp_dma_dir dir)
{
	if (dma->m->sync_for_device)
		dma->m->sync_for_device(dma->mode_priv, iova, len, dir);
}

void pp_dma_sync_for_cpu(struct pp_dma *dma, uint64_t iova, size_t len,
			 enum pp_dma_dir dir)
{
	if (dma->m->sync_for_cpu)
		dma->m->sync_for_cpu(dma->mode_priv, iova, len, dir);
}

int pp_dma_vfio_add_device(struct pp_dma *dma, const char *pci_addr)
{
	if (!dma || dma->mode != PP_IOVA_VFIO || !pci_addr)
		return -EINVAL;
	return pp_vfio_add_device(dma->mode_priv, pci_addr);
}

int pp_dma_vfio_device_fd(struct pp_dma *dma, const char *pci_addr)
{
	if (!dma || dma->mode != PP_IOVA_VFIO || !pci_addr)
		return -EINVAL;
	return pp_vfio_device_fd(dma->mode_priv, pci_addr);
}

int pp_dma_vfio_arena_iova(struct pp_dma *dma, const struct pp_arena *arena,
			   uint64_t *iova)
{
	int slot, err = 0;

	if (!dma || dma->mode != PP_IOVA_VFIO)
		return -EINVAL;
	pthread_mutex_lock(&dma->lock);
	slot = find_slot(dma, arena);
	if (slot < 0)
		err = -ENOENT;
	else
		*iova = dma->slots[slot]->iova;
	pthread_mutex_unlock(&dma->lock);
	return err;
}

struct ibv_context *pp_dma_verbs_open(const char *name, unsigned int port)
{
	return pp_verbs_open(name, port);
}

int pp_dma_verbs_keys(struct pp_dma *dma, const void *addr, size_t len,
		      uint32_t *lkey, uint32_t *rkey)
{
	uintptr_t va = (uintptr_t)addr;
	struct pp_dma_arena *a;

	if (!PP_HAVE_VERBS)
		return -EOPNOTSUPP;
	if (!dma || dma->mode != PP_IOVA_VERBS)
		return -EINVAL;
	a = find_arena(dma, va);
	if (PP_UNLIKELY(!a))
		return -ENOENT;
	if (PP_UNLIKELY(len > a->size - (va - a->base)))
		return -EINVAL;
	return pp_verbs_keys(a->priv, va - a->base, len, lkey, rkey);
}

int pp_dma_verbs_arena_mrs(struct pp_dma *dma, const struct pp_arena *arena)
{
	int slot, ret;

	if (!PP_HAVE_VERBS)
		return -EOPNOTSUPP;
	if (!dma || dma->mode != PP_IOVA_VERBS)
		return -EINVAL;
	pthread_mutex_lock(&dma->lock);
	slot = find_slot(dma, arena);
	ret = slot < 0 ? -ENOENT :
			 (int)pp_verbs_arena_mrs(dma->slots[slot]->priv);
	pthread_mutex_unlock(&dma->lock);
	return ret;
}
