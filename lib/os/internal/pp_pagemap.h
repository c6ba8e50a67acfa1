/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_pagemap.h - physical addresses from /proc/self/pagemap, for the
 * PA IOVA mode of lib/dma. Part of the OS layer: nothing else reads
 * pagemap.
 */
#ifndef PP_INTERNAL_PAGEMAP_H
#define PP_INTERNAL_PAGEMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * pp_os_virt_to_phys - the physical address of each of @n addresses
 * @addr, @addr + @stride, ... into @pa[0..n). One pagemap read per address,
 * so pass one address per hugepage, not per 4 KiB page.
 *
 * Returns 0, or:
 *   -EPERM   the kernel hides page frame numbers (reads them as zero) from
 *            callers without CAP_SYS_ADMIN;
 *   -EFAULT  a page is not present (or swapped out): never guess;
 *   -errno   opening or reading pagemap failed.
 * Does not log; the caller knows what to tell the operator.
 */
int pp_os_virt_to_phys(const void *addr, size_t stride, size_t n,
		       uint64_t *pa);

#endif /* PP_INTERNAL_PAGEMAP_H */
