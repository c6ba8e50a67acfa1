/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_port_json.h - what the layers above lib/net may use beyond the public
 * headers: a port's statistics as JSON under a name the caller gives, for
 * lib/telemetry, which answers /pagepool/port,NAME with the NAME that was
 * asked (a port may be registered under a name other than its own).
 */
#ifndef PP_INTERNAL_PORT_JSON_H
#define PP_INTERNAL_PORT_JSON_H

#include <stddef.h>

struct pp_port;

/*
 * pp_port_stats_json_as - pp_port_stats_json() with @name as its "name",
 * written as it is: give a name that needs no JSON escaping (telemetry's
 * registered names do not). The same return, snprintf's length.
 * Context: any thread, as pp_port_stats_json().
 */
int pp_port_stats_json_as(const struct pp_port *port, const char *name,
			  char *buf, size_t len);

#endif /* PP_INTERNAL_PORT_JSON_H */
