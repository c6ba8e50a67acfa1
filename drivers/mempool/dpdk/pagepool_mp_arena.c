/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mp_arena.c - where a pool's memory comes from: one pagepool
 * arena (2 MiB pages, 4 KiB as a fallback), one DMA domain that gives
 * each arena page its IOVA, and a DPDK external malloc heap made of the
 * arena with those IOVAs. DPDK's rte_mempool_populate_default() reserves
 * the pool's memzone from that heap (its socket id is lent to the pool),
 * so DPDK's own bookkeeping (memory chunks, memsegs, VFIO mappings)
 * describes the very pages the objects live in. The store's ring comes
 * from the same heap (pagepool_mp_store.c).
 *
 * This is all the driver takes from pagepool: hugepage arenas placed on
 * the pool's node and their IOVAs. The objects are DPDK's, sliced by
 * DPDK's helper (pagepool_mp_populate.c), and not pages of pagepool's
 * allocator (doc/dpdk-mempool.md, "What the driver is").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "pagepool_mp_priv.h"
/* The fault seam's heap wrappers (libc's calls unless the plugin is
 * built with -Dfault_injection=true): each allocation is a site. */
#include "pp_os_fault.h"

/*
 * The IOVA domain that matches the EAL's: physical addresses when the EAL
 * runs with IOVA as PA, the virtual address otherwise. These are the
 * IOVAs the heap's memsegs carry, so under VFIO the EAL maps each arena
 * page into its container at exactly the address the objects report
 * (it maps every external heap segment when the segment is added).
 */
static enum pp_iova_mode dma_mode_for_eal(void)
{
	return rte_eal_iova_mode() == RTE_IOVA_PA ? PP_IOVA_PA : PP_IOVA_VA;
}

rte_iova_t pagepool_mp_arena_iova(const struct pagepool_mp *p, uintptr_t addr)
{
	uintptr_t page = addr & ~(uintptr_t)(p->page_size - 1);
	uint64_t iova;

	if (pp_dma_map_page(p->dma, (void *)page, p->page_order,
			    PP_DMA_BIDIRECTIONAL, &iova) != 0)
		return RTE_BAD_IOVA;
	return iova + (addr - page);
}

/*
 * Arena bytes beyond the objects' memzone, the store and the
 * magazines: the malloc element header and trailer DPDK puts around
 * each (at most 128 bytes each in DPDK 22.11's malloc_elem.h) and their
 * alignment, rounded up generously to two 4 KiB pages.
 */
#define HEAP_SLACK (2 * 4096)

/*
 * The arena bytes for the pool when its pages are 2^@pg_shift bytes:
 * what rte_mempool_populate_default() will ask the heap for (the default
 * calc_mem_size, with the page size DPDK reads from the heap's memsegs),
 * the store, the magazines and the heap's slack. A pool without
 * RTE_MEMPOOL_F_NO_IOVA_CONTIG packs objects per page, one with it
 * (page shift 0) packs them tighter, so this is enough for both.
 */
static ssize_t arena_bytes(const struct rte_mempool *mp, uint32_t pg_shift)
{
	size_t min_chunk, align;
	ssize_t sz = rte_mempool_op_calc_mem_size_helper(mp, mp->size,
							 pg_shift, 0,
							 &min_chunk, &align);
	ssize_t ring = pagepool_mp_store_bytes(mp->size);

	if (sz < 0 || ring < 0)
		return sz < 0 ? sz : ring;
	return sz + ring + (ssize_t)pagepool_mp_mag_bytes(mp) + HEAP_SLACK;
}

/*
 * The pool's arena: 2 MiB pages, the smallest hugepage, so the arena
 * wastes less than 2 MiB past the objects (1 GiB pages are few and
 * shared). 4 KiB pages are a correct fallback for objects up to 4 KiB:
 * DPDK then packs objects per 4 KiB page (fewer per byte, so the arena is
 * made again at that size), and each object is IOVA-contiguous in PA
 * mode too.
 */
static int arena_map(struct rte_mempool *mp, struct pagepool_mp *p)
{
	size_t obj_total = (size_t)mp->header_size + mp->elt_size +
			   mp->trailer_size;
	struct pp_arena_opts ao = { .sz = sizeof(ao) };
	ssize_t need = arena_bytes(mp, 21), need_2m = need;
	char who[80];
	int err;

	if (need < 0)
		return (int)need;
	ao.size = (size_t)need;
	ao.page_size = PP_PAGE_SIZE_2M;
	ao.numa_node = mp->socket_id == SOCKET_ID_ANY ? PP_NUMA_NODE_ANY :
							mp->socket_id;
	ao.flags = PP_ARENA_F_ALLOW_4K;
	ao.name = mp->name;
	p->arena = pp_arena_create(&ao);
	if (p->arena && pp_arena_page_size(p->arena) < PP_PAGE_SIZE_2M) {
		pp_arena_destroy(p->arena);
		p->arena = NULL;
		if (obj_total > PP_PAGE_SIZE_4K) {
			PMP_LOG(ERR, "pool '%s': no 2 MiB hugepages for objects of %zu bytes, which do not fit 4 KiB pages; it needs %zd MiB of them free (pp-hugepages shows what is; pp-hugepages -r SIZE reserves)",
				mp->name, obj_total, need_2m >> 20);
			return -ENOMEM;
		}
		need = arena_bytes(mp, 12);
		if (need < 0)
			return (int)need;
		ao.size = (size_t)need;
		ao.page_size = PP_PAGE_SIZE_4K;
		ao.flags = 0;
		p->arena = pp_arena_create(&ao);
	}
	if (!p->arena) {
		err = -errno;
		PMP_LOG(ERR, "pool '%s': no arena for %u objects (%s); it needs %zd MiB of free 2 MiB hugepages (pp-hugepages shows what is free; pp-hugepages -r SIZE reserves), or make the pool smaller",
			mp->name, mp->size, strerror(errno), need_2m >> 20);
		return err;
	}
	/*
	 * DPDK's heap and its memsegs (and the EAL's VFIO mappings of
	 * them) take the arena's size once: pinned, it never grows or gives
	 * memory back under them (a fixed arena here, but the pin says so
	 * to anyone who looks, and covers what is committed).
	 */
	snprintf(who, sizeof(who), "the DPDK external heap of mempool %s",
		 mp->name);
	err = pp_arena_pin(p->arena, who, &p->len);
	if (err) {
		pp_arena_destroy(p->arena);
		p->arena = NULL;
		return err;
	}
	p->base = (uintptr_t)pp_arena_base(p->arena);
	p->page_size = pp_arena_page_size(p->arena);
	p->page_order = 0;
	while ((PP_PAGE_SIZE_4K << p->page_order) < p->page_size)
		p->page_order++;
	return 0;
}

/*
 * Make the arena a DPDK external malloc heap named after the pool, each
 * arena page with the IOVA pagepool's DMA domain gives it, and lend the
 * heap's socket id to the pool: rte_mempool_populate_default() reserves
 * the objects' memzone on mp->socket_id. populate hands the
 * application's socket id back once the pool is full.
 */
static int heap_add(struct rte_mempool *mp, struct pagepool_mp *p)
{
	unsigned int n = (unsigned int)(p->len / p->page_size);
	rte_iova_t *iovas;
	int socket, err = 0;

	iovas = pp_os_malloc(n * sizeof(*iovas));
	if (!iovas) {
		PMP_LOG(ERR, "pool '%s': out of memory for the IOVAs of %u arena pages",
			mp->name, n);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < n && !err; i++) {
		iovas[i] = pagepool_mp_arena_iova(p, p->base + i * p->page_size);
		if (iovas[i] == RTE_BAD_IOVA)
			err = -EFAULT;
	}
	if (err) {
		PMP_LOG(ERR, "pool '%s': no IOVA for an arena page (%s)",
			mp->name, strerror(-err));
		goto out_free;
	}
	/* Mempool names are at most 28 characters: this fits the 32. */
	snprintf(p->heap_name, sizeof(p->heap_name), "pp:%s", mp->name);
	if (rte_malloc_heap_create(p->heap_name) != 0) {
		err = -rte_errno;
		PMP_LOG(ERR, "pool '%s': cannot create external heap '%s' (%s); DPDK allows %d heaps in all: free other pools",
			mp->name, p->heap_name, rte_strerror(rte_errno),
			RTE_MAX_HEAPS);
		goto out_free;
	}
	if (rte_malloc_heap_memory_add(p->heap_name, (void *)p->base, p->len,
				       iovas, n, p->page_size) != 0) {
		err = -rte_errno;
		PMP_LOG(ERR, "pool '%s': cannot add the arena to heap '%s' (%s); check RLIMIT_MEMLOCK and the VFIO DMA entry limit when devices use VFIO",
			mp->name, p->heap_name, rte_strerror(rte_errno));
		rte_malloc_heap_destroy(p->heap_name);
		goto out_free;
	}
	socket = rte_malloc_heap_get_socket(p->heap_name);
	p->heap_added = true;
	p->app_socket = mp->socket_id;
	mp->socket_id = socket;
out_free:
	free(iovas);
	return err;
}

int pagepool_mp_heap_remove(struct rte_mempool *mp, struct pagepool_mp *p)
{
	if (!p->heap_added)
		return 0;
	mp->socket_id = p->app_socket;
	if (rte_malloc_heap_memory_remove(p->heap_name, (void *)p->base,
					  p->len) != 0 ||
	    rte_malloc_heap_destroy(p->heap_name) != 0) {
		PMP_LOG(ERR, "pool '%s': heap '%s' still has memory reserved from it (%s); the arena stays mapped: free what was rte_malloc'd on the heap's socket first",
			mp->name, p->heap_name, rte_strerror(rte_errno));
		return -EBUSY;
	}
	p->heap_added = false;
	return 0;
}

int pagepool_mp_arena_create(struct rte_mempool *mp, struct pagepool_mp *p)
{
	struct pp_dma_opts dopts = { .sz = sizeof(dopts) };
	int err;

	dopts.mode = dma_mode_for_eal();
	err = arena_map(mp, p);
	if (err)
		return err;
	p->dma = pp_dma_create(&dopts);
	if (!p->dma) {
		err = -errno;
		goto err_destroy_arena;
	}
	err = pp_dma_map_arena(p->dma, p->arena);
	if (err) {
		PMP_LOG(ERR, "pool '%s': cannot give the arena IOVAs (%s)",
			mp->name, strerror(-err));
		goto err_destroy_dma;
	}
	err = heap_add(mp, p);
	if (err)
		goto err_unmap;
	return 0;

err_unmap:
	pp_dma_unmap_arena(p->dma, p->arena);
err_destroy_dma:
	pp_dma_destroy(p->dma);
	p->dma = NULL;
err_destroy_arena:
	pp_arena_unpin(p->arena);
	pp_arena_destroy(p->arena);
	p->arena = NULL;
	return err;
}

int pagepool_mp_arena_destroy(struct rte_mempool *mp, struct pagepool_mp *p)
{
	int err = pagepool_mp_heap_remove(mp, p);

	if (err)
		return err;
	pp_dma_unmap_arena(p->dma, p->arena);
	pp_dma_destroy(p->dma);
	pp_arena_unpin(p->arena);
	pp_arena_destroy(p->arena);
	p->dma = NULL;
	p->arena = NULL;
	return 0;
}
