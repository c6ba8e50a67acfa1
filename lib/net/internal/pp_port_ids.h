/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_port_ids.h - the open ports by number, for lib/telemetry (DPDK's
 * /ethdev commands) and the holder names of pages. The table's lock is
 * held while @fn runs, and pp_port_close() frees a port only after taking
 * it out of the table under that lock, so @fn may read the port (not
 * poll it) and must not open or close ports.
 */
#ifndef PP_INTERNAL_PORT_IDS_H
#define PP_INTERNAL_PORT_IDS_H

struct pp_port;

/* Call @fn for each open port, by increasing id, until it returns
 * non-zero; returns that value or 0. */
int pp_port_ids_each(int (*fn)(struct pp_port *port, void *arg), void *arg);

/* Call @fn for the port numbered @id; returns its value, or -ENODEV
 * when no port has that number. */
int pp_port_ids_with(unsigned int id,
		     int (*fn)(struct pp_port *port, void *arg), void *arg);

#endif /* PP_INTERNAL_PORT_IDS_H */
