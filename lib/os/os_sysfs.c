/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_sysfs.c - what sysfs says about nodes and hugepages: which nodes are
 * online, and how many hugepages of each size are reserved and free, per
 * node and machine-wide. Read fresh on every call: other processes take
 * and return hugepages all the time, so a cached figure would be stale.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pp_os_fault.h"
#include "pp_os.h"

#define SYS_NODE "/sys/devices/system/node"
#define SYS_HUGEPAGES "/sys/kernel/mm/hugepages"

/* Read a small sysfs file into @buf, NUL-terminated. Returns 0 or -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	PP_OS_FAIL_HERE(EMFILE);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		n = PP_OS_FAULT(EIO) ? (errno = EIO, -1) :
				       read(fd, buf, len - 1);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

/*
 * Call @fn for each node in /sys/devices/system/node/online, a list such
 * as "0-3,6". Returns the number of nodes, or -errno.
 */
static int for_each_online(void (*fn)(int node, void *arg), void *arg)
{
	char buf[1024], *p, *end;
	int ret, count = 0;

	ret = read_small(SYS_NODE "/online", buf, sizeof(buf));
	if (ret == -ENOENT) {
		/* A kernel built without NUMA has one node, node 0. */
		if (fn)
			fn(0, arg);
		return 1;
	}
	if (ret < 0)
		return ret;
	p = buf;
	while (*p && *p != '\n') {
		long lo, hi;

		lo = strtol(p, &end, 10);
		if (end == p || lo < 0)
			return -EINVAL;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return -EINVAL;
			p = end;
		}
		for (long n = lo; n <= hi; n++) {
			count++;
			if (fn)
				fn((int)n, arg);
		}
		if (*p == ',')
			p++;
	}
	return count;
}

struct node_query {
	int want;
	bool found;
};

static void match_node(int node, void *arg)
{
	struct node_query *q = arg;

	if (node == q->want)
		q->found = true;
}

int pp_os_node_state(int node)
{
	struct node_query q = { .want = node, .found = false };
	int ret;

	if (node < 0)
		return 0;
	ret = for_each_online(match_node, &q);
	if (ret < 0)
		return ret;
	return q.found;
}

bool pp_os_node_online(int node)
{
	return pp_os_node_state(node) > 0;
}

int pp_os_node_count(void)
{
	int n = for_each_online(NULL, NULL);

	return n > 0 ? n : 1;
}

bool pp_os_hugepage_size_supported(size_t page_size)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), SYS_HUGEPAGES "/hugepages-%zukB",
		 page_size >> 10);
	return stat(path, &st) == 0;
}

void pp_os_hugepages_path(char *buf, size_t len, size_t page_size, int node,
			  const char *leaf)
{
	if (node < 0)
		snprintf(buf, len, SYS_HUGEPAGES "/hugepages-%zukB/%s",
			 page_size >> 10, leaf);
	else
		snprintf(buf, len,
			 SYS_NODE "/node%d/hugepages/hugepages-%zukB/%s", node,
			 page_size >> 10, leaf);
}

static long read_count(size_t page_size, int node, const char *leaf)
{
	char path[160], buf[64], *end;
	long v;
	int ret;

	pp_os_hugepages_path(path, sizeof(path), page_size, node, leaf);
	ret = read_small(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (end == buf || errno || v < 0)
		return -EINVAL;
	return v;
}

long pp_os_hugepages_free(size_t page_size, int node)
{
	return read_count(page_size, node, "free_hugepages");
}

long pp_os_hugepages_total(size_t page_size, int node)
{
	return read_count(page_size, node, "nr_hugepages");
}

void pp_os_hugepages_reserve_cmd(char *buf, size_t len, size_t page_size,
				 int node, long more)
{
	long total = pp_os_hugepages_total(page_size, node);
	char on_node[24] = "";

	if (total < 0)
		total = 0;
	if (node >= 0)
		snprintf(on_node, sizeof(on_node), " -n %d", node);
	snprintf(buf, len, "pp-hugepages -r %ld --pages -p %s%s", total + more,
		 page_size == (1UL << 30) ? "1G" : "2M", on_node);
}

long pp_os_hugepages_reserved(size_t page_size)
{
	return read_count(page_size, -1, "resv_hugepages");
}

long pp_os_hugepages_available(size_t page_size, int node)
{
	long avail, resv, on_node;

	avail = pp_os_hugepages_free(page_size, -1);
	if (avail < 0)
		return avail;
	resv = pp_os_hugepages_reserved(page_size);
	if (resv > 0)
		avail = avail > resv ? avail - resv : 0;
	if (node < 0)
		return avail;
	on_node = pp_os_hugepages_free(page_size, node);
	if (on_node < 0)
		return on_node;
	return on_node < avail ? on_node : avail;
}
