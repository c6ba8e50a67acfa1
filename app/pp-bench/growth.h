/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * growth.h - `pp-bench growth`: memory that follows the traffic. One
 * workload, a traffic thread whose offered rate steps up and down over a
 * minute, run three times, each in a process of its own (growth.c forks
 * them one after the other):
 *
 *   grow   pagepool, a growable arena (small minimum, max_size for the
 *          peak) under the allocator's pp-grow thread, a page_pool on it;
 *   fixed  pagepool, a fixed arena of that max_size (growth off): the
 *          per-burst cost the growth run is held against;
 *   dpdk   an rte_mempool of 4 KiB elements sized for the peak, with a
 *          per-lcore cache: what an application without growth holds.
 *
 * A child writes what it measured into a struct growth_result that the
 * parent mapped shared before fork(), and its per-burst costs into a
 * second shared mapping; the parent compares them (growth.c).
 *
 * This header is seen by growth_dpdk.c, built with DPDK's flags, and by the
 * rest of pp-bench without them: it includes nothing of either library.
 */
#ifndef PP_BENCH_GROWTH_H
#define PP_BENCH_GROWTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GROWTH_BURST 32
#define GROWTH_MAX_PHASES 32
#define GROWTH_MAX_SAMPLES 8192
#define GROWTH_MAX_EVENTS 8192

enum growth_side { GROWTH_GROW, GROWTH_FIXED, GROWTH_DPDK, GROWTH_NR_SIDES };

struct growth_phase {
	double pct;   /* of the peak rate; 0: idle */
	double secs;
};

struct growth_cfg {
	struct growth_phase phases[GROWTH_MAX_PHASES];
	unsigned int nr_phases;
	double peak_rate;           /* buffers per second at 100 % */
	double delay_ms;            /* time a buffer spends in the delay line */
	double tail_s;              /* idle memory is read this long after the
				     * traffic stops */
	unsigned int sample_ms;
	unsigned int headroom_pct;  /* sizing for the peak: peak in flight
				     * plus this much */
	size_t min_bytes;           /* growable arena's minimum */
	size_t step_bytes;          /* its grow step; 0: the default */
	unsigned long grow_wmark, shrink_wmark; /* pages; 0: defaults */
	unsigned int shrink_delay_ms;           /* 0: default */
	unsigned int dpdk_cache;    /* rte_mempool per-lcore cache */
	unsigned int rx_ring;       /* buffers a stalled thread catches up on */
	int traffic_cpu, ctl_cpu;
	bool touch;                 /* stamp each buffer, check it at free */
	double tsc_hz;
	/* Derived by growth.c from the above. */
	unsigned long peak_inflight;   /* peak_rate * delay */
	unsigned long sized_buffers;   /* what "sized for the peak" holds */
	size_t sized_bytes;            /* the fixed arena and max_size */
	double stop_s;                 /* end of the last phase with traffic */
	double run_s;                  /* the timeline: stop_s + tail, at least
					* the schedule */
	unsigned long max_bursts;      /* room for the burst records */
	unsigned long sched_bursts;    /* the bursts the schedule offers */
};

/* One sample of the timeline, every cfg.sample_ms. */
struct growth_sample {
	double t_s;
	int64_t held_sys;       /* bytes of hugepages taken since the baseline,
				 * all sizes, system-wide (sysfs) */
	int64_t held_proc;      /* bytes of hugetlb mapped by this process
				 * (smaps_rollup): immune to neighbours */
	uint64_t committed;     /* pagepool: pp_zone_growth.committed_bytes */
	uint64_t free_pages;    /* pagepool: the zone's free pages */
	uint64_t isolated_pages; /* pagepool: free, in steps being given back */
	uint64_t inflight;      /* buffers in the delay line */
	uint64_t lost;          /* frames lost so far */
	/* The traffic thread so far (/proc/self/task/TID): time it was
	 * runnable but another task ran (schedstat), and how often it slept
	 * (a lock it waited for) or was preempted. */
	uint64_t wait_ns;
	uint64_t nvcsw, nivcsw;
};

/* grow: a step committed; shrink: one given back; fail: a growth failed;
 * cancel: an isolating step taken back because memory was wanted. */
enum growth_event_kind { GROWTH_EV_GROW, GROWTH_EV_SHRINK, GROWTH_EV_FAIL,
			 GROWTH_EV_CANCEL };

struct growth_event {
	double t_s;
	unsigned int kind;      /* enum growth_event_kind */
};

/* One burst: when (us since the traffic started) and its cost. */
struct growth_burst {
	uint32_t t_us;
	uint32_t cycles;
};

/* Everything a child reports; filled by the child, read by the parent. */
struct growth_result {
	int ran;                /* the child got to the end of its timeline */
	char why[320];          /* when it did not: the reason */
	char setup[320];        /* the configuration it ran, in words */
	uint64_t baseline_sys;  /* hugepage bytes in use before set-up */
	uint64_t bursts, lost, damaged, early_frees;
	uint64_t missed;        /* frames past the RX ring while stalled */
	uint64_t bursts_run;    /* bursts run, records or not (bursts: recorded) */
	double late_max_ms;     /* the most the traffic fell behind schedule */
	uint64_t wait_ns, nvcsw, nivcsw; /* the traffic thread's, in all */
	unsigned int nr_samples;
	struct growth_sample samples[GROWTH_MAX_SAMPLES];
	unsigned int nr_events;
	struct growth_event events[GROWTH_MAX_EVENTS];
	/* pagepool */
	uint64_t grows, shrinks, grow_failures, drains_cancelled;
	int last_error;
	uint64_t min_bytes, max_bytes, step_bytes;
	/* End of the timeline (idle), and why memory stayed: the pool's
	 * cache and ring, the thread caches, the pages being given back. */
	uint64_t end_committed, end_free_pages, end_isolated_pages;
	uint64_t end_pool_cache, end_pool_ring, end_tcache;
	int64_t end_held_proc;
	/* After the pool was destroyed and the thread's cache drained, once
	 * the grow thread had time to give back what it could. */
	uint64_t drained_committed;
	int64_t drained_held_proc;
	double drained_wait_s;
	/* dpdk */
	uint64_t pool_bytes;    /* the mempool's memory chunks */
	unsigned int elt_bytes; /* header + element + trailer */
	unsigned int pool_n, pool_cache;
};

/*
 * What a side's traffic thread shares with its sampler: the timeline's
 * start (TSC; 0 until it starts), the live figures, and the flag that
 * ends sampling.
 */
struct growth_live {
	uint64_t start_tsc;
	int tid;                /* the traffic thread's, set before start */
	uint64_t inflight;
	uint64_t lost;
	int stop;
};

/*
 * growth_sample.c: the sampler thread, on cfg.ctl_cpu. Every
 * cfg.sample_ms after live->start_tsc it appends a sample; every
 * millisecond it calls @poll (when not NULL) to read the zone's growth
 * counters, which appends events and fills committed/free_pages.
 */
struct growth_zone_read {
	uint64_t committed, free_pages, isolated_pages;
	uint64_t grows, shrinks, grow_failures, drains_cancelled;
	int last_error;
};
typedef int (*growth_poll_fn)(void *ctx, struct growth_zone_read *out);

struct growth_sampler;
struct growth_sampler *growth_sampler_start(const struct growth_cfg *cfg,
					    struct growth_result *res,
					    struct growth_live *live,
					    growth_poll_fn poll, void *ctx);
/* Stops sampling and joins the thread. */
void growth_sampler_stop(struct growth_sampler *s);

/* Hugepage bytes in use system-wide, all sizes (sysfs); -1 if unreadable. */
int64_t growth_hugepages_used(void);
/* Hugetlb bytes mapped by this process (smaps_rollup); -1 if unreadable. */
int64_t growth_hugetlb_mapped(void);
/* Pin the calling thread to @cpu; 0 or -errno. */
int growth_pin(int cpu);
uint64_t growth_tsc(void);
/* The calling thread's id, for the sampler (live->tid). */
int growth_gettid(void);

/* `pp-bench growth`: @argv[0] is "growth". Returns the exit status. */
int bench_growth_main(int argc, char **argv);

/* The sides, each run in a child process. Return 0 when the timeline ran;
 * otherwise res->why says why. */
int growth_run_pagepool(const struct growth_cfg *cfg, bool grow,
			struct growth_result *res, struct growth_burst *rec);
int growth_run_dpdk(const struct growth_cfg *cfg, struct growth_result *res,
		    struct growth_burst *rec);

/*
 * The schedule the traffic thread walks: the rate (buffers per second) at
 * @t seconds into the timeline, and when that phase ends.
 */
double growth_rate_at(const struct growth_cfg *cfg, double t, double *end);

#endif /* PP_BENCH_GROWTH_H */
