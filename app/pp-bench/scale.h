/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scale.h - the `pp-bench scale` subcommand (scale.c) and what its DPDK
 * side (scale_dpdk.c, built only with DPDK) plugs into it.
 *
 * scale.c owns the threads and the clock; an implementation (pagepool, or
 * DPDK's rte_mempool and rte_ring) gives it the operations the workloads
 * are made of, through struct scale_ops. Each operation moves a burst of
 * object pointers, so the indirect call is paid once per burst of 64.
 */
#ifndef PP_BENCH_SCALE_H
#define PP_BENCH_SCALE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench.h"

/* Pages (objects) per burst in every workload. */
#define SCALE_BULK 64
/* Slots of the queue between the two threads of a pair. */
#define SCALE_QUEUE_SIZE 256

struct scale_ops {
	const char *name;        /* "pagepool" or "dpdk" */
	/* Called first and last in each measuring thread (may be NULL). */
	int (*thread_start)(void *ctx, char *why, size_t len);
	void (*thread_stop)(void *ctx, void *pair_pool);
	/* The shared allocator: (a) and (b). get returns how many it got. */
	unsigned int (*get)(void *ctx, void **objs, unsigned int n);
	void (*put)(void *ctx, void **objs, unsigned int n);
	/* One pool per pair, for (c): made and destroyed by its owner. */
	void *(*pair_pool_create)(void *ctx, unsigned int pair, char *why,
				  size_t len);
	int (*pair_pool_destroy)(void *ctx, void *pool);
	unsigned int (*pair_get)(void *pool, void **objs, unsigned int n);
	void (*pair_put)(void *pool, void **objs, unsigned int n);
	/* The single-producer, single-consumer queue between a pair. */
	void *(*queue_create)(void *ctx, unsigned int pair, char *why,
			      size_t len);
	void (*queue_free)(void *q);
	unsigned int (*enqueue)(void *q, void **objs, unsigned int n);
	unsigned int (*dequeue)(void *q, void **objs, unsigned int n);
	void *ctx;
};

/* scale_dpdk.c */
int scale_dpdk_init(int cpu, unsigned int max_threads,
		    struct bench_dpdk_info *info);
const struct scale_ops *scale_dpdk_ops(void);
void scale_dpdk_fini(void);

/* @argv[0] is "scale". Returns the exit status: 0, 1 (set-up), 2 (usage). */
int bench_scale_main(int argc, char **argv);

#endif /* PP_BENCH_SCALE_H */
