/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mp_store.c - the pool's free objects: the store, a
 * multi-producer/multi-consumer rte_ring of object pointers with room for
 * every object, and the enqueue, dequeue and get_count ops over it.
 *
 * The store is the driver's only place for free objects. The per-lcore
 * cache in front of it is DPDK's (mp->cache_size, rte_mempool_cache),
 * so each object path has one cache layer, DPDK's, as with ring_mp_mc.
 * The driver once kept per-lcore magazines here as well; they were a
 * second cache behind DPDK's and measured no better in the
 * configurations DPDK applications run (doc/dpdk-mempool.md, "Free
 * objects: one store, DPDK's cache in front").
 *
 * The ring lives in the pool's arena: it is allocated from the pool's
 * external heap, like ring_mp_mc's ring from DPDK's, in hugepages on the
 * pool's node (pagepool_mp_arena.c counts it in the arena's size).
 */
#include <errno.h>

#include <rte_malloc.h>
#include <rte_ring.h>

#include "pagepool_mp_priv.h"

/* Bytes of a ring with room for @size objects (RING_F_EXACT_SZ: slots
 * for the next power of two above it). */
ssize_t pagepool_mp_store_bytes(unsigned int size)
{
	return rte_ring_get_memsize_elem(sizeof(void *),
					 rte_align32pow2(size + 1));
}

/*
 * The store: a ring with room for mp->size objects, every object the
 * pool can have, so that putting an object never fails; from the pool's
 * heap (socket @socket). rte_ring_init() registers no name. Returns 0
 * or -errno, said.
 */
int pagepool_mp_store_create(struct rte_mempool *mp, struct pagepool_mp *p,
			     int socket)
{
	ssize_t sz = pagepool_mp_store_bytes(mp->size);
	struct rte_ring *r;
	int err;

	if (sz < 0)
		return (int)sz;
	r = rte_malloc_socket("pagepool_store", (size_t)sz,
			      RTE_CACHE_LINE_SIZE, socket);
	if (!r) {
		PMP_LOG(ERR, "pool '%s': no room in the arena for the ring of free objects (%zd bytes); report this as a pagepool bug",
			mp->name, sz);
		return -ENOMEM;
	}
	err = rte_ring_init(r, mp->name, mp->size, RING_F_EXACT_SZ);
	if (err) {
		rte_free(r);
		return err;
	}
	p->store = r;
	return 0;
}

/* Give the ring back to the pool's heap, which cannot go while it is
 * there. */
void pagepool_mp_store_free(struct pagepool_mp *p)
{
	rte_free(p->store);
	p->store = NULL;
}

static __attribute__((cold, noinline)) void
store_overflow(struct rte_mempool *mp, unsigned int dropped)
{
	PMP_LOG(ERR, "pool '%s': %u objects put while every object was already free; dropped: an object was put back twice",
		mp->name, dropped);
}

/*
 * Free @n objects into the store. Cannot fail for a correct caller: the
 * store has room for every object the pool has, so only objects put
 * twice can find it full; those are dropped, said.
 */
static inline void store_put(struct rte_mempool *mp, struct pagepool_mp *p,
			     void *const *objs, unsigned int n)
{
	unsigned int done = rte_ring_mp_enqueue_burst(p->store, objs, n, NULL);

	if (PP_UNLIKELY(done < n))
		store_overflow(mp, n - done);
}

void pagepool_mp_store_put(struct rte_mempool *mp, struct pagepool_mp *p,
			   void *const *objs, unsigned int n)
{
	store_put(mp, p, objs, n);
}

/*
 * enqueue: never fails. Debug builds and a process that created no
 * pagepool pool take the slow path: the former checks each pointer
 * (pagepool_mp_owner_check.c), the latter is refused.
 */
static __attribute__((noinline)) int
enqueue_slow(struct rte_mempool *mp, void *const *obj_table, unsigned int n)
{
	if (!pagepool_mp_usable("enqueue"))
		return -ENOTSUP;
	if (PP_DEBUG)
		pagepool_mp_put_checked(mp, obj_table, n);
	else
		store_put(mp, mp->pool_data, obj_table, n);
	return 0;
}

int pagepool_mp_enqueue(struct rte_mempool *mp, void *const *obj_table,
			unsigned int n)
{
	if (PP_UNLIKELY(PP_DEBUG || !pagepool_mp_here))
		return enqueue_slow(mp, obj_table, n);
	store_put(mp, mp->pool_data, obj_table, n);
	return 0;
}

/*
 * rte_mempool_free() first empties the pool with one-object dequeues, one
 * per object it populated, and only then calls the free op; the objects
 * the application still holds show up as failed dequeues. The pool has
 * left DPDK's list of pools by then, which is how a miss is told from an
 * ordinary empty pool (pagepool_mp_ops.c reads the count).
 */
static __attribute__((cold, noinline)) int
dequeue_failed(struct rte_mempool *mp, unsigned int n)
{
	struct pagepool_mp *p = mp->pool_data;

	if (!pagepool_mp_usable("dequeue"))
		return -ENOTSUP;
	if (n == 1 && rte_mempool_lookup(mp->name) != mp)
		p->teardown_misses++;
	return -ENOBUFS;
}

/*
 * dequeue: all or nothing, as rte_mempool_ops_dequeue_bulk() requires:
 * when the store holds fewer than @n objects, nothing is taken,
 * @obj_table is left untouched and the call returns -ENOBUFS (the ring
 * driver's code; rte_mempool_get_bulk() turns it into -ENOENT). Objects
 * in other lcores' DPDK caches are not free to the driver, as with
 * ring_mp_mc.
 */
int pagepool_mp_dequeue(struct rte_mempool *mp, void **obj_table,
			unsigned int n)
{
	const struct pagepool_mp *p = mp->pool_data;

	if (PP_UNLIKELY(!pagepool_mp_here))
		return dequeue_failed(mp, n);
	if (PP_LIKELY(rte_ring_mc_dequeue_bulk(p->store, obj_table, n,
					       NULL) == n))
		return 0;
	return dequeue_failed(mp, n);
}

/* The free objects in the store; exact when no other lcore is inside
 * enqueue or dequeue. */
unsigned int pagepool_mp_get_count(const struct rte_mempool *mp)
{
	const struct pagepool_mp *p;

	if (!pagepool_mp_usable("get_count"))
		return 0;
	p = mp->pool_data;
	return rte_ring_count(p->store);
}
