/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * baseline.c - what the machine costs before any allocator runs, measured
 * the way the kernel's page_bench and time_bench do: the loop itself, one
 * TSC read pair, an atomic add, an uncontended lock/unlock pair, and a
 * pair of calls into the shared library. Every figure later in the table
 * is read against these.
 */
#include <pthread.h>

#include "bench.h"
#include "timing.h"

static int empty_loop(void *arg, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	uint64_t t0;
	unsigned long i;

	(void)arg, (void)why, (void)why_len;
	t0 = tsc_begin();
	for (i = 0; i < iters; i++)
		bench_barrier();
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

/* The cost of the tsc_begin()/tsc_end() pair the SUNRPC case wraps around
 * each refill call. */
static int tsc_pair(void *arg, unsigned long iters, struct bench_sample *s,
		    char *why, size_t why_len)
{
	uint64_t t0, sum = 0;
	unsigned long i;

	(void)arg, (void)why, (void)why_len;
	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		uint64_t a = tsc_begin();

		sum += tsc_end() - a;
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	bench_keep(sum);
	return 0;
}

/* A LOCK XADD on a line this core owns: the floor of any shared counter. */
static int atomic_add(void *arg, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	uint64_t *counter = arg, t0;
	unsigned long i;

	(void)why, (void)why_len;
	t0 = tsc_begin();
	for (i = 0; i < iters; i++)
		__atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

static int mutex_pair(void *arg, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	pthread_mutex_t *m = arg;
	uint64_t t0;
	unsigned long i;

	(void)why, (void)why_len;
	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		pthread_mutex_lock(m);
		bench_barrier();
		pthread_mutex_unlock(m);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

static int spin_pair(void *arg, unsigned long iters, struct bench_sample *s,
		     char *why, size_t why_len)
{
	pthread_spinlock_t *l = arg;
	uint64_t t0;
	unsigned long i;

	(void)why, (void)why_len;
	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		pthread_spin_lock(l);
		bench_barrier();
		pthread_spin_unlock(l);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

/*
 * Two calls into the shared library, of a getter that only loads a
 * field: what any non-inline call pair costs a caller (the PLT jump
 * included), beside the inline DPDK calls the allocator rows are read
 * against.
 */
static int library_calls(void *arg, unsigned long iters,
			 struct bench_sample *s, char *why, size_t why_len)
{
	const struct pp_arena *arena = arg;
	uint64_t t0;
	unsigned long i;

	(void)why, (void)why_len;
	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		bench_keep(pp_arena_base(arena));
		bench_keep(pp_arena_base(arena));
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

int bench_baselines(const struct bench_cfg *cfg, struct bench_results *out)
{
	pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
	pthread_spinlock_t spin;
	/* Its own cache line, so nothing else shares it. */
	static uint64_t counter __attribute__((aligned(PP_CACHE_LINE)));

	if (pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE))
		return -1;
	bench_run(cfg, out, BENCH_BASELINE, "empty loop", 0, "op",
		  empty_loop, NULL);
	bench_run(cfg, out, BENCH_BASELINE, "TSC read pair", 0, "op",
		  tsc_pair, NULL);
	bench_run(cfg, out, BENCH_BASELINE, "atomic fetch_add", 0, "op",
		  atomic_add, &counter);
	bench_run(cfg, out, BENCH_BASELINE, "pthread mutex lock+unlock", 0,
		  "op", mutex_pair, &mutex);
	bench_run(cfg, out, BENCH_BASELINE, "pthread spin lock+unlock", 0,
		  "op", spin_pair, (void *)&spin);
	bench_run(cfg, out, BENCH_BASELINE, "2 library calls (a getter)", 0,
		  "op", library_calls, cfg->arena);
	pthread_spin_destroy(&spin);
	return 0;
}
