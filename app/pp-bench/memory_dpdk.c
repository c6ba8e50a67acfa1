/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory_dpdk.c - the DPDK column of `pp-bench memory`: what an mbuf pool
 * really takes, read back from the pool (the memory chunks DPDK populated
 * it with), not computed from a formula. Only this file and dpdk.c see
 * DPDK's headers.
 */
#include <stdbool.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "bench.h"
#include "memory.h"

/* EAL memory in MiB: two pools of up to 64 Ki mbufs of 2.4 KiB, one at a
 * time, and the EAL's tables. */
#define MEMORY_EAL_MB 256

static bool eal_up, eal_failed;
static char eal_why[160];

static void add_chunk(struct rte_mempool *mp, void *opaque,
		      struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	(void)mp;
	(void)idx;
	*(size_t *)opaque += memhdr->len;
}

int bench_memory_dpdk(int cpu, unsigned int n, unsigned int data_room,
		      double *bytes, unsigned int *elt, char *why,
		      size_t why_len)
{
	static unsigned int seq;
	struct rte_mempool *mp;
	char name[RTE_MEMPOOL_NAMESIZE], args[256];
	size_t total = 0;

	/* The EAL starts once per process: a failure stands. */
	if (!eal_up && !eal_failed) {
		eal_failed = bench_dpdk_eal_start(cpu, MEMORY_EAL_MB, args,
						  sizeof(args), eal_why,
						  sizeof(eal_why)) != 0;
		eal_up = !eal_failed;
	}
	if (eal_failed) {
		snprintf(why, why_len, "%s", eal_why);
		return -1;
	}
	snprintf(name, sizeof(name), "pp_bench_mem%u", seq++);
	/* No cache: its objects are the pool's, it adds no memory. */
	mp = rte_pktmbuf_pool_create(name, n, 0, 0, (uint16_t)data_room,
				     (int)rte_socket_id());
	if (!mp) {
		snprintf(why, why_len, "rte_pktmbuf_pool_create(%u mbufs of %u bytes): %s",
			 n, data_room, rte_strerror(rte_errno));
		return -1;
	}
	rte_mempool_mem_iter(mp, add_chunk, &total);
	*bytes = (double)total / n;
	*elt = mp->header_size + mp->elt_size + mp->trailer_size;
	rte_mempool_free(mp);
	return 0;
}

void bench_memory_dpdk_stop(void)
{
	if (eal_up)
		bench_dpdk_eal_stop();
	eal_up = false;
	eal_failed = true;
}
