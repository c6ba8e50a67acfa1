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
 * The expensive part happens once per segment, not per page: the mode's
 * map_segment (the backend's segment_map for OPS, one pagemap read per
 * hugepage for PA, VFIO_IOMMU_MAP_DMA, ibv_reg_mr). pp_dma_map_arena()
 * records the arena's whole span (a growable arena's reserved range) and
 * listens to the arena (pp_arena_listen()): the segments committed now
 * are mapped at once, and every segment the arena commits or releases
 * later is mapped or unmapped by the listener, before the allocator sees
 * a page of it and after it has taken every page back. pp_dma_map_page()
 * is then a lookup: find the mapped arena that contains the address (a
 * linear scan; a process has a handful of arenas), then translate the
 * offset as the mode's xlate says: inline for VA, PA and VFIO (no call),
 * through the mode's map_page for OPS and VERBS.
 *
 * Concurrency: map/unmap of arenas and segments are control calls
 * serialised by the domain's mutex, which is taken after an arena's lock
 * when a segment comes or goes, and so never held while calling the
 * arena. The data path reads the arena table without a lock: a table
 * entry is filled in completely before it is published with a release
 * store, and readers load it with acquire. Unmapping an arena while
 * another thread still maps pages of it is the caller's bug (the pages
 * would be unusable anyway); the entry is freed only after it is
 * unpublished.
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
#include "pp_arena_user.h"

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
	/* Arena map/unmap and every mode hook; never on the data path.
	 * Taken after an arena's lock (the listener's calls), never
	 * before: see pp_dma_map_arena(). */
	pthread_mutex_t lock;
	unsigned int nr_mapped; /* records in recs[], pending ones too */
	/* Every record, by table index, from the moment map_arena takes the
	 * index until unmap_arena is done with it (under the lock). */
	struct pp_dma_arena *recs[DMA_MAX_ARENAS];
	/* The data path's table: a record is here only while it is fully
	 * mapped. Slots below nr_slots may be in use; published with
	 * release. */
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

/* The record of @arena, pending or published, or -1. Caller holds
 * dma->lock. */
static int find_rec(struct pp_dma *dma, const struct pp_arena *arena)
{
	unsigned int i;

	for (i = 0; i < DMA_MAX_ARENAS; i++)
		if (dma->recs[i] && dma->recs[i]->arena == arena)
			return (int)i;
	return -1;
}

/* The index of @arena's record once fully mapped, else -1 (not mapped,
 * or being mapped or unmapped by another thread). Caller holds
 * dma->lock. */
static int find_slot(struct pp_dma *dma, const struct pp_arena *arena)
{
	int i = find_rec(dma, arena);

	return i >= 0 && dma->slots[i] == dma->recs[i] ? i : -1;
}

/*
 * The arena's listener (pp_arena_user.h): a segment committed or
 * released, in the domain. The arena's lock is held; the domain's is
 * taken here, after it, which is the one order the two are ever taken
 * in (pp_dma_map_arena() and pp_dma_unmap_arena() never hold the
 * domain's lock while they call the arena).
 */
static int dma_segment_map(void *ctx, const struct pp_arena_segment *seg)
{
	struct pp_dma_arena *a = ctx;
	struct pp_dma *dma = a->dma;
	size_t off = (uintptr_t)seg->addr - a->base;
	size_t align = (size_t)1 << a->seg_shift;
	int err = 0;

	/* What the tables below were sized and cut for at map time. */
	if (off >= a->size || seg->len > a->size - off ||
	    ((off | seg->len) & (align - 1)) || seg->page_size < a->unit) {
		PP_ERR("dma: arena %s: refusing the segment at offset %zu KiB (%zu KiB on %zu KiB pages): the domain cut the arena's %zu KiB in units of %zu KiB on pages of at least %zu KiB when it was mapped, and every segment must fit them",
		       a->name, off >> 10, seg->len >> 10,
		       seg->page_size >> 10, a->size >> 10, align >> 10,
		       a->unit >> 10);
		return -EINVAL;
	}
	pthread_mutex_lock(&dma->lock);
	if (dma->m->map_segment)
		err = dma->m->map_segment(dma->mode_priv, a, seg);
	pthread_mutex_unlock(&dma->lock);
	return err;
}

static void dma_segment_unmap(void *ctx, const struct pp_arena_segment *seg)
{
	struct pp_dma_arena *a = ctx;
	struct pp_dma *dma = a->dma;

	pthread_mutex_lock(&dma->lock);
	if (dma->m->unmap_segment)
		dma->m->unmap_segment(dma->mode_priv, a, seg);
	pthread_mutex_unlock(&dma->lock);
}

/*
 * A record for @arena's whole span, from what the arena says now (no
 * lock of ours is held: the arena's calls may take its own). Segments
 * committed later are cut on the same step, which seg_shift divides.
 */
static int record_new(struct pp_dma *dma, struct pp_arena *arena,
		      struct pp_dma_arena **out)
{
	struct pp_arena_segment seg;
	struct pp_dma_arena *a;
	unsigned int i, nr_segs;
	uint64_t bits;

	a = pp_os_calloc(1, sizeof(*a));
	if (!a) {
		PP_ERR("dma: arena %s: out of memory for its mapping record",
		       pp_dma_arena_name(arena));
		return -ENOMEM;
	}
	a->arena = arena;
	a->name = pp_dma_arena_name(arena);
	a->dma = dma;
	a->base = (uintptr_t)pp_arena_base(arena);
	a->size = pp_arena_size(arena);
	a->page_size = pp_arena_page_size(arena);
	a->unit = a->page_size;
	bits = a->size | pp_arena_slot_size(arena);
	nr_segs = pp_arena_segment_count(arena);
	for (i = 0; i < nr_segs; i++) {
		/* A segment released meanwhile ends the list early. */
		if (pp_arena_segment(arena, i, &seg))
			break;
		if (seg.page_size < a->unit)
			a->unit = seg.page_size;
		bits |= ((uintptr_t)seg.addr - a->base) | seg.len;
	}
	if (!a->size || !a->unit || (a->unit & (a->unit - 1))) {
		free(a);
		return -EINVAL;
	}
	a->unit_shift = (unsigned int)__builtin_ctzll(a->unit);
	a->seg_shift = (unsigned int)__builtin_ctzll(bits);
	a->iova = (uint64_t)a->base; /* identity, unless the mode moves it */
	a->listener.map = dma_segment_map;
	a->listener.unmap = dma_segment_unmap;
	a->listener.ctx = a;
	*out = a;
	return 0;
}

/* Take a table index for @a and let the mode prepare the span. */
static int record_add(struct pp_dma *dma, struct pp_dma_arena *a, int *idx)
{
	int i, err = 0;

	pthread_mutex_lock(&dma->lock);
	if (find_rec(dma, a->arena) >= 0) {
		err = -EEXIST;
		goto out;
	}
	for (i = 0; i < DMA_MAX_ARENAS && dma->recs[i]; i++)
		;
	if (i == DMA_MAX_ARENAS) {
		PP_ERR("dma: arena %s: already %u arenas mapped: use fewer, larger arenas",
		       a->name, DMA_MAX_ARENAS);
		err = -ENOSPC;
		goto out;
	}
	if (dma->m->map_arena)
		err = dma->m->map_arena(dma->mode_priv, a);
	if (!err) {
		dma->recs[i] = a;
		dma->nr_mapped++;
		*idx = i;
	}
out:
	pthread_mutex_unlock(&dma->lock);
	return err;
}

/* The mode lets go of the span, and the index is free again. */
static int record_remove(struct pp_dma *dma, int idx)
{
	int err = 0;

	pthread_mutex_lock(&dma->lock);
	if (dma->m->unmap_arena)
		err = dma->m->unmap_arena(dma->mode_priv, dma->recs[idx]);
	dma->recs[idx] = NULL;
	dma->nr_mapped--;
	pthread_mutex_unlock(&dma->lock);
	return err;
}

/*
 * Three steps, the domain's lock held in the first and the last only:
 * the record takes its table index (the span prepared by the mode), the
 * arena's listener maps every committed segment (pp_arena_listen() takes
 * the arena's lock, then each map takes ours: holding ours across it
 * would invert the order growth takes them in), then the record is
 * published to the data path. A second map of the same arena meanwhile
 * finds the record and gets -EEXIST.
 */
int pp_dma_map_arena(struct pp_dma *dma, struct pp_arena *arena)
{
	struct pp_dma_arena *a;
	int idx, err;

	if (!dma || !arena)
		return -EINVAL;
	err = record_new(dma, arena, &a);
	if (err)
		return err;
	err = record_add(dma, a, &idx);
	if (err) {
		free(a);
		return err;
	}
	err = pp_arena_listen(arena, &a->listener);
	if (err) {
		record_remove(dma, idx);
		free(a);
		return err;
	}
	pthread_mutex_lock(&dma->lock);
	/* Pairs with the acquire loads in find_arena(): the entry is
	 * complete before a data-path reader can see it. */
	__atomic_store_n(&dma->slots[idx], a, __ATOMIC_RELEASE);
	if ((unsigned int)idx >= dma->nr_slots)
		__atomic_store_n(&dma->nr_slots, (unsigned int)idx + 1,
				 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dma->lock);
	return 0;
}

/* The reverse, in the same three steps: unpublished, the segments
 * unmapped through the listener (the arena's lock, then ours), the span
 * released. */
int pp_dma_unmap_arena(struct pp_dma *dma, struct pp_arena *arena)
{
	struct pp_dma_arena *a;
	int idx, err;

	if (!dma || !arena)
		return -EINVAL;
	pthread_mutex_lock(&dma->lock);
	idx = find_slot(dma, arena);
	if (idx < 0) {
		pthread_mutex_unlock(&dma->lock);
		return -ENOENT;
	}
	a = dma->slots[idx];
	__atomic_store_n(&dma->slots[idx], NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&dma->lock);
	pp_arena_unlisten(arena, &a->listener);
	err = record_remove(dma, idx);
	if (!err)
		err = a->unmap_err;
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
		uint64_t pa;

		in = off & (a->unit - 1);
		if (PP_UNLIKELY(in + len > a->unit))
			return -EINVAL;
		/* 0: a unit of a growable arena's span that is not
		 * committed (relaxed: growth stores it before the
		 * allocator hands out a page of it). */
		pa = __atomic_load_n(&a->unit_iova[off >> a->unit_shift],
				     __ATOMIC_RELAXED);
		if (PP_UNLIKELY(!pa))
			return -ENOENT;
		*iova = pa + in;
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
