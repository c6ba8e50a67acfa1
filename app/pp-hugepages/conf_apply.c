/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_apply.c - pp-hugepages --apply, once conf.c has read the file and
 * found every line good: whether its counts fit in the memory, as -r's
 * do (hp_fits()), and writing them in an order that lets them fit.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "hugepages.h"

/* The count in @kb's file of @node (-1: machine-wide); 0 if unreadable. */
static unsigned long long count_now(unsigned long kb, int node)
{
	char path[PATH_MAX];
	long v;

	hp_path(path, kb, node, "nr_hugepages");
	v = hp_read_count(path);
	return v > 0 ? (unsigned long long)v : 0;
}

/* a + b * kb in kB, saturated: a count near LONG_MAX is more than any
 * machine has. */
static unsigned long long add_kb(unsigned long long a, unsigned long long b,
				 unsigned long kb)
{
	unsigned long long m;

	if (__builtin_mul_overflow(b, (unsigned long long)kb, &m) ||
	    __builtin_add_overflow(a, m, &m))
		return ULLONG_MAX;
	return m;
}

/*
 * Whether @want kB of hugepages on @node (-1: the machine) fit in its
 * memory, @now kB there before: as hp_fits(), a total no higher than the
 * one now always fits. Says what is wrong. Returns 0, 1 or 2.
 */
static int total_fits(const struct hp_conf *c, int node,
		      unsigned long long want, unsigned long long now,
		      bool force)
{
	char mpath[PATH_MAX], where[32], ask[32], mem[32], pct[16];
	unsigned long long limit;
	long long total;
	bool node_read;

	if (want <= now)
		return 0;
	total = hp_mem_total_kb(node, mpath, &node_read);
	if (total < 0) {
		if (force)
			return 0;
		fprintf(stderr, "pp-hugepages: cannot tell how much memory this machine has (%s: %s): pass --force to apply %s without that check; nothing changed\n",
			mpath, strerror((int)-total), c->path);
		return 1;
	}
	limit = (unsigned long long)total;
	if (!force)
		limit = limit / 100 * MEM_MARGIN_PCT;
	if (want <= limit)
		return 0;
	hp_where_of(node, where, sizeof(where));
	snprintf(pct, sizeof(pct), "%d%% of ", MEM_MARGIN_PCT);
	fprintf(stderr, "pp-hugepages: %s: %s: its hugepages, with those of the sizes it leaves as they are, come to %s, more than %sthe %s of memory %s has (MemTotal in %s): %s; nothing changed\n",
		c->path, where, hp_human_kb((double)want, ask, sizeof(ask)),
		want > (unsigned long long)total ? "" : pct,
		hp_human_kb((double)total, mem, sizeof(mem)),
		node_read ? where : "this machine", mpath,
		want > (unsigned long long)total ?
		"lower the counts" :
		"the rest is too little for the kernel and every process (the OOM killer would start): lower the counts, or pass --force to reserve more than that");
	return 2;
}

/*
 * hp_conf_fits - the memory the file's counts come to, machine-wide and
 * on each node it names, with the pages of the sizes (and nodes) it does
 * not name, against the memory there, as -r's hp_fits(). Records each
 * entry's count before, for hp_conf_apply()'s order.
 */
int hp_conf_fits(struct hp_conf *c, bool force)
{
	unsigned long long want = 0, now = 0;
	int rc;

	for (size_t i = 0; i < c->n; i++)
		c->e[i].now = (long)count_now(c->e[i].kb, c->e[i].node);
	/* Machine-wide: per size, the file's count, or the nodes' counts
	 * with the file's in place of theirs, or what there is now. */
	for (int s = 0; s < hp_nr_sizes; s++) {
		unsigned long kb = hp_sizes[s];
		unsigned long long all = count_now(kb, -1), sum = all;

		for (size_t i = 0; i < c->n; i++) {
			const struct hp_entry *e = &c->e[i];

			if (e->kb != kb)
				continue;
			if (e->node < 0) {
				sum = e->pages;
			} else {
				/* The node's count now is part of the sum. */
				unsigned long long was = (unsigned long long)e->now;

				sum = add_kb(sum > was ? sum - was : 0, e->pages, 1);
			}
		}
		want = add_kb(want, sum, kb);
		now = add_kb(now, all, kb);
	}
	rc = total_fits(c, -1, want, now, force);
	if (rc)
		return rc;
	/* Each node named: its sizes, the file's counts in place. */
	for (size_t i = 0; i < c->n; i++) {
		int node = c->e[i].node;
		bool first = true;

		if (node < 0)
			continue;
		for (size_t j = 0; j < i && first; j++)
			first = c->e[j].node != node;
		if (!first)
			continue;
		want = now = 0;
		for (int s = 0; s < hp_nr_sizes; s++) {
			unsigned long kb = hp_sizes[s];
			unsigned long long cur = count_now(kb, node), n = cur;

			for (size_t j = i; j < c->n; j++)
				if (c->e[j].node == node && c->e[j].kb == kb)
					n = c->e[j].pages;
			want = add_kb(want, n, kb);
			now = add_kb(now, cur, kb);
		}
		rc = total_fits(c, node, want, now, force);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * The order of the writes: the counts that go down first, so that the
 * memory they give back is there for those that go up; then the largest
 * pages first, while memory is least fragmented; then the file's order.
 */
static int cmp_order(const void *a, const void *b)
{
	const struct hp_entry *x = a, *y = b;
	bool xd = x->pages < (unsigned long long)x->now;
	bool yd = y->pages < (unsigned long long)y->now;

	if (xd != yd)
		return xd ? -1 : 1;
	if (x->kb != y->kb)
		return x->kb > y->kb ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * hp_conf_apply - every entry, written and read back (hp_reserve() says
 * what the kernel gave). A shortfall does not stop the rest: each line
 * gets what it can, and exit 1 says one fell short, so that the unit
 * shows as failed with the message in its journal.
 */
int hp_conf_apply(struct hp_conf *c)
{
	unsigned int short_of = 0;

	if (!c->n) {
		printf("pp-hugepages: %s reserves nothing (comments and empty lines only): nothing changed\n",
		       c->path);
		return 0;
	}
	qsort(c->e, c->n, sizeof(c->e[0]), cmp_order);
	for (size_t i = 0; i < c->n; i++)
		if (hp_reserve(c->e[i].kb, c->e[i].node, c->e[i].pages))
			short_of++;
	if (short_of) {
		fprintf(stderr, "pp-hugepages: %s: %u of its %zu lines not met (above)\n",
			c->path, short_of, c->n);
		return 1;
	}
	printf("pp-hugepages: %s applied: %zu line%s, every count as asked\n",
	       c->path, c->n, c->n == 1 ? "" : "s");
	return 0;
}
