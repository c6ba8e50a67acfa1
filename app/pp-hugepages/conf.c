/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf.c - pp-hugepages --apply FILE: a reservation written in a file,
 * the one pagepool-hugepages.service applies at boot (PP_HUGEPAGES_CONF).
 * A line is
 *
 *     SIZE COUNT [node=N]     # a comment
 *
 * "2M 1024" sets the machine-wide count of 2 MiB pages (the kernel spreads
 * them over the nodes with memory, as -r without -n); "1G 2 node=0" sets
 * node 0's. '#' starts a comment; empty lines are skipped.
 *
 * The whole file is read and checked before anything is written, and a
 * bad line stops all of it: a reservation half applied at boot (2 MiB
 * pages reserved, the 1 GiB pages beside them not) is worse than none,
 * which the operator sees at once. Every bad line is named, with what to
 * write instead, not only the first.
 *
 * A size is given machine-wide or per node, never both: the machine-wide
 * count is the sum of the nodes', so the two would undo each other, and
 * what came of it would hang on the order of the lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hugepages.h"
#include "pp_cli_root.h"

/* Longer lines are refused: a config line is a few words. */
#define LINE_MAX_BYTES 1024
/* Bad lines named before the rest are only counted. */
#define MAX_REPORTED 20

struct hp_entry {
	unsigned long kb;
	int node; /* -1: machine-wide */
	unsigned long long pages;
	unsigned int line;
	long now; /* the count before (hp_conf_fits()), for the order */
};

struct hp_conf {
	char path[PATH_MAX];
	struct hp_entry *e;
	size_t n;
	unsigned int bad; /* bad lines */
};

static __attribute__((format(printf, 3, 4))) void
bad_line(struct hp_conf *c, unsigned int line, const char *fmt, ...)
{
	va_list ap;

	if (++c->bad > MAX_REPORTED)
		return;
	fprintf(stderr, "pp-hugepages: %s:%u: ", c->path, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool is_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* A page size: 2M, 1G, 2048kB, a power of two of 4 KiB or more. */
static bool page_size(const char *s, unsigned long *kb)
{
	unsigned long long bytes;

	if (!hp_parse_size(s, &bytes) || bytes < 4096 || (bytes & (bytes - 1)) ||
	    (bytes >> 10) > ULONG_MAX)
		return false;
	*kb = (unsigned long)(bytes >> 10);
	return true;
}

/* Whether the machine offers @kb pages; if not, says why, as -p does. */
static bool size_here(struct hp_conf *c, unsigned int line, unsigned long kb)
{
	char list[256], sz[32];

	if (hp_size_offered(kb))
		return true;
	hp_size_name(kb, sz, sizeof(sz));
	if (kb == KB_1G && !hp_cpu_has_gig_pages())
		bad_line(c, line, "this CPU has no 1 GiB pages (no pdpe1gb flag), so 1G cannot be reserved here; sizes here: %s: take the line out, or reserve the memory in one of those",
			 hp_sizes_list(list, sizeof(list)));
	else
		bad_line(c, line, "the kernel offers no %s pages (no %s%s/hugepages-%lukB); sizes here: %s: take the line out, or reserve the memory in one of those",
			 sz, pp_cli_root, SYS_HUGEPAGES, kb,
			 hp_sizes_list(list, sizeof(list)));
	return false;
}

/*
 * The words of line @line (comment stripped) into an entry, or a message
 * that says what is wrong and what to write. @discovered: the sizes and
 * nodes are checked against the machine's too. Returns whether it is
 * one.
 */
static bool parse_words(struct hp_conf *c, unsigned int line, char **w,
			int nw, bool discovered, struct hp_entry *out)
{
	unsigned long long v, bytes;
	unsigned long kb, kb2;
	char sz[32], list[256];

	if (!page_size(w[0], &kb)) {
		if (nw >= 2 && is_digits(w[0]) && page_size(w[1], &kb2))
			bad_line(c, line, "the page size comes first: '%.40s %.40s'",
				 w[1], w[0]);
		else
			bad_line(c, line, "'%.40s' is not a page size: a line is SIZE COUNT [node=N], e.g. '2M 1024' or '1G 2 node=0'",
				 w[0]);
		return false;
	}
	hp_size_name(kb, sz, sizeof(sz));
	if (nw < 2) {
		bad_line(c, line, "no page count after '%.40s': write '%s COUNT' (a number of pages, e.g. '%s %s')",
			 w[0], sz, sz, kb == KB_1G ? "2" : "1024");
		return false;
	}
	if (!is_digits(w[1])) {
		/* "2M 1G": memory where a count goes; say the count. */
		if (hp_parse_size(w[1], &bytes) &&
		    bytes % ((unsigned long long)kb << 10) == 0)
			bad_line(c, line, "'%.40s' is not a page count: digits only, a number of pages (%.40s of %s pages is '%s %llu')",
				 w[1], w[1], sz, sz,
				 bytes / ((unsigned long long)kb << 10));
		else
			bad_line(c, line, "'%.40s' is not a page count: digits only, a number of %s pages, e.g. '%s %s'",
				 w[1], sz, sz, kb == KB_1G ? "2" : "1024");
		return false;
	}
	if (!hp_parse_uint(w[1], LONG_MAX, &v)) {
		bad_line(c, line, "%.40s %s pages: more than the kernel counts (%ld at most, and far more than any memory): give the number of pages",
			 w[1], sz, LONG_MAX);
		return false;
	}
	out->kb = kb;
	out->pages = v;
	out->node = -1;
	out->line = line;
	if (nw >= 3) {
		if (strncmp(w[2], "node=", 5)) {
			bad_line(c, line, "'%.40s' is not node=N: a line is SIZE COUNT [node=N], e.g. '%s %.40s node=0'",
				 w[2], sz, w[1]);
			return false;
		}
		if (!hp_parse_uint(w[2] + 5, INT_MAX, &v)) {
			bad_line(c, line, "'%.40s' is not a node number: node=N, N one of the nodes (pp-hugepages lists them)",
				 w[2] + 5);
			return false;
		}
		out->node = (int)v;
	}
	if (nw > 3) {
		bad_line(c, line, "'%.40s' after '%.40s': a line is SIZE COUNT [node=N], one reservation a line",
			 w[3], w[2]);
		return false;
	}
	if (!discovered)
		return true;
	if (!size_here(c, line, kb))
		return false;
	if (out->node >= 0 && !hp_node_known(out->node)) {
		bad_line(c, line, "no node %d with hugepages: nodes here: %s: name one of those, or drop node= for a machine-wide count",
			 out->node, hp_nodes_list(list, sizeof(list)));
		return false;
	}
	return true;
}

/*
 * Whether entry @e can go beside the ones before it: one line a size and
 * node, and a size machine-wide or per node, not both.
 */
static bool fits_beside(struct hp_conf *c, const struct hp_entry *e)
{
	char sz[32], where[32];

	hp_size_name(e->kb, sz, sizeof(sz));
	for (size_t i = 0; i < c->n; i++) {
		const struct hp_entry *o = &c->e[i];

		if (o->kb != e->kb)
			continue;
		if (o->node == e->node) {
			if (e->node >= 0)
				snprintf(where, sizeof(where), "on node %d", e->node);
			bad_line(c, e->line, "%s pages %s again (line %u gives them already): keep one of the two lines",
				 sz, e->node < 0 ? "machine-wide" : where, o->line);
			return false;
		}
		if (o->node < 0 || e->node < 0) {
			bad_line(c, e->line, "%s pages both machine-wide and per node (lines %u and %u): the machine-wide count is the sum of the nodes', and the kernel spreads it over them itself: give %s in one line without node=, or in a line per node",
				 sz, o->line, e->line, sz);
			return false;
		}
	}
	return true;
}

void hp_conf_free(struct hp_conf *c)
{
	if (!c)
		return;
	free(c->e);
	free(c);
}

bool hp_conf_empty(const struct hp_conf *c)
{
	return c->n == 0;
}

/* Says why @path cannot be read, and what to do. */
static void cannot_read(const char *path, int err)
{
	const char *fix = "";

	if (err == ENOENT)
		fix = ": write it (pp-hugepages --persistent prints its lines for the reservation now), or name another";
	else if (err == EACCES || err == EPERM)
		fix = ": run as root, or make it readable";
	fprintf(stderr, "pp-hugepages: cannot read %s: %s%s; nothing changed\n",
		path, strerror(err), fix);
}

int hp_conf_load(const char *file, struct hp_conf **out, bool discovered)
{
	struct hp_conf *c;
	char *buf = NULL;
	size_t cap = 0;
	unsigned int line = 0;
	struct stat st;
	ssize_t len;
	FILE *f;
	int fd;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "pp-hugepages: out of memory\n");
		return 1;
	}
	/* The config is the machine's, so under a test's root as /sys is. */
	if (file[0] == '/')
		pp_cli_root_path(c->path, "%s", file);
	else
		snprintf(c->path, sizeof(c->path), "%s", file);
	/*
	 * Opened without blocking, then looked at: a FIFO would wait for a
	 * writer, and be read forever, a device too, a directory not at all.
	 */
	fd = open(c->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		cannot_read(c->path, errno);
		hp_conf_free(c);
		return 2;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "pp-hugepages: %s is not a file: name the config file (" PP_HUGEPAGES_CONF " at boot); nothing changed\n",
			c->path);
		close(fd);
		hp_conf_free(c);
		return 2;
	}
	f = fdopen(fd, "r");
	if (!f) {
		cannot_read(c->path, errno);
		close(fd);
		hp_conf_free(c);
		return 2;
	}
	while ((len = getline(&buf, &cap, f)) >= 0) {
		struct hp_entry e;
		char *w[4], *save = NULL, *tok, *hash;
		int nw = 0;

		line++;
		if (strlen(buf) != (size_t)len) {
			bad_line(c, line, "a NUL byte: this is not a text file; name the config file");
			continue;
		}
		if (len > LINE_MAX_BYTES) {
			bad_line(c, line, "longer than %d bytes: a line is SIZE COUNT [node=N]",
				 LINE_MAX_BYTES);
			continue;
		}
		hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		for (tok = strtok_r(buf, " \t\r\n", &save); tok;
		     tok = strtok_r(NULL, " \t\r\n", &save)) {
			if (nw < 4)
				w[nw] = tok;
			nw++;
		}
		if (!nw)
			continue;
		if (!parse_words(c, line, w, nw, discovered, &e) ||
		    !fits_beside(c, &e))
			continue;
		if (!(c->n & (c->n + 1))) { /* 0, 1, 3, 7...: room doubles */
			struct hp_entry *ne = realloc(c->e, (c->n * 2 + 2) * sizeof(*ne));

			if (!ne) {
				fprintf(stderr, "pp-hugepages: out of memory\n");
				free(buf);
				fclose(f);
				hp_conf_free(c);
				return 1;
			}
			c->e = ne;
		}
		c->e[c->n++] = e;
	}
	if (ferror(f)) {
		cannot_read(c->path, errno ? errno : EIO);
		c->bad++;
	}
	free(buf);
	fclose(f);
	if (c->bad) {
		if (c->bad > MAX_REPORTED)
			fprintf(stderr, "pp-hugepages: %s: %u bad lines more\n",
				c->path, c->bad - MAX_REPORTED);
		fprintf(stderr, "pp-hugepages: %s: %u bad line%s: nothing applied, nothing changed\n",
			c->path, c->bad, c->bad == 1 ? "" : "s");
		hp_conf_free(c);
		return 2;
	}
	*out = c;
	return 0;
}

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
