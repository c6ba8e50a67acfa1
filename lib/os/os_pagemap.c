/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_pagemap.c - virtual to physical translation through /proc/self/pagemap
 * (Documentation/admin-guide/mm/pagemap.rst in the kernel tree).
 *
 * Each 4 KiB virtual page has a 64-bit entry at offset (va / 4096) * 8:
 * bit 63 present, bit 62 swapped, bits 0-54 the page frame number. Since
 * Linux 4.2 the PFN reads as zero without CAP_SYS_ADMIN, while the present
 * bit is still set: that combination means "hidden", not "frame 0", and
 * handing it to a device would make it DMA into physical page zero (ixy
 * did exactly that). Hence the explicit check below.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "pp_os_fault.h"
#include "pp_pagemap.h"

#define PAGEMAP_PRESENT (1ULL << 63)
#define PAGEMAP_SWAPPED (1ULL << 62)
#define PAGEMAP_PFN_MASK ((1ULL << 55) - 1)
#define PAGEMAP_PAGE_SHIFT 12

static int read_entry(int fd, uintptr_t va, uint64_t *entry)
{
	off_t off = (off_t)((va >> PAGEMAP_PAGE_SHIFT) * sizeof(*entry));
	ssize_t got;

	PP_OS_FAIL_HERE(EIO);
	do
		got = pread(fd, entry, sizeof(*entry), off);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	if (got != (ssize_t)sizeof(*entry))
		return -EIO;
	return 0;
}

int pp_os_virt_to_phys(const void *addr, size_t stride, size_t n,
		       uint64_t *pa)
{
	uintptr_t va = (uintptr_t)addr;
	uint64_t entry, pfn;
	int fd, err = 0;
	size_t i;

	PP_OS_FAIL_HERE(EMFILE);
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (i = 0; i < n; i++, va += stride) {
		err = read_entry(fd, va, &entry);
		if (err)
			break;
		if (!(entry & PAGEMAP_PRESENT) || (entry & PAGEMAP_SWAPPED)) {
			err = -EFAULT;
			break;
		}
		pfn = entry & PAGEMAP_PFN_MASK;
		if (pfn == 0) {
			err = -EPERM;
			break;
		}
		pa[i] = (pfn << PAGEMAP_PAGE_SHIFT) |
			(va & ((1ULL << PAGEMAP_PAGE_SHIFT) - 1));
	}
	close(fd);
	return err;
}
