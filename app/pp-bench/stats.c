/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.c - `pp-bench stats`: what reading the allocator's statistics
 * costs a thread that allocates. A worker, pinned to a CPU, runs the
 * allocator's fast path on its own thread cache for a fixed time (one
 * page alloc + free, and a bulk array of 64 alloc + bulk free) while a
 * second thread, pinned to another CPU, does one of:
 *
 *   idle   nothing (asleep): the baseline of "rate";
 *   rate   pp_allocator_stats_json() --rate times a second, as a
 *          monitoring client polling telemetry's /pagepool/allocator
 *          makes the server thread do;
 *   spin   a busy loop that reads nothing: the baseline of "full", so
 *          that a busy sibling CPU weighs the same on both sides;
 *   full   pp_allocator_stats_json() in a loop, as fast as it goes.
 *
 * Each round runs every mode once, in an order that rotates from round
 * to round, and gives two ratios of the worker's speed with the reader
 * to its speed without: rate / idle and full / spin (1.00: the reader
 * costs nothing; a reader that stops every thread's cache made the full
 * speed one 0.01). Reported: each mode's median time per page, the
 * median of the rounds' ratios with their range, and the ratio of the
 * modes' best runs: on a shared machine other programs only ever add
 * time to a run, so the best runs show the reader's own cost when the
 * medians drown it. A benchmark, never a pass/fail test.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pagepool/pagepool.h>

#include "bench.h"
#include "pp_cli.h"
#include "stats.h"

#define TOOL "pp-bench stats"
#define STATS_DEFAULT_RUNS 7
#define STATS_QUICK_RUNS 3
#define STATS_DEFAULT_MS 200.0
#define STATS_QUICK_MS 20.0
#define STATS_DEFAULT_RATE 100
#define STATS_DEFAULT_ARENA_MB 64
#define STATS_BULK 64

enum mode { M_IDLE, M_RATE, M_SPIN, M_FULL, NR_MODES };
enum workload { W_SINGLE, W_BULK, NR_WORKLOADS };

static const char *const mode_names[NR_MODES] = {
	[M_IDLE] = "idle", [M_RATE] = "rate", [M_SPIN] = "spin",
	[M_FULL] = "full",
};

static const char *const wl_names[NR_WORKLOADS] = {
	[W_SINGLE] = "single", [W_BULK] = "bulk64",
};

static const char *const wl_desc[NR_WORKLOADS] = {
	[W_SINGLE] = "alloc + free, one page",
	[W_BULK] = "bulk array 64 + bulk free",
};

/* Calls between two reads of the clock: a few microseconds of work. */
static const unsigned int check_every[NR_WORKLOADS] = { 1024, 32 };

struct stats_cfg {
	unsigned int runs;
	double run_ms;
	unsigned int rate;           /* reads a second in mode rate */
	int cpu;                     /* the worker's; -1: the highest */
	int reader_cpu;              /* -1: the highest other one */
	unsigned long arena_mb;
	const char *json_path;
};

/* The second thread of one measurement. */
struct other {
	struct pp_allocator *alloc;
	enum mode mode;
	unsigned int rate;
	int cpu;
	atomic_int started;
	atomic_int stop;
	unsigned long reads;
	double seconds;
};

struct cell {
	double ns[BENCH_MAX_RUNS];   /* per page, per round */
	double reads_per_s[BENCH_MAX_RUNS];
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *other_main(void *arg)
{
	struct other *o = arg;
	static _Thread_local char json[8192];
	struct timespec next;
	double t0;

	pin(o->cpu);
	atomic_store(&o->started, 1);
	t0 = now_s();
	switch (o->mode) {
	case M_IDLE:
		while (!atomic_load(&o->stop))
			usleep(10000);
		break;
	case M_RATE:
		clock_gettime(CLOCK_MONOTONIC, &next);
		while (!atomic_load(&o->stop)) {
			pp_allocator_stats_json(o->alloc, json, sizeof(json));
			o->reads++;
			next.tv_nsec += 1000000000L / o->rate;
			while (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
					NULL);
		}
		break;
	case M_SPIN:
		while (!atomic_load_explicit(&o->stop, memory_order_relaxed))
			__builtin_ia32_pause();
		break;
	case M_FULL:
		while (!atomic_load_explicit(&o->stop, memory_order_relaxed)) {
			pp_allocator_stats_json(o->alloc, json, sizeof(json));
			o->reads++;
		}
		break;
	default:
		break;
	}
	o->seconds = now_s() - t0;
	return NULL;
}

/* The worker's fast path for @ms: ns per page, or -1 with @why. */
static double work(struct pp_allocator *alloc, enum workload w, double ms,
		   char *why, size_t why_len)
{
	struct pp_page *pages[STATS_BULK];
	unsigned long done = 0;
	double t0 = now_s(), t, end = t0 + ms / 1e3;

	do {
		for (unsigned int i = 0; i < check_every[w]; i++) {
			if (w == W_SINGLE) {
				struct pp_page *p = pp_alloc_page(alloc);

				if (!p)
					goto empty;
				pp_free_page(alloc, p);
				done++;
				continue;
			}
			memset(pages, 0, sizeof(pages));
			if (pp_alloc_pages_bulk_array(alloc, STATS_BULK,
						      pages) != STATS_BULK)
				goto empty;
			pp_free_pages_bulk(alloc, pages, STATS_BULK);
			done += STATS_BULK;
		}
		t = now_s();
	} while (t < end);
	return (t - t0) * 1e9 / (double)done;
empty:
	snprintf(why, why_len, "the allocator ran out of pages");
	return -1;
}

/* One measurement: the worker beside a second thread in @mode. */
static double measure(const struct stats_cfg *cfg, struct pp_allocator *alloc,
		      enum workload w, enum mode mode, double *reads_per_s,
		      char *why, size_t why_len)
{
	struct other o = { .alloc = alloc, .mode = mode, .rate = cfg->rate,
			   .cpu = cfg->reader_cpu };
	pthread_t t;
	double ns;
	int err;

	err = pthread_create(&t, NULL, other_main, &o);
	if (err) {
		snprintf(why, why_len, "cannot start the second thread: %s",
			 strerror(err));
		return -1;
	}
	while (!atomic_load(&o.started))
		sched_yield();
	ns = work(alloc, w, cfg->run_ms, why, why_len);
	atomic_store(&o.stop, 1);
	pthread_join(t, NULL);
	*reads_per_s = o.seconds > 0 ? (double)o.reads / o.seconds : 0;
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct summary {
	double med, min, max;
};

static struct summary summarise(const double *v, unsigned int n)
{
	double s[BENCH_MAX_RUNS];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return (struct summary){ n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2,
				 s[0], s[n - 1] };
}

/* The best (shortest) run without the reader over the best with it. */
static double best_ratio(const struct cell *row, enum mode without,
			 enum mode with, unsigned int runs)
{
	return summarise(row[without].ns, runs).min /
	       summarise(row[with].ns, runs).min;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pp-bench stats [options]\n"
		"What reading the allocator's statistics costs a thread that\n"
		"allocates: a worker runs the allocator's fast path while a second\n"
		"thread, on another CPU, sleeps (idle), reads the statistics\n"
		"(pp_allocator_stats_json()) so many times a second (rate, see\n"
		"--rate), spins reading nothing (spin) or reads in a loop (full).\n"
		"Prints each mode's ns per page and the worker's speed ratios\n"
		"rate/idle and full/spin (1.00: free): the median over rounds that\n"
		"alternate the modes, and the ratio of the best runs.\n"
		"\n"
		"  --runs N        rounds (default %u)\n"
		"  --run-ms MS     time of one measurement (default %.0f)\n"
		"  --rate N        reads a second in mode rate (default %u)\n"
		"  --cpu N         the worker's CPU (default: the highest allowed)\n"
		"  --reader-cpu N  the second thread's CPU (default: the highest\n"
		"                  other one allowed)\n"
		"  --arena-mb N    arena size in MiB (default %u)\n"
		"  --json FILE     also write JSON to FILE ('-': stdout, and the\n"
		"                  table goes to stderr)\n"
		"  --quick         %u rounds of %.0f ms: a smoke test\n"
		"  -h, --help      this text\n"
		"  -V, --version   the version, and the commit it was built from\n",
		STATS_DEFAULT_RUNS, STATS_DEFAULT_MS, STATS_DEFAULT_RATE,
		STATS_DEFAULT_ARENA_MB, STATS_QUICK_RUNS, STATS_QUICK_MS);
}

static void parse(int argc, char **argv, struct stats_cfg *cfg)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "run-ms", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'R' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "reader-cpu", required_argument, NULL, 'C' },
		{ "arena-mb", required_argument, NULL, 'a' },
		{ "json", required_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct pp_cli_opts cli = {
		.tool = TOOL,
		.version_of = "pp-bench",
		.longopts = opts,
		.usage = usage,
	};
	bool runs_set = false, ms_set = false, quick = false;
	int c;

	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'r':
			cfg->runs = (unsigned int)pp_cli_uint(
				TOOL, "--runs", optarg, 1, BENCH_MAX_RUNS);
			runs_set = true;
			break;
		case 't':
			cfg->run_ms = pp_cli_double(TOOL, "--run-ms", optarg,
						    1, 60000);
			ms_set = true;
			break;
		case 'R':
			cfg->rate = (unsigned int)pp_cli_uint(
				TOOL, "--rate", optarg, 1, 100000);
			break;
		case 'c':
			cfg->cpu = (int)pp_cli_uint(TOOL, "--cpu", optarg, 0,
						    CPU_SETSIZE - 1);
			break;
		case 'C':
			cfg->reader_cpu = (int)pp_cli_uint(
				TOOL, "--reader-cpu", optarg, 0,
				CPU_SETSIZE - 1);
			break;
		case 'a':
			cfg->arena_mb = pp_cli_uint(TOOL, "--arena-mb", optarg,
						    16, 1ul << 20);
			pp_cli_fits_memory(TOOL, "--arena-mb",
					   (unsigned long long)cfg->arena_mb << 20);
			break;
		case 'j':
			cfg->json_path = optarg;
			break;
		case 'q':
			quick = true;
			break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (cfg->json_path)
		pp_cli_json_writable(TOOL, cfg->json_path);
	if (quick && !runs_set)
		cfg->runs = STATS_QUICK_RUNS;
	if (quick && !ms_set)
		cfg->run_ms = STATS_QUICK_MS;
}

/* The highest allowed CPU other than @not (-1: any); -1 if none. */
static int highest_cpu(const cpu_set_t *set, int not)
{
	for (int i = CPU_SETSIZE - 1; i >= 0; i--)
		if (CPU_ISSET(i, set) && i != not)
			return i;
	return -1;
}

static int pick_cpus(struct stats_cfg *cfg)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "%s: sched_getaffinity: %s\n", TOOL,
			strerror(errno));
		return 1;
	}
	if (cfg->cpu >= 0 && !CPU_ISSET(cfg->cpu, &set)) {
		fprintf(stderr, "%s: --cpu %d is not online or not allowed to this process (see taskset -p $$)\n",
			TOOL, cfg->cpu);
		return 2;
	}
	if (cfg->reader_cpu >= 0 && !CPU_ISSET(cfg->reader_cpu, &set)) {
		fprintf(stderr, "%s: --reader-cpu %d is not online or not allowed to this process (see taskset -p $$)\n",
			TOOL, cfg->reader_cpu);
		return 2;
	}
	if (cfg->cpu < 0)
		cfg->cpu = highest_cpu(&set, cfg->reader_cpu);
	if (cfg->reader_cpu < 0)
		cfg->reader_cpu = highest_cpu(&set, cfg->cpu);
	/* One CPU: both threads on it (the table says so). */
	if (cfg->cpu < 0)
		cfg->cpu = cfg->reader_cpu;
	if (cfg->reader_cpu < 0)
		cfg->reader_cpu = cfg->cpu;
	if (pin(cfg->cpu)) {
		fprintf(stderr, "%s: cannot pin to CPU %d\n", TOOL, cfg->cpu);
		return 1;
	}
	return 0;
}

int bench_stats_main(int argc, char **argv)
{
	static struct cell cells[NR_WORKLOADS][NR_MODES];
	static double ratio[NR_WORKLOADS][2][BENCH_MAX_RUNS];
	struct stats_cfg cfg = {
		.runs = STATS_DEFAULT_RUNS, .run_ms = STATS_DEFAULT_MS,
		.rate = STATS_DEFAULT_RATE, .cpu = -1, .reader_cpu = -1,
		.arena_mb = STATS_DEFAULT_ARENA_MB,
	};
	struct pp_arena_opts ao = { .sz = sizeof(ao), .name = "pp-bench-stats",
				    .numa_node = PP_NUMA_NODE_ANY,
				    .page_size = PP_PAGE_SIZE_AUTO,
				    .flags = PP_ARENA_F_ALLOW_4K };
	struct pp_allocator_opts lo = { .sz = sizeof(lo), .nr_arenas = 1 };
	struct pp_allocator *alloc;
	struct pp_arena *arena;
	FILE *table = stdout, *json = NULL;
	char why[96] = "";
	double reads;
	int ret;

	parse(argc, argv, &cfg);
	ret = pick_cpus(&cfg);
	if (ret)
		return ret;
	if (cfg.json_path) {
		json = pp_cli_json_open(cfg.json_path);
		if (!json) {
			fprintf(stderr, "%s: cannot write %s: %s (does its directory exist?)\n",
				TOOL, cfg.json_path, strerror(errno));
			return 1;
		}
		if (json == stdout)
			table = stderr;
	}
	ao.size = cfg.arena_mb << 20;
	arena = pp_arena_create(&ao);
	if (!arena) {
		fprintf(stderr, "%s: cannot create a %lu MiB arena: %s (see the message above; try a smaller --arena-mb)\n",
			TOOL, cfg.arena_mb, strerror(errno));
		return 1;
	}
	lo.arenas = &arena;
	alloc = pp_allocator_create(&lo);
	if (!alloc) {
		fprintf(stderr, "%s: cannot create the allocator: %s\n", TOOL,
			strerror(errno));
		pp_arena_destroy(arena);
		return 1;
	}

	/* Warm-up: the worker's cache made and filled, the code paged in. */
	for (int w = 0; w < NR_WORKLOADS && !why[0]; w++)
		if (measure(&cfg, alloc, w, M_IDLE, &reads, why,
			    sizeof(why)) < 0)
			break;
	for (unsigned int r = 0; r < cfg.runs && !why[0]; r++) {
		for (int k = 0; k < NR_MODES && !why[0]; k++) {
			enum mode m = (enum mode)((k + r) % NR_MODES);

			for (int w = 0; w < NR_WORKLOADS && !why[0]; w++) {
				struct cell *c = &cells[w][m];

				c->ns[r] = measure(&cfg, alloc, w, m,
						   &c->reads_per_s[r], why,
						   sizeof(why));
			}
		}
		for (int w = 0; w < NR_WORKLOADS && !why[0]; w++) {
			ratio[w][0][r] = cells[w][M_IDLE].ns[r] /
					 cells[w][M_RATE].ns[r];
			ratio[w][1][r] = cells[w][M_SPIN].ns[r] /
					 cells[w][M_FULL].ns[r];
		}
	}
	pp_allocator_drain_thread(alloc);
	if (pp_allocator_destroy(alloc) == 0)
		pp_arena_destroy(arena);
	if (why[0]) {
		fprintf(stderr, "%s: %s\n", TOOL, why);
		return 1;
	}

	fprintf(table, "pp-bench stats: the allocator's fast path beside a reader of pp_allocator_stats_json()\n");
	fprintf(table, "worker on CPU %d, second thread on CPU %d%s; %u rounds of %.0f ms per mode, modes alternated; medians (min-max)\n\n",
		cfg.cpu, cfg.reader_cpu,
		cfg.cpu == cfg.reader_cpu ? " (the same CPU: one allowed)" : "",
		cfg.runs, cfg.run_ms);
	fprintf(table, "%-27s %-22s %24s %14s\n", "worker", "second thread",
		"ns/page", "reads/s");
	for (int w = 0; w < NR_WORKLOADS; w++) {
		for (int m = 0; m < NR_MODES; m++) {
			struct summary ns = summarise(cells[w][m].ns, cfg.runs);
			struct summary rd = summarise(cells[w][m].reads_per_s,
						      cfg.runs);
			char label[32];

			if (m == M_RATE)
				snprintf(label, sizeof(label), "reads %u/s",
					 cfg.rate);
			else if (m == M_FULL)
				snprintf(label, sizeof(label), "reads, full speed");
			else
				snprintf(label, sizeof(label), "%s",
					 m == M_IDLE ? "idle" :
						       "spins, reads nothing");
			fprintf(table, "%-27s %-22s %8.2f (%6.2f-%6.2f) %14.0f\n",
				wl_desc[w], label, ns.med, ns.min, ns.max,
				rd.med);
		}
	}
	fprintf(table, "\nworker speed with the reader / without it: median of the rounds' ratios (min-max); best runs' ratio\n");
	for (int w = 0; w < NR_WORKLOADS; w++) {
		struct summary a = summarise(ratio[w][0], cfg.runs);
		struct summary b = summarise(ratio[w][1], cfg.runs);

		fprintf(table, "%-27s %u/s vs idle %.3fx (%.3f-%.3f); best %.3fx   full speed vs spin %.3fx (%.3f-%.3f); best %.3fx\n",
			wl_desc[w], cfg.rate, a.med, a.min, a.max,
			best_ratio(cells[w], M_IDLE, M_RATE, cfg.runs), b.med,
			b.min, b.max,
			best_ratio(cells[w], M_SPIN, M_FULL, cfg.runs));
	}

	if (!json)
		return 0;
	fprintf(json, "{\n");
	pp_cli_json_ident(json, "pp-bench");
	fprintf(json, "\n  \"benchmark\": \"stats\",\n  \"parameters\": {\"runs\": %u, \"run_ms\": %.1f, \"rate\": %u, \"worker_cpu\": %d, \"reader_cpu\": %d},\n  \"cases\": [\n",
		cfg.runs, cfg.run_ms, cfg.rate, cfg.cpu, cfg.reader_cpu);
	for (int w = 0; w < NR_WORKLOADS; w++) {
		for (int m = 0; m < NR_MODES; m++) {
			struct summary ns = summarise(cells[w][m].ns, cfg.runs);
			struct summary rd = summarise(cells[w][m].reads_per_s,
						      cfg.runs);

			fprintf(json, "    {\"workload\": \"%s\", \"mode\": \"%s\", \"ns_per_page\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f}, \"reads_per_s\": %.1f}%s\n",
				wl_names[w], mode_names[m], ns.med, ns.min,
				ns.max, rd.med,
				w + 1 < NR_WORKLOADS || m + 1 < NR_MODES ?
					"," : "");
		}
	}
	fprintf(json, "  ],\n  \"ratios\": [\n");
	for (int w = 0; w < NR_WORKLOADS; w++) {
		for (int i = 0; i < 2; i++) {
			struct summary s = summarise(ratio[w][i], cfg.runs);

			fprintf(json, "    {\"workload\": \"%s\", \"reader\": \"%s\", \"baseline\": \"%s\", \"median\": %.4f, \"min\": %.4f, \"max\": %.4f, \"best\": %.4f}%s\n",
				wl_names[w], i ? "full" : "rate",
				i ? "spin" : "idle", s.med, s.min, s.max,
				best_ratio(cells[w], i ? M_SPIN : M_IDLE,
					   i ? M_FULL : M_RATE, cfg.runs),
				w + 1 < NR_WORKLOADS || i == 0 ? "," : "");
		}
	}
	fprintf(json, "  ]\n}\n");
	if (pp_cli_json_close(json)) {
		fprintf(stderr, "%s: writing %s failed\n", TOOL, cfg.json_path);
		return 1;
	}
	return 0;
}
