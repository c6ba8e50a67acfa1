/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mp_magazine.c - the per-lcore magazines of a pool created
 * with no DPDK cache (cache_size 0), and the drain that lets a starved
 * lcore reach the objects stranded in the other lcores' magazines.
 *
 * The rule is one cache layer on each object path. A pool with a DPDK
 * cache has DPDK's rte_mempool_cache in front of the store and nothing
 * here (mag_cap 0). A pool without one would send every get and put to
 * the store's ring, two contended atomics a call; for it, the magazine
 * is the one per-lcore cache: a stack of object pointers that its owner
 * lcore uses on every call without an atomic read-modify-write, in
 * front of the same store. testpmd with --mbcache=0 forwarded 20.1 Mpps
 * on the store alone and 32.1 with magazines (doc/dpdk-mempool.md).
 *
 * Owner and drainer meet through the project's owner/holder handshake
 * (pp_os_handshake.h): the owner lcore enters its magazine's handshake
 * around each call; a drainer holds it while it empties the magazine
 * into the store. Membarrier or lock word is the process's choice,
 * made once (pp_os_membarrier_usable()).
 */
#include <errno.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "pagepool_mp_magazine.h"
#include "pp_os.h"
#include "pp_os_handshake.h"

/*
 * A magazine's capacity is the pool's size over twice the EAL's lcores,
 * at most MAG_MAX, so that magazines together hold at most half the
 * pool and lcores rarely drain each other. MAG_MAX is twice DPDK's
 * largest cache flush (1.5 x RTE_MEMPOOL_CACHE_MAX_SIZE = 768, rounded
 * up to a power of two), the most a DPDK cache would have held.
 * Requests up to half the capacity (mag_direct) use the magazine;
 * bigger ones go to the store (they would empty or flush it at once).
 * A refill takes the shortfall plus MAG_BATCH, the allocator's thread
 * cache batch (the kernel's pcp batch). Below MAG_MIN a magazine is not
 * worth having: every call goes to the store.
 */
#define MAG_MAX 2048
#define MAG_MIN 16
#define MAG_BATCH 64

/* Copies of any size: the fast path's loop up to COPY_INLINE_MAX. */
static inline void objs_copy(void **restrict dst, void *const *restrict src,
			     unsigned int n)
{
	if (n > COPY_INLINE_MAX)
		memcpy(dst, src, n * sizeof(*dst));
	else
		objs_copy_small(dst, src, n);
}

/* Objects a magazine holds for @mp (see MAG_MAX); 0: no magazines. */
static unsigned int mag_cap_for(const struct rte_mempool *mp)
{
	unsigned int lcores = rte_lcore_count(), cap;

	if (mp->cache_size)
		return 0; /* DPDK's cache is the pool's one layer */
	cap = mp->size / (2 * (lcores ? lcores : 1));
	if (cap > MAG_MAX)
		cap = MAG_MAX;
	return cap < MAG_MIN ? 0 : cap;
}

static size_t mag_bytes(unsigned int cap)
{
	return RTE_ALIGN_CEIL(sizeof(struct pagepool_mp_mag) +
			      cap * sizeof(void *), RTE_CACHE_LINE_SIZE);
}

size_t pagepool_mp_mag_bytes(const struct rte_mempool *mp)
{
	unsigned int cap = mag_cap_for(mp);

	return cap ? mag_bytes(cap) * rte_lcore_count() : 0;
}

int pagepool_mp_mag_create(struct rte_mempool *mp, struct pagepool_mp *p,
			   int socket)
{
	unsigned int lcores = rte_lcore_count(), i, k = 0;
	unsigned int cap = mag_cap_for(mp);
	size_t one = mag_bytes(cap);
	static bool said;
	int way = 0;

	if (!cap)
		return 0;
	p->mags = rte_zmalloc_socket("pagepool_mags", one * lcores,
				     RTE_CACHE_LINE_SIZE, socket);
	if (!p->mags) {
		PMP_LOG(ERR, "pool '%s': no room in the arena for %u lcore magazines of %zu bytes; report this as a pagepool bug",
			mp->name, lcores, one);
		return -ENOMEM;
	}
	RTE_LCORE_FOREACH(i) {
		struct pagepool_mp_mag *m;

		if (k == lcores)
			break;
		m = (struct pagepool_mp_mag *)((char *)p->mags + one * k++);
		way = pp_handshake_init(&m->hs);
		p->mag_of[i] = m;
	}
	if (way && !said) {
		said = true;
		PMP_LOG(INFO, "lcore magazines of pools without a DPDK cache use the handshake's lock word (%s)",
			way == -ECANCELED ?
			"membarrier turned off: PAGEPOOL_NO_MEMBARRIER=1 or a ThreadSanitizer build" :
			strerror(-way));
	}
	p->mag_cap = cap;
	p->mag_direct = cap / 2;
	return 0;
}

void pagepool_mp_mag_free(struct pagepool_mp *p)
{
	rte_free(p->mags);
	p->mags = NULL;
	p->mag_cap = 0;
	memset(p->mag_of, 0, sizeof(p->mag_of));
}

/*
 * The pool ran dry for this lcore: every other magazine (all of them
 * when @self is RTE_MAX_LCORE) into the store, where the next attempt
 * finds the objects. The caller is inside no magazine: a holder must
 * not hold what it is inside of. Holders take the handshakes in lcore
 * order, so two drainers cannot wait for each other; one membarrier()
 * serves them all.
 */
static __attribute__((noinline)) void
drain_others(struct rte_mempool *mp, struct pagepool_mp *p, unsigned int self)
{
	struct pagepool_mp_mag *held[RTE_MAX_LCORE];
	unsigned int nr = 0;
	bool sync = false;

	for (unsigned int i = 0; i < RTE_MAX_LCORE; i++) {
		struct pagepool_mp_mag *m = p->mag_of[i];

		/* Racy by nature: a magazine that fills meanwhile is
		 * missed, as are objects other lcores hold now. */
		if (!m || i == self ||
		    !__atomic_load_n(&m->len, __ATOMIC_RELAXED))
			continue;
		sync |= pp_handshake_hold_begin(&m->hs);
		held[nr++] = m;
	}
	if (sync)
		pp_os_membarrier();
	for (unsigned int i = 0; i < nr; i++) {
		struct pagepool_mp_mag *m = held[i];

		/* The owner is out and stays out until the release. */
		pp_handshake_hold_wait(&m->hs);
		pagepool_mp_store_put(mp, p, m->objs, m->len);
		__atomic_store_n(&m->len, 0, __ATOMIC_RELAXED);
		pp_handshake_release(&m->hs);
	}
}

/* @n objects from the store, all or nothing. */
static inline bool from_store(struct pagepool_mp *p, void **slots,
			      unsigned int n)
{
	return rte_ring_mc_dequeue_bulk(p->store, slots, n, NULL) == n;
}

/* Top up @m (entered) to at least @n objects, plus a batch when there
 * is room. True when it holds @n. */
static __attribute__((noinline)) bool
mag_fill(struct pagepool_mp *p, struct pagepool_mp_mag *m, unsigned int n)
{
	unsigned int want = n - m->len + MAG_BATCH;

	if (want > p->mag_cap - m->len)
		want = p->mag_cap - m->len;
	/* The batch is a bonus: settle for the shortfall if need be. */
	if (!from_store(p, m->objs + m->len, want)) {
		want = n - m->len;
		if (!from_store(p, m->objs + m->len, want))
			return false;
	}
	m->len += want;
	return true;
}

/* The store, and when it is short the other magazines; for callers
 * without a magazine of their own for @n. */
static __attribute__((noinline)) int
get_direct(struct rte_mempool *mp, struct pagepool_mp *p, void **objs,
	   unsigned int n)
{
	if (from_store(p, objs, n))
		return 0;
	drain_others(mp, p, RTE_MAX_LCORE);
	return from_store(p, objs, n) ? 0 : -ENOBUFS;
}

/* The magazine could not serve @n: refill, drain the others, refill. */
static __attribute__((noinline)) int
get_refill(struct rte_mempool *mp, struct pagepool_mp *p,
	   struct pagepool_mp_mag *m, void **objs, unsigned int n)
{
	if (!mag_fill(p, m, n)) {
		pp_handshake_exit(&m->hs);
		drain_others(mp, p, per_lcore__lcore_id);
		pp_handshake_enter(&m->hs);
		if (m->len < n && !mag_fill(p, m, n)) {
			pp_handshake_exit(&m->hs);
			return -ENOBUFS;
		}
	}
	m->len -= n;
	objs_copy(objs, m->objs + m->len, n);
	pp_handshake_exit(&m->hs);
	return 0;
}

/*
 * Get @n objects, all or nothing: from the caller's magazine, the
 * store, then the other magazines. 0, or -ENOBUFS with @objs untouched.
 * The fast path hands out the top of the stack, the most recently
 * freed objects, still warm in cache.
 */
int pagepool_mp_mag_get(struct rte_mempool *mp, struct pagepool_mp *p,
			void **objs, unsigned int n)
{
	struct pagepool_mp_mag *m = pagepool_mp_mag_of_caller(p, n);

	if (PP_UNLIKELY(!m))
		return get_direct(mp, p, objs, n);
	pp_handshake_enter(&m->hs);
	if (PP_UNLIKELY(m->len < n))
		return get_refill(mp, p, m, objs, n);
	m->len -= n;
	objs_copy(objs, m->objs + m->len, n);
	pp_handshake_exit(&m->hs);
	return 0;
}

/* The magazine (entered) would overflow: its top down to mag_direct - n
 * (mag_direct >= n, so that much is there) goes to the store. */
static __attribute__((noinline)) void
put_spill(struct rte_mempool *mp, struct pagepool_mp *p,
	  struct pagepool_mp_mag *m, unsigned int n)
{
	unsigned int excess = m->len + n - p->mag_direct;

	m->len -= excess;
	pagepool_mp_store_put(mp, p, m->objs + m->len, excess);
}

/* Put @n objects: into the caller's magazine, or the store. Never
 * fails. */
void pagepool_mp_mag_put(struct rte_mempool *mp, struct pagepool_mp *p,
			 void *const *objs, unsigned int n)
{
	struct pagepool_mp_mag *m = pagepool_mp_mag_of_caller(p, n);

	if (PP_UNLIKELY(!m)) {
		pagepool_mp_store_put(mp, p, objs, n);
		return;
	}
	pp_handshake_enter(&m->hs);
	if (PP_UNLIKELY(m->len + n > p->mag_cap))
		put_spill(mp, p, m, n);
	objs_copy(m->objs + m->len, objs, n);
	m->len += n;
	pp_handshake_exit(&m->hs);
}

/* Objects in the magazines; exact when no lcore is inside a call. */
unsigned int pagepool_mp_mag_count(const struct pagepool_mp *p)
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < RTE_MAX_LCORE; i++)
		if (p->mag_of[i])
			n += __atomic_load_n(&p->mag_of[i]->len,
					     __ATOMIC_RELAXED);
	return (unsigned int)n;
}
