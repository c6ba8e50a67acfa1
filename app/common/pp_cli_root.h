/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_cli_root.h - the fake root the system tools run under in their
 * tests: pp-devbind and pp-hugepages read and write /sys, /proc and /run,
 * and name every such file through pp_cli_root_path(), so that a test can
 * point them at a tree of its own (tests/devbind, tests/hugepages) with
 * an environment variable, PP_DEVBIND_ROOT or PP_HUGEPAGES_ROOT.
 *
 * For tests only: nothing outside a test sets the variable, and without
 * it every path is the machine's own.
 */
#ifndef PP_CLI_ROOT_H
#define PP_CLI_ROOT_H

/* The longest root: leaves PATH_MAX room for every path below it. */
#define PP_CLI_ROOT_MAX 1024

/* "" (the machine), or the directory that stands in for /. */
extern const char *pp_cli_root;

/*
 * Take the root from environment variable @env of program @tool, once,
 * before any file is named. Unset or empty: the machine. Returns 0, or
 * -EINVAL, said on stderr, when it is not an absolute path of at most
 * PP_CLI_ROOT_MAX bytes (the program then exits 2).
 */
int pp_cli_root_set(const char *tool, const char *env);

/*
 * @fmt under the root, into @buf (PATH_MAX bytes). A path that does not
 * fit is left empty, which fails to open (ENOENT) rather than naming a
 * shorter path.
 */
void pp_cli_root_path(char *buf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* PP_CLI_ROOT_H */
