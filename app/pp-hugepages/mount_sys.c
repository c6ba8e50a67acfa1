/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mount_sys.c - pp-hugepages' mount(2) and umount2(2), and nothing else
 * (hugepages.h says why they are apart: the test build puts its own
 * fake_mount.c in their place).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "hugepages.h"
#include "pp_cli_root.h"

/*
 * Under PP_HUGEPAGES_ROOT the directories named are the tree's, but a
 * system call would act on this machine's: refused, with what to run.
 */
static int fake_root(const char *what, const char *dir)
{
	if (!pp_cli_root[0])
		return 0;
	fprintf(stderr, "pp-hugepages: PP_HUGEPAGES_ROOT is set: %s %s refused, it would act on this machine, not on %s (the tests record mounts with their own build); unset it to work on this machine\n",
		what, dir, pp_cli_root);
	return 1;
}

int hp_sys_mount(const char *dir, const char *opts, const char *sz)
{
	int err;

	if (fake_root("mounting", dir))
		return 1;
	if (mount("nodev", dir, "hugetlbfs", 0, opts)) {
		err = errno;
		fprintf(stderr, "pp-hugepages: mount -t hugetlbfs -o %s nodev %s: %s%s\n",
			opts, dir, strerror(err),
			err == EPERM ? ": run as root" :
			err == ENODEV ? ": this kernel has no hugetlbfs (CONFIG_HUGETLBFS)" :
			err == EINVAL ? ": the kernel offers no pages of that size" : "");
		return 1;
	}
	printf("pp-hugepages: mounted hugetlbfs (%s pages) at %s; to mount it at every boot, add to /etc/fstab: nodev %s hugetlbfs %s 0 0\n",
	       sz, dir, dir, opts);
	return 0;
}

int hp_sys_umount(const char *dir)
{
	int err;

	if (fake_root("unmounting", dir))
		return 1;
	if (umount2(dir, 0)) {
		err = errno;
		fprintf(stderr, "pp-hugepages: cannot unmount %s: %s%s\n", dir,
			strerror(err),
			err == EPERM ? ": run as root" :
			err == EBUSY ? ": a process has files open there (fuser -vm DIR names it)" : "");
		return 1;
	}
	printf("pp-hugepages: unmounted %s\n", dir);
	return 0;
}
