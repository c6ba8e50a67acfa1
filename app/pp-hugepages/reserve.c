/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reserve.c - pp-hugepages -r, --clear and --persistent: whether a
 * reservation fits in the memory, writing the counts and reading them
 * back, and the boot-time form of a reservation.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hugepages.h"
#include "pp_cli_root.h"

/*
 * Hugepages are taken from the memory the kernel and every process live
 * in, and the kernel turns free memory into hugepages for as long as any
 * is left when nr_hugepages asks for more than there is: a count of a
 * million (-r 100T, a mistyped --pages) leaves the machine without
 * memory, and the OOM killer starts. A reservation is refused when the
 * hugepages of every size on its node (or machine-wide) would come to
 * more than the memory there, and above MEM_MARGIN_PCT percent of it
 * unless --force: what is left is for the kernel and every process.
 * (MEM_MARGIN_PCT is in hugepages.h: --apply's check is conf.c's.)
 */

/*
 * The memory of @node (< 0: the machine), in kB, from MemTotal in the
 * node's meminfo ("Node 0 MemTotal:   8192000 kB") or /proc/meminfo. A
 * node without a meminfo file is bounded by the machine's. The file read
 * goes into @path, for messages, and @node_read says whether it was the
 * node's. Returns the size, or -errno when there is no MemTotal to read.
 */
long long hp_mem_total_kb(int node, char path[PATH_MAX], bool *node_read)
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
const char *hp_human_kb(double kb, char *buf, size_t len)
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

/*
 * hp_fits - whether @pages of @kb on @node (machine-wide if < 0), with the
 * pages of the other sizes reserved there, fit in the memory there: all
 * of it at most, and MEM_MARGIN_PCT percent unless @force. @cleared:
 * --clear runs first, of every size (@all_cleared) or of @kb's, so those
 * counts are 0 by then. A count no higher than the one there now always
 * fits: lowering it only gives memory back. Says what is wrong and what
 * to do. Returns 0, 2 (too much) or 1 (the memory cannot be read, and no
 * --force).
 */
int hp_fits(unsigned long kb, int node, unsigned long long pages,
	    bool cleared, bool all_cleared, bool force)
{
	char mpath[PATH_MAX], path[PATH_MAX], where[32], sz[32], ask[32];
	char sum[32], other[32], mem[32], pct[16], with[128], fix[160];
	unsigned long long want, others = 0, limit;
	long long total;
	bool node_read, over_all;
	long now;

	total = hp_mem_total_kb(node, mpath, &node_read);
	if (total < 0) {
		if (force)
			return 0;
		fprintf(stderr, "pp-hugepages: cannot tell how much memory this machine has (%s: %s): pass --force to reserve without that check; nothing changed\n",
			mpath, strerror((int)-total));
		return 1;
	}
	for (int i = 0; i < hp_nr_sizes && !all_cleared; i++) {
		long n;

		if (hp_sizes[i] == kb)
			continue;
		hp_path(path, hp_sizes[i], node, "nr_hugepages");
		n = hp_read_count(path);
		if (n > 0)
			others += (unsigned long long)n * hp_sizes[i];
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
	now = cleared ? 0 : hp_read_count(path);
	if (now > 0 && pages <= (unsigned long long)now)
		return 0;

	over_all = want > (unsigned long long)total;
	with[0] = '\0';
	if (others)
		snprintf(with, sizeof(with), ", %s with the %s already reserved in other page sizes",
			 hp_human_kb((double)pages * (double)kb + (double)others,
				  sum, sizeof(sum)),
			 hp_human_kb((double)others, other, sizeof(other)));
	if (node_read)
		hp_where_of(node, mem, sizeof(mem));
	else
		snprintf(mem, sizeof(mem), "this machine");
	snprintf(pct, sizeof(pct), "%d%% of ", MEM_MARGIN_PCT);
	if (over_all)
		snprintf(fix, sizeof(fix), "ask for less (pp-hugepages shows what is reserved)");
	else
		snprintf(fix, sizeof(fix), "the rest is too little for the kernel and every process (the OOM killer would start): ask for less, or pass --force to reserve more than %d%%",
			 MEM_MARGIN_PCT);
	fprintf(stderr, "pp-hugepages: %s: %llu %s pages are %s%s, more than %sthe %s of memory %s has (MemTotal in %s): %s; nothing changed\n",
		hp_where_of(node, where, sizeof(where)), pages,
		hp_size_name(kb, sz, sizeof(sz)),
		hp_human_kb((double)pages * (double)kb, ask, sizeof(ask)), with,
		over_all ? "" : pct, hp_human_kb((double)total, sum, sizeof(sum)),
		mem, mpath, fix);
	return 2;
}

/* Says why a write of nr_hugepages failed, and what to do. */
static void write_failed(const char *path, unsigned long kb, int err)
{
	const char *fix = "";

	if (err == -EACCES || err == -EPERM || err == -EROFS)
		fix = ": run as root";
	else if (err == -ELOOP)
		fix = ": it is a symbolic link, and pp-hugepages writes none";
	else if (err == -EINVAL && kb == KB_1G && !hp_cpu_has_gig_pages())
		fix = ": this CPU has no 1 GiB pages (no pdpe1gb flag)";
	else if (err == -ENOENT)
		fix = ": the kernel offers no such file (no hugetlb support?)";
	fprintf(stderr, "pp-hugepages: cannot write %s: %s%s\n", path,
		strerror(-err), fix);
}

/*
 * hp_reserve - set the count of @kb pages on @node (machine-wide if < 0) to
 * @pages, read it back and say what the kernel gave. Returns 0, or 1 when
 * the write failed or the kernel gave fewer.
 */
int hp_reserve(unsigned long kb, int node, unsigned long long pages)
{
	char path[PATH_MAX], sz[32], where[32], val[32];
	long was, got;
	int err;

	hp_size_name(kb, sz, sizeof(sz));
	hp_where_of(node, where, sizeof(where));
	hp_path(path, kb, node, "nr_hugepages");
	was = hp_read_count(path);
	snprintf(val, sizeof(val), "%llu\n", pages);
	err = hp_write_str(path, val);
	if (err) {
		write_failed(path, kb, err);
		return 1;
	}
	got = hp_read_count(path);
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
 * hp_clear - every count of @kb pages to 0, node by node and machine-wide
 * (or of every size for @kb 0), then what is left: pages that a process
 * maps, or that files in a hugetlbfs mount hold, cannot be freed until
 * they are let go. Returns 0, or 1 when a write failed or pages are left.
 */
int hp_clear(unsigned long kb)
{
	char path[PATH_MAX], sz[32], where[32];
	int rc = 0, err;

	for (int i = 0; i < hp_nr_sizes; i++) {
		if (kb && hp_sizes[i] != kb)
			continue;
		for (int j = 0; j <= hp_nr_nodes; j++) {
			int node = j < hp_nr_nodes ? hp_nodes[j] : -1;

			hp_path(path, hp_sizes[i], node, "nr_hugepages");
			err = hp_write_str(path, "0\n");
			if (err) {
				write_failed(path, hp_sizes[i], err);
				rc = 1;
			}
		}
		for (int j = 0; j <= hp_nr_nodes; j++) {
			int node = j < hp_nr_nodes ? hp_nodes[j] : -1;
			long left;

			hp_path(path, hp_sizes[i], node, "nr_hugepages");
			left = hp_read_count(path);
			if (left <= 0)
				continue;
			fprintf(stderr, "pp-hugepages: %s: %ld %s pages still in use, not freed: a process maps them, or files in a hugetlbfs mount hold them; they go back when it exits or the files are removed\n",
				hp_where_of(node, where, sizeof(where)), left,
				hp_size_name(hp_sizes[i], sz, sizeof(sz)));
			rc = 1;
		}
	}
	if (!rc)
		printf("pp-hugepages: hugepages cleared\n");
	return rc;
}

/*
 * The boot-time forms of the reservation: the current machine-wide
 * counts, with @want pages of @kb in place of the current count when
 * @kb is not 0. First the lines of PP_HUGEPAGES_CONF, which
 * pagepool-hugepages.service applies (and which keep a @node given with
 * -r); then the sysctl.d line and the kernel command line, both
 * machine-wide, where @node is said to be dropped. Changes nothing.
 */
int hp_persistent(unsigned long kb, unsigned long long want, int node)
{
	unsigned long def = hp_default_size();
	unsigned long long count[MAX_SIZES];
	char path[PATH_MAX], sz[32];
	bool any = false;

	for (int i = 0; i < hp_nr_sizes; i++) {
		long v;

		hp_path(path, hp_sizes[i], -1, "nr_hugepages");
		v = hp_read_count(path);
		count[i] = v > 0 ? (unsigned long long)v : 0;
		if (kb && hp_sizes[i] == kb)
			count[i] = want;
	}
	printf("# 1. " PP_HUGEPAGES_CONF ", applied early at boot by pagepool-hugepages.service (systemctl enable pagepool-hugepages.service; pp-hugepages --apply FILE applies it now): every size, per node with node=N\n");
	for (int i = 0; i < hp_nr_sizes; i++) {
		if (!count[i])
			continue;
		printf("%s %llu", hp_size_name(hp_sizes[i], sz, sizeof(sz)),
		       count[i]);
		if (node >= 0 && hp_sizes[i] == kb)
			printf(" node=%d", node);
		printf("\n");
	}
	printf("# 2. /etc/sysctl.d/80-hugepages.conf: the default page size (%s) only, machine-wide; applied at boot, after memory may have fragmented\n",
	       hp_size_name(def, sz, sizeof(sz)));
	for (int i = 0; i < hp_nr_sizes; i++)
		if (hp_sizes[i] == def)
			printf("vm.nr_hugepages = %llu\n", count[i]);
	printf("# 3. kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub; reboot): every size, reserved before memory fragments\n");
	printf("default_hugepagesz=%s", hp_size_name(def, sz, sizeof(sz)));
	for (int i = 0; i < hp_nr_sizes; i++) {
		if (!count[i])
			continue;
		printf(" hugepagesz=%s hugepages=%llu",
		       hp_size_name(hp_sizes[i], sz, sizeof(sz)), count[i]);
		any = true;
	}
	printf("\n");
	if (node >= 0)
		printf("# 2 and 3 are machine-wide: the kernel spreads the pages over the nodes with memory, so -n %d is not kept there\n",
		       node);
	if (!any)
		printf("# (no pages reserved now: give the reservation with -r)\n");
	return 0;
}

