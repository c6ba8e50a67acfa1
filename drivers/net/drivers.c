/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers.c - the built-in driver table and pp_port_open() over it: the
 * role DPDK's vdev bus plays. A static table, not constructors: what is
 * built in is visible in one place, and nothing runs before main().
 */
#include <pagepool/pp_net_driver.h>

#include "drivers.h"

static const struct pp_net_driver *const builtin[] = {
	&pp_net_null_driver,
	&pp_net_veth_driver,
	NULL,
};

struct pp_port *pp_port_open(const char *devstr,
			     const struct pp_port_conf *conf)
{
	return pp_net_port_open_table(builtin, devstr, conf);
}
