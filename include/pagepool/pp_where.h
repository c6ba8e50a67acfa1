/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_where.h - where a pool's page is: its holder and since when.
 *
 * Every page a page_pool holds carries one 64-bit word, page->pp_where:
 * who has it now (the low 32 bits, a holder code) and a coarse time of
 * when it went there (the high 32 bits). It is written with one store by
 * whoever moves the page somewhere a page can stay (doc/telemetry.md,
 * "Who holds my buffers"):
 *
 *   pool      into the pool's alloc cache or recycle ring (no time: a
 *             page there is not in flight), as a compare and no store
 *             when the page says so already
 *   rx_ring   posted in a port's RX ring (a driver's refill)
 *   app_rx    handed to the application by an RX burst of a port/queue
 *   tx_ring   in a port's TX ring, until the driver completes it
 *   stack     passed to the stack consumer by a poll (a fragment, which
 *             stays in its pool; whole pages leave the pool)
 *
 * Taking a page out of the pool writes nothing: a page a poll receives
 * and sends or drops in the same call never says anything but "pool".
 * The reports count the pages out of the pool that still say "pool" as
 * "app" (PP_HOLDER_APP: taken with no holder recorded, by the
 * application's own pp_pool_alloc_*(), or inside a burst at that moment):
 * those that say "pool" minus the cache's and ring's count. veth's ring,
 * which another core consumes, is read on request instead of stamped
 * (pp_net_driver_ops.ring_pages). A page released from its pool has
 * pp_where 0: it is nobody's in flight. The word is read, without
 * stopping anyone, by telemetry's /pagepool/inflight and by the leak
 * report of pp_pool_destroy().
 *
 * The time is the calling thread's coarse clock, refreshed at burst
 * granularity rather than read per page: by pp_port_poll() and
 * pp_port_rx_burst() on every call that found the queue not saturated
 * and on every 8th of those that did, and by pp_port_tx_burst() every
 * 8th call (never per page: a single-page refill would pay a TSC read
 * for each). Its unit is 2^20 TSC cycles (0.4 ms at 2.6 GHz), and it
 * wraps after 2^32 units (20 days at 2.6 GHz). A thread that never ran
 * one of those leaves time 0: "age unknown". A page split into fragments
 * shows its latest fragment's move.
 *
 * Built with -Dholders=false the stores are compiled out (PP_HOLDERS 0)
 * and every page in flight reads "app", age unknown.
 */
#ifndef PAGEPOOL_PP_WHERE_H
#define PAGEPOOL_PP_WHERE_H

#include <stdbool.h>
#include <stdint.h>

#include <pagepool/pp_common.h>
#include <pagepool/pp_config.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pp_holder_kind {
	PP_HOLDER_NONE = 0,     /* not a pool's page, or never stamped */
	PP_HOLDER_POOL = 1,
	PP_HOLDER_APP = 2,
	PP_HOLDER_RX_RING = 3,
	PP_HOLDER_APP_RX = 4,
	PP_HOLDER_TX_RING = 5,
	PP_HOLDER_STACK = 6,
	PP_HOLDER_NR_KINDS
};

/* A holder code: the kind, the port's pp_port_id() and the queue. */
#define PP_HOLDER(kind, port_id, queue)                                  \
	((uint32_t)(kind) << 28 | ((uint32_t)(port_id) & 0xfffu) << 16 | \
	 ((uint32_t)(queue) & 0xffffu))
#define PP_HOLDER_KIND(code) ((enum pp_holder_kind)((uint32_t)(code) >> 28))
#define PP_HOLDER_PORT(code) (((uint32_t)(code) >> 16) & 0xfffu)
#define PP_HOLDER_QUEUE(code) ((uint32_t)(code) & 0xffffu)

/* The parts of a pp_where word. */
#define PP_WHERE_HOLDER(w) ((uint32_t)(w))
#define PP_WHERE_TIME(w) ((uint32_t)((uint64_t)(w) >> 32))

/* The coarse clock's unit in TSC cycles, as a shift. */
#define PP_WHERE_TSC_SHIFT 20

/* The calling thread's coarse clock; 0 until its first tick. */
PP_API extern __thread uint32_t pp_where_clock_
	__attribute__((tls_model("initial-exec")));
PP_API extern __thread uint32_t pp_where_ticks_
	__attribute__((tls_model("initial-exec")));

/* The coarse time now where there is no TSC (CLOCK_MONOTONIC). */
PP_API uint32_t pp_where_now_slow_(void);

/* The coarse time now, read from the clock (not the thread's copy). */
static inline uint32_t pp_where_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return (uint32_t)(__builtin_ia32_rdtsc() >> PP_WHERE_TSC_SHIFT);
#else
	return pp_where_now_slow_();
#endif
}

/* Refresh the calling thread's clock. */
static inline void pp_where_clock_tick(void)
{
	uint32_t now = pp_where_now();

	/* 0 means "never ticked"; one unit later is as good. */
	pp_where_clock_ = now ? now : 1;
}

/*
 * Refresh it at burst granularity: always when the queue was not
 * saturated (@busy false: there was time), else every 8th call, so that
 * a forwarder at full rate pays for one clock read per 8 bursts.
 */
static inline void pp_where_clock_burst(bool busy)
{
	/* The thread's first call (ticks 0) reads it too. */
	if (!busy || !(pp_where_ticks_++ & 7))
		pp_where_clock_tick();
}

/* The stamp for a page going to @holder now. */
static inline uint64_t pp_where_stamp(uint32_t holder)
{
	return (uint64_t)pp_where_clock_ << 32 | holder;
}

/*
 * pp_where_hz - the coarse clock's units per second (the TSC's rate over
 * 2^20, measured once against CLOCK_MONOTONIC: the first call takes
 * about 20 ms). Any thread.
 */
PP_API double pp_where_hz(void);

/* The holder kind's name in reports: "pool", "app", "rx_ring", ... */
PP_API const char *pp_holder_kind_name(enum pp_holder_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_WHERE_H */
