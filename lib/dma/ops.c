/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ops.c - IOVA mode ops: every step is the caller's struct pp_dma_ops
 * (an IOMMU this library does not drive, or a test that makes mappings
 * fail). segment_map once per segment when an arena is mapped and for
 * each segment a growable arena commits later (segment_unmap for each it
 * gives back), page_map for every page (PP_DMA_XLATE_HOOK), and the
 * optional unmap and sync hooks passed through.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "pp_opts.h"
#include "pp_dma_mode_priv.h"
#include "pp_os_fault.h"

struct dma_ops_mode {
	struct pp_dma_ops ops; /* the caller's, copied at create */
	void *ctx;
};

static int ops_create(const struct pp_dma_opts *opts, void **priv)
{
	struct pp_dma_ops ops = { 0 };
	struct dma_ops_mode *m;

	/* The first published table ended before page_unmap: an older,
	 * shorter table leaves the newer hooks NULL. */
	if (pp_opts_copy(&ops, opts->ops, offsetof(struct pp_dma_ops, page_unmap),
			 sizeof(ops), "struct pp_dma_ops") || !ops.page_map) {
		PP_ERR("dma: IOVA mode ops needs opts.ops with sz set and a page_map hook");
		return -EINVAL;
	}
	m = pp_os_calloc(1, sizeof(*m));
	if (!m) {
		PP_ERR("pp_dma_create: out of memory for the domain");
		return -ENOMEM;
	}
	m->ops = ops;
	m->ctx = opts->ops_ctx;
	*priv = m;
	return 0;
}

static void ops_destroy(void *priv)
{
	free(priv);
}

/* Once per segment, committed now or later (a growable arena's). */
static int ops_map_segment(void *priv, struct pp_dma_arena *a,
			   const struct pp_arena_segment *seg)
{
	struct dma_ops_mode *m = priv;
	int err;

	if (!m->ops.segment_map)
		return 0;
	err = m->ops.segment_map(m->ctx, seg);
	if (err)
		PP_ERR("dma: arena %s: backend %s failed to map segment at offset %zu KiB (%zu KiB): %s",
		       a->name, m->ops.name ? m->ops.name : "ops",
		       ((uintptr_t)seg->addr - a->base) >> 10, seg->len >> 10,
		       strerror(err < 0 ? -err : err));
	return err;
}

static void ops_unmap_segment(void *priv, struct pp_dma_arena *a,
			      const struct pp_arena_segment *seg)
{
	struct dma_ops_mode *m = priv;

	(void)a;
	if (m->ops.segment_unmap)
		m->ops.segment_unmap(m->ctx, seg);
}

static int ops_map_page(void *priv, const struct pp_dma_arena *a, void *addr,
			size_t off, size_t len, enum pp_dma_dir dir,
			uint64_t *iova)
{
	struct dma_ops_mode *m = priv;

	(void)a, (void)off;
	return m->ops.page_map(m->ctx, addr, len, dir, iova);
}

static void ops_unmap_page(void *priv, uint64_t iova, size_t len,
			   enum pp_dma_dir dir)
{
	struct dma_ops_mode *m = priv;

	if (m->ops.page_unmap)
		m->ops.page_unmap(m->ctx, iova, len, dir);
}

static void ops_sync_for_device(void *priv, uint64_t iova, size_t len,
				enum pp_dma_dir dir)
{
	struct dma_ops_mode *m = priv;

	if (m->ops.sync_for_device)
		m->ops.sync_for_device(m->ctx, iova, len, dir);
}

static void ops_sync_for_cpu(void *priv, uint64_t iova, size_t len,
			     enum pp_dma_dir dir)
{
	struct dma_ops_mode *m = priv;

	if (m->ops.sync_for_cpu)
		m->ops.sync_for_cpu(m->ctx, iova, len, dir);
}

const struct pp_dma_mode pp_dma_mode_ops = {
	.name = "ops",
	.xlate = PP_DMA_XLATE_HOOK,
	.create = ops_create,
	.destroy = ops_destroy,
	.map_segment = ops_map_segment,
	.unmap_segment = ops_unmap_segment,
	.map_page = ops_map_page,
	.unmap_page = ops_unmap_page,
	.sync_for_device = ops_sync_for_device,
	.sync_for_cpu = ops_sync_for_cpu,
};
