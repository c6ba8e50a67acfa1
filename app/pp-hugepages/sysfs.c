/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sysfs.c - what the machine offers pp-hugepages: the page sizes and nodes
 * in sysfs, their counts (read and written one value at a time, as sysfs
 * takes them), the default page size and the CPU's 1 GiB pages; and the
 * numbers and names the other files share.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hugepages.h"
#include "pp_cli_root.h"

unsigned long hp_sizes[MAX_SIZES];
int hp_nr_sizes;
int hp_nodes[MAX_NODES];
int hp_nr_nodes;

/* The sysfs file @leaf for @kb pages on @node (machine-wide if < 0). */
void hp_path(char *buf, unsigned long kb, int node, const char *leaf)
{
	if (node < 0)
		pp_cli_root_path(buf, SYS_HUGEPAGES "/hugepages-%lukB/%s", kb, leaf);
	else
		pp_cli_root_path(buf, SYS_NODE "/node%d/hugepages/hugepages-%lukB/%s",
			node, kb, leaf);
}

/* @kb as the kernel's command line writes a page size: 2M, 1G, 64K. */
const char *hp_size_name(unsigned long kb, char *buf, size_t len)
{
	if (kb >= KB_1G && kb % KB_1G == 0)
		snprintf(buf, len, "%luG", kb / KB_1G);
	else if (kb >= 1024 && kb % 1024 == 0)
		snprintf(buf, len, "%luM", kb / 1024);
	else
		snprintf(buf, len, "%luK", kb);
	return buf;
}

/*
 * read_text - up to @len - 1 bytes of @path into @buf, NUL-terminated.
 * Reads until end of file, as a FIFO standing in for a file in a test
 * tree may hand its line over in pieces. Returns 0 or -errno.
 */
static int read_text(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return err;
}

/*
 * hp_read_count - the count in @path: decimal digits and a newline, nothing
 * else. Returns it, or -errno (-EINVAL for anything else in the file).
 */
long hp_read_count(const char *path)
{
	char buf[64], *end;
	unsigned long long v;
	int err;

	err = read_text(path, buf, sizeof(buf));
	if (err)
		return err;
	if (!isdigit((unsigned char)buf[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || v > LONG_MAX || (*end && strcmp(end, "\n")))
		return -EINVAL;
	return (long)v;
}

/*
 * hp_write_str - @s into @path in one write(), as a sysfs attribute takes
 * its value. The file must exist (no O_CREAT) and must not be a link
 * (O_NOFOLLOW). O_TRUNC, as a shell's `echo >` has: sysfs ignores it,
 * and a plain file in a test tree then holds just the value.
 * Returns 0 or -errno.
 */
int hp_write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/*
 * A decimal number that is all of @s: digits only, no sign or space, at
 * most @max. Returns whether it is one.
 */
bool hp_parse_uint(const char *s, unsigned long long max,
		   unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/*
 * hp_discover - the page sizes (SYS_HUGEPAGES/hugepages-NkB) and the nodes
 * that have hugepage counts (SYS_NODE/nodeN/hugepages). A kernel without
 * NUMA has no node directories; then only the machine-wide figures exist.
 * Returns 0, or -errno when SYS_HUGEPAGES cannot be read.
 */
int hp_discover(void)
{
	char path[PATH_MAX], name[NAME_MAX + 1];
	unsigned long long v;
	struct dirent *de;
	struct stat st;
	DIR *dir;

	pp_cli_root_path(path, SYS_HUGEPAGES);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && hp_nr_sizes < MAX_SIZES) {
		size_t n = strlen(de->d_name);

		if (strncmp(de->d_name, "hugepages-", 10) || n < 13 ||
		    strcmp(de->d_name + n - 2, "kB"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 12),
			 de->d_name + 10);
		if (hp_parse_uint(name, ULONG_MAX / 1024, &v) && v)
			hp_sizes[hp_nr_sizes++] = (unsigned long)v;
	}
	closedir(dir);
	qsort(hp_sizes, (size_t)hp_nr_sizes, sizeof(hp_sizes[0]), cmp_ulong);

	pp_cli_root_path(path, SYS_NODE);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir)) && hp_nr_nodes < MAX_NODES) {
		if (strncmp(de->d_name, "node", 4) ||
		    !hp_parse_uint(de->d_name + 4, INT_MAX, &v))
			continue;
		pp_cli_root_path(path, SYS_NODE "/node%llu/hugepages", v);
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			hp_nodes[hp_nr_nodes++] = (int)v;
	}
	closedir(dir);
	qsort(hp_nodes, (size_t)hp_nr_nodes, sizeof(hp_nodes[0]), cmp_int);
	return 0;
}

bool hp_size_offered(unsigned long kb)
{
	for (int i = 0; i < hp_nr_sizes; i++)
		if (hp_sizes[i] == kb)
			return true;
	return false;
}

bool hp_node_known(int node)
{
	for (int i = 0; i < hp_nr_nodes; i++)
		if (hp_nodes[i] == node)
			return true;
	return false;
}

/* The sizes offered, "2M, 1G", for messages. */
const char *hp_sizes_list(char *buf, size_t len)
{
	char one[32];
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < hp_nr_sizes && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 hp_size_name(hp_sizes[i], one, sizeof(one)));
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (!hp_nr_sizes)
		snprintf(buf, len, "none");
	return buf;
}

/* The nodes, "0, 1", for messages. */
const char *hp_nodes_list(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < hp_nr_nodes && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%d", i ? ", " : "",
				 hp_nodes[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (!hp_nr_nodes)
		snprintf(buf, len, "none (no %s/nodeN/hugepages)", SYS_NODE);
	return buf;
}

/* Whether /proc/cpuinfo lists the pdpe1gb flag (1 GiB pages, x86). */
bool hp_cpu_has_gig_pages(void)
{
	char path[PATH_MAX], line[4096];
	bool yes = false;
	FILE *f;

	pp_cli_root_path(path, "/proc/cpuinfo");
	f = fopen(path, "re");
	if (!f)
		return true; /* cannot tell: blame nothing on the CPU */
	while (!yes && fgets(line, sizeof(line), f)) {
		char *p;

		if (strncmp(line, "flags", 5))
			continue;
		for (p = strstr(line, "pdpe1gb"); p; p = strstr(p + 1, "pdpe1gb"))
			if (isspace((unsigned char)p[-1]) &&
			    (isspace((unsigned char)p[7]) || !p[7]))
				yes = true;
	}
	fclose(f);
	return yes;
}

/*
 * The default hugepage size (Hugepagesize in /proc/meminfo), the one
 * vm.nr_hugepages and a bare hugepages= set; 2 MiB when it cannot be read.
 */
unsigned long hp_default_size(void)
{
	char path[PATH_MAX], line[256];
	unsigned long kb = KB_2M;
	FILE *f;

	pp_cli_root_path(path, "/proc/meminfo");
	f = fopen(path, "re");
	if (!f)
		return kb;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb ? kb : KB_2M;
}

/* "node 1" or "machine-wide", for messages. */
const char *hp_where_of(int node, char *buf, size_t len)
{
	if (node < 0)
		snprintf(buf, len, "machine-wide");
	else
		snprintf(buf, len, "node %d", node);
	return buf;
}

/*
 * hp_parse_size - a size with its unit: digits, then K, M, G or T (powers of
 * 1024, either case), an optional B or iB after it; "1G", "512M",
 * "2048kB", "1GiB". No sign, space or fraction. Into @bytes; returns
 * whether @s is one and fits.
 */
bool hp_parse_size(const char *s, unsigned long long *bytes)
{
	unsigned long long v;
	unsigned int shift;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (toupper((unsigned char)*end)) {
	case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default: return false;
	}
	end++;
	if (!strcmp(end, "iB"))
		end += 2;
	else if (!strcmp(end, "B") || !strcmp(end, "b"))
		end++;
	if (*end || v > ULLONG_MAX >> shift)
		return false;
	*bytes = v << shift;
	return true;
}

