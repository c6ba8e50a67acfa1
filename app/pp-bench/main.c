/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - pp-bench: options, the memory and CPU it runs on, and the order
 * of the cases (baselines first, as the kernel's page_bench does).
 *
 * Exit status: 0 when the benchmark ran (individual cases that failed are
 * marked in the table and the JSON), 1 when it could not set up (arena,
 * allocator, output file), 2 for a bad command line.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "pp_cli.h"
#include "growth.h"
#include "memory.h"
#include "scale.h"
#include "stats.h"
#include "tlb.h"

#define DEFAULT_RUNS 7
#define DEFAULT_ARENA_MB 256
/* Long enough that a run spans many refill and drain batches, short
 * enough that the whole table takes seconds. */
#define DEFAULT_RUN_MS 20.0
#define QUICK_RUNS 3
#define QUICK_RUN_MS 0.5

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pp-bench [options]\n"
		"Microbenchmarks of the pagepool allocator and page_pool, beside\n"
		"DPDK's rte_mempool when built with DPDK. Prints a table; each figure\n"
		"is the median over the runs, in ns and TSC cycles per operation.\n"
		"\n"
		"  --runs N        timed runs per case after a warm-up (default %d)\n"
		"  --cpu N         CPU to pin to (default: the highest one allowed)\n"
		"  --arena-mb N    arena size in MiB (default %d); hugepages of the\n"
		"                  largest size that fits, else 4 KiB pages\n"
		"  --run-ms MS     time one run aims at (default %.0f)\n"
		"  --json FILE     also write the results as JSON to FILE ('-': stdout,\n"
		"                  and the table goes to stderr)\n"
		"  --quick         %d short runs per case: a smoke test, rough figures\n"
		"  --no-dpdk       skip the DPDK column even when built with it\n"
		"  -h, --help      this text\n"
		"  -V, --version   the version, and the commit it was built from\n"
		"\n"
		"pp-bench tlb [options]: the page-size (TLB) benchmark of huge\n"
		"vmalloc areas; 'pp-bench tlb --help' lists its options.\n"
		"pp-bench scale [options]: thread scaling of the allocator and\n"
		"page_pool beside rte_mempool; 'pp-bench scale --help'.\n"
		"pp-bench memory [options]: arena bytes per in-flight frame,\n"
		"pages and fragments beside DPDK mbufs; 'pp-bench memory --help'.\n"
		"pp-bench stats [options]: the allocator's fast path beside a\n"
		"statistics reader, as speed ratios; 'pp-bench stats --help'.\n"
		"pp-bench growth [options]: hugepages held and per-burst cost\n"
		"under traffic that steps up and down, growable arena against\n"
		"fixed and DPDK; 'pp-bench growth --help'.\n",
		DEFAULT_RUNS, DEFAULT_ARENA_MB, DEFAULT_RUN_MS, QUICK_RUNS);
}

static void parse_args(int argc, char **argv, struct bench_cfg *cfg)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "arena-mb", required_argument, NULL, 'a' },
		{ "run-ms", required_argument, NULL, 't' },
		{ "json", required_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ "no-dpdk", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct pp_cli_opts cli = {
		.tool = "pp-bench",
		.longopts = opts,
		.usage = usage,
	};
	bool runs_set = false, ms_set = false;
	int c;

	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'r':
			cfg->runs = (unsigned int)pp_cli_uint(cli.tool, "--runs",
							      optarg, 1,
							      BENCH_MAX_RUNS);
			runs_set = true;
			break;
		case 'c':
			cfg->cpu = (int)pp_cli_uint(cli.tool, "--cpu", optarg, 0,
						    CPU_SETSIZE - 1);
			break;
		case 'a':
			/* 16 MiB holds every case's pages many times over. */
			cfg->arena_mb = (unsigned long)pp_cli_uint(
				cli.tool, "--arena-mb", optarg, 16, 1ul << 20);
			pp_cli_fits_memory(cli.tool, "--arena-mb",
					   (unsigned long long)cfg->arena_mb << 20);
			break;
		case 't':
			cfg->run_ms = pp_cli_double(cli.tool, "--run-ms", optarg,
						    0.01, 10000);
			ms_set = true;
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
		pp_cli_json_writable(cli.tool, cfg->json_path);
	if (cfg->quick) {
		if (!runs_set)
			cfg->runs = QUICK_RUNS;
		if (!ms_set)
			cfg->run_ms = QUICK_RUN_MS;
	}
}

/* Pin to --cpu, or by default to the highest CPU we may run on (CPU 0
 * takes most of the interrupts and housekeeping on small machines). */
static void pin_cpu(struct bench_cfg *cfg)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "pp-bench: sched_getaffinity: %s\n", strerror(errno));
		exit(1);
	}
	if (cfg->cpu < 0) {
		for (i = CPU_SETSIZE - 1; i >= 0 && !CPU_ISSET(i, &set); i--)
			;
		cfg->cpu = i < 0 ? 0 : i;
	} else if (!CPU_ISSET(cfg->cpu, &set)) {
		pp_cli_usage_error("pp-bench", "--cpu %d is not online or not allowed to this process (see taskset -p $$)",
				   cfg->cpu);
	}
	CPU_ZERO(&set);
	CPU_SET(cfg->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "pp-bench: cannot pin to CPU %d: %s\n", cfg->cpu,
			strerror(errno));
		exit(1);
	}
}

static int setup_memory(struct bench_cfg *cfg)
{
	struct pp_arena_opts ao;
	struct pp_allocator_opts lo;

	memset(&ao, 0, sizeof(ao));
	ao.sz = sizeof(ao);
	ao.size = cfg->arena_mb << 20;
	ao.page_size = PP_PAGE_SIZE_AUTO;
	ao.numa_node = PP_NUMA_NODE_ANY;
	ao.flags = PP_ARENA_F_ALLOW_4K;
	ao.name = "pp-bench";
	cfg->arena = pp_arena_create(&ao);
	if (!cfg->arena) {
		fprintf(stderr, "pp-bench: cannot create a %lu MiB arena: %s (see the message above; try a smaller --arena-mb)\n",
			cfg->arena_mb, strerror(errno));
		return -1;
	}

	memset(&lo, 0, sizeof(lo));
	lo.sz = sizeof(lo);
	lo.arenas = &cfg->arena;
	lo.nr_arenas = 1;
	cfg->alloc = pp_allocator_create(&lo);
	if (!cfg->alloc) {
		fprintf(stderr, "pp-bench: cannot create the allocator: %s\n",
			strerror(errno));
		pp_arena_destroy(cfg->arena);
		return -1;
	}
	return 0;
}

static void teardown_memory(struct bench_cfg *cfg)
{
	int ret;

	pp_allocator_drain_thread(cfg->alloc);
	ret = pp_allocator_destroy(cfg->alloc);
	if (ret) {
		/* A leak in a case: say so, and keep the arena mapped. */
		fprintf(stderr, "pp-bench: pp_allocator_destroy: %s\n",
			strerror(-ret));
		return;
	}
	pp_arena_destroy(cfg->arena);
}

static void start_dpdk(struct bench_cfg *cfg, struct bench_dpdk_info *info)
{
	memset(info, 0, sizeof(*info));
#ifdef PP_BENCH_HAVE_DPDK
	info->built = true;
	if (!cfg->dpdk) {
		snprintf(info->status, sizeof(info->status), "off (--no-dpdk)");
		return;
	}
	bench_dpdk_init(cfg, info);
#else
	(void)cfg;
	snprintf(info->status, sizeof(info->status),
		 "not built (install dpdk-dev)");
#endif
}

int main(int argc, char **argv)
{
	static struct bench_results res;
	struct bench_cfg cfg = {
		.runs = DEFAULT_RUNS,
		.cpu = -1,
		.arena_mb = DEFAULT_ARENA_MB,
		.run_ms = DEFAULT_RUN_MS,
		.dpdk = true,
	};
	struct bench_machine machine;
	struct bench_dpdk_info dpdk;
	FILE *json = NULL, *table = stdout;
	int ret = 0;

	/* A subcommand with options of its own; the default is unchanged. */
	if (argc > 1 && !strcmp(argv[1], "tlb"))
		return bench_tlb_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "scale"))
		return bench_scale_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "memory"))
		return bench_memory_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "stats"))
		return bench_stats_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "growth"))
		return bench_growth_main(argc - 1, argv + 1);
	parse_args(argc, argv, &cfg);
	pin_cpu(&cfg);
	if (cfg.json_path && !strcmp(cfg.json_path, "-")) {
		json = stdout;
		table = stderr;
	} else if (cfg.json_path) {
		json = fopen(cfg.json_path, "w");
		if (!json) {
			fprintf(stderr, "pp-bench: cannot write %s: %s (does its directory exist?)\n",
				cfg.json_path, strerror(errno));
			return 1;
		}
	}
	bench_machine_read(&machine);
	if (bench_tsc_calibrate(cfg.quick ? 10 : 100, &cfg.tsc_ghz)) {
		fprintf(stderr, "pp-bench: the TSC does not advance: cannot time anything\n");
		return 1;
	}
	if (setup_memory(&cfg))
		return 1;
	/* After the arena, so that the EAL's few pages never starve it. */
	start_dpdk(&cfg, &dpdk);

	bench_baselines(&cfg, &res);
	bench_cache_entry(&cfg, &res);
	bench_alloc_cases(&cfg, &res);
#ifdef PP_BENCH_HAVE_DPDK
	if (dpdk.ok)
		bench_dpdk_cases(&cfg, &res);
#endif
	bench_pool_cases(&cfg, &res);
	bench_sunrpc_cases(&cfg, &res);

	bench_report_table(table, &cfg, &machine, &dpdk, &res);
	if (json) {
		if (bench_report_json(json, &cfg, &machine, &dpdk, &res) ||
		    (json != stdout && fclose(json))) {
			fprintf(stderr, "pp-bench: writing %s failed: %s\n",
				cfg.json_path, strerror(errno));
			ret = 1;
		}
	}
#ifdef PP_BENCH_HAVE_DPDK
	bench_dpdk_fini();
#endif
	teardown_memory(&cfg);
	return ret;
}
