/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_common.h - what every pagepool header shares: the error rule, the log
 * callback, and the few macros the inline fast paths need.
 *
 * The error rule (doc/errors.md says it at length):
 *   - constructors return NULL and set errno;
 *   - control calls return 0 or -errno;
 *   - data-path calls return counts (or NULL) and never touch errno;
 *   - destroying something still in use returns -EBUSY.
 * The library never aborts, never exits and never prints to stdout; it
 * reports through the log callback below, whose default writes errors and
 * warnings to stderr.
 */
#ifndef PAGEPOOL_PP_COMMON_H
#define PAGEPOOL_PP_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * PP_API marks what the shared libraries export: the library is built with
 * hidden visibility, so a function no installed header declares with it
 * stays internal (tests/consumer compares the two sets).
 */
#define PP_API __attribute__((visibility("default")))

#define PP_CACHE_LINE 64

#define PP_LIKELY(x) __builtin_expect(!!(x), 1)
#define PP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Order-0 pages are 4 KiB (doc/design.md decision 3). */
#define PP_PAGE_SHIFT 12
#define PP_PAGE_SIZE (1UL << PP_PAGE_SHIFT)

enum pp_log_level {
	PP_LOG_ERR = 0,
	PP_LOG_WARN = 1,
	PP_LOG_INFO = 2,
	PP_LOG_DEBUG = 3,
};

/*
 * A log handler receives one complete message, without a trailing newline.
 * It may be called from any thread, concurrently.
 */
typedef void (*pp_log_fn)(enum pp_log_level level, const char *msg, void *ctx);

/*
 * pp_log_set_handler - route the library's messages to @fn (NULL restores
 * the default, which prints ERR and WARN to stderr).
 * @max_level: messages above this level are not formatted at all.
 * Process-wide, like libbpf_set_print(); call it before creating objects.
 */
PP_API void pp_log_set_handler(pp_log_fn fn, void *ctx,
			       enum pp_log_level max_level);

/*
 * pp_log - send one message (printf format, no trailing newline) through
 * the handler: the library's own messages and the built-in drivers' go
 * this way, and an application or a driver of its own may too, so the
 * operator reads one stream. Levels above the handler's max are dropped
 * before formatting. Any thread.
 */
__attribute__((format(printf, 2, 3)))
PP_API void pp_log(enum pp_log_level level, const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_COMMON_H */
