/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_handshake.h - internal: the owner's inline side of the handshake
 * that keeps a thread cache's (or a virtio_user queue's) owner apart from
 * the rare thread that holds it. Included by pp_tcache.h; never use it
 * directly. @stop says the way (PP_HANDSHAKE_ASYM_: membarrier, else a
 * lock word) and whether a holder is there, in one load; a handshake of
 * zeroes is a free lock word. The holder's side is the library's (lib/os,
 * pp_os_handshake.h); doc/design.md, decision 4, explains the protocol.
 * Part of the ABI as pp_tcache.h's views are: a layout change is a new
 * soname, and inline code from an older header must still be right.
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
