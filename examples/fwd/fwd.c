/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd - the example forwarder: receive on the first port, redirect every
 * frame to the second, one thread per queue.
 *
 *   fwd --port DEV --port DEV [--mode redirect|pass] [--queues N]
 *       [--duration S] [--refill single|list|array] [--json FILE]
 *
 * When the second port is one end of a veth pair, the other end is the
 * receiver and gets its own thread per queue: with --mode pass it hands
 * every frame to the stack (the page leaves its pool and is freed through
 * the allocator), with --mode redirect it drops them back into its pool.
 * When the second port has no peer, --mode pass passes on the first port.
 *
 *   fwd --port null0 --port veth0,peer=veth1 --mode pass   (the seed's
 *       XDP-redirect-into-veth workload)
 *   fwd --port null0 --port null1 --mode redirect          (null -> null)
 *
 * A line per second, a summary at the end or on SIGINT. The regions marked
 * [doc:...] are quoted by doc/net.md.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pagepool/pagepool.h>
#include <pagepool/pp_net.h>

#define MAX_QUEUES 16
#define MAX_THREADS (2 * MAX_QUEUES)

/* Set by SIGINT/SIGTERM or the timer; lock-free, so a handler may store. */
static atomic_int stop;

struct worker {
	pthread_t tid;
	struct pp_port *port;
	unsigned int queue;
	int cpu;
};

/* What the stack read (per thread), so that the read is real. */
static __thread uint64_t seq_sum;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fwd --port DEV --port DEV [--mode redirect|pass] [--queues N]\n"
		"           [--duration S] [--refill single|list|array] [--json FILE]\n"
		"           [--arena-mb MB]\n"
		"  DEV: null0[,size=64] | veth0,peer=veth1[,ring=1024]\n");
	exit(2);
}

/* [doc:prog] */
/* The programs: one call per burst, one verdict per frame. */
static void prog_redirect(const struct pp_prog_ctx *ctx,
			  struct pp_frame *frames, uint16_t *verdicts,
			  unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_REDIRECT_TO(0);
}

static void prog_pass(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		      uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_PASS;
}

static void prog_drop(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		      uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_DROP;
}
/* [/doc:prog] */

/* [doc:stack] */
/*
 * The "stack": it owns passed pages (they have left the pool), reads the
 * header as a stack would, and frees them through the allocator.
 */
static void stack_consume(void *arg, struct pp_port *port,
			  struct pp_frame *frames, unsigned int n)
{
	struct pp_page *pages[PP_NET_BURST];
	uint64_t seq;

	(void)arg;
	for (unsigned int i = 0; i < n; i++) {
		memcpy(&seq, (char *)pp_frame_data(&frames[i]) + PP_NULL_SEQ_OFF,
		       sizeof(seq));
		seq_sum += seq;
		pages[i] = frames[i].page;
	}
	pp_free_pages_bulk(pp_port_allocator(port), pages, n);
}
/* [/doc:stack] */

/* [doc:rx-loop] */
static void *poll_thread(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		pp_port_poll(w->port, w->queue, PP_NET_BURST);
	return NULL;
}
/* [/doc:rx-loop] */

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

/* Sum of one counter over a port's RX or TX queues. */
static uint64_t rx_sum(struct pp_port *p, size_t field)
{
	struct pp_rxq_stats s;
	uint64_t sum = 0;

	for (unsigned int q = 0; p && q < pp_port_nr_rxq(p); q++) {
		pp_port_rxq_stats(p, q, &s);
		sum += *(uint64_t *)((char *)&s + field);
	}
	return sum;
}

static uint64_t tx_sum(struct pp_port *p, size_t field)
{
	struct pp_txq_stats s;
	uint64_t sum = 0;

	for (unsigned int q = 0; p && q < pp_port_nr_txq(p); q++) {
		pp_port_txq_stats(p, q, &s);
		sum += *(uint64_t *)((char *)&s + field);
	}
	return sum;
}

#define RX(p, f) rx_sum(p, offsetof(struct pp_rxq_stats, f))
#define TX(p, f) tx_sum(p, offsetof(struct pp_txq_stats, f))

static uint64_t drops(struct pp_port *p)
{
	return RX(p, drops) + RX(p, errors) + TX(p, drops) + TX(p, errors);
}

/*
 * What one page costs the pool's allocation path in this refill mode: a
 * fresh pool on this thread, emptied 64 pages at a time and refilled from
 * the allocator, the pages leaving as on PASS. Only the allocation is
 * timed (two clock reads per 64 pages).
 */
static double alloc_ns_per_page(struct pp_allocator *alloc,
				enum pp_pool_refill refill)
{
	struct pp_pool_params pp = {
		.sz = sizeof(pp), .allocator = alloc, .nid = PP_NUMA_NODE_ANY,
		.offset = PP_FRAME_HEADROOM, .refill = refill, .name = "probe",
	};
	struct pp_page *pages[PP_POOL_CACHE_REFILL];
	struct pp_pool *pool = pp_pool_create(&pp);
	double t = 0, end = now_s() + 0.05;
	uint64_t n = 0;

	if (!pool)
		return -1;
	while (now_s() < end) {
		double t0 = now_s();
		unsigned int got = pp_pool_alloc_bulk(pool, pages,
						      PP_POOL_CACHE_REFILL);

		t += now_s() - t0;
		n += got;
		for (unsigned int i = 0; i < got; i++)
			pp_pool_release_page(pool, pages[i]);
		pp_free_pages_bulk(alloc, pages, got);
		if (!got)
			break;
	}
	pp_pool_destroy(pool);
	return n ? t * 1e9 / (double)n : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "queues", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'd' },
		{ "refill", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "arena-mb", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev[2] = { NULL, NULL }, *json = NULL;
	const char *mode = "redirect", *refill_name = "array";
	enum pp_pool_refill refill = PP_REFILL_ARRAY;
	unsigned int queues = 1, nr_dev = 0, nr_w = 0;
	double duration = 10, arena_mb = 0;
	struct worker w[MAX_THREADS];
	int c, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (nr_dev == 2)
				usage();
			dev[nr_dev++] = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'q':
			queues = (unsigned int)atoi(optarg);
			break;
		case 'd':
			duration = atof(optarg);
			break;
		case 'r':
			refill_name = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'a':
			arena_mb = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (nr_dev != 2 || queues < 1 || queues > MAX_QUEUES || duration <= 0)
		usage();
	if (strcmp(mode, "redirect") && strcmp(mode, "pass")) {
		fprintf(stderr, "fwd: --mode must be redirect or pass, not '%s'\n", mode);
		return 2;
	}
	if (!strcmp(refill_name, "single"))
		refill = PP_REFILL_SINGLE;
	else if (!strcmp(refill_name, "list"))
		refill = PP_REFILL_LIST;
	else if (strcmp(refill_name, "array")) {
		fprintf(stderr, "fwd: --refill must be single, list or array, not '%s'\n",
			refill_name);
		return 2;
	}

	/* [doc:setup] */
	/* Memory: one arena, 2 MiB pages if there are any, else 4 KiB. */
	if (!arena_mb)
		arena_mb = 32 + 32 * queues;
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = (size_t)(arena_mb * (1 << 20)),
		.page_size = PP_PAGE_SIZE_2M, .numa_node = PP_NUMA_NODE_ANY,
		.flags = PP_ARENA_F_ALLOW_4K, .name = "fwd",
	};
	struct pp_arena *arena = pp_arena_create(&ao);
	if (!arena) {
		fprintf(stderr, "fwd: cannot create a %.0f MiB arena: %s (reserve hugepages: scripts/setup.sh)\n",
			arena_mb, strerror(errno));
		return 1;
	}
	struct pp_allocator_opts alo = {
		.sz = sizeof(alo), .arenas = &arena, .nr_arenas = 1,
	};
	struct pp_allocator *alloc = pp_allocator_create(&alo);
	if (!alloc) {
		fprintf(stderr, "fwd: cannot create the allocator: %s\n", strerror(errno));
		return 1;
	}

	/* Ports: every RX queue gets a page_pool refilled the asked way. */
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = alloc, .nr_rxq = queues,
		.refill = refill, .nid = PP_NUMA_NODE_ANY,
	};
	struct pp_port *in = pp_port_open(dev[0], &conf);
	struct pp_port *out = in ? pp_port_open(dev[1], &conf) : NULL;
	if (!in || !out) {
		fprintf(stderr, "fwd: cannot open port '%s': %s (the message above names the bad part)\n",
			in ? dev[1] : dev[0], strerror(errno));
		return 1;
	}
	struct pp_port *sink = pp_port_peer(out);
	bool pass = !strcmp(mode, "pass");

	/* The first port forwards; a veth peer receives, by --mode. */
	struct pp_prog fwd_prog = {
		.sz = sizeof(fwd_prog), .fn = prog_redirect,
		.targets = { out }, .nr_targets = 1,
	};
	if (pass && !sink)
		fwd_prog.fn = prog_pass;
	pp_port_set_prog(in, &fwd_prog);
	if (sink) {
		struct pp_prog sink_prog = {
			.sz = sizeof(sink_prog),
			.fn = pass ? prog_pass : prog_drop,
		};
		pp_port_set_prog(sink, &sink_prog);
	}
	/* [/doc:setup] */

	/* Workers: queue q of the forwarder, then of the receiver. */
	for (unsigned int q = 0; q < queues; q++) {
		w[nr_w++] = (struct worker){ .port = in, .queue = q };
		if (sink)
			w[nr_w++] = (struct worker){ .port = sink, .queue = q };
	}
	/* The stack runs on the receiving threads. */
	if (pass)
		pp_port_set_stack(sink ? sink : in, stack_consume, NULL);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (unsigned int i = 0; i < nr_w; i++) {
		w[i].cpu = (int)i % (ncpu > 0 ? ncpu : 1);
		if (pthread_create(&w[i].tid, NULL, poll_thread, &w[i])) {
			fprintf(stderr, "fwd: cannot start a thread\n");
			return 1;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	/* [doc:report] */
	double t0 = now_s(), last_t = t0;
	uint64_t last_in = 0, last_out = 0;
	printf("fwd: %s -> %s%s%s, mode %s, refill %s, %u queue(s), %d thread(s)\n",
	       pp_port_name(in), pp_port_name(out), sink ? " -> " : "",
	       sink ? pp_port_name(sink) : "", mode, refill_name, queues, nr_w);
	while (!atomic_load(&stop) && now_s() - t0 < duration) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		double t = now_s();
		if (t - last_t < 1.0 && t - t0 < duration)
			continue;
		uint64_t rin = RX(in, packets);
		uint64_t rout = sink ? RX(sink, packets) :
				pass ? RX(in, xdp_pass) : TX(out, packets);
		printf("[%5.1fs] in %7.2f Mpps  delivered %7.2f Mpps  drops %llu\n",
		       t - t0, (double)(rin - last_in) / (t - last_t) / 1e6,
		       (double)(rout - last_out) / (t - last_t) / 1e6,
		       (unsigned long long)(drops(in) + drops(out) + drops(sink)));
		fflush(stdout);
		last_in = rin;
		last_out = rout;
		last_t = t;
	}
	atomic_store(&stop, 1);
	for (unsigned int i = 0; i < nr_w; i++)
		pthread_join(w[i].tid, NULL);
	double elapsed = now_s() - t0;
	/* [/doc:report] */

	/* [doc:summary] */
	uint64_t rin = RX(in, packets);
	uint64_t delivered = sink ? RX(sink, packets) :
			     pass ? RX(in, xdp_pass) : TX(out, packets);
	uint64_t nr_drops = drops(in) + drops(out) + drops(sink);
	static char js_in[1 << 16], js_out[1 << 16], js_sink[1 << 16];
	static char js_alloc[1 << 14];
	pp_port_stats_json(in, js_in, sizeof(js_in));
	pp_port_stats_json(out, js_out, sizeof(js_out));
	if (sink)
		pp_port_stats_json(sink, js_sink, sizeof(js_sink));
	else
		snprintf(js_sink, sizeof(js_sink), "null");
	double ns_page = alloc_ns_per_page(alloc, refill);

	/* The receiver first: its rings hold pages of the forwarder's pool. */
	pp_port_close(out);    /* and its veth peer */
	pp_port_close(in);
	pp_allocator_drain_thread(alloc);
	unsigned long leaked = 0;
	int check = pp_allocator_check(alloc, &leaked);
	pp_allocator_stats_json(alloc, js_alloc, sizeof(js_alloc));

	printf("summary: %.2f s, in %.2f Mpps, delivered %.2f Mpps (%llu frames), drops %llu, alloc %.2f ns/page (%s), pages leaked %lu%s\n",
	       elapsed, (double)rin / elapsed / 1e6,
	       (double)delivered / elapsed / 1e6,
	       (unsigned long long)delivered, (unsigned long long)nr_drops,
	       ns_page, refill_name, leaked, check ? " (allocator check FAILED)" : "");
	if (json) {
		FILE *f = fopen(json, "w");
		if (!f) {
			fprintf(stderr, "fwd: cannot write %s: %s\n", json, strerror(errno));
			return 1;
		}
		fprintf(f, "{\"mode\":\"%s\",\"refill\":\"%s\",\"queues\":%u,"
			"\"duration_s\":%.3f,\"in_packets\":%llu,\"in_pps\":%.0f,"
			"\"packets\":%llu,\"pps\":%.0f,\"drops\":%llu,"
			"\"alloc_ns_per_page\":%.3f,\"leaked_pages\":%lu,"
			"\"allocator_check\":%d,\"ports\":{\"in\":%s,\"out\":%s,"
			"\"sink\":%s},\"allocator\":%s}\n",
			mode, refill_name, queues, elapsed,
			(unsigned long long)rin, (double)rin / elapsed,
			(unsigned long long)delivered,
			(double)delivered / elapsed,
			(unsigned long long)nr_drops, ns_page, leaked, check,
			js_in, js_out, js_sink, js_alloc);
		fclose(f);
	}
	/* [/doc:summary] */
	pp_allocator_destroy(alloc);
	pp_arena_destroy(arena);
	return (leaked || check) ? 1 : 0;
}
