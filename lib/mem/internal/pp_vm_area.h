/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_vm_area.h - what the layers above lib/mem may know about huge
 * vmalloc areas beyond pp_vmalloc.h: the entry point that builds an area
 * with its base pages taken from a caller's source instead of anonymous
 * memory. Never installed.
 *
 * Why it exists: the allocator-backed tail (opts->alloc) needs lib/page,
 * which sits above lib/mem, while lib/page's descriptor arrays need areas.
 * So lib/mem owns the whole area (reservation, hugepage head, anonymous
 * tail, NUMA, statistics) and knows nothing of the allocator; lib/page
 * (page_vmalloc.c) wraps its bulk calls in a pp_vm_base_source and owns
 * the public pp_vmalloc(), the one call that can see both.
 */
#ifndef PP_INTERNAL_VM_AREA_H
#define PP_INTERNAL_VM_AREA_H

#include <stdint.h>

#include <pagepool/pp_vmalloc.h>

/* Shared between the component libraries but not exported. */
#ifndef PP_HIDDEN
#define PP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Where one base page of the tail is: @offset bytes into the file @fd. */
struct pp_vm_base_page {
	int fd;
	uint64_t offset;
};

/*
 * A source of base pages for an area's tail. Each page must be 4 KiB of a
 * file that can be mapped MAP_SHARED at a 4 KiB offset (not hugetlb);
 * runs of pages adjacent in one file are mapped with one mmap(). The area
 * maps, pre-faults and zeroes them; the source only finds them.
 */
struct pp_vm_base_source {
	/*
	 * fill - find @n base pages and say where each is in @pages[0..n).
	 * @name is the area's (for messages), @opts the checked options
	 * (numa_node and interleave_nodes resolved; opts->alloc as the caller
	 * passed it). Returns 0, or -errno after a one-line message; what it
	 * took stays with @ctx for release().
	 */
	int (*fill)(void *ctx, const char *name,
		    const struct pp_vmalloc_opts *opts, unsigned long n,
		    struct pp_vm_base_page *pages);
	/*
	 * release - give back everything fill() took and free @ctx. Called
	 * exactly once per pp_vm_area_create() call that was given the
	 * source: by that call when it fails (whether or not fill() ran), or
	 * by pp_vfree() once the area is unmapped.
	 */
	void (*release)(void *ctx);
	void *ctx;
	/* Where the pages come from, for messages: "the allocator". */
	const char *what;
};

/*
 * pp_vm_area_create - pp_vmalloc() with the tail's base pages from @src,
 * or from anonymous memory when @src is NULL. Same options, errors and
 * context as pp_vmalloc(), except that opts->alloc is refused (EINVAL)
 * without a source: lib/mem cannot take pages from an allocator itself.
 * The area is freed with pp_vfree().
 */
PP_HIDDEN struct pp_vm_area *
pp_vm_area_create(size_t size, const struct pp_vmalloc_opts *opts,
		  const struct pp_vm_base_source *src);

#endif /* PP_INTERNAL_VM_AREA_H */
