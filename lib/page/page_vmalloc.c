/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_vmalloc.c - the public pp_vmalloc() and the allocator as a source
 * of base pages for a huge vmalloc area's tail (opts->alloc).
 *
 * The area itself (reservation, hugepage head, anonymous tail, NUMA,
 * statistics, pp_vfree()) is lib/mem's, which sits below the allocator and
 * must not call it. So the allocator's part lives here, behind lib/mem's
 * base page source (mem/internal/pp_vm_area.h): fill() takes the pages with the
 * bulk array call and names each by its arena's file and offset, release()
 * gives them back once lib/mem has unmapped the area. pp_vmalloc() is
 * here, not in lib/mem, because it is the one call that has to see both
 * layers; a registration hook in lib/mem would have been global state
 * (doc/design.md decision 6).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <pagepool/pp_arena.h>
#include <pagepool/pp_page.h>
#include <pagepool/pp_vmalloc.h>

#include "pp_log.h"
#include "pp_arena_user.h"
#include "pp_vm_area.h"
#include "pp_os_fault.h"

/* The allocator's share of an area: the pages it took, for release(). */
struct alloc_source {
	struct pp_allocator *alloc;
	struct pp_page **pages;
	unsigned long nr;
	/* The arena segment the last page was found in: runs share one. */
	const struct pp_arena *arena;
	struct pp_arena_segment seg;
};

/* Bulk calls until the array is full or a call brings nothing new. */
static unsigned long fill_array(struct pp_allocator *alloc, int nid,
				uint64_t nodemask, struct pp_page **pages,
				unsigned long n)
{
	unsigned long have = 0, got;

	for (;;) {
		got = pp_alloc_pages_bulk(alloc, nid, nodemask, (int)n, NULL,
					  pages);
		if (got >= n || got == have)
			return got;
		have = got;
	}
}

/*
 * Interleave: page i from the i-th node of the mask in turn, each node's
 * share taken with one bulk array call; what a node cannot give is then
 * taken from any node, as MPOL_INTERLEAVE falls back too.
 */
static int fill_interleaved(struct pp_allocator *alloc, uint64_t mask,
			    struct pp_page **pages, unsigned long n)
{
	unsigned int k = (unsigned int)__builtin_popcountll(mask), j = 0;
	struct pp_page **tmp;

	tmp = pp_os_calloc(n / k + 1, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (int node = 0; node < 64; node++) {
		unsigned long cnt, got;

		if (!(mask & (1ULL << node)))
			continue;
		cnt = n > j ? (n - j + k - 1) / k : 0;
		memset(tmp, 0, (n / k + 1) * sizeof(*tmp));
		got = fill_array(alloc, node, PP_NODEMASK_PREFERRED_ONLY, tmp,
				 cnt);
		for (unsigned long t = 0; t < got && t < cnt; t++)
			pages[j + (unsigned long)k * t] = tmp[t];
		j++;
	}
	free(tmp);
	return 0;
}

/* Where an allocator page lives in its arena's file. */
static int resolve_page(struct alloc_source *as, const char *name,
			const struct pp_page *page, struct pp_vm_base_page *out)
{
	uintptr_t addr = (uintptr_t)pp_page_address(page);
	const struct pp_arena *arena = pp_page_arena(as->alloc, page);

	if (!arena)
		return -EINVAL;
	if (arena != as->arena ||
	    addr - (uintptr_t)as->seg.addr >= as->seg.len) {
		if (pp_arena_page_size(arena) != PP_PAGE_SIZE_4K) {
			PP_ERR("vmalloc '%s': the allocator's arena '%s' has %zu kB pages; base pages can only come from an arena of 4 KiB pages (or pass no allocator)",
			       name, pp_arena_name(arena),
			       pp_arena_page_size(arena) >> 10);
			return -EINVAL;
		}
		/* By its slot: a growable arena's segments come and go
		 * (the one of an allocated page stays). */
		if (pp_arena_segment_of(arena, (void *)addr, &as->seg))
			return -EINVAL;
		as->arena = arena;
	}
	out->fd = as->seg.fd;
	out->offset = as->seg.fd_offset + (addr - (uintptr_t)as->seg.addr);
	return 0;
}

static int alloc_source_fill(void *ctx, const char *name,
			     const struct pp_vmalloc_opts *o, unsigned long n,
			     struct pp_vm_base_page *out)
{
	struct alloc_source *as = ctx;
	unsigned long got;
	int err;

	if (n > INT_MAX) {
		PP_ERR("vmalloc '%s': %lu base pages are more than one bulk call can take: allow hugepages or pass no allocator",
		       name, n);
		return -EINVAL;
	}
	as->pages = pp_os_calloc(n, sizeof(*as->pages));
	if (!as->pages)
		return -ENOMEM;
	as->nr = n;
	if (o->flags & PP_VMALLOC_F_INTERLEAVE) {
		err = fill_interleaved(as->alloc, o->interleave_nodes,
				       as->pages, n);
		if (err)
			return err;
		got = fill_array(as->alloc, PP_NUMA_NODE_ANY, PP_NODEMASK_ALL,
				 as->pages, n);
	} else {
		got = fill_array(as->alloc, o->numa_node,
				 o->numa_node >= 0 ? PP_NODEMASK_PREFERRED_ONLY :
						     PP_NODEMASK_ALL,
				 as->pages, n);
	}
	if (got < n) {
		PP_ERR("vmalloc '%s': the allocator gave %lu of the %lu base pages needed%s: give it a larger arena, or pass no allocator for anonymous base pages",
		       name, got, n,
		       o->numa_node >= 0 ? " on the node asked" : "");
		return -ENOMEM;
	}
	for (unsigned long i = 0; i < n; i++) {
		err = resolve_page(as, name, as->pages[i], &out[i]);
		if (err)
			return err;
	}
	return 0;
}

static void alloc_source_release(void *ctx)
{
	struct alloc_source *as = ctx;

	/* NULL entries (a short fill) are skipped by the bulk free. */
	if (as->pages)
		pp_free_pages_bulk(as->alloc, as->pages, as->nr);
	free(as->pages);
	free(as);
}

struct pp_vm_area *pp_vmalloc(size_t size, const struct pp_vmalloc_opts *opts)
{
	struct pp_vm_base_source src = {
		.fill = alloc_source_fill,
		.release = alloc_source_release,
		.what = "the allocator",
	};
	struct alloc_source *as;

	/*
	 * Read opts->alloc only when the caller's struct has it; a short or
	 * unknown opts->sz is lib/mem's to refuse, with its message.
	 */
	if (!opts || opts->sz < sizeof(*opts) || !opts->alloc)
		return pp_vm_area_create(size, opts, NULL);
	as = pp_os_calloc(1, sizeof(*as));
	if (!as) {
		errno = ENOMEM;
		return NULL;
	}
	as->alloc = opts->alloc;
	src.ctx = as;
	/* From here the area owns @as: released on failure or at pp_vfree(). */
	return pp_vm_area_create(size, opts, &src);
}
