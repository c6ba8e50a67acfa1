/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c - the log callback. Process-wide by necessity (like libbpf's print
 * hook): messages come from places that have no handle to carry one.
 */
#include <stdio.h>

#include "pp_log.h"

struct log_sink {
	pp_log_fn fn;
	void *ctx;
	enum pp_log_level max_level;
};

static void log_to_stderr(enum pp_log_level level, const char *msg, void *ctx)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };

	(void)ctx;
	fprintf(stderr, "pagepool: %s: %s\n", names[level], msg);
}

/*
 * Read racily by every logger and written by pp_log_set_handler(), which
 * callers make before creating objects; the atomics keep each field whole.
 */
static struct log_sink sink = { log_to_stderr, NULL, PP_LOG_WARN };

void pp_log_set_handler(pp_log_fn fn, void *ctx, enum pp_log_level max_level)
{
	__atomic_store_n(&sink.ctx, ctx, __ATOMIC_RELAXED);
	__atomic_store_n(&sink.max_level, max_level, __ATOMIC_RELAXED);
	__atomic_store_n(&sink.fn, fn ? fn : log_to_stderr, __ATOMIC_RELEASE);
}

void pp_log(enum pp_log_level level, const char *fmt, ...)
{
	pp_log_fn fn = __atomic_load_n(&sink.fn, __ATOMIC_ACQUIRE);
	char msg[512];
	va_list ap;

	if (level > __atomic_load_n(&sink.max_level, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(level, msg, __atomic_load_n(&sink.ctx, __ATOMIC_RELAXED));
}
