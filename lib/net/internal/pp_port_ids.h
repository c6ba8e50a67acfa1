/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_port_ids.h - the open ports by number, for lib/telemetry (DPDK's
 * /ethdev commands) and the holder names of pages. A port is listed
 * from the end of its probe to the start of pp_port_close(), which takes
 * it off the list under the table's lock before its driver is removed
 * and its memory freed; the lock is held while @fn runs, so @fn may read
 * the port and call its driver's xstats and mac_addr ops (not poll it),
 * and must not open or close ports.
 */
#ifndef PP_INTERNAL_PORT_IDS_H
#define PP_INTERNAL_PORT_IDS_H

struct pp_port;

/* Call @fn for each listed port, by increasing id, until it returns
 * non-zero; returns that value or 0. */
int pp_port_ids_each(int (*fn)(struct pp_port *port, void *arg), void *arg);

/* Call @fn for the port numbered @id; returns its value, or -ENODEV
 * when no listed port has that number. */
int pp_port_ids_with(unsigned int id,
		     int (*fn)(struct pp_port *port, void *arg), void *arg);

#endif /* PP_INTERNAL_PORT_IDS_H */
