/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_handshake.c - the owner/holder handshake's out-of-line parts: the
 * choice of way, the owner's wait, and the holder's side with its
 * membarrier() (pp_os_handshake.h; the inline fast side is in
 * pagepool/pp_handshake.h).
 *
 * Waits spin briefly, then yield: the thread waited for may be
 * preempted (more threads than cores), and a pure spin would only burn
 * the time slice it needs to finish. A hold lasts one pass over a
 * thread cache's stacks, or a virtio ring's outage, so the owner's wait
 * is rare; a holder waits at most one owner's call.
 */
#include <sched.h>

#include "pp_os.h"
#include "pp_os_handshake.h"

/* Spins of a wait before it yields: a held cache line is usually given
 * up within a few hundred cycles. */
#define WAIT_SPINS 128

static inline void wait_a_little(unsigned int i)
{
	if (i >= WAIT_SPINS) {
		sched_yield();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

int pp_handshake_init(struct pp_handshake_ *hs)
{
	int err = pp_os_membarrier_usable();

	__atomic_store_n(&hs->busy, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&hs->stop, err ? 0 : PP_HANDSHAKE_ASYM_,
			 __ATOMIC_RELAXED);
	return err;
}

void pp_handshake_init_lockword(struct pp_handshake_ *hs)
{
	__atomic_store_n(&hs->busy, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&hs->stop, 0, __ATOMIC_RELAXED);
}

void pp_handshake_enter_slow(struct pp_handshake_ *hs)
{
	for (;;) {
		/* Busy is clear (the refused entry cleared it), so the
		 * holder can finish. */
		for (unsigned int i = 0;
		     __atomic_load_n(&hs->stop, __ATOMIC_RELAXED) &
		     PP_HANDSHAKE_HELD_; i++)
			wait_a_little(i);
		if (pp_handshake_try_enter(hs))
			return;
	}
}

bool pp_handshake_hold_begin(struct pp_handshake_ *hs)
{
	uint32_t way = __atomic_load_n(&hs->stop, __ATOMIC_RELAXED) &
		       PP_HANDSHAKE_ASYM_;

	/*
	 * Acquire: pairs with the release of the last holder (or, lock
	 * word, of the owner's exit): what it wrote is seen here. Read
	 * before the exchange, so that waiting holders do not bounce the
	 * line between them.
	 */
	for (unsigned int i = 0;; i++) {
		if (!(__atomic_load_n(&hs->stop, __ATOMIC_RELAXED) &
		      PP_HANDSHAKE_HELD_) &&
		    !(__atomic_exchange_n(&hs->stop, way | PP_HANDSHAKE_HELD_,
					  __ATOMIC_ACQUIRE) &
		      PP_HANDSHAKE_HELD_))
			return way != 0;
		wait_a_little(i);
	}
}

void pp_handshake_hold_wait(struct pp_handshake_ *hs)
{
	if (!pp_handshake_is_asym(hs))
		return;
	/* Acquire: pairs with pp_handshake_exit_fast_(): the owner's last
	 * call's writes. */
	for (unsigned int i = 0; __atomic_load_n(&hs->busy, __ATOMIC_ACQUIRE);
	     i++)
		wait_a_little(i);
}

void pp_handshake_hold(struct pp_handshake_ *hs)
{
	if (pp_handshake_hold_begin(hs))
		pp_os_membarrier();
	pp_handshake_hold_wait(hs);
}

void pp_handshake_release(struct pp_handshake_ *hs)
{
	/* Release: pairs with the acquire of the owner's next entry (or
	 * the next holder's exchange). */
	__atomic_store_n(&hs->stop,
			 __atomic_load_n(&hs->stop, __ATOMIC_RELAXED) &
			 PP_HANDSHAKE_ASYM_,
			 __ATOMIC_RELEASE);
}
