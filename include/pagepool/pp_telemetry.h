/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_telemetry.h - live statistics from outside the process, over DPDK's
 * telemetry v2 protocol (doc/telemetry.md): a SOCK_SEQPACKET Unix socket
 * at <runtime dir>/dpdk/<prefix>/dpdk_telemetry.v2, where DPDK's
 * usertools/dpdk-telemetry.py -f <prefix> looks for it.
 *
 * The program registers what it wants reported (allocators, pools, ports,
 * each under a name) and starts the server thread. Commands:
 *
 *   /  /help,<cmd>  /info
 *   /ethdev/list  /ethdev/info,<id>  /ethdev/stats,<id>  /ethdev/xstats,<id>
 *                          (DPDK 22.11's keys; every open port, by pp_port_id())
 *   /pagepool/allocators   /pagepool/allocator,<name>
 *   /pagepool/pools        /pagepool/pool,<name>
 *   /pagepool/ports        /pagepool/port,<name>
 *
 * Registration, unregistration, start and stop may be called from any
 * thread. A request is answered under the registry's lock, so once
 * pp_telemetry_unregister() returns the server no longer touches the
 * object. pp_pool_destroy(), pp_port_close() (the port, its peer and its
 * pools) and pp_allocator_destroy() (when it frees) unregister the
 * object themselves before they free it, as DPDK's telemetry cannot
 * reach a freed object either; calling pp_telemetry_unregister() first
 * remains allowed.
 */
#ifndef PAGEPOOL_PP_TELEMETRY_H
#define PAGEPOOL_PP_TELEMETRY_H

#include <stddef.h>

#include <pagepool/pp_common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pp_allocator;
struct pp_pool;
struct pp_port;

/* Longest file prefix and registered name, without the NUL. */
#define PP_TELEMETRY_NAME_MAX 63

struct pp_telemetry_opts {
	size_t sz;               /* sizeof(struct pp_telemetry_opts) */
	/* DPDK's file prefix: letters, digits, '_', '-' and '.' (not only
	 * dots). Required: pick one that no DPDK program uses ("rte" is
	 * DPDK's default). */
	const char *prefix;
	/* NULL: DPDK's rule, $RUNTIME_DIRECTORY, else /var/run as root,
	 * else $XDG_RUNTIME_DIR, else /tmp. The socket goes in
	 * <runtime_dir>/dpdk/<prefix>/. */
	const char *runtime_dir;
};

/*
 * pp_telemetry_start - create the socket and start the server thread.
 * The directories are created 0700 where missing and must be real
 * directories owned by this user; the socket is 0600. A socket left at
 * the path by a dead program is replaced; one that answers is not.
 * Returns 0, or -EINVAL (bad options or prefix), -EALREADY (a server
 * runs), -EADDRINUSE (a live program has that prefix), -EEXIST (the path
 * is not a socket), -EPERM (a directory is not ours, or is a symlink),
 * -ENAMETOOLONG, or another -errno, each after a log message.
 */
PP_API int pp_telemetry_start(const struct pp_telemetry_opts *opts);

/*
 * pp_telemetry_socket_path - the path of the running server's socket (what
 * a client connects to; dpdk-telemetry.py -f <prefix> finds it) into
 * @buf of @len bytes. Returns 0, -ENOENT when no server runs, or
 * -ENAMETOOLONG when @len is short (108 bytes always do). Any thread.
 */
PP_API int pp_telemetry_socket_path(char *buf, size_t len);

/*
 * pp_telemetry_stop - stop the thread, close the connections, remove the
 * socket. Registrations stay. Does nothing when no server runs.
 */
PP_API void pp_telemetry_stop(void);

/*
 * Register an object under @name (letters, digits, '_', '-', '.', ':';
 * at most PP_TELEMETRY_NAME_MAX bytes; unique per kind). A port's name
 * NULL means pp_port_name(). Returns 0, or -EINVAL, -EEXIST (name taken
 * or object registered), -ENOSPC (registry full).
 */
PP_API int pp_telemetry_register_allocator(struct pp_allocator *alloc,
					   const char *name);
PP_API int pp_telemetry_register_pool(struct pp_pool *pool, const char *name);
PP_API int pp_telemetry_register_port(struct pp_port *port, const char *name);

/*
 * pp_telemetry_unregister - remove every registration of @obj (an
 * allocator, pool or port). Waits for a request that reads it. Returns
 * how many were removed. The destroy calls run it for their object.
 * Context: not while holding a lock that a statistics call takes.
 */
PP_API int pp_telemetry_unregister(const void *obj);

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_TELEMETRY_H */
