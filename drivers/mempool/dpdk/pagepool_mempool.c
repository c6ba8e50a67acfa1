/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mempool.c - the "pagepool" rte_mempool ops driver: any DPDK
 * application loads it with -d and selects it with
 * --mbuf-pool-ops-name=pagepool (or rte_mempool_set_ops_byname()).
 *
 * The object model (doc/dpdk-mempool.md has the long form). Objects are
 * packed densely, as DPDK packs them: one after the other at DPDK's
 * object stride (header + element + trailer), never across a hugepage
 * boundary unless the pool has RTE_MEMPOOL_F_NO_IOVA_CONTIG, so a pool
 * takes as much memory as a ring_mp_mc pool of the same objects. DPDK
 * pads the stride to an odd number of cache lines (unless
 * RTE_MEMPOOL_F_NO_SPREAD), so consecutive objects start at every one
 * of the 64 cache-line offsets in a 4 KiB page ("colours").
 *
 * A free object is a pointer in one of two places: the calling lcore's
 * magazine (a stack of object pointers that only its owner uses on the
 * fast path, with no atomic read-modify-write) or the pool's store, a
 * multi-producer/multi-consumer rte_ring with room for every object.
 * Magazines refill from and spill to the store a batch at a time, and an
 * lcore that finds magazine and store short drains the other lcores'
 * magazines into the store, so a get fails only when no free object is
 * left anywhere.
 *
 * The pool owns: one pagepool arena (2 MiB pages, 4 KiB as a fallback),
 * one DMA domain that gives each arena page its IOVA, and a DPDK external
 * malloc heap made of the arena, with those IOVAs. DPDK's
 * rte_mempool_populate_default() reserves the pool's memzone from that
 * heap, so DPDK's own bookkeeping (memory chunks, memsegs, VFIO mappings)
 * describes the very pages the objects live in. The store and the
 * magazines come from the same heap (pool_mem_free()).
 *
 * Foreign memory. The mempool ops contract lets any caller populate the
 * pool with any memory: rte_mempool_populate_anon() (anonymous mmap),
 * rte_mempool_populate_iova() / _virt() with the caller's chunk, with a
 * real IOVA or RTE_BAD_IOVA. Every chunk is sliced the same way; only an
 * arena chunk has its IOVAs checked against (and, with no chunk IOVA,
 * filled from) pagepool's DMA domain. Free objects of either kind share
 * the magazines and the store.
 *
 * State is process-local (pointers into this process's mappings):
 * secondary processes are not supported, and every op says so and fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include <pagepool/pagepool.h>

/* The OS layer's membarrier and the fault seam's heap wrappers (libc's
 * calls unless the plugin is built with -Dfault_injection=true): each
 * allocation below is a site. */
#include "pp_os.h"
#include "pp_os_fault.h"

#define PAGEPOOL_OPS_NAME "pagepool"

/*
 * The per-lcore magazine: object pointers in front of the store. Its
 * capacity is the pool's size over twice the EAL's lcores, at most
 * MAG_MAX, so that magazines together hold at most half the pool and
 * lcores rarely have to drain each other. MAG_MAX is twice DPDK's largest
 * cache flush (1.5 x RTE_MEMPOOL_CACHE_MAX_SIZE = 768, rounded up to a
 * power of two): requests up to half the capacity (mag_direct) use the
 * magazine, bigger ones go to the store (they would empty or flush it at
 * once). A refill takes the shortfall plus MAG_BATCH, the allocator's
 * thread-cache batch (the kernel's pcp batch). Below MAG_MIN a magazine
 * is not worth having: every call goes to the store.
 */
#define MAG_MAX 2048
#define MAG_MIN 16
#define MAG_BATCH 64

/*
 * A magazine is used by its owner lcore on every call and by another
 * lcore only when that one drains it because the pool ran dry. The owner
 * pays no atomic read-modify-write for that rare case: it marks itself
 * busy with a plain store and then checks for a drainer, and a drainer
 * raises stop and then runs membarrier(), which puts a full barrier on
 * every CPU that runs one of our threads, before it reads busy (the
 * asymmetric Dekker of userspace RCU, as the allocator's thread caches
 * do it, pp_tcache.h). So either the drainer sees busy and waits, or the
 * owner sees stop and steps back. Where membarrier is missing, both
 * sides use a lock word instead (mag_asym false).
 */
struct mag {
	uint32_t busy;  /* owner inside; lock word when !mag_asym */
	uint32_t stop;  /* a drainer wants the magazine */
	uint32_t len;
	void *objs[];   /* mag_cap entries */
} __rte_cache_aligned;

/*
 * The EAL's lcore id, read with the initial-exec TLS model: the EAL is
 * loaded with the application, so its TLS block is static, and this
 * plugin (loaded later with dlopen) would otherwise reach it through
 * __tls_get_addr on every call.
 */
extern __thread unsigned int per_lcore__lcore_id
	__attribute__((tls_model("initial-exec")));

static inline unsigned int lcore_id(void)
{
	return per_lcore__lcore_id;
}

/*
 * Object pointers between magazine and caller. The fast paths take up to
 * COPY_INLINE_MAX with a plain copy loop, four at a time; they are built
 * with LEAF_COPY, which keeps gcc from turning the loop into a memmove
 * call, so that with no call they save no registers. Bigger bulks go
 * through the slow paths, where memcpy's wide vector loop (chosen at run
 * time) beats this one. 32 is DPDK's usual burst (testpmd's default).
 */
#define LEAF_COPY __attribute__((optimize("no-tree-loop-distribute-patterns")))
#define COPY_INLINE_MAX 32

static inline void objs_copy_small(void **restrict dst,
				   void *const *restrict src, unsigned int n)
{
	for (; n >= 4; n -= 4, dst += 4, src += 4) {
		void *a = src[0], *b = src[1], *c = src[2], *d = src[3];

		dst[0] = a;
		dst[1] = b;
		dst[2] = c;
		dst[3] = d;
	}
	for (; n; n--)
		*dst++ = *src++;
}

#define PMP_LOG(level, fmt, ...)                                            \
	RTE_LOG(level, MEMPOOL, "pagepool: " fmt "\n", ##__VA_ARGS__)

/*
 * The longest external heap name, with its NUL: DPDK's internal
 * RTE_HEAP_NAME_MAX_LEN (malloc_heap.h), which no public header exports.
 */
#define HEAP_NAME_LEN 32

struct pagepool_mp {
	/* Hot: read by every enqueue and dequeue. */
	uint32_t mag_cap;            /* objects a magazine holds */
	uint32_t mag_direct;         /* bigger requests skip the magazine */
	struct rte_ring *store;      /* free objects outside the magazines */
	struct mag *mag_of[RTE_MAX_LCORE]; /* NULL: no EAL lcore there */

	/* Cold: setup, teardown and the slow paths. */
	uintptr_t base;              /* the arena */
	size_t len;
	size_t page_size;            /* the arena's pages */
	unsigned int page_order;     /* page_size as 4 KiB << order */
	struct pp_arena *arena;
	struct pp_dma *dma;
	void *mags;                  /* one block for all magazines */
	rte_spinlock_t drain_lock;   /* one drainer at a time */
	uint32_t nr_arena;           /* objects populated from the arena */
	uint32_t nr_foreign;         /* objects populated from foreign chunks */
	uint32_t teardown_misses;    /* failed gets while DPDK empties the pool */
	uintptr_t populating;        /* the chunk populate slices, or 0 */
	uintptr_t populating_end;
	int app_socket;              /* mp->socket_id while the heap's is lent */
	bool heap_added;             /* the arena is in the external heap */
	char heap_name[HEAP_NAME_LEN];
};

/* Set once, at the first alloc: membarrier(PRIVATE_EXPEDITED) works. */
static bool mag_asym;

static void membarrier_probe(void)
{
	static bool probed;
	int err;

	if (probed)
		return;
	probed = true;
	err = pp_os_membarrier_register();
	mag_asym = err == 0;
	if (!mag_asym)
		PMP_LOG(INFO, "membarrier(PRIVATE_EXPEDITED) unavailable (%s): lcore magazines use a lock word",
			strerror(-err));
}

/* The owner lcore enters its magazine. */
static inline void mag_enter(struct mag *m)
{
	if (PP_UNLIKELY(!mag_asym)) {
		/* Pairs with the release in mag_exit(). */
		while (__atomic_exchange_n(&m->busy, 1, __ATOMIC_ACQUIRE))
			rte_pause();
		return;
	}
	for (;;) {
		__atomic_store_n(&m->busy, 1, __ATOMIC_RELAXED);
		/*
		 * Compiler order only: the drainer's membarrier() supplies
		 * the CPU barrier between the store above and the load below.
		 * The acquire pairs with the drainer's release of stop, so
		 * the owner sees the emptied magazine.
		 */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (PP_LIKELY(!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)))
			return;
		__atomic_store_n(&m->busy, 0, __ATOMIC_RELEASE);
		while (__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))
			rte_pause();
	}
}

/* Release pairs with the drainer's acquire load of busy (and the
 * next owner entry's exchange in lock-word mode). */
static inline void mag_exit(struct mag *m)
{
	__atomic_store_n(&m->busy, 0, __ATOMIC_RELEASE);
}

/* A drainer takes a magazine; the caller holds drain_lock. */
static void mag_steal(struct mag *m)
{
	if (!mag_asym) {
		mag_enter(m);
		return;
	}
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELAXED);
	pp_os_membarrier();
	/* Pairs with the release in mag_exit(): the owner's writes. */
	while (__atomic_load_n(&m->busy, __ATOMIC_ACQUIRE))
		rte_pause();
}

static void mag_unsteal(struct mag *m)
{
	if (!mag_asym) {
		mag_exit(m);
		return;
	}
	/* Pairs with the owner's acquire load of stop in mag_enter(). */
	__atomic_store_n(&m->stop, 0, __ATOMIC_RELEASE);
}

/*
 * Set by the first successful alloc in this process. A secondary process
 * never gets here through alloc (it is refused), so the flag is its
 * warning that mp->pool_data points into another process's heap.
 */
static bool pools_here;

static bool ops_usable(const char *op)
{
	static bool said;

	if (PP_LIKELY(pools_here))
		return true;
	if (!said) {
		said = true;
		PMP_LOG(ERR, "%s on a pool this process did not create: pagepool pools work only in the process that created them (no multi-process support); use ring_mp_mc across processes",
			op);
	}
	return false;
}

/*
 * Free objects into the store. Cannot fail for a correct caller: the
 * store has room for every object the pool has (store_create()), so
 * only objects put twice can find it full; those are dropped, said.
 */
static __attribute__((noinline)) void
objs_to_store(struct rte_mempool *mp, struct pagepool_mp *p,
	      void *const *objs, unsigned int n)
{
	unsigned int done = rte_ring_mp_enqueue_burst(p->store, objs, n, NULL);

	if (PP_UNLIKELY(done < n))
		PMP_LOG(ERR, "pool '%s': %u objects put while every object was already free; dropped: an object was put back twice",
			mp->name, n - done);
}

/* @n objects from the store into @slots, all or nothing (a failed
 * dequeue writes nothing). Returns 0 or -ENOBUFS. */
static inline int objs_from_store(struct pagepool_mp *p, void **slots,
				  unsigned int n)
{
	return rte_ring_mc_dequeue_bulk(p->store, slots, n, NULL) == n ?
		       0 : -ENOBUFS;
}

/*
 * rte_mempool_free() first empties the pool with one-object dequeues, one
 * per object it populated, and only then calls the free op; the objects
 * the application still holds show up as failed dequeues. The pool has
 * left DPDK's list of pools by then, which is how a miss is told from an
 * ordinary empty pool. Cold path: a failed get only.
 */
static void count_teardown_miss(struct rte_mempool *mp, struct pagepool_mp *p,
				unsigned int n)
{
	if (n == 1 && rte_mempool_lookup(mp->name) != mp)
		p->teardown_misses++;
}

/*
 * The pool ran dry for this lcore: move every other lcore's magazine into
 * the store, where the next attempt finds the objects. The caller holds
 * no magazine (two lcores draining each other would deadlock).
 */
static __attribute__((noinline)) void
mags_drain_others(struct rte_mempool *mp, struct pagepool_mp *p,
		  unsigned int self)
{
	rte_spinlock_lock(&p->drain_lock);
	for (unsigned int i = 0; i < RTE_MAX_LCORE; i++) {
		struct mag *m = p->mag_of[i];

		/* Racy by nature: one that fills meanwhile is missed, as are
		 * objects other lcores hold at this moment. */
		if (!m || i == self ||
		    !__atomic_load_n(&m->len, __ATOMIC_RELAXED))
			continue;
		mag_steal(m);
		objs_to_store(mp, p, m->objs, m->len);
		__atomic_store_n(&m->len, 0, __ATOMIC_RELAXED);
		mag_unsteal(m);
	}
	rte_spinlock_unlock(&p->drain_lock);
}

/*
 * Top up @m (entered) to at least @n objects, plus a batch when there is
 * room. Returns true when it holds @n.
 */
static __attribute__((noinline)) bool
mag_fill(struct pagepool_mp *p, struct mag *m, unsigned int n)
{
	unsigned int want = n - m->len + MAG_BATCH;

	if (want > p->mag_cap - m->len)
		want = p->mag_cap - m->len;
	/* The batch is a bonus: settle for the shortfall if need be. */
	if (objs_from_store(p, m->objs + m->len, want) == 0) {
		m->len += want;
		return true;
	}
	want = n - m->len;
	if (objs_from_store(p, m->objs + m->len, want) == 0) {
		m->len += want;
		return true;
	}
	return false;
}

/*
 * The calling lcore's magazine when the fast path may use it for @n
 * objects, else NULL: the lcore has one, the request is small enough,
 * and the owner could enter it without waiting (asymmetric mode and no
 * drainer at work). On success the caller is inside and leaves with
 * mag_exit().
 */
static inline struct mag *mag_fast_enter(const struct pagepool_mp *p,
					 unsigned int n)
{
	unsigned int id = lcore_id();
	struct mag *m;

	if (PP_UNLIKELY(id >= RTE_MAX_LCORE || !mag_asym))
		return NULL;
	m = p->mag_of[id];
	if (PP_UNLIKELY(!m || n > p->mag_direct))
		return NULL;
	__atomic_store_n(&m->busy, 1, __ATOMIC_RELAXED);
	/* As in mag_enter(): the drainer's membarrier() orders the store
	 * above before the load below; the acquire pairs with its release
	 * of stop. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (PP_UNLIKELY(__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))) {
		mag_exit(m);
		return NULL;
	}
	return m;
}

/*
 * dequeue, everything but the fast path: refills, non-EAL threads, big
 * requests, lock-word mode, a drainer at work, the pool running dry.
 */
static __attribute__((noinline)) int
dequeue_slow(struct rte_mempool *mp, void **obj_table, unsigned int n)
{
	unsigned int id = lcore_id();
	struct pagepool_mp *p;
	struct mag *m;

	if (PP_UNLIKELY(!ops_usable("dequeue")))
		return -ENOTSUP;
	p = mp->pool_data;
	if (id >= RTE_MAX_LCORE || !p->mag_of[id] || n > p->mag_direct) {
		/* Non-EAL threads and big requests: the store. */
		if (objs_from_store(p, obj_table, n) == 0)
			return 0;
		mags_drain_others(mp, p, RTE_MAX_LCORE);
		if (objs_from_store(p, obj_table, n) == 0)
			return 0;
		count_teardown_miss(mp, p, n);
		return -ENOBUFS;
	}
	m = p->mag_of[id];
	mag_enter(m);
	if (m->len < n && !mag_fill(p, m, n)) {
		mag_exit(m);
		mags_drain_others(mp, p, id);
		mag_enter(m);
		if (m->len < n && !mag_fill(p, m, n)) {
			mag_exit(m);
			count_teardown_miss(mp, p, n);
			return -ENOBUFS;
		}
	}
	m->len -= n;
	memcpy(obj_table, m->objs + m->len, n * sizeof(*obj_table));
	mag_exit(m);
	return 0;
}

/*
 * dequeue: all or nothing, as rte_mempool_ops_dequeue_bulk() requires:
 * when fewer than @n objects can be had anywhere (this lcore's magazine,
 * the store, other lcores' magazines), nothing is taken and the call
 * returns -ENOBUFS (the ring driver's code; rte_mempool_get_bulk() turns
 * it into -ENOENT). A failed call leaves @obj_table untouched:
 * rte_mempool_do_generic_get() refills its cache in place and, when that
 * fails, counts the old entries as still there.
 *
 * The fast path (up to COPY_INLINE_MAX objects, which the magazine
 * holds) touches only caller-saved registers: everything else is one
 * tail call to dequeue_slow(), so that the common call saves and
 * restores nothing.
 */
static LEAF_COPY int pagepool_dequeue(struct rte_mempool *mp,
				      void **obj_table, unsigned int n)
{
	struct mag *m;

	if (PP_UNLIKELY(!pools_here || n > COPY_INLINE_MAX))
		return dequeue_slow(mp, obj_table, n);
	m = mag_fast_enter(mp->pool_data, n);
	if (PP_UNLIKELY(!m))
		return dequeue_slow(mp, obj_table, n);
	if (PP_UNLIKELY(m->len < n)) {
		mag_exit(m);
		return dequeue_slow(mp, obj_table, n);
	}
	/* The top n: the most recently freed, still warm in cache. */
	m->len -= n;
	objs_copy_small(obj_table, m->objs + m->len, n);
	mag_exit(m);
	return 0;
}

/*
 * Debug builds: is @obj an object of @mp, that is, inside one of its
 * memory chunks, or the one populate is slicing (DPDK lists a chunk only
 * after populate returns, and populate puts each object)? A walk of the
 * chunk list per object, so only there.
 */
static bool obj_owned(const struct rte_mempool *mp, const void *obj)
{
	const struct pagepool_mp *p = mp->pool_data;
	const struct rte_mempool_memhdr *c;
	uintptr_t start = (uintptr_t)obj - mp->header_size;
	uintptr_t end = (uintptr_t)obj + mp->elt_size + mp->trailer_size;

	if (start >= p->populating && end <= p->populating_end)
		return true;
	STAILQ_FOREACH(c, &mp->mem_list, next)
		if (start >= (uintptr_t)c->addr &&
		    end <= (uintptr_t)c->addr + c->len)
			return true;
	return false;
}

static void objs_put(struct rte_mempool *mp, void *const *obj_table,
		     unsigned int n);

/*
 * Debug builds: every put comes here, and pointers that are not objects
 * of the pool are logged and left out, so that a put into the wrong pool
 * shows where it happens instead of as a corrupt pool later.
 */
static __attribute__((noinline)) void
objs_put_checked(struct rte_mempool *mp, void *const *obj_table,
		 unsigned int n)
{
	void *ok[64];

	while (n) {
		unsigned int c = n < RTE_DIM(ok) ? n : RTE_DIM(ok), k = 0;

		for (unsigned int i = 0; i < c; i++) {
			if (obj_owned(mp, obj_table[i])) {
				ok[k++] = obj_table[i];
				continue;
			}
			PMP_LOG(ERR, "put of %p into pool '%s', which does not own it; ignored: put objects back into the pool they came from",
				obj_table[i], mp->name);
		}
		objs_put(mp, ok, k);
		obj_table += c;
		n -= c;
	}
}

/* enqueue, everything but the fast path (see dequeue_slow()). */
static __attribute__((noinline)) int
enqueue_slow(struct rte_mempool *mp, void *const *obj_table, unsigned int n)
{
	if (PP_UNLIKELY(!ops_usable("enqueue")))
		return -ENOTSUP;
	if (PP_DEBUG)
		objs_put_checked(mp, obj_table, n);
	else
		objs_put(mp, obj_table, n);
	return 0;
}

/* Put @n objects: the calling lcore's magazine, or the store. */
static void objs_put(struct rte_mempool *mp, void *const *obj_table,
		     unsigned int n)
{
	unsigned int id = lcore_id();
	struct pagepool_mp *p = mp->pool_data;
	struct mag *m;

	if (!n)
		return;
	if (id >= RTE_MAX_LCORE || !p->mag_of[id] || n > p->mag_direct) {
		objs_to_store(mp, p, obj_table, n);
		return;
	}
	m = p->mag_of[id];
	mag_enter(m);
	if (m->len + n > p->mag_cap) {
		/* Down to mag_direct - n (>= 0), then n on top. */
		unsigned int excess = m->len + n - p->mag_direct;

		m->len -= excess;
		objs_to_store(mp, p, m->objs + m->len, excess);
	}
	memcpy(m->objs + m->len, obj_table, n * sizeof(*obj_table));
	m->len += n;
	mag_exit(m);
}

/*
 * enqueue: never fails. Into this lcore's magazine; when it would
 * overflow, the magazine first gives its top down to half full to the
 * store (mag_direct >= n, so that much is always there). The fast path
 * is dequeue's; debug builds take the slow path, which checks each
 * pointer.
 */
static LEAF_COPY int pagepool_enqueue(struct rte_mempool *mp,
				      void *const *obj_table, unsigned int n)
{
	const struct pagepool_mp *p;
	struct mag *m;

	if (PP_UNLIKELY(PP_DEBUG || !pools_here || n > COPY_INLINE_MAX))
		return enqueue_slow(mp, obj_table, n);
	p = mp->pool_data;
	m = mag_fast_enter(p, n);
	if (PP_UNLIKELY(!m))
		return enqueue_slow(mp, obj_table, n);
	if (PP_UNLIKELY(m->len + n > p->mag_cap)) {
		mag_exit(m);
		return enqueue_slow(mp, obj_table, n);
	}
	objs_copy_small(m->objs + m->len, obj_table, n);
	m->len += n;
	mag_exit(m);
	return 0;
}

/*
 * Exact when no other lcore is inside enqueue or dequeue: the store plus
 * every magazine.
 */
static unsigned int pagepool_get_count(const struct rte_mempool *mp)
{
	const struct pagepool_mp *p;
	unsigned long n;

	if (!ops_usable("get_count"))
		return 0;
	p = mp->pool_data;
	n = rte_ring_count(p->store);
	for (unsigned int i = 0; i < RTE_MAX_LCORE; i++)
		if (p->mag_of[i])
			n += __atomic_load_n(&p->mag_of[i]->len,
					     __ATOMIC_RELAXED);
	return (unsigned int)n;
}

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

/* The IOVA of @addr, inside the arena, or RTE_BAD_IOVA. */
static rte_iova_t arena_iova(const struct pagepool_mp *p, uintptr_t addr)
{
	uintptr_t page = addr & ~(uintptr_t)(p->page_size - 1);
	uint64_t iova;

	if (pp_dma_map_page(p->dma, (void *)page, p->page_order,
			    PP_DMA_BIDIRECTIONAL, &iova) != 0)
		return RTE_BAD_IOVA;
	return iova + (addr - page);
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
		iovas[i] = arena_iova(p, p->base + i * p->page_size);
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

/* Undo heap_add; fails (and leaves it) while DPDK memory is allocated
 * from it. */
static int heap_remove(struct rte_mempool *mp, struct pagepool_mp *p)
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

/*
 * The store and the magazines live in the arena, allocated from the
 * pool's heap like ring_mp_mc's ring from DPDK's: in hugepages on the
 * pool's node, and in the part of the last 2 MiB page the objects leave
 * free, which would otherwise be wasted (arena_bytes() counts them).
 * Freed before the heap goes, which it cannot while they are there.
 */
static void pool_mem_free(struct pagepool_mp *p)
{
	rte_free(p->store);
	rte_free(p->mags);
	p->store = NULL;
	p->mags = NULL;
	memset(p->mag_of, 0, sizeof(p->mag_of));
}

/* Take the heap, DMA domain and arena down and free the state. */
static void pagepool_teardown(struct rte_mempool *mp, struct pagepool_mp *p)
{
	pool_mem_free(p);
	if (heap_remove(mp, p) < 0)
		return;
	pp_dma_unmap_arena(p->dma, p->arena);
	pp_dma_destroy(p->dma);
	pp_arena_destroy(p->arena);
	free(p);
}

/* Objects a magazine holds for a pool of @size (see MAG_MAX); 0: none. */
static unsigned int mag_cap_for(unsigned int size)
{
	unsigned int lcores = rte_lcore_count(), cap;

	cap = size / (2 * (lcores ? lcores : 1));
	if (cap > MAG_MAX)
		cap = MAG_MAX;
	return cap < MAG_MIN ? 0 : cap;
}

/* Bytes of one magazine of @cap objects, cache-line aligned. */
static size_t mag_bytes(unsigned int cap)
{
	return RTE_ALIGN_CEIL(sizeof(struct mag) + cap * sizeof(void *),
			      RTE_CACHE_LINE_SIZE);
}

/* One magazine per EAL lcore, from the pool's heap (socket @socket). */
static int mags_create(struct rte_mempool *mp, struct pagepool_mp *p,
		       int socket)
{
	unsigned int lcores = rte_lcore_count(), i, k = 0;
	unsigned int cap = mag_cap_for(mp->size);
	size_t one = mag_bytes(cap);

	if (!cap)
		return 0; /* every call goes to the store */
	p->mags = rte_zmalloc_socket("pagepool_mags", one * lcores,
				     RTE_CACHE_LINE_SIZE, socket);
	if (!p->mags) {
		PMP_LOG(ERR, "pool '%s': no room in the arena for %u lcore magazines of %zu bytes; report this as a pagepool bug",
			mp->name, lcores, one);
		return -ENOMEM;
	}
	RTE_LCORE_FOREACH(i)
		if (k < lcores)
			p->mag_of[i] = (struct mag *)((char *)p->mags + one * k++);
	p->mag_cap = cap;
	p->mag_direct = cap / 2;
	return 0;
}

/* Bytes of a ring with room for @size objects (RING_F_EXACT_SZ: slots
 * for the next power of two above it). */
static ssize_t store_bytes(unsigned int size)
{
	return rte_ring_get_memsize_elem(sizeof(void *),
					 rte_align32pow2(size + 1));
}

/*
 * The store: a ring with room for mp->size objects, every object the
 * pool can have, so that putting an object never fails; from the pool's
 * heap (socket @socket). rte_ring_init() registers no name.
 */
static int store_create(struct rte_mempool *mp, struct pagepool_mp *p,
			int socket)
{
	ssize_t sz = store_bytes(mp->size);
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

/*
 * Arena bytes beyond the objects' memzone, the store and the magazines:
 * the malloc element header and trailer DPDK puts around each of the
 * three (at most 128 bytes each in DPDK 22.11's malloc_elem.h) and their
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
	ssize_t ring = store_bytes(mp->size);

	if (sz < 0 || ring < 0)
		return sz < 0 ? sz : ring;
	return sz + ring + (ssize_t)(mag_bytes(mag_cap_for(mp->size)) *
				     rte_lcore_count()) + HEAP_SLACK;
}

/*
 * The pool's arena: 2 MiB pages, the smallest hugepage, so the arena
 * wastes less than 2 MiB past the objects (1 GiB pages are few and
 * shared). 4 KiB pages are a correct fallback for objects up to 4 KiB:
 * DPDK then packs objects per 4 KiB page (fewer per byte, so the arena is
 * made again at that size), and each object is IOVA-contiguous in PA
 * mode too.
 */
static int arena_create(struct rte_mempool *mp, struct pagepool_mp *p)
{
	size_t obj_total = (size_t)mp->header_size + mp->elt_size +
			   mp->trailer_size;
	struct pp_arena_opts ao = { .sz = sizeof(ao) };
	ssize_t need = arena_bytes(mp, 21), need_2m = need;

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
		int err = -errno;

		PMP_LOG(ERR, "pool '%s': no arena for %u objects (%s); it needs %zd MiB of free 2 MiB hugepages (pp-hugepages shows what is free; pp-hugepages -r SIZE reserves), or make the pool smaller",
			mp->name, mp->size, strerror(errno), need_2m >> 20);
		return err;
	}
	p->base = (uintptr_t)pp_arena_base(p->arena);
	p->len = pp_arena_size(p->arena);
	p->page_size = pp_arena_page_size(p->arena);
	p->page_order = 0;
	while ((PP_PAGE_SIZE_4K << p->page_order) < p->page_size)
		p->page_order++;
	return 0;
}

/*
 * alloc: the arena and its DMA domain, the external heap the pool's
 * memzone will come from, and from that heap the store and the
 * magazines.
 */
static int pagepool_alloc(struct rte_mempool *mp)
{
	struct pp_dma_opts dopts = { .sz = sizeof(dopts) };
	struct pagepool_mp *p;
	int err;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		PMP_LOG(ERR, "pool '%s': pagepool pools can be created only in a primary process (no multi-process support); use ring_mp_mc",
			mp->name);
		return -ENOTSUP;
	}
	dopts.mode = dma_mode_for_eal();

	p = pp_os_calloc(1, sizeof(*p));
	if (!p) {
		PMP_LOG(ERR, "pool '%s': out of memory for the driver's state",
			mp->name);
		return -ENOMEM;
	}
	rte_spinlock_init(&p->drain_lock);
	membarrier_probe();
	err = arena_create(mp, p);
	if (err)
		goto err_free_state;

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
	/* heap_add() lent the heap's socket id to the pool. */
	err = store_create(mp, p, mp->socket_id);
	if (!err)
		err = mags_create(mp, p, mp->socket_id);
	if (err)
		goto err_free_pool_mem;
	mp->pool_data = p;
	pools_here = true;
	return 0;

err_free_pool_mem:
	pool_mem_free(p);
	heap_remove(mp, p);
err_unmap:
	pp_dma_unmap_arena(p->dma, p->arena);
err_destroy_dma:
	pp_dma_destroy(p->dma);
err_destroy_arena:
	pp_arena_destroy(p->arena);
err_free_state:
	free(p);
	return err;
}

/*
 * free: rte_mempool_free() calls it after emptying the pool and freeing
 * its memzones, and cannot hear an error. The dequeues that failed while
 * it emptied the pool are the objects outside the driver: those in lcore
 * caches (DPDK does not flush them) and those the application still
 * holds. For the latter, say how many and keep the arena mapped
 * (leaked), so that they stay valid memory; the application's bug must
 * not become a crash.
 */
static void pagepool_free(struct rte_mempool *mp)
{
	struct pagepool_mp *p = mp->pool_data;
	unsigned long cached = 0, out;

	if (!p || !ops_usable("free"))
		return;
	if (mp->cache_size)
		for (unsigned int i = 0; i < RTE_MAX_LCORE; i++)
			cached += mp->local_cache[i].len;
	out = p->teardown_misses > cached ? p->teardown_misses - cached : 0;
	if (out) {
		PMP_LOG(ERR, "pool '%s' freed with %lu of %u objects still in use; its arena stays mapped (leaked) so they remain valid: return every object before rte_mempool_free()",
			mp->name, out, p->nr_arena + p->nr_foreign);
		/* DPDK zeroed the memzone when it freed it; the heap goes,
		 * so that its name is free again and devices lose their
		 * VFIO mappings of it, but the memory stays. The store and
		 * magazines go first: no op runs after free. */
		pool_mem_free(p);
		heap_remove(mp, p);
		mp->pool_data = NULL;
		return;
	}
	pagepool_teardown(mp, p);
	mp->pool_data = NULL;
}

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
		rte_iova_t prev = arena_iova(p, start);

		for (uintptr_t pg = (start & pmask) + p->page_size;
		     prev != RTE_BAD_IOVA && pg <= (last & pmask);
		     pg += p->page_size) {
			rte_iova_t next = arena_iova(p, pg);

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
		if (arena_iova(p, a) == iova + (a - va))
			continue;
		PMP_LOG(ERR, "pool '%s': chunk %p (%zu bytes) has IOVA 0x%" PRIx64 " from DPDK but pagepool has 0x%" PRIx64 " at %p; report this as a pagepool bug",
			mp->name, (void *)va, len, (uint64_t)iova,
			(uint64_t)arena_iova(p, a), (void *)a);
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
static int pagepool_populate(struct rte_mempool *mp, unsigned int max_objs,
			     void *vaddr, rte_iova_t iova, size_t len,
			     rte_mempool_populate_obj_cb_t *obj_cb,
			     void *obj_cb_arg)
{
	struct pagepool_mp *p = mp->pool_data;
	uintptr_t start = (uintptr_t)vaddr - (p ? p->base : 0);
	struct arena_cb a = { p, obj_cb, obj_cb_arg };
	bool in_arena;
	int n;

	if (!p || !ops_usable("populate"))
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
	 * application's socket id back (see heap_add). */
	if (mp->populated_size >= mp->size)
		mp->socket_id = p->app_socket;
	return n;
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
	.enqueue = pagepool_enqueue,
	.dequeue = pagepool_dequeue,
	.get_count = pagepool_get_count,
	.calc_mem_size = rte_mempool_op_calc_mem_size_default,
	.populate = pagepool_populate,
};

RTE_MEMPOOL_REGISTER_OPS(pagepool_ops);
