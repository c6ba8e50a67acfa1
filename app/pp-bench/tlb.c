/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tlb.c - `pp-bench tlb`: what the page size of a big table is worth, the
 * case the huge vmalloc was made for (the kernel's vfs and network hash
 * tables). Tables of 64 MiB, 1 GiB and 4 GiB, each backed by 4 KiB, 2 MiB
 * and 1 GiB pages (pp_vmalloc areas), measured side by side, alternating,
 * in one run:
 *
 *   - chained hash lookups: hash the key, load the bucket pointer, follow
 *     it (and the chain) to the entry whose key matches; the next key is
 *     read from that entry, so every load depends on the one before and
 *     each lookup pays its TLB misses in full;
 *   - independent random reads: addresses from a generator, not from
 *     memory, so the core overlaps many misses; page walks cost less here.
 *
 * Figures are ns per lookup or read, the median of several runs, and the
 * throughput ratio against 4 KiB pages of the same table. dTLB load misses
 * come from perf_event_open() where the machine has hardware counters; a
 * VM without them is told so, not shown zeros.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pagepool/pagepool.h>

#include "bench.h"
#include "pp_cli.h"
#include "tlb.h"
#include "timing.h"

#define MiB (1UL << 20)
#define GiB (1UL << 30)

/* Names the subcommand in its messages. */
#define TLB_TOOL "pp-bench tlb"
#define TLB_DEFAULT_RUNS 5
#define TLB_QUICK_RUNS 3
/*
 * Lookups per timed run: at 0.2-1 us each on a VM (a few dependent cache
 * misses per lookup), 0.2-1 s a run: long enough that a timer tick or a
 * neighbour's burst moves the figure little, short enough that 5 runs of
 * 9 cases fit in about two minutes.
 */
#define TLB_DEFAULT_LOOKUPS (1UL << 20)
#define TLB_QUICK_LOOKUPS (128UL << 10)
#define TLB_MAX_SIZES 8
#define TLB_MAX_RUNS 101

enum backing { B_4K, B_2M, B_1G, NR_BACKINGS };

static const struct {
	const char *name;
	size_t page_size;
	/*
	 * Exactly one page size per table, or the case is skipped: a table
	 * said to be on 2 MiB pages that fell back to 4 KiB would lie.
	 * 1 GiB rounds up, so a 64 MiB table can sit on one 1 GiB page.
	 */
	unsigned int flags;
} backings[NR_BACKINGS] = {
	[B_4K] = { "4k", PP_PAGE_SIZE_4K, PP_VMALLOC_F_NO_HUGE },
	[B_2M] = { "2m", PP_PAGE_SIZE_2M,
		   PP_VMALLOC_F_NO_1G | PP_VMALLOC_F_ROUND_UP |
			   PP_VMALLOC_F_NO_FALLBACK },
	[B_1G] = { "1g", PP_PAGE_SIZE_1G,
		   PP_VMALLOC_F_NO_2M | PP_VMALLOC_F_ROUND_UP |
			   PP_VMALLOC_F_NO_FALLBACK },
};

/* One hash entry: a cache line, like a kernel hash node with its data. */
struct entry {
	uint64_t key;
	struct entry *next;	/* bucket chain */
	uint64_t next_key;	/* the key the following lookup asks for */
	uint64_t payload[5];
};
_Static_assert(sizeof(struct entry) == 64, "one cache line per entry");

struct table {
	struct pp_vm_area *area;
	size_t bytes;
	struct entry **buckets;
	unsigned int bucket_bits;
	struct entry *entries;
	uint64_t nr_entries;
	uint64_t first_key;
};

struct tlb_case {
	size_t bytes;
	enum backing b;
	struct table t;
	bool ok;
	char why[256];
	char area_json[512];
	double dep_ns[TLB_MAX_RUNS], ind_ns[TLB_MAX_RUNS];
	double dep_miss[TLB_MAX_RUNS], ind_miss[TLB_MAX_RUNS];
	double dep_med, ind_med, dep_miss_med, ind_miss_med;
};

struct tlb_cfg {
	size_t sizes[TLB_MAX_SIZES];
	unsigned int nr_sizes;
	unsigned int runs;
	unsigned long lookups;
	int cpu;
	bool quick;
	const char *json_path;
};

/* The library's last error, to say why a case was skipped. */
static char last_log[256];

static void log_capture(enum pp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level <= PP_LOG_WARN)
		snprintf(last_log, sizeof(last_log), "%s", msg);
}

/* splitmix64: a bijection, so keys made from distinct indexes differ. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Fibonacci hashing: the top bits of key * 2^64 / phi. */
static inline uint64_t hash_key(uint64_t key, unsigned int bits)
{
	return (key * 0x9e3779b97f4a7c15ULL) >> (64 - bits);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Lay the table out in the area: a power-of-two bucket array in its first
 * eighth, entries in the rest: 7/8 of an entry per bucket, so a lookup
 * reads the bucket and 1.4 entries on average, like a kernel hash table
 * sized to its load. Entry i's next_key is entry
 * (i + stride)'s key, stride about N / phi and coprime with N, so the
 * lookups visit every entry once per cycle and jump far each time.
 */
static void table_build(struct table *t)
{
	uint64_t n, stride;
	unsigned int bits = 0;

	while ((8UL << (bits + 1)) <= t->bytes / 8)
		bits++;
	t->bucket_bits = bits;
	t->buckets = pp_vm_area_addr(t->area);
	t->entries = (struct entry *)(t->buckets + (1UL << bits));
	n = (t->bytes - (8UL << bits)) / sizeof(struct entry);
	t->nr_entries = n;
	stride = (uint64_t)((double)n * 0.6180339887);
	while (gcd(stride, n) != 1)
		stride++;
	for (uint64_t i = 0; i < n; i++) {
		struct entry *e = &t->entries[i];
		uint64_t h;

		e->key = mix64(i);
		e->next_key = mix64((i + stride) % n);
		e->payload[0] = i;
		h = hash_key(e->key, bits);
		e->next = t->buckets[h];
		t->buckets[h] = e;
	}
	t->first_key = mix64(0);
}

/* Dependent lookups; returns the last key so nothing is optimised out. */
static uint64_t run_lookups(const struct table *t, uint64_t key,
			    unsigned long n)
{
	struct entry *const *buckets = t->buckets;
	unsigned int bits = t->bucket_bits;

	for (unsigned long i = 0; i < n; i++) {
		const struct entry *e = buckets[hash_key(key, bits)];

		while (e->key != key)
			e = e->next;
		key = e->next_key;
	}
	return key;
}

/* Independent reads of random words anywhere in the table. */
static uint64_t run_reads(const struct table *t, uint64_t seed,
			  unsigned long n)
{
	const uint64_t *w = pp_vm_area_addr(t->area);
	uint64_t words = t->bytes / 8, x = seed, sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		/* An LCG (Knuth's MMIX constants); the high bits are good. */
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sum += w[(x >> 16) % words];
	}
	return sum;
}

/* ---- dTLB misses through perf_event_open, where counters exist ---- */

static int perf_open(char *why, size_t len)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HW_CACHE;
	a.config = PERF_COUNT_HW_CACHE_DTLB |
		   (PERF_COUNT_HW_CACHE_OP_READ << 8) |
		   (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		snprintf(why, len,
			 "no dTLB-load-misses counter here (perf_event_open: %s): a VM without hardware counters, or perf_event_paranoid too high",
			 strerror(errno));
	else
		snprintf(why, len, "dTLB-load-misses (perf_event_open)");
	return fd;
}

static uint64_t perf_read(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, unsigned int n)
{
	double tmp[TLB_MAX_RUNS];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* One timed run of each pattern on one table. */
static void measure(struct tlb_case *c, unsigned int run, unsigned long n,
		    int perf_fd)
{
	static volatile uint64_t sink;
	uint64_t m0, m1;
	double t0, t1;

	if (perf_fd >= 0)
		ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	m0 = perf_read(perf_fd);
	t0 = now_ns();
	sink = run_lookups(&c->t, c->t.first_key, n);
	t1 = now_ns();
	m1 = perf_read(perf_fd);
	c->dep_ns[run] = (t1 - t0) / (double)n;
	c->dep_miss[run] = (double)(m1 - m0) / (double)n;

	m0 = perf_read(perf_fd);
	t0 = now_ns();
	sink = run_reads(&c->t, 0x2545f4914f6cdd1dULL + run, n);
	t1 = now_ns();
	m1 = perf_read(perf_fd);
	if (perf_fd >= 0)
		ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	c->ind_ns[run] = (t1 - t0) / (double)n;
	c->ind_miss[run] = (double)(m1 - m0) / (double)n;
	bench_keep(sink);
}

static void case_setup(struct tlb_case *c)
{
	struct pp_vmalloc_opts o = {
		.sz = sizeof(o),
		.flags = backings[c->b].flags,
		.numa_node = PP_NUMA_NODE_ANY,
		.name = "pp-bench-tlb",
	};

	c->t.bytes = c->bytes;
	if (c->b != B_4K &&
	    !pp_vmalloc_page_size_supported(backings[c->b].page_size)) {
		snprintf(c->why, sizeof(c->why),
			 "this kernel offers no %s pages",
			 backings[c->b].name);
		return;
	}
	last_log[0] = '\0';
	c->t.area = pp_vmalloc(c->bytes, &o);
	if (!c->t.area) {
		snprintf(c->why, sizeof(c->why), "%s",
			 last_log[0] ? last_log : strerror(errno));
		return;
	}
	pp_vm_area_stats_json(c->t.area, c->area_json, sizeof(c->area_json));
	table_build(&c->t);
	c->ok = true;
}

static void case_teardown(struct tlb_case *c)
{
	pp_vfree(c->t.area);
	c->t.area = NULL;
}

static const char *size_label(size_t bytes, char *buf, size_t len)
{
	if (bytes >= GiB && bytes % GiB == 0)
		snprintf(buf, len, "%zu GiB", bytes / GiB);
	else
		snprintf(buf, len, "%zu MiB", bytes / MiB);
	return buf;
}

static void print_row(FILE *f, const struct tlb_case *c,
		      const struct tlb_case *base, bool have_perf)
{
	char sz[32];

	size_label(c->bytes, sz, sizeof(sz));
	if (!c->ok) {
		fprintf(f, "%-8s %-4s  skipped: %s\n", sz, backings[c->b].name,
			c->why);
		return;
	}
	if (base && base->ok)
		fprintf(f, "%-8s %-4s  %9.1f  %5.2fx  %9.1f  %5.2fx", sz,
			backings[c->b].name, c->dep_med,
			base->dep_med / c->dep_med, c->ind_med,
			base->ind_med / c->ind_med);
	else
		fprintf(f, "%-8s %-4s  %9.1f  %6s  %9.1f  %6s", sz,
			backings[c->b].name, c->dep_med, "-", c->ind_med, "-");
	if (have_perf)
		fprintf(f, "  %8.3f  %8.3f", c->dep_miss_med, c->ind_miss_med);
	fprintf(f, "\n");
}

static void print_json(FILE *f, const struct tlb_cfg *cfg,
		       const struct bench_machine *m, struct tlb_case *cases,
		       unsigned int nr, const char *perf_why, bool have_perf)
{
	bench_json_head(f, "tlb", m);
	fprintf(f, "},\n");
	fprintf(f, "  \"runs\": %u,\n  \"lookups_per_run\": %lu,\n",
		cfg->runs, cfg->lookups);
	fprintf(f, "  \"dtlb_counter\": {\"available\": %s, \"note\": ",
		have_perf ? "true" : "false");
	pp_cli_json_str(f, perf_why);
	fprintf(f, "},\n");
	fprintf(f, "  \"cases\": [\n");
	for (unsigned int i = 0; i < nr; i++) {
		const struct tlb_case *c = &cases[i];
		const struct tlb_case *base = &cases[i - c->b];
		bool ratio = c->ok && base->ok;

		fprintf(f, "    {\"table_bytes\": %zu, \"backing\": \"%s\", \"status\": \"%s\"",
			c->bytes, backings[c->b].name,
			c->ok ? "ok" : "skipped");
		if (!c->ok) {
			fprintf(f, ", \"reason\": ");
			pp_cli_json_str(f, c->why);
			fprintf(f, "}%s\n", i + 1 < nr ? "," : "");
			continue;
		}
		fprintf(f, ", \"area\": %s", c->area_json);
		fprintf(f, ", \"entries\": %llu, \"buckets\": %llu",
			(unsigned long long)c->t.nr_entries,
			1ULL << c->t.bucket_bits);
		fprintf(f, ", \"dependent_ns\": %.2f, \"independent_ns\": %.2f",
			c->dep_med, c->ind_med);
		if (ratio)
			fprintf(f, ", \"dependent_vs_4k\": %.3f, \"independent_vs_4k\": %.3f",
				base->dep_med / c->dep_med,
				base->ind_med / c->ind_med);
		else
			fprintf(f, ", \"dependent_vs_4k\": null, \"independent_vs_4k\": null");
		if (have_perf)
			fprintf(f, ", \"dtlb_misses_per_lookup\": %.4f, \"dtlb_misses_per_read\": %.4f",
				c->dep_miss_med, c->ind_miss_med);
		else
			fprintf(f, ", \"dtlb_misses_per_lookup\": null, \"dtlb_misses_per_read\": null");
		fprintf(f, ", \"dependent_runs_ns\": [");
		for (unsigned int r = 0; r < cfg->runs; r++)
			fprintf(f, "%s%.2f", r ? ", " : "", c->dep_ns[r]);
		fprintf(f, "], \"independent_runs_ns\": [");
		for (unsigned int r = 0; r < cfg->runs; r++)
			fprintf(f, "%s%.2f", r ? ", " : "", c->ind_ns[r]);
		fprintf(f, "]}%s\n", i + 1 < nr ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
}

static void tlb_usage(FILE *f)
{
	fprintf(f,
		"Usage: pp-bench tlb [options]\n"
		"Chained hash lookups (dependent loads) and independent random reads\n"
		"over tables backed by 4 KiB, 2 MiB and 1 GiB pages (pp_vmalloc areas),\n"
		"alternating between the backings in one run. Prints ns per lookup or\n"
		"read (median of the runs) and the throughput ratio against 4 KiB.\n"
		"\n"
		"  --sizes LIST    table sizes such as 64M or 1G (default\n"
		"                  64M,1G,4G)\n"
		"  --runs N        timed runs per case (default %d)\n"
		"  --lookups N     lookups and reads per run (default %lu)\n"
		"  --cpu N         CPU to pin to (default: not pinned)\n"
		"  --json FILE     also write JSON to FILE ('-': stdout; the table\n"
		"                  then goes to stderr)\n"
		"  --quick         64 MiB tables, %d short runs: a smoke test\n"
		"  -h, --help      this text\n"
		"  -V, --version   the version, and the commit it was built from\n"
		"\n"
		"The 2 MiB and 1 GiB cases need that many hugepages free (a 4 GiB table\n"
		"takes 2048 x 2 MiB or 4 x 1 GiB); a case that cannot have them is\n"
		"skipped with the reason. scripts/tlb-bench.sh reserves them for a run.\n",
		TLB_DEFAULT_RUNS, TLB_DEFAULT_LOOKUPS, TLB_QUICK_RUNS);
}

static void parse_sizes(struct tlb_cfg *cfg, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;

	if (!copy)
		pp_cli_usage_error(TLB_TOOL, "out of memory");
	cfg->nr_sizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(tok, &end, 10);
		size_t mult = 0;

		if (!strcmp(end, "M") || !strcmp(end, "MiB"))
			mult = MiB;
		else if (!strcmp(end, "G") || !strcmp(end, "GiB"))
			mult = GiB;
		if (end == tok || !mult || v == 0 || v > 64 ||
		    (mult == MiB && (v < 4 || v & (v - 1))))
			pp_cli_usage_error(TLB_TOOL, "--sizes wants sizes such as 64M or 1G (MiB sizes a power of two from 4M, up to 64G), not '%s'",
					   tok);
		if (cfg->nr_sizes == TLB_MAX_SIZES)
			pp_cli_usage_error(TLB_TOOL,
					   "--sizes takes at most %d sizes",
					   TLB_MAX_SIZES);
		/* Each table is written whole, on 4 KiB pages too. */
		pp_cli_fits_memory(TLB_TOOL, "--sizes", v * mult);
		cfg->sizes[cfg->nr_sizes++] = v * mult;
	}
	free(copy);
	if (!cfg->nr_sizes)
		pp_cli_usage_error(TLB_TOOL, "--sizes is empty");
}

static void tlb_parse(int argc, char **argv, struct tlb_cfg *cfg)
{
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "runs", required_argument, NULL, 'r' },
		{ "lookups", required_argument, NULL, 'l' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct pp_cli_opts cli = {
		.tool = TLB_TOOL,
		.version_of = "pp-bench",
		.longopts = opts,
		.usage = tlb_usage,
	};
	bool sizes_set = false, runs_set = false, lookups_set = false;
	int c;

	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 's':
			parse_sizes(cfg, optarg);
			sizes_set = true;
			break;
		case 'r':
			cfg->runs = (unsigned int)pp_cli_uint(
				TLB_TOOL, "--runs", optarg, 1, TLB_MAX_RUNS);
			runs_set = true;
			break;
		case 'l':
			cfg->lookups = (unsigned long)pp_cli_uint(
				TLB_TOOL, "--lookups", optarg, 1000, 1UL << 32);
			lookups_set = true;
			break;
		case 'c':
			cfg->cpu = (int)pp_cli_uint(TLB_TOOL, "--cpu", optarg,
						    0, 4095);
			break;
		case 'j':
			cfg->json_path = optarg;
			break;
		case 'q':
			cfg->quick = true;
			break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (cfg->json_path)
		pp_cli_json_writable(TLB_TOOL, cfg->json_path);
	if (cfg->quick) {
		if (!sizes_set) {
			cfg->sizes[0] = 64 * MiB;
			cfg->nr_sizes = 1;
		}
		if (!runs_set)
			cfg->runs = TLB_QUICK_RUNS;
		if (!lookups_set)
			cfg->lookups = TLB_QUICK_LOOKUPS;
	}
}

int bench_tlb_main(int argc, char **argv)
{
	struct tlb_cfg cfg = {
		.sizes = { 64 * MiB, GiB, 4 * GiB },
		.nr_sizes = 3,
		.runs = TLB_DEFAULT_RUNS,
		.lookups = TLB_DEFAULT_LOOKUPS,
		.cpu = -1,
	};
	struct tlb_case *cases;
	struct bench_machine machine;
	FILE *table = stdout, *json = NULL;
	char perf_why[200];
	unsigned int nr;
	int perf_fd;
	bool have_perf;

	tlb_parse(argc, argv, &cfg);
	if (cfg.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cfg.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "pp-bench tlb: cannot pin to CPU %d: %s (pick one in 'taskset -p $$')\n",
				cfg.cpu, strerror(errno));
			return 1;
		}
	}
	if (cfg.json_path && !strcmp(cfg.json_path, "-")) {
		json = stdout;
		table = stderr;
	} else if (cfg.json_path) {
		json = fopen(cfg.json_path, "w");
		if (!json) {
			fprintf(stderr, "pp-bench tlb: cannot write %s: %s (does its directory exist?)\n",
				cfg.json_path, strerror(errno));
			return 1;
		}
	}
	pp_log_set_handler(log_capture, NULL, PP_LOG_WARN);
	bench_machine_read(&machine);
	perf_fd = perf_open(perf_why, sizeof(perf_why));
	have_perf = perf_fd >= 0;

	nr = cfg.nr_sizes * NR_BACKINGS;
	cases = calloc(nr, sizeof(*cases));
	if (!cases) {
		fprintf(stderr, "pp-bench tlb: out of memory\n");
		return 1;
	}

	fprintf(table, "pp-bench tlb: %s, %ld cores, kernel %s, %s\n",
		machine.cpu_model, machine.cores, machine.kernel, machine.date);
	fprintf(table, "%u runs of %lu lookups/reads per case, alternating between page sizes; medians.\n",
		cfg.runs, cfg.lookups);
	fprintf(table, "dTLB misses: %s\n", perf_why);
	fprintf(table, "The machine may be shared and noisy: compare ratios, not single figures.\n\n");
	fprintf(table, "%-8s %-4s  %9s  %6s  %9s  %6s%s\n", "table", "page",
		"lookup ns", "vs 4k", "read ns", "vs 4k",
		have_perf ? "  miss/lkp  miss/read" : "");

	for (unsigned int s = 0; s < cfg.nr_sizes; s++) {
		struct tlb_case *row = &cases[s * NR_BACKINGS];

		/* All backings of one size exist together, so runs alternate. */
		for (int b = 0; b < NR_BACKINGS; b++) {
			row[b].bytes = cfg.sizes[s];
			row[b].b = (enum backing)b;
			case_setup(&row[b]);
			/* Warm-up: fill the caches and TLBs as a run would. */
			if (row[b].ok) {
				bench_keep(run_lookups(&row[b].t,
						       row[b].t.first_key,
						       cfg.lookups / 4));
			}
		}
		for (unsigned int r = 0; r < cfg.runs; r++)
			for (int b = 0; b < NR_BACKINGS; b++)
				if (row[b].ok)
					measure(&row[b], r, cfg.lookups,
						perf_fd);
		for (int b = 0; b < NR_BACKINGS; b++) {
			struct tlb_case *c = &row[b];

			if (!c->ok)
				continue;
			c->dep_med = median(c->dep_ns, cfg.runs);
			c->ind_med = median(c->ind_ns, cfg.runs);
			c->dep_miss_med = median(c->dep_miss, cfg.runs);
			c->ind_miss_med = median(c->ind_miss, cfg.runs);
		}
		for (int b = 0; b < NR_BACKINGS; b++) {
			print_row(table, &row[b], b ? &row[0] : NULL,
				  have_perf);
			if (row[b].ok)
				case_teardown(&row[b]);
		}
		fflush(table);
	}
	if (json) {
		print_json(json, &cfg, &machine, cases, nr, perf_why,
			   have_perf);
		if (json != stdout && fclose(json)) {
			fprintf(stderr, "pp-bench tlb: writing %s failed: %s\n",
				cfg.json_path, strerror(errno));
			return 1;
		}
	}
	if (perf_fd >= 0)
		close(perf_fd);
	free(cases);
	return 0;
}
