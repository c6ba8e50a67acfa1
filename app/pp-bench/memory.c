/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory.c - `pp-bench memory`: arena bytes per in-flight frame. A pool
 * hands out N receive buffers at once, as a driver's RX rings and the
 * frames in flight hold them, and the figure is what that took from the
 * arena, read back from the allocator (pages allocated, the pool's cache
 * included, plus the 64-byte descriptor each page has), divided by N:
 *
 *   pages          one 4 KiB page per frame (XDP's model, AF_XDP's);
 *   fragments      one fragment per frame, PP_FRAME_HEADROOM + the frame
 *                  rounded up to a cache line (what the drivers' frag=
 *                  option takes), split from 4 KiB blocks, and from 32
 *                  KiB blocks (a pool of order 3), where less is left
 *                  over at the end of each block;
 *   DPDK           an rte_pktmbuf pool of N mbufs under DPDK's own
 *                  mempool ops, read back from the chunks it populated:
 *                  sized for the frame (RTE_PKTMBUF_HEADROOM + frame),
 *                  and with the default buffer (2048 + headroom) that
 *                  testpmd and most applications use.
 *
 * Nothing is timed: the figures are exact for this build, and the same on
 * every run.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pagepool/pagepool.h>

#include "bench.h"
#include "memory.h"
#include "pp_cli.h"

#define TOOL "pp-bench memory"
#define MEMORY_DEFAULT_FRAMES 16384
#define MEMORY_QUICK_FRAMES 1024
#define MEMORY_MAX_FRAMES (1u << 20)
/* What DPDK's rte_mbuf_core.h calls RTE_PKTMBUF_HEADROOM and
 * RTE_MBUF_DEFAULT_DATAROOM in its default configuration. */
#define DPDK_HEADROOM 128
#define DPDK_DEFAULT_DATAROOM 2048

enum column { C_PAGES, C_FRAG_4K, C_FRAG_32K, C_DPDK_FIT, C_DPDK_DEFAULT,
	      NR_COLUMNS };

static const char *const column_names[NR_COLUMNS] = {
	[C_PAGES] = "pages",
	[C_FRAG_4K] = "fragments_4k_blocks",
	[C_FRAG_32K] = "fragments_32k_blocks",
	[C_DPDK_FIT] = "dpdk_mbuf_fit",
	[C_DPDK_DEFAULT] = "dpdk_mbuf_default",
};

struct cell {
	bool ok;
	double bytes;          /* per frame */
	unsigned int buf;      /* bytes of each buffer or element */
	char why[160];
};

struct memory_cfg {
	unsigned int frames;
	const char *json_path;
	bool dpdk;
	int cpu;
};

static const unsigned int frame_sizes[] = { 64, 1500 };
#define NR_FRAME_SIZES (sizeof(frame_sizes) / sizeof(frame_sizes[0]))

static char last_log[160];

static void log_capture(enum pp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level <= PP_LOG_WARN)
		snprintf(last_log, sizeof(last_log), "%s", msg);
}

#ifndef PP_BENCH_HAVE_DPDK
int bench_memory_dpdk(int cpu, unsigned int n, unsigned int data_room,
		      double *bytes, unsigned int *elt, char *why,
		      size_t why_len)
{
	(void)cpu, (void)n, (void)data_room, (void)bytes, (void)elt;
	snprintf(why, why_len, "pp-bench was built without DPDK (install dpdk-dev and rebuild)");
	return -1;
}

void bench_memory_dpdk_stop(void)
{
}
#endif

static unsigned long allocated_pages(struct pp_allocator *alloc)
{
	struct pp_zone_stats zs;

	if (pp_allocator_zone_stats(alloc, 0, &zs))
		return 0;
	return zs.managed_pages - zs.free_pages - zs.thread_cache_pages;
}

/*
 * Hold @n buffers of @size bytes (0: whole blocks) from a pool of
 * @order over @alloc, read what the allocator handed out, give them back.
 */
static void measure_pool(struct pp_allocator *alloc, unsigned int order,
			 unsigned int size, unsigned int n, struct cell *out)
{
	struct pp_pool_params params = {
		.sz = sizeof(params),
		.allocator = alloc,
		.order = order,
		.nid = PP_NUMA_NODE_ANY,
		.dma_dir = PP_DMA_FROM_DEVICE,
		.name = "pp-bench-mem",
	};
	unsigned long before = allocated_pages(alloc), pages;
	struct pp_page **held = calloc(n, sizeof(*held));
	struct pp_pool *pool;
	unsigned int i, off;

	out->buf = size ? (unsigned int)((size + PP_CACHE_LINE - 1) &
					 ~(PP_CACHE_LINE - 1))
			: PP_PAGE_SIZE << order;
	pool = held ? pp_pool_create(&params) : NULL;
	if (!pool) {
		snprintf(out->why, sizeof(out->why), "no pool: %s",
			 strerror(errno));
		free(held);
		return;
	}
	for (i = 0; i < n; i++) {
		held[i] = size ? pp_pool_alloc_frag(pool, &off, size)
			       : pp_pool_alloc_pages(pool);
		if (!held[i])
			break;
	}
	pages = allocated_pages(alloc) - before;
	if (i == n) {
		out->ok = true;
		out->bytes = (double)pages * (PP_PAGE_SIZE + sizeof(struct pp_page)) / n;
	} else {
		snprintf(out->why, sizeof(out->why),
			 "the arena ran dry after %u buffers: %.100s", i,
			 last_log[0] ? last_log : "no message");
	}
	while (i--)
		pp_pool_put_page(pool, held[i], (unsigned int)-1, true);
	if (pp_pool_destroy(pool))
		snprintf(out->why, sizeof(out->why),
			 "pages still in flight at destroy"), out->ok = false;
	free(held);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pp-bench memory [options]\n"
		"Arena bytes per in-flight frame: N receive buffers held at\n"
		"once, for 64 and 1500-byte frames, as whole pages, as page_pool\n"
		"fragments and, beside them, as DPDK mbufs. Prints a table; the\n"
		"figures are read back from the allocator and from DPDK's pool.\n"
		"\n"
		"  --frames N      buffers held at once (default %u)\n"
		"  --cpu N         CPU for DPDK's EAL (default: the first allowed)\n"
		"  --json FILE     also write JSON to FILE ('-': stdout, and the\n"
		"                  table goes to stderr)\n"
		"  --quick         %u frames: a smoke test\n"
		"  --no-dpdk       leave the DPDK columns out\n"
		"  -h, --help      this text\n"
		"  -V, --version   the version, and the commit it was built from\n",
		MEMORY_DEFAULT_FRAMES, MEMORY_QUICK_FRAMES);
}

static void parse(int argc, char **argv, struct memory_cfg *cfg)
{
	static const struct option opts[] = {
		{ "frames", required_argument, NULL, 'n' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ "no-dpdk", no_argument, NULL, 'D' },
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
	int c;

	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'n':
			cfg->frames = (unsigned int)pp_cli_uint(
				TOOL, "--frames", optarg, 1, MEMORY_MAX_FRAMES);
			break;
		case 'c':
			cfg->cpu = (int)pp_cli_int(TOOL, "--cpu", optarg, 0,
						   4095);
			break;
		case 'j':
			cfg->json_path = optarg;
			break;
		case 'q':
			cfg->frames = MEMORY_QUICK_FRAMES;
			break;
		case 'D':
			cfg->dpdk = false;
			break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (cfg->json_path)
		pp_cli_json_writable(TOOL, cfg->json_path);
}

static void print_cell(FILE *f, const struct cell *c)
{
	if (c->ok)
		fprintf(f, "  %9.0f (%4u)", c->bytes, c->buf);
	else
		fprintf(f, "  %16s", "skipped");
}

static void json_cell(FILE *f, const struct cell *c)
{
	if (c->ok) {
		fprintf(f, "{\"status\": \"ok\", \"bytes_per_frame\": %.1f, \"buffer_bytes\": %u}",
			c->bytes, c->buf);
		return;
	}
	fprintf(f, "{\"status\": \"skipped\", \"reason\": ");
	pp_cli_json_str(f, c->why);
	fputc('}', f);
}

int bench_memory_main(int argc, char **argv)
{
	struct memory_cfg cfg = { .frames = MEMORY_DEFAULT_FRAMES,
				  .dpdk = true, .cpu = -1 };
	struct cell cells[NR_FRAME_SIZES][NR_COLUMNS];
	struct pp_arena_opts ao = { .sz = sizeof(ao), .name = "pp-bench-mem",
				    .numa_node = PP_NUMA_NODE_ANY };
	struct pp_allocator_opts lo = { .sz = sizeof(lo), .nr_arenas = 1 };
	struct pp_allocator *alloc;
	struct pp_arena *arena;
	FILE *table = stdout, *json = NULL;
	unsigned int s, col;

	parse(argc, argv, &cfg);
	if (cfg.cpu < 0) {
		cpu_set_t set;

		cfg.cpu = 0;
		if (!sched_getaffinity(0, sizeof(set), &set))
			while (cfg.cpu < CPU_SETSIZE - 1 &&
			       !CPU_ISSET(cfg.cpu, &set))
				cfg.cpu++;
	}
	memset(cells, 0, sizeof(cells));
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
	pp_log_set_handler(log_capture, NULL, PP_LOG_WARN);
	/* Room for every page at once and a pool cache of blocks besides:
	 * 2 MiB pages where free, else 4 KiB ones (the figure is the same). */
	ao.size = ((size_t)cfg.frames * PP_PAGE_SIZE * 5 / 4 + (8u << 20) +
		   (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	ao.page_size = PP_PAGE_SIZE_AUTO;
	arena = pp_arena_create(&ao);
	if (!arena) {
		fprintf(stderr, "%s: no arena of %zu MiB: %s (reserve hugepages with pp-hugepages, or use --frames to ask for less)\n",
			TOOL, ao.size >> 20, last_log[0] ? last_log : strerror(errno));
		return 1;
	}
	lo.arenas = &arena;
	alloc = pp_allocator_create(&lo);
	if (!alloc) {
		fprintf(stderr, "%s: no allocator: %s\n", TOOL, last_log);
		pp_arena_destroy(arena);
		return 1;
	}
	for (s = 0; s < NR_FRAME_SIZES; s++) {
		unsigned int frame = frame_sizes[s];
		unsigned int frag = PP_FRAME_HEADROOM + frame;
		struct cell *row = cells[s];

		measure_pool(alloc, 0, 0, cfg.frames, &row[C_PAGES]);
		measure_pool(alloc, 0, frag, cfg.frames, &row[C_FRAG_4K]);
		if (pp_allocator_max_order(alloc) >= 3)
			measure_pool(alloc, 3, frag, cfg.frames,
				     &row[C_FRAG_32K]);
		else
			snprintf(row[C_FRAG_32K].why,
				 sizeof(row[C_FRAG_32K].why),
				 "the arena's pages are too small for 32 KiB blocks");
		if (!cfg.dpdk) {
			snprintf(row[C_DPDK_FIT].why, sizeof(row[0].why),
				 "--no-dpdk");
			snprintf(row[C_DPDK_DEFAULT].why, sizeof(row[0].why),
				 "--no-dpdk");
			continue;
		}
		row[C_DPDK_FIT].ok = !bench_memory_dpdk(
			cfg.cpu, cfg.frames, DPDK_HEADROOM + frame,
			&row[C_DPDK_FIT].bytes, &row[C_DPDK_FIT].buf,
			row[C_DPDK_FIT].why, sizeof(row[0].why));
		row[C_DPDK_DEFAULT].ok = !bench_memory_dpdk(
			cfg.cpu, cfg.frames,
			DPDK_HEADROOM + DPDK_DEFAULT_DATAROOM,
			&row[C_DPDK_DEFAULT].bytes, &row[C_DPDK_DEFAULT].buf,
			row[C_DPDK_DEFAULT].why, sizeof(row[0].why));
	}
	bench_memory_dpdk_stop();
	pp_allocator_destroy(alloc);
	pp_arena_destroy(arena);

	fprintf(table, "pp-bench memory: arena bytes per in-flight frame, %u buffers held at once\n",
		cfg.frames);
	fprintf(table, "(buffer or element bytes in brackets; pagepool figures include the 64-byte\n"
		       " descriptor of each page and the pool's cache; headroom %u B ours, %u B DPDK's)\n\n",
		PP_FRAME_HEADROOM, DPDK_HEADROOM);
	fprintf(table, "%-7s  %16s  %16s  %16s  %16s  %16s  %s\n", "frame",
		"pages", "frags 4K blocks", "frags 32K blocks", "DPDK mbuf fit",
		"DPDK mbuf 2176", "frags/DPDK fit");
	for (s = 0; s < NR_FRAME_SIZES; s++) {
		const struct cell *row = cells[s];

		fprintf(table, "%4u B ", frame_sizes[s]);
		for (col = 0; col < NR_COLUMNS; col++)
			print_cell(table, &row[col]);
		if (row[C_FRAG_4K].ok && row[C_DPDK_FIT].ok)
			fprintf(table, "  %.2f / %.2f",
				row[C_FRAG_4K].bytes / row[C_DPDK_FIT].bytes,
				row[C_FRAG_32K].ok ?
					row[C_FRAG_32K].bytes /
						row[C_DPDK_FIT].bytes :
					0.0);
		fputc('\n', table);
	}
	for (s = 0; s < NR_FRAME_SIZES; s++)
		for (col = 0; col < NR_COLUMNS; col++)
			if (!cells[s][col].ok)
				fprintf(table, "skipped: %u B %s: %s\n",
					frame_sizes[s], column_names[col],
					cells[s][col].why);

	if (json) {
		fprintf(json, "{\n");
		pp_cli_json_ident(json, "pp-bench");
		fprintf(json, "\n  \"benchmark\": \"memory\",\n  \"frames\": %u,\n  \"headroom\": {\"pagepool\": %u, \"dpdk\": %u},\n  \"cases\": [\n",
			cfg.frames, PP_FRAME_HEADROOM, DPDK_HEADROOM);
		for (s = 0; s < NR_FRAME_SIZES; s++) {
			fprintf(json, "    {\"frame_bytes\": %u", frame_sizes[s]);
			for (col = 0; col < NR_COLUMNS; col++) {
				fprintf(json, ", \"%s\": ", column_names[col]);
				json_cell(json, &cells[s][col]);
			}
			fprintf(json, "}%s\n", s + 1 < NR_FRAME_SIZES ? "," : "");
		}
		fprintf(json, "  ]\n}\n");
		if (pp_cli_json_close(json)) {
			fprintf(stderr, "%s: writing %s failed\n", TOOL,
				cfg.json_path);
			return 1;
		}
	}
	return 0;
}
