/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * growth_dpdk.c - the DPDK side of `pp-bench growth`: an rte_mempool of
 * 4 KiB elements sized for the peak, with a per-lcore cache, which is
 * what an application without growth has to hold from start to end.
 * The traffic runs on the EAL's main lcore (so that the lcore cache
 * serves it), the sampler on the control CPU.
 *
 * The EAL starts with no PCI scan, no telemetry and no -m: DPDK's dynamic
 * memory mode takes hugepages as the pool is populated, so what it holds
 * is the pool plus the EAL's own heap, which is what the figure should
 * show. Only 2 MiB pages, as the pagepool sides use: with --in-memory
 * DPDK uses every hugepage size the kernel has, 1 GiB first, and its
 * heap alone would then hold a whole 1 GiB page. So the child mounts a
 * hugetlbfs of 2 MiB pages in a mount namespace of its own (gone when it
 * exits) and gives the EAL that directory (--huge-dir, no shared files,
 * files unlinked); where it cannot (not root), it falls back to
 * --in-memory and says so in the setup line. The pool is populated from
 * 2 MiB memzones too (populate_2m()).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_memzone.h>
#include <rte_mempool.h>

#include "growth.h"
#include "growth_traffic.h"

#define ELT_SIZE 4096

static unsigned int mp_alloc(void *ctx, void **objs, unsigned int n)
{
	/* All or nothing, as DPDK's bulk get is. */
	return rte_mempool_get_bulk(ctx, objs, n) == 0 ? n : 0;
}

static void mp_free(void *ctx, void **objs, unsigned int n)
{
	rte_mempool_put_bulk(ctx, objs, n);
}

static void *obj_data(void *obj)
{
	return obj;
}

/* An idle DPDK queue has nothing to give back. */
static void mp_idle(void *ctx)
{
	(void)ctx;
}

static void free_zone(struct rte_mempool_memhdr *memhdr, void *opaque)
{
	(void)memhdr;
	rte_memzone_free(opaque);
}

/*
 * Populate @mp from memzones of 2 MiB pages. rte_mempool_create()'s own
 * populate asks for 1 GiB pages first (RTE_MEMZONE_1GB as a hint), and on
 * a machine with 1 GiB pages reserved a pool of any size then holds a
 * whole 1 GiB page: a figure about page sizes, not about sizing for the
 * peak. 2 MiB pages are what the pagepool sides use. Chunks of 64 MiB.
 * Returns 0 or a negative errno.
 */
static int populate_2m(struct rte_mempool *mp)
{
	size_t elt = mp->header_size + mp->elt_size + mp->trailer_size;
	unsigned int seq = 0;

	while (mp->populated_size < mp->size) {
		size_t left = (size_t)(mp->size - mp->populated_size) * elt;
		size_t len = left < (64u << 20) ? left : (64u << 20);
		const struct rte_memzone *mz;
		char name[RTE_MEMZONE_NAMESIZE];
		int ret;

		/* Objects do not cross a page: room for one more a page. */
		len += (len / (2u << 20) + 1) * elt;
		len = (len + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
		snprintf(name, sizeof(name), "growth_mz%u", seq++);
		mz = rte_memzone_reserve(name, len, mp->socket_id,
					 RTE_MEMZONE_2MB);
		if (!mz)
			return -rte_errno;
		ret = rte_mempool_populate_virt(mp, mz->addr, mz->len,
						2u << 20, free_zone,
						(void *)(uintptr_t)mz);
		if (ret < 0) {
			rte_memzone_free(mz);
			return ret;
		}
	}
	return 0;
}

static void add_chunk(struct rte_mempool *mp, void *opaque,
		      struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	(void)mp;
	(void)idx;
	*(uint64_t *)opaque += memhdr->len;
}

/* A hugetlbfs of 2 MiB pages at a new directory, in a mount namespace
 * of this process's own. Returns 0 or -1 (errno set, nothing left). */
static int private_2m_mount(char *dir, size_t len)
{
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	snprintf(dir, len, "/tmp/pp-bench-growth.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (mount("pp-bench-growth", dir, "hugetlbfs", 0, "pagesize=2M")) {
		int err = errno;

		rmdir(dir);
		errno = err;
		return -1;
	}
	return 0;
}

static void private_2m_umount(const char *dir)
{
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

int growth_run_dpdk(const struct growth_cfg *cfg, struct growth_result *res,
		    struct growth_burst *rec)
{
	static struct growth_live live;
	static char dir[64], lcores[16], prefix[48];
	char *argv[16];
	char mount_why[96] = "";
	struct growth_sampler *sampler;
	struct growth_line line;
	struct rte_mempool *mp;
	int argc = 0, mounted;
	int64_t base;

	growth_pin(cfg->ctl_cpu);
	base = growth_hugepages_used();
	res->baseline_sys = base < 0 ? 0 : (uint64_t)base;
	snprintf(lcores, sizeof(lcores), "%d", cfg->traffic_cpu);
	snprintf(prefix, sizeof(prefix), "pp-bench-growth-%d", (int)getpid());
	mounted = !private_2m_mount(dir, sizeof(dir));
	if (!mounted)
		snprintf(mount_why, sizeof(mount_why),
			 " (no private hugetlbfs of 2 MiB pages: %s; DPDK picks the page sizes)",
			 strerror(errno));
	argv[argc++] = "pp-bench-growth";
	argv[argc++] = "--no-pci";
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "--log-level=error";
	if (mounted) {
		argv[argc++] = "--huge-dir";
		argv[argc++] = dir;
		argv[argc++] = "--huge-unlink";
		argv[argc++] = "--no-shconf";
		argv[argc++] = "--file-prefix";
		argv[argc++] = prefix;
	} else {
		argv[argc++] = "--in-memory";
	}
	argv[argc++] = "-l";
	argv[argc++] = lcores;
	argv[argc] = NULL;
	/* The EAL logs to stdout by default, which would corrupt --json -. */
	rte_openlog_stream(stderr);
	if (rte_eal_init(argc, argv) < 0) {
		if (mounted)
			private_2m_umount(dir);
		snprintf(res->why, sizeof(res->why),
			 "EAL init failed (%s): run as root, with 2 MiB hugepages free",
			 rte_strerror(rte_errno));
		return -1;
	}
	mp = rte_mempool_create_empty("growth",
				      (unsigned int)cfg->sized_buffers,
				      ELT_SIZE, cfg->dpdk_cache, 0,
				      (int)rte_socket_id(),
				      RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	/* What rte_mempool_create() sets for flags 0: DPDK's default. */
	if (mp && rte_mempool_set_ops_byname(mp, "ring_mp_mc", NULL))
		rte_errno = EINVAL;
	else if (mp && populate_2m(mp))
		rte_errno = ENOMEM;
	else
		rte_errno = 0;
	if (!mp || rte_errno || growth_line_init(&line, cfg)) {
		snprintf(res->why, sizeof(res->why),
			 "rte_mempool_create(%lu x %u B, cache %u): %s",
			 cfg->sized_buffers, ELT_SIZE, cfg->dpdk_cache,
			 rte_strerror(rte_errno));
		rte_mempool_free(mp);
		rte_eal_cleanup();
		if (mounted)
			private_2m_umount(dir);
		return -1;
	}
	rte_mempool_mem_iter(mp, add_chunk, &res->pool_bytes);
	res->elt_bytes = mp->header_size + mp->elt_size + mp->trailer_size;
	res->pool_n = mp->size;
	res->pool_cache = mp->cache_size;
	snprintf(res->setup, sizeof(res->setup),
		 "rte_mempool (ring_mp_mc) of %u x %u B elements (%u B each with header), lcore cache %u, populated from 2 MiB memzones; EAL dynamic memory, %s%s",
		 mp->size, ELT_SIZE, res->elt_bytes, mp->cache_size,
		 mounted ? "2 MiB pages only (--huge-dir of a private hugetlbfs)" :
			   "--in-memory", mount_why);
	sampler = growth_sampler_start(cfg, res, &live, NULL, NULL);
	if (!sampler) {
		snprintf(res->why, sizeof(res->why), "no sampler thread");
		rte_mempool_free(mp);
		rte_eal_cleanup();
		if (mounted)
			private_2m_umount(dir);
		return -1;
	}
	growth_traffic_run(cfg, res, &live, rec, &line, mp, mp_alloc, mp_free,
			   obj_data, mp_idle);
	res->end_held_proc = growth_hugetlb_mapped();
	growth_sampler_stop(sampler);
	free(line.slots);
	res->ran = 1;
	rte_mempool_free(mp);
	rte_eal_cleanup();
	if (mounted)
		private_2m_umount(dir);
	return 0;
}
