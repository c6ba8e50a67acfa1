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
 *   pp-hugepages --apply FILE               the reservation FILE gives,
 *                                           per size and node (conf.c;
 *                                           at boot, by
 *                                           pagepool-hugepages.service)
 *   pp-hugepages --persistent [-r ...]      the config lines, sysctl.d
 *                                           and kernel command line for
 *                                           a reservation
 *
 * Without -n, a reservation is written machine-wide
 * (/sys/kernel/mm/hugepages/.../nr_hugepages), and the kernel spreads the
 * pages over the nodes that have memory, one at a time in turn; with -n
 * it is that node's count. A reservation sets the count (it may lower
 * it), then reads it back: the kernel gives fewer when memory is too
 * fragmented, and the operator is told so, with the fix. One that would
 * put more than 90% of the memory in hugepages is refused first, unless
 * --force (hp_fits()).
 *
 * PP_HUGEPAGES_ROOT, for tests only: a directory that stands in for / for
 * every file this tool reads or writes (/sys, /proc), each named through
 * pp_cli_root_path() (app/common). Every write opens with O_NOFOLLOW, so
 * a link in the tree cannot lead a write out of it. mount(2) cannot act
 * on a tree: the test build of tests/hugepages records --mount and
 * --unmount in ROOT/proc/mounts instead (its fake_mount.c in place of
 * mount_sys.c), and this tool refuses them under a fake root.
 *
 * main.c: the command line, and the commands in their order; the rest
 * is in the files hugepages.h lists.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hugepages.h"
#include "pp_cli.h"
#include "pp_cli_root.h"

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
	"      --force            with -r or --apply: reserve more than 90% of\n"
	"                         the memory (of node N with -n, of each node\n"
	"                         --apply's file names) in hugepages of all\n"
	"                         sizes together, or where the memory cannot be\n"
	"                         read; more than all of it is refused even so\n"
	"      --apply FILE       reserve what FILE says, a line per page size\n"
	"                         (and node): \"2M 1024\" sets the machine-wide\n"
	"                         count (the kernel spreads it over the nodes),\n"
	"                         \"1G 2 node=0\" node 0's; '#' starts a comment.\n"
	"                         The whole file is checked before anything is\n"
	"                         written (exit 2 for any bad line, each named),\n"
	"                         the memory bound as for -r (--force); then\n"
	"                         every line is applied and read back, and exit 1\n"
	"                         says the kernel gave fewer for one. At boot,\n"
	"                         pagepool-hugepages.service applies\n"
	"                         " PP_HUGEPAGES_CONF "\n"
	"      --persistent       print the ways to reserve the current\n"
	"                         reservation, or -r's, at boot: the lines of\n"
	"                         " PP_HUGEPAGES_CONF "\n"
	"                         (pagepool-hugepages.service), the sysctl.d line\n"
	"                         and the kernel command line; changes nothing\n"
	"  -h, --help             this text\n"
	"  -V, --version          the version\n"
	"\n"
	"Several commands run in this order: unmount, clear, reserve (-r or\n"
	"--apply), mount, show. Changes need root. Exit 0: done; 1: the kernel\n"
	"refused or gave less; 2: a bad argument, and nothing changed.\n";

static __attribute__((noreturn, format(printf, 1, 2))) void
usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pp-hugepages: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: pp-hugepages [-s] [--json -|FILE] | -r SIZE [--pages] [-p 2M|1G] [-n N] [--force] | -c | --apply FILE [--force] | -m [DIR] | -u [DIR] | --persistent; pp-hugepages --help says more\n");
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

enum { OPT_JSON = 256, OPT_PAGES, OPT_PERSISTENT, OPT_FORCE, OPT_APPLY };

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
	{ "apply", required_argument, NULL, OPT_APPLY },
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
	const char *mount_dir = NULL, *umount_dir = NULL, *conf = NULL;
	struct hp_conf *plan = NULL;
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
		case OPT_APPLY: conf = optarg; break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (as_pages && !amount)
		usage("--pages goes with -r COUNT");
	if (nodearg && !amount)
		usage("-n goes with -r");
	/* -p is -m's or -u's beside --apply: the file gives its own sizes. */
	if (conf && (amount || do_clear || persist ||
		     (psize && !mount_it && !umount_it)))
		usage("--apply takes its sizes, counts and nodes from the file: give it without -r, -p (but for -m or -u), -c and --persistent");
	if (conf && !strcmp(conf, ""))
		usage("--apply needs a file name (" PP_HUGEPAGES_CONF " at boot)");
	if (force && !amount && !conf)
		usage("--force goes with -r or --apply");
	if (persist && (do_clear || mount_it || umount_it || do_show || json))
		usage("--persistent only prints (with -r, -p, for that reservation); give it alone");
	if (json && !strcmp(json, ""))
		usage("--json needs - or a file name");
	if (json)
		pp_cli_json_writable("pp-hugepages", json);
	if (!amount && !do_clear && !mount_it && !umount_it && !persist && !conf)
		do_show = true;
	if (json)
		do_show = true;

	/*
	 * A file that reserves nothing asks nothing of the kernel: the
	 * package's own, all comments, runs at every boot, and must not
	 * fail where this kernel has no hugetlb support.
	 */
	err = hp_discover();
	if (conf) {
		rc = hp_conf_load(conf, &plan, !err);
		if (rc)
			return rc;
		if (hp_conf_empty(plan)) {
			rc = hp_conf_apply(plan); /* says so; writes nothing */
			hp_conf_free(plan);
			plan = NULL;
			conf = NULL;
			if (!mount_it && !umount_it && !do_show)
				return rc;
		}
	}
	if (err) {
		fprintf(stderr, "pp-hugepages: cannot read %s%s: %s: this kernel has no hugetlb support (CONFIG_HUGETLBFS), or sysfs is not mounted\n",
			pp_cli_root, SYS_HUGEPAGES, strerror(-err));
		hp_conf_free(plan);
		return 1;
	}

	if (psize) {
		unsigned long long bytes;

		if (!hp_parse_size(psize, &bytes) || bytes < 4096 ||
		    (bytes & (bytes - 1)))
			usage("page size '%.40s' is not a size such as 2M or 1G", psize);
		kb = (unsigned long)(bytes >> 10);
		if (!hp_size_offered(kb)) {
			if (kb == KB_1G && !hp_cpu_has_gig_pages())
				fprintf(stderr, "pp-hugepages: no 1G pages: this CPU has no 1 GiB pages (no pdpe1gb flag); sizes here: %s\n",
					hp_sizes_list(list, sizeof(list)));
			else
				fprintf(stderr, "pp-hugepages: the kernel offers no %s pages (no %s%s/hugepages-%lukB); sizes here: %s\n",
					psize, pp_cli_root, SYS_HUGEPAGES, kb,
					hp_sizes_list(list, sizeof(list)));
			hp_conf_free(plan);
			return 2;
		}
	}

	if (amount) {
		unsigned long long bytes;

		if (!kb)
			kb = KB_2M;
		if (!hp_size_offered(kb)) {
			fprintf(stderr, "pp-hugepages: the kernel offers no 2M pages (no %s%s/hugepages-2048kB); sizes here: %s: give one with -p\n",
				pp_cli_root, SYS_HUGEPAGES, hp_sizes_list(list, sizeof(list)));
			return 2;
		}
		if (as_pages) {
			if (!hp_parse_uint(amount, LONG_MAX, &pages))
				usage("'%.40s' is not a page count: digits only, e.g. -r 512 --pages", amount);
		} else if (!hp_parse_size(amount, &bytes)) {
			usage("'%.40s' is not a size: a number and its unit, e.g. 1G or 512M (a page count needs --pages)", amount);
		} else if (bytes % ((unsigned long long)kb << 10)) {
			usage("%.40s is not a multiple of the %s page size", amount,
			      hp_size_name(kb, list, sizeof(list)));
		} else {
			pages = bytes / ((unsigned long long)kb << 10);
		}
		if (nodearg) {
			if (!hp_parse_uint(nodearg, INT_MAX, &v))
				usage("'%.40s' is not a node number", nodearg);
			node = (int)v;
			if (!hp_node_known(node)) {
				fprintf(stderr, "pp-hugepages: no node %d with hugepages: nodes here: %s\n",
					node, hp_nodes_list(list, sizeof(list)));
				return 2;
			}
		}
	}

	/*
	 * The whole file, checked before anything changes: a bad line, or
	 * a reservation beyond the memory, and nothing of it is applied.
	 */
	if (conf) {
		rc = hp_conf_fits(plan, force);
		if (rc) {
			hp_conf_free(plan);
			return rc;
		}
	}

	/*
	 * Before anything changes. --persistent's counts are machine-wide
	 * (it drops -n), and what it prints is written at the next boot.
	 */
	if (amount) {
		rc = hp_fits(kb, persist ? -1 : node, pages, do_clear,
			     do_clear && !psize, force);
		if (rc)
			return rc;
	}
	if (persist)
		return hp_persistent(amount ? kb : 0, pages, node);

	for (const char *d = mount_dir;; d = umount_dir) {
		if (d && !hp_dir_valid(d))
			usage("'%.40s' is not an absolute directory (no . or .. in it)", d);
		if (d == umount_dir)
			break;
	}

	if (umount_it)
		rc |= hp_unmount(umount_dir, psize ? kb : 0);
	if (do_clear)
		rc |= hp_clear(psize ? kb : 0);
	if (amount)
		rc |= hp_reserve(kb, node, pages);
	if (conf) {
		rc |= hp_conf_apply(plan);
		hp_conf_free(plan);
	}
	if (mount_it) {
		if (!kb)
			kb = KB_2M;
		if (!mount_dir) {
			hp_default_dir(kb, dir, sizeof(dir));
			mount_dir = dir;
		}
		rc |= hp_mount(mount_dir, kb);
	}
	if (do_show)
		rc |= hp_show(json);
	return rc;
}

