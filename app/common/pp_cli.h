/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_cli.h - what every installed program's command line shares: the
 * option loop, the version line, strict number parsing, CPU lists, and
 * the fields that open every JSON document (tool, version, commit, date,
 * machine).
 *
 * The rules the programs follow (tests/cli checks them):
 *   -h, --help     usage on stdout, exit 0
 *   -V, --version  "TOOL (pagepool) VERSION (commit C)" on stdout, exit 0
 *   a bad option or value: a message on stderr, nothing on stdout, exit 2;
 *               an unknown option or one without its value in the one
 *               wording of pp_cli_bad_option(), an option given as
 *               another's value in that of pp_cli_check_value()
 *   an operand where the program takes none, or a value that cannot
 *               be: the wording of pp_cli_usage_error()
 *   --json -    the JSON document on stdout (and human text on stderr)
 *
 * pp_cli_getopt() is the one option loop that keeps them; every installed
 * program parses its command line with it.
 */
#ifndef PP_CLI_H
#define PP_CLI_H

#include <getopt.h>
#include <sched.h>
#include <stdio.h>

/* The project version (meson) and the git commit it was built from, or
 * "unknown" when the source was not a git checkout. */
extern const char pp_cli_version[];
extern const char pp_cli_commit[];

/* Print the --version line of @tool on stdout. */
void pp_cli_print_version(const char *tool);

/*
 * A bad option, as getopt_long() returns it when the option string starts
 * with ':' and opterr is 0 (so that getopt prints nothing itself): @c is
 * '?' or ':'. Says so on stderr in the wording every program shares, and
 * exits 2:
 *   TOOL: unknown option 'X' (TOOL --help lists them)
 *   TOOL: option 'X' needs a value (TOOL --help says what it takes)
 *   TOOL: option 'X' takes no value (TOOL --help says what it takes)
 * @longopts is the table getopt_long() was given: it names a long option
 * that was abbreviated, and tells a flag given a value (--flag=1) from an
 * unknown short option.
 */
void pp_cli_bad_option(const char *tool, int c, char *const argv[],
		       const struct option *longopts)
	__attribute__((noreturn));

/*
 * The option loop, written once for every program. A program fills in
 * one struct pp_cli_opts and calls pp_cli_getopt() until it returns -1:
 *
 *	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1)
 *		switch (c) { ...the program's own options... }
 *	pp_cli_no_operands(&cli, argc, argv);
 *
 * @tool        names the program in every message ("pp-bench scale")
 * @version_of  the name on the --version line ("pp-bench" for all its
 *              subcommands); NULL: @tool
 * @shortopts   getopt's short options besides -h and -V ("sb:u"), without
 *              the leading ':'; NULL: none
 * @longopts    getopt_long()'s table; "help" is 'h', "version" is 'V'
 * @usage       writes the help text to the stream it is given
 */
struct pp_cli_opts {
	const char *tool;
	const char *version_of;
	const char *shortopts;
	const struct option *longopts;
	void (*usage)(FILE *f);
};

/*
 * getopt_long() over @argv with the rules above: returns the next option
 * for the caller to handle (its value in optarg), or -1 after the last
 * one (optind then indexes the first operand). Handles the rest itself
 * and does not return: -h/--help (@usage on stdout, exit 0, or 1 when
 * stdout cannot be written), -V/--version (exit 0), an unknown option or
 * a missing value (pp_cli_bad_option()), an option given as another's
 * value (pp_cli_check_value()). getopt keeps its place in globals, so a
 * process parses one command line, once; a subcommand passes its own
 * (argv + 1), as long as nothing called getopt before.
 */
int pp_cli_getopt(const struct pp_cli_opts *o, int argc, char *argv[]);

/* After the last option, for a program that takes no operands: one
 * left is a bad command line (pp_cli_usage_error(), exit 2). */
void pp_cli_no_operands(const struct pp_cli_opts *o, int argc,
			char *argv[]);

/*
 * A command line that cannot run as given, found after getopt (an
 * operand too many, a value out of its range, two options that exclude
 * each other): on stderr, and the program exits 2:
 *   TOOL: MESSAGE (TOOL --help says what it takes)
 */
void pp_cli_usage_error(const char *tool, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/*
 * After getopt_long() returned option @c with its value in optarg: when
 * the value is the word after the option and that word is an option
 * itself ("--json --quick", "--bind --force DEV": getopt takes the next
 * word as the value, whatever it is), says so on stderr and exits 2:
 *   TOOL: option 'X' needs a value, not the option 'Y' (give it its
 *   value right after it; TOOL --help says what it takes)
 * A word is an option when it starts with "--", or with '-' and a letter;
 * "-" (stdout) and negative numbers are values. A value that does start
 * so can still be given in the same word: --json=./--quick. Does nothing
 * for an option without a value, or for '?' and ':'.
 */
void pp_cli_check_value(const char *tool, int c, char *const argv[],
			const struct option *longopts);

/*
 * Strict numbers: the whole of @s is one number in [@min, @max] (decimal,
 * or 0x hex for integers), no sign for unsigned, no trailing text, no
 * overflow. Return 0, or -1 with *@v untouched.
 */
int pp_cli_parse_uint(const char *s, unsigned long long min,
		      unsigned long long max, unsigned long long *v);
int pp_cli_parse_int(const char *s, long long min, long long max,
		     long long *v);
int pp_cli_parse_double(const char *s, double min, double max, double *v);

/* The same, for option @opt of @tool: a bad value is reported on stderr
 * and the program exits 2. */
unsigned long long pp_cli_uint(const char *tool, const char *opt,
			       const char *s, unsigned long long min,
			       unsigned long long max);
long long pp_cli_int(const char *tool, const char *opt, const char *s,
		     long long min, long long max);
double pp_cli_double(const char *tool, const char *opt, const char *s,
		     double min, double max);

/*
 * Option @opt of @tool asks for @bytes of memory (an arena, a table):
 * when that is more than the machine has (MemTotal in /proc/meminfo), it
 * cannot be had, and the kernel would hand the program every free page
 * on the way (a 4 KiB arena is filled page by page) until the OOM killer
 * starts: says so on stderr, with both figures, and the program exits 2.
 * Nothing is checked where /proc/meminfo cannot be read.
 */
void pp_cli_fits_memory(const char *tool, const char *opt,
			unsigned long long bytes);

/*
 * When fewer than @need_mb MiB of 2 MiB hugepages are free (sysfs), a line
 * on stderr that says so and gives the pp-hugepages command that reserves
 * enough: "TOOL: F of the N 2 MiB hugepages it needs are free: reserve K
 * more with pp-hugepages -r T --pages" (-r sets the total, so T is the
 * reservation now plus K). Returns whether it printed one.
 */
int pp_cli_hugepage_hint(const char *tool, unsigned long need_mb);

/* A CPU list as taskset takes it ("2,3", "1-4", "0,2-3"): into @set.
 * Return the number of CPUs, or -1 when @s is malformed. */
int pp_cli_parse_cpus(const char *s, cpu_set_t *set);

/*
 * --json @path of @tool, checked before the run, so that a path that
 * cannot be written costs no benchmark: "-" passes; an existing file is
 * opened for writing without truncating it, a new one created and
 * removed again; anything but a regular file (a FIFO, /dev/stdout) needs
 * only write permission, so that no reader sees an early end. A path that
 * fails is reported on stderr, naming it, and the program exits 2.
 */
void pp_cli_json_writable(const char *tool, const char *path);

/* JSON output: "-" is stdout. pp_cli_json_close() closes a file (not
 * stdout) and returns -1 when a write failed. */
FILE *pp_cli_json_open(const char *path);
int pp_cli_json_close(FILE *f);

/* @s as a JSON string, quotes included. */
void pp_cli_json_str(FILE *f, const char *s);

/* The first members of a document, each followed by a comma:
 * "tool", "version", "commit", "date" (UTC, ISO 8601) and "machine"
 * ({"arch", "host", "kernel", "cpu_model", "cores"}). */
void pp_cli_json_ident(FILE *f, const char *tool);

#endif /* PP_CLI_H */
