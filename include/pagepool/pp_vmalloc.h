/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_vmalloc.h - large virtually contiguous areas mapped with the biggest
 * page size that fits: Linux 5.13's huge vmalloc (Nicholas Piggin), done
 * without its waste.
 *
 * An area is one reserved range. Its head is mapped with 1 GiB pages as far
 * as the size allows and 1 GiB pages are free, the next part with 2 MiB
 * pages, and the tail, shorter than 2 MiB, with 4 KiB pages. So a 3 MiB
 * area is one 2 MiB page and 256 base pages, where the kernel maps two
 * 2 MiB pages and leaves 1 MiB unused. Every page is taken and the page
 * tables are filled at creation (doc/design.md decision 7): running short is an
 * error or a fallback now, never a SIGBUS later.
 *
 * Each page size has a support query (pp_vmalloc_page_size_supported(),
 * like the kernel's arch_vmap_pud/pmd_supported()) and a count of pages a
 * new area can take; a size that is unsupported, switched off or short is
 * skipped for the next smaller one unless the caller forbids falling back.
 * The off switch, like the kernel's nohugevmalloc: PAGEPOOL_NOHUGEVMALLOC=1
 * in the environment, or PP_VMALLOC_F_NO_HUGE for one area.
 *
 * Base pages come from anonymous memory, or, when the caller names an
 * allocator, from its bulk array call (as the kernel's vmalloc took to
 * doing after 5.13): the pages of a 4 KiB-page arena are mapped a second
 * time, into the area.
 */
#ifndef PAGEPOOL_PP_VMALLOC_H
#define PAGEPOOL_PP_VMALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_arena.h>
#include <pagepool/pp_common.h>
#include <pagepool/pp_page.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pp_vm_area;

/* The environment variable that switches hugepages off for every area. */
#define PP_VMALLOC_ENV_NOHUGE "PAGEPOOL_NOHUGEVMALLOC"

enum pp_vmalloc_flags {
	/* Base pages only: the off switch for one area (VM_NO_HUGE_VMAP). */
	PP_VMALLOC_F_NO_HUGE = 1u << 0,
	/* Never use 1 GiB pages (or 2 MiB pages) for this area. */
	PP_VMALLOC_F_NO_1G = 1u << 1,
	PP_VMALLOC_F_NO_2M = 1u << 2,
	/*
	 * Fail with ENOMEM rather than map with smaller pages when the
	 * hugepages the size calls for are short. Sizes switched off by the
	 * flags above, the environment or the kernel are not fallbacks.
	 */
	PP_VMALLOC_F_NO_FALLBACK = 1u << 3,
	/*
	 * Spread the pages over the nodes in opts->interleave_nodes, page by
	 * page (MPOL_INTERLEAVE), as the kernel does for its big hash tables.
	 */
	PP_VMALLOC_F_INTERLEAVE = 1u << 4,
	/*
	 * Round the size up to the largest page size allowed and map all of
	 * it with that size: the kernel's 5.13 behaviour, and the only way to
	 * put an area smaller than a hugepage on one. The rounding shows as
	 * waste in the statistics.
	 */
	PP_VMALLOC_F_ROUND_UP = 1u << 5,
};

struct pp_vmalloc_opts {
	size_t sz;                 /* sizeof(struct pp_vmalloc_opts) */
	unsigned int flags;        /* enum pp_vmalloc_flags */
	int numa_node;             /* PP_NUMA_NODE_ANY or a node to bind to */
	uint64_t interleave_nodes; /* with _F_INTERLEAVE; 0: all online */
	/*
	 * Base pages from this allocator's bulk array call (its arenas must
	 * have 4 KiB pages), or NULL for anonymous memory. The allocator must
	 * outlive the area.
	 */
	struct pp_allocator *alloc;
	const char *name;          /* for messages; may be NULL */
};

/* What an area is made of. Bytes and page counts per page size. */
struct pp_vm_area_stats {
	size_t size;          /* bytes asked */
	size_t mapped;        /* bytes mapped: size rounded up to pages */
	size_t wasted;        /* mapped - size */
	/* What 5.13 would have wasted: size rounded up to its largest page. */
	size_t kernel_wasted;
	size_t bytes_1g, bytes_2m, bytes_4k;
	unsigned long pages_1g, pages_2m, pages_4k;
	/* Page sizes the area would have used but found short. */
	unsigned int fallbacks;
	bool base_from_allocator;
	bool interleaved;
	int node;             /* bound node, or PP_NUMA_NODE_ANY */
	/*
	 * Nodes the hugepages and a sample of the base pages (one in 512
	 * beyond the first 512) were found on; bit n for node n < 64.
	 */
	uint64_t nodes_seen;
};

/*
 * pp_vmalloc - a virtually contiguous, zeroed, read-write area of @size
 * bytes. @opts may be NULL: any node, every page size, fallback allowed,
 * anonymous base pages. The address (pp_vm_area_addr()) is aligned to the
 * largest page size the area uses, and at least 4 KiB.
 * Returns the area, or NULL with errno:
 *   EINVAL  size 0 or too large, bad opts->sz, unknown flags, a node that
 *           is not online, an allocator whose arenas are not 4 KiB pages;
 *   ENOMEM  hugepages short with PP_VMALLOC_F_NO_FALLBACK (the message
 *           names the sysfs file to write), no memory, or the allocator
 *           short of base pages;
 *   ENOSYS  a node or interleave asked on a multi-node machine without
 *           libnuma.
 * Context: any thread; not the data path. It takes hugepages from the
 * machine's shared pool and calls mmap several times.
 */
PP_API struct pp_vm_area *pp_vmalloc(size_t size,
				     const struct pp_vmalloc_opts *opts);

/*
 * pp_vfree - unmap the area and give back every page: hugepages to the
 * machine, base pages to the allocator they came from. NULL is a no-op.
 * Returns 0. No thread may touch the area during or after the call.
 */
PP_API int pp_vfree(struct pp_vm_area *area);

PP_API void *pp_vm_area_addr(const struct pp_vm_area *area);
PP_API size_t pp_vm_area_size(const struct pp_vm_area *area);

/* Returns 0, or -EINVAL for NULL arguments. */
PP_API int pp_vm_area_stats(const struct pp_vm_area *area,
			    struct pp_vm_area_stats *out);

/*
 * pp_vm_area_stats_json - the statistics as one JSON object in @buf.
 * Returns the length snprintf would write (may be >= @len), or -EINVAL.
 */
PP_API int pp_vm_area_stats_json(const struct pp_vm_area *area, char *buf,
				 size_t len);

/*
 * pp_vmalloc_page_size_supported - whether areas can use @page_size at all
 * (4 KiB always; 2 MiB and 1 GiB when the kernel offers them: the
 * counterpart of arch_vmap_pmd/pud_supported()). Sizes with no query are
 * unsupported, as in the seed's fallback definitions.
 */
PP_API bool pp_vmalloc_page_size_supported(size_t page_size);

/*
 * pp_vmalloc_pages_available - hugepages of @page_size a new area could
 * take now on @node (PP_NUMA_NODE_ANY: the machine): free minus those
 * other mappings have reserved. Returns the count or -errno (-EINVAL for
 * a size that is not a hugepage size, -ENOENT where the kernel has none).
 */
PP_API long pp_vmalloc_pages_available(size_t page_size, int node);

/*
 * pp_vmalloc_huge_disabled - whether the environment switch
 * (PAGEPOOL_NOHUGEVMALLOC=1) is set. Read at every pp_vmalloc() call.
 */
PP_API bool pp_vmalloc_huge_disabled(void);

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_VMALLOC_H */
