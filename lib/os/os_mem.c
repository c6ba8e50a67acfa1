/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_mem.c - address space and backing files: reservations, memfd and
 * hugetlbfs files, MAP_FIXED mappings, population and locking. The arena
 * (lib/mem) decides what to do; this file only does it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "pp_os_fault.h"
#include "pp_os.h"

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004U
#endif
/* The size flags encode log2(page size) above MFD_HUGE_SHIFT (memfd.h). */
#ifndef MFD_HUGE_SHIFT
#define MFD_HUGE_SHIFT 26
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 uapi value */
#endif

#define SZ_4K (4UL << 10)
#define SZ_2M (2UL << 20)
#define SZ_1G (1UL << 30)

void *pp_os_reserve(size_t len, size_t align)
{
	size_t span = len + align;
	uintptr_t start, head;
	char *p;

	if (len == 0 || align < SZ_4K || (align & (align - 1)) ||
	    span < len) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * Over-reserve by one alignment and trim both ends: mmap() only
	 * promises 4 KiB alignment, and MAP_FIXED hugetlb mappings need
	 * their start aligned to the page size.
	 */
	if (PP_OS_FAULT(ENOMEM)) {
		errno = ENOMEM;
		return NULL;
	}
	p = mmap(NULL, span, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	start = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
	head = start - (uintptr_t)p;
	if (head)
		munmap(p, head);
	if (span - head - len)
		munmap((char *)start + len, span - head - len);
	return (void *)start;
}

void pp_os_unmap(void *addr, size_t len)
{
	if (addr && len)
		munmap(addr, len);
}

void pp_os_rereserve(void *addr, size_t len)
{
	/*
	 * An undo, so no fault site. Mapping over the range replaces the
	 * file's mapping in one step: the address space stays reserved (no
	 * other mapping can land there) and the file's pages are freed once
	 * its descriptor is closed too.
	 */
	if (addr && len)
		(void)mmap(addr, len, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				   MAP_FIXED,
			   -1, 0);
}

int pp_os_map_fixed(void *addr, size_t len, int fd, uint64_t off)
{
	void *p;

	PP_OS_FAIL_HERE(ENOMEM);
	p = mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, (off_t)off);
	if (p == MAP_FAILED)
		return -errno;
	return 0;
}

static int log2_exact(size_t v)
{
	return __builtin_ctzl(v);
}

int pp_os_memfd(const char *name, size_t page_size)
{
	unsigned int flags = MFD_CLOEXEC;
	int fd;

	if (page_size != SZ_4K) {
		if (page_size & (page_size - 1) || page_size < SZ_4K)
			return -EINVAL;
		flags |= MFD_HUGETLB |
			 ((unsigned int)log2_exact(page_size) << MFD_HUGE_SHIFT);
	}
	PP_OS_FAIL_HERE(EMFILE);
	fd = memfd_create(name ? name : "pagepool", flags);
	if (fd < 0)
		return -errno;
	return fd;
}

long pp_os_hugetlbfs_page_size(const char *dir)
{
	struct statfs st;

	PP_OS_FAIL_HERE(EACCES);
	if (statfs(dir, &st) < 0)
		return -errno;
	if ((unsigned long)st.f_type != HUGETLBFS_MAGIC)
		return -EINVAL;
	/* hugetlbfs reports its page size as the block size. */
	return (long)st.f_bsize;
}

/* Makes hugetlbfs file names unique within the process; nothing orders on it. */
static unsigned int hugetlbfs_seq;

int pp_os_hugetlbfs_file(const char *dir, const char *name)
{
	unsigned int my = __atomic_fetch_add(&hugetlbfs_seq, 1,
					     __ATOMIC_RELAXED);
	char path[4096], *base;
	int fd, n;

	/*
	 * O_EXCL with a name unique to this process and call: never open a
	 * file someone else placed there. 0600 keeps other users off memory
	 * that devices will DMA into.
	 */

	n = snprintf(path, sizeof(path), "%s/", dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	base = path + n;
	n = snprintf(base, sizeof(path) - (size_t)n, "%s.%d.%u",
		     name ? name : "pagepool", (int)getpid(), my);
	if (n < 0 || (size_t)n >= sizeof(path) - (size_t)(base - path))
		return -ENAMETOOLONG;
	/* The caller's name is a label, not a path. */
	for (char *c = base; *c; c++)
		if (*c == '/')
			*c = '_';
	PP_OS_FAIL_HERE(ENOSPC);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (unlink(path) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int pp_os_populate_file(int fd, size_t len)
{
	int ret;

	PP_OS_FAIL_HERE(ENOSPC);
	do {
		ret = fallocate(fd, 0, 0, (off_t)len);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int pp_os_populate_map(void *addr, size_t len)
{
	int ret;

	PP_OS_FAIL_HERE(ENOMEM);
	do {
		ret = madvise(addr, len, MADV_POPULATE_WRITE);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

/*
 * The raw syscalls, not the libc wrappers: ASan's runtime replaces
 * mlock() and munlock() with no-ops (it fears locking its shadow), which
 * would make sanitizer builds skip a step whose failure the arena must
 * report. Only the arena's own range is locked here, never shadow memory.
 */
int pp_os_lock(void *addr, size_t len)
{
	PP_OS_FAIL_HERE(EPERM);
	return syscall(SYS_mlock, addr, len) < 0 ? -errno : 0;
}

void pp_os_unlock(void *addr, size_t len)
{
	syscall(SYS_munlock, addr, len);
}

int pp_os_map_anon_fixed(void *addr, size_t len)
{
	void *p;

	PP_OS_FAIL_HERE(ENOMEM);
	p = mmap(addr, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	return 0;
}

int pp_os_no_thp(void *addr, size_t len)
{
	PP_OS_FAIL_HERE(EINVAL);
	return madvise(addr, len, MADV_NOHUGEPAGE) < 0 ? -errno : 0;
}
