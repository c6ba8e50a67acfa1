/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_cli_root.c - the fake root of the system tools' tests: see
 * pp_cli_root.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_cli_root.h"

const char *pp_cli_root = "";

int pp_cli_root_set(const char *tool, const char *env)
{
	const char *r = getenv(env);

	if (!r || !r[0])
		return 0;
	if (r[0] != '/' || strlen(r) > PP_CLI_ROOT_MAX) {
		fprintf(stderr, "%s: %s must be an absolute path of at most %d bytes; it is for tests only: unset it to work on this machine\n",
			tool, env, PP_CLI_ROOT_MAX);
		return -EINVAL;
	}
	pp_cli_root = r;
	return 0;
}

void pp_cli_root_path(char *buf, const char *fmt, ...)
{
	size_t n = strlen(pp_cli_root);
	va_list ap;
	int m;

	memcpy(buf, pp_cli_root, n);
	va_start(ap, fmt);
	m = vsnprintf(buf + n, PATH_MAX - n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= PATH_MAX - n)
		buf[0] = '\0';
}
