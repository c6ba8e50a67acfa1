/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hugepages.h - what pp-hugepages' files share: the page sizes and nodes
 * the machine offers (sysfs.c), the hugetlbfs mounts (mounts.c, with
 * mount(2) behind mount_sys.c), --show (show.c), and reserving, clearing
 * and the boot-time form (reserve.c). main.c reads the command line and
 * runs the commands in their order.
 *
 * Every file is named through pp_cli_root_path(), so that the tests can
 * run the tool over a tree of their own (PP_HUGEPAGES_ROOT, see main.c).
 */
#ifndef PP_HUGEPAGES_H
#define PP_HUGEPAGES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define SYS_NODE "/sys/devices/system/node"
#define SYS_HUGEPAGES "/sys/kernel/mm/hugepages"
#define PROC_MOUNTS "/proc/mounts"

/* Page sizes and nodes this tool keeps track of; more are ignored. */
#define MAX_SIZES 16
#define MAX_NODES 1024

/*
 * A reservation may take at most this percent of the memory (of a node,
 * or of the machine) in hugepages of all sizes, unless --force: reserve.c
 * says why.
 */
#define MEM_MARGIN_PCT 90

#define KB_2M 2048UL
#define KB_1G 1048576UL

/* sysfs.c: what the machine offers, read once by hp_discover(): page
 * sizes (kB, ascending) and nodes (ascending). */
extern unsigned long hp_sizes[MAX_SIZES];
extern int hp_nr_sizes;
extern int hp_nodes[MAX_NODES];
extern int hp_nr_nodes;

int hp_discover(void);
bool hp_size_offered(unsigned long kb);
bool hp_node_known(int node);
bool hp_cpu_has_gig_pages(void);
unsigned long hp_default_size(void);
void hp_path(char *buf, unsigned long kb, int node, const char *leaf);
long hp_read_count(const char *path);
int hp_write_str(const char *path, const char *s);
bool hp_parse_uint(const char *s, unsigned long long max,
		   unsigned long long *out);
bool hp_parse_size(const char *s, unsigned long long *bytes);
/* For messages: "2M", "2M, 1G", "0, 1", "node 1" or "machine-wide". */
const char *hp_size_name(unsigned long kb, char *buf, size_t len);
const char *hp_sizes_list(char *buf, size_t len);
const char *hp_nodes_list(char *buf, size_t len);
const char *hp_where_of(int node, char *buf, size_t len);

/* mounts.c: the hugetlbfs mounts in /proc/mounts. */
struct hp_mnt {
	char dir[PATH_MAX];
	unsigned long kb; /* the pagesize option; 0: the default size */
};

bool hp_parse_mount(const char *line, struct hp_mnt *m);
int hp_mounts(struct hp_mnt **out);
void hp_default_dir(unsigned long kb, char *buf, size_t len);
bool hp_dir_valid(const char *d);
int hp_mount(const char *dir, unsigned long kb);
int hp_unmount(const char *dir, unsigned long kb);

/*
 * The mount table itself, below hp_mount() and hp_unmount(): mount(2)
 * and umount2(2) in the tool (mount_sys.c); in the test build of
 * tests/hugepages, lines written into the fake tree's /proc/mounts
 * (tests/hugepages/fake_mount.c), since a system call cannot act on a
 * tree. Each says on stdout what it did, or on stderr why it could not;
 * returns 0 or 1.
 *
 * hp_sys_mount - hugetlbfs at @dir with options @opts ("pagesize=2M",
 * @sz the size alone), the directory made already.
 * hp_sys_umount - the hugetlbfs at @dir.
 */
int hp_sys_mount(const char *dir, const char *opts, const char *sz);
int hp_sys_umount(const char *dir);

/* show.c: --show, as a table or as JSON into @json ("-": stdout). */
int hp_show(const char *json);

/* reserve.c */
long long hp_mem_total_kb(int node, char path[PATH_MAX], bool *node_read);
const char *hp_human_kb(double kb, char *buf, size_t len);
int hp_fits(unsigned long kb, int node, unsigned long long pages,
	    bool cleared, bool all_cleared, bool force);
int hp_reserve(unsigned long kb, int node, unsigned long long pages);
int hp_clear(unsigned long kb);
int hp_persistent(unsigned long kb, unsigned long long want, int node);

/*
 * conf.c, conf_apply.c - --apply FILE, the reservation a file gives (the boot-time one
 * is PP_HUGEPAGES_CONF, applied by pagepool-hugepages.service):
 *   hp_conf_load  - read and check every line of @file into *@out; says
 *                   what is wrong with each bad line. The sizes and
 *                   nodes are checked against the machine's when
 *                   @discovered (hp_discover() read them). 0 or 2.
 *   hp_conf_empty - whether the file reserves nothing (comments only).
 *   hp_conf_fits  - whether the counts, with the other sizes' and nodes'
 *                   pages, fit in the memory (as hp_fits()). 0, 1 or 2.
 *   hp_conf_apply - write each count and read it back. 0, or 1 when one
 *                   failed or the kernel gave fewer.
 */
#ifndef PP_HUGEPAGES_CONF
#define PP_HUGEPAGES_CONF "/etc/pagepool/hugepages.conf"
#endif
struct hp_conf;
int hp_conf_load(const char *file, struct hp_conf **out, bool discovered);
bool hp_conf_empty(const struct hp_conf *c);
int hp_conf_fits(struct hp_conf *c, bool force);
int hp_conf_apply(struct hp_conf *c);
void hp_conf_free(struct hp_conf *c);

#endif /* PP_HUGEPAGES_H */
