/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * skeleton.c - the smallest pagepool forwarder, to read first (the role of
 * DPDK's basicfwd and ixy-fwd): one arena of hugepages, an allocator over
 * it, two ports, and a loop that moves every frame received on one port
 * out of the other, both ways, then prints the packet rate.
 *
 *   skeleton [PORT0 [PORT1 [SECONDS]]]      default: null0 null1 2
 *
 * Each port's RX queue owns a page_pool; a received frame is a page of it.
 * A frame sent goes back to that pool when the other port is done with it;
 * one the TX queue did not take is recycled here, straight into the pool.
 * doc/design.md follows one frame from this loop down to the arena.
 */
/* clock_gettime() is POSIX, not C11: a program built outside this tree
 * (cc -std=c11) must ask for it before the first header. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pagepool/pagepool.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Receive a burst on @from, send it out of @to; returns frames moved. */
static unsigned int forward(struct pp_port *from, struct pp_port *to)
{
	struct pp_frame frames[PP_NET_BURST];
	unsigned int nr_rx, nr_tx, i;

	nr_rx = pp_port_rx_burst(from, 0, frames, PP_NET_BURST);
	if (!nr_rx)
		return 0;
	nr_tx = pp_port_tx_burst(to, 0, frames, nr_rx);
	/* The frames the TX ring had no room for are still ours. */
	for (i = nr_tx; i < nr_rx; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(from, 0), frames[i].page);
	return nr_tx;
}

int main(int argc, char **argv)
{
	const char *dev0 = argc > 1 ? argv[1] : "null0";
	const char *dev1 = argc > 2 ? argv[2] : "null1";
	double seconds = argc > 3 ? atof(argv[3]) : 2.0;
	unsigned long long moved = 0;
	int ret = 0;

	/* 1. Memory: 64 MiB of 2 MiB hugepages, or 4 KiB pages if none. */
	struct pp_arena_opts arena_opts = {
		.sz = sizeof(arena_opts),
		.size = 64 << 20,
		.page_size = PP_PAGE_SIZE_2M,
		.numa_node = PP_NUMA_NODE_ANY,
		.flags = PP_ARENA_F_ALLOW_4K,
		.name = "skeleton",
	};
	struct pp_arena *arena = pp_arena_create(&arena_opts);
	if (!arena) {
		fprintf(stderr, "skeleton: no arena: %s\n", strerror(errno));
		return 1;
	}

	/* 2. The page allocator over it: bulk allocation, thread caches. */
	struct pp_allocator_opts alloc_opts = {
		.sz = sizeof(alloc_opts), .arenas = &arena, .nr_arenas = 1,
	};
	struct pp_allocator *alloc = pp_allocator_create(&alloc_opts);
	if (!alloc) {
		fprintf(stderr, "skeleton: no allocator: %s\n", strerror(errno));
		return 1;
	}

	/* 3. Two ports, one RX and one TX queue each. */
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = alloc, .nr_rxq = 1,
		.nid = PP_NUMA_NODE_ANY,
	};
	struct pp_port *port0 = pp_port_open(dev0, &conf);
	struct pp_port *port1 = port0 ? pp_port_open(dev1, &conf) : NULL;
	if (!port0 || !port1) {
		fprintf(stderr, "skeleton: cannot open %s: %s\n",
			port0 ? dev1 : dev0, strerror(errno));
		return 1;
	}

	/* 4. Forward both ways until the time is up (a look at the clock
	 * every 1024 rounds keeps it off the per-packet path). */
	double start = now(), elapsed = 0;
	for (unsigned long round = 1; elapsed < seconds; round++) {
		moved += forward(port0, port1);
		moved += forward(port1, port0);
		if (!(round & 1023))
			elapsed = now() - start;
	}
	printf("skeleton: %s <-> %s: %llu frames in %.2f s, %.2f Mpps\n",
	       dev0, dev1, moved, elapsed, moved / elapsed / 1e6);

	/* 5. Tear down in reverse. Each call fails with -EBUSY if a page is
	 * still out somewhere, so a leak shows here. */
	if (pp_port_close(port1) || pp_port_close(port0) ||
	    pp_allocator_destroy(alloc) || pp_arena_destroy(arena)) {
		fprintf(stderr, "skeleton: teardown found pages still in use\n");
		ret = 1;
	}
	if (!moved) {
		fprintf(stderr, "skeleton: no frame was forwarded\n");
		ret = 1;
	}
	return ret;
}
