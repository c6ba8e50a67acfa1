/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio_user_xstats.c - the driver's own counters for telemetry's
 * /ethdev/xstats (pp_net_driver_ops.xstats) and its MAC for
 * /ethdev/info. Sums over the queue pairs (a port may have 128, more
 * than a reply should list one by one): used entries refused (an id,
 * length or count the back-end got wrong, each also a queue error) and
 * kicks, per direction, and whether a back-end is connected now. Called
 * from the telemetry thread while the port is listed: the rings and
 * counters live until remove(); they are read with relaxed loads.
 */
#include <stdio.h>
#include <string.h>

#include "virtio_user_priv.h"

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

int virtio_user_xstats(struct pp_port *port, struct pp_net_xstat *out,
		       unsigned int n)
{
	const struct vu_port *vp = port->priv;
	uint64_t bad[2] = { 0, 0 }, kicks[2] = { 0, 0 };
	unsigned int i = 0;

	/* vq[2q] is RX queue q's ring, vq[2q + 1] TX queue q's. */
	for (unsigned int q = 0; q < 2 * vp->nr_qp; q++) {
		bad[q & 1] += ld(&vp->vq[q].bad_used);
		kicks[q & 1] += ld(&vp->vq[q].kicks);
	}
	pp_net_xstat_put(out, n, &i, "rx_bad_used", bad[0]);
	pp_net_xstat_put(out, n, &i, "tx_bad_used", bad[1]);
	pp_net_xstat_put(out, n, &i, "rx_kicks", kicks[0]);
	pp_net_xstat_put(out, n, &i, "tx_kicks", kicks[1]);
	/* The reconnect thread sets sock to -1 while the back-end is away. */
	pp_net_xstat_put(out, n, &i, "backend_connected",
	    __atomic_load_n(&vp->sock, __ATOMIC_RELAXED) >= 0);
	return (int)i;
}

int virtio_user_mac_addr(struct pp_port *port, uint8_t mac[6])
{
	const struct vu_port *vp = port->priv;

	memcpy(mac, vp->mac, 6);
	return 0;
}
