/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_os_handshake.h - the whole of the owner/holder handshake whose fast
 * side is inline in pagepool/pp_handshake.h (which says what the two
 * ways are): making one, the owner's side in either way, and the
 * holder's side, the membarrier() included. Used by the allocator's
 * thread caches (lib/page/thread_cache.c), the virtio_user queues
 * (drivers/net/virtio_user/virtio_user_rxtx.c) and the DPDK mempool
 * driver's lcore magazines (drivers/mempool/dpdk/pagepool_mp_magazine.c).
 *
 * The owner: one thread, the object's, enters around each call and
 * exits after it: pp_handshake_try_enter() (does without when held, as
 * a virtio burst does nothing while its queue is down) or
 * pp_handshake_enter() (waits, as a thread cache's owner does), then
 * pp_handshake_exit(). A holder: any other thread, for as long as it
 * likes: pp_handshake_hold() ... pp_handshake_release(); or, to hold
 * many with one membarrier():
 *
 *	bool sync = false;
 *	for each: sync |= pp_handshake_hold_begin(hs);
 *	if (sync)
 *		pp_os_membarrier();
 *	for each: pp_handshake_hold_wait(hs);
 *
 * A holder must not hold what it owns while inside a call on it (it
 * would wait for itself), nor take a handshake it already holds.
 */
#ifndef PP_INTERNAL_OS_HANDSHAKE_H
#define PP_INTERNAL_OS_HANDSHAKE_H

#include <stdbool.h>
#include <stdint.h>

#include <pagepool/pp_handshake.h>

/*
 * pp_handshake_init - set up @hs free, the asymmetric way where this
 * process uses it (pp_os_membarrier_usable() == 0), else the lock word.
 * Returns 0, or the reason for the lock word (pp_os_membarrier_usable()'s
 * error), for a caller that tells the operator. Before any thread uses
 * @hs; a handshake of zeroes is the lock word already.
 */
int pp_handshake_init(struct pp_handshake_ *hs);

/* pp_handshake_init_lockword - set up @hs free, the lock word: right
 * everywhere (tests use it to run the other way where membarrier works). */
void pp_handshake_init_lockword(struct pp_handshake_ *hs);

/* Whether @hs is the asymmetric way (fixed at init). */
static inline bool pp_handshake_is_asym(const struct pp_handshake_ *hs)
{
	return __atomic_load_n(&hs->stop, __ATOMIC_RELAXED) &
	       PP_HANDSHAKE_ASYM_;
}

/*
 * pp_handshake_try_enter - the owner enters @hs for one call, in either
 * way. True: inside, leave with pp_handshake_exit(). False: a holder
 * holds @hs; nothing to undo. Only @hs's owner thread may call this.
 *
 * The way first (a load of a line the call is about to write anyway),
 * so that the lock word never writes busy. Asymmetric:
 * pp_handshake_enter_fast_(). Lock word: one exchange takes HELD;
 * acquire, pairing with the release in pp_handshake_release() or
 * pp_handshake_exit(). HELD was already set: a holder's, and what we
 * wrote is what was there.
 */
static inline bool pp_handshake_try_enter(struct pp_handshake_ *hs)
{
	if (PP_LIKELY(pp_handshake_is_asym(hs)))
		return pp_handshake_enter_fast_(hs);
	return !(__atomic_exchange_n(&hs->stop, PP_HANDSHAKE_HELD_,
				     __ATOMIC_ACQUIRE) & PP_HANDSHAKE_HELD_);
}

/* The owner found @hs held: wait (spin briefly, then yield) until it is
 * free, and enter. */
void pp_handshake_enter_slow(struct pp_handshake_ *hs)
	__attribute__((cold, noinline));

/* pp_handshake_enter - as pp_handshake_try_enter(), but waits while a
 * holder holds @hs. */
static inline void pp_handshake_enter(struct pp_handshake_ *hs)
{
	if (PP_UNLIKELY(!pp_handshake_try_enter(hs)))
		pp_handshake_enter_slow(hs);
}

/*
 * pp_handshake_exit - the owner leaves the call it entered. Release
 * either way: a holder that then takes @hs sees what the call wrote.
 * Asymmetric: busy drops (a holder may have raised stop meanwhile, which
 * stays). Lock word: HELD drops.
 *
 * The way from busy, not stop: inside a call busy is 1 on the
 * asymmetric way (the entry's own store, which only the owner writes)
 * and 0 on the lock word (never written). A load of stop just after the
 * entry's exchange of it cost the lock word about ten cycles a call, a
 * third of pp-bench's single-page rows with PAGEPOOL_NO_MEMBARRIER=1.
 */
static inline void pp_handshake_exit(struct pp_handshake_ *hs)
{
	if (PP_LIKELY(__atomic_load_n(&hs->busy, __ATOMIC_RELAXED)))
		pp_handshake_exit_fast_(hs);
	else
		__atomic_store_n(&hs->stop, 0, __ATOMIC_RELEASE);
}

/*
 * pp_handshake_hold_begin - a holder's first step: take HELD from other
 * holders (waiting for one that has it, spinning briefly then yielding;
 * the lock word: for the owner too). Returns true on the asymmetric way:
 * the caller then runs pp_os_membarrier() once, for any number of
 * handshakes, before pp_handshake_hold_wait() on each. Not from @hs's
 * owner thread while it is inside a call.
 */
bool pp_handshake_hold_begin(struct pp_handshake_ *hs);

/* pp_handshake_hold_wait - after the membarrier: wait for the owner to
 * leave the call it is in (asymmetric); from here until the release the
 * owner is out and stays out. Nothing to wait for on the lock word. */
void pp_handshake_hold_wait(struct pp_handshake_ *hs);

/* pp_handshake_hold - hold one handshake: begin, the membarrier, wait. */
void pp_handshake_hold(struct pp_handshake_ *hs);

/* pp_handshake_release - drop a hold: the owner (or the next holder)
 * enters again and sees what the holder wrote. */
void pp_handshake_release(struct pp_handshake_ *hs);

#endif /* PP_INTERNAL_OS_HANDSHAKE_H */
