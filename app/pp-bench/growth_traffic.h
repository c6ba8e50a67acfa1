/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * growth_traffic.h - the traffic thread of `pp-bench growth`, the same
 * loop for every side. Written once as an always-inline function that
 * each side instantiates with its own allocate/free calls (pagepool's
 * page_pool, DPDK's rte_mempool), so that the compiler inlines them and
 * the loop around them is identical code on both sides.
 *
 * Each burst slot of the schedule (GROWTH_BURST buffers at the phase's
 * rate) the thread, timed with the TSC: frees every buffer of the delay
 * line whose time is up (a TX completion), allocates GROWTH_BURST buffers
 * (an RX refill) and puts them at the line's tail, due delay_ms later.
 * A buffer the allocator cannot give is a lost frame. In idle phases it
 * frees the due buffers untimed (nothing arrives, the line drains).
 * When it falls behind (the CPU was taken away), it runs the slots it
 * missed back to back, as many as an RX ring of cfg.rx_ring descriptors
 * would have held; the frames of slots older than that are counted as
 * missed (a NIC's imissed: the CPU, not the allocator, failed them), so
 * that a stalled thread never puts more in flight than the traffic does. Every 4096 polls without a burst it calls @idle, as
 * pp_port_poll() calls pp_pool_trim() after empty polls of an RX queue
 * (so that an idle pool gives back pages of memory being given back).
 *
 * With cfg.touch each buffer gets a stamp at allocation that is checked
 * when it is freed (a damaged frame), which also touches the memory as
 * a received frame would.
 */
#ifndef PP_BENCH_GROWTH_TRAFFIC_H
#define PP_BENCH_GROWTH_TRAFFIC_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "growth.h"
#include "timing.h"

struct growth_slot {
	uint64_t due;     /* TSC */
	uint64_t seq;
	unsigned int n;
	void *objs[GROWTH_BURST];
};

/* The delay line: a FIFO of bursts, a power of two of them. */
struct growth_line {
	struct growth_slot *slots;
	uint64_t mask, head, tail;
};

static inline int growth_line_init(struct growth_line *l,
				   const struct growth_cfg *cfg)
{
	/* Twice the bursts in flight at the peak, so that catching up
	 * after a stall does not overflow it. */
	uint64_t want = 2 * (cfg->sized_buffers / GROWTH_BURST) + 64, n = 64;

	while (n < want)
		n <<= 1;
	l->slots = calloc(n, sizeof(*l->slots));
	l->mask = n - 1;
	l->head = l->tail = 0;
	if (!l->slots)
		return -1;
	/* Faulted in now, not by the data path: a page fault there can
	 * wait for the mmap lock while the grow thread commits a step. */
	memset(l->slots, 0, n * sizeof(*l->slots));
	return 0;
}

/* The same for the burst records (shared with the parent, so faulted
 * again in this process). */
static inline void growth_prefault(struct growth_burst *rec,
				   const struct growth_cfg *cfg)
{
	volatile char *p = (volatile char *)rec;
	size_t len = cfg->max_bursts * sizeof(*rec), off;

	for (off = 0; off < len; off += 4096)
		p[off] = 0;
}

static inline uint64_t growth_stamp(uint64_t seq, unsigned int i)
{
	return (seq << 8) | i;
}

#define GROWTH_INLINE static inline __attribute__((always_inline))
#define PP_BENCH_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Free the head burst of the line, checking its stamps. */
GROWTH_INLINE void
growth_line_pop(struct growth_line *l, const struct growth_cfg *cfg,
		struct growth_result *res, void *ctx,
		void (*release)(void *, void **, unsigned int),
		void *(*data)(void *))
{
	struct growth_slot *s = &l->slots[l->head & l->mask];
	unsigned int i;

	if (cfg->touch)
		for (i = 0; i < s->n; i++)
			if (*(volatile uint64_t *)data(s->objs[i]) !=
			    growth_stamp(s->seq, i))
				res->damaged++;
	release(ctx, s->objs, s->n);
	l->head++;
}

/*
 * Run the timeline: cfg->run_s seconds from now. @idle: see above. Writes the burst
 * records into @rec (at most cfg->max_bursts) and the counts into @res;
 * publishes the start and the live figures in @live for the sampler.
 * The line is empty when it returns.
 */
GROWTH_INLINE void
growth_traffic_run(const struct growth_cfg *cfg, struct growth_result *res,
		   struct growth_live *live, struct growth_burst *rec,
		   struct growth_line *l, void *ctx,
		   unsigned int (*alloc)(void *, void **, unsigned int),
		   void (*release)(void *, void **, unsigned int),
		   void *(*data)(void *), void (*idle)(void *))
{
	const double hz = cfg->tsc_hz;
	const uint64_t delay = (uint64_t)(cfg->delay_ms * hz / 1000.0);
	uint64_t start, end, phase_end, inflight = 0, lost = 0, nb = 0, seq = 0;
	uint64_t late_max = 0, empty = 0, missed = 0;
	const double backlog = (double)(cfg->rx_ring / GROWTH_BURST);
	double rate = 0, interval = 0, next;

	growth_prefault(rec, cfg);
	start = tsc_begin();
	end = start + (uint64_t)(cfg->run_s * hz);
	phase_end = start;
	next = (double)start;
	__atomic_store_n(&live->tid, growth_gettid(), __ATOMIC_RELAXED);
	__atomic_store_n(&live->start_tsc, start, __ATOMIC_RELEASE);
	for (;;) {
		uint64_t now = __rdtsc();

		if (now >= phase_end) {
			double pend, t = (double)(now - start) / hz;
			double was = rate;

			if (now >= end)
				break;
			rate = growth_rate_at(cfg, t, &pend);
			phase_end = start + (uint64_t)(pend * hz);
			/* A read of the clock within rounding of a phase's
			 * end: look again at the next one, never skip the
			 * rest of the schedule. */
			if (phase_end <= now)
				phase_end = now + 1;
			if (phase_end > end)
				phase_end = end;
			if (rate > 0)
				interval = GROWTH_BURST * hz / rate;
			/* From idle, the first slot is now. */
			if (was == 0 && next < (double)now)
				next = (double)now;
		}
		if (rate > 0 && (double)now >= next) {
			struct growth_slot *s;
			unsigned int got, i;
			uint64_t t0, t1;

			if ((double)now - next > (double)late_max)
				late_max = (uint64_t)((double)now - next);
			/* More than a ring behind: what the ring could
			 * not hold was dropped by the NIC (missed), not
			 * by the allocator. */
			if ((double)now - next > backlog * interval) {
				double skip = floor(((double)now - next) /
						    interval) - backlog;

				missed += (uint64_t)skip * GROWTH_BURST;
				next += skip * interval;
			}
			t0 = tsc_begin();
			while (l->head != l->tail &&
			       l->slots[l->head & l->mask].due <= t0) {
				inflight -= l->slots[l->head & l->mask].n;
				growth_line_pop(l, cfg, res, ctx, release, data);
			}
			if (l->tail - l->head > l->mask) {
				/* Full: the oldest leaves early. */
				inflight -= l->slots[l->head & l->mask].n;
				growth_line_pop(l, cfg, res, ctx, release, data);
				res->early_frees++;
			}
			s = &l->slots[l->tail & l->mask];
			got = alloc(ctx, s->objs, GROWTH_BURST);
			lost += GROWTH_BURST - got;
			if (got) {
				s->n = got;
				s->seq = seq++;
				s->due = t0 + delay;
				if (cfg->touch)
					for (i = 0; i < got; i++)
						*(volatile uint64_t *)data(
							s->objs[i]) =
							growth_stamp(s->seq, i);
				l->tail++;
				inflight += got;
			}
			t1 = tsc_end();
			if (nb < cfg->max_bursts) {
				rec[nb].t_us = (uint32_t)((double)(t0 - start) *
							  1e6 / hz);
				rec[nb].cycles = t1 - t0 > UINT32_MAX ?
							 UINT32_MAX :
							 (uint32_t)(t1 - t0);
			}
			nb++;
			next += interval;
			__atomic_store_n(&live->inflight, inflight,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&live->lost, lost, __ATOMIC_RELAXED);
			continue;
		}
		/* An empty poll: nothing arrived. */
		if (rate == 0 && l->head != l->tail &&
		    l->slots[l->head & l->mask].due <= now) {
			inflight -= l->slots[l->head & l->mask].n;
			growth_line_pop(l, cfg, res, ctx, release, data);
			__atomic_store_n(&live->inflight, inflight,
					 __ATOMIC_RELAXED);
		}
		if (PP_BENCH_UNLIKELY(!(++empty & 4095)))
			idle(ctx);
	}
	while (l->head != l->tail) {
		inflight -= l->slots[l->head & l->mask].n;
		growth_line_pop(l, cfg, res, ctx, release, data);
	}
	__atomic_store_n(&live->inflight, inflight, __ATOMIC_RELAXED);
	/* The timeline ends here: what the side does next (destroying
	 * its pool) is not part of it. */
	__atomic_store_n(&live->stop, 1, __ATOMIC_RELEASE);
	res->bursts = nb < cfg->max_bursts ? nb : cfg->max_bursts;
	res->bursts_run = nb;
	res->lost = lost;
	res->late_max_ms = (double)late_max * 1000.0 / hz;
	res->missed = missed;
}

#endif /* PP_BENCH_GROWTH_TRAFFIC_H */
