/* SPDX-License-Identifier: BSD-3-Clause */
/* memory.h - the `pp-bench memory` subcommand (memory.c, and its DPDK
 * column in memory_dpdk.c), called from main.c. */
#ifndef PP_BENCH_MEMORY_H
#define PP_BENCH_MEMORY_H

#include <stddef.h>

/* @argv[0] is "memory". Returns the exit status: 0, 1 (set-up), 2 (usage). */
int bench_memory_main(int argc, char **argv);

/*
 * memory_dpdk.c: bytes of pool memory per object of an rte_pktmbuf pool
 * of @n mbufs with @data_room bytes of buffer each (headroom included),
 * under DPDK's default mempool ops, with the element size DPDK chose in
 * *@elt. Returns 0, or -1 with the reason in @why (also when built
 * without DPDK). The EAL starts on the first call, on CPU @cpu.
 */
int bench_memory_dpdk(int cpu, unsigned int n, unsigned int data_room,
		      double *bytes, unsigned int *elt, char *why,
		      size_t why_len);
void bench_memory_dpdk_stop(void);

#endif /* PP_BENCH_MEMORY_H */
