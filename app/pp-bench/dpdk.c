/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk.c - the practical peer, in the same process and run: DPDK's
 * rte_mempool with a per-lcore cache, get_bulk + put_bulk at the bulk
 * sizes of the allocator cases, per object. Built only when meson finds
 * libdpdk; it is the only file that sees DPDK's headers and flags.
 *
 * The EAL is started with no PCI bus scan, no telemetry and no shared
 * files, on the CPU the benchmark is pinned to, with a small, fixed amount
 * of hugepage memory so that it does not take pages the arena or other
 * programs need. Where too few 2 MiB pages are free it runs on ordinary
 * memory (--no-huge): get_bulk/put_bulk move pointers through the lcore
 * cache and never touch the objects, so the page size backing them does
 * not enter the figure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "bench.h"
#include "timing.h"

/*
 * 2^12 - 1 objects: the ring under the pool holds a power of two minus
 * one, and the cache of 512 (RTE_MEMPOOL_CACHE_MAX_SIZE) must stay below
 * n / 1.5. Objects of 4096 bytes, like our pages: about 17 MiB in all.
 */
#define DPDK_POOL_SIZE 4095
#define DPDK_OBJ_SIZE 4096
#define DPDK_CACHE_SIZE 512
/* EAL memory in MiB: the pool plus the EAL's own tables. */
#define DPDK_EAL_MB 64

/* The ring of the one-object enqueue/dequeue case: multi-producer and
 * multi-consumer, like the recycle ring of a page_pool. */
#define DPDK_RING_SIZE 1024

static struct rte_mempool *mp;
static struct rte_ring *ring;
static bool eal_up;

struct dpdk_arg {
	struct rte_mempool *mp;
	unsigned int bulk;
	void *objs[BENCH_MAX_BULK];
};

static long free_2m_hugepages(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
			"r");
	long n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/*
 * The EAL's arguments. --in-memory maps hugepages through memfd without a
 * hugetlbfs mount; -m preallocates DPDK_EAL_MB and --socket-limit keeps
 * the heap from growing, which (with RTE_MEMPOOL_F_NO_IOVA_CONTIG below)
 * stops it from reaching for a 1 GiB page when it wants a contiguous zone.
 * --no-huge cannot go with --in-memory; --no-shconf keeps it file-free.
 */
static int build_args(int cpu, unsigned int mem_mb, char **argv, char *buf,
		      size_t len, bool huge)
{
	static char lcores[16], mem[16], limit[32];
	int argc = 0;

	snprintf(lcores, sizeof(lcores), "%d", cpu);
	snprintf(mem, sizeof(mem), "%u", mem_mb);
	snprintf(limit, sizeof(limit), "--socket-limit=%u", mem_mb);
	argv[argc++] = "pp-bench";
	argv[argc++] = "--no-pci";
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "--log-level=error";
	argv[argc++] = "-l";
	argv[argc++] = lcores;
	argv[argc++] = "-m";
	argv[argc++] = mem;
	if (huge) {
		argv[argc++] = "--in-memory";
		argv[argc++] = limit;
	} else {
		argv[argc++] = "--no-huge";
		argv[argc++] = "--no-shconf";
	}
	argv[argc] = NULL;

	buf[0] = '\0';
	for (int i = 1; i < argc; i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", i > 1 ? " " : "",
			 argv[i]);
	}
	return argc;
}

/*
 * Start the EAL on @cpu with @mem_mb MiB, with the arguments above (2 MiB
 * hugepages when enough are free, else ordinary memory). pp-bench and
 * pp-bench scale both come here, so their EALs are set up alike. Returns 0,
 * or -1 with the reason in @why.
 */
int bench_dpdk_eal_start(int cpu, unsigned int mem_mb, char *args,
			 size_t args_len, char *why, size_t why_len)
{
	char *argv[16];
	int argc;
	bool huge = free_2m_hugepages() >= (long)mem_mb / 2 + 8;

	argc = build_args(cpu, mem_mb, argv, args, args_len, huge);
	/* The EAL logs to stdout by default, which would corrupt --json -. */
	rte_openlog_stream(stderr);
	if (rte_eal_init(argc, argv) < 0) {
		snprintf(why, why_len,
			 "EAL init failed (%s): run as root, or free %u MiB of 2 MiB hugepages",
			 rte_strerror(rte_errno), mem_mb);
		return -1;
	}
	eal_up = true;
	return 0;
}

void bench_dpdk_eal_stop(void)
{
	if (eal_up)
		rte_eal_cleanup();
	eal_up = false;
}

int bench_dpdk_init(const struct bench_cfg *cfg, struct bench_dpdk_info *info)
{
	info->built = true;
	snprintf(info->version, sizeof(info->version), "%s", rte_version());
	info->pool_size = DPDK_POOL_SIZE;
	info->cache_size = DPDK_CACHE_SIZE;
	if (bench_dpdk_eal_start(cfg->cpu, DPDK_EAL_MB, info->eal_args,
				 sizeof(info->eal_args), info->status,
				 sizeof(info->status)))
		return -1;

	mp = rte_mempool_create("pp_bench", DPDK_POOL_SIZE, DPDK_OBJ_SIZE,
				DPDK_CACHE_SIZE, 0, NULL, NULL, NULL, NULL,
				(int)rte_socket_id(),
				RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!mp) {
		snprintf(info->status, sizeof(info->status),
			 "rte_mempool_create failed (%s)",
			 rte_strerror(rte_errno));
		return -1;
	}
	snprintf(info->ops_name, sizeof(info->ops_name), "%s",
		 rte_mempool_get_ops(mp->ops_index)->name);
	info->ok = true;
	snprintf(info->status, sizeof(info->status), "ok");
	return 0;
}

static int get_put_bulk(void *p, unsigned long iters, struct bench_sample *s,
			char *why, size_t why_len)
{
	struct dpdk_arg *a = p;
	unsigned long i;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		if (PP_UNLIKELY(rte_mempool_get_bulk(a->mp, a->objs, a->bulk))) {
			snprintf(why, why_len, "rte_mempool_get_bulk failed");
			return -1;
		}
		bench_barrier();
		rte_mempool_put_bulk(a->mp, a->objs, a->bulk);
	}
	s->cycles = tsc_end() - t0;
	s->ops = (uint64_t)iters * a->bulk;
	return 0;
}

/*
 * The peer of page_pool's "ring recycle" row: one object into a
 * multi-producer ring and out by a multi-consumer dequeue, the CAS on each
 * side that a page returned from another thread pays (here on one thread,
 * as the page_pool row is measured).
 */
static int ring_mp_mc(void *p, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	struct rte_ring *r = p;
	void *obj = &obj, *got = NULL;
	unsigned long i;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		if (PP_UNLIKELY(rte_ring_mp_enqueue(r, obj))) {
			snprintf(why, why_len, "rte_ring_mp_enqueue: ring full");
			return -1;
		}
		bench_barrier();
		if (PP_UNLIKELY(rte_ring_mc_dequeue(r, &got))) {
			snprintf(why, why_len, "rte_ring_mc_dequeue: ring empty");
			return -1;
		}
		bench_keep(got);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

int bench_dpdk_cases(const struct bench_cfg *cfg, struct bench_results *out)
{
	struct dpdk_arg a;
	unsigned int i;

	if (!mp)
		return -1;
	memset(&a, 0, sizeof(a));
	a.mp = mp;
	for (i = 0; i < bench_nr_bulk_sizes; i++) {
		a.bulk = bench_bulk_sizes[i];
		bench_run(cfg, out, BENCH_DPDK, "rte_mempool get+put bulk",
			  a.bulk, "obj", get_put_bulk, &a);
	}
	ring = rte_ring_create("pp_bench_ring", DPDK_RING_SIZE,
			       (int)rte_socket_id(), 0);
	if (!ring)
		bench_fail(out, BENCH_DPDK, BENCH_DPDK_RING_NAME, 0, "obj",
			   "rte_ring_create: %s", rte_strerror(rte_errno));
	else
		bench_run(cfg, out, BENCH_DPDK, BENCH_DPDK_RING_NAME, 0, "obj",
			  ring_mp_mc, ring);
	return 0;
}

void bench_dpdk_fini(void)
{
	if (mp)
		rte_mempool_free(mp);
	mp = NULL;
	if (ring)
		rte_ring_free(ring);
	ring = NULL;
	bench_dpdk_eal_stop();
}
