/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_e1000e.c - io forwarding between the guest's two e1000e, the same
 * job as DPDK testpmd's "io" mode with --tx-first: a burst of 32 frames is
 * sent on each port, then every frame received on one port is sent on the
 * other, from one thread. Prints the forwarded frames per second over the
 * measured interval (after a warm-up), as a line for people and one JSON
 * line for machines:
 *
 *   bench_e1000e [--warmup S] [--duration S]
 *   BENCH pagepool pps=193000.0 frames=1930000 seconds=10.00
 *
 * Under TCG the absolute figure measures QEMU's emulation more than the
 * driver; compare it only with testpmd in the same guest (bench-e1000e.sh).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pagepool/pagepool.h>
#include <pagepool/pp_net.h>
#include <pagepool/pp_net_driver.h>

#define ARENA_SIZE (32u << 20)
#define BURST 32
#define FRAME_LEN 64 /* testpmd's default txonly/tx_first length */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_e1000e: %s: %s (run inside the QEMU guest, NICs bound to vfio-pci)\n",
		what, strerror(errno));
	exit(1);
}

static struct pp_port *open_port(struct pp_allocator *alloc,
				 struct pp_dma *dma, int i, const char *addr)
{
	struct pp_port_conf conf = {
		.sz = sizeof(conf),
		.allocator = alloc,
		.dma = dma,
		.nr_rxq = 1,
		.nid = PP_NUMA_NODE_ANY,
	};
	char dev[64];
	struct pp_port *p;

	snprintf(dev, sizeof(dev), "e1000e%d,pci=%s", i, addr);
	p = pp_port_open(dev, &conf);
	if (!p)
		die(dev);
	return p;
}

/* testpmd's tx_first: one burst of 32 frames on a port. */
static void tx_first(struct pp_port *p)
{
	struct pp_frame f[BURST];
	unsigned int i, n;

	for (i = 0; i < BURST; i++) {
		f[i].page = pp_pool_alloc_pages(p->rxq[0].pool);
		if (!f[i].page)
			die("tx_first: no page");
		f[i].offset = 0;
		f[i].headroom = PP_FRAME_HEADROOM;
		f[i].len = FRAME_LEN;
		memset(pp_frame_data(&f[i]), 0xff, 12);
		memset((char *)pp_frame_data(&f[i]) + 12, 0, FRAME_LEN - 12);
	}
	n = pp_port_tx_burst(p, 0, f, BURST);
	for (i = n; i < BURST; i++)
		pp_pool_recycle_direct(p->rxq[0].pool, f[i].page);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "warmup", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *a0 = getenv("PP_TEST_NIC0"), *a1 = getenv("PP_TEST_NIC1");
	double warmup = 2, duration = 10, t0 = 0, t_end;
	struct pp_arena_opts ao = { .sz = sizeof(ao), .size = ARENA_SIZE,
				    .numa_node = PP_NUMA_NODE_ANY,
				    .name = "bench" };
	struct pp_allocator_opts alo = { .sz = sizeof(alo), .nr_arenas = 1 };
	struct pp_dma_opts dmo = { .sz = sizeof(dmo), .mode = PP_IOVA_VFIO };
	struct pp_frame f[BURST];
	struct pp_port *port[2];
	struct pp_allocator *alloc;
	struct pp_arena *arena;
	struct pp_dma *dma;
	uint64_t fwd = 0, fwd0 = 0;
	unsigned int p, i, n, m;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'w')
			warmup = atof(optarg);
		else if (c == 'd')
			duration = atof(optarg);
		else
			return 2;
	}
	if (!a0 || !a1) {
		fprintf(stderr, "bench_e1000e: set PP_TEST_NIC0 and PP_TEST_NIC1 to the two e1000e's PCI addresses\n");
		return 2;
	}
	ao.page_size = pp_hugepages_free(PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY) >= 16 ?
			       PP_PAGE_SIZE_2M : PP_PAGE_SIZE_4K;
	arena = pp_arena_create(&ao);
	if (!arena)
		die("arena");
	alo.arenas = &arena;
	alloc = pp_allocator_create(&alo);
	if (!alloc)
		die("allocator");
	dmo.vfio_pci_addr = a0;
	dma = pp_dma_create(&dmo);
	if (!dma || pp_dma_vfio_add_device(dma, a1) ||
	    pp_dma_map_arena(dma, arena))
		die("VFIO domain");
	port[0] = open_port(alloc, dma, 0, a0);
	port[1] = open_port(alloc, dma, 1, a1);
	tx_first(port[0]);
	tx_first(port[1]);

	t_end = now_s() + warmup;
	for (int phase = 0; phase < 2; phase++) {
		while (now_s() < t_end) {
			/* Check the clock once per 64 rounds, not per burst. */
			for (int k = 0; k < 64; k++) {
				for (p = 0; p < 2; p++) {
					n = pp_port_rx_burst(port[p], 0, f, BURST);
					if (!n)
						continue;
					m = pp_port_tx_burst(port[p ^ 1], 0, f, n);
					fwd += m;
					for (i = m; i < n; i++)
						pp_net_return_pages(alloc, NULL,
								    &f[i].page, 1);
				}
			}
		}
		if (phase == 0) {
			fwd0 = fwd;
			t0 = now_s();
			t_end = t0 + duration;
		}
	}
	t_end = now_s();
	printf("BENCH pagepool pps=%.1f frames=%llu seconds=%.2f\n",
	       (double)(fwd - fwd0) / (t_end - t0),
	       (unsigned long long)(fwd - fwd0), t_end - t0);
	printf("{\"bench\":\"e1000e_io_fwd\",\"impl\":\"pagepool\",\"pps\":%.1f,\"frames\":%llu,\"seconds\":%.3f}\n",
	       (double)(fwd - fwd0) / (t_end - t0),
	       (unsigned long long)(fwd - fwd0), t_end - t0);
	pp_port_close(port[0]);
	pp_port_close(port[1]);
	pp_dma_unmap_arena(dma, arena);
	pp_dma_destroy(dma);
	pp_allocator_destroy(alloc);
	pp_arena_destroy(arena);
	return 0;
}
