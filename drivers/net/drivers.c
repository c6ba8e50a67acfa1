/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers.c - the built-in driver table and pp_port_open() over it: the
 * role DPDK's vdev bus plays. A static table, not constructors: what is
 * built in is visible in one place, and nothing runs before main().
 */
#include <stdio.h>
#include <string.h>

#include <pagepool/pp_drivers.h>
#include <pagepool/pp_net_driver.h>

#include "drivers.h"

static const struct pp_net_driver *const builtin[] = {
	&pp_net_null_driver,
	&pp_net_veth_driver,
#ifdef PP_HAVE_AF_XDP
	&pp_net_af_xdp_driver,
#endif
#ifdef PP_HAVE_E1000E
	&pp_net_e1000e_driver,
#endif
#ifdef PP_HAVE_VIRTIO_USER
	&pp_net_virtio_user_driver,
#endif
	NULL,
};

/*
 * "DRIVER:IFNAME[,...]" names a kernel interface, which may hold
 * characters a port name may not ('-', '.'): it is rewritten as
 * "DRIVER,iface=IFNAME[,...]" (the af_xdp form, as DPDK's iface= key).
 * "DRIVER:KEY=VALUE[,...]" (virtio_user:path=/run/x.sock) is the key list
 * itself after a ':' instead of a ',': rewritten as "DRIVER,KEY=VALUE...".
 */
static const char *devstr_iface(const char *devstr, char *buf, size_t len)
{
	const char *colon = devstr ? strchr(devstr, ':') : NULL;
	const char *comma = devstr ? strchr(devstr, ',') : NULL;
	const char *eq = devstr ? strchr(devstr, '=') : NULL;
	int n;

	if (!colon || (comma && comma < colon))
		return devstr;
	if (eq && eq > colon && (!comma || eq < comma))
		n = snprintf(buf, len, "%.*s,%s", (int)(colon - devstr),
			     devstr, colon + 1);
	else
		n = snprintf(buf, len, "%.*s,iface=%s", (int)(colon - devstr),
			     devstr, colon + 1);
	return n > 0 && (size_t)n < len ? buf : devstr;
}

struct pp_port *pp_port_open(const char *devstr,
			     const struct pp_port_conf *conf)
{
	char buf[256];

	return pp_net_port_open_table(builtin, devstr_iface(devstr, buf,
							    sizeof(buf)),
				      conf);
}
