/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scale_dpdk.c - the DPDK side of `pp-bench scale`: rte_mempool with
 * per-lcore caches (cache 512, the default ring_mp_mc ops) and an SPSC
 * rte_ring between the two threads of a pair, as operations for scale.c's
 * threads. Built only with DPDK; the EAL is started as pp-bench's own
 * (dpdk.c), in this process.
 *
 * The measuring threads are not EAL threads: each registers itself with
 * rte_thread_register() and so gets an lcore id, and with it a cache in
 * every mempool; before it leaves it flushes its caches and unregisters.
 * Registration needs the EAL without multi-process support, which the
 * options dpdk.c passes (--in-memory, or --no-huge --no-shconf) give.
 *
 * Objects are 256 bytes: get and put move pointers through the caches and
 * rings and never touch an object, so their size does not enter the
 * figures, and small objects keep a pool for 64 threads within the EAL's
 * memory.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "bench.h"
#include "scale.h"

#define SD_CACHE_SIZE 512
#define SD_OBJ_SIZE 256
/* One pool per pair: two lcore caches (up to 1.5 x 512 each), the queue
 * and a burst in hand fit with room to spare. */
#define SD_PAIR_POOL_SIZE 4095

static struct rte_mempool *shared_mp;
static bool eal_up;

static unsigned int pool_size_for(unsigned int max_threads)
{
	/* Every lcore cache full, a burst in every hand, every queue full. */
	unsigned long need = (unsigned long)max_threads *
				     (SD_CACHE_SIZE * 3 / 2 + 2 * SCALE_BULK) +
			     (max_threads / 2 + 1) * SCALE_QUEUE_SIZE + 1024;
	unsigned long n = 4096;

	while (n - 1 < need)
		n *= 2;
	return (unsigned int)(n - 1);
}

int scale_dpdk_init(int cpu, unsigned int max_threads,
		    struct bench_dpdk_info *info)
{
	unsigned int n = pool_size_for(max_threads);
	/* Objects plus their headers, the pair pools, and the EAL's own. */
	unsigned long bytes = (unsigned long)n * (SD_OBJ_SIZE + 128) +
			      (max_threads / 2 + 1) *
				      (unsigned long)SD_PAIR_POOL_SIZE *
				      (SD_OBJ_SIZE + 128);
	unsigned int mem_mb = 64 + (unsigned int)(bytes * 5 / 4 >> 20);

	info->built = true;
	snprintf(info->version, sizeof(info->version), "%s", rte_version());
	info->pool_size = n;
	info->cache_size = SD_CACHE_SIZE;
	if (bench_dpdk_eal_start(cpu, mem_mb, info->eal_args,
				 sizeof(info->eal_args), info->status,
				 sizeof(info->status)))
		return -1;
	eal_up = true;
	shared_mp = rte_mempool_create("pp_scale", n, SD_OBJ_SIZE,
				       SD_CACHE_SIZE, 0, NULL, NULL, NULL,
				       NULL, SOCKET_ID_ANY,
				       RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!shared_mp) {
		snprintf(info->status, sizeof(info->status),
			 "rte_mempool_create failed (%s)",
			 rte_strerror(rte_errno));
		return -1;
	}
	snprintf(info->ops_name, sizeof(info->ops_name), "%s",
		 rte_mempool_get_ops(shared_mp->ops_index)->name);
	info->ok = true;
	snprintf(info->status, sizeof(info->status), "ok");
	return 0;
}

void scale_dpdk_fini(void)
{
	if (shared_mp)
		rte_mempool_free(shared_mp);
	shared_mp = NULL;
	if (eal_up)
		bench_dpdk_eal_stop();
	eal_up = false;
}

static int sd_thread_start(void *ctx, char *why, size_t len)
{
	(void)ctx;
	if (rte_thread_register()) {
		snprintf(why, len, "rte_thread_register: %s",
			 rte_strerror(rte_errno));
		return -1;
	}
	if (rte_lcore_id() == LCORE_ID_ANY) {
		snprintf(why, len, "rte_thread_register gave no lcore id");
		rte_thread_unregister();
		return -1;
	}
	return 0;
}

static void flush_cache(struct rte_mempool *mp)
{
	struct rte_mempool_cache *c = rte_mempool_default_cache(mp,
								rte_lcore_id());

	if (c)
		rte_mempool_cache_flush(c, mp);
}

/* Put this lcore's cached objects back in the pools' rings and leave: the
 * next thread to get this lcore id starts with empty caches. */
static void sd_thread_stop(void *ctx, void *pair_pool)
{
	(void)ctx;
	flush_cache(shared_mp);
	if (pair_pool)
		flush_cache(pair_pool);
	rte_thread_unregister();
}

static unsigned int sd_get_mp(struct rte_mempool *mp, void **objs,
			      unsigned int n)
{
	return rte_mempool_get_bulk(mp, objs, n) ? 0 : n;
}

static unsigned int sd_get(void *ctx, void **objs, unsigned int n)
{
	(void)ctx;
	return sd_get_mp(shared_mp, objs, n);
}

static void sd_put(void *ctx, void **objs, unsigned int n)
{
	(void)ctx;
	rte_mempool_put_bulk(shared_mp, objs, n);
}

static void *sd_pair_pool_create(void *ctx, unsigned int pair, char *why,
				 size_t len)
{
	struct rte_mempool *mp;
	char name[RTE_MEMPOOL_NAMESIZE];

	(void)ctx;
	snprintf(name, sizeof(name), "pp_scale_p%u", pair);
	mp = rte_mempool_create(name, SD_PAIR_POOL_SIZE, SD_OBJ_SIZE,
				SD_CACHE_SIZE, 0, NULL, NULL, NULL, NULL,
				SOCKET_ID_ANY, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!mp)
		snprintf(why, len, "rte_mempool_create %s: %s", name,
			 rte_strerror(rte_errno));
	return mp;
}

static int sd_pair_pool_destroy(void *ctx, void *pool)
{
	(void)ctx;
	rte_mempool_free(pool);
	return 0;
}

static unsigned int sd_pair_get(void *pool, void **objs, unsigned int n)
{
	return sd_get_mp(pool, objs, n);
}

static void sd_pair_put(void *pool, void **objs, unsigned int n)
{
	rte_mempool_put_bulk(pool, objs, n);
}

static void *sd_queue_create(void *ctx, unsigned int pair, char *why,
			     size_t len)
{
	struct rte_ring *r;
	char name[RTE_RING_NAMESIZE];

	(void)ctx;
	snprintf(name, sizeof(name), "pp_scale_q%u", pair);
	r = rte_ring_create(name, SCALE_QUEUE_SIZE, SOCKET_ID_ANY,
			    RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!r)
		snprintf(why, len, "rte_ring_create %s: %s", name,
			 rte_strerror(rte_errno));
	return r;
}

static void sd_queue_free(void *q)
{
	rte_ring_free(q);
}

static unsigned int sd_enqueue(void *q, void **objs, unsigned int n)
{
	return rte_ring_sp_enqueue_burst(q, objs, n, NULL);
}

static unsigned int sd_dequeue(void *q, void **objs, unsigned int n)
{
	return rte_ring_sc_dequeue_burst(q, objs, n, NULL);
}

static const struct scale_ops sd_ops = {
	.name = "dpdk",
	.thread_start = sd_thread_start,
	.thread_stop = sd_thread_stop,
	.get = sd_get,
	.put = sd_put,
	.pair_pool_create = sd_pair_pool_create,
	.pair_pool_destroy = sd_pair_pool_destroy,
	.pair_get = sd_pair_get,
	.pair_put = sd_pair_put,
	.queue_create = sd_queue_create,
	.queue_free = sd_queue_free,
	.enqueue = sd_enqueue,
	.dequeue = sd_dequeue,
};

const struct scale_ops *scale_dpdk_ops(void)
{
	return &sd_ops;
}
