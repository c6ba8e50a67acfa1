/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scale.c - `pp-bench scale`: how the allocator and page_pool scale with
 * the number of threads, beside DPDK's rte_mempool doing the same work on
 * the same threads. For T = 1, 2, 4, ... up to the CPUs this process may
 * use (and that count itself when it is not a power of two), T threads,
 * each pinned to a CPU of its own, start together and run for a fixed time
 * in three workloads:
 *
 *   bulk  (a) each thread allocates 64 pages in one bulk array call and
 *             frees them in one bulk call, on its own thread cache
 *             (DPDK: get_bulk + put_bulk of 64 on its lcore cache);
 *   pair  (b) producer/consumer pairs: the producer allocates 64 and passes
 *             them over a single-producer single-consumer queue, the
 *             consumer frees them, so every free is remote to the cache
 *             the page came from (DPDK: get on one lcore, put on the
 *             other, an SPSC rte_ring between them);
 *   pool  (c) one page_pool per pair: the owner allocates from it and
 *             hands the pages over, the other thread returns them with
 *             pp_pool_put_pages_bulk() into the pool's recycle ring, and
 *             the owner refills from that ring (DPDK: one rte_mempool per
 *             pair, get on the owner's lcore, put on the other's).
 *
 * T = 1 runs a pair's two roles in one thread (allocate, enqueue, dequeue,
 * free), so the pair workloads have a one-thread baseline to scale
 * against; its frees are local. An odd T above 1 has no pairs: those
 * points are skipped, with the reason.
 *
 * Each run: the threads meet at a barrier, run a warm-up, then count pages
 * for the run's duration (producers stop at the deadline, consumers drain
 * what is left). A run's throughput is the pages completed (freed or
 * returned) by all threads over the longest thread's time; a point is the
 * median of the runs. Reported: ns per page per thread (T / throughput)
 * and the scaling factor throughput(T) / throughput(1), T when the
 * threads never meet.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pagepool/pagepool.h>

#include "bench.h"
#include "pp_cli.h"
#include "pp_ring.h"
#include "scale.h"
#include "timing.h"

/* Names the subcommand in its messages. */
#define SCALE_TOOL "pp-bench scale"
#define SCALE_DEFAULT_RUNS 5
#define SCALE_QUICK_RUNS 3
#define SCALE_DEFAULT_MS 200.0
#define SCALE_QUICK_MS 20.0
#define SCALE_MAX_STEPS 32
#define SCALE_MAX_THREADS 1024
/* Bursts between two reads of the clock in the timed loops. */
#define SCALE_CHECK_EVERY 8

enum workload { W_BULK, W_PAIR, W_POOL, NR_WORKLOADS };
enum impl { I_PP, I_DPDK, NR_IMPLS };
enum role { R_SOLO, R_BOTH, R_PROD, R_CONS };

static const char *const wl_names[NR_WORKLOADS] = {
	[W_BULK] = "bulk",
	[W_PAIR] = "pair",
	[W_POOL] = "pool",
};

static const char *const wl_desc[NR_WORKLOADS] = {
	[W_BULK] = "each thread: alloc bulk 64 + free bulk 64 on its own cache",
	[W_PAIR] = "pairs: producer allocs 64, SPSC queue, consumer frees (remote)",
	[W_POOL] = "pairs, one pool each: owner allocs 64, peer returns to the recycle ring",
};

static const char *const impl_names[NR_IMPLS] = {
	[I_PP] = "pagepool",
	[I_DPDK] = "dpdk",
};

struct scale_cfg {
	unsigned int runs;
	double run_ms;
	double warm_ms;
	unsigned long arena_mb;     /* 0: by the largest thread count */
	bool quick;
	bool dpdk;
	const char *json_path;
	unsigned int steps[SCALE_MAX_STEPS];
	unsigned int nr_steps;
	int cpus[SCALE_MAX_THREADS];  /* allowed CPUs, ascending */
	unsigned int nr_cpus;
	double tsc_ghz;
};

struct scale_job;

struct scale_thread {
	struct scale_job *job;
	unsigned int idx;
	int cpu;
	enum role role;
	struct scale_thread *peer;
	void *queue;
	void *pool;              /* (c): the pair's pool, made by its owner */
	int prod_done;           /* atomic: the producer sent its last */
	int cons_done;           /* atomic: the consumer returned its last */
	uint64_t pages;
	uint64_t cycles;
	bool failed;
	char why[160];
	pthread_t tid;
} __attribute__((aligned(64)));

struct scale_job {
	const struct scale_ops *ops;
	enum workload w;
	unsigned int nthreads;
	uint64_t t_meas;         /* counting starts */
	uint64_t t_end;          /* producers and solo threads stop */
	bool abort;              /* a thread could not set up */
	pthread_barrier_t ready, go;
	struct scale_thread *th;
};

struct scale_point {
	bool skipped;
	bool failed;
	char why[160];
	unsigned int nruns;
	double tput[BENCH_MAX_RUNS];   /* pages per second */
	double med;
};

static struct scale_point points[NR_WORKLOADS][NR_IMPLS][SCALE_MAX_STEPS];

/* ---- the pagepool operations ---- */

static unsigned int pp_get(void *ctx, void **objs, unsigned int n)
{
	/* The array form fills NULL entries only. */
	memset(objs, 0, n * sizeof(*objs));
	return (unsigned int)pp_alloc_pages_bulk_array(ctx, (int)n,
						       (struct pp_page **)objs);
}

static void pp_put(void *ctx, void **objs, unsigned int n)
{
	pp_free_pages_bulk(ctx, (struct pp_page **)objs, n);
}

static void *pp_pair_pool_create(void *ctx, unsigned int pair, char *why,
				 size_t len)
{
	struct pp_pool_params params;
	struct pp_pool *pool;

	(void)pair;
	memset(&params, 0, sizeof(params));
	params.sz = sizeof(params);
	params.allocator = ctx;
	params.nid = PP_NUMA_NODE_ANY;
	params.dma_dir = PP_DMA_FROM_DEVICE;
	params.refill = PP_REFILL_ARRAY;
	params.name = "pp-bench-scale";
	pool = pp_pool_create(&params);
	if (!pool)
		snprintf(why, len, "pp_pool_create: %s", strerror(errno));
	return pool;
}

static int pp_pair_pool_destroy(void *ctx, void *pool)
{
	(void)ctx;
	return pp_pool_destroy(pool);
}

static unsigned int pp_pair_get(void *pool, void **objs, unsigned int n)
{
	return pp_pool_alloc_bulk(pool, (struct pp_page **)objs, n);
}

static void pp_pair_put(void *pool, void **objs, unsigned int n)
{
	pp_pool_put_pages_bulk(pool, (struct pp_page **)objs, n);
}

static void *pp_queue_create(void *ctx, unsigned int pair, char *why,
			     size_t len)
{
	struct pp_ring *r;

	(void)ctx;
	(void)pair;
	r = pp_ring_create(SCALE_QUEUE_SIZE,
			   PP_RING_F_SP_ENQ | PP_RING_F_SC_DEQ);
	if (!r)
		snprintf(why, len, "pp_ring_create: %s", strerror(errno));
	return r;
}

static void pp_queue_free(void *q)
{
	pp_ring_free(q);
}

static unsigned int pp_enqueue(void *q, void **objs, unsigned int n)
{
	return pp_ring_sp_enqueue_burst(q, objs, n);
}

static unsigned int pp_dequeue(void *q, void **objs, unsigned int n)
{
	return pp_ring_sc_dequeue_burst(q, objs, n);
}

static struct scale_ops pp_ops = {
	.name = "pagepool",
	.get = pp_get,
	.put = pp_put,
	.pair_pool_create = pp_pair_pool_create,
	.pair_pool_destroy = pp_pair_pool_destroy,
	.pair_get = pp_pair_get,
	.pair_put = pp_pair_put,
	.queue_create = pp_queue_create,
	.queue_free = pp_queue_free,
	.enqueue = pp_enqueue,
	.dequeue = pp_dequeue,
};

/* ---- the measuring threads ---- */

static void thread_fail(struct scale_thread *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void thread_fail(struct scale_thread *t, const char *fmt, ...)
{
	va_list ap;

	if (t->failed)
		return;
	t->failed = true;
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
}

/* (a): alloc + free on the thread's own cache until the deadline. */
static void run_solo(struct scale_thread *t)
{
	const struct scale_ops *o = t->job->ops;
	uint64_t t_meas = t->job->t_meas, t_end = t->job->t_end;
	uint64_t start = t_meas, now = 0, pages = 0;
	void *objs[SCALE_BULK];
	bool counting = false;

	for (unsigned long k = 0;; k++) {
		unsigned int n;

		if (k % SCALE_CHECK_EVERY == 0) {
			now = __rdtsc();
			if (!counting && now >= t_meas) {
				counting = true;
				start = now;
				pages = 0;
			}
			if (now >= t_end)
				break;
		}
		n = o->get(o->ctx, objs, SCALE_BULK);
		if (PP_UNLIKELY(n != SCALE_BULK)) {
			if (n)
				o->put(o->ctx, objs, n);
			thread_fail(t, "%s: got %u of %u", o->name, n,
				    SCALE_BULK);
			now = __rdtsc();
			break;
		}
		o->put(o->ctx, objs, n);
		pages += n;
	}
	t->pages = pages;
	t->cycles = now - start;
}

/* T = 1 of (b) and (c): both roles of a pair in one thread. */
static void run_both(struct scale_thread *t, bool pool)
{
	const struct scale_ops *o = t->job->ops;
	uint64_t t_meas = t->job->t_meas, t_end = t->job->t_end;
	uint64_t start = t_meas, now = 0, pages = 0;
	void *objs[SCALE_BULK], *got[SCALE_BULK];
	bool counting = false;

	for (unsigned long k = 0;; k++) {
		unsigned int n, m;

		if (k % SCALE_CHECK_EVERY == 0) {
			now = __rdtsc();
			if (!counting && now >= t_meas) {
				counting = true;
				start = now;
				pages = 0;
			}
			if (now >= t_end)
				break;
		}
		n = pool ? o->pair_get(t->pool, objs, SCALE_BULK)
			 : o->get(o->ctx, objs, SCALE_BULK);
		if (PP_UNLIKELY(!n)) {
			thread_fail(t, "%s: got no page", o->name);
			now = __rdtsc();
			break;
		}
		/* The queue is empty here: all n fit. */
		o->enqueue(t->queue, objs, n);
		m = o->dequeue(t->queue, got, SCALE_BULK);
		if (pool)
			o->pair_put(t->pool, got, m);
		else
			o->put(o->ctx, got, m);
		pages += m;
	}
	t->pages = pages;
	t->cycles = now - start;
}

static void run_producer(struct scale_thread *t, bool pool)
{
	const struct scale_ops *o = t->job->ops;
	uint64_t t_end = t->job->t_end;
	void *objs[SCALE_BULK];

	for (unsigned long k = 0;; k++) {
		unsigned int n, sent;

		if (k % SCALE_CHECK_EVERY == 0 && __rdtsc() >= t_end)
			break;
		n = pool ? o->pair_get(t->pool, objs, SCALE_BULK)
			 : o->get(o->ctx, objs, SCALE_BULK);
		/* None now: the pages are on their way back (or in the
		 * consumer's cache, for DPDK's shared pool): try again. */
		if (PP_UNLIKELY(!n)) {
			_mm_pause();
			continue;
		}
		for (sent = 0; sent < n;) {
			sent += o->enqueue(t->queue, objs + sent, n - sent);
			if (sent < n)
				_mm_pause();
		}
	}
	__atomic_store_n(&t->prod_done, 1, __ATOMIC_RELEASE);
}

static void run_consumer(struct scale_thread *t, bool pool)
{
	const struct scale_ops *o = t->job->ops;
	struct scale_thread *prod = t->peer;
	uint64_t t_meas = t->job->t_meas;
	uint64_t start = t_meas, pages = 0;
	void *got[SCALE_BULK];
	bool counting = false;

	for (unsigned long k = 0;; k++) {
		unsigned int m;

		if (!counting && k % SCALE_CHECK_EVERY == 0) {
			uint64_t now = __rdtsc();

			if (now >= t_meas) {
				counting = true;
				start = now;
				pages = 0;
			}
		}
		m = o->dequeue(t->queue, got, SCALE_BULK);
		if (!m) {
			if (!__atomic_load_n(&prod->prod_done,
					     __ATOMIC_ACQUIRE)) {
				_mm_pause();
				continue;
			}
			/* Done: what it sent before is in the queue now. */
			m = o->dequeue(t->queue, got, SCALE_BULK);
			if (!m)
				break;
		}
		if (pool)
			o->pair_put(prod->pool, got, m);
		else
			o->put(o->ctx, got, m);
		pages += m;
	}
	t->pages = pages;
	t->cycles = __rdtsc() - start;
}

static void *thread_main(void *arg)
{
	struct scale_thread *t = arg;
	struct scale_job *job = t->job;
	const struct scale_ops *o = job->ops;
	bool pool = job->w == W_POOL;
	bool started = false;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		thread_fail(t, "cannot pin to CPU %d", t->cpu);
	if (!t->failed && o->thread_start) {
		if (o->thread_start(o->ctx, t->why, sizeof(t->why)))
			t->failed = true;
		else
			started = true;
	}
	/* The owner makes its pair's pool, so it is the pool's owner. */
	if (!t->failed && pool && (t->role == R_PROD || t->role == R_BOTH)) {
		t->pool = o->pair_pool_create(o->ctx, t->idx / 2, t->why,
					      sizeof(t->why));
		if (!t->pool)
			t->failed = true;
	}
	pthread_barrier_wait(&job->ready);
	pthread_barrier_wait(&job->go);

	if (!job->abort) {
		switch (t->role) {
		case R_SOLO:
			run_solo(t);
			break;
		case R_BOTH:
			run_both(t, pool);
			break;
		case R_PROD:
			run_producer(t, pool);
			break;
		case R_CONS:
			run_consumer(t, pool);
			break;
		}
	}

	if (t->role == R_CONS) {
		/* Done with the peer's pool (DPDK: flush this lcore's cache
		 * of it) before the owner may destroy it. */
		if (started && o->thread_stop)
			o->thread_stop(o->ctx, pool ? t->peer->pool : NULL);
		started = false;
		__atomic_store_n(&t->cons_done, 1, __ATOMIC_RELEASE);
	}
	if (t->pool) {
		int ret;

		if (t->role == R_PROD)
			while (!__atomic_load_n(&t->peer->cons_done,
						__ATOMIC_ACQUIRE))
				sched_yield();
		ret = o->pair_pool_destroy(o->ctx, t->pool);
		if (ret)
			thread_fail(t, "%s: destroying the pair's pool: %s (pages still out)",
				    o->name, strerror(-ret));
		t->pool = NULL;
	}
	if (started && o->thread_stop)
		o->thread_stop(o->ctx, NULL);
	return NULL;
}

/*
 * One run of @w with @nthreads on the last @nthreads allowed CPUs. Returns
 * 0 with the throughput in pages per second, or -1 with the reason.
 */
static int run_job(const struct scale_cfg *cfg, const struct scale_ops *o,
		   enum workload w, unsigned int nthreads, double *tput,
		   char *why, size_t len)
{
	struct scale_job job;
	struct scale_thread *th;
	unsigned int i, made = 0;
	uint64_t pages = 0, cycles = 0;
	int ret = 0;

	th = aligned_alloc(64, nthreads * sizeof(*th));
	if (!th) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	memset(th, 0, nthreads * sizeof(*th));
	memset(&job, 0, sizeof(job));
	job.ops = o;
	job.w = w;
	job.nthreads = nthreads;
	job.th = th;
	for (i = 0; i < nthreads; i++) {
		struct scale_thread *t = &th[i];

		t->job = &job;
		t->idx = i;
		t->cpu = cfg->cpus[cfg->nr_cpus - nthreads + i];
		if (w == W_BULK)
			t->role = R_SOLO;
		else if (nthreads == 1)
			t->role = R_BOTH;
		else
			t->role = i % 2 ? R_CONS : R_PROD;
	}
	/* Queues first, from this thread: the pair's two ends share one. */
	for (i = 0; w != W_BULK && i < nthreads; i++) {
		struct scale_thread *t = &th[i];

		if (t->role == R_CONS) {
			t->peer = &th[i - 1];
			th[i - 1].peer = t;
			t->queue = th[i - 1].queue;
			continue;
		}
		t->queue = o->queue_create(o->ctx, i / 2, why, len);
		if (!t->queue) {
			ret = -1;
			goto out_queues;
		}
	}

	pthread_barrier_init(&job.ready, NULL, nthreads + 1);
	pthread_barrier_init(&job.go, NULL, nthreads + 1);
	for (made = 0; made < nthreads; made++) {
		if (pthread_create(&th[made].tid, NULL, thread_main,
				   &th[made])) {
			/* The barriers wait for every thread: give up. */
			fprintf(stderr, "pp-bench scale: cannot start thread %u\n",
				made);
			exit(1);
		}
	}
	pthread_barrier_wait(&job.ready);
	for (i = 0; i < made; i++)
		if (th[i].failed)
			job.abort = true;
	{
		uint64_t now = __rdtsc();
		double cyc_ms = cfg->tsc_ghz * 1e6;

		job.t_meas = now + (uint64_t)(cfg->warm_ms * cyc_ms);
		job.t_end = job.t_meas + (uint64_t)(cfg->run_ms * cyc_ms);
	}
	pthread_barrier_wait(&job.go);
	for (i = 0; i < made; i++)
		pthread_join(th[i].tid, NULL);
	pthread_barrier_destroy(&job.ready);
	pthread_barrier_destroy(&job.go);

	for (i = 0; i < made; i++) {
		struct scale_thread *t = &th[i];

		if (t->failed && !ret) {
			snprintf(why, len, "thread %u (CPU %d): %s", i, t->cpu,
				 t->why);
			ret = -1;
		}
		if (t->role == R_PROD)
			continue;
		pages += t->pages;
		if (t->cycles > cycles)
			cycles = t->cycles;
	}
	if (!ret && (!pages || !cycles)) {
		snprintf(why, len, "no page completed in the run");
		ret = -1;
	}
	if (!ret)
		*tput = (double)pages / ((double)cycles / (cfg->tsc_ghz * 1e9));

out_queues:
	for (i = 0; w != W_BULK && i < nthreads; i++)
		if (th[i].role != R_CONS && th[i].queue)
			o->queue_free(th[i].queue);
	free(th);
	return ret;
}

/* ---- results ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, unsigned int n)
{
	double tmp[BENCH_MAX_RUNS];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static bool point_ok(const struct scale_point *p)
{
	return !p->skipped && !p->failed && p->nruns;
}

/* throughput(T) / throughput(1), or 0 when T = 1 was not measured. */
static double scaling(const struct scale_cfg *cfg, enum workload w,
		      enum impl im, unsigned int s)
{
	for (unsigned int b = 0; b < cfg->nr_steps; b++) {
		const struct scale_point *base = &points[w][im][b];

		if (cfg->steps[b] == 1 && point_ok(base))
			return points[w][im][s].med / base->med;
	}
	return 0;
}

static double ns_per_page_thread(unsigned int nthreads, double tput)
{
	return (double)nthreads * 1e9 / tput;
}

static void print_cells(FILE *f, const struct scale_cfg *cfg,
			enum workload w, enum impl im, unsigned int s)
{
	const struct scale_point *p = &points[w][im][s];
	double sc;

	if (!point_ok(p)) {
		fprintf(f, "  %9s %9s %7s", p->skipped ? "skipped" : "FAILED",
			"-", "-");
		return;
	}
	sc = scaling(cfg, w, im, s);
	fprintf(f, "  %9.3f %9.1f ",
		ns_per_page_thread(cfg->steps[s], p->med), p->med / 1e6);
	if (sc > 0)
		fprintf(f, "%6.2fx", sc);
	else
		fprintf(f, "%7s", "-");
}

static void print_table(FILE *f, const struct scale_cfg *cfg,
			const struct bench_machine *m,
			const struct bench_dpdk_info *dpdk, bool have_dpdk)
{
	fprintf(f, "pp-bench scale: %s, %ld cores, kernel %s, %s\n",
		m->cpu_model, m->cores, m->kernel, m->date);
	fprintf(f, "TSC %.3f GHz; threads pinned one per CPU (CPUs %d-%d allowed); %u runs of %.0f ms after %.0f ms warm-up per point; medians\n",
		cfg->tsc_ghz, cfg->cpus[0], cfg->cpus[cfg->nr_cpus - 1],
		cfg->runs, cfg->run_ms, cfg->warm_ms);
	if (have_dpdk)
		fprintf(f, "dpdk     %s: rte_mempool lcore cache %u, ops %s, %u B objects; worker threads are lcores by rte_thread_register()\n"
			"         EAL %s\n",
			dpdk->version, dpdk->cache_size, dpdk->ops_name,
			256u, dpdk->eal_args);
	else
		fprintf(f, "dpdk: %s\n", dpdk->status);
	for (int w = 0; w < NR_WORKLOADS; w++)
		fprintf(f, "  %-5s %s\n", wl_names[w], wl_desc[w]);
	fprintf(f, "T = 1 runs a pair's two roles in one thread; odd T > 1 has no pairs (skipped).\n"
		"ns/pg/thr: ns per page per thread (T / throughput); scaling: throughput(T) / throughput(1), ideal T.\n"
		"The machine may be shared and noisy: compare within a run.\n\n");
	fprintf(f, "%-12s%-29s%s\n", "", "pagepool", have_dpdk ? "dpdk" : "");
	fprintf(f, "%-5s %4s  %9s %9s %7s", "work", "T", "ns/pg/thr",
		"Mpages/s", "scaling");
	if (have_dpdk)
		fprintf(f, "  %9s %9s %7s  %9s", "ns/ob/thr", "Mobj/s",
			"scaling", "ours/DPDK");
	fprintf(f, "\n");
	for (int w = 0; w < NR_WORKLOADS; w++) {
		for (unsigned int s = 0; s < cfg->nr_steps; s++) {
			const struct scale_point *pp = &points[w][I_PP][s];
			const struct scale_point *dp = &points[w][I_DPDK][s];

			fprintf(f, "%-5s %4u", wl_names[w], cfg->steps[s]);
			print_cells(f, cfg, (enum workload)w, I_PP, s);
			if (have_dpdk) {
				print_cells(f, cfg, (enum workload)w, I_DPDK,
					    s);
				if (point_ok(pp) && point_ok(dp))
					fprintf(f, "  %9.2f", dp->med / pp->med);
			}
			fprintf(f, "\n");
			/* A skip's reason is the same for both: once. */
			if (pp->skipped || pp->failed)
				fprintf(f, "      %s: %s\n", impl_names[I_PP],
					pp->why);
			if (have_dpdk && dp->failed)
				fprintf(f, "      %s: %s\n",
					impl_names[I_DPDK], dp->why);
		}
	}
}

static void print_json(FILE *f, const struct scale_cfg *cfg,
		       const struct bench_machine *m,
		       const struct bench_dpdk_info *dpdk, bool have_dpdk)
{
	bool first = true;

	bench_json_head(f, "scale", m);
	fprintf(f, ", \"tsc_ghz\": %.4f},\n", cfg->tsc_ghz);
	fprintf(f, "  \"parameters\": {\"runs\": %u, \"run_ms\": %.2f, \"warmup_ms\": %.2f, \"bulk\": %u, \"queue_size\": %u, \"threads\": [",
		cfg->runs, cfg->run_ms, cfg->warm_ms, SCALE_BULK,
		SCALE_QUEUE_SIZE);
	for (unsigned int s = 0; s < cfg->nr_steps; s++)
		fprintf(f, "%s%u", s ? ", " : "", cfg->steps[s]);
	fprintf(f, "], \"cpus\": [");
	for (unsigned int c = 0; c < cfg->nr_cpus; c++)
		fprintf(f, "%s%d", c ? ", " : "", cfg->cpus[c]);
	fprintf(f, "]},\n  \"dpdk\": {\"built\": %s, \"ok\": %s, \"status\": ",
		dpdk->built ? "true" : "false", have_dpdk ? "true" : "false");
	pp_cli_json_str(f, dpdk->status);
	if (have_dpdk) {
		fprintf(f, ", \"version\": ");
		pp_cli_json_str(f, dpdk->version);
		fprintf(f, ", \"eal_args\": ");
		pp_cli_json_str(f, dpdk->eal_args);
		fprintf(f, ", \"cache_size\": %u, \"ops\": ", dpdk->cache_size);
		pp_cli_json_str(f, dpdk->ops_name);
	}
	fprintf(f, "},\n  \"cases\": [\n");
	for (int w = 0; w < NR_WORKLOADS; w++) {
		for (int im = 0; im < NR_IMPLS; im++) {
			if (im == I_DPDK && !have_dpdk)
				continue;
			for (unsigned int s = 0; s < cfg->nr_steps; s++) {
				const struct scale_point *p = &points[w][im][s];
				double sc;

				fprintf(f, "%s    {\"workload\": \"%s\", \"impl\": \"%s\", \"threads\": %u, \"status\": \"%s\"",
					first ? "" : ",\n", wl_names[w],
					impl_names[im], cfg->steps[s],
					p->skipped ? "skipped" :
					p->failed ? "failed" : "ok");
				first = false;
				if (!point_ok(p)) {
					fprintf(f, ", \"reason\": ");
					pp_cli_json_str(f, p->why);
					fputc('}', f);
					continue;
				}
				sc = scaling(cfg, (enum workload)w,
					     (enum impl)im, s);
				fprintf(f, ", \"ns_per_page_per_thread\": %.4f, \"mpages_per_s\": %.3f, \"scaling\": ",
					ns_per_page_thread(cfg->steps[s],
							   p->med),
					p->med / 1e6);
				if (sc > 0)
					fprintf(f, "%.3f", sc);
				else
					fprintf(f, "null");
				fprintf(f, ", \"runs_mpages_per_s\": [");
				for (unsigned int r = 0; r < p->nruns; r++)
					fprintf(f, "%s%.3f", r ? ", " : "",
						p->tput[r] / 1e6);
				fprintf(f, "]}");
			}
		}
	}
	fprintf(f, "\n  ]\n}\n");
}

/* ---- options ---- */

static void scale_usage(FILE *f)
{
	fprintf(f,
		"Usage: pp-bench scale [options]\n"
		"Thread scaling of the allocator and page_pool, beside DPDK's rte_mempool\n"
		"(per-lcore caches) on the same threads when built with DPDK. Workloads:\n"
		"  bulk  each thread: pp_alloc_pages_bulk 64 + pp_free_pages_bulk 64\n"
		"  pair  producer/consumer pairs over an SPSC queue: remote frees\n"
		"  pool  one page_pool per pair: the peer returns pages to the recycle ring\n"
		"For T = 1, 2, 4, ... up to the CPUs allowed (and that count), threads\n"
		"pinned one per CPU. Prints ns per page per thread and the scaling\n"
		"factor throughput(T) / throughput(1), medians of the runs.\n"
		"\n"
		"  --threads LIST  thread counts, e.g. 1,2,8 (default: powers of two)\n"
		"  --runs N        timed runs per point (default %d)\n"
		"  --run-ms MS     counted time of one run (default %.0f), after a\n"
		"                  warm-up of a tenth of it\n"
		"  --arena-mb N    arena size in MiB (default: 256 + 8 per thread)\n"
		"  --json FILE     also write JSON to FILE ('-': stdout; the table\n"
		"                  then goes to stderr)\n"
		"  --quick         %d runs of %.0f ms: a smoke test, rough figures\n"
		"  --no-dpdk       skip the DPDK columns even when built with DPDK\n"
		"  -h, --help      this text\n"
		"  -V, --version   the version, and the commit it was built from\n"
		"\n"
		"Restrict the CPUs with taskset; threads take the highest ones first.\n",
		SCALE_DEFAULT_RUNS, SCALE_DEFAULT_MS, SCALE_QUICK_RUNS,
		SCALE_QUICK_MS);
}

static void parse_threads(struct scale_cfg *cfg, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;

	if (!copy)
		pp_cli_usage_error(SCALE_TOOL, "out of memory");
	cfg->nr_steps = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned int v = (unsigned int)pp_cli_uint(
			SCALE_TOOL, "--threads", tok, 1, SCALE_MAX_THREADS);

		if (cfg->nr_steps == SCALE_MAX_STEPS)
			pp_cli_usage_error(SCALE_TOOL,
					   "--threads takes at most %d counts",
					   SCALE_MAX_STEPS);
		cfg->steps[cfg->nr_steps++] = v;
	}
	free(copy);
	if (!cfg->nr_steps)
		pp_cli_usage_error(SCALE_TOOL, "--threads is empty");
}

static void scale_parse(int argc, char **argv, struct scale_cfg *cfg)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 'T' },
		{ "runs", required_argument, NULL, 'r' },
		{ "run-ms", required_argument, NULL, 't' },
		{ "arena-mb", required_argument, NULL, 'a' },
		{ "json", required_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ "no-dpdk", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct pp_cli_opts cli = {
		.tool = SCALE_TOOL,
		.version_of = "pp-bench",
		.longopts = opts,
		.usage = scale_usage,
	};
	bool runs_set = false, ms_set = false;
	int c;

	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'T':
			parse_threads(cfg, optarg);
			break;
		case 'r':
			cfg->runs = (unsigned int)pp_cli_uint(
				SCALE_TOOL, "--runs", optarg, 1, BENCH_MAX_RUNS);
			runs_set = true;
			break;
		case 't':
			cfg->run_ms = pp_cli_double(SCALE_TOOL, "--run-ms",
						    optarg, 1, 60000);
			ms_set = true;
			break;
		case 'a':
			cfg->arena_mb = (unsigned long)pp_cli_uint(
				SCALE_TOOL, "--arena-mb", optarg, 16, 1ul << 20);
			pp_cli_fits_memory(SCALE_TOOL, "--arena-mb",
					   (unsigned long long)cfg->arena_mb << 20);
			break;
		case 'j':
			cfg->json_path = optarg;
			break;
		case 'q':
			cfg->quick = true;
			break;
		case 'D':
			cfg->dpdk = false;
			break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (cfg->json_path)
		pp_cli_json_writable(SCALE_TOOL, cfg->json_path);
	if (cfg->quick) {
		if (!runs_set)
			cfg->runs = SCALE_QUICK_RUNS;
		if (!ms_set)
			cfg->run_ms = SCALE_QUICK_MS;
	}
	cfg->warm_ms = cfg->run_ms / 10 < 2 ? 2 : cfg->run_ms / 10;
}

/* The CPUs we may run on; the default thread counts over them. */
static void read_cpus(struct scale_cfg *cfg)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "pp-bench scale: sched_getaffinity: %s\n",
			strerror(errno));
		exit(1);
	}
	for (int i = 0; i < CPU_SETSIZE && cfg->nr_cpus < SCALE_MAX_THREADS;
	     i++)
		if (CPU_ISSET(i, &set))
			cfg->cpus[cfg->nr_cpus++] = i;
	if (cfg->nr_steps) {
		for (unsigned int s = 0; s < cfg->nr_steps; s++)
			if (cfg->steps[s] > cfg->nr_cpus)
				pp_cli_usage_error(SCALE_TOOL, "--threads %u: only %u CPUs are allowed to this process (one thread per CPU)",
						   cfg->steps[s], cfg->nr_cpus);
		return;
	}
	for (unsigned int t = 1; t <= cfg->nr_cpus; t *= 2)
		cfg->steps[cfg->nr_steps++] = t;
	if (cfg->steps[cfg->nr_steps - 1] != cfg->nr_cpus)
		cfg->steps[cfg->nr_steps++] = cfg->nr_cpus;
}

static int setup_memory(unsigned long mb, struct pp_arena **arena,
			struct pp_allocator **alloc)
{
	struct pp_arena_opts ao;
	struct pp_allocator_opts lo;

	memset(&ao, 0, sizeof(ao));
	ao.sz = sizeof(ao);
	ao.size = mb << 20;
	ao.page_size = PP_PAGE_SIZE_AUTO;
	ao.numa_node = PP_NUMA_NODE_ANY;
	ao.flags = PP_ARENA_F_ALLOW_4K;
	ao.name = "pp-bench-scale";
	*arena = pp_arena_create(&ao);
	if (!*arena) {
		fprintf(stderr, "pp-bench scale: cannot create a %lu MiB arena: %s (try a smaller --arena-mb)\n",
			mb, strerror(errno));
		return -1;
	}
	memset(&lo, 0, sizeof(lo));
	lo.sz = sizeof(lo);
	lo.arenas = arena;
	lo.nr_arenas = 1;
	*alloc = pp_allocator_create(&lo);
	if (!*alloc) {
		fprintf(stderr, "pp-bench scale: cannot create the allocator: %s\n",
			strerror(errno));
		pp_arena_destroy(*arena);
		return -1;
	}
	return 0;
}

int bench_scale_main(int argc, char **argv)
{
	struct scale_cfg cfg = {
		.runs = SCALE_DEFAULT_RUNS,
		.run_ms = SCALE_DEFAULT_MS,
		.dpdk = true,
	};
	const struct scale_ops *ops[NR_IMPLS] = { &pp_ops, NULL };
	struct bench_machine machine;
	struct bench_dpdk_info dpdk;
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	FILE *table = stdout, *json = NULL;
	unsigned int max_t = 1;
	int ret = 0;

	scale_parse(argc, argv, &cfg);
	read_cpus(&cfg);
	for (unsigned int s = 0; s < cfg.nr_steps; s++)
		if (cfg.steps[s] > max_t)
			max_t = cfg.steps[s];
	if (!cfg.arena_mb)
		cfg.arena_mb = 256 + 8ul * max_t;

	if (cfg.json_path && !strcmp(cfg.json_path, "-")) {
		json = stdout;
		table = stderr;
	} else if (cfg.json_path) {
		json = fopen(cfg.json_path, "w");
		if (!json) {
			fprintf(stderr, "pp-bench scale: cannot write %s: %s (does its directory exist?)\n",
				cfg.json_path, strerror(errno));
			return 1;
		}
	}
	bench_machine_read(&machine);
	if (bench_tsc_calibrate(cfg.quick ? 10 : 100, &cfg.tsc_ghz)) {
		fprintf(stderr, "pp-bench scale: the TSC does not advance: cannot time anything\n");
		return 1;
	}
	if (setup_memory(cfg.arena_mb, &arena, &alloc))
		return 1;
	pp_ops.ctx = alloc;

	memset(&dpdk, 0, sizeof(dpdk));
#ifdef PP_BENCH_HAVE_DPDK
	dpdk.built = true;
	if (!cfg.dpdk)
		snprintf(dpdk.status, sizeof(dpdk.status), "off (--no-dpdk)");
	else if (!scale_dpdk_init(cfg.cpus[cfg.nr_cpus - 1], max_t, &dpdk))
		ops[I_DPDK] = scale_dpdk_ops();
#else
	snprintf(dpdk.status, sizeof(dpdk.status),
		 "not built (install dpdk-dev)");
#endif

	/* Points with no pairs are skipped up front. */
	for (unsigned int s = 0; s < cfg.nr_steps; s++)
		for (int w = W_PAIR; w <= W_POOL; w++)
			for (int im = 0; im < NR_IMPLS; im++)
				if (cfg.steps[s] > 1 && cfg.steps[s] % 2) {
					points[w][im][s].skipped = true;
					snprintf(points[w][im][s].why,
						 sizeof(points[w][im][s].why),
						 "odd thread count: pairs need an even one");
				}
	/* Runs alternate between workloads and implementations, so that a
	 * neighbour's burst of load hits them alike. */
	for (unsigned int s = 0; s < cfg.nr_steps; s++) {
		for (unsigned int r = 0; r < cfg.runs; r++) {
			for (int w = 0; w < NR_WORKLOADS; w++) {
				for (int im = 0; im < NR_IMPLS; im++) {
					struct scale_point *p =
						&points[w][im][s];
					double tput;

					if (!ops[im] || p->skipped || p->failed)
						continue;
					if (run_job(&cfg, ops[im],
						    (enum workload)w,
						    cfg.steps[s], &tput, p->why,
						    sizeof(p->why))) {
						p->failed = true;
						continue;
					}
					p->tput[p->nruns++] = tput;
				}
			}
		}
		for (int w = 0; w < NR_WORKLOADS; w++)
			for (int im = 0; im < NR_IMPLS; im++) {
				struct scale_point *p = &points[w][im][s];

				if (point_ok(p))
					p->med = median(p->tput, p->nruns);
			}
	}

	print_table(table, &cfg, &machine, &dpdk, ops[I_DPDK] != NULL);
	if (json) {
		print_json(json, &cfg, &machine, &dpdk, ops[I_DPDK] != NULL);
		if (json != stdout && fclose(json)) {
			fprintf(stderr, "pp-bench scale: writing %s failed: %s\n",
				cfg.json_path, strerror(errno));
			ret = 1;
		}
	}
#ifdef PP_BENCH_HAVE_DPDK
	scale_dpdk_fini();
#endif
	pp_allocator_drain_thread(alloc);
	if (pp_allocator_destroy(alloc))
		fprintf(stderr, "pp-bench scale: pages were left allocated (a leak in a workload)\n");
	else
		pp_arena_destroy(arena);
	return ret;
}
