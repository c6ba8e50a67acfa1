/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mtu_memory.c - memory at a large MTU: what one RX ring of N descriptors
 * holds and what one frame in flight holds, pagepool's buffers against
 * DPDK's mbufs, each measured, not computed.
 *
 *   mtu-memory [--mtu 9000] [--ring 1024] [--json FILE]
 *
 * pagepool: a driver posts one pool buffer per RX descriptor whatever the
 * MTU (a page, or a 2 KiB fragment where the driver takes frag=), and a
 * frame over one buffer comes in segments. The ring's figure is what the
 * allocator hands out when a pool gives N such buffers (its page count,
 * read from the allocator's statistics); the frame's is what a null port
 * sized to the MTU's frame takes per packet received (the pages its
 * segments sit in, over the packets). Each page counts its 4 KiB and its
 * descriptor (struct pp_page), which lives outside the data. bufs/frame
 * counts pages for pagepool.
 *
 * DPDK: a pktmbuf pool with its objects sized for the MTU without
 * scattered RX, as Open vSwitch sizes them (10,176-byte elements at MTU
 * 9000), and one of DPDK's default 2,176-byte mbufs for scattered RX; the
 * bytes are the pool's memory chunks (rte_mempool_mem_iter) over its
 * objects, so headers, trailers and padding count. DPDK runs on 2 MiB
 * hugepages, as its applications do.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <pagepool/pagepool.h>
#include <pagepool/pp_drivers.h>

#include "pp_test.h"

/* Open vSwitch's mbuf element at MTU 9000 (dp_packet around an rte_mbuf,
 * the frame rounded up to 1 KiB, the headroom). */
#define OVS_ELT_9000 10176
/* OVS's shared memory model: this many mbufs per MTU and NUMA node. */
#define OVS_MBUFS_PER_NODE 262144ull

struct row {
	const char *what;
	double buf_bytes;   /* bytes one RX descriptor holds */
	double ring_bytes;  /* bytes the ring holds */
	double frame_bytes; /* bytes one frame in flight holds */
	double bufs_per_frame;
};

/* Bytes per page: the data and its descriptor. */
static double page_bytes(void)
{
	return (double)PP_PAGE_SIZE + sizeof(struct pp_page);
}

/* What a pool hands out for @ring buffers of @frag bytes (0: pages). */
static double pp_ring_bytes(struct pp_allocator *alloc, unsigned int ring,
			    unsigned int frag)
{
	struct pp_pool_params pp = {
		.sz = sizeof(pp), .allocator = alloc,
		.nid = PP_NUMA_NODE_ANY, .pool_size = ring, .name = "ring",
	};
	struct pp_pool *pool = pp_pool_create(&pp);
	struct pp_page **bufs = calloc(ring, sizeof(*bufs));
	unsigned long pages = 0;
	unsigned int i, off;

	if (!pool || !bufs) {
		fprintf(stderr, "mtu-memory: no pool for the ring\n");
		exit(1);
	}
	for (i = 0; i < ring; i++) {
		bufs[i] = frag ? pp_pool_alloc_frag(pool, &off, frag) :
				 pp_pool_alloc_pages(pool);
		if (!bufs[i]) {
			fprintf(stderr, "mtu-memory: the arena ran out at buffer %u\n",
				i);
			exit(1);
		}
	}
	/* The pages that hold the buffers (a pool's cache keeps a refill's
	 * worth more, which is not the ring's): fragments of one page come
	 * one after the other. */
	for (i = 0; i < ring; i++)
		pages += i == 0 || bufs[i] != bufs[i - 1];
	for (i = 0; i < ring; i++)
		pp_pool_recycle_direct(pool, bufs[i]);
	pp_pool_destroy(pool);
	free(bufs);
	return (double)pages * page_bytes();
}

/* Pages per received packet of a null port at @mtu with @devargs. */
static double pp_frame_pages(struct pp_allocator *alloc, unsigned int mtu,
			     const char *extra)
{
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = alloc, .mtu = mtu,
		.nid = PP_NUMA_NODE_ANY, .pool_size = 64,
	};
	struct pp_frame f[PP_NET_BURST];
	unsigned int got, i, pkts = 0, pages = 0;
	char dev[64];
	struct pp_port *p;

	snprintf(dev, sizeof(dev), "null0,size=%u%s", mtu + PP_ETH_OVERHEAD,
		 extra);
	p = pp_port_open(dev, &conf);
	if (!p) {
		fprintf(stderr, "mtu-memory: cannot open %s\n", dev);
		exit(1);
	}
	/* The pages the frames sit in (a packet's fragments are carved one
	 * after the other from the same page). */
	got = pp_port_rx_burst(p, 0, f, PP_NET_BURST);
	for (i = 0; i < got; i++) {
		pkts += !f[i].more;
		pages += i == 0 || f[i].page != f[i - 1].page;
	}
	for (i = 0; i < got; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(p, 0), f[i].page);
	pp_port_close(p);
	return pkts ? (double)pages / pkts : 0;
}

static void mem_chunk_sum(struct rte_mempool *mp, void *arg,
			  struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	(void)mp;
	(void)idx;
	*(size_t *)arg += memhdr->len;
}

/* Bytes per object of a pktmbuf pool of @n mbufs with @data_room. */
static double dpdk_mbuf_bytes(const char *name, unsigned int n,
			      unsigned int data_room)
{
	struct rte_mempool *mp =
		rte_pktmbuf_pool_create(name, n, 0, 0, (uint16_t)data_room,
					SOCKET_ID_ANY);
	size_t bytes = 0;

	if (!mp) {
		fprintf(stderr, "mtu-memory: rte_pktmbuf_pool_create(%s): %s\n",
			name, rte_strerror(rte_errno));
		exit(1);
	}
	rte_mempool_mem_iter(mp, mem_chunk_sum, &bytes);
	rte_mempool_free(mp);
	return (double)bytes / n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mtu", required_argument, NULL, 'm' },
		{ "ring", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	/* On hugepages, as a DPDK application runs: without them (malloc'd
	 * 4 KiB pages) DPDK keeps each object within a page, and a 10 KiB
	 * mbuf would take three. */
	char *eal[] = { argv[0], "--in-memory", "--no-pci", "--no-telemetry",
			"--log-level=error", "-m", "64", NULL };
	unsigned int mtu = 9000, ring = 1024, frame;
	const char *json_path = NULL;
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct row rows[4];
	double ovs, dflt;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mtu = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'r': ring = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'j': json_path = optarg; break;
		default:
			fprintf(stderr, "usage: mtu-memory [--mtu 68..%d] [--ring 1..65536] [--json FILE]\n",
				PP_PORT_MTU_MAX);
			return 2;
		}
	}
	if (mtu < PP_PORT_MTU_MIN || mtu > PP_PORT_MTU_MAX || !ring ||
	    ring > 65536) {
		fprintf(stderr, "mtu-memory: --mtu takes %d..%d, --ring 1..65536\n",
			PP_PORT_MTU_MIN, PP_PORT_MTU_MAX);
		return 2;
	}
	frame = mtu + PP_ETH_OVERHEAD;

	arena = pp_test_arena((size_t)(4 * ring + 1024) * PP_PAGE_SIZE,
			      PP_PAGE_SIZE_4K);
	alloc = pp_test_allocator(arena);

	rows[0] = (struct row){ .what = "pagepool, a page per descriptor" };
	rows[0].ring_bytes = pp_ring_bytes(alloc, ring, 0);
	rows[0].bufs_per_frame = pp_frame_pages(alloc, mtu, "");
	rows[0].frame_bytes = rows[0].bufs_per_frame * page_bytes();
	rows[1] = (struct row){ .what = "pagepool, 2 KiB fragments" };
	rows[1].ring_bytes = pp_ring_bytes(alloc, ring, 2048);
	rows[1].bufs_per_frame = pp_frame_pages(alloc, mtu, ",frag=2048");
	rows[1].frame_bytes = rows[1].bufs_per_frame * page_bytes();

	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "mtu-memory: skipped: DPDK's EAL did not start (%s): reserve 64 MiB of 2 MiB hugepages (pp-hugepages)\n",
			rte_strerror(rte_errno));
		return 77;
	}
	ovs = dpdk_mbuf_bytes("ovs", ring,
			      OVS_ELT_9000 - (unsigned int)sizeof(struct rte_mbuf));
	dflt = dpdk_mbuf_bytes("dflt", ring, RTE_MBUF_DEFAULT_BUF_SIZE);
	rows[2] = (struct row){
		.what = "DPDK, mbufs sized for the MTU (OVS)",
		.ring_bytes = ovs * ring, .frame_bytes = ovs,
		.bufs_per_frame = 1,
	};
	rows[3] = (struct row){
		.what = "DPDK, 2 KiB mbufs, scattered RX",
		.ring_bytes = dflt * ring,
		.bufs_per_frame = (frame + RTE_MBUF_DEFAULT_DATAROOM - 1) /
				  RTE_MBUF_DEFAULT_DATAROOM,
	};
	rows[3].frame_bytes = rows[3].bufs_per_frame * dflt;
	for (unsigned int i = 0; i < 4; i++)
		rows[i].buf_bytes = rows[i].ring_bytes / ring;

	printf("MTU %u (frames of %u bytes), an RX ring of %u descriptors\n",
	       mtu, frame, ring);
	printf("%-38s %10s %12s %12s %10s %9s\n", "", "B/desc", "ring KiB",
	       "B/frame", "bufs/frame", "ring/OVS");
	for (unsigned int i = 0; i < 4; i++)
		printf("%-38s %10.0f %12.1f %12.0f %10.2f %8.2fx\n",
		       rows[i].what, rows[i].buf_bytes,
		       rows[i].ring_bytes / 1024, rows[i].frame_bytes,
		       rows[i].bufs_per_frame,
		       rows[i].ring_bytes / rows[2].ring_bytes);
	printf("OVS's %llu mbufs per MTU and node at this size: %.2f GB\n",
	       OVS_MBUFS_PER_NODE, ovs * OVS_MBUFS_PER_NODE / 1e9);

	if (json_path) {
		char date[32];
		time_t now = time(NULL);
		FILE *j = strcmp(json_path, "-") ? fopen(json_path, "w") : stdout;

		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
		if (!j) {
			fprintf(stderr, "mtu-memory: %s: %s\n", json_path,
				strerror(errno));
			return 1;
		}
		fprintf(j, "{\"tool\":\"mtu-memory\",\"mtu\":%u,\"frame\":%u,\"ring\":%u,\"rows\":[",
			mtu, frame, ring);
		for (unsigned int i = 0; i < 4; i++)
			fprintf(j, "%s{\"what\":\"%s\",\"desc_bytes\":%.1f,\"ring_bytes\":%.0f,\"frame_bytes\":%.0f,\"bufs_per_frame\":%.3f,\"ring_vs_ovs\":%.4f,\"frame_vs_ovs\":%.4f}",
				i ? "," : "", rows[i].what, rows[i].buf_bytes,
				rows[i].ring_bytes, rows[i].frame_bytes,
				rows[i].bufs_per_frame,
				rows[i].ring_bytes / rows[2].ring_bytes,
				rows[i].frame_bytes / rows[2].frame_bytes);
		fprintf(j, "],\"ovs_node_bytes\":%.0f,\"date\":\"%s\"}\n",
			ovs * OVS_MBUFS_PER_NODE, date);
		if (j != stdout)
			fclose(j);
	}
	rte_eal_cleanup();
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	return pp_test_result();
}
