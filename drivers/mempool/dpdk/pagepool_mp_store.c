/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mp_store.c - the pool's free objects: the store, a
 * multi-producer/multi-consumer rte_ring of object pointers with room for
 * every object, and the enqueue, dequeue and get_count ops over it.
 *
 * One cache layer on each object path: a pool with a DPDK cache
 * (mp->cache_size, rte_mempool_cache) has it in front of the store and
 * nothing else, as with ring_mp_mc; a pool created without one has the
 * driver's per-lcore magazines there instead (pagepool_mp_magazine.c),
 * and its calls go through them. doc/dpdk-mempool.md, "Free objects",
 * has the measurements behind the rule.
 *
 * The ring lives in the pool's arena: it is allocated from the pool's
 * external heap, like ring_mp_mc's ring from DPDK's, in hugepages on the
 * pool's node (pagepool_mp_arena.c counts it in the arena's size).
 */
#include <errno.h>

#include <rte_malloc.h>
#include <rte_ring.h>

#include "pagepool_mp_magazine.h"

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

void pagepool_mp_put(struct rte_mempool *mp, struct pagepool_mp *p,
		     void *const *objs, unsigned int n)
{
	if (p->mag_cap)
		pagepool_mp_mag_put(mp, p, objs, n);
	else
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
		pagepool_mp_put(mp, mp->pool_data, obj_table, n);
	return 0;
}

/*
 * A pool without magazines: the ring. Out of line, a tail call, so that
 * the registers the ring's code needs are not saved on the magazines'
 * fast path too.
 */
static __attribute__((noinline)) int
enqueue_store(struct rte_mempool *mp, void *const *obj_table, unsigned int n)
{
	store_put(mp, mp->pool_data, obj_table, n);
	return 0;
}

/* A pool with magazines, past the fast path: the whole put. */
static __attribute__((noinline)) int
enqueue_mag(struct rte_mempool *mp, void *const *obj_table, unsigned int n)
{
	pagepool_mp_mag_put(mp, mp->pool_data, obj_table, n);
	return 0;
}

/*
 * The magazines' fast path is inline here and the rest is a tail call,
 * so that the common call is a leaf (pagepool_mp_magazine.h).
 */
LEAF_COPY int pagepool_mp_enqueue(struct rte_mempool *mp,
				  void *const *obj_table, unsigned int n)
{
	struct pagepool_mp *p = mp->pool_data;

	if (PP_UNLIKELY(PP_DEBUG || !pagepool_mp_here))
		return enqueue_slow(mp, obj_table, n);
	if (p->mag_cap) {
		if (PP_LIKELY(pagepool_mp_mag_put_fast(p, obj_table, n)))
			return 0;
		return enqueue_mag(mp, obj_table, n);
	}
	return enqueue_store(mp, obj_table, n);
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
 * when fewer than @n objects can be had (the store; with magazines,
 * this lcore's, the store and the other lcores'), nothing is taken,
 * @obj_table is left untouched and the call returns -ENOBUFS (the ring
 * driver's code; rte_mempool_get_bulk() turns it into -ENOENT). Objects
 * in other lcores' DPDK caches are not free to the driver, as with
 * ring_mp_mc.
 */
/* A pool without magazines: the ring (out of line, as enqueue_store()). */
static __attribute__((noinline)) int
dequeue_store(struct rte_mempool *mp, void **obj_table, unsigned int n)
{
	struct pagepool_mp *p = mp->pool_data;

	if (PP_LIKELY(rte_ring_mc_dequeue_bulk(p->store, obj_table, n,
					       NULL) == n))
		return 0;
	return dequeue_failed(mp, n);
}

/* A pool with magazines, past the fast path: the whole get. */
static __attribute__((noinline)) int
dequeue_mag(struct rte_mempool *mp, void **obj_table, unsigned int n)
{
	if (PP_LIKELY(pagepool_mp_mag_get(mp, mp->pool_data, obj_table,
					  n) == 0))
		return 0;
	return dequeue_failed(mp, n);
}

LEAF_COPY int pagepool_mp_dequeue(struct rte_mempool *mp, void **obj_table,
				  unsigned int n)
{
	struct pagepool_mp *p = mp->pool_data;

	if (PP_UNLIKELY(!pagepool_mp_here))
		return dequeue_failed(mp, n);
	if (p->mag_cap) {
		if (PP_LIKELY(pagepool_mp_mag_get_fast(p, obj_table, n)))
			return 0;
		return dequeue_mag(mp, obj_table, n);
	}
	return dequeue_store(mp, obj_table, n);
}

/* The free objects in the store and the magazines; exact when no other
 * lcore is inside enqueue or dequeue. */
unsigned int pagepool_mp_get_count(const struct rte_mempool *mp)
{
	const struct pagepool_mp *p;

	if (!pagepool_mp_usable("get_count"))
		return 0;
	p = mp->pool_data;
	return rte_ring_count(p->store) + pagepool_mp_mag_count(p);
}
