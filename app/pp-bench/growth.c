/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * growth.c - `pp-bench growth`: the options, the three sides run one
 * after the other in child processes (growth.h), and what is read from
 * them: hugepages held over time, the idle memory against the peak, and
 * the per-burst cost around each growth of the arena against the same
 * moments of the run with growth off.
 *
 * A child per side so that each starts from a clean process: DPDK's EAL
 * starts once per process, and what a side maps (its hugepages, its
 * descriptor array) is gone before the next begins. The parent forks
 * before it starts any thread.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "growth.h"
#include "pp_cli.h"

#define TOOL "pp-bench growth"
#define MIB (1024.0 * 1024.0)

static const char *const side_names[GROWTH_NR_SIDES] = {
	[GROWTH_GROW] = "grow",
	[GROWTH_FIXED] = "fixed",
	[GROWTH_DPDK] = "dpdk",
};

static const char *const side_words[GROWTH_NR_SIDES] = {
	[GROWTH_GROW] = "pagepool, growth on",
	[GROWTH_FIXED] = "pagepool, growth off",
	[GROWTH_DPDK] = "DPDK rte_mempool",
};

#define DEFAULT_SCHEDULE "0:5,25:10,100:10,50:10,100:10,0:15"
#define QUICK_SCHEDULE "0:0.3,25:0.5,100:0.5,50:0.5,100:0.5,0:2.2"

struct growth_opts {
	struct growth_cfg cfg;
	const char *json_path;
	const char *schedule;
	bool sides[GROWTH_NR_SIDES];
	double window_ms;
	bool quick;
};

struct side_run {
	struct growth_result *res;
	struct growth_burst *rec;
	int status;             /* the child's wait status */
	bool present;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pp-bench growth [options]\n"
		"Memory that follows the traffic: a traffic thread allocates %u\n"
		"buffers of 4 KiB a burst into a delay line and frees those whose\n"
		"time is up, at a rate that steps up and down; run with pagepool's\n"
		"growable arena, with a fixed one (growth off), and with a DPDK\n"
		"rte_mempool sized for the peak, each in a process of its own.\n"
		"Prints hugepages held, idle against peak, frames lost, and the\n"
		"per-burst cost (TSC cycles) around each growth of the arena.\n"
		"\n"
		"  --schedule LIST     PCT:SECONDS,... of the peak rate (default\n"
		"                      %s)\n"
		"  --peak-rate N       buffers per second at 100%% (default 750000)\n"
		"  --delay-ms MS       time a buffer stays in the delay line\n"
		"                      (default 200): peak in flight = rate x delay\n"
		"  --headroom PCT      sizing for the peak: the fixed arena, max_size\n"
		"                      and the DPDK pool hold the peak plus PCT\n"
		"                      (default 25)\n"
		"  --tail S            idle memory is read S seconds after the\n"
		"                      traffic stops (default 10)\n"
		"  --min-mb N          the growable arena's minimum (default 32)\n"
		"  --step-mb N         its grow step (default: the library's, 32)\n"
		"  --grow-wmark P      pages; 0: the library's default (a step)\n"
		"  --shrink-wmark P    pages; 0: the default (grow-wmark + a step)\n"
		"  --shrink-delay-ms MS  0: the default (1000)\n"
		"  --dpdk-cache N      rte_mempool per-lcore cache (default 256)\n"
		"  --rx-ring N         when the traffic thread falls behind (its\n"
		"                      CPU taken away), it catches up on what an\n"
		"                      RX ring of N buffers holds; older frames\n"
		"                      are counted as missed, not lost\n"
		"                      (default 4096)\n"
		"  --sides LIST        of grow,fixed,dpdk (default all three)\n"
		"  --window-ms MS      half-width of the windows around growth\n"
		"                      events (default 50)\n"
		"  --cpu N             the traffic thread's CPU (default: the\n"
		"                      highest allowed)\n"
		"  --ctl-cpu N         the sampler's and pp-grow's CPU (default:\n"
		"                      the lowest other one)\n"
		"  --no-touch          do not stamp and check each buffer\n"
		"  --json FILE         also write JSON, the timelines included,\n"
		"                      to FILE ('-': stdout, the table to stderr)\n"
		"  --quick             a 5 s schedule at 200000 buffers/s, 100 ms\n"
		"                      delay, idle read 2 s after: a smoke\n"
		"                      test\n"
		"  -h, --help          this text\n"
		"  -V, --version       the version, and the commit it was built from\n",
		GROWTH_BURST, DEFAULT_SCHEDULE);
}

static void parse_schedule(struct growth_cfg *cfg, const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;

	cfg->nr_phases = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		double pct, secs;

		if (!colon)
			pp_cli_usage_error(TOOL, "--schedule: '%s' is not PCT:SECONDS (say 100:10 for ten seconds at the peak)",
					   tok);
		*colon = '\0';
		if (!strcmp(tok, "idle"))
			pct = 0;
		else if (pp_cli_parse_double(tok, 0, 100, &pct))
			pp_cli_usage_error(TOOL, "--schedule: '%s' is not a percentage from 0 to 100",
					   tok);
		if (pp_cli_parse_double(colon + 1, 0.01, 3600, &secs))
			pp_cli_usage_error(TOOL, "--schedule: '%s' is not a duration from 0.01 to 3600 seconds",
					   colon + 1);
		if (cfg->nr_phases == GROWTH_MAX_PHASES)
			pp_cli_usage_error(TOOL, "--schedule: more than %d phases",
					   GROWTH_MAX_PHASES);
		cfg->phases[cfg->nr_phases].pct = pct;
		cfg->phases[cfg->nr_phases].secs = secs;
		cfg->nr_phases++;
	}
	free(copy);
	if (!cfg->nr_phases)
		pp_cli_usage_error(TOOL, "--schedule: no phase");
}

static void parse_sides(struct growth_opts *o, const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int i;

	memset(o->sides, 0, sizeof(o->sides));
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < GROWTH_NR_SIDES; i++)
			if (!strcmp(tok, side_names[i]))
				break;
		if (i == GROWTH_NR_SIDES)
			pp_cli_usage_error(TOOL, "--sides: unknown side '%s' (grow, fixed or dpdk)",
					   tok);
		o->sides[i] = true;
	}
	free(copy);
}

static void parse(int argc, char **argv, struct growth_opts *o)
{
	static const struct option opts[] = {
		{ "schedule", required_argument, NULL, 's' },
		{ "peak-rate", required_argument, NULL, 'r' },
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "headroom", required_argument, NULL, 'H' },
		{ "tail", required_argument, NULL, 't' },
		{ "min-mb", required_argument, NULL, 'm' },
		{ "step-mb", required_argument, NULL, 'S' },
		{ "grow-wmark", required_argument, NULL, 'g' },
		{ "shrink-wmark", required_argument, NULL, 'k' },
		{ "shrink-delay-ms", required_argument, NULL, 'K' },
		{ "dpdk-cache", required_argument, NULL, 'C' },
		{ "rx-ring", required_argument, NULL, 'R' },
		{ "sides", required_argument, NULL, 'x' },
		{ "window-ms", required_argument, NULL, 'w' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "ctl-cpu", required_argument, NULL, 'l' },
		{ "no-touch", no_argument, NULL, 'T' },
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
	struct growth_cfg *cfg = &o->cfg;
	bool rate_set = false, delay_set = false, tail_set = false;
	int c;

	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 's':
			o->schedule = optarg;
			break;
		case 'r':
			cfg->peak_rate = pp_cli_double(TOOL, "--peak-rate",
						       optarg, 1000, 1e8);
			rate_set = true;
			break;
		case 'd':
			cfg->delay_ms = pp_cli_double(TOOL, "--delay-ms", optarg,
						      0.1, 10000);
			delay_set = true;
			break;
		case 'H':
			cfg->headroom_pct = (unsigned int)pp_cli_uint(
				TOOL, "--headroom", optarg, 0, 400);
			break;
		case 't':
			cfg->tail_s = pp_cli_double(TOOL, "--tail", optarg, 0,
						    600);
			tail_set = true;
			break;
		case 'm':
			cfg->min_bytes = (size_t)pp_cli_uint(TOOL, "--min-mb",
							     optarg, 2, 1u << 20)
					 << 20;
			break;
		case 'S':
			cfg->step_bytes = (size_t)pp_cli_uint(TOOL, "--step-mb",
							      optarg, 2, 1u << 20)
					  << 20;
			break;
		case 'g':
			cfg->grow_wmark = (unsigned long)pp_cli_uint(
				TOOL, "--grow-wmark", optarg, 0, 1ul << 32);
			break;
		case 'k':
			cfg->shrink_wmark = (unsigned long)pp_cli_uint(
				TOOL, "--shrink-wmark", optarg, 0, 1ul << 32);
			break;
		case 'K':
			cfg->shrink_delay_ms = (unsigned int)pp_cli_uint(
				TOOL, "--shrink-delay-ms", optarg, 0, 600000);
			break;
		case 'C':
			cfg->dpdk_cache = (unsigned int)pp_cli_uint(
				TOOL, "--dpdk-cache", optarg, 0, 512);
			break;
		case 'R':
			cfg->rx_ring = (unsigned int)pp_cli_uint(
				TOOL, "--rx-ring", optarg, GROWTH_BURST, 1u << 20);
			break;
		case 'x':
			parse_sides(o, optarg);
			break;
		case 'w':
			o->window_ms = pp_cli_double(TOOL, "--window-ms", optarg,
						     0.1, 10000);
			break;
		case 'c':
			cfg->traffic_cpu = (int)pp_cli_uint(TOOL, "--cpu", optarg,
							    0, CPU_SETSIZE - 1);
			break;
		case 'l':
			cfg->ctl_cpu = (int)pp_cli_uint(TOOL, "--ctl-cpu", optarg,
							0, CPU_SETSIZE - 1);
			break;
		case 'T':
			cfg->touch = false;
			break;
		case 'j':
			o->json_path = optarg;
			break;
		case 'q':
			o->quick = true;
			break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (o->json_path)
		pp_cli_json_writable(TOOL, o->json_path);
	if (o->quick) {
		if (!o->schedule)
			o->schedule = QUICK_SCHEDULE;
		/* 20000 in flight: past the 32 MiB minimum, so that it
		 * grows and shrinks a few steps. */
		if (!rate_set)
			cfg->peak_rate = 200000;
		if (!delay_set)
			cfg->delay_ms = 100;
		if (!tail_set)
			cfg->tail_s = 2;
	}
	parse_schedule(cfg, o->schedule ? o->schedule : DEFAULT_SCHEDULE);
}

/* The traffic thread on the highest allowed CPU (CPU 0 takes most of the
 * interrupts on small machines), the control threads on the lowest other. */
static void pick_cpus(struct growth_cfg *cfg)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "%s: sched_getaffinity: %s\n", TOOL,
			strerror(errno));
		exit(1);
	}
	if (cfg->traffic_cpu < 0) {
		for (i = CPU_SETSIZE - 1; i > 0 && !CPU_ISSET(i, &set); i--)
			;
		cfg->traffic_cpu = i;
	} else if (!CPU_ISSET(cfg->traffic_cpu, &set)) {
		pp_cli_usage_error(TOOL, "--cpu %d is not online or not allowed to this process (see taskset -p $$)",
				   cfg->traffic_cpu);
	}
	if (cfg->ctl_cpu < 0) {
		for (i = 0; i < CPU_SETSIZE &&
			    (!CPU_ISSET(i, &set) || i == cfg->traffic_cpu);
		     i++)
			;
		cfg->ctl_cpu = i < CPU_SETSIZE ? i : cfg->traffic_cpu;
	} else if (!CPU_ISSET(cfg->ctl_cpu, &set)) {
		pp_cli_usage_error(TOOL, "--ctl-cpu %d is not online or not allowed to this process (see taskset -p $$)",
				   cfg->ctl_cpu);
	}
}

static void derive(struct growth_cfg *cfg)
{
	size_t step = cfg->step_bytes ? cfg->step_bytes : (32ul << 20);
	double t = 0, bursts = 0;
	unsigned int i;

	cfg->peak_inflight = (unsigned long)ceil(cfg->peak_rate *
						 cfg->delay_ms / 1000.0);
	cfg->sized_buffers = cfg->peak_inflight * (100 + cfg->headroom_pct) /
			     100;
	if (cfg->sized_buffers < 4 * GROWTH_BURST)
		cfg->sized_buffers = 4 * GROWTH_BURST;
	cfg->sized_bytes = ((size_t)cfg->sized_buffers * 4096 + step - 1) /
			   step * step;
	if (cfg->sized_bytes < cfg->min_bytes + step)
		cfg->sized_bytes = (cfg->min_bytes + step + step - 1) / step *
				   step;
	cfg->stop_s = 0;
	for (i = 0; i < cfg->nr_phases; i++) {
		t += cfg->phases[i].secs;
		bursts += cfg->phases[i].pct / 100.0 * cfg->peak_rate *
			  cfg->phases[i].secs / GROWTH_BURST;
		if (cfg->phases[i].pct > 0)
			cfg->stop_s = t;
	}
	cfg->run_s = t;
	/* A little past the idle read, so that there is a sample there. */
	if (cfg->run_s < cfg->stop_s + cfg->tail_s + 0.5)
		cfg->run_s = cfg->stop_s + cfg->tail_s + 0.5;
	cfg->sched_bursts = (unsigned long)bursts;
	cfg->max_bursts = (unsigned long)(bursts * 1.05) + 4096;
}

#ifndef PP_BENCH_HAVE_DPDK
/* Without DPDK there is no dpdk side: main() turns it off first. */
int growth_run_dpdk(const struct growth_cfg *cfg, struct growth_result *res,
		    struct growth_burst *rec)
{
	(void)cfg, (void)rec;
	snprintf(res->why, sizeof(res->why),
		 "pp-bench was built without DPDK (install dpdk-dev and rebuild)");
	return -1;
}
#endif

/* ---- running the sides ---- */

static int run_side(const struct growth_cfg *cfg, enum growth_side side,
		    struct side_run *out)
{
	size_t rec_len = cfg->max_bursts * sizeof(struct growth_burst);
	pid_t pid;

	out->res = mmap(NULL, sizeof(*out->res), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	out->rec = mmap(NULL, rec_len, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (out->res == MAP_FAILED || out->rec == MAP_FAILED) {
		fprintf(stderr, "%s: cannot map %zu MiB for the results: %s\n",
			TOOL, rec_len >> 20, strerror(errno));
		return -1;
	}
	out->present = true;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", TOOL, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int ret = side == GROWTH_DPDK ?
				  growth_run_dpdk(cfg, out->res, out->rec) :
				  growth_run_pagepool(cfg, side == GROWTH_GROW,
						      out->res, out->rec);
		fflush(NULL);
		_exit(ret ? 1 : 0);
	}
	while (waitpid(pid, &out->status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(out->status) && !out->res->why[0])
		snprintf(out->res->why, sizeof(out->res->why),
			 "the side's process died of signal %d (%s)",
			 WTERMSIG(out->status), strsignal(WTERMSIG(out->status)));
	return 0;
}

/* ---- reading them ---- */

struct cost {
	unsigned long n;
	double median, p999, p99, max;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static double pick(const uint32_t *v, unsigned long n, double p)
{
	unsigned long i = (unsigned long)ceil(p * (double)n);

	return v[i ? i - 1 : 0];
}

/* Percentiles of the bursts of @r that fall in [lo[k], hi[k]) (µs) for
 * some k, or of every burst when @nr is 0 and @lo NULL. */
static struct cost cost_of(const struct side_run *r, const double *lo,
			   const double *hi, unsigned int nr)
{
	struct cost c = { 0 };
	uint32_t *v;
	unsigned long i, n = 0;
	unsigned int k = 0;

	if (!r->present || !r->res->ran || !r->res->bursts)
		return c;
	v = malloc(r->res->bursts * sizeof(*v));
	if (!v)
		return c;
	for (i = 0; i < r->res->bursts; i++) {
		double t = r->rec[i].t_us;

		if (lo) {
			while (k < nr && t >= hi[k])
				k++;
			if (k == nr)
				break;
			if (t < lo[k])
				continue;
		}
		v[n++] = r->rec[i].cycles;
	}
	if (n) {
		qsort(v, n, sizeof(*v), cmp_u32);
		c.n = n;
		c.median = pick(v, n, 0.5);
		c.p99 = pick(v, n, 0.99);
		c.p999 = pick(v, n, 0.999);
		c.max = v[n - 1];
	}
	free(v);
	return c;
}

/* The windows of +-@w_ms around each event of @kind, merged, in µs. */
static unsigned int windows(const struct growth_result *res,
			    unsigned int kind, double w_ms, double *lo,
			    double *hi, unsigned int *events)
{
	unsigned int i, n = 0;

	*events = 0;
	for (i = 0; i < res->nr_events; i++) {
		double a, b;

		if (res->events[i].kind != kind)
			continue;
		(*events)++;
		a = res->events[i].t_s * 1e6 - w_ms * 1e3;
		b = res->events[i].t_s * 1e6 + w_ms * 1e3;
		if (n && a <= hi[n - 1]) {
			if (b > hi[n - 1])
				hi[n - 1] = b;
			continue;
		}
		lo[n] = a;
		hi[n] = b;
		n++;
	}
	return n;
}

struct memory_read {
	double peak_mib, idle_mib, ratio, idle_t;
	double peak_sys_mib, idle_sys_mib;
	double peak_committed_mib, idle_committed_mib;
	unsigned long peak_inflight;
};

static struct memory_read memory_of(const struct growth_cfg *cfg,
				    const struct growth_result *res)
{
	struct memory_read m = { 0 };
	double at = cfg->stop_s + cfg->tail_s;
	unsigned int i;
	bool idle = false;

	for (i = 0; i < res->nr_samples; i++) {
		const struct growth_sample *s = &res->samples[i];

		if (s->held_proc / MIB > m.peak_mib)
			m.peak_mib = s->held_proc / MIB;
		if (s->held_sys / MIB > m.peak_sys_mib)
			m.peak_sys_mib = s->held_sys / MIB;
		if (s->committed / MIB > m.peak_committed_mib)
			m.peak_committed_mib = s->committed / MIB;
		if (s->inflight > m.peak_inflight)
			m.peak_inflight = s->inflight;
		if (!idle && s->t_s >= at) {
			idle = true;
			m.idle_t = s->t_s;
			m.idle_mib = s->held_proc / MIB;
			m.idle_sys_mib = s->held_sys / MIB;
			m.idle_committed_mib = s->committed / MIB;
		}
	}
	m.ratio = m.peak_mib > 0 ? m.idle_mib / m.peak_mib : 0;
	return m;
}

/* ---- output ---- */

struct report {
	const struct growth_opts *o;
	struct side_run *runs;
	struct memory_read mem[GROWTH_NR_SIDES];
	struct cost overall[GROWTH_NR_SIDES];
	/* [event kind][side] */
	struct cost around[2][GROWTH_NR_SIDES];
	unsigned int nr_windows[2], nr_events[2];
};

static bool side_ok(const struct report *r, int s)
{
	return r->runs[s].present && r->runs[s].res->ran;
}

static void print_table(FILE *f, const struct report *r)
{
	const struct growth_cfg *cfg = &r->o->cfg;
	static const char *const kinds[2] = { "growth", "shrink" };
	unsigned int i;
	int s, k;

	fprintf(f, "pp-bench growth: %u-buffer bursts of 4 KiB, peak %.0f buffers/s x %.0f ms delay = %lu in flight\n",
		GROWTH_BURST, cfg->peak_rate, cfg->delay_ms, cfg->peak_inflight);
	fprintf(f, "schedule (%% of peak : s):");
	for (i = 0; i < cfg->nr_phases; i++)
		fprintf(f, " %g:%g", cfg->phases[i].pct, cfg->phases[i].secs);
	fprintf(f, "; traffic stops at %.1f s, idle read at %.1f s\n",
		cfg->stop_s, cfg->stop_s + cfg->tail_s);
	fprintf(f, "sized for the peak: %lu buffers (+%u%%), %zu MiB; traffic CPU %d, control CPU %d; TSC %.3f GHz\n\n",
		cfg->sized_buffers, cfg->headroom_pct, cfg->sized_bytes >> 20,
		cfg->traffic_cpu, cfg->ctl_cpu, cfg->tsc_hz / 1e9);
	fprintf(f, "%-22s %9s %9s %8s %7s %7s %8s %7s %9s %8s %8s %8s %6s %6s\n",
		"side", "peak MiB", "idle MiB", "idle/pk", "lost", "damaged",
		"missed", "late ms", "bursts", "med cyc", "p99.9", "wait ms",
		"vol sw", "invol");
	for (s = 0; s < GROWTH_NR_SIDES; s++) {
		const struct growth_result *res;

		if (!r->runs[s].present)
			continue;
		res = r->runs[s].res;
		if (!res->ran) {
			fprintf(f, "%-22s skipped: %s\n", side_words[s],
				res->why);
			continue;
		}
		fprintf(f, "%-22s %9.1f %9.1f %8.3f %7llu %7llu %8llu %7.1f %9llu %8.0f %8.0f %8.1f %6llu %6llu\n",
			side_words[s], r->mem[s].peak_mib, r->mem[s].idle_mib,
			r->mem[s].ratio, (unsigned long long)res->lost,
			(unsigned long long)res->damaged,
			(unsigned long long)res->missed, res->late_max_ms,
			(unsigned long long)res->bursts, r->overall[s].median,
			r->overall[s].p999, res->wait_ns / 1e6,
			(unsigned long long)res->nvcsw,
			(unsigned long long)res->nivcsw);
	}
	fprintf(f, "(MiB: hugetlb mapped by the side's process, smaps_rollup; idle: %.0f s after the traffic stops;\n"
		   " lost: the allocator had no buffer; missed: the thread was more than an RX ring of %u behind;\n"
		   " wait ms: the traffic thread runnable while another task had its CPU; vol sw: times it slept, on a lock)\n",
		cfg->tail_s, cfg->rx_ring);
	for (k = 0; k < 2; k++) {
		if (!side_ok(r, GROWTH_GROW))
			break;
		fprintf(f, "\nper-burst cost within +-%.0f ms of each %s event of the growth run (%u events, %u windows), cycles:\n",
			r->o->window_ms, kinds[k], r->nr_events[k],
			r->nr_windows[k]);
		if (!r->nr_windows[k]) {
			fprintf(f, "  (no %s event)\n", kinds[k]);
			continue;
		}
		if (!r->around[k][GROWTH_GROW].n) {
			fprintf(f, "  (no burst in them: the traffic had stopped)\n");
			continue;
		}
		fprintf(f, "  %-22s %9s %8s %8s %9s\n", "side, same moments",
			"bursts", "median", "p99", "p99.9");
		for (s = 0; s < GROWTH_NR_SIDES; s++) {
			const struct cost *c = &r->around[k][s];

			if (!side_ok(r, s))
				continue;
			fprintf(f, "  %-22s %9lu %8.0f %8.0f %9.0f\n",
				side_words[s], c->n, c->median, c->p99, c->p999);
		}
	}
	if (side_ok(r, GROWTH_GROW)) {
		const struct growth_result *g = r->runs[GROWTH_GROW].res;

		fprintf(f, "\ngrowth run: %llu grows, %llu shrinks, %llu failed grows, %llu isolations undone; committed peak %.0f MiB, at the idle read %.0f MiB (minimum %.0f, step %.0f)\n",
			(unsigned long long)g->grows,
			(unsigned long long)g->shrinks,
			(unsigned long long)g->grow_failures,
			(unsigned long long)g->drains_cancelled,
			r->mem[GROWTH_GROW].peak_committed_mib,
			r->mem[GROWTH_GROW].idle_committed_mib,
			g->min_bytes / MIB, g->step_bytes / MIB);
		fprintf(f, "at the end (idle): committed %.0f MiB, free %llu pages, isolated %llu; held by the page_pool's cache %llu and ring %llu pages, thread caches %llu pages\n",
			g->end_committed / MIB,
			(unsigned long long)g->end_free_pages,
			(unsigned long long)g->end_isolated_pages,
			(unsigned long long)g->end_pool_cache,
			(unsigned long long)g->end_pool_ring,
			(unsigned long long)g->end_tcache);
		if (g->step_bytes && g->end_committed > g->min_bytes) {
			uint64_t steps = (g->end_committed - g->min_bytes) /
					 g->step_bytes;
			uint64_t pages = steps * (g->step_bytes / 4096);

			fprintf(f, "  %llu steps above the minimum at the end (%llu pages): %llu of them isolated, waiting for the rest; the pool's cache and ring hold %llu\n",
				(unsigned long long)steps,
				(unsigned long long)pages,
				(unsigned long long)g->end_isolated_pages,
				(unsigned long long)(g->end_pool_cache +
						     g->end_pool_ring));
		}
		fprintf(f, "after destroying the pool and draining its thread's cache: committed %.0f MiB, hugetlb mapped %.0f MiB (%.1f s later): idle/peak %.3f\n",
			g->drained_committed / MIB, g->drained_held_proc / MIB,
			g->drained_wait_s,
			r->mem[GROWTH_GROW].peak_mib > 0 ?
				g->drained_held_proc / MIB /
					r->mem[GROWTH_GROW].peak_mib :
				0.0);
	}
	if (side_ok(r, GROWTH_DPDK)) {
		const struct growth_result *d = r->runs[GROWTH_DPDK].res;

		fprintf(f, "dpdk: %s; pool memory %.1f MiB\n", d->setup,
			d->pool_bytes / MIB);
	}
}

static void json_cost(FILE *f, const struct cost *c)
{
	fprintf(f, "{\"bursts\": %lu, \"median\": %.0f, \"p99\": %.0f, \"p99_9\": %.0f, \"max\": %.0f}",
		c->n, c->median, c->p99, c->p999, c->max);
}

static void json_series(FILE *f, const struct growth_result *res,
			const char *name, int which)
{
	unsigned int i;

	fprintf(f, "        \"%s\": [", name);
	for (i = 0; i < res->nr_samples; i++) {
		const struct growth_sample *s = &res->samples[i];

		if (i)
			fputs(", ", f);
		switch (which) {
		case 0: fprintf(f, "%.3f", s->t_s); break;
		case 1: fprintf(f, "%.1f", s->held_proc / MIB); break;
		case 2: fprintf(f, "%.1f", s->held_sys / MIB); break;
		case 3: fprintf(f, "%.1f", s->committed / MIB); break;
		case 4: fprintf(f, "%llu", (unsigned long long)s->inflight); break;
		case 5: fprintf(f, "%llu", (unsigned long long)s->lost); break;
		case 6: fprintf(f, "%.1f", s->wait_ns / 1e6); break;
		case 7: fprintf(f, "%llu", (unsigned long long)s->nvcsw); break;
		case 8: fprintf(f, "%.1f", s->isolated_pages * 4096 / MIB); break;
		case 9: fprintf(f, "%llu", (unsigned long long)s->free_pages); break;
		}
	}
	fprintf(f, "]");
}

/* Bursts run in each second of the timeline (the offered rate where the
 * thread kept up), from the records. */
static void json_rate(FILE *f, const struct side_run *r, double run_s)
{
	unsigned int n = (unsigned int)ceil(run_s), i;
	uint64_t *bins = calloc(n + 1, sizeof(*bins));
	uint64_t k;

	if (!bins)
		return;
	for (k = 0; k < r->res->bursts; k++) {
		unsigned int b = r->rec[k].t_us / 1000000;

		bins[b < n ? b : n]++;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)bins[i]);
	free(bins);
}

static void json_side(FILE *f, const struct report *r, int s)
{
	const struct growth_result *res = r->runs[s].res;
	const struct memory_read *m = &r->mem[s];
	static const char *const ev[] = { "grow", "shrink", "grow_failed",
					  "isolation_undone" };
	static const char *const series[] = { "t_s", "held_mib",
					      "held_sys_mib", "committed_mib",
					      "inflight", "lost", "wait_ms",
					      "voluntary_switches",
					      "isolated_mib", "free_pages" };
	unsigned int i;
	int k;

	fprintf(f, "    \"%s\": {\"status\": \"%s\", ", side_names[s],
		res->ran ? "ok" : "skipped");
	if (!res->ran) {
		fprintf(f, "\"reason\": ");
		pp_cli_json_str(f, res->why);
		fprintf(f, "}");
		return;
	}
	fprintf(f, "\"what\": ");
	pp_cli_json_str(f, side_words[s]);
	fprintf(f, ", \"setup\": ");
	pp_cli_json_str(f, res->setup);
	fprintf(f, ",\n      \"memory\": {\"peak_mib\": %.1f, \"idle_mib\": %.1f, \"idle_at_s\": %.2f, \"idle_over_peak\": %.4f, \"peak_sys_mib\": %.1f, \"idle_sys_mib\": %.1f, \"peak_committed_mib\": %.1f, \"idle_committed_mib\": %.1f, \"baseline_sys_mib\": %.1f},\n",
		m->peak_mib, m->idle_mib, m->idle_t, m->ratio, m->peak_sys_mib,
		m->idle_sys_mib, m->peak_committed_mib, m->idle_committed_mib,
		res->baseline_sys / MIB);
	fprintf(f, "      \"frames\": {\"bursts\": %llu, \"lost\": %llu, \"damaged\": %llu, \"missed\": %llu, \"early_frees\": %llu, \"peak_inflight\": %lu, \"late_max_ms\": %.2f, \"runqueue_wait_ms\": %.1f, \"voluntary_switches\": %llu, \"involuntary_switches\": %llu},\n",
		(unsigned long long)res->bursts, (unsigned long long)res->lost,
		(unsigned long long)res->damaged,
		(unsigned long long)res->missed,
		(unsigned long long)res->early_frees, m->peak_inflight,
		res->late_max_ms, res->wait_ns / 1e6,
		(unsigned long long)res->nvcsw,
		(unsigned long long)res->nivcsw);
	fprintf(f, "      \"bursts_run\": %llu, \"bursts_per_s\": [",
		(unsigned long long)res->bursts_run);
	json_rate(f, &r->runs[s], r->o->cfg.run_s);
	fprintf(f, "],\n      \"burst_cycles\": ");
	json_cost(f, &r->overall[s]);
	fprintf(f, ",\n      \"around_grow\": ");
	json_cost(f, &r->around[0][s]);
	fprintf(f, ", \"around_shrink\": ");
	json_cost(f, &r->around[1][s]);
	if (s != GROWTH_DPDK) {
		fprintf(f, ",\n      \"zone\": {\"grows\": %llu, \"shrinks\": %llu, \"grow_failures\": %llu, \"drains_cancelled\": %llu, \"last_error\": %d, \"min_mib\": %.0f, \"max_mib\": %.0f, \"step_mib\": %.0f},\n",
			(unsigned long long)res->grows,
			(unsigned long long)res->shrinks,
			(unsigned long long)res->grow_failures,
			(unsigned long long)res->drains_cancelled,
			res->last_error, res->min_bytes / MIB,
			res->max_bytes / MIB, res->step_bytes / MIB);
		fprintf(f, "      \"end\": {\"committed_mib\": %.1f, \"free_pages\": %llu, \"isolated_pages\": %llu, \"pool_cache_pages\": %llu, \"pool_ring_pages\": %llu, \"thread_cache_pages\": %llu, \"held_mib\": %.1f, \"drained_committed_mib\": %.1f, \"drained_held_mib\": %.1f, \"drained_wait_s\": %.1f}",
			res->end_committed / MIB,
			(unsigned long long)res->end_free_pages,
			(unsigned long long)res->end_isolated_pages,
			(unsigned long long)res->end_pool_cache,
			(unsigned long long)res->end_pool_ring,
			(unsigned long long)res->end_tcache,
			res->end_held_proc / MIB, res->drained_committed / MIB,
			res->drained_held_proc / MIB, res->drained_wait_s);
	} else {
		fprintf(f, ",\n      \"pool\": {\"objects\": %u, \"element_bytes\": %u, \"cache\": %u, \"memory_mib\": %.1f}",
			res->pool_n, res->elt_bytes, res->pool_cache,
			res->pool_bytes / MIB);
	}
	fprintf(f, ",\n      \"events\": [");
	for (i = 0; i < res->nr_events; i++)
		fprintf(f, "%s{\"t_s\": %.4f, \"kind\": \"%s\"}", i ? ", " : "",
			res->events[i].t_s, ev[res->events[i].kind]);
	fprintf(f, "],\n      \"timeline\": {\n");
	for (k = 0; k < 10; k++) {
		json_series(f, res, series[k], k);
		fprintf(f, "%s\n", k < 9 ? "," : "");
	}
	fprintf(f, "      }}");
}

static int write_json(const struct report *r)
{
	const struct growth_cfg *cfg = &r->o->cfg;
	FILE *f = pp_cli_json_open(r->o->json_path);
	unsigned int i;
	int s, first = 1;

	if (!f) {
		fprintf(stderr, "%s: cannot write %s: %s (does its directory exist?)\n",
			TOOL, r->o->json_path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n");
	pp_cli_json_ident(f, "pp-bench");
	fprintf(f, "\n  \"benchmark\": \"growth\",\n  \"parameters\": {\"burst\": %u, \"scheduled_bursts\": %lu, \"peak_rate\": %.0f, \"delay_ms\": %.2f, \"peak_inflight\": %lu, \"sized_buffers\": %lu, \"sized_mib\": %zu, \"headroom_pct\": %u, \"tail_s\": %.2f, \"stop_s\": %.2f, \"run_s\": %.2f, \"sample_ms\": %u, \"window_ms\": %.1f, \"min_mib\": %zu, \"step_mib\": %zu, \"grow_wmark\": %lu, \"shrink_wmark\": %lu, \"shrink_delay_ms\": %u, \"dpdk_cache\": %u, \"rx_ring\": %u, \"touch\": %s, \"traffic_cpu\": %d, \"ctl_cpu\": %d, \"tsc_ghz\": %.4f,\n    \"schedule\": [",
		GROWTH_BURST, cfg->sched_bursts, cfg->peak_rate, cfg->delay_ms,
		cfg->peak_inflight,
		cfg->sized_buffers, cfg->sized_bytes >> 20, cfg->headroom_pct,
		cfg->tail_s, cfg->stop_s, cfg->run_s, cfg->sample_ms,
		r->o->window_ms, cfg->min_bytes >> 20, cfg->step_bytes >> 20,
		cfg->grow_wmark, cfg->shrink_wmark, cfg->shrink_delay_ms,
		cfg->dpdk_cache, cfg->rx_ring, cfg->touch ? "true" : "false",
		cfg->traffic_cpu, cfg->ctl_cpu, cfg->tsc_hz / 1e9);
	for (i = 0; i < cfg->nr_phases; i++)
		fprintf(f, "%s{\"pct\": %g, \"secs\": %g}", i ? ", " : "",
			cfg->phases[i].pct, cfg->phases[i].secs);
	fprintf(f, "]},\n  \"windows\": {\"grow_events\": %u, \"grow_windows\": %u, \"shrink_events\": %u, \"shrink_windows\": %u},\n  \"sides\": {\n",
		r->nr_events[0], r->nr_windows[0], r->nr_events[1],
		r->nr_windows[1]);
	for (s = 0; s < GROWTH_NR_SIDES; s++) {
		if (!r->runs[s].present)
			continue;
		if (!first)
			fprintf(f, ",\n");
		first = 0;
		json_side(f, r, s);
	}
	fprintf(f, "\n  }\n}\n");
	if (pp_cli_json_close(f)) {
		fprintf(stderr, "%s: writing %s failed\n", TOOL,
			r->o->json_path);
		return -1;
	}
	return 0;
}

static void analyse(struct report *r)
{
	const struct growth_result *g = r->runs[GROWTH_GROW].res;
	static double lo[GROWTH_MAX_EVENTS], hi[GROWTH_MAX_EVENTS];
	unsigned int kind, n;
	int s;

	for (s = 0; s < GROWTH_NR_SIDES; s++) {
		if (!side_ok(r, s))
			continue;
		r->mem[s] = memory_of(&r->o->cfg, r->runs[s].res);
		r->overall[s] = cost_of(&r->runs[s], NULL, NULL, 0);
	}
	if (!side_ok(r, GROWTH_GROW))
		return;
	for (kind = 0; kind < 2; kind++) {
		n = windows(g, kind == 0 ? GROWTH_EV_GROW : GROWTH_EV_SHRINK,
			    r->o->window_ms, lo, hi, &r->nr_events[kind]);
		r->nr_windows[kind] = n;
		for (s = 0; s < GROWTH_NR_SIDES && n; s++)
			if (side_ok(r, s))
				r->around[kind][s] =
					cost_of(&r->runs[s], lo, hi, n);
	}
}

int bench_growth_main(int argc, char **argv)
{
	static struct growth_opts o = {
		.cfg = {
			.peak_rate = 750000,
			.delay_ms = 200,
			.tail_s = 10,
			.sample_ms = 100,
			.headroom_pct = 25,
			.min_bytes = 32ul << 20,
			.dpdk_cache = 256,
			.rx_ring = 4096,
			.traffic_cpu = -1,
			.ctl_cpu = -1,
			.touch = true,
		},
		.sides = { true, true, true },
		.window_ms = 50,
	};
	static struct side_run runs[GROWTH_NR_SIDES];
	static struct report rep;
	FILE *table = stdout;
	double ghz;
	int s, ret = 0;

	parse(argc, argv, &o);
	pick_cpus(&o.cfg);
	derive(&o.cfg);
	/* The fixed arena and the DPDK pool hold the peak, one at a time. */
	pp_cli_fits_memory(TOOL, "--peak-rate", o.cfg.sized_bytes);
#ifndef PP_BENCH_HAVE_DPDK
	o.sides[GROWTH_DPDK] = false;
	fprintf(stderr, "%s: built without DPDK: no dpdk side (install dpdk-dev and rebuild)\n",
		TOOL);
#endif
	if (o.json_path && !strcmp(o.json_path, "-"))
		table = stderr;
	pp_cli_hugepage_hint(TOOL, (unsigned long)(o.cfg.sized_bytes >> 20) +
					   64);
	if (bench_tsc_calibrate(100, &ghz)) {
		fprintf(stderr, "%s: the TSC does not advance: cannot time anything\n",
			TOOL);
		return 1;
	}
	o.cfg.tsc_hz = ghz * 1e9;
	for (s = 0; s < GROWTH_NR_SIDES; s++) {
		if (!o.sides[s])
			continue;
		fprintf(stderr, "%s: running %s (%.0f s)\n", TOOL,
			side_words[s], o.cfg.run_s);
		if (run_side(&o.cfg, s, &runs[s]))
			return 1;
	}
	rep.o = &o;
	rep.runs = runs;
	analyse(&rep);
	print_table(table, &rep);
	if (o.json_path && write_json(&rep))
		ret = 1;
	return ret;
}
