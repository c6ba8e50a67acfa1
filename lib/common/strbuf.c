/* SPDX-License-Identifier: BSD-3-Clause */
/* strbuf.c - appending to a caller's buffer as snprintf does (pp_strbuf.h). */
#include <stdarg.h>
#include <stdio.h>

#include "pp_strbuf.h"

void pp_strbuf_printf(struct pp_strbuf *b, const char *fmt, ...)
{
	size_t room;
	char *tail = pp_strbuf_tail(b, &room);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tail, room, fmt, ap);
	va_end(ap);
	pp_strbuf_advance(b, n);
}
