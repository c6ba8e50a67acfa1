/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mp_populate.c - the populate op: memory chunks into objects.
 *
 * Objects are packed densely, as DPDK packs them: one after the other at
 * DPDK's object stride (header + element + trailer), never across a
 * boundary of the pool's page size unless the pool has
 * RTE_MEMPOOL_F_NO_IOVA_CONTIG, so a pool takes as much memory as a
 * ring_mp_mc pool of the same objects. DPDK pads the stride to an odd
 * number of cache lines (unless RTE_MEMPOOL_F_NO_SPREAD), so
 * consecutive objects start at every one of the 64 cache-line offsets in
 * a 4 KiB page ("colours").
 *
 * Foreign memory. The mempool ops contract lets any caller populate the
 * pool with any memory: rte_mempool_populate_anon() (anonymous mmap),
 * rte_mempool_populate_iova() / _virt() with the caller's chunk, with a
 * real IOVA or RTE_BAD_IOVA. Every chunk is sliced the same way; only an
 * arena chunk has its IOVAs checked against (and, with no chunk IOVA,
 * filled from) pagepool's DMA domain. Free objects of either kind share
 * the store.
 */
#include <errno.h>
#include <inttypes.h>

#include "pagepool_mp_priv.h"

/*
 * An arena chunk's objects get DPDK's callback through this one, which
 * gives an object the IOVA pagepool's DMA domain has for it when DPDK
 * passes none (RTE_MEMPOOL_F_NO_IOVA_CONTIG): the IOVA of its start, if
 * the object is IOVA-contiguous across any arena page boundary it spans;
 * RTE_BAD_IOVA (what DPDK itself gives) otherwise.
 */
struct arena_cb {
	struct pagepool_mp *p;
	rte_mempool_populate_obj_cb_t *cb;
	void *arg;
};

static void arena_obj_cb(struct rte_mempool *mp, void *arg, void *obj,
			 rte_iova_t iova)
{
	struct arena_cb *a = arg;

	if (iova == RTE_BAD_IOVA) {
		const struct pagepool_mp *p = a->p;
		uintptr_t start = (uintptr_t)obj - mp->header_size;
		uintptr_t last = (uintptr_t)obj + mp->elt_size +
				 mp->trailer_size - 1;
		uintptr_t pmask = ~(uintptr_t)(p->page_size - 1);
		rte_iova_t prev = pagepool_mp_arena_iova(p, start);

		for (uintptr_t pg = (start & pmask) + p->page_size;
		     prev != RTE_BAD_IOVA && pg <= (last & pmask);
		     pg += p->page_size) {
			rte_iova_t next = pagepool_mp_arena_iova(p, pg);

			/* pg - start bytes on from the start's IOVA? */
			prev = next == prev + (pg - start) ? prev :
							     RTE_BAD_IOVA;
		}
		if (prev != RTE_BAD_IOVA)
			iova = prev + mp->header_size;
	}
	a->cb(mp, a->arg, obj, iova);
}

/*
 * An arena chunk with a chunk IOVA: it must be the one pagepool's DMA
 * domain gives every arena page it touches, or devices would get two
 * addresses for one buffer. Returns 0 or -EFAULT, said.
 */
static int arena_chunk_check(struct rte_mempool *mp,
			     const struct pagepool_mp *p, uintptr_t va,
			     rte_iova_t iova, size_t len)
{
	uintptr_t pmask = ~(uintptr_t)(p->page_size - 1);

	for (uintptr_t a = va; a < va + len; a = (a & pmask) + p->page_size) {
		if (pagepool_mp_arena_iova(p, a) == iova + (a - va))
			continue;
		PMP_LOG(ERR, "pool '%s': chunk %p (%zu bytes) has IOVA 0x%" PRIx64 " from DPDK but pagepool has 0x%" PRIx64 " at %p; report this as a pagepool bug",
			mp->name, (void *)va, len, (uint64_t)iova,
			(uint64_t)pagepool_mp_arena_iova(p, a), (void *)a);
		return -EFAULT;
	}
	return 0;
}

/*
 * populate: DPDK's own slicing (rte_mempool_op_populate_helper(), as
 * ring_mp_mc uses it) for every chunk, so that objects sit exactly where
 * DPDK would put them: packed at DPDK's stride, never across a page
 * boundary of the pool's page size unless the pool has
 * RTE_MEMPOOL_F_NO_IOVA_CONTIG. The helper calls @obj_cb (DPDK's, which
 * writes the object header) and then enqueues the object, which makes
 * it free. A chunk of the pool's arena (the memzone DPDK reserved from
 * the pool's heap, whole or cut at IOVA discontinuities) has its IOVA
 * checked against pagepool's, and its objects get pagepool's IOVA when
 * DPDK gives none; any other chunk ("Foreign memory" at the top) is
 * sliced with the IOVA the caller gave.
 */
int pagepool_mp_populate(struct rte_mempool *mp, unsigned int max_objs,
			 void *vaddr, rte_iova_t iova, size_t len,
			 rte_mempool_populate_obj_cb_t *obj_cb,
			 void *obj_cb_arg)
{
	struct pagepool_mp *p = mp->pool_data;
	uintptr_t start = (uintptr_t)vaddr - (p ? p->base : 0);
	struct arena_cb a = { p, obj_cb, obj_cb_arg };
	bool in_arena;
	int n;

	if (!p || !pagepool_mp_usable("populate"))
		return -ENOTSUP;
	in_arena = start < p->len;
	if (in_arena && len > p->len - start) {
		/* Starts in the arena and runs past its end: no caller
		 * DPDK has makes such a chunk from one allocation. */
		PMP_LOG(ERR, "pool '%s': populate with a chunk that runs past the end of its arena (%p, %zu bytes)",
			mp->name, vaddr, len);
		return -EINVAL;
	}
	if (in_arena && iova != RTE_BAD_IOVA) {
		n = arena_chunk_check(mp, p, (uintptr_t)vaddr, iova, len);
		if (n < 0)
			return n;
	}
	p->populating = (uintptr_t)vaddr;
	p->populating_end = (uintptr_t)vaddr + len;
	if (in_arena) {
		n = rte_mempool_op_populate_helper(mp, 0, max_objs, vaddr,
						   iova, len, arena_obj_cb, &a);
		if (n > 0)
			p->nr_arena += (uint32_t)n;
	} else {
		n = rte_mempool_op_populate_helper(mp, 0, max_objs, vaddr,
						   iova, len, obj_cb,
						   obj_cb_arg);
		if (n > 0)
			p->nr_foreign += (uint32_t)n;
	}
	p->populating = 0;
	p->populating_end = 0;
	/* obj_cb counted the objects in populated_size. Full: the
	 * application's socket id back (pagepool_mp_arena.c lent the heap's). */
	if (mp->populated_size >= mp->size)
		mp->socket_id = p->app_socket;
	return n;
}
