/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp-hugepages - show, reserve and clear hugepages per NUMA node and page
 * size, mount hugetlbfs, and print the boot-time form of a reservation,
 * like DPDK's dpdk-hugepages.py, through sysfs, /proc and mount(2) only.
 *
 *   pp-hugepages [--show] [--json -|FILE]   pages per node and size, and
 *                                           the hugetlbfs mounts
 *   pp-hugepages -r SIZE [-p 2M|1G] [-n N]  reserve SIZE (1G, 512M) or,
 *                                           with --pages, a page count
 *   pp-hugepages --clear                    every reservation back to 0
 *   pp-hugepages --mount [DIR] / --unmount  hugetlbfs, for DPDK's EAL
 *   pp-hugepages --persistent [-r ...]      sysctl.d and kernel command
 *                                           line for a reservation
 *
 * Without -n, a reservation is written machine-wide
 * (/sys/kernel/mm/hugepages/.../nr_hugepages), and the kernel spreads the
 * pages over the nodes that have memory, one at a time in turn; with -n
 * it is that node's count. A reservation sets the count (it may lower
 * it), then reads it back: the kernel gives fewer when memory is too
 * fragmented, and the operator is told so, with the fix. One that would
 * put more than 90% of the memory in hugepages is refused first, unless
 * --force (fits()).
 *
 * PP_HUGEPAGES_ROOT, for tests only: a directory that stands in for / for
 * every file this tool reads or writes (/sys, /proc), each named through
 * pp_cli_root_path() (app/common). mount(2) and
 * umount(2) cannot act on a fake tree, so under it --mount and --unmount
 * make the directory and edit ROOT/proc/mounts instead, which is what
 * --show and the tests read. Every write opens with O_NOFOLLOW, so a link
 * in the tree cannot lead a write out of it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pp_cli.h"
#include "pp_cli_root.h"


#define SYS_NODE "/sys/devices/system/node"
#define SYS_HUGEPAGES "/sys/kernel/mm/hugepages"
#define PROC_MOUNTS "/proc/mounts"

/* Page sizes and nodes this tool keeps track of; more are ignored. */
#define MAX_SIZES 16
#define MAX_NODES 1024

#define KB_2M 2048UL
#define KB_1G 1048576UL

/* What the machine offers: page sizes (kB, ascending), nodes (ascending). */
static unsigned long sizes[MAX_SIZES];
static int nr_sizes;
static int nodes[MAX_NODES];
static int nr_nodes;

/* The sysfs file @leaf for @kb pages on @node (machine-wide if < 0). */
static void hp_path(char *buf, unsigned long kb, int node, const char *leaf)
{
	if (node < 0)
		pp_cli_root_path(buf, SYS_HUGEPAGES "/hugepages-%lukB/%s", kb, leaf);
	else
		pp_cli_root_path(buf, SYS_NODE "/node%d/hugepages/hugepages-%lukB/%s",
			node, kb, leaf);
}

/* @kb as the kernel's command line writes a page size: 2M, 1G, 64K. */
static const char *size_name(unsigned long kb, char *buf, size_t len)
{
	if (kb >= KB_1G && kb % KB_1G == 0)
		snprintf(buf, len, "%luG", kb / KB_1G);
	else if (kb >= 1024 && kb % 1024 == 0)
		snprintf(buf, len, "%luM", kb / 1024);
	else
		snprintf(buf, len, "%luK", kb);
	return buf;
}

/* ---- files ---- */

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
 * read_count - the count in @path: decimal digits and a newline, nothing
 * else. Returns it, or -errno (-EINVAL for anything else in the file).
 */
static long read_count(const char *path)
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
 * write_str - @s into @path in one write(), as a sysfs attribute takes
 * its value. The file must exist (no O_CREAT) and must not be a link
 * (O_NOFOLLOW). O_TRUNC, as a shell's `echo >` has: sysfs ignores it,
 * and a plain file in a test tree then holds just the value.
 * Returns 0 or -errno.
 */
static int write_str(const char *path, const char *s)
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

/* ---- what the machine offers ---- */

/*
 * A decimal number that is all of @s: digits only, no sign or space, at
 * most @max. Returns whether it is one.
 */
static bool parse_uint(const char *s, unsigned long long max,
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
 * discover - the page sizes (SYS_HUGEPAGES/hugepages-NkB) and the nodes
 * that have hugepage counts (SYS_NODE/nodeN/hugepages). A kernel without
 * NUMA has no node directories; then only the machine-wide figures exist.
 * Returns 0, or -errno when SYS_HUGEPAGES cannot be read.
 */
static int discover(void)
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
	while ((de = readdir(dir)) && nr_sizes < MAX_SIZES) {
		size_t n = strlen(de->d_name);

		if (strncmp(de->d_name, "hugepages-", 10) || n < 13 ||
		    strcmp(de->d_name + n - 2, "kB"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 12),
			 de->d_name + 10);
		if (parse_uint(name, ULONG_MAX / 1024, &v) && v)
			sizes[nr_sizes++] = (unsigned long)v;
	}
	closedir(dir);
	qsort(sizes, (size_t)nr_sizes, sizeof(sizes[0]), cmp_ulong);

	pp_cli_root_path(path, SYS_NODE);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir)) && nr_nodes < MAX_NODES) {
		if (strncmp(de->d_name, "node", 4) ||
		    !parse_uint(de->d_name + 4, INT_MAX, &v))
			continue;
		pp_cli_root_path(path, SYS_NODE "/node%llu/hugepages", v);
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			nodes[nr_nodes++] = (int)v;
	}
	closedir(dir);
	qsort(nodes, (size_t)nr_nodes, sizeof(nodes[0]), cmp_int);
	return 0;
}

static bool size_offered(unsigned long kb)
{
	for (int i = 0; i < nr_sizes; i++)
		if (sizes[i] == kb)
			return true;
	return false;
}

static bool node_known(int node)
{
	for (int i = 0; i < nr_nodes; i++)
		if (nodes[i] == node)
			return true;
	return false;
}

/* The sizes offered, "2M, 1G", for messages. */
static const char *sizes_list(char *buf, size_t len)
{
	char one[32];
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < nr_sizes && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 size_name(sizes[i], one, sizeof(one)));
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (!nr_sizes)
		snprintf(buf, len, "none");
	return buf;
}

/* The nodes, "0, 1", for messages. */
static const char *nodes_list(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < nr_nodes && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%d", i ? ", " : "",
				 nodes[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (!nr_nodes)
		snprintf(buf, len, "none (no %s/nodeN/hugepages)", SYS_NODE);
	return buf;
}

/* Whether /proc/cpuinfo lists the pdpe1gb flag (1 GiB pages, x86). */
static bool cpu_has_gig_pages(void)
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
static unsigned long default_size(void)
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

/* ---- hugetlbfs mounts ---- */

struct mnt {
	char dir[PATH_MAX];
	unsigned long kb; /* the pagesize option; 0: the default size */
};

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

static bool parse_size(const char *s, unsigned long long *bytes);

/*
 * One /proc/mounts line: whether it is a hugetlbfs mount, with its
 * directory and page size (pagesize=2M in its options) into @m.
 */
static bool parse_mount(const char *line, struct mnt *m)
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
		if (!strncmp(o, "pagesize=", 9) && parse_size(o + 9, &bytes))
			m->kb = (unsigned long)(bytes >> 10);
	return true;
}

/*
 * The hugetlbfs mounts, into a calloc()ed array the caller frees.
 * Returns how many (0 with *@out NULL for none), or -errno.
 */
static int hugetlbfs_mounts(struct mnt **out)
{
	char path[PATH_MAX], line[8192];
	struct mnt *all = NULL, m;
	int n = 0;
	FILE *f;

	*out = NULL;
	pp_cli_root_path(path, PROC_MOUNTS);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct mnt *more;

		if (!parse_mount(line, &m))
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

/* ---- numbers from the operator ---- */

/*
 * parse_size - a size with its unit: digits, then K, M, G or T (powers of
 * 1024, either case), an optional B or iB after it; "1G", "512M",
 * "2048kB", "1GiB". No sign, space or fraction. Into @bytes; returns
 * whether @s is one and fits.
 */
static bool parse_size(const char *s, unsigned long long *bytes)
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

/* ---- --show ---- */

struct counts {
	long nr, free, surplus;
};

/* A node's (or, for node < 0, the machine's) counts of @kb pages. */
static void read_counts(unsigned long kb, int node, struct counts *c)
{
	char path[PATH_MAX];

	hp_path(path, kb, node, "nr_hugepages");
	c->nr = read_count(path);
	hp_path(path, kb, node, "free_hugepages");
	c->free = read_count(path);
	hp_path(path, kb, node, "surplus_hugepages");
	c->surplus = read_count(path);
}

/* Pages in use: persistent and surplus pages, less the free ones. */
static long in_use(const struct counts *c)
{
	long total = c->nr + (c->surplus > 0 ? c->surplus : 0);

	if (c->nr < 0 || c->free < 0)
		return -1;
	return total > c->free ? total - c->free : 0;
}

static void print_num(long v)
{
	if (v < 0)
		printf(" %9s", "?");
	else
		printf(" %9ld", v);
}

static void show_row(const char *where, unsigned long kb, int node)
{
	char sz[32];
	struct counts c;

	read_counts(kb, node, &c);
	printf("%-6s %-5s", where, size_name(kb, sz, sizeof(sz)));
	print_num(c.nr);
	print_num(c.free);
	print_num(c.surplus);
	print_num(in_use(&c));
	printf("\n");
}

static void json_counts(FILE *f, unsigned long kb, int node, bool *first)
{
	struct counts c;

	read_counts(kb, node, &c);
	fprintf(f, "%s\n    {\"node\": ", *first ? "" : ",");
	if (node < 0)
		fprintf(f, "null");
	else
		fprintf(f, "%d", node);
	fprintf(f, ", \"page_size_kb\": %lu, \"nr_hugepages\": %ld, "
		   "\"free_hugepages\": %ld, \"surplus_hugepages\": %ld, "
		   "\"in_use\": %ld}",
		kb, c.nr, c.free, c.surplus, in_use(&c));
	*first = false;
}

/*
 * The --show figures as JSON into @f: "pages", one object per node and
 * size with node null for the machine-wide figures, then "mounts".
 * A count that cannot be read is -1.
 */
static void show_json(FILE *f, const struct mnt *m, int nm)
{
	bool first = true;

	fputc('{', f);
	pp_cli_json_ident(f, "pp-hugepages");
	fprintf(f, "\n  \"default_page_size_kb\": %lu,\n  \"pages\": [",
		default_size());
	for (int i = 0; i < nr_sizes; i++) {
		for (int j = 0; j < nr_nodes; j++)
			json_counts(f, sizes[i], nodes[j], &first);
		json_counts(f, sizes[i], -1, &first);
	}
	fprintf(f, "\n  ],\n  \"mounts\": [");
	for (int i = 0; i < nm; i++) {
		fprintf(f, "%s\n    {\"dir\": ", i ? "," : "");
		pp_cli_json_str(f, m[i].dir);
		fprintf(f, ", \"page_size_kb\": %lu}",
			m[i].kb ? m[i].kb : default_size());
	}
	fprintf(f, "\n  ]\n}\n");
}

static int show(const char *json)
{
	char sz[32], where[16];
	struct mnt *m;
	int nm, rc = 0;

	nm = hugetlbfs_mounts(&m);
	if (nm < 0) {
		char path[PATH_MAX];

		pp_cli_root_path(path, PROC_MOUNTS);
		fprintf(stderr, "pp-hugepages: cannot read %s: %s (is /proc mounted?); mounts not shown\n",
			path, strerror(-nm));
		nm = 0;
		rc = 1;
	}
	if (json) {
		FILE *f = stdout;

		if (strcmp(json, "-")) {
			f = fopen(json, "we");
			if (!f) {
				fprintf(stderr, "pp-hugepages: cannot write %s: %s\n",
					json, strerror(errno));
				free(m);
				return 1;
			}
		}
		show_json(f, m, nm);
		if (f != stdout ? fclose(f) : fflush(f)) {
			fprintf(stderr, "pp-hugepages: writing %s failed: %s\n",
				json, strerror(errno));
			rc = 1;
		}
		free(m);
		return rc;
	}
	printf("%-6s %-5s %9s %9s %9s %9s\n", "node", "size", "reserved",
	       "free", "surplus", "in use");
	for (int i = 0; i < nr_sizes; i++) {
		for (int j = 0; j < nr_nodes; j++) {
			snprintf(where, sizeof(where), "%d", nodes[j]);
			show_row(where, sizes[i], nodes[j]);
		}
		show_row("all", sizes[i], -1);
	}
	if (!nr_sizes)
		printf("(no hugepage sizes in %s%s: a kernel without hugetlb)\n",
		       pp_cli_root, SYS_HUGEPAGES);
	printf("\nhugetlbfs mounts (default page size %s):\n",
	       size_name(default_size(), sz, sizeof(sz)));
	for (int i = 0; i < nm; i++)
		printf("  %-24s pagesize=%s\n", m[i].dir,
		       m[i].kb ? size_name(m[i].kb, sz, sizeof(sz)) :
				 "default");
	if (!nm)
		printf("  none: DPDK's EAL (without --in-memory) needs one: pp-hugepages --mount\n");
	free(m);
	return rc;
}

/* ---- how much memory there is ---- */

/*
 * Hugepages are taken from the memory the kernel and every process live
 * in, and the kernel turns free memory into hugepages for as long as any
 * is left when nr_hugepages asks for more than there is: a count of a
 * million (-r 100T, a mistyped --pages) leaves the machine without
 * memory, and the OOM killer starts. A reservation is refused when the
 * hugepages of every size on its node (or machine-wide) would come to
 * more than the memory there, and above MEM_MARGIN_PCT percent of it
 * unless --force: what is left is for the kernel and every process.
 */
#define MEM_MARGIN_PCT 90

/*
 * The memory of @node (< 0: the machine), in kB, from MemTotal in the
 * node's meminfo ("Node 0 MemTotal:   8192000 kB") or /proc/meminfo. A
 * node without a meminfo file is bounded by the machine's. The file read
 * goes into @path, for messages, and @node_read says whether it was the
 * node's. Returns the size, or -errno when there is no MemTotal to read.
 */
static long long mem_total_kb(int node, char path[PATH_MAX], bool *node_read)
{
	unsigned long long kb;
	char line[256];
	FILE *f = NULL;
	int err;

	*node_read = false;
	if (node >= 0) {
		pp_cli_root_path(path, SYS_NODE "/node%d/meminfo", node);
		f = fopen(path, "re");
		*node_read = f != NULL;
	}
	if (!f) {
		pp_cli_root_path(path, "/proc/meminfo");
		f = fopen(path, "re");
		if (!f)
			return -errno;
	}
	err = -ENOENT;
	while (err && fgets(line, sizeof(line), f))
		if (sscanf(line, *node_read ? "Node %*d MemTotal: %llu kB" :
			   "MemTotal: %llu kB", &kb) == 1 && kb && kb <= LLONG_MAX)
			err = 0;
	fclose(f);
	return err ? err : (long long)kb;
}

/* @kb as "15.6 GiB", "512 MiB", "100 TiB", for messages. */
static const char *human_kb(double kb, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB",
					    "EiB" };
	unsigned int u = 0;

	while (kb >= 1024 && u < sizeof(unit) / sizeof(unit[0]) - 1) {
		kb /= 1024;
		u++;
	}
	if (kb < 1e15 && kb == (double)(unsigned long long)kb)
		snprintf(buf, len, "%.0f %s", kb, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", kb, unit[u]);
	return buf;
}

static const char *where_of(int node, char *buf, size_t len);

/*
 * fits - whether @pages of @kb on @node (machine-wide if < 0), with the
 * pages of the other sizes reserved there, fit in the memory there: all
 * of it at most, and MEM_MARGIN_PCT percent unless @force. @cleared:
 * --clear runs first, of every size (@all_cleared) or of @kb's, so those
 * counts are 0 by then. A count no higher than the one there now always
 * fits: lowering it only gives memory back. Says what is wrong and what
 * to do. Returns 0, 2 (too much) or 1 (the memory cannot be read, and no
 * --force).
 */
static int fits(unsigned long kb, int node, unsigned long long pages,
		bool cleared, bool all_cleared, bool force)
{
	char mpath[PATH_MAX], path[PATH_MAX], where[32], sz[32], ask[32];
	char sum[32], other[32], mem[32], pct[16], with[96], fix[160];
	unsigned long long want, others = 0, limit;
	long long total;
	bool node_read, over_all;
	long now;

	total = mem_total_kb(node, mpath, &node_read);
	if (total < 0) {
		if (force)
			return 0;
		fprintf(stderr, "pp-hugepages: cannot tell how much memory this machine has (%s: %s): pass --force to reserve without that check; nothing changed\n",
			mpath, strerror((int)-total));
		return 1;
	}
	for (int i = 0; i < nr_sizes && !all_cleared; i++) {
		long n;

		if (sizes[i] == kb)
			continue;
		hp_path(path, sizes[i], node, "nr_hugepages");
		n = read_count(path);
		if (n > 0)
			others += (unsigned long long)n * sizes[i];
	}
	/* Saturated: a count near LONG_MAX is more than any machine has. */
	if (__builtin_mul_overflow(pages, (unsigned long long)kb, &want) ||
	    __builtin_add_overflow(want, others, &want))
		want = ULLONG_MAX;
	limit = (unsigned long long)total;
	if (!force)
		limit = limit / 100 * MEM_MARGIN_PCT;
	if (want <= limit)
		return 0;
	/* Read only now: a FIFO in the tests answers one read per write. */
	hp_path(path, kb, node, "nr_hugepages");
	now = cleared ? 0 : read_count(path);
	if (now > 0 && pages <= (unsigned long long)now)
		return 0;

	over_all = want > (unsigned long long)total;
	with[0] = '\0';
	if (others)
		snprintf(with, sizeof(with), ", %s with the %s already reserved in other page sizes",
			 human_kb((double)pages * (double)kb + (double)others,
				  sum, sizeof(sum)),
			 human_kb((double)others, other, sizeof(other)));
	if (node_read)
		where_of(node, mem, sizeof(mem));
	else
		snprintf(mem, sizeof(mem), "this machine");
	snprintf(pct, sizeof(pct), "%d%% of ", MEM_MARGIN_PCT);
	if (over_all)
		snprintf(fix, sizeof(fix), "ask for less (pp-hugepages shows what is reserved)");
	else
		snprintf(fix, sizeof(fix), "the rest is too little for the kernel and every process (the OOM killer would start): ask for less, or pass --force to reserve more than %d%%",
			 MEM_MARGIN_PCT);
	fprintf(stderr, "pp-hugepages: %s: %llu %s pages are %s%s, more than %sthe %s of memory %s has (MemTotal in %s): %s; nothing changed\n",
		where_of(node, where, sizeof(where)), pages,
		size_name(kb, sz, sizeof(sz)),
		human_kb((double)pages * (double)kb, ask, sizeof(ask)), with,
		over_all ? "" : pct, human_kb((double)total, sum, sizeof(sum)),
		mem, mpath, fix);
	return 2;
}

/* ---- --reserve, --clear ---- */

/* Says why a write of nr_hugepages failed, and what to do. */
static void write_failed(const char *path, unsigned long kb, int err)
{
	const char *fix = "";

	if (err == -EACCES || err == -EPERM || err == -EROFS)
		fix = ": run as root";
	else if (err == -ELOOP)
		fix = ": it is a symbolic link, and pp-hugepages writes none";
	else if (err == -EINVAL && kb == KB_1G && !cpu_has_gig_pages())
		fix = ": this CPU has no 1 GiB pages (no pdpe1gb flag)";
	else if (err == -ENOENT)
		fix = ": the kernel offers no such file (no hugetlb support?)";
	fprintf(stderr, "pp-hugepages: cannot write %s: %s%s\n", path,
		strerror(-err), fix);
}

/* "node 1" or "machine-wide", for messages. */
static const char *where_of(int node, char *buf, size_t len)
{
	if (node < 0)
		snprintf(buf, len, "machine-wide");
	else
		snprintf(buf, len, "node %d", node);
	return buf;
}

/*
 * reserve - set the count of @kb pages on @node (machine-wide if < 0) to
 * @pages, read it back and say what the kernel gave. Returns 0, or 1 when
 * the write failed or the kernel gave fewer.
 */
static int reserve(unsigned long kb, int node, unsigned long long pages)
{
	char path[PATH_MAX], sz[32], where[32], val[32];
	long was, got;
	int err;

	size_name(kb, sz, sizeof(sz));
	where_of(node, where, sizeof(where));
	hp_path(path, kb, node, "nr_hugepages");
	was = read_count(path);
	snprintf(val, sizeof(val), "%llu\n", pages);
	err = write_str(path, val);
	if (err) {
		write_failed(path, kb, err);
		return 1;
	}
	got = read_count(path);
	if (got < 0) {
		fprintf(stderr, "pp-hugepages: %s written, but it cannot be read back: %s\n",
			path, strerror((int)-got));
		return 1;
	}
	if ((unsigned long long)got < pages) {
		fprintf(stderr, "pp-hugepages: %s: the kernel gave %ld of the %llu %s pages asked for (%ld before): free memory is too fragmented, or too little is free, for more. Reserve them at boot, before memory fragments: pp-hugepages --persistent -r %llu --pages -p %s prints the kernel command line (or drop caches and compact: echo 3 > /proc/sys/vm/drop_caches; echo 1 > /proc/sys/vm/compact_memory; then try again)\n",
			where, got, pages, sz, was, pages, sz);
		return 1;
	}
	if ((unsigned long long)got > pages) {
		fprintf(stderr, "pp-hugepages: %s: %ld %s pages left, not the %llu asked for (%ld before): the others are in use (a process maps them, or files in a hugetlbfs mount hold them) and are freed when let go\n",
			where, got, sz, pages, was);
		return 1;
	}
	printf("pp-hugepages: %s: %ld %s pages reserved (%ld before)\n", where,
	       got, sz, was);
	return 0;
}

/*
 * clear - every count of @kb pages to 0, node by node and machine-wide
 * (or of every size for @kb 0), then what is left: pages that a process
 * maps, or that files in a hugetlbfs mount hold, cannot be freed until
 * they are let go. Returns 0, or 1 when a write failed or pages are left.
 */
static int clear(unsigned long kb)
{
	char path[PATH_MAX], sz[32], where[32];
	int rc = 0, err;

	for (int i = 0; i < nr_sizes; i++) {
		if (kb && sizes[i] != kb)
			continue;
		for (int j = 0; j <= nr_nodes; j++) {
			int node = j < nr_nodes ? nodes[j] : -1;

			hp_path(path, sizes[i], node, "nr_hugepages");
			err = write_str(path, "0\n");
			if (err) {
				write_failed(path, sizes[i], err);
				rc = 1;
			}
		}
		for (int j = 0; j <= nr_nodes; j++) {
			int node = j < nr_nodes ? nodes[j] : -1;
			long left;

			hp_path(path, sizes[i], node, "nr_hugepages");
			left = read_count(path);
			if (left <= 0)
				continue;
			fprintf(stderr, "pp-hugepages: %s: %ld %s pages still in use, not freed: a process maps them, or files in a hugetlbfs mount hold them; they go back when it exits or the files are removed\n",
				where_of(node, where, sizeof(where)), left,
				size_name(sizes[i], sz, sizeof(sz)));
			rc = 1;
		}
	}
	if (!rc)
		printf("pp-hugepages: hugepages cleared\n");
	return rc;
}

/* ---- --mount, --unmount ---- */

/* /dev/hugepages for 2 MiB, /dev/hugepages-1G for 1 GiB, and so on. */
static void default_dir(unsigned long kb, char *buf, size_t len)
{
	char sz[32];

	if (kb == KB_2M)
		snprintf(buf, len, "/dev/hugepages");
	else
		snprintf(buf, len, "/dev/hugepages-%s",
			 size_name(kb, sz, sizeof(sz)));
}

/* Append @line to the fake tree's /proc/mounts. Returns 0 or -errno. */
static int fake_mounts_append(const char *line)
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

/* A mount directory: absolute, no "." or ".." component. */
static bool dir_valid(const char *d)
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

static int do_mount(const char *dir, unsigned long kb)
{
	char path[PATH_MAX], sz[32], opts[64], line[PATH_MAX + 128];
	struct mnt *m;
	int nm, err;

	size_name(kb, sz, sizeof(sz));
	nm = hugetlbfs_mounts(&m);
	for (int i = 0; i < nm; i++) {
		if (strcmp(m[i].dir, dir))
			continue;
		if ((m[i].kb ? m[i].kb : default_size()) != kb) {
			fprintf(stderr, "pp-hugepages: %s is already a hugetlbfs mount, of %s pages, not %s: unmount it first (pp-hugepages --unmount %s), or choose another directory\n",
				dir, size_name(m[i].kb ? m[i].kb : default_size(),
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
	if (pp_cli_root[0]) {
		snprintf(line, sizeof(line),
			 "nodev %s hugetlbfs rw,relatime,%s 0 0\n", dir, opts);
		err = fake_mounts_append(line);
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

/* Rewrite the fake tree's /proc/mounts without the hugetlbfs at @dir. */
static int fake_mounts_remove(const char *dir)
{
	char path[PATH_MAX], line[8192];
	char *keep = NULL;
	size_t len = 0;
	struct mnt m;
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
		if (!parse_mount(line, &m) || strcmp(m.dir, dir))
			fputs(line, mem);
	fclose(f);
	if (fclose(mem))
		return -ENOMEM;
	err = len ? write_str(path, keep) : write_str(path, "");
	free(keep);
	return err;
}

/*
 * do_unmount - unmount the hugetlbfs at @dir, or every hugetlbfs mount
 * (of @kb pages only, unless @kb is 0) when @dir is NULL.
 */
static int do_unmount(const char *dir, unsigned long kb)
{
	struct mnt *m;
	int nm, rc = 0, done = 0, err;

	nm = hugetlbfs_mounts(&m);
	if (nm < 0) {
		fprintf(stderr, "pp-hugepages: cannot read %s" PROC_MOUNTS ": %s\n",
			pp_cli_root, strerror(-nm));
		return 1;
	}
	for (int i = 0; i < nm; i++) {
		unsigned long mkb = m[i].kb ? m[i].kb : default_size();

		if (dir ? strcmp(m[i].dir, dir) != 0 : (kb && mkb != kb))
			continue;
		done++;
		if (pp_cli_root[0])
			err = fake_mounts_remove(m[i].dir);
		else
			err = umount2(m[i].dir, 0) ? -errno : 0;
		if (err) {
			fprintf(stderr, "pp-hugepages: cannot unmount %s: %s%s\n",
				m[i].dir, strerror(-err),
				err == -EPERM ? ": run as root" :
				err == -EBUSY ? ": a process has files open there (fuser -vm DIR names it)" : "");
			rc = 1;
			continue;
		}
		printf("pp-hugepages: unmounted %s%s\n", m[i].dir,
		       pp_cli_root[0] ? " (from the fake " PROC_MOUNTS ")" : "");
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

/* ---- --persistent ---- */

/*
 * The boot-time form of the reservation: the current machine-wide
 * counts, with @want pages of @kb in place of the current count when
 * @kb is not 0. Both forms are machine-wide; a @node given with -r is
 * said to be dropped. Changes nothing.
 */
static int persistent(unsigned long kb, unsigned long long want, int node)
{
	unsigned long def = default_size();
	unsigned long long count[MAX_SIZES];
	char path[PATH_MAX], sz[32];
	bool any = false;

	for (int i = 0; i < nr_sizes; i++) {
		long v;

		hp_path(path, sizes[i], -1, "nr_hugepages");
		v = read_count(path);
		count[i] = v > 0 ? (unsigned long long)v : 0;
		if (kb && sizes[i] == kb)
			count[i] = want;
	}
	printf("# /etc/sysctl.d/80-hugepages.conf: the default page size (%s) only, machine-wide; applied at boot, after memory may have fragmented\n",
	       size_name(def, sz, sizeof(sz)));
	for (int i = 0; i < nr_sizes; i++)
		if (sizes[i] == def)
			printf("vm.nr_hugepages = %llu\n", count[i]);
	printf("# kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub; reboot): every size, reserved before memory fragments\n");
	printf("default_hugepagesz=%s", size_name(def, sz, sizeof(sz)));
	for (int i = 0; i < nr_sizes; i++) {
		if (!count[i])
			continue;
		printf(" hugepagesz=%s hugepages=%llu",
		       size_name(sizes[i], sz, sizeof(sz)), count[i]);
		any = true;
	}
	printf("\n");
	if (node >= 0)
		printf("# both are machine-wide: the kernel spreads the pages over the nodes with memory, so -n %d is not kept\n",
		       node);
	if (!any)
		printf("# (no pages reserved now: give the reservation with -r)\n");
	return 0;
}

/* ---- options ---- */

static const char help[] =
	"usage: pp-hugepages [OPTION]...\n"
	"\n"
	"  -s, --show             hugepages per node and page size (reserved,\n"
	"                         free, surplus, in use; \"all\" is machine-wide)\n"
	"                         and the hugetlbfs mounts; the default command\n"
	"      --json -|FILE      --show as JSON, to stdout (-) or FILE\n"
	"  -r, --reserve SIZE     set the reservation to SIZE of memory (1G,\n"
	"                         512M: a multiple of the page size), or to SIZE\n"
	"                         pages with --pages; the count is read back and\n"
	"                         a shortfall reported (exit 1). Refused (exit 2)\n"
	"                         where the hugepages of every size would come to\n"
	"                         more than 90% of the memory (MemTotal; the\n"
	"                         node's with -n): see --force\n"
	"      --pages            -r gives a page count\n"
	"  -p, --pagesize 2M|1G   the page size for -r, -m, -c, -u (default 2M\n"
	"                         for -r and -m; all sizes for -c and -u)\n"
	"  -n, --node N           reserve on node N only; without it the count\n"
	"                         is machine-wide and the kernel spreads the\n"
	"                         pages over the nodes with memory\n"
	"  -c, --clear            set every reservation to 0 (of -p's size only\n"
	"                         when given); pages still in use are reported\n"
	"  -m, --mount [DIR]      mount hugetlbfs for -p's size at DIR (default\n"
	"                         /dev/hugepages, /dev/hugepages-1G for 1G)\n"
	"  -u, --unmount [DIR]    unmount the hugetlbfs at DIR, or every one (of\n"
	"                         -p's size when given)\n"
	"      --force            with -r: reserve more than 90% of the memory\n"
	"                         (of node N with -n) in hugepages of all sizes\n"
	"                         together, or where the memory cannot be read;\n"
	"                         more than all of it is refused even so\n"
	"      --persistent       print the sysctl.d line and the kernel command\n"
	"                         line for the current reservation, or for -r's;\n"
	"                         changes nothing\n"
	"  -h, --help             this text\n"
	"  -V, --version          the version\n"
	"\n"
	"Several commands run in this order: unmount, clear, reserve, mount,\n"
	"show. Changes need root. Exit 0: done; 1: the kernel refused or gave\n"
	"less; 2: a bad argument, and nothing changed.\n";

static __attribute__((noreturn, format(printf, 1, 2))) void
usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pp-hugepages: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: pp-hugepages [-s] [--json -|FILE] | -r SIZE [--pages] [-p 2M|1G] [-n N] [--force] | -c | -m [DIR] | -u [DIR] | --persistent; pp-hugepages --help says more\n");
	exit(2);
}

/*
 * An optional argument may be the next word too: -m DIR as --mount=DIR,
 * unless that word is an option.
 */
static const char *optional_dir(int argc, char **argv)
{
	if (optarg)
		return optarg;
	if (optind < argc && argv[optind][0] != '-')
		return argv[optind++];
	return NULL;
}

enum { OPT_JSON = 256, OPT_PAGES, OPT_PERSISTENT, OPT_FORCE };

static const struct option longopts[] = {
	{ "show", no_argument, NULL, 's' },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "reserve", required_argument, NULL, 'r' },
	{ "pages", no_argument, NULL, OPT_PAGES },
	{ "pagesize", required_argument, NULL, 'p' },
	{ "node", required_argument, NULL, 'n' },
	{ "clear", no_argument, NULL, 'c' },
	{ "mount", optional_argument, NULL, 'm' },
	{ "unmount", optional_argument, NULL, 'u' },
	{ "persistent", no_argument, NULL, OPT_PERSISTENT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void print_help(FILE *f)
{
	fputs(help, f);
}

static const struct pp_cli_opts cli = {
	.tool = "pp-hugepages",
	.shortopts = "sr:p:n:cm::u::",
	.longopts = longopts,
	.usage = print_help,
};

int main(int argc, char **argv)
{
	const char *json = NULL, *amount = NULL, *psize = NULL, *nodearg = NULL;
	const char *mount_dir = NULL, *umount_dir = NULL;
	bool do_show = false, as_pages = false, do_clear = false;
	bool mount_it = false, umount_it = false, persist = false;
	bool force = false;
	unsigned long long pages = 0, v;
	unsigned long kb = 0;
	char dir[PATH_MAX], list[256];
	int opt, node = -1, rc = 0, err;

	if (pp_cli_root_set("pp-hugepages", "PP_HUGEPAGES_ROOT"))
		return 2;
	while ((opt = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (opt) {
		case 's': do_show = true; break;
		case OPT_JSON: json = optarg; break;
		case 'r': amount = optarg; break;
		case OPT_PAGES: as_pages = true; break;
		case 'p': psize = optarg; break;
		case 'n': nodearg = optarg; break;
		case 'c': do_clear = true; break;
		case 'm':
			mount_it = true;
			mount_dir = optional_dir(argc, argv);
			break;
		case 'u':
			umount_it = true;
			umount_dir = optional_dir(argc, argv);
			break;
		case OPT_PERSISTENT: persist = true; break;
		case OPT_FORCE: force = true; break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (as_pages && !amount)
		usage("--pages goes with -r COUNT");
	if (nodearg && !amount)
		usage("-n goes with -r");
	if (force && !amount)
		usage("--force goes with -r");
	if (persist && (do_clear || mount_it || umount_it || do_show || json))
		usage("--persistent only prints (with -r, -p, for that reservation); give it alone");
	if (json && !strcmp(json, ""))
		usage("--json needs - or a file name");
	if (json)
		pp_cli_json_writable("pp-hugepages", json);
	if (!amount && !do_clear && !mount_it && !umount_it && !persist)
		do_show = true;
	if (json)
		do_show = true;

	err = discover();
	if (err) {
		fprintf(stderr, "pp-hugepages: cannot read %s%s: %s: this kernel has no hugetlb support (CONFIG_HUGETLBFS), or sysfs is not mounted\n",
			pp_cli_root, SYS_HUGEPAGES, strerror(-err));
		return 1;
	}

	if (psize) {
		unsigned long long bytes;

		if (!parse_size(psize, &bytes) || bytes < 4096 ||
		    (bytes & (bytes - 1)))
			usage("page size '%.40s' is not a size such as 2M or 1G", psize);
		kb = (unsigned long)(bytes >> 10);
		if (!size_offered(kb)) {
			if (kb == KB_1G && !cpu_has_gig_pages())
				fprintf(stderr, "pp-hugepages: no 1G pages: this CPU has no 1 GiB pages (no pdpe1gb flag); sizes here: %s\n",
					sizes_list(list, sizeof(list)));
			else
				fprintf(stderr, "pp-hugepages: the kernel offers no %s pages (no %s%s/hugepages-%lukB); sizes here: %s\n",
					psize, pp_cli_root, SYS_HUGEPAGES, kb,
					sizes_list(list, sizeof(list)));
			return 2;
		}
	}

	if (amount) {
		unsigned long long bytes;

		if (!kb)
			kb = KB_2M;
		if (!size_offered(kb)) {
			fprintf(stderr, "pp-hugepages: the kernel offers no 2M pages (no %s%s/hugepages-2048kB); sizes here: %s: give one with -p\n",
				pp_cli_root, SYS_HUGEPAGES, sizes_list(list, sizeof(list)));
			return 2;
		}
		if (as_pages) {
			if (!parse_uint(amount, LONG_MAX, &pages))
				usage("'%.40s' is not a page count: digits only, e.g. -r 512 --pages", amount);
		} else if (!parse_size(amount, &bytes)) {
			usage("'%.40s' is not a size: a number and its unit, e.g. 1G or 512M (a page count needs --pages)", amount);
		} else if (bytes % ((unsigned long long)kb << 10)) {
			usage("%.40s is not a multiple of the %s page size", amount,
			      size_name(kb, list, sizeof(list)));
		} else {
			pages = bytes / ((unsigned long long)kb << 10);
		}
		if (nodearg) {
			if (!parse_uint(nodearg, INT_MAX, &v))
				usage("'%.40s' is not a node number", nodearg);
			node = (int)v;
			if (!node_known(node)) {
				fprintf(stderr, "pp-hugepages: no node %d with hugepages: nodes here: %s\n",
					node, nodes_list(list, sizeof(list)));
				return 2;
			}
		}
	}

	/*
	 * Before anything changes. --persistent's counts are machine-wide
	 * (it drops -n), and what it prints is written at the next boot.
	 */
	if (amount) {
		rc = fits(kb, persist ? -1 : node, pages, do_clear,
			  do_clear && !psize, force);
		if (rc)
			return rc;
	}
	if (persist)
		return persistent(amount ? kb : 0, pages, node);

	for (const char *d = mount_dir;; d = umount_dir) {
		if (d && !dir_valid(d))
			usage("'%.40s' is not an absolute directory (no . or .. in it)", d);
		if (d == umount_dir)
			break;
	}

	if (umount_it)
		rc |= do_unmount(umount_dir, psize ? kb : 0);
	if (do_clear)
		rc |= clear(psize ? kb : 0);
	if (amount)
		rc |= reserve(kb, node, pages);
	if (mount_it) {
		if (!kb)
			kb = KB_2M;
		if (!mount_dir) {
			default_dir(kb, dir, sizeof(dir));
			mount_dir = dir;
		}
		rc |= do_mount(mount_dir, kb);
	}
	if (do_show)
		rc |= show(json);
	return rc;
}
