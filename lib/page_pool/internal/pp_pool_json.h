/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_pool_json.h - a pool's statistics as JSON under a name the caller
 * gives. lib/telemetry answers /pagepool/pool,NAME with the NAME that was
 * asked, as DPDK's /mempool/info,NAME does: a pool is registered under a
 * name of the program's choosing, which need not be its own.
 */
#ifndef PP_INTERNAL_POOL_JSON_H
#define PP_INTERNAL_POOL_JSON_H

#include <stddef.h>

struct pp_pool;

/*
 * pp_pool_stats_json_as - pp_pool_stats_json() with @name as its "name"
 * (escaped as needed); the same return, snprintf's length.
 * Context: any thread, as pp_pool_stats_json().
 */
int pp_pool_stats_json_as(struct pp_pool *pool, const char *name, char *buf,
			  size_t len);

#endif /* PP_INTERNAL_POOL_JSON_H */
