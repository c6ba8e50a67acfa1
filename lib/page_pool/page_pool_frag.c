/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_pool_frag.c - splitting pool blocks into fragments (the kernel's
 * page_pool_alloc_frag() and pp_ref_count, under our names).
 *
 * pp_page_pool.h states the rules; this file keeps the owner's state of
 * the block being split (pool->frag_*) and the per-page count. The count
 * lives in page->pp_ref_count, and every access to it is atomic: the
 * fragments of one page may be returned by several threads at once.
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

bool pool_frag_put(struct pp_pool *pool, struct pp_page *page)
{
	return frag_unref(pool, page, 1) == 0;
}

/*
 * The owner moves on from the block it was splitting: give back the bias
 * it did not use, in one atomic. Returns the page when all its fragments
 * had already come back (the owner may split it again at once), else NULL:
 * the last fragment's return recycles it.
 */
static struct pp_page *frag_page_drain(struct pp_pool *pool)
{
	struct pp_page *page = pool->frag_page;

	pool->frag_page = NULL;
	if (frag_unref(pool, page, PP_POOL_FRAG_BIAS - pool->frag_users))
		return NULL;
	return page;
}

void pool_frag_drain(struct pp_pool *pool)
{
	struct pp_page *page;

	if (!pool->frag_page)
		return;
	page = frag_page_drain(pool);
	/* Unsplit and ours: recycled with the rest of the cache. */
	if (page)
		pp_pool_put_page_slow(pool, page, (unsigned int)-1, true);
}

static void frag_sync(struct pp_pool *pool, struct pp_page *page,
		      unsigned int offset, uint64_t len)
{
	if (PP_UNLIKELY(pool->frag_sync))
		pp_dma_sync_for_device(pool->dma, page->dma_addr + offset,
				       (size_t)len, pool->dma_dir);
}

struct pp_page *pp_pool_alloc_frag(struct pp_pool *pool, unsigned int *offset,
				   unsigned int size)
{
	uint64_t block = PP_PAGE_SIZE << pool->order;
	struct pp_page *page = pool->frag_page;
	uint64_t len = frag_round(size);

	if (PP_UNLIKELY(!size || len > block)) {
		PP_ERR("pool %s: fragment of %u bytes: ask for 1 to %llu bytes (the block, in cache lines)",
		       pool->name, size, (unsigned long long)block);
		return NULL;
	}
	if (PP_LIKELY(page && pool->frag_offset + len <= block)) {
		*offset = pool->frag_offset;
		pool->frag_offset += (unsigned int)len;
		pool->frag_users++;
		frag_sync(pool, page, *offset, len);
		POOL_STAT_ADD(pool->frag_alloc, 1);
		return page;
	}
	if (page)
		page = frag_page_drain(pool);
	if (page) {
		/* Reused in place: nobody synced it since the device had it. */
		pool->frag_sync = (pool->flags & PP_POOL_F_DMA_SYNC_DEV) != 0;
	} else {
		page = pp_pool_alloc_pages(pool);
		if (!page)
			return NULL;
		/* Synced as a whole when it was mapped or recycled. */
		pool->frag_sync = false;
	}
	/* Set once; each fragment handed out uses up one of the bias. */
	__atomic_store_n(&page->pp_ref_count, PP_POOL_FRAG_BIAS,
			 __ATOMIC_RELAXED);
	pool->frag_page = page;
	pool->frag_users = 1;
	pool->frag_offset = (unsigned int)len;
	*offset = 0;
	frag_sync(pool, page, 0, len);
	POOL_STAT_ADD(pool->frag_pages, 1);
	POOL_STAT_ADD(pool->frag_alloc, 1);
	return page;
}

struct pp_page *pp_pool_alloc(struct pp_pool *pool, unsigned int *offset,
			      unsigned int *size)
{
	unsigned int block = PP_PAGE_SIZE << pool->order;
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
	if ((uint64_t)pool->frag_offset + *size > block) {
		*size = block - *offset;
		pool->frag_offset = block;
	}
	return page;
}
