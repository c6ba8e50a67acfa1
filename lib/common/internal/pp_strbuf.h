/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_strbuf.h - a caller's buffer filled the way snprintf fills one: what
 * does not fit is cut, and @pos keeps counting past the end, so that a
 * JSON writer returns the length it needed (the *_stats_json calls and
 * the telemetry replies share it).
 */
#ifndef PP_INTERNAL_STRBUF_H
#define PP_INTERNAL_STRBUF_H

#include <stddef.h>

struct pp_strbuf {
	char *buf;
	size_t len;
	size_t pos;        /* bytes written or wanted: > len means cut */
};

/* Append printf output at @b->pos (cut at the end, counted in full). */
__attribute__((format(printf, 2, 3)))
void pp_strbuf_printf(struct pp_strbuf *b, const char *fmt, ...);

/* Append @s as a JSON string: quoted, with '"', '\\' and control
 * characters escaped. */
void pp_strbuf_json_string(struct pp_strbuf *b, const char *s);

/* Where the next bytes go and how many fit (NULL and 0 past the end),
 * for a snprintf-like call whose return goes to pp_strbuf_advance(). */
static inline char *pp_strbuf_tail(const struct pp_strbuf *b, size_t *room)
{
	*room = b->pos < b->len ? b->len - b->pos : 0;
	return *room ? b->buf + b->pos : NULL;
}

static inline void pp_strbuf_advance(struct pp_strbuf *b, int n)
{
	if (n > 0)
		b->pos += (size_t)n;
}

#endif /* PP_INTERNAL_STRBUF_H */
