/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_numa.c - NUMA placement: which node memory is on, binding a range or
 * the calling thread to a node. Through libnuma when pagepool is built with
 * it (PP_HAVE_NUMA); without it placement is off, and on a machine with
 * more than one node every call says so (-ENOSYS) rather than guess.
 * Which nodes exist is read from sysfs (os_sysfs.c), which needs no library.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include <pagepool/pp_config.h>

#include "pp_os_fault.h"
#include "pp_os.h"

#if PP_HAVE_NUMA
#include <numa.h>
#include <numaif.h>
#endif

/* Bits in struct pp_os_policy's mask. */
#define POLICY_MAX_NODES (sizeof(((struct pp_os_policy *)0)->mask) * 8)

bool pp_os_numa_available(void)
{
#if PP_HAVE_NUMA
	return numa_available() >= 0;
#else
	return false;
#endif
}

int pp_os_current_node(void)
{
	unsigned int cpu, node;

	/* getcpu() reads the node from the vDSO; it needs no libnuma. */
	if (getcpu(&cpu, &node) == 0)
		return (int)node;
	return 0;
}

int pp_os_addr_node(const void *addr)
{
#if PP_HAVE_NUMA
	int node = -1;

	PP_OS_FAIL_HERE(EFAULT);
	if (get_mempolicy(&node, NULL, 0, (void *)addr,
			  MPOL_F_NODE | MPOL_F_ADDR) < 0)
		return -errno;
	return node;
#else
	(void)addr;
	/* With one node there is nowhere else the memory could be. */
	return pp_os_node_count() == 1 ? 0 : -ENOSYS;
#endif
}

#if PP_HAVE_NUMA
static void node_mask(unsigned long *mask, size_t words, int node)
{
	memset(mask, 0, words * sizeof(*mask));
	mask[(unsigned int)node / (8 * sizeof(*mask))] |=
		1UL << ((unsigned int)node % (8 * sizeof(*mask)));
}

/* The thread's policy becomes @mode over @mask; the old one goes into
 * @saved for pp_os_policy_restore(). */
static int policy_replace(int mode, const unsigned long *mask,
			  struct pp_os_policy *saved)
{
	PP_OS_FAIL_HERE(EINVAL);
	if (get_mempolicy(&saved->mode, saved->mask, POLICY_MAX_NODES + 1,
			  NULL, 0) < 0)
		return -errno;
	PP_OS_FAIL_HERE(ENOMEM);
	if (set_mempolicy(mode, mask, POLICY_MAX_NODES + 1) < 0)
		return -errno;
	saved->changed = true;
	return 0;
}
#endif

int pp_os_bind_range(void *addr, size_t len, int node)
{
	if (node < 0 || (size_t)node >= POLICY_MAX_NODES)
		return -EINVAL;
#if PP_HAVE_NUMA
	{
		unsigned long mask[POLICY_MAX_NODES / (8 * sizeof(long))];

		node_mask(mask, sizeof(mask) / sizeof(mask[0]), node);
		PP_OS_FAIL_HERE(ENOMEM);
		/* The kernel reads maxnode - 1 bits. */
		if (mbind(addr, len, MPOL_BIND, mask, POLICY_MAX_NODES + 1,
			  0) < 0)
			return -errno;
		return 0;
	}
#else
	(void)addr;
	(void)len;
	return pp_os_node_count() == 1 && node == 0 ? 0 : -ENOSYS;
#endif
}

int pp_os_policy_bind(int node, struct pp_os_policy *saved)
{
	saved->changed = false;
	if (node < 0 || (size_t)node >= POLICY_MAX_NODES)
		return -EINVAL;
#if PP_HAVE_NUMA
	{
		unsigned long mask[POLICY_MAX_NODES / (8 * sizeof(long))];

		node_mask(mask, sizeof(mask) / sizeof(mask[0]), node);
		return policy_replace(MPOL_BIND, mask, saved);
	}
#else
	return pp_os_node_count() == 1 && node == 0 ? 0 : -ENOSYS;
#endif
}

void pp_os_policy_restore(const struct pp_os_policy *saved)
{
	if (!saved->changed)
		return;
#if PP_HAVE_NUMA
	/*
	 * The saved mode carries its flags (MPOL_F_STATIC_NODES, ...) as
	 * get_mempolicy() returned them; set_mempolicy() takes them back.
	 * MPOL_DEFAULT wants no mask.
	 */
	if (saved->mode == MPOL_DEFAULT)
		set_mempolicy(MPOL_DEFAULT, NULL, 0);
	else
		set_mempolicy(saved->mode, saved->mask, POLICY_MAX_NODES + 1);
#endif
}

uint64_t pp_os_online_node_mask(void)
{
	int left = pp_os_node_count();
	uint64_t mask = 0;

	for (int n = 0; n < 64 && left > 0; n++) {
		if (pp_os_node_online(n)) {
			mask |= 1ULL << n;
			left--;
		}
	}
	return mask ? mask : 1;
}

#if PP_HAVE_NUMA
/* Copy a 64-bit node mask into the kernel's unsigned long layout. */
static void mask_from_u64(unsigned long *mask, size_t words, uint64_t m)
{
	memset(mask, 0, words * sizeof(*mask));
	for (unsigned int n = 0; n < 64; n++)
		if (m & (1ULL << n))
			mask[n / (8 * sizeof(*mask))] |=
				1UL << (n % (8 * sizeof(*mask)));
}
#endif

int pp_os_interleave_range(void *addr, size_t len, uint64_t mask)
{
	if (!mask)
		return -EINVAL;
#if PP_HAVE_NUMA
	{
		unsigned long m[POLICY_MAX_NODES / (8 * sizeof(long))];

		mask_from_u64(m, sizeof(m) / sizeof(m[0]), mask);
		PP_OS_FAIL_HERE(ENOMEM);
		if (mbind(addr, len, MPOL_INTERLEAVE, m, POLICY_MAX_NODES + 1,
			  0) < 0)
			return -errno;
		return 0;
	}
#else
	(void)addr;
	(void)len;
	/* One node: interleaving over it is where the memory goes anyway. */
	return mask == 1 && pp_os_node_count() == 1 ? 0 : -ENOSYS;
#endif
}

int pp_os_policy_interleave(uint64_t mask, struct pp_os_policy *saved)
{
	saved->changed = false;
	if (!mask)
		return -EINVAL;
#if PP_HAVE_NUMA
	{
		unsigned long m[POLICY_MAX_NODES / (8 * sizeof(long))];

		mask_from_u64(m, sizeof(m) / sizeof(m[0]), mask);
		return policy_replace(MPOL_INTERLEAVE, m, saved);
	}
#else
	return mask == 1 && pp_os_node_count() == 1 ? 0 : -ENOSYS;
#endif
}
