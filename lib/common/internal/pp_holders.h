/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_holders.h - what lib/page_pool's reports of where pages are
 * (pp_where.h) need from the ports, which are lib/net's, above it: a
 * port's name for a holder code, and the pages that drivers' rings hold
 * without a stamp. lib/net sets both hooks when it opens its first port
 * (as lib/telemetry does for pp_unregister.h); without them a port is
 * named by its number and no ring is read.
 */
#ifndef PP_INTERNAL_HOLDERS_H
#define PP_INTERNAL_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copy the name of the port numbered @id (open, or closed and its
 * number not reused: *@open says which) into @buf; 0, or -ENODEV. */
typedef int (*pp_port_name_fn)(unsigned int id, char *buf, size_t len,
			       bool *open);

void pp_port_name_hook_set(pp_port_name_fn fn);

/* The name of port @id into @buf, as the hook gives it; else "#<id>",
 * *@open false. */
void pp_holder_port_name(unsigned int id, char *buf, size_t len, bool *open);

/*
 * "app_rx of port veth0, queue 0", "pool", "app (taken from the pool, no
 * holder recorded)": @code in words into @buf.
 */
void pp_holder_describe(uint32_t code, char *buf, size_t len);

/*
 * The pages in drivers' rings that carry no stamp of their own
 * (pp_net_driver_ops.ring_pages): @fn(page, holder code, @arg) for each.
 * The page pointers come from racy reads of rings that are moving: use
 * them only as keys, never dereference them.
 */
struct pp_page;
typedef void (*pp_ring_page_fn)(const struct pp_page *page, uint32_t code,
				void *arg);
typedef void (*pp_ring_pages_fn)(pp_ring_page_fn fn, void *arg);

void pp_ring_pages_hook_set(pp_ring_pages_fn fn);
void pp_ring_pages(pp_ring_page_fn fn, void *arg);

#endif /* PP_INTERNAL_HOLDERS_H */
