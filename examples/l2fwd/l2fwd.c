/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l2fwd.c - a layer-2 forwarder over several queues, one thread per queue
 * (the shape of DPDK's l2fwd): every frame received on one port goes out
 * of the other with its MAC addresses rewritten, source to the sending
 * port's address and destination to the peer's.
 *
 *   l2fwd [-q QUEUES] [-t SECONDS] [PORT0 PORT1]
 *         default: 2 queues, 3 seconds, null0 null1
 *   l2fwd -h|--help | -V|--version
 *
 * Thread q owns RX queue q of both ports and sends on TX queue q of both,
 * so no queue is shared and no lock is taken. Each RX queue's page_pool is
 * owned by the thread that polls it; a sent page returns to that pool
 * through its recycle ring when the other port is done with it.
 * The main thread prints each port's rates once a second (from the
 * queues' counters, which any thread may read) and a summary at the end.
 */
/* CPU_SET() and pthread_setaffinity_np() are GNU extensions: a program
 * built outside this tree must ask for them before the first header (the
 * tree's meson build defines _GNU_SOURCE for every file, hence the guard). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pagepool/pagepool.h>

#define MAX_QUEUES 16
#define ETH_ALEN 6

/* Locally administered addresses: 02:00:00:00:00:1<port>. */
static const uint8_t port_mac[2][ETH_ALEN] = {
	{ 0x02, 0, 0, 0, 0, 0x10 },
	{ 0x02, 0, 0, 0, 0, 0x11 },
};

static struct pp_port *ports[2];
static bool stop; /* set once by the main thread */

struct worker {
	pthread_t thread;
	unsigned int queue;
};

/* The Ethernet header of a frame leaving port @out. */
static void mac_rewrite(struct pp_frame *f, unsigned int out)
{
	uint8_t *eth = pp_frame_data(f);

	if (f->len < 2 * ETH_ALEN)
		return;
	memcpy(eth, port_mac[out ^ 1], ETH_ALEN);           /* destination */
	memcpy(eth + ETH_ALEN, port_mac[out], ETH_ALEN);    /* source */
}

/* One burst from port @in, queue @q, out of the other port. */
static void forward(unsigned int in, unsigned int q)
{
	struct pp_frame frames[PP_NET_BURST];
	unsigned int out = in ^ 1, nr_rx, nr_tx, i;

	nr_rx = pp_port_rx_burst(ports[in], q, frames, PP_NET_BURST);
	if (!nr_rx)
		return;
	for (i = 0; i < nr_rx; i++)
		mac_rewrite(&frames[i], out);
	nr_tx = pp_port_tx_burst(ports[out], q, frames, nr_rx);
	/* What the TX ring refused goes back to our own pool. */
	for (i = nr_tx; i < nr_rx; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(ports[in], q),
				       frames[i].page);
}

static void *worker_main(void *arg)
{
	const struct worker *w = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		forward(0, w->queue);
		forward(1, w->queue);
	}
	/* Pages this thread's caches hold go back before it exits. */
	pp_allocator_drain_thread(pp_port_allocator(ports[0]));
	return NULL;
}

/* Sum of a port's queue counters. */
static void port_totals(struct pp_port *port, uint64_t *rx, uint64_t *tx,
			uint64_t *dropped)
{
	*rx = *tx = *dropped = 0;
	for (unsigned int q = 0; q < pp_port_nr_rxq(port); q++) {
		struct pp_rxq_stats rs;

		if (!pp_port_rxq_stats(port, q, &rs)) {
			*rx += rs.packets;
			*dropped += rs.drops;
		}
	}
	for (unsigned int q = 0; q < pp_port_nr_txq(port); q++) {
		struct pp_txq_stats ts;

		if (!pp_port_txq_stats(port, q, &ts)) {
			*tx += ts.packets;
			*dropped += ts.drops + ts.errors;
		}
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(FILE *f, int status)
{
	fprintf(f, "usage: l2fwd [-q QUEUES (1-%d)] [-t SECONDS] [PORT0 PORT1]\n"
		"       l2fwd -h|--help | -V|--version\n"
		"  default: 2 queues, 3 seconds, null0 null1\n", MAX_QUEUES);
	exit(status);
}

/* A whole number from 1 to @max, all of @s, or exit 2. */
static unsigned int number(const char *opt, const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < 1 || v > max) {
		fprintf(stderr, "l2fwd: %s takes a whole number from 1 to %lu, not '%s'\n",
			opt, max, s);
		exit(2);
	}
	return (unsigned int)v;
}

int main(int argc, char **argv)
{
	unsigned int queues = 2, seconds = 3, q, p;
	struct worker workers[MAX_QUEUES];
	uint64_t last_rx[2] = { 0 }, last_tx[2] = { 0 };
	const char *dev[2] = { "null0", "null1" };
	int opt, ret = 0;
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":q:t:hV", opts, NULL)) != -1) {
		/* getopt takes the next word as a value, even an option:
		 * pp_cli_check_value()'s rule and wording. */
		if ((opt == 'q' || opt == 't') && optarg == argv[optind - 1] &&
		    optarg[0] == '-' && (optarg[1] == '-' ||
					 isalpha((unsigned char)optarg[1]))) {
			fprintf(stderr, "l2fwd: option '-%c' needs a value, not the option '%s' (give it its value right after it; l2fwd --help says what it takes)\n",
				opt, optarg);
			return 2;
		}
		if (opt == 'q')
			queues = number("-q", optarg, MAX_QUEUES);
		else if (opt == 't')
			seconds = number("-t", optarg, 86400);
		else if (opt == 'h')
			usage(stdout, 0);
		else if (opt == 'V')
			return printf("l2fwd (pagepool) %s\n", PP_VERSION) < 0;
		else {
			/* The wording of pp_cli_bad_option(), which every
			 * program shares; l2fwd links the library only, as an
			 * application would. */
			if (opt == ':')
				fprintf(stderr, "l2fwd: option '-%c' needs a value (l2fwd --help says what it takes)\n",
					optopt);
			else if (optopt && !strncmp(argv[optind - 1], "--", 2))
				fprintf(stderr, "l2fwd: option '%.*s' takes no value (l2fwd --help says what it takes)\n",
					(int)strcspn(argv[optind - 1], "="),
					argv[optind - 1]);
			else if (optopt)
				fprintf(stderr, "l2fwd: unknown option '-%c' (l2fwd --help lists them)\n",
					optopt);
			else
				fprintf(stderr, "l2fwd: unknown option '%.*s' (l2fwd --help lists them)\n",
					(int)strcspn(argv[optind - 1], "="),
					argv[optind - 1]);
			return 2;
		}
	}
	if (argc - optind == 2) {
		dev[0] = argv[optind];
		dev[1] = argv[optind + 1];
	} else if (argc != optind) {
		usage(stderr, 2);
	}

	/* Memory: hugepages when there are any; 8 MiB per RX queue. */
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = (size_t)(32 + 16 * queues) << 20,
		.page_size = PP_PAGE_SIZE_2M, .numa_node = PP_NUMA_NODE_ANY,
		.flags = PP_ARENA_F_ALLOW_4K, .name = "l2fwd",
	};
	struct pp_arena *arena = pp_arena_create(&ao);
	if (!arena) {
		fprintf(stderr, "l2fwd: no arena: %s\n", strerror(errno));
		return 1;
	}
	struct pp_allocator_opts lo = {
		.sz = sizeof(lo), .arenas = &arena, .nr_arenas = 1,
	};
	struct pp_allocator *alloc = pp_allocator_create(&lo);
	if (!alloc) {
		fprintf(stderr, "l2fwd: no allocator: %s\n", strerror(errno));
		return 1;
	}

	/* The same number of RX and TX queues on both ports. */
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = alloc, .nr_rxq = queues,
		.nr_txq = queues, .nid = PP_NUMA_NODE_ANY,
	};
	for (p = 0; p < 2; p++) {
		ports[p] = pp_port_open(dev[p], &conf);
		if (!ports[p]) {
			fprintf(stderr, "l2fwd: cannot open %s: %s\n", dev[p],
				strerror(errno));
			return 1;
		}
	}

	/* One thread per queue, spread over the CPUs. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	for (q = 0; q < queues; q++) {
		cpu_set_t set;

		workers[q].queue = q;
		if (pthread_create(&workers[q].thread, NULL, worker_main,
				   &workers[q])) {
			fprintf(stderr, "l2fwd: cannot start thread %u\n", q);
			return 1;
		}
		CPU_ZERO(&set);
		CPU_SET((int)(q % (cpus > 0 ? cpus : 1)), &set);
		pthread_setaffinity_np(workers[q].thread, sizeof(set), &set);
	}

	printf("l2fwd: %s <-> %s, %u queue(s), %u s\n", dev[0], dev[1],
	       queues, seconds);
	double start = now(), prev = start;
	for (unsigned int s = 0; s < seconds; s++) {
		sleep(1);
		double t = now();
		for (p = 0; p < 2; p++) {
			uint64_t rx, tx, dropped;

			port_totals(ports[p], &rx, &tx, &dropped);
			printf("  %-8s rx %7.2f Mpps  tx %7.2f Mpps  dropped %llu\n",
			       pp_port_name(ports[p]),
			       (rx - last_rx[p]) / (t - prev) / 1e6,
			       (tx - last_tx[p]) / (t - prev) / 1e6,
			       (unsigned long long)dropped);
			last_rx[p] = rx;
			last_tx[p] = tx;
		}
		prev = t;
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	for (q = 0; q < queues; q++)
		pthread_join(workers[q].thread, NULL);
	double elapsed = now() - start;

	uint64_t total = 0;
	for (p = 0; p < 2; p++) {
		uint64_t rx, tx, dropped;

		port_totals(ports[p], &rx, &tx, &dropped);
		total += tx;
	}
	printf("l2fwd: %llu frames forwarded in %.2f s: %.2f Mpps\n",
	       (unsigned long long)total, elapsed, total / elapsed / 1e6);

	/* -EBUSY anywhere here means a page is still out: a leak. */
	if (pp_port_close(ports[1]) || pp_port_close(ports[0]) ||
	    pp_allocator_destroy(alloc) || pp_arena_destroy(arena)) {
		fprintf(stderr, "l2fwd: teardown found pages still in use\n");
		ret = 1;
	}
	if (!total) {
		fprintf(stderr, "l2fwd: nothing was forwarded\n");
		ret = 1;
	}
	return ret;
}
