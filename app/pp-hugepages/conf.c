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
 *
 * This file reads and checks; conf_apply.c fits the counts in the memory
 * and writes them.
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

#include "conf.h"
#include "hugepages.h"
#include "pp_cli_root.h"

/* Longer lines are refused: a config line is a few words. */
#define LINE_MAX_BYTES 1024
/* And larger files: a line per size and node is a few KiB at most; a
 * file named by mistake (an image, a log) is refused before it is read. */
#define FILE_MAX_BYTES (1024 * 1024)
/* Bad lines named before the rest are only counted. */
#define MAX_REPORTED 20


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
	/*
	 * The config is the machine's, so under a test's root as /sys is; a
	 * relative FILE is the caller's, as --json FILE is.
	 */
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
	if (st.st_size > FILE_MAX_BYTES) {
		fprintf(stderr, "pp-hugepages: %s is %lld bytes, more than a config file of a line per page size and node (%d bytes at most): name the config file; nothing changed\n",
			c->path, (long long)st.st_size, FILE_MAX_BYTES);
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
