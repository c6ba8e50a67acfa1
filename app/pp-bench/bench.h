/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.h - what the pp-bench files share: the run configuration, one
 * measured case (struct bench_result) and the list the report prints, and
 * the entry point of each group of cases.
 *
 * Every case is a function that runs a given number of iterations and
 * says how many operations (pages, calls, objects) it did in how many TSC
 * cycles; bench_run() (timing.c) picks the iteration count, warms the case
 * up and keeps the median of several runs.
 */
#ifndef PP_BENCH_H
#define PP_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pagepool/pagepool.h>

/* An odd count keeps the median one real run; 101 is plenty. */
#define BENCH_MAX_RUNS 101
#define BENCH_MAX_RESULTS 128

/* The bulk sizes of the allocator and DPDK cases (the kernel page_bench's
 * steps up to the largest SUNRPC and NAPI batches). */
extern const unsigned int bench_bulk_sizes[];
extern const unsigned int bench_nr_bulk_sizes;
#define BENCH_MAX_BULK 128

struct bench_cfg {
	/* From the command line. */
	unsigned int runs;
	int cpu;
	unsigned long arena_mb;
	double run_ms;          /* time one run aims at */
	bool quick;
	bool dpdk;              /* false with --no-dpdk */
	const char *json_path;  /* NULL: no JSON; "-": stdout */

	/* Set up by main. */
	double tsc_ghz;
	struct pp_arena *arena;
	struct pp_allocator *alloc;
};

enum bench_group {
	BENCH_BASELINE,
	BENCH_ALLOC,
	BENCH_POOL,
	BENCH_SUNRPC,
	BENCH_DPDK,
};

/* One timed run: @ops operations in @cycles TSC cycles. */
struct bench_sample {
	uint64_t ops;
	uint64_t cycles;
};

/*
 * A case runs @iters iterations and fills @s. It returns 0, or -1 with a
 * one-line reason in @why (e.g. the allocator returned fewer pages than
 * asked), in which case the result is reported as failed, not measured.
 */
typedef int (*bench_fn)(void *arg, unsigned long iters,
			struct bench_sample *s, char *why, size_t why_len);

struct bench_result {
	enum bench_group group;
	char name[40];
	unsigned int bulk;       /* 0: not a bulk case */
	const char *unit;        /* what one operation is: op, page, call, obj */
	unsigned long iters;     /* iterations per run */
	unsigned int runs;
	double cyc_med;          /* TSC cycles per operation */
	double cyc_min;
	double cyc_max;
	bool failed;
	bool skipped;            /* not measurable here; @why says why */
	char why[96];
	/* For the bulk array rows: the DPDK row of the same bulk size. */
	const struct bench_result *dpdk;
};

struct bench_results {
	struct bench_result r[BENCH_MAX_RESULTS];
	unsigned int n;
};

/* What the DPDK part reports about itself, for the header and the JSON. */
struct bench_dpdk_info {
	bool built;
	bool ok;
	char status[160];        /* "ok" or why there is no column */
	char version[48];
	char eal_args[256];
	unsigned int pool_size;
	unsigned int cache_size;
	char ops_name[32];
};

/* timing.c */
int bench_tsc_calibrate(double ms, double *ghz);
struct bench_result *bench_run(const struct bench_cfg *cfg,
			       struct bench_results *out,
			       enum bench_group group, const char *name,
			       unsigned int bulk, const char *unit,
			       bench_fn fn, void *arg);
__attribute__((format(printf, 6, 7)))
struct bench_result *bench_fail(struct bench_results *out,
				enum bench_group group, const char *name,
				unsigned int bulk, const char *unit,
				const char *fmt, ...);
/* bench_skip - a case this machine or build cannot measure, and why. */
__attribute__((format(printf, 6, 7)))
struct bench_result *bench_skip(struct bench_results *out,
				enum bench_group group, const char *name,
				unsigned int bulk, const char *unit,
				const char *fmt, ...);
double bench_ns(const struct bench_cfg *cfg, double cycles);
struct bench_result *bench_find(struct bench_results *res,
				enum bench_group group, const char *name,
				unsigned int bulk);

/* The groups of cases; each returns 0 or -1 when it could not set up. */
int bench_baselines(const struct bench_cfg *cfg, struct bench_results *out);
/* cache_entry.c: the owner's cost of each way to keep a drainer out. */
int bench_cache_entry(const struct bench_cfg *cfg, struct bench_results *out);
int bench_alloc_cases(const struct bench_cfg *cfg, struct bench_results *out);
int bench_pool_cases(const struct bench_cfg *cfg, struct bench_results *out);
int bench_sunrpc_cases(const struct bench_cfg *cfg,
		       struct bench_results *out);

/* dpdk.c, built only with DPDK (PP_BENCH_HAVE_DPDK). */
/* The DPDK row beside page_pool's "ring recycle". */
#define BENCH_DPDK_RING_NAME "rte_ring mp enq + mc deq"
int bench_dpdk_eal_start(int cpu, unsigned int mem_mb, char *args,
			 size_t args_len, char *why, size_t why_len);
void bench_dpdk_eal_stop(void);
int bench_dpdk_init(const struct bench_cfg *cfg, struct bench_dpdk_info *info);
int bench_dpdk_cases(const struct bench_cfg *cfg, struct bench_results *out);
void bench_dpdk_fini(void);

/* machine.c */
struct bench_machine {
	char cpu_model[128];
	long cores;
	char kernel[128];
	bool constant_tsc;
	char date[32];           /* UTC, ISO 8601 */
};
void bench_machine_read(struct bench_machine *m);

/* report.c */
void bench_report_table(FILE *f, const struct bench_cfg *cfg,
			const struct bench_machine *m,
			const struct bench_dpdk_info *dpdk,
			struct bench_results *res);
int bench_report_json(FILE *f, const struct bench_cfg *cfg,
		      const struct bench_machine *m,
		      const struct bench_dpdk_info *dpdk,
		      struct bench_results *res);
/*
 * The opening of the tlb and scale documents, up to the last member of
 * "machine", which the caller closes (after members of its own):
 *   {"tool": "pp-bench", "version", "commit", "date",
 *    "benchmark": @benchmark, "machine": {"cpu", "cores", "kernel", "date"
 * The default run's document opens otherwise (bench_report_json()).
 */
void bench_json_head(FILE *f, const char *benchmark,
		     const struct bench_machine *m);

#endif /* PP_BENCH_H */
