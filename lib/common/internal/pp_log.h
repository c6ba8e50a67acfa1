/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_log.h - the library's only way to say something (never stdout).
 * Messages are one line, no trailing newline, and tell the operator what
 * to do where there is something to do.
 */
#ifndef PP_INTERNAL_LOG_H
#define PP_INTERNAL_LOG_H

#include <pagepool/pp_common.h>

/* pp_log() itself is public (pp_common.h): the drivers' library logs
 * through libpagepool's handler. */
#define PP_ERR(...) pp_log(PP_LOG_ERR, __VA_ARGS__)
#define PP_WARN(...) pp_log(PP_LOG_WARN, __VA_ARGS__)
#define PP_INFO(...) pp_log(PP_LOG_INFO, __VA_ARGS__)
#define PP_DEBUG_LOG(...) pp_log(PP_LOG_DEBUG, __VA_ARGS__)

#endif /* PP_INTERNAL_LOG_H */
