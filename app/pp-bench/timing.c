/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * timing.c - the TSC rate, and running one case: pick its iteration
 * count, warm it up, time it several times and keep median, min and max.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "timing.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * bench_tsc_calibrate - the TSC rate in GHz: TSC cycles over a busy wait
 * of @ms milliseconds of CLOCK_MONOTONIC. Busy, not sleeping, so that the
 * thread is not migrated or descheduled in the window; the clock reads at
 * both ends cost tens of ns, which is below 1e-6 of the window.
 */
int bench_tsc_calibrate(double ms, double *ghz)
{
	uint64_t t0, t1, c0, c1, want = (uint64_t)(ms * 1e6);

	t0 = mono_ns();
	c0 = tsc_begin();
	do {
		t1 = mono_ns();
	} while (t1 - t0 < want);
	c1 = tsc_end();
	if (c1 <= c0 || t1 <= t0)
		return -EINVAL;
	*ghz = (double)(c1 - c0) / (double)(t1 - t0);
	return 0;
}

double bench_ns(const struct bench_cfg *cfg, double cycles)
{
	return cycles / cfg->tsc_ghz;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct bench_result *new_result(struct bench_results *out,
				       enum bench_group group,
				       const char *name, unsigned int bulk,
				       const char *unit)
{
	struct bench_result *r;

	if (out->n == BENCH_MAX_RESULTS) {
		fprintf(stderr, "pp-bench: more than %d cases: raise BENCH_MAX_RESULTS\n",
			BENCH_MAX_RESULTS);
		exit(1);
	}
	r = &out->r[out->n++];
	memset(r, 0, sizeof(*r));
	r->group = group;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->bulk = bulk;
	r->unit = unit;
	return r;
}

/* A case not measured, with the reason: failed, or @skipped. */
static struct bench_result *not_measured(struct bench_results *out,
					 enum bench_group group,
					 const char *name, unsigned int bulk,
					 const char *unit, bool skipped,
					 const char *fmt, va_list ap)
{
	struct bench_result *r = new_result(out, group, name, bulk, unit);

	r->failed = !skipped;
	r->skipped = skipped;
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	return r;
}

/* bench_fail - record a case that could not run, with the reason. */
struct bench_result *bench_fail(struct bench_results *out,
				enum bench_group group, const char *name,
				unsigned int bulk, const char *unit,
				const char *fmt, ...)
{
	struct bench_result *r;
	va_list ap;

	va_start(ap, fmt);
	r = not_measured(out, group, name, bulk, unit, false, fmt, ap);
	va_end(ap);
	return r;
}

struct bench_result *bench_skip(struct bench_results *out,
				enum bench_group group, const char *name,
				unsigned int bulk, const char *unit,
				const char *fmt, ...)
{
	struct bench_result *r;
	va_list ap;

	va_start(ap, fmt);
	r = not_measured(out, group, name, bulk, unit, true, fmt, ap);
	va_end(ap);
	return r;
}

static bool run_once(struct bench_result *r, bench_fn fn, void *arg,
		     unsigned long iters, struct bench_sample *s)
{
	memset(s, 0, sizeof(*s));
	if (fn(arg, iters, s, r->why, sizeof(r->why)) < 0) {
		r->failed = true;
		return false;
	}
	if (!s->ops || !s->cycles) {
		r->failed = true;
		snprintf(r->why, sizeof(r->why), "the case did no work");
		return false;
	}
	return true;
}

/*
 * bench_run - measure one case and append its result to @out.
 *
 * Warm-up and calibration are one phase: the iteration count doubles from
 * 1 until a run takes a quarter of the target time, which also brings the
 * allocator's thread cache, the pool and the CPU caches to their steady
 * state. The count is then scaled so one run takes about cfg->run_ms, and
 * the case runs cfg->runs times. The per-operation figure of each run is
 * its cycles over its operations; nothing is subtracted (the baselines are
 * printed instead, for the reader to compare).
 */
struct bench_result *bench_run(const struct bench_cfg *cfg,
			       struct bench_results *out,
			       enum bench_group group, const char *name,
			       unsigned int bulk, const char *unit,
			       bench_fn fn, void *arg)
{
	double target = cfg->run_ms * 1e6 * cfg->tsc_ghz;
	double per_op[BENCH_MAX_RUNS];
	struct bench_result *r = new_result(out, group, name, bulk, unit);
	struct bench_sample s;
	unsigned long iters = 1;
	unsigned int i, runs = cfg->runs;

	for (;;) {
		if (!run_once(r, fn, arg, iters, &s))
			return r;
		/*
		 * A long run may be a slow one: the first call (the thread
		 * cache made, pages faulted in) or the process preempted on
		 * a busy machine. Scaling from it would time runs of a few
		 * iterations, that is, the TSC reads. So a long run counts
		 * only when a second one at the same count is long too.
		 */
		if ((double)s.cycles >= target / 4 &&
		    !run_once(r, fn, arg, iters, &s))
			return r;
		if ((double)s.cycles >= target / 4 || iters >= (1ul << 40))
			break;
		iters *= 2;
	}
	iters = (unsigned long)((double)iters * target / (double)s.cycles);
	if (iters == 0)
		iters = 1;
	r->iters = iters;

	for (i = 0; i < runs; i++) {
		if (!run_once(r, fn, arg, iters, &s))
			return r;
		per_op[i] = (double)s.cycles / (double)s.ops;
	}
	qsort(per_op, runs, sizeof(per_op[0]), cmp_double);
	r->runs = runs;
	r->cyc_min = per_op[0];
	r->cyc_max = per_op[runs - 1];
	if (runs % 2)
		r->cyc_med = per_op[runs / 2];
	else
		r->cyc_med = (per_op[runs / 2 - 1] + per_op[runs / 2]) / 2;
	return r;
}

struct bench_result *bench_find(struct bench_results *res,
				enum bench_group group, const char *name,
				unsigned int bulk)
{
	unsigned int i;

	for (i = 0; i < res->n; i++) {
		struct bench_result *r = &res->r[i];

		if (r->group == group && r->bulk == bulk &&
		    !strcmp(r->name, name))
			return r;
	}
	return NULL;
}
