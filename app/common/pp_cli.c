/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_cli.c - the shared command-line pieces: see pp_cli.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "pp_cli.h"

const char pp_cli_version[] = PP_CLI_VERSION;

void pp_cli_print_version(const char *tool)
{
	printf("%s (pagepool) %s (commit %s)\n", tool, pp_cli_version,
	       pp_cli_commit);
}

/*
 * The long option in @arg ("--name" or "--name=value", perhaps an
 * abbreviation, as getopt_long() takes them) whose val is @val: NULL when
 * @arg is not a long option or names none with that val.
 */
static const struct option *long_option(const char *arg, int val,
					const struct option *longopts)
{
	size_t n;

	if (strncmp(arg, "--", 2) || !arg[2] || !longopts)
		return NULL;
	arg += 2;
	n = strcspn(arg, "=");
	for (; longopts->name; longopts++)
		if (longopts->val == val && !strncmp(longopts->name, arg, n))
			return longopts;
	return NULL;
}

void pp_cli_bad_option(const char *tool, int c, char *const argv[],
		       const struct option *longopts)
{
	/* The word getopt was at: it moved past it for every case here but
	 * an unknown short option in a group (-xZ), told by optopt. */
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const struct option *lo = long_option(arg, optopt, longopts);
	char name[128];

	if (lo)
		snprintf(name, sizeof(name), "--%s", lo->name);
	else if (optopt > 0 && optopt < 256)
		snprintf(name, sizeof(name), "-%c", optopt);
	else
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="),
			 arg);
	if (c == ':')
		fprintf(stderr, "%s: option '%s' needs a value (%s --help says what it takes)\n",
			tool, name, tool);
	else if (lo)
		/* getopt_long() says '?' with optopt set for --flag=value. */
		fprintf(stderr, "%s: option '%s' takes no value (%s --help says what it takes)\n",
			tool, name, tool);
	else
		fprintf(stderr, "%s: unknown option '%s' (%s --help lists them)\n",
			tool, name, tool);
	exit(2);
}

void pp_cli_check_value(const char *tool, int c, char *const argv[],
			const struct option *longopts)
{
	const struct option *lo;
	const char *word;
	char name[128];

	/* The value came in a word of its own only if it is that word. */
	if (c == '?' || c == ':' || !optarg || optind < 2 ||
	    optarg != argv[optind - 1])
		return;
	if (strncmp(optarg, "--", 2) &&
	    !(optarg[0] == '-' && isalpha((unsigned char)optarg[1])))
		return;
	word = argv[optind - 2];
	lo = long_option(word, c, longopts);
	if (lo)
		snprintf(name, sizeof(name), "--%s", lo->name);
	else if (c > 0 && c < 256)
		snprintf(name, sizeof(name), "-%c", c);
	else
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(word, "="),
			 word);
	fprintf(stderr, "%s: option '%s' needs a value, not the option '%s' (give it its value right after it; %s --help says what it takes)\n",
		tool, name, optarg, tool);
	exit(2);
}

int pp_cli_getopt(const struct pp_cli_opts *o, int argc, char *argv[])
{
	/* ':' first: getopt reports a missing value as ':', not '?', and
	 * prints nothing itself (opterr 0); pp_cli_bad_option() does. The
	 * longest now, pp-hugepages', takes 18 of the 64 bytes. */
	char shortopts[64];
	int c;

	snprintf(shortopts, sizeof(shortopts), ":%shV",
		 o->shortopts ? o->shortopts : "");
	opterr = 0;
	c = getopt_long(argc, argv, shortopts, o->longopts, NULL);
	if (c == -1)
		return -1;
	pp_cli_check_value(o->tool, c, argv, o->longopts);
	switch (c) {
	case 'h':
		o->usage(stdout);
		exit(fflush(stdout) || ferror(stdout) ? 1 : 0);
	case 'V':
		pp_cli_print_version(o->version_of ? o->version_of : o->tool);
		exit(0);
	case '?':
	case ':':
		pp_cli_bad_option(o->tool, c, argv, o->longopts);
	default:
		return c;
	}
}

void pp_cli_no_operands(const struct pp_cli_opts *o, int argc,
			char *argv[])
{
	if (optind < argc)
		pp_cli_usage_error(o->tool, "unexpected argument '%s'",
				   argv[optind]);
}

void pp_cli_usage_error(const char *tool, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (%s --help says what it takes)\n", tool);
	exit(2);
}

/* strto*() skip leading blanks and take a sign: the rules here do not. */
static int plain_start(const char *s, int sign_ok)
{
	if (!s || !*s || isspace((unsigned char)*s))
		return 0;
	return sign_ok || *s != '-';
}

/* Decimal, or hex after 0x: never octal, so that "010" is ten, as a
 * user who pads a count with a zero means it. */
static int number_base(const char *s)
{
	if (*s == '-')
		s++;
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
}

int pp_cli_parse_uint(const char *s, unsigned long long min,
		      unsigned long long max, unsigned long long *v)
{
	unsigned long long x;
	char *end;

	if (!plain_start(s, 0) || *s == '+')
		return -1;
	errno = 0;
	x = strtoull(s, &end, number_base(s));
	if (errno || *end || end == s || x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

int pp_cli_parse_int(const char *s, long long min, long long max,
		     long long *v)
{
	long long x;
	char *end;

	if (!plain_start(s, 1) || *s == '+')
		return -1;
	errno = 0;
	x = strtoll(s, &end, number_base(s));
	if (errno || *end || end == s || x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

int pp_cli_parse_double(const char *s, double min, double max, double *v)
{
	double x;
	char *end;

	if (!plain_start(s, 1) || *s == '+')
		return -1;
	errno = 0;
	x = strtod(s, &end);
	if (errno || *end || end == s || !isfinite(x) || x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

unsigned long long pp_cli_uint(const char *tool, const char *opt,
			       const char *s, unsigned long long min,
			       unsigned long long max)
{
	unsigned long long v;

	if (pp_cli_parse_uint(s, min, max, &v)) {
		fprintf(stderr, "%s: %s takes a whole number from %llu to %llu, not '%s'\n",
			tool, opt, min, max, s);
		exit(2);
	}
	return v;
}

long long pp_cli_int(const char *tool, const char *opt, const char *s,
		     long long min, long long max)
{
	long long v;

	if (pp_cli_parse_int(s, min, max, &v)) {
		fprintf(stderr, "%s: %s takes a whole number from %lld to %lld, not '%s'\n",
			tool, opt, min, max, s);
		exit(2);
	}
	return v;
}

double pp_cli_double(const char *tool, const char *opt, const char *s,
		     double min, double max)
{
	double v;

	if (pp_cli_parse_double(s, min, max, &v)) {
		fprintf(stderr, "%s: %s takes a number from %g to %g, not '%s'\n",
			tool, opt, min, max, s);
		exit(2);
	}
	return v;
}

void pp_cli_fits_memory(const char *tool, const char *opt,
			unsigned long long bytes)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return;
	while (!kb && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) != 1)
			kb = 0;
	fclose(f);
	if (!kb || bytes / 1024 <= kb)
		return;
	fprintf(stderr, "%s: %s asks for %llu MiB, more than the %llu MiB of memory this machine has (MemTotal in /proc/meminfo): ask for less\n",
		tool, opt, bytes >> 20, kb >> 10);
	exit(2);
}

static long hugepages_2m(const char *leaf)
{
	char path[96];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-2048kB/%s",
		 leaf);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int pp_cli_hugepage_hint(const char *tool, unsigned long need_mb)
{
	long need = (long)((need_mb + 1) / 2), nr = hugepages_2m("nr_hugepages");
	long avail = hugepages_2m("free_hugepages");

	if (nr < 0 || avail < 0 || avail >= need)
		return 0;
	fprintf(stderr, "%s: %ld of the %ld 2 MiB hugepages it needs are free: reserve %ld more with pp-hugepages -r %ld --pages\n",
		tool, avail, need, need - avail, nr + need - avail);
	return 1;
}

int pp_cli_parse_cpus(const char *s, cpu_set_t *set)
{
	const char *p = s;

	CPU_ZERO(set);
	if (!s || !*s)
		return -1;
	for (;;) {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*p))
			return -1;
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -1;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (lo > hi || hi >= CPU_SETSIZE)
			return -1;
		for (unsigned long c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (!*p)
			break;
		if (*p++ != ',')
			return -1;
	}
	return CPU_COUNT(set);
}

void pp_cli_json_writable(const char *tool, const char *path)
{
	struct stat st;
	int fd, err = 0;

	if (!strcmp(path, "-"))
		return;
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			err = EISDIR;
		else if (access(path, W_OK))
			err = errno;
	} else {
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0 && errno == ENOENT) {
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				  0666);
			if (fd >= 0)
				unlink(path);
		}
		if (fd < 0)
			err = errno;
		else
			close(fd);
	}
	if (err) {
		fprintf(stderr, "%s: --json %s: cannot write it (%s): give a file in a directory that exists and that you may write to, or - for stdout\n",
			tool, path, strerror(err));
		exit(2);
	}
}

FILE *pp_cli_json_open(const char *path)
{
	return strcmp(path, "-") ? fopen(path, "w") : stdout;
}

int pp_cli_json_close(FILE *f)
{
	if (f == stdout)
		return fflush(f) || ferror(f) ? -1 : 0;
	if (ferror(f)) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

void pp_cli_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void cpu_model(char *buf, size_t len)
{
	char line[1024];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && !strncmp(line, "model name", 10)) {
			size_t n;

			snprintf(buf, len, "%s", colon + 1 + (colon[1] == ' '));
			n = strlen(buf);
			while (n && isspace((unsigned char)buf[n - 1]))
				buf[--n] = '\0';
			break;
		}
	}
	fclose(f);
}

void pp_cli_json_ident(FILE *f, const char *tool)
{
	struct utsname u;
	char date[32], model[256];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	cpu_model(model, sizeof(model));
	fprintf(f, "\"tool\":");
	pp_cli_json_str(f, tool);
	fprintf(f, ",\"version\":");
	pp_cli_json_str(f, pp_cli_version);
	fprintf(f, ",\"commit\":");
	pp_cli_json_str(f, pp_cli_commit);
	fprintf(f, ",\"date\":\"%s\",\"machine\":{\"arch\":", date);
	pp_cli_json_str(f, u.machine);
	fprintf(f, ",\"host\":");
	pp_cli_json_str(f, u.nodename);
	fprintf(f, ",\"kernel\":");
	pp_cli_json_str(f, u.release);
	fprintf(f, ",\"cpu_model\":");
	pp_cli_json_str(f, model);
	fprintf(f, ",\"cores\":%ld},", sysconf(_SC_NPROCESSORS_ONLN));
}
