/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_pool_frag.c - splitting pool blocks into fragments (the kernel's
 * page_pool_alloc_frag() and pp_ref_count, under our names).
 *
 * pp_page_pool.h states the rules and holds the fast paths: a fragment
 * carved off the block being split, and the owner taking one back. This
 * file has the rest: starting a block, leaving it, syncing fragments of
 * a block reused in place, and the per-page count that every other
 * return drops. The count lives in page->pp_ref_count, and every access
 * to it is atomic: the fragments of one page may be returned by several
 * threads at once.
 */
#include <stdint.h>

#include "pp_log.h"
#include "page_pool_priv.h"

/* The kernel rounds fragments to the DMA cache alignment: two fragments
 * never share a cache line, so a sync of one never touches another. */
static uint64_t frag_round(unsigned int size)
{
	return ((uint64_t)size + PP_CACHE_LINE - 1) &
	       ~(uint64_t)(PP_CACHE_LINE - 1);
}

/*
 * Drop @nr users of a split page; returns how many are left, 0 when the
 * caller held the last ones (the count is then back to 1: a whole page).
 * A count equal to @nr means nobody else holds the page: no atomic is
 * needed to learn that, and none to leave it at 1 when @nr is 1. The
 * acquire (load, or the RMW's) pairs with the release of every earlier
 * return, so all users' accesses to the data come before the recycling.
 */
static int64_t frag_unref(struct pp_pool *pool, struct pp_page *page,
			  int64_t nr)
{
	int64_t left;

	if (__atomic_load_n(&page->pp_ref_count, __ATOMIC_ACQUIRE) == nr) {
		if (nr != 1)
			__atomic_store_n(&page->pp_ref_count, 1,
					 __ATOMIC_RELAXED);
		return 0;
	}
	left = __atomic_sub_fetch(&page->pp_ref_count, nr, __ATOMIC_ACQ_REL);
	if (PP_LIKELY(left > 0))
		return left;
	if (PP_UNLIKELY(left < 0)) {
		/* Put back what we took, so that the real last return
		 * still finds its count, and keep the page where it is. */
		__atomic_add_fetch(&page->pp_ref_count, nr, __ATOMIC_RELAXED);
		PP_ERR("pool %s: page %p: more fragments returned than were handed out (count %lld, returning %lld): ignored; return each fragment once",
		       pool->name, pp_page_address(page),
		       (long long)(left + nr), (long long)nr);
		return 1;
	}
	/* The last user: a whole page again, for the page path. */
	__atomic_store_n(&page->pp_ref_count, 1, __ATOMIC_RELAXED);
	return 0;
}

bool pool_frag_put(struct pp_pool *pool, struct pp_page *page, int64_t nr)
{
	return frag_unref(pool, page, nr) == 0;
}

/*
 * The owner moves on from the block it was splitting: give back the bias
 * it did not use, in one atomic. Returns the page when all its fragments
 * had already come back (the owner may split it again at once), else NULL:
 * the last fragment's return recycles it.
 */
static struct pp_page *frag_page_drain(struct pp_pool *pool)
{
	struct pp_pool_frag_block_ *f = &pool->alloc.frag;
	struct pp_page *page = f->page;

	f->page = NULL;
	f->offset = f->block;
	if (frag_unref(pool, page, PP_POOL_FRAG_BIAS - f->users))
		return NULL;
	return page;
}

void pool_frag_drain(struct pp_pool *pool)
{
	struct pp_page *page;

	if (!pool->alloc.frag.page)
		return;
	page = frag_page_drain(pool);
	/* Unsplit and ours: recycled with the rest of the cache. */
	if (page)
		pp_pool_put_page_slow(pool, page, (unsigned int)-1, true);
}

/* A fragment of the current block at f->offset, synced if it must be. */
static struct pp_page *frag_take(struct pp_pool *pool, unsigned int *offset,
				 uint64_t len)
{
	struct pp_pool_frag_block_ *f = &pool->alloc.frag;

	*offset = f->offset;
	f->offset += (unsigned int)len;
	f->users++;
	if (f->sync)
		pp_dma_sync_for_device(pool->dma, f->page->dma_addr + *offset,
				       (size_t)len, pool->dma_dir);
	POOL_STAT_ADD(f->alloc, 1);
	return f->page;
}

struct pp_page *pp_pool_alloc_frag_slow(struct pp_pool *pool,
					unsigned int *offset, unsigned int size)
{
	struct pp_pool_frag_block_ *f = &pool->alloc.frag;
	uint64_t len = frag_round(size);
	struct pp_page *page;

	if (PP_UNLIKELY(!size || len > f->block)) {
		PP_ERR("pool %s: fragment of %u bytes: ask for 1 to %u bytes (the block, in cache lines)",
		       pool->name, size, f->block);
		return NULL;
	}
	/* Here for the sync of a block reused in place. */
	if (f->page && f->offset + len <= f->block)
		return frag_take(pool, offset, len);

	page = f->page ? frag_page_drain(pool) : NULL;
	if (page) {
		/* Reused in place: nobody synced it since the device had it. */
		f->sync = (pool->flags & PP_POOL_F_DMA_SYNC_DEV) != 0;
	} else {
		page = pp_pool_alloc_pages(pool);
		if (!page)
			return NULL;
		/* Synced as a whole when it was mapped or recycled. */
		f->sync = false;
		POOL_STAT_ADD(f->pages, 1);
	}
	/* Set once; each fragment handed out uses up one of the bias. */
	__atomic_store_n(&page->pp_ref_count, PP_POOL_FRAG_BIAS,
			 __ATOMIC_RELAXED);
	f->page = page;
	f->users = 0;
	f->offset = 0;
	return frag_take(pool, offset, len);
}

struct pp_page *pp_pool_alloc(struct pp_pool *pool, unsigned int *offset,
			      unsigned int *size)
{
	struct pp_pool_frag_block_ *f = &pool->alloc.frag;
	unsigned int block = f->block;
	struct pp_page *page;

	if (PP_UNLIKELY(*size > block)) {
		PP_ERR("pool %s: buffer of %u bytes is larger than the pool's %u-byte block: ask for at most a block",
		       pool->name, *size, block);
		return NULL;
	}
	if (*size > block / 2) {
		page = pp_pool_alloc_pages(pool);
		if (page) {
			*offset = 0;
			*size = block;
		}
		return page;
	}
	page = pp_pool_alloc_frag(pool, offset, *size);
	if (!page)
		return NULL;
	/*
	 * Another fragment of this size would not fit: the rest of the block
	 * is the caller's, so count it in its size and close the block.
	 */
	if ((uint64_t)f->offset + *size > block) {
		*size = block - *offset;
		f->offset = block;
	}
	return page;
}
