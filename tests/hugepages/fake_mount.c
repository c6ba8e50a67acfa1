/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_mount.c - the mount table of pp-hugepages' test build: in place
 * of the tool's mount_sys.c (app/pp-hugepages/hugepages.h), --mount and
 * --unmount add and take out lines of the fake tree's /proc/mounts
 * (PP_HUGEPAGES_ROOT), which --show and test_hugepages.sh read; mount(2)
 * cannot act on a tree. Without the variable it refuses: this build is
 * for the tests only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hugepages.h"
#include "pp_cli_root.h"

/* Append @line to the fake tree's /proc/mounts. Returns 0 or -errno. */
static int mounts_append(const char *line)
{
	char path[PATH_MAX];
	int fd, err = 0;
	size_t len = strlen(line);

	pp_cli_root_path(path, PROC_MOUNTS);
	fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, len) != (ssize_t)len)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* Rewrite the fake tree's /proc/mounts without the hugetlbfs at @dir. */
static int mounts_remove(const char *dir)
{
	char path[PATH_MAX], line[8192];
	char *keep = NULL;
	size_t len = 0;
	struct hp_mnt m;
	FILE *f, *mem;
	int err;

	pp_cli_root_path(path, PROC_MOUNTS);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	mem = open_memstream(&keep, &len);
	if (!mem) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f))
		if (!hp_parse_mount(line, &m) || strcmp(m.dir, dir))
			fputs(line, mem);
	fclose(f);
	if (fclose(mem))
		return -ENOMEM;
	err = len ? hp_write_str(path, keep) : hp_write_str(path, "");
	free(keep);
	return err;
}

static int no_root(void)
{
	if (pp_cli_root[0])
		return 0;
	fprintf(stderr, "pp-hugepages (test build): --mount and --unmount only record mounts under PP_HUGEPAGES_ROOT\n");
	return 1;
}

int hp_sys_mount(const char *dir, const char *opts, const char *sz)
{
	char path[PATH_MAX], line[PATH_MAX + 128];
	int err;

	(void)sz;
	if (no_root())
		return 1;
	snprintf(line, sizeof(line), "nodev %s hugetlbfs rw,relatime,%s 0 0\n",
		 dir, opts);
	err = mounts_append(line);
	if (err) {
		pp_cli_root_path(path, PROC_MOUNTS);
		fprintf(stderr, "pp-hugepages: cannot record the mount in %s: %s\n",
			path, strerror(-err));
		return 1;
	}
	printf("pp-hugepages: PP_HUGEPAGES_ROOT is set: %s not mounted, only recorded in %s" PROC_MOUNTS "\n",
	       dir, pp_cli_root);
	return 0;
}

int hp_sys_umount(const char *dir)
{
	int err;

	if (no_root())
		return 1;
	err = mounts_remove(dir);
	if (err) {
		fprintf(stderr, "pp-hugepages: cannot unmount %s: %s\n", dir,
			strerror(-err));
		return 1;
	}
	printf("pp-hugepages: unmounted %s (from the fake " PROC_MOUNTS ")\n",
	       dir);
	return 0;
}
