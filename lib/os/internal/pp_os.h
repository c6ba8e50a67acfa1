/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_os.h - the thin OS layer: the only code in pagepool that calls
 * mmap/munmap, memfd_create, fallocate, madvise, mlock, mbind,
 * get_mempolicy, libnuma and the hugepage files in sysfs, and the rule
 * for the PCI addresses that go into sysfs paths.
 *
 * Every call here is a control-path call. Calls return 0 (or a count, a
 * node, a descriptor) on success and -errno on failure; none of them logs
 * except where it says so, because only the caller knows what the operator
 * should be told. errno is left as the failing syscall set it.
 */
#ifndef PP_INTERNAL_OS_H
#define PP_INTERNAL_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- os_mem.c: address space, backing files, population, locking ---- */

/*
 * pp_os_reserve - reserve @len bytes of address space, PROT_NONE and not
 * backed, starting at a multiple of @align (a power of two, at least 4 KiB).
 * Returns the start, or NULL with errno set.
 */
void *pp_os_reserve(size_t len, size_t align);

/* pp_os_unmap - unmap [@addr, @addr + @len); a reservation or a mapping. */
void pp_os_unmap(void *addr, size_t len);

/*
 * pp_os_rereserve - turn a mapping inside a reservation back into
 * reserved address space (PROT_NONE), dropping what was mapped there.
 */
void pp_os_rereserve(void *addr, size_t len);

/*
 * pp_os_map_fixed - map @len bytes of @fd at @off over [@addr, @addr + @len),
 * which must lie inside a reservation, shared and read-write. A failed
 * MAP_FIXED may leave the range unmapped rather than reserved; the caller
 * unmaps the whole reservation either way.
 * Returns 0 or -errno.
 */
int pp_os_map_fixed(void *addr, size_t len, int fd, uint64_t off);

/*
 * pp_os_memfd - an anonymous file whose pages are @page_size: hugetlb
 * (MFD_HUGETLB with the size flag) for 2 MiB and 1 GiB, shmem for 4 KiB.
 * @name shows in /proc/<pid>/maps. Close-on-exec. Returns the descriptor
 * or -errno (-EINVAL for a page size the kernel does not offer).
 */
int pp_os_memfd(const char *name, size_t page_size);

/*
 * pp_os_hugetlbfs_page_size - the page size of the hugetlbfs mount at @dir.
 * Returns the page size, or -EINVAL when @dir is not a hugetlbfs mount,
 * or the -errno of statfs().
 */
long pp_os_hugetlbfs_page_size(const char *dir);

/*
 * pp_os_hugetlbfs_file - create a file 0600 in hugetlbfs directory @dir,
 * named after @name ('/' replaced) and this process, and unlink it at once, so that it lives only as long as the descriptor
 * (nothing is left behind if the process dies). Returns the descriptor or
 * -errno.
 */
int pp_os_hugetlbfs_file(const char *dir, const char *name);

/*
 * pp_os_populate_file - allocate every page of [0, @len) in @fd now. For
 * hugetlb files this takes the pages out of the free pool and fails at once
 * with -ENOSPC when too few are free, instead of a SIGBUS at the first
 * touch. The pages come from the calling thread's memory policy, so a
 * caller that wants them on a node sets it first (pp_os_policy_bind()).
 */
int pp_os_populate_file(int fd, size_t len);

/*
 * pp_os_populate_map - fill the page tables of a mapping whose file pages
 * exist already (MADV_POPULATE_WRITE, Linux 5.14), so the data path takes
 * no first-touch fault. Returns 0, or -EINVAL where the kernel lacks it
 * (the pages are allocated anyway; only the faults remain).
 */
int pp_os_populate_map(void *addr, size_t len);

/*
 * pp_os_map_anon_fixed - private anonymous read-write memory over
 * [@addr, @addr + @len), which must lie inside a reservation. Not yet
 * backed: populate it with pp_os_populate_map(). Returns 0 or -errno.
 */
int pp_os_map_anon_fixed(void *addr, size_t len);

/*
 * pp_os_no_thp - keep transparent hugepages off [@addr, @addr + @len)
 * (MADV_NOHUGEPAGE), so memory meant to be 4 KiB pages stays 4 KiB pages.
 * Returns 0 or -errno.
 */
int pp_os_no_thp(void *addr, size_t len);

/* pp_os_lock - mlock(); -ENOMEM/-EPERM when RLIMIT_MEMLOCK is too small. */
int pp_os_lock(void *addr, size_t len);
void pp_os_unlock(void *addr, size_t len);

/* ---- os_numa.c: nodes and memory policy ---- */

/* Whether pagepool was built able to place memory (libnuma). */
bool pp_os_numa_available(void);

/*
 * pp_os_membarrier_register - make pp_os_membarrier() usable by this
 * process (MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED). Returns 0 or -errno
 * (ENOSYS, EINVAL: a kernel before 4.14; EPERM: a seccomp policy).
 */
int pp_os_membarrier_register(void);

/*
 * pp_os_membarrier_usable - whether this process uses the asymmetric
 * handshakes (pp_os_membarrier() on the rare side), decided once for all
 * their users, which must agree: 0 when registered; -ECANCELED when
 * turned off (PAGEPOOL_NO_MEMBARRIER=1, or a ThreadSanitizer build);
 * else pp_os_membarrier_register()'s error.
 */
int pp_os_membarrier_usable(void);

/*
 * pp_os_membarrier - a full memory barrier on every CPU that runs a thread
 * of this process, before it returns (MEMBARRIER_CMD_PRIVATE_EXPEDITED).
 * Only after pp_os_membarrier_register() succeeded.
 */
void pp_os_membarrier(void);

/*
 * pp_os_current_node - the node of the CPU the calling thread runs on now
 * (it may move). Returns the node, or 0 when unknown on a one-node machine.
 */
int pp_os_current_node(void);

/*
 * pp_os_addr_node - the node of the page holding @addr, which must be
 * populated (get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)). Returns the node,
 * or -ENOSYS when built without libnuma on a machine with several nodes
 * (it cannot tell), or -errno.
 */
int pp_os_addr_node(const void *addr);

/*
 * pp_os_bind_range - bind [@addr, @addr + @len) to @node (MPOL_BIND), so a
 * fault there takes memory only from @node. Returns 0 or -errno.
 */
int pp_os_bind_range(void *addr, size_t len, int node);

/*
 * pp_os_policy_bind / pp_os_policy_restore - bind the calling thread's
 * memory policy to @node, and put the previous one back. Needed around
 * pp_os_populate_file(): fallocate() has no mapping whose policy could
 * apply, so the kernel allocates by the thread's policy.
 * @saved is opaque storage for the previous policy.
 */
struct pp_os_policy {
	int mode;
	unsigned long mask[16]; /* 1024 nodes, the kernel's default maximum */
	bool changed;
};
int pp_os_policy_bind(int node, struct pp_os_policy *saved);
void pp_os_policy_restore(const struct pp_os_policy *saved);

/*
 * pp_os_interleave_range - spread the pages of [@addr, @addr + @len) over
 * the nodes in @mask (bit n: node n), one page each in turn
 * (MPOL_INTERLEAVE), for faults after the call. Returns 0, -EINVAL for an
 * empty mask, or -ENOSYS without libnuma when @mask names more than node 0.
 */
int pp_os_interleave_range(void *addr, size_t len, uint64_t mask);

/*
 * pp_os_policy_interleave - the calling thread's policy becomes
 * MPOL_INTERLEAVE over @mask until pp_os_policy_restore(@saved); for
 * fallocate() of hugetlb files, which allocates by the thread's policy and
 * interleaves by page index. Returns 0 or -errno as above.
 */
int pp_os_policy_interleave(uint64_t mask, struct pp_os_policy *saved);

/* pp_os_online_node_mask - bit n set for each online node n < 64. */
uint64_t pp_os_online_node_mask(void);

/* ---- os_sysfs.c: nodes and hugepage counts ---- */

/* pp_os_node_online - whether @node exists and is online. */
bool pp_os_node_online(int node);

/*
 * pp_os_node_state - 1 when @node is online, 0 when it is not (or is
 * negative), -errno when /sys/devices/system/node/online cannot be read;
 * for callers that must not mistake a failed read for an offline node.
 */
int pp_os_node_state(int node);

/* pp_os_node_count - how many nodes are online (at least 1). */
int pp_os_node_count(void);

/* Whether the kernel offers hugepages of @page_size (its sysfs dir exists). */
bool pp_os_hugepage_size_supported(size_t page_size);

/*
 * pp_os_hugepages_free / _total - free_hugepages / nr_hugepages of
 * @page_size on @node, or on the whole machine for a negative @node.
 * Returns the count or -errno (-ENOENT: no such size or node).
 */
long pp_os_hugepages_free(size_t page_size, int node);
long pp_os_hugepages_total(size_t page_size, int node);

/*
 * pp_os_hugepages_reserve_cmd - the pp-hugepages command that reserves
 * @more pages of @page_size beyond today's reservation, on @node (or the
 * whole machine for a negative @node), written into @buf: the one hint
 * every hugepage shortage message gives (pp-hugepages sets the total and
 * reads back what the kernel gave, which a hand-written echo does not).
 */
void pp_os_hugepages_reserve_cmd(char *buf, size_t len, size_t page_size,
				 int node, long more);

/*
 * pp_os_hugepages_reserved - resv_hugepages of @page_size: pages counted
 * free that mappings have reserved but not yet touched. Machine-wide only
 * (sysfs keeps no per-node figure). Returns the count or -errno.
 */
long pp_os_hugepages_reserved(size_t page_size);

/*
 * pp_os_hugepages_available - pages of @page_size a new mapping can take
 * on @node (negative: any node): free minus reserved-but-untouched, which
 * belong to other mappings. No per-node reserve count exists, so a node's
 * figure is capped by the machine's. Returns the count or -errno.
 */
long pp_os_hugepages_available(size_t page_size, int node);

/*
 * pp_os_hugepages_path - the sysfs file @leaf ("nr_hugepages", ...) for
 * @page_size on @node (machine-wide for a negative @node) written into
 * @buf; for messages that tell the operator what to write where.
 */
void pp_os_hugepages_path(char *buf, size_t len, size_t page_size, int node,
			  const char *leaf);

/* ---- os_pci.c: PCI addresses ---- */

/* "DDDD:BB:DD.F" and its NUL: the kernel's name of a PCI function. */
#define PP_PCI_ADDR_LEN sizeof("0000:00:00.0")

/* The forms pp_os_pci_addr_parse() accepts, for messages to the operator. */
#define PP_PCI_ADDR_FORMS                                                   \
	"DDDD:BB:DD.F (hex: domain, bus, device 00-1f, function 0-7; "      \
	"e.g. 0000:00:02.0) or BB:DD.F for domain 0000"

/*
 * pp_os_pci_addr_parse - @in as the kernel names a PCI function in
 * /sys/bus/pci/devices, into @out in the kernel's form. Accepted, and
 * nothing else: "DDDD:BB:DD.F" (exactly 12 characters: domain 4 hex
 * digits, ':', bus 2, ':', device 2 from 00 to 1f, '.', function 0-7),
 * or the short "BB:DD.F" (7 characters), which is domain 0000. Hex digits
 * in either case; @out is always the 12-character lower-case form and its
 * NUL, so it is one path component that cannot climb ("../x",
 * "0000:00:03.0/../x" are refused). Every address that reaches a sysfs
 * path or a VFIO call goes through here first. @in may be NULL (refused).
 * @out is written only on success. Returns 0 or -EINVAL. Any thread.
 */
int pp_os_pci_addr_parse(const char *in, char out[PP_PCI_ADDR_LEN]);

#endif /* PP_INTERNAL_OS_H */
