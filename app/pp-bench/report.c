/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.c - the results, twice: an aligned table for people and one JSON
 * document for machines. Only measured figures are printed; the targets
 * in the headline are the goals the project set itself, shown beside what
 * was measured, never in place of it.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "pp_cli.h"

/* The project's goals for the headline figures (issue tracker, v0.1). */
#define TARGET_BULK_ARRAY_64_NS 10.0
#define TARGET_POOL_FAST_NS 3.0
#define TARGET_SUNRPC_ARRAY_US 0.5

static const char *const group_names[] = {
	[BENCH_BASELINE] = "baseline",
	[BENCH_ALLOC] = "allocator",
	[BENCH_POOL] = "page_pool",
	[BENCH_SUNRPC] = "sunrpc",
	[BENCH_DPDK] = "dpdk",
};

static double spread_pct(const struct bench_result *r)
{
	return r->cyc_med > 0 ? (r->cyc_max - r->cyc_min) / r->cyc_med * 100 : 0;
}

/*
 * Link every bulk array row to the DPDK row of the same bulk size,
 * page_pool's ring recycle to DPDK's rte_ring enqueue + dequeue of one,
 * and page_pool's take-and-return rows to DPDK's get + put (of one, or
 * of a burst of 32).
 */
static void pair_dpdk(struct bench_results *res)
{
	unsigned int i;

	for (i = 0; i < res->n; i++) {
		struct bench_result *r = &res->r[i], *d;

		if (r->group == BENCH_ALLOC && !strcmp(r->name, "bulk array"))
			d = bench_find(res, BENCH_DPDK,
				       "rte_mempool get+put bulk", r->bulk);
		else if (r->group == BENCH_POOL &&
			 !strcmp(r->name, "ring recycle"))
			d = bench_find(res, BENCH_DPDK, BENCH_DPDK_RING_NAME,
				       0);
		/* A buffer taken and given back: DPDK's get + put of one
		 * object through its cache, or of a burst of 32. */
		else if (r->group == BENCH_POOL &&
			 (!strcmp(r->name, "fast path (direct recycle)") ||
			  !strncmp(r->name, "fragment ", 9)))
			d = bench_find(res, BENCH_DPDK,
				       "rte_mempool get+put bulk", 1);
		else if (r->group == BENCH_POOL &&
			 !strncmp(r->name, "burst 32 ", 9))
			d = bench_find(res, BENCH_DPDK,
				       "rte_mempool get+put bulk", 32);
		else
			continue;
		r->dpdk = (d && !d->failed) ? d : NULL;
	}
}

/* ---- the table ---- */

/* One aligned row; the DPDK columns, when empty, leave no trailing blanks. */
static void print_line(FILE *f, const char *name, const char *bulk,
		       const char *t, const char *c, const char *sp,
		       const char *d, const char *ratio)
{
	char line[256];
	size_t n;

	snprintf(line, sizeof(line), "  %-35s %5s %10s %12s %8s %12s %10s",
		 name, bulk, t, c, sp, d, ratio);
	n = strlen(line);
	while (n && line[n - 1] == ' ')
		line[--n] = '\0';
	fprintf(f, "%s\n", line);
}

static void section(FILE *f, const char *title, const char *unit)
{
	char t[32], c[32];

	snprintf(t, sizeof(t), "%s/%s", strcmp(unit, "call") ? "ns" : "us",
		 unit);
	snprintf(c, sizeof(c), "cycles/%s", unit);
	fprintf(f, "\n%-37s %5s %10s %12s %8s %12s %10s\n", title, "bulk", t, c,
		"spread", "DPDK ns/obj", "ours/DPDK");
}

static void row(FILE *f, const struct bench_cfg *cfg,
		const struct bench_result *r)
{
	char bulk[16] = "-", t[24], c[24], sp[16], d[24] = "", ratio[24] = "";
	double scale = strcmp(r->unit, "call") ? 1.0 : 1e-3;

	if (r->bulk)
		snprintf(bulk, sizeof(bulk), "%u", r->bulk);
	if (r->failed) {
		fprintf(f, "  %-35s %5s   FAILED: %s\n", r->name, bulk, r->why);
		return;
	}
	if (r->skipped) {
		fprintf(f, "  %-35s %5s   skipped: %s\n", r->name, bulk, r->why);
		return;
	}
	snprintf(t, sizeof(t), "%.3f", bench_ns(cfg, r->cyc_med) * scale);
	snprintf(c, sizeof(c), "%.1f", r->cyc_med);
	snprintf(sp, sizeof(sp), "%.1f%%", spread_pct(r));
	if (r->dpdk) {
		double dns = bench_ns(cfg, r->dpdk->cyc_med);

		snprintf(d, sizeof(d), "%.3f", dns);
		snprintf(ratio, sizeof(ratio), "%.2f", r->cyc_med /
			 r->dpdk->cyc_med);
	}
	print_line(f, r->name, bulk, t, c, sp, d, ratio);
}

static void group_rows(FILE *f, const struct bench_cfg *cfg,
		       struct bench_results *res, enum bench_group g)
{
	unsigned int i;

	for (i = 0; i < res->n; i++)
		if (res->r[i].group == g)
			row(f, cfg, &res->r[i]);
}

static void headline_row(FILE *f, const struct bench_cfg *cfg,
			 const char *what, const struct bench_result *r,
			 const char *unit, double scale, double target)
{
	if (!r || r->failed) {
		fprintf(f, "  %-44s %12s   (target <= %g %s)\n", what,
			"not measured", target, unit);
		return;
	}
	fprintf(f, "  %-44s %9.3f %-3s (target <= %g %s)\n", what,
		bench_ns(cfg, r->cyc_med) * scale, unit, target, unit);
}

void bench_report_table(FILE *f, const struct bench_cfg *cfg,
			const struct bench_machine *m,
			const struct bench_dpdk_info *dpdk,
			struct bench_results *res)
{
	size_t ps = pp_arena_page_size(cfg->arena);

	pair_dpdk(res);
	fprintf(f, "pp-bench %s: pagepool microbenchmarks, median of %u runs "
		"(TSC cycles: no hardware counters)\n", PP_VERSION, cfg->runs);
	fprintf(f, "machine  %s, %ld cores, TSC %.3f GHz%s, kernel %s\n",
		m->cpu_model, m->cores, cfg->tsc_ghz,
		m->constant_tsc ? "" : " (not invariant!)", m->kernel);
	fprintf(f, "setup    arena %lu MiB of %s pages, cpu %d, debug_level %d, stats %s%s\n",
		(unsigned long)(pp_arena_size(cfg->arena) >> 20),
		ps >= (1ul << 30) ? "1 GiB" : ps >= (2ul << 20) ? "2 MiB" : "4 KiB",
		cfg->cpu, PP_DEBUG, PP_STATS ? "on" : "off",
		cfg->quick ? ", --quick (figures are rough)" : "");
	if (dpdk->ok)
		fprintf(f, "dpdk     %s: rte_mempool of %u x 4096 B, lcore cache %u, ops %s\n"
			"         EAL %s\n", dpdk->version, dpdk->pool_size,
			dpdk->cache_size, dpdk->ops_name, dpdk->eal_args);
	else
		fprintf(f, "dpdk: %s\n", dpdk->status);
	fprintf(f, "spread   (max - min) / median over the runs\n");

	section(f, "baselines", "op");
	group_rows(f, cfg, res, BENCH_BASELINE);
	section(f, "allocator: alloc + free", "page");
	group_rows(f, cfg, res, BENCH_ALLOC);
	if (dpdk->ok) {
		section(f, "dpdk: mempool bulk, ring of one", "obj");
		group_rows(f, cfg, res, BENCH_DPDK);
	}
	section(f, "page_pool: alloc + return", "page");
	group_rows(f, cfg, res, BENCH_POOL);
	section(f, "sunrpc refill: 66 pages, 33 holes", "call");
	group_rows(f, cfg, res, BENCH_SUNRPC);

	fprintf(f, "\nheadline (medians)\n");
	headline_row(f, cfg, "bulk array alloc+free, bulk 64, per page",
		     bench_find(res, BENCH_ALLOC, "bulk array", 64), "ns",
		     1.0, TARGET_BULK_ARRAY_64_NS);
	headline_row(f, cfg, "page_pool fast path, per page",
		     bench_find(res, BENCH_POOL, "fast path (direct recycle)",
				0), "ns", 1.0, TARGET_POOL_FAST_NS);
	headline_row(f, cfg, "sunrpc refill, bulk array, per call",
		     bench_find(res, BENCH_SUNRPC, "bulk array", 0), "us",
		     1e-3, TARGET_SUNRPC_ARRAY_US);
}

/* ---- JSON ---- */

void bench_json_head(FILE *f, const char *benchmark,
		     const struct bench_machine *m)
{
	fprintf(f, "{\n  \"tool\": \"pp-bench\",\n  \"version\": \"%s\",\n  \"commit\": ",
		pp_cli_version);
	pp_cli_json_str(f, pp_cli_commit);
	fprintf(f, ",\n  \"date\": \"%s\",\n", m->date);
	fprintf(f, "  \"benchmark\": \"%s\",\n  \"machine\": {\"cpu\": ",
		benchmark);
	pp_cli_json_str(f, m->cpu_model);
	fprintf(f, ", \"cores\": %ld, \"kernel\": ", m->cores);
	pp_cli_json_str(f, m->kernel);
	fprintf(f, ", \"date\": \"%s\"", m->date);
}

static void json_stat(FILE *f, const char *key, double med, double min,
		      double max, int prec)
{
	fprintf(f, "\"%s\": {\"median\": %.*f, \"min\": %.*f, \"max\": %.*f}",
		key, prec, med, prec, min, prec, max);
}

static void json_result(FILE *f, const struct bench_cfg *cfg,
			const struct bench_result *r)
{
	fprintf(f, "    {\"group\": \"%s\", \"name\": ", group_names[r->group]);
	pp_cli_json_str(f, r->name);
	fprintf(f, ", \"bulk\": %u, \"unit\": \"%s\", ", r->bulk, r->unit);
	if (r->failed) {
		fprintf(f, "\"failed\": true, \"error\": ");
		pp_cli_json_str(f, r->why);
		fputc('}', f);
		return;
	}
	if (r->skipped) {
		fprintf(f, "\"failed\": false, \"skipped\": true, \"reason\": ");
		pp_cli_json_str(f, r->why);
		fputc('}', f);
		return;
	}
	fprintf(f, "\"failed\": false, \"iterations_per_run\": %lu, \"runs\": %u, ",
		r->iters, r->runs);
	json_stat(f, "ns", bench_ns(cfg, r->cyc_med), bench_ns(cfg, r->cyc_min),
		  bench_ns(cfg, r->cyc_max), 4);
	fprintf(f, ", ");
	json_stat(f, "tsc_cycles", r->cyc_med, r->cyc_min, r->cyc_max, 2);
	if (r->dpdk)
		fprintf(f, ", \"dpdk_ns_per_obj\": %.4f, \"ratio_to_dpdk\": %.3f",
			bench_ns(cfg, r->dpdk->cyc_med),
			r->cyc_med / r->dpdk->cyc_med);
	fputc('}', f);
}

static void json_results(FILE *f, const struct bench_cfg *cfg,
			 struct bench_results *res, bool baselines)
{
	unsigned int i;
	bool first = true;

	fprintf(f, "[\n");
	for (i = 0; i < res->n; i++) {
		if ((res->r[i].group == BENCH_BASELINE) != baselines)
			continue;
		if (!first)
			fprintf(f, ",\n");
		json_result(f, cfg, &res->r[i]);
		first = false;
	}
	fprintf(f, "\n  ]");
}

static void json_dpdk(FILE *f, const struct bench_dpdk_info *d)
{
	fprintf(f, "  \"dpdk\": {\"built\": %s, \"ok\": %s, \"status\": ",
		d->built ? "true" : "false", d->ok ? "true" : "false");
	pp_cli_json_str(f, d->status);
	if (d->ok) {
		fprintf(f, ", \"version\": ");
		pp_cli_json_str(f, d->version);
		fprintf(f, ", \"eal_args\": ");
		pp_cli_json_str(f, d->eal_args);
		fprintf(f, ", \"pool_size\": %u, \"obj_size\": 4096, \"cache_size\": %u, \"ops\": ",
			d->pool_size, d->cache_size);
		pp_cli_json_str(f, d->ops_name);
	}
	fprintf(f, "},\n");
}

/* A headline median, or null when the case failed. */
static void json_headline(FILE *f, const struct bench_cfg *cfg,
			  const char *key, const struct bench_result *r,
			  double scale)
{
	if (!r || r->failed)
		fprintf(f, "\"%s\": null", key);
	else
		fprintf(f, "\"%s\": %.4f", key,
			bench_ns(cfg, r->cyc_med) * scale);
}

int bench_report_json(FILE *f, const struct bench_cfg *cfg,
		      const struct bench_machine *m,
		      const struct bench_dpdk_info *dpdk,
		      struct bench_results *res)
{
	char stats[16384];
	unsigned int i;
	int n;

	pair_dpdk(res);
	fprintf(f, "{\n  \"tool\": \"pp-bench\",\n  \"version\": \"%s\",\n  \"commit\": ",
		PP_VERSION);
	pp_cli_json_str(f, pp_cli_commit);
	fprintf(f, ",\n  \"date\": \"%s\",\n", m->date);
	fprintf(f, "  \"machine\": {\"cpu_model\": ");
	pp_cli_json_str(f, m->cpu_model);
	fprintf(f, ", \"cores\": %ld, \"tsc_ghz\": %.4f, \"invariant_tsc\": %s, \"kernel\": ",
		m->cores, cfg->tsc_ghz, m->constant_tsc ? "true" : "false");
	pp_cli_json_str(f, m->kernel);
	fprintf(f, ", \"counters\": \"TSC cycles\"},\n");
	fprintf(f, "  \"build\": {\"debug_level\": %d, \"stats\": %d, \"compiler\": ",
		PP_DEBUG, PP_STATS);
	pp_cli_json_str(f, __VERSION__);
	fprintf(f, "},\n");
	fprintf(f, "  \"parameters\": {\"runs\": %u, \"cpu\": %d, \"arena_mb\": %lu, "
		"\"arena_page_size\": %zu, \"run_ms\": %.3f, \"quick\": %s, \"bulk_sizes\": [",
		cfg->runs, cfg->cpu, cfg->arena_mb,
		pp_arena_page_size(cfg->arena), cfg->run_ms,
		cfg->quick ? "true" : "false");
	for (i = 0; i < bench_nr_bulk_sizes; i++)
		fprintf(f, "%s%u", i ? ", " : "", bench_bulk_sizes[i]);
	fprintf(f, "]},\n");
	json_dpdk(f, dpdk);
	fprintf(f, "  \"baselines\": ");
	json_results(f, cfg, res, true);
	fprintf(f, ",\n  \"cases\": ");
	json_results(f, cfg, res, false);
	fprintf(f, ",\n  \"targets\": {\"bulk_array_64_ns_per_page\": %g, "
		"\"page_pool_fast_ns_per_page\": %g, \"sunrpc_array_us_per_call\": %g}",
		TARGET_BULK_ARRAY_64_NS, TARGET_POOL_FAST_NS,
		TARGET_SUNRPC_ARRAY_US);

	fprintf(f, ",\n  \"headline\": {");
	json_headline(f, cfg, "bulk_array_64_ns_per_page",
		      bench_find(res, BENCH_ALLOC, "bulk array", 64), 1.0);
	fprintf(f, ", ");
	json_headline(f, cfg, "page_pool_fast_ns_per_page",
		      bench_find(res, BENCH_POOL, "fast path (direct recycle)",
				 0), 1.0);
	fprintf(f, ", ");
	json_headline(f, cfg, "sunrpc_array_us_per_call",
		      bench_find(res, BENCH_SUNRPC, "bulk array", 0), 1e-3);
	fprintf(f, "}");

	/* The allocator's own counters: how many calls, refills, drains. */
	n = pp_allocator_stats_json(cfg->alloc, stats, sizeof(stats));
	if (n > 0 && (size_t)n < sizeof(stats))
		fprintf(f, ",\n  \"allocator_stats\": %s", stats);
	fprintf(f, "\n}\n");
	return ferror(f) ? -1 : 0;
}
