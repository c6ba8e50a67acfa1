/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mp_ops.c - the "pagepool" rte_mempool ops driver: any DPDK
 * application loads it with -d and selects it with
 * --mbuf-pool-ops-name=pagepool (or rte_mempool_set_ops_byname()). This
 * file owns the ops table, the alloc and free ops and the one-process
 * guard; pagepool_mp_priv.h lists the files that do the rest.
 *
 * What the driver is (doc/dpdk-mempool.md has the long form): an object
 * store on pagepool arenas. pagepool gives each pool a hugepage arena on
 * the pool's node and the IOVA of every arena page; DPDK slices the arena
 * into objects and keeps its per-lcore cache in front; the driver keeps
 * the free objects in one ring. It is not a client of pagepool's page
 * allocator: a page per object cost up to twice the memory. One cache
 * layer on each object path: DPDK's per-lcore cache where the pool has
 * one, else the driver's per-lcore magazines (pagepool_mp_magazine.c),
 * chosen at alloc from mp->cache_size.
 *
 * State is process-local (pointers into this process's mappings):
 * secondary processes are not supported, and every op says so and fails.
 */
#include <errno.h>
#include <stdlib.h>

#include <rte_eal.h>
#include <rte_mempool.h>

#include "pagepool_mp_priv.h"
/* The fault seam's heap wrappers: the state's allocation is a site. */
#include "pp_os_fault.h"

#define PAGEPOOL_OPS_NAME "pagepool"

/*
 * Set by the first successful alloc in this process. A secondary process
 * never gets here through alloc (it is refused), so the flag is its
 * warning that mp->pool_data points into another process's heap.
 */
bool pagepool_mp_here;

bool pagepool_mp_usable(const char *op)
{
	static bool said;

	if (PP_LIKELY(pagepool_mp_here))
		return true;
	if (!said) {
		said = true;
		PMP_LOG(ERR, "%s on a pool this process did not create: pagepool pools work only in the process that created them (no multi-process support); use ring_mp_mc across processes",
			op);
	}
	return false;
}

/*
 * alloc: the arena and its DMA domain, the external heap the pool's
 * memzone will come from, and from that heap the store and, for a pool
 * without a DPDK cache, the magazines.
 */
static int pagepool_alloc(struct rte_mempool *mp)
{
	struct pagepool_mp *p;
	int err;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		PMP_LOG(ERR, "pool '%s': pagepool pools can be created only in a primary process (no multi-process support); use ring_mp_mc",
			mp->name);
		return -ENOTSUP;
	}
	p = pp_os_calloc(1, sizeof(*p));
	if (!p) {
		PMP_LOG(ERR, "pool '%s': out of memory for the driver's state",
			mp->name);
		return -ENOMEM;
	}
	err = pagepool_mp_arena_create(mp, p);
	if (err)
		goto err_free_state;
	/* pagepool_mp_arena_create() lent the heap's socket id to the
	 * pool: the store comes from the arena. */
	err = pagepool_mp_store_create(mp, p, mp->socket_id);
	if (err)
		goto err_destroy_arena;
	err = pagepool_mp_mag_create(mp, p, mp->socket_id);
	if (err)
		goto err_free_store;
	mp->pool_data = p;
	pagepool_mp_here = true;
	return 0;

err_free_store:
	pagepool_mp_store_free(p);
err_destroy_arena:
	pagepool_mp_arena_destroy(mp, p);
err_free_state:
	free(p);
	return err;
}

/*
 * free: rte_mempool_free() calls it after emptying the pool and freeing
 * its memzones, and cannot hear an error. The dequeues that failed while
 * it emptied the pool are the objects outside the driver: those in lcore
 * caches (DPDK does not flush them; the magazines, which the emptying
 * drains, hold none by then) and those the application still
 * holds. For the latter, say how many and keep the arena mapped
 * (leaked), so that they stay valid memory; the application's bug must
 * not become a crash.
 */
static void pagepool_free(struct rte_mempool *mp)
{
	struct pagepool_mp *p = mp->pool_data;
	unsigned long cached = 0, out;

	if (!p || !pagepool_mp_usable("free"))
		return;
	if (mp->cache_size)
		for (unsigned int i = 0; i < RTE_MAX_LCORE; i++)
			cached += mp->local_cache[i].len;
	out = p->teardown_misses > cached ? p->teardown_misses - cached : 0;
	/* No op runs after free: the store and the magazines go first,
	 * then the heap, which cannot go while they are in it. */
	pagepool_mp_mag_free(p);
	pagepool_mp_store_free(p);
	mp->pool_data = NULL;
	if (out) {
		PMP_LOG(ERR, "pool '%s' freed with %lu of %u objects still in use; its arena stays mapped (leaked) so they remain valid: return every object before rte_mempool_free()",
			mp->name, out, p->nr_arena + p->nr_foreign);
		/* DPDK zeroed the memzone when it freed it; the heap goes,
		 * so that its name is free again and devices lose their
		 * VFIO mappings of it, but the memory stays. */
		pagepool_mp_heap_remove(mp, p);
		return;
	}
	if (pagepool_mp_arena_destroy(mp, p) == 0)
		free(p);
}

/*
 * calc_mem_size is DPDK's default: objects packed at DPDK's stride, so
 * that a pool takes what a ring_mp_mc pool of the same objects takes.
 * rte_mempool_populate_anon() maps what it returns, too.
 */
static const struct rte_mempool_ops pagepool_ops = {
	.name = PAGEPOOL_OPS_NAME,
	.alloc = pagepool_alloc,
	.free = pagepool_free,
	.enqueue = pagepool_mp_enqueue,
	.dequeue = pagepool_mp_dequeue,
	.get_count = pagepool_mp_get_count,
	.calc_mem_size = rte_mempool_op_calc_mem_size_default,
	.populate = pagepool_mp_populate,
};

RTE_MEMPOOL_REGISTER_OPS(pagepool_ops);
