/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_handshake.h - internal: the owner's fast side of the handshake that
 * keeps an object's owner thread, which uses it on every call, apart
 * from the rare other thread that must hold it for a while (a holder):
 * the allocator's thread caches (pp_tcache.h), the virtio_user
 * driver's queues and the DPDK mempool driver's lcore magazines.
 * Included by pp_tcache.h, whose inline fast paths enter a thread
 * cache; never use it directly.
 *
 * Two ways, chosen once per process by the library and written into
 * each handshake's @stop when it is made:
 *
 *   - asymmetric, where membarrier(PRIVATE_EXPEDITED) works: the owner
 *     stores busy = 1, a compiler barrier, loads stop; no atomic
 *     read-modify-write. A holder raises stop, runs membarrier(), which
 *     executes a full barrier on every CPU running one of our threads,
 *     then waits for busy to drop: either the owner's store was visible
 *     to it, or the owner's load sees stop raised and steps back. An
 *     owner parked outside a call has busy clear, so a hold never waits
 *     for it;
 *   - a lock word, where membarrier is missing (kernels before 4.14, a
 *     seccomp policy), with PAGEPOOL_NO_MEMBARRIER=1, and in TSan
 *     builds (TSan does not know membarrier): the owner, like a holder,
 *     takes stop's HELD bit with one atomic exchange a call.
 *
 * Holders take stop's HELD bit among themselves in both ways. The
 * holder's side, the lock-word way and the choice are the library's
 * (lib/os: pp_os_handshake.h); here is only what an inline fast path
 * needs: one load tells it both the way and whether a holder is there.
 * A handshake of zeroes is the lock word, free: memory the library has
 * not yet set up is never taken for the asymmetric way.
 *
 * Part of the ABI as pp_tcache.h's views are (struct pp_tcache_view_
 * holds one): a change to the layout is a new soname. Inline code built
 * against an older header, which read stop == 0 as "free", finds
 * PP_HANDSHAKE_ASYM_ there and takes the library's way: slower, still
 * right, as any new meaning of @stop must leave it.
 */
#ifndef PAGEPOOL_PP_HANDSHAKE_H
#define PAGEPOOL_PP_HANDSHAKE_H

#include <stdbool.h>
#include <stdint.h>

#include <pagepool/pp_common.h>

/* @stop's bits. */
#define PP_HANDSHAKE_HELD_ 1u   /* a holder (or, lock word: the owner) */
#define PP_HANDSHAKE_ASYM_ 2u   /* the asymmetric way; set once, at init */

struct pp_handshake_ {
	uint32_t busy;  /* asymmetric: the owner is inside a call */
	uint32_t stop;  /* PP_HANDSHAKE_ASYM_ | PP_HANDSHAKE_HELD_ */
};

/*
 * The owner's entry on the asymmetric way: a plain store to busy, a
 * compiler barrier, a load of stop (a holder's membarrier() orders the
 * two on the CPU). True when stop says "asymmetric, no holder": the
 * owner is in, and leaves with pp_handshake_exit_fast_(). Otherwise
 * false, with busy clear again: a holder is there, or the handshake is
 * the lock word; the caller takes the library's way.
 *
 * Acquire: pairs with the release that dropped the last holder's HELD,
 * so what the holder wrote is seen here.
 */
static inline bool pp_handshake_enter_fast_(struct pp_handshake_ *hs)
{
	__atomic_store_n(&hs->busy, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (PP_LIKELY(__atomic_load_n(&hs->stop, __ATOMIC_ACQUIRE) ==
		      PP_HANDSHAKE_ASYM_))
		return true;
	__atomic_store_n(&hs->busy, 0, __ATOMIC_RELEASE);
	return false;
}

/* Release: pairs with the holder's acquire load of busy, so a holder
 * that sees busy clear sees what this call wrote. */
static inline void pp_handshake_exit_fast_(struct pp_handshake_ *hs)
{
	__atomic_store_n(&hs->busy, 0, __ATOMIC_RELEASE);
}

#endif /* PAGEPOOL_PP_HANDSHAKE_H */
