/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_dma_mode_priv.h - what an IOVA mode gives lib/dma's domain (dma.c).
 *
 * dma.c owns everything that does not depend on the mode: the options
 * checks, the table of mapped arenas, its lock and the lookup of the arena
 * a page lies in. Each built-in mode is one const struct pp_dma_mode, in
 * the file of that mode:
 *
 *   va     dma.c       IOVA = virtual address: no state, no hooks
 *   pa     pa.c        physical addresses from /proc/self/pagemap
 *   ops    ops.c       the caller's struct pp_dma_ops
 *   vfio   vfio.c      the IOMMU behind a VFIO container
 *   verbs  verbs.c     RDMA registrations (verbs_off.c: the stub that
 *                      refuses when built without libibverbs)
 *
 * The per-page translation is not always a hook. pp_dma_map_page() runs
 * once per page lifetime in page_pool and once per packet for a driver's
 * foreign pages, so the two translations that are arithmetic (an IOVA
 * base plus the offset; a per-unit table plus the offset in the unit) are
 * done inline in dma.c, chosen by the mode's xlate; only the modes that
 * must run code per page (a caller's page_map, the verbs key check) pay an
 * indirect call.
 */
#ifndef PP_DMA_MODE_PRIV_H
#define PP_DMA_MODE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_dma.h>

#include "pp_arena_user.h"

/*
 * One mapped arena, as dma.c keeps it and a mode fills it in. It covers
 * the arena's whole span (pp_arena_size(): the reserved range of a
 * growable arena), committed or not; the segments in it come and go
 * through the arena's listener (dma.c), which calls the mode's
 * map_segment and unmap_segment.
 */
struct pp_dma_arena {
	struct pp_arena *arena;
	const char *name; /* for messages: never ask the arena from a hook */
	uintptr_t base;
	size_t size;
	size_t page_size; /* the arena's: what the IOMMU may map large */
	/* Unit that is physically contiguous: the smallest segment page. */
	size_t unit;
	unsigned int unit_shift;
	/* The largest power of two that divides every segment's offset and
	 * length (a growable arena's step, a fixed arena's size): verbs
	 * keys one registration per such unit. */
	unsigned int seg_shift;
	/* PP_DMA_XLATE_LINEAR: the IOVA of base (dma.c sets base itself,
	 * identity, before map_arena; VFIO may change it). */
	uint64_t iova;
	/* PP_DMA_XLATE_UNITS: the IOVA of each unit (size >> unit_shift
	 * entries, 0 where nothing is committed), owned by the mode. */
	uint64_t *unit_iova;
	/* The mode's own per-arena state (verbs: its registrations). */
	void *priv;
	/* The first error of an unmap_segment, for pp_dma_unmap_arena(). */
	int unmap_err;
	/* VFIO: a segment stayed mapped in the kernel, so the span's IOVAs
	 * must not be handed out again. */
	bool iova_stuck;
	/* dma.c's: the domain, and the arena's listener that points here. */
	struct pp_dma *dma;
	struct pp_arena_listener listener;
};

/* How pp_dma_map_page() turns an arena offset into an IOVA. */
enum pp_dma_xlate {
	PP_DMA_XLATE_LINEAR, /* iova + offset: VA, VFIO */
	PP_DMA_XLATE_UNITS,  /* unit_iova[unit] + offset in it: PA */
	PP_DMA_XLATE_HOOK,   /* the mode's map_page: OPS, VERBS */
};

/*
 * An IOVA mode. Hooks are called with the mode's state from create (priv,
 * NULL for a mode without any). Every NULL hook is a no-op.
 *
 * An arena's life in a mode: map_arena once (the span: VFIO takes its
 * IOVA range, PA and verbs their tables; nothing is mapped yet), then
 * map_segment for each segment committed now or later and unmap_segment
 * for each released (the arena's listener, in dma.c), then unmap_arena
 * once the last segment is unmapped. All of them run under the domain's
 * lock; map_segment and unmap_segment also under the arena's (which is
 * taken first: they must not call into the arena, and get everything in
 * @a and @seg). A hook that fails leaves nothing of its own mapped.
 */
struct pp_dma_mode {
	const char *name; /* "va", "pa", ...: for a reader in a debugger */
	enum pp_dma_xlate xlate;
	/* 0 with *priv set, or -errno after its message. */
	int (*create)(const struct pp_dma_opts *opts, void **priv);
	void (*destroy)(void *priv);
	int (*map_arena)(void *priv, struct pp_dma_arena *a);
	/* After the arena left the table and its segments were unmapped;
	 * 0 or the error to return from pp_dma_unmap_arena() (the arena is
	 * gone all the same). */
	int (*unmap_arena)(void *priv, struct pp_dma_arena *a);
	/* @seg lies inside @a, on its units: 0, or -errno after a message
	 * with nothing of @seg mapped. */
	int (*map_segment)(void *priv, struct pp_dma_arena *a,
			   const struct pp_arena_segment *seg);
	/* A failure is reported here and stored in a->unmap_err. */
	void (*unmap_segment)(void *priv, struct pp_dma_arena *a,
			      const struct pp_arena_segment *seg);
	/* PP_DMA_XLATE_HOOK only: [@off, @off + @len) of @a, at @addr,
	 * checked to lie inside the arena's span. Data path: no errno. */
	int (*map_page)(void *priv, const struct pp_dma_arena *a, void *addr,
			size_t off, size_t len, enum pp_dma_dir dir,
			uint64_t *iova);
	void (*unmap_page)(void *priv, uint64_t iova, size_t len,
			   enum pp_dma_dir dir);
	void (*sync_for_device)(void *priv, uint64_t iova, size_t len,
				enum pp_dma_dir dir);
	void (*sync_for_cpu)(void *priv, uint64_t iova, size_t len,
			     enum pp_dma_dir dir);
};

extern const struct pp_dma_mode pp_dma_mode_pa;
extern const struct pp_dma_mode pp_dma_mode_ops;
extern const struct pp_dma_mode pp_dma_mode_vfio;
extern const struct pp_dma_mode pp_dma_mode_verbs;

/* The name messages give an arena. */
static inline const char *pp_dma_arena_name(const struct pp_arena *arena)
{
	const char *name = pp_arena_name(arena);

	return name ? name : "(unnamed)";
}

#endif /* PP_DMA_MODE_PRIV_H */
