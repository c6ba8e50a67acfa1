/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frag_bench.c - the veth PASS path on one thread, pages against
 * fragments (a tool, not a test: doc/benchmarks-archive.md quotes it).
 *
 *   frag_bench [ROUNDS]
 *
 * For each of page, frag=2048 and frag=auto on the veth pair: null0 RX
 * (a page per frame) -> veth0 TX -> veth1 RX (the copy into a page or a
 * fragment) -> PASS -> a stack that reads a byte of each frame and frees
 * them with pp_frame_put_bulk(). The three alternate, ROUNDS times
 * (default 5) 40000 bursts of 64 each; the figure is the best round's
 * thread CPU time per frame, which waiting for the CPU does not inflate.
 * A table, then one JSON line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <pagepool/pp_drivers.h>

#define BURSTS 40000

static const char *const configs[] = { "", ",frag=2048", ",frag=auto" };
static const char *const names[] = { "page", "frag=2048", "frag=auto" };
#define NR_CONFIGS 3

/* What the stack read: a global, so that the reads stay. */
uint64_t frag_bench_sink;

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void prog_pass(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		      uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_PASS;
}

static void stack(void *arg, struct pp_port *port, struct pp_frame *frames,
		  unsigned int n)
{
	(void)arg;
	for (unsigned int i = 0; i < n; i++)
		frag_bench_sink += *(const uint8_t *)pp_frame_data(&frames[i]);
	pp_frame_put_bulk(pp_port_allocator(port), frames, n);
}

/* One round of one configuration: ns of thread CPU per frame passed. */
static double round_ns(struct pp_port_conf *conf, const char *extra)
{
	struct pp_prog prog = { .sz = sizeof(prog), .fn = prog_pass };
	struct pp_port *src, *v0, *v1;
	struct pp_frame f[PP_NET_BURST] = { 0 };
	unsigned long long passed = 0;
	char dev[64];
	double t0, t;

	snprintf(dev, sizeof(dev), "veth0,peer=veth1%s", extra);
	src = pp_port_open("null0", conf);
	v0 = src ? pp_port_open(dev, conf) : NULL;
	if (!v0) {
		fprintf(stderr, "frag_bench: cannot open the ports (%s)\n", dev);
		exit(1);
	}
	v1 = pp_port_peer(v0);
	pp_port_set_prog(v1, &prog);
	pp_port_set_stack(v1, stack, NULL);
	t0 = thread_cpu_s();
	for (unsigned int r = 0; r < BURSTS; r++) {
		unsigned int got = pp_port_rx_burst(src, 0, f, PP_NET_BURST);
		unsigned int sent = pp_port_tx_burst(v0, 0, f, got);

		for (unsigned int i = sent; i < got; i++)
			pp_pool_recycle_direct(pp_port_rxq_pool(src, 0),
					       f[i].page);
		passed += pp_port_poll(v1, 0, PP_NET_BURST);
	}
	t = thread_cpu_s() - t0;
	if (pp_port_close(v0) || pp_port_close(src)) {
		fprintf(stderr, "frag_bench: pages still out at close\n");
		exit(1);
	}
	return passed ? t / (double)passed * 1e9 : 0;
}

int main(int argc, char **argv)
{
	unsigned int rounds = argc > 1 ? (unsigned int)atoi(argv[1]) : 5;
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = 64 << 20,
		.page_size = PP_PAGE_SIZE_2M, .numa_node = PP_NUMA_NODE_ANY,
		.flags = PP_ARENA_F_ALLOW_4K, .name = "frag_bench",
	};
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	double best[NR_CONFIGS];

	if (!rounds || rounds > 1000) {
		fprintf(stderr, "usage: frag_bench [ROUNDS, 1..1000]\n");
		return 2;
	}
	arena = pp_arena_create(&ao);
	if (!arena) {
		fprintf(stderr, "frag_bench: no 64 MiB arena\n");
		return 1;
	}
	struct pp_allocator_opts alo = {
		.sz = sizeof(alo), .arenas = &arena, .nr_arenas = 1,
	};
	alloc = pp_allocator_create(&alo);
	if (!alloc)
		return 1;
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = alloc,
		.refill = PP_REFILL_ARRAY, .nid = PP_NUMA_NODE_ANY,
	};
	for (unsigned int c = 0; c < NR_CONFIGS; c++)
		best[c] = 1e30;
	/* Alternate, so that a busy moment hits all three alike. */
	for (unsigned int r = 0; r < rounds; r++) {
		for (unsigned int c = 0; c < NR_CONFIGS; c++) {
			double ns = round_ns(&conf, configs[c]);

			if (ns < best[c])
				best[c] = ns;
		}
	}
	printf("veth PASS on one thread (null0 RX -> veth0 TX -> veth1 RX copy -> PASS -> free),\n"
	       "best of %u rounds of %u bursts of %d, thread CPU time per frame\n",
	       rounds, BURSTS, PP_NET_BURST);
	printf("%-10s %10s %10s\n", "buffer", "ns/frame", "page/this");
	for (unsigned int c = 0; c < NR_CONFIGS; c++)
		printf("%-10s %10.2f %10.3f\n", names[c], best[c],
		       best[0] / best[c]);
	printf("{\"tool\":\"frag_bench\",\"rounds\":%u,\"ns_per_frame\":{"
	       "\"page\":%.3f,\"frag2048\":%.3f,\"fragauto\":%.3f}}\n",
	       rounds, best[0], best[1], best[2]);
	pp_allocator_destroy(alloc);
	pp_arena_destroy(arena);
	return 0;
}
