/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mounts.c - pp-hugepages' hugetlbfs mounts: those in /proc/mounts,
 * --mount (the directory made, then hp_sys_mount()) and --unmount.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hugepages.h"
#include "pp_cli_root.h"

/* /proc/mounts escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/*
 * One /proc/mounts line: whether it is a hugetlbfs mount, with its
 * directory and page size (pagesize=2M in its options) into @m.
 */
bool hp_parse_mount(const char *line, struct hp_mnt *m)
{
	char dev[256], dir[PATH_MAX], type[64], opts[1024], *o, *save;
	unsigned long long bytes;

	if (sscanf(line, "%255s %4095s %63s %1023s", dev, dir, type, opts) != 4 ||
	    strcmp(type, "hugetlbfs"))
		return false;
	unescape(dir);
	snprintf(m->dir, sizeof(m->dir), "%s", dir);
	m->kb = 0;
	for (o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
		if (!strncmp(o, "pagesize=", 9) && hp_parse_size(o + 9, &bytes))
			m->kb = (unsigned long)(bytes >> 10);
	return true;
}

/*
 * The hugetlbfs mounts, into a calloc()ed array the caller frees.
 * Returns how many (0 with *@out NULL for none), or -errno.
 */
int hp_mounts(struct hp_mnt **out)
{
	char path[PATH_MAX], line[8192];
	struct hp_mnt *all = NULL, m;
	int n = 0;
	FILE *f;

	*out = NULL;
	pp_cli_root_path(path, PROC_MOUNTS);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct hp_mnt *more;

		if (!hp_parse_mount(line, &m))
			continue;
		more = realloc(all, sizeof(*all) * (size_t)(n + 1));
		if (!more) {
			free(all);
			fclose(f);
			return -ENOMEM;
		}
		all = more;
		all[n++] = m;
	}
	fclose(f);
	*out = all;
	return n;
}

/* /dev/hugepages for 2 MiB, /dev/hugepages-1G for 1 GiB, and so on. */
void hp_default_dir(unsigned long kb, char *buf, size_t len)
{
	char sz[32];

	if (kb == KB_2M)
		snprintf(buf, len, "/dev/hugepages");
	else
		snprintf(buf, len, "/dev/hugepages-%s",
			 hp_size_name(kb, sz, sizeof(sz)));
}

/* A mount directory: absolute, no "." or ".." component. */
bool hp_dir_valid(const char *d)
{
	const char *p;

	if (d[0] != '/' || strlen(d) >= PATH_MAX - PP_CLI_ROOT_MAX)
		return false;
	for (p = d; *p; p++)
		if (p[0] == '/' && p[1] == '.' &&
		    (p[2] == '/' || !p[2] ||
		     (p[2] == '.' && (p[3] == '/' || !p[3]))))
			return false;
	return true;
}

/*
 * mkdir -p @path (mode 0755), below the root: the root itself must
 * exist. Returns 0, or -1 with errno set.
 */
static int mkdir_p(char *path)
{
	size_t skip = strlen(pp_cli_root);

	for (char *p = path + skip + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

int hp_mount(const char *dir, unsigned long kb)
{
	char path[PATH_MAX], sz[32], opts[64];
	struct hp_mnt *m;
	int nm;

	hp_size_name(kb, sz, sizeof(sz));
	nm = hp_mounts(&m);
	for (int i = 0; i < nm; i++) {
		if (strcmp(m[i].dir, dir))
			continue;
		if ((m[i].kb ? m[i].kb : hp_default_size()) != kb) {
			fprintf(stderr, "pp-hugepages: %s is already a hugetlbfs mount, of %s pages, not %s: unmount it first (pp-hugepages --unmount %s), or choose another directory\n",
				dir, hp_size_name(m[i].kb ? m[i].kb : hp_default_size(),
						  opts, sizeof(opts)), sz, dir);
			free(m);
			return 1;
		}
		printf("pp-hugepages: %s is already mounted (hugetlbfs, %s pages)\n",
		       dir, sz);
		free(m);
		return 0;
	}
	free(m);
	pp_cli_root_path(path, "%s", dir);
	if (mkdir_p(path)) {
		fprintf(stderr, "pp-hugepages: cannot make %s: %s%s\n", path,
			strerror(errno),
			errno == EACCES || errno == EPERM ? ": run as root" : "");
		return 1;
	}
	snprintf(opts, sizeof(opts), "pagesize=%s", sz);
	return hp_sys_mount(dir, opts, sz);
}

/*
 * hp_unmount - unmount the hugetlbfs at @dir, or every hugetlbfs mount
 * (of @kb pages only, unless @kb is 0) when @dir is NULL.
 */
int hp_unmount(const char *dir, unsigned long kb)
{
	struct hp_mnt *m;
	int nm, rc = 0, done = 0;

	nm = hp_mounts(&m);
	if (nm < 0) {
		fprintf(stderr, "pp-hugepages: cannot read %s" PROC_MOUNTS ": %s\n",
			pp_cli_root, strerror(-nm));
		return 1;
	}
	for (int i = 0; i < nm; i++) {
		unsigned long mkb = m[i].kb ? m[i].kb : hp_default_size();

		if (dir ? strcmp(m[i].dir, dir) != 0 : (kb && mkb != kb))
			continue;
		done++;
		rc |= hp_sys_umount(m[i].dir);
	}
	free(m);
	if (!done && dir) {
		fprintf(stderr, "pp-hugepages: %s is not a hugetlbfs mount\n", dir);
		return 1;
	}
	if (!done)
		printf("pp-hugepages: no hugetlbfs mounts to unmount\n");
	return rc;
}

