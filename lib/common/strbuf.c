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

void pp_strbuf_json_string(struct pp_strbuf *b, const char *s)
{
	pp_strbuf_printf(b, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			pp_strbuf_printf(b, "\\%c", ch);
		else if (ch < 0x20)
			pp_strbuf_printf(b, "\\u%04x", ch);
		else
			pp_strbuf_printf(b, "%c", ch);
	}
	pp_strbuf_printf(b, "\"");
}
