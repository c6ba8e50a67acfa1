/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_pool_frag.c - splitting pool blocks into fragments (the kernel's
 * page_pool_alloc_frag() and pp_ref_count, under our names).
 *
 * pp_page_pool.h states the caller's rules and holds the fast paths: a
 * fragment carved off the block being split, and the owner taking one
 * back; doc/design.md ("Fragments") explains the count. This file has
 * the rest: starting a block, leaving it, syncing fragments of
 * a block reused in place, and the per-page count that every other
 * return drops. The count lives in page->pp_ref_count, and every access
 * to it is atomic: the fragments of one page may be returned by several
 * threads at once.
 */
#include <stdint.h>

#include "pp_log.h"
#include "pp_page_growth.h"
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

/* Room for the inline path: fragments it may hand out of this block,
 * none while each must be synced. */
static void frag_set_limit(struct pp_pool_frag_block_ *f)
{
	f->limit = f->sync ? 0 : f->expect;
}

/* Forget the current block: its count already says how many are out. */
static void frag_forget(struct pp_pool_frag_block_ *f)
{
	f->page = NULL;
	f->offset = f->block;
}

/*
 * The owner moves on from the block it was splitting while it still
 * could have carved more: take back, in one atomic, the part of the
 * count it set for fragments it did not hand out (or took back itself).
 * Returns the page when all its fragments had already come back (the
 * owner may split it again at once), else NULL: the last fragment's
 * return recycles it.
 */
static struct pp_page *frag_page_drain(struct pp_pool *pool)
{
	struct pp_pool_frag_block_ *f = &pool->alloc.frag;
	struct pp_page *page = f->page;

	frag_forget(f);
	if (frag_unref(pool, page, (int64_t)(f->expect - f->users)))
		return NULL;
	return page;
}

/*
 * The owner's returns of fragments of a block it no longer splits are
 * gathered per page (f->pend_*) and dropped from the count together:
 * with no atomic when they are all that is out, which the owner learns
 * with a plain load. Here: drop the gathered ones of the previous page.
 */
void pool_frag_flush(struct pp_pool *pool)
{
	struct pp_pool_frag_block_ *f = &pool->alloc.frag;
	struct pp_page *page = f->pend_page;

	if (!page)
		return;
	f->pend_page = NULL;
	if (pool_frag_put(pool, page, f->pend_nr))
		pp_pool_put_page_slow(pool, page, (unsigned int)-1, true);
}

bool pool_frag_put_direct(struct pp_pool *pool, struct pp_page *page,
			  unsigned int nr)
{
	struct pp_pool_frag_block_ *f = &pool->alloc.frag;

	if (page == f->pend_page) {
		f->pend_nr += nr;
	} else {
		pool_frag_flush(pool);
		f->pend_page = page;
		f->pend_nr = nr;
	}
	/* The acquire pairs with the other holders' returns (release). */
	if (__atomic_load_n(&page->pp_ref_count, __ATOMIC_ACQUIRE) !=
	    (int64_t)f->pend_nr)
		return false;
	/* All that is out is back with the owner: a whole page again. */
	f->pend_page = NULL;
	__atomic_store_n(&page->pp_ref_count, 1, __ATOMIC_RELAXED);
	return true;
}

void pp_pool_recycle_direct_bulk(struct pp_pool *pool, struct pp_page **pages,
				 unsigned int n)
{
	struct pp_pool_alloc_cache *c = &pool->alloc;
	unsigned int i, k, run, top = c->count;

	/*
	 * Memory being given back (doc/growth.md): its pages must not go
	 * round the cache again, or a busy pool keeps the step alive. One
	 * load per burst when nothing is.
	 */
	if (PP_UNLIKELY(pool_isolating(pool))) {
		pool_recycle_isolating(pool, pages, n);
		return;
	}
	/*
	 * Whole pages with room for all of them in the cache (a forwarder's
	 * TX completions, a burst of drops): the test of
	 * pp_pool_recycle_direct()'s fast path page by page, with the count
	 * and its counter stored once for the run, not once per page (each
	 * store read back by the next page costs a store-to-load forward).
	 * The first page that fails the test, and all after it, go the way
	 * below.
	 */
	i = 0;
	if (PP_LIKELY(n <= PP_POOL_CACHE_SIZE - top &&
		      !(c->flags & (PP_POOL_F_DMA_SYNC_DEV |
				    PP_POOL_F_NO_DIRECT_)))) {
		for (; i < n; i++) {
			struct pp_page *page = pages[i];

			if (PP_UNLIKELY(!pp_pool_page_sole_(page)))
				break;
			pp_page_set_where_pool_(page);
			c->cache[top++] = page;
		}
		PP_POOL_STAT_ADD_(c->recycle_cached, i);
		__atomic_store_n(&c->count, top, __ATOMIC_RELAXED);
	}
	for (; i < n; i += run) {
		struct pp_page *page = pages[i];

		for (run = 1; i + run < n && pages[i + run] == page; run++)
			;
		/*
		 * Fragments of one page side by side (a burst copied into
		 * one block), not of the block being split: dropped from
		 * the page's count together, and when they were all that was
		 * out, the page goes to the cache at once. The count is
		 * read first: a whole page held twice is not a fragment.
		 */
		if (run > 1 && page->pp == pool && page != c->frag.page &&
		    !(c->flags & PP_POOL_F_NO_DIRECT_) &&
		    __atomic_load_n(&page->pp_ref_count, __ATOMIC_RELAXED) !=
			    1) {
			if (pool_frag_put_direct(pool, page, run))
				pp_pool_recycle_direct(pool, page);
			continue;
		}
		for (k = 0; k < run; k++)
			pp_pool_recycle_direct(pool, page);
	}
}

void pool_frag_drain(struct pp_pool *pool)
{
	struct pp_page *page;

	pool_frag_flush(pool);
	if (!pool->alloc.frag.page)
		return;
	page = frag_page_drain(pool);
	/* Unsplit and ours: recycled with the rest of the cache. */
	if (page)
		pp_pool_put_page_slow(pool, page, (unsigned int)-1, true);
}

/*
 * A fragment of the current block at f->offset, synced if it must be.
 * The one that uses up the count the owner set closes the block: the
 * owner must not carve another (its count could already be 0, and the
 * page recycled, once that one comes back).
 */
static struct pp_page *frag_take(struct pp_pool *pool, unsigned int *offset,
				 uint64_t len)
{
	struct pp_pool_frag_block_ *f = &pool->alloc.frag;
	struct pp_page *page = f->page;

	*offset = f->offset;
	f->offset += (unsigned int)len;
	f->users++;
	if (f->sync)
		pp_dma_sync_for_device(pool->dma, page->dma_addr + *offset,
				       (size_t)len, pool->dma_dir);
	POOL_STAT_ADD(f->alloc, 1);
	if (f->users == f->expect)
		frag_forget(f);
	return page;
}

/*
 * Start splitting @page for fragments of @len bytes: the count is set
 * once, to the number of them the block holds, so that fragments of one
 * size cost no atomic to hand out or to move on from.
 */
static void frag_start(struct pp_pool_frag_block_ *f, struct pp_page *page,
		       uint64_t len)
{
	f->expect = (unsigned int)(f->block / len);
	__atomic_store_n(&page->pp_ref_count, (int64_t)f->expect,
			 __ATOMIC_RELAXED);
	f->page = page;
	f->users = 0;
	f->offset = 0;
	frag_set_limit(f);
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
	if (f->page && f->offset + len <= f->block) {
		/*
		 * It fits, but it is the last the count allows, or it must
		 * be synced. Smaller fragments than the first leave room
		 * for more: raise the count first, while it is at least 1
		 * (the owner holds back one it has not handed out), so that
		 * no return can take it to 0 under the owner.
		 */
		uint64_t more = (f->block - f->offset - len) / len;

		if (f->users + 1 == f->expect && more) {
			__atomic_add_fetch(&f->page->pp_ref_count,
					   (int64_t)more, __ATOMIC_RELAXED);
			f->expect += (unsigned int)more;
		}
		frag_set_limit(f);
		return frag_take(pool, offset, len);
	}

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
	frag_start(f, page, len);
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
