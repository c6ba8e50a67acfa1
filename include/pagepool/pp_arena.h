/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_arena.h - the hugepage arena: one contiguous virtual range backed by
 * 1 GiB, 2 MiB or 4 KiB pages on one NUMA node, pre-faulted and locked at
 * creation (doc/design.md decisions 1 and 7).
 *
 * The arena reserves its whole range with PROT_NONE and maps hugepage-backed
 * segments into it with MAP_FIXED, so that one AF_XDP UMEM or one VFIO
 * mapping per segment covers it and a page's index is (addr - base) >> 12.
 *
 * A growable arena (opts.max_size, doc/growth.md) reserves max_size and
 * commits only part of it: @size at creation, then one grow_step segment
 * at a time as its allocator asks, and gives idle segments back to the
 * kernel. pp_arena_size() is then the reserved span (where pages may lie),
 * pp_arena_committed() what is backed by memory now.
 */
#ifndef PAGEPOOL_PP_ARENA_H
#define PAGEPOOL_PP_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pp_arena;

#define PP_PAGE_SIZE_AUTO 0UL /* largest size that fits and has free pages */
#define PP_PAGE_SIZE_4K (4UL << 10)
#define PP_PAGE_SIZE_2M (2UL << 20)
#define PP_PAGE_SIZE_1G (1UL << 30)

#define PP_NUMA_NODE_ANY (-1)

enum pp_arena_flags {
	/*
	 * When hugepages of the asked (or any, for AUTO) size are short, fall
	 * back to 4 KiB pages with a warning instead of failing with ENOMEM.
	 */
	PP_ARENA_F_ALLOW_4K = 1u << 0,
	/* Skip mlock(); for callers without RLIMIT_MEMLOCK headroom. */
	PP_ARENA_F_NO_LOCK = 1u << 1,
};

struct pp_arena_opts {
	size_t sz;            /* sizeof(struct pp_arena_opts), for growth */
	size_t size;          /* bytes wanted; rounded up to the page size */
	size_t page_size;     /* PP_PAGE_SIZE_*; AUTO picks 1G, then 2M */
	int numa_node;        /* PP_NUMA_NODE_ANY or a node number */
	unsigned int flags;   /* enum pp_arena_flags */
	const char *hugetlbfs_dir; /* NULL: memfd_create(MFD_HUGETLB) */
	const char *name;     /* for messages and memfd names; may be NULL */
	/*
	 * Growth; both 0: a fixed arena of @size, as before. Otherwise the
	 * arena reserves @max_size of address space and commits @size of it
	 * at creation (its minimum, never given back), then grows and
	 * shrinks by @grow_step, each step a segment of its own. @size and
	 * @max_size are rounded up to the step, the step to the page size.
	 */
	size_t max_size;
	size_t grow_step;     /* 0: PP_ARENA_GROW_STEP_DEFAULT */
};

/* 32 MiB: 16 2 MiB pages a step; a 1 GiB page is its own step. */
#define PP_ARENA_GROW_STEP_DEFAULT (32UL << 20)

/* One mapping inside the arena: what VFIO maps and UMEMs cover. */
struct pp_arena_segment {
	void *addr;
	size_t len;
	size_t page_size;
	int node;
	int fd;       /* the memfd or hugetlbfs file (unlinked) */
	uint64_t fd_offset;
};

/*
 * pp_arena_create - reserve, map, populate and lock an arena.
 *
 * Returns the arena, or NULL with errno:
 *   EINVAL  bad size or opts->sz, unknown page size, offline or unknown node;
 *   ENOMEM  too few free hugepages of that size (the message names the page
 *           size, the pages needed, the pages free on which node, and the
 *           sysfs file to write) and no 4 KiB fallback allowed;
 *   EPERM/EACCES  no permission for hugetlbfs or mlock (message says which);
 *   ENODEV  memory landed on another node than asked (refused, not used).
 * Context: any thread; not on the data path.
 */
PP_API struct pp_arena *pp_arena_create(const struct pp_arena_opts *opts);

/*
 * pp_arena_destroy - unmap and release the arena.
 * Returns 0, or -EBUSY while an allocator still uses it (nothing is freed;
 * the message says how many: destroy them first).
 */
PP_API int pp_arena_destroy(struct pp_arena *arena);

PP_API void *pp_arena_base(const struct pp_arena *arena);
PP_API size_t pp_arena_size(const struct pp_arena *arena);
PP_API size_t pp_arena_page_size(const struct pp_arena *arena);
PP_API int pp_arena_node(const struct pp_arena *arena);
PP_API const char *pp_arena_name(const struct pp_arena *arena);

/*
 * Bytes backed by memory now: pp_arena_size() for a fixed arena; for a
 * growable one the committed segments (changes under a control thread,
 * read racily).
 */
PP_API size_t pp_arena_committed(const struct pp_arena *arena);
PP_API bool pp_arena_growable(const struct pp_arena *arena);

/*
 * pp_arena_pin - a consumer that registers the arena's memory once (an
 * AF_XDP UMEM, a vhost-user memory table, an RDMA or IOMMU registration
 * of its own) pins it while it holds the registration: growth and giving
 * memory back are refused meanwhile, with a message that names @who (a
 * phrase: "the AF_XDP UMEM of port eth0"), until the last pin is dropped.
 * Sets *@len to the committed bytes from the base: what the consumer may
 * register. Returns 0, or -EBUSY when the committed memory is not
 * contiguous from the base (a step was given back below one that is
 * committed): the message says so, nothing is pinned. A fixed arena pins
 * at once with its size. Control path, any thread.
 */
PP_API int pp_arena_pin(struct pp_arena *arena, const char *who,
			size_t *len);
/* pp_arena_unpin - drop a pin taken with pp_arena_pin(). */
PP_API void pp_arena_unpin(struct pp_arena *arena);
/* Whether a consumer pins the arena now (read racily: a hint). */
PP_API bool pp_arena_pinned(const struct pp_arena *arena);

/*
 * The committed segments, in address order (a growable arena's change as
 * it grows and shrinks: take them under the consumer's own registration,
 * see pp_arena_user.h).
 */
PP_API unsigned int pp_arena_segment_count(const struct pp_arena *arena);
/* Returns 0, or -EINVAL for an index past the last segment. */
PP_API int pp_arena_segment(const struct pp_arena *arena, unsigned int idx,
			    struct pp_arena_segment *out);

static inline bool pp_arena_contains(const struct pp_arena *arena,
				     const void *addr)
{
	uintptr_t base = (uintptr_t)pp_arena_base(arena);

	return (uintptr_t)addr - base < pp_arena_size(arena);
}

/*
 * pp_hugepages_free - free hugepages of @page_size on @node (or all nodes
 * for PP_NUMA_NODE_ANY), read from sysfs. Returns the count or -errno.
 */
PP_API long pp_hugepages_free(size_t page_size, int node);

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_ARENA_H */
