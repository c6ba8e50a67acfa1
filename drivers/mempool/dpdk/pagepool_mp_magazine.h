/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mp_magazine.h - the magazines' fast paths, inline into the
 * enqueue and dequeue ops (pagepool_mp_store.c), so that the common call
 * is one leaf function: no call, no register saved, and everything else
 * a tail call to pagepool_mp_mag_get() or pagepool_mp_mag_put()
 * (pagepool_mp_magazine.c), which do the whole job. It matters most for
 * one object a call: DPDK's net_null and many PMDs free their mbufs one
 * rte_pktmbuf_free() at a time, each an enqueue of one when the pool
 * has no DPDK cache.
 */
#ifndef PAGEPOOL_MP_MAGAZINE_H
#define PAGEPOOL_MP_MAGAZINE_H

#include <stdbool.h>

#include <pagepool/pp_handshake.h>

#include "pagepool_mp_priv.h"

struct pagepool_mp_mag {
	struct pp_handshake_ hs;  /* owner: the lcore; holder: a drainer */
	uint32_t len;             /* written inside the handshake only */
	void *objs[];             /* mag_cap entries */
} __rte_cache_aligned;

/*
 * The EAL's lcore id, read with the initial-exec TLS model: the EAL is
 * loaded with the application, so its TLS block is static, and this
 * plugin (loaded later with dlopen) would otherwise reach it through
 * __tls_get_addr on every call.
 */
extern __thread unsigned int per_lcore__lcore_id
	__attribute__((tls_model("initial-exec")));

/*
 * Object pointers between magazine and caller: up to COPY_INLINE_MAX
 * with a plain loop, four at a time, in functions built with LEAF_COPY,
 * which keeps gcc from turning the loop into a memmove call, so that
 * the fast path makes no call and saves no registers. Bigger bulks take
 * the out-of-line paths, whose memcpy's vector loop beats this one. 32
 * is DPDK's usual burst (testpmd's default).
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

/* The calling lcore's magazine when it may serve @n objects, else NULL
 * (a non-EAL thread, or a request bigger than mag_direct). */
static inline struct pagepool_mp_mag *
pagepool_mp_mag_of_caller(struct pagepool_mp *p, unsigned int n)
{
	unsigned int id = per_lcore__lcore_id;

	if (PP_UNLIKELY(id >= RTE_MAX_LCORE || n > p->mag_direct))
		return NULL;
	return p->mag_of[id];
}

/*
 * The calling lcore's magazine, entered on the asymmetric way, when the
 * fast path may serve @n objects from it; else NULL, and the caller
 * takes the out-of-line path, which handles the rest (a non-EAL thread,
 * a big request, the lock word, a drainer at work).
 */
static inline struct pagepool_mp_mag *
pagepool_mp_mag_enter_fast(struct pagepool_mp *p, unsigned int n)
{
	struct pagepool_mp_mag *m;

	if (PP_UNLIKELY(n > COPY_INLINE_MAX))
		return NULL;
	m = pagepool_mp_mag_of_caller(p, n);
	if (PP_UNLIKELY(!m || !pp_handshake_enter_fast_(&m->hs)))
		return NULL;
	return m;
}

/* @n objects off the top of the caller's magazine, the most recently
 * freed, still warm; false (nothing taken) when the fast path cannot. */
static inline bool pagepool_mp_mag_get_fast(struct pagepool_mp *p,
					    void **objs, unsigned int n)
{
	struct pagepool_mp_mag *m = pagepool_mp_mag_enter_fast(p, n);

	if (PP_UNLIKELY(!m))
		return false;
	if (PP_UNLIKELY(m->len < n)) {
		pp_handshake_exit_fast_(&m->hs);
		return false;
	}
	m->len -= n;
	objs_copy_small(objs, m->objs + m->len, n);
	pp_handshake_exit_fast_(&m->hs);
	return true;
}

/* @n objects onto the caller's magazine; false (nothing put) when the
 * fast path cannot (it would overflow, among the rest). */
static inline bool pagepool_mp_mag_put_fast(struct pagepool_mp *p,
					    void *const *objs, unsigned int n)
{
	struct pagepool_mp_mag *m = pagepool_mp_mag_enter_fast(p, n);

	if (PP_UNLIKELY(!m))
		return false;
	if (PP_UNLIKELY(m->len + n > p->mag_cap)) {
		pp_handshake_exit_fast_(&m->hs);
		return false;
	}
	objs_copy_small(m->objs + m->len, objs, n);
	m->len += n;
	pp_handshake_exit_fast_(&m->hs);
	return true;
}

#endif /* PAGEPOOL_MP_MAGAZINE_H */
