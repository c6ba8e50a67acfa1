/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dma.c - IOVA domains: VA (IOVA = virtual address), PA (physical address
 * from pagemap), OPS (a caller's table) and VFIO (the container and IOVA
 * allocation live in vfio.c; here each arena keeps its IOVA base) and
 * VERBS (the registrations and key table live in verbs.c).
 *
 * The expensive part happens once per arena in pp_dma_map_arena(): the
 * backend's segment_map for OPS, one pagemap read per hugepage for PA.
 * pp_dma_map_page() is then a lookup: find the mapped arena that contains
 * the address (a linear scan; a process has a handful of arenas), and for
 * PA add the offset to the physical base of the hugepage it lies in.
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
#include "pp_verbs_dma_priv.h"
#include "pp_vfio_dma_priv.h"
#include "pp_os_fault.h"
#include "pp_pagemap.h"

/* A handful of arenas per process (one per NUMA node, a few in tests). */
#define DMA_MAX_ARENAS 32

struct dma_arena {
	struct pp_arena *arena;
	uintptr_t base;
	size_t size;
	/* Unit that is physically contiguous: the smallest segment page. */
	size_t unit;
	unsigned int unit_shift;
	uint64_t *pa; /* PA mode: physical base of each unit */
	uint64_t iova; /* VFIO mode: IOVA of base; pages at iova + offset */
	struct pp_verbs_arena *verbs; /* VERBS mode: registrations, keys */
};

struct pp_dma {
	enum pp_iova_mode mode;
	struct pp_dma_ops ops;
	void *ops_ctx;
	struct pp_vfio *vfio; /* VFIO mode */
	struct pp_verbs *verbs; /* VERBS mode */
	pthread_mutex_t lock; /* arena map/unmap; never on the data path */
	unsigned int nr_mapped;
	/* Slots below nr_slots may be in use; published with release. */
	unsigned int nr_slots;
	struct dma_arena *slots[DMA_MAX_ARENAS];
};

struct pp_dma *pp_dma_create(const struct pp_dma_opts *opts)
{
	struct pp_dma_ops ops = { 0 };
	struct pp_dma *dma;

	if (pp_opts_valid(opts, sizeof(*opts), sizeof(*opts),
			  "struct pp_dma_opts")) {
		errno = EINVAL;
		return NULL;
	}
	if (opts->mode != PP_IOVA_VA && opts->mode != PP_IOVA_PA &&
	    opts->mode != PP_IOVA_OPS && opts->mode != PP_IOVA_VFIO &&
	    opts->mode != PP_IOVA_VERBS) {
		PP_ERR("dma: unknown IOVA mode %d: use PP_IOVA_VA, PP_IOVA_PA, PP_IOVA_OPS, PP_IOVA_VFIO or PP_IOVA_VERBS",
		       (int)opts->mode);
		errno = EINVAL;
		return NULL;
	}
	/* The first published table ended before page_unmap: an older,
	 * shorter table leaves the newer hooks NULL. */
	if (opts->mode == PP_IOVA_OPS &&
	    (pp_opts_copy(&ops, opts->ops, offsetof(struct pp_dma_ops, page_unmap),
			  sizeof(ops), "struct pp_dma_ops") || !ops.page_map)) {
		PP_ERR("dma: IOVA mode ops needs opts.ops with sz set and a page_map hook");
		errno = EINVAL;
		return NULL;
	}
	dma = pp_os_calloc(1, sizeof(*dma));
	if (!dma) {
		PP_ERR("pp_dma_create: out of memory for the domain");
		errno = ENOMEM;
		return NULL;
	}
	dma->mode = opts->mode;
	if (opts->mode == PP_IOVA_OPS) {
		dma->ops = ops;
		dma->ops_ctx = opts->ops_ctx;
	}
	if (opts->mode == PP_IOVA_VFIO) {
		dma->vfio = pp_vfio_create(opts);
		if (!dma->vfio) {
			int err = errno;

			free(dma);
			errno = err;
			return NULL;
		}
	}
	if (opts->mode == PP_IOVA_VERBS) {
		dma->verbs = pp_verbs_create(opts);
		if (!dma->verbs) {
			int err = errno;

			free(dma);
			errno = err;
			return NULL;
		}
	}
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
	pp_vfio_destroy(dma->vfio);
	if (dma->verbs)
		pp_verbs_destroy(dma->verbs);
	pthread_mutex_destroy(&dma->lock);
	free(dma);
	return 0;
}

enum pp_iova_mode pp_dma_mode(const struct pp_dma *dma)
{
	return dma->mode;
}

static const char *arena_name(struct pp_arena *arena)
{
	const char *name = pp_arena_name(arena);

	return name ? name : "(unnamed)";
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

static void unmap_segments(struct pp_dma *dma, struct pp_arena *arena,
			   unsigned int nr)
{
	struct pp_arena_segment seg;
	unsigned int i;

	if (dma->mode != PP_IOVA_OPS || !dma->ops.segment_unmap)
		return;
	for (i = 0; i < nr; i++)
		if (pp_arena_segment(arena, i, &seg) == 0)
			dma->ops.segment_unmap(dma->ops_ctx, &seg);
}

/* PA mode: one pagemap read per unit of each segment. */
static int read_phys(struct dma_arena *a, unsigned int nr_segs)
{
	struct pp_arena_segment seg;
	unsigned int i;
	size_t u, first, n;
	int err;

	a->pa = pp_os_calloc(a->size >> a->unit_shift, sizeof(*a->pa));
	if (!a->pa) {
		PP_ERR("dma: arena %s: out of memory for %zu physical addresses",
		       arena_name(a->arena), a->size >> a->unit_shift);
		return -ENOMEM;
	}
	for (i = 0; i < nr_segs; i++) {
		err = pp_arena_segment(a->arena, i, &seg);
		if (err)
			return err;
		first = ((uintptr_t)seg.addr - a->base) >> a->unit_shift;
		n = seg.len >> a->unit_shift;
		err = pp_os_virt_to_phys(seg.addr, a->unit, n, a->pa + first);
		if (err == -EPERM) {
			PP_ERR("dma: arena %s: pagemap hides physical addresses: run as root (CAP_SYS_ADMIN) or use IOVA mode va",
			       arena_name(a->arena));
			return err;
		}
		if (err == -EFAULT) {
			PP_ERR("dma: arena %s: a page of segment %u is not present in /proc/self/pagemap: IOVA mode pa needs a populated, locked arena",
			       arena_name(a->arena), i);
			return err;
		}
		if (err) {
			PP_ERR("dma: arena %s: reading /proc/self/pagemap failed (%s): IOVA mode pa needs procfs mounted",
			       arena_name(a->arena), strerror(-err));
			return err;
		}
		for (u = first; u < first + n; u++) {
			/* A hugepage is naturally aligned in physical memory
			 * too; anything else is not a hugepage. */
			if (a->pa[u] & (a->unit - 1)) {
				PP_ERR("dma: arena %s: physical address 0x%llx of a %zu KiB page is misaligned: refusing IOVA mode pa",
				       arena_name(a->arena),
				       (unsigned long long)a->pa[u],
				       a->unit >> 10);
				return -EFAULT;
			}
		}
	}
	return 0;
}

int pp_dma_map_arena(struct pp_dma *dma, struct pp_arena *arena)
{
	struct pp_arena_segment seg;
	struct dma_arena *a;
	unsigned int i, nr_segs, mapped = 0;
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
		       arena_name(arena), DMA_MAX_ARENAS);
		err = -ENOSPC;
		goto err_unlock;
	}
	a = pp_os_calloc(1, sizeof(*a));
	if (!a) {
		PP_ERR("dma: arena %s: out of memory for its mapping record",
		       arena_name(arena));
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

	if (dma->mode == PP_IOVA_PA) {
		err = read_phys(a, nr_segs);
		if (err)
			goto err_free;
	} else if (dma->mode == PP_IOVA_OPS && dma->ops.segment_map) {
		for (mapped = 0; mapped < nr_segs; mapped++) {
			err = pp_arena_segment(arena, mapped, &seg);
			if (!err)
				err = dma->ops.segment_map(dma->ops_ctx, &seg);
			if (err) {
				PP_ERR("dma: arena %s: backend %s failed to map segment %u (%s)",
				       arena_name(arena),
				       dma->ops.name ? dma->ops.name : "ops",
				       mapped, strerror(err < 0 ? -err : err));
				goto err_unmap_segments;
			}
		}
	} else if (dma->mode == PP_IOVA_VFIO) {
		err = pp_vfio_map_arena(dma->vfio, arena, &a->iova);
		if (err)
			goto err_free;
	} else if (dma->mode == PP_IOVA_VERBS) {
		err = pp_verbs_map_arena(dma->verbs, arena, &a->verbs);
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

err_unmap_segments:
	unmap_segments(dma, arena, mapped);
err_free:
	free(a->pa);
	free(a);
err_unlock:
	pthread_mutex_unlock(&dma->lock);
	return err;
}

int pp_dma_unmap_arena(struct pp_dma *dma, struct pp_arena *arena)
{
	struct dma_arena *a;
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
	unmap_segments(dma, arena, pp_arena_segment_count(arena));
	if (dma->mode == PP_IOVA_VFIO)
		pp_vfio_unmap_arena(dma->vfio, arena, a->iova);
	if (dma->mode == PP_IOVA_VERBS)
		err = pp_verbs_unmap_arena(a->verbs);
	dma->nr_mapped--;
	pthread_mutex_unlock(&dma->lock);
	free(a->pa);
	free(a);
	return err;
}

static struct dma_arena *find_arena(struct pp_dma *dma, uintptr_t addr)
{
	/* Pairs with the release stores in pp_dma_map_arena(). */
	unsigned int i, n = __atomic_load_n(&dma->nr_slots, __ATOMIC_ACQUIRE);
	struct dma_arena *a;

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
	struct dma_arena *a = find_arena(dma, va);
	size_t len, off, in;

	if (PP_UNLIKELY(!a))
		return -ENOENT;
	if (PP_UNLIKELY(order >= 8 * sizeof(size_t) - PP_PAGE_SHIFT))
		return -EINVAL;
	len = PP_PAGE_SIZE << order;
	off = va - a->base;
	if (PP_UNLIKELY(len > a->size - off))
		return -EINVAL;

	switch (dma->mode) {
	case PP_IOVA_VA:
		*iova = (uint64_t)va;
		return 0;
	case PP_IOVA_PA:
		/* Physically contiguous only within one unit (hugepage). */
		in = off & (a->unit - 1);
		if (PP_UNLIKELY(in + len > a->unit))
			return -EINVAL;
		*iova = a->pa[off >> a->unit_shift] + in;
		return 0;
	case PP_IOVA_OPS:
		return dma->ops.page_map(dma->ops_ctx, addr, len, dir, iova);
	case PP_IOVA_VFIO:
		/* The arena is mapped as one IOVA-contiguous range. */
		*iova = a->iova + off;
		return 0;
	case PP_IOVA_VERBS:
		/* Work requests carry virtual addresses; one SGE must lie
		 * inside one registration. */
		if (PP_UNLIKELY(pp_verbs_keys(a->verbs, off, len, NULL, NULL)))
			return -EINVAL;
		*iova = (uint64_t)va;
		return 0;
	}
	return -EINVAL;
}

void pp_dma_unmap_page(struct pp_dma *dma, uint64_t iova, unsigned int order,
		       enum pp_dma_dir dir)
{
	if (dma->mode == PP_IOVA_OPS && dma->ops.page_unmap)
		dma->ops.page_unmap(dma->ops_ctx, iova, PP_PAGE_SIZE << order,
				    dir);
}

void pp_dma_sync_for_device(struct pp_dma *dma, uint64_t iova, size_t len,
			    enum pp_dma_dir dir)
{
	if (dma->mode == PP_IOVA_OPS && dma->ops.sync_for_device)
		dma->ops.sync_for_device(dma->ops_ctx, iova, len, dir);
}

void pp_dma_sync_for_cpu(struct pp_dma *dma, uint64_t iova, size_t len,
			 enum pp_dma_dir dir)
{
	if (dma->mode == PP_IOVA_OPS && dma->ops.sync_for_cpu)
		dma->ops.sync_for_cpu(dma->ops_ctx, iova, len, dir);
}

int pp_dma_vfio_add_device(struct pp_dma *dma, const char *pci_addr)
{
	if (!dma || dma->mode != PP_IOVA_VFIO || !pci_addr)
		return -EINVAL;
	return pp_vfio_add_device(dma->vfio, pci_addr);
}

int pp_dma_vfio_device_fd(struct pp_dma *dma, const char *pci_addr)
{
	if (!dma || dma->mode != PP_IOVA_VFIO || !pci_addr)
		return -EINVAL;
	return pp_vfio_device_fd(dma->vfio, pci_addr);
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
	struct dma_arena *a;

	if (!PP_HAVE_VERBS)
		return -EOPNOTSUPP;
	if (!dma || dma->mode != PP_IOVA_VERBS)
		return -EINVAL;
	a = find_arena(dma, va);
	if (PP_UNLIKELY(!a))
		return -ENOENT;
	if (PP_UNLIKELY(len > a->size - (va - a->base)))
		return -EINVAL;
	return pp_verbs_keys(a->verbs, va - a->base, len, lkey, rkey);
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
			 (int)pp_verbs_arena_mrs(dma->slots[slot]->verbs);
	pthread_mutex_unlock(&dma->lock);
	return ret;
}
