/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * show.c - pp-hugepages --show: the counts of every page size, per node
 * and machine-wide, and the hugetlbfs mounts, as a table or as JSON.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hugepages.h"
#include "pp_cli.h"
#include "pp_cli_root.h"

struct counts {
	long nr, free, surplus;
};

/* A node's (or, for node < 0, the machine's) counts of @kb pages. */
static void read_counts(unsigned long kb, int node, struct counts *c)
{
	char path[PATH_MAX];

	hp_path(path, kb, node, "nr_hugepages");
	c->nr = hp_read_count(path);
	hp_path(path, kb, node, "free_hugepages");
	c->free = hp_read_count(path);
	hp_path(path, kb, node, "surplus_hugepages");
	c->surplus = hp_read_count(path);
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
	printf("%-6s %-5s", where, hp_size_name(kb, sz, sizeof(sz)));
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
static void show_json(FILE *f, const struct hp_mnt *m, int nm)
{
	bool first = true;

	fputc('{', f);
	pp_cli_json_ident(f, "pp-hugepages");
	fprintf(f, "\n  \"default_page_size_kb\": %lu,\n  \"pages\": [",
		hp_default_size());
	for (int i = 0; i < hp_nr_sizes; i++) {
		for (int j = 0; j < hp_nr_nodes; j++)
			json_counts(f, hp_sizes[i], hp_nodes[j], &first);
		json_counts(f, hp_sizes[i], -1, &first);
	}
	fprintf(f, "\n  ],\n  \"mounts\": [");
	for (int i = 0; i < nm; i++) {
		fprintf(f, "%s\n    {\"dir\": ", i ? "," : "");
		pp_cli_json_str(f, m[i].dir);
		fprintf(f, ", \"page_size_kb\": %lu}",
			m[i].kb ? m[i].kb : hp_default_size());
	}
	fprintf(f, "\n  ]\n}\n");
}

int hp_show(const char *json)
{
	char sz[32], where[16];
	struct hp_mnt *m;
	int nm, rc = 0;

	nm = hp_mounts(&m);
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
	for (int i = 0; i < hp_nr_sizes; i++) {
		for (int j = 0; j < hp_nr_nodes; j++) {
			snprintf(where, sizeof(where), "%d", hp_nodes[j]);
			show_row(where, hp_sizes[i], hp_nodes[j]);
		}
		show_row("all", hp_sizes[i], -1);
	}
	if (!hp_nr_sizes)
		printf("(no hugepage sizes in %s%s: a kernel without hugetlb)\n",
		       pp_cli_root, SYS_HUGEPAGES);
	printf("\nhugetlbfs mounts (default page size %s):\n",
	       hp_size_name(hp_default_size(), sz, sizeof(sz)));
	for (int i = 0; i < nm; i++)
		printf("  %-24s pagesize=%s\n", m[i].dir,
		       m[i].kb ? hp_size_name(m[i].kb, sz, sizeof(sz)) :
				 "default");
	if (!nm)
		printf("  none: DPDK's EAL (without --in-memory) needs one: pp-hugepages --mount\n");
	free(m);
	return rc;
}

