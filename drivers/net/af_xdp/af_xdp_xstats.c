/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp_xstats.c - the driver's own counters for telemetry's
 * /ethdev/xstats (pp_net_driver_ops.xstats) and the interface's MAC for
 * /ethdev/info: the kernel's XDP_STATISTICS of every queue's socket,
 * summed, under the kernel's names (struct xdp_statistics), then the
 * descriptors the driver itself refused. Called from the telemetry
 * thread while the port is listed (its sockets open): getsockopt() and
 * ioctl() take the kernel's locks, the driver's counters are read with
 * relaxed loads.
 */
#include <errno.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "af_xdp_ctl_priv.h"
#include "af_xdp_priv.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

int af_xdp_xstats(const struct xdp_queue *q, unsigned int nr,
		  struct pp_net_xstat *out, unsigned int n)
{
	/* The kernel's six (Linux 5.9 added the last three; an older
	 * kernel's shorter reply leaves them 0). */
	uint64_t k[6] = { 0 };
	uint64_t bad_desc = 0, bad_chain = 0, bad_comp = 0;
	unsigned int i = 0;

	for (unsigned int j = 0; j < nr; j++) {
		struct xdp_statistics st;
		socklen_t len = sizeof(st);

		memset(&st, 0, sizeof(st));
		if (q[j].fd >= 0 &&
		    !getsockopt(q[j].fd, SOL_XDP, XDP_STATISTICS, &st, &len)) {
			k[0] += st.rx_dropped;
			k[1] += st.rx_invalid_descs;
			k[2] += st.tx_invalid_descs;
			k[3] += st.rx_ring_full;
			k[4] += st.rx_fill_ring_empty_descs;
			k[5] += st.tx_ring_empty_descs;
		}
		bad_desc += ld(&q[j].bad_desc);
		bad_chain += ld(&q[j].bad_chain);
		bad_comp += ld(&q[j].bad_comp);
	}
	pp_net_xstat_put(out, n, &i, "rx_dropped", k[0]);
	pp_net_xstat_put(out, n, &i, "rx_invalid_descs", k[1]);
	pp_net_xstat_put(out, n, &i, "tx_invalid_descs", k[2]);
	pp_net_xstat_put(out, n, &i, "rx_ring_full", k[3]);
	pp_net_xstat_put(out, n, &i, "rx_fill_ring_empty_descs", k[4]);
	pp_net_xstat_put(out, n, &i, "tx_ring_empty_descs", k[5]);
	/* Refused by the driver's checks (doc/af_xdp.md): RX descriptors
	 * outside the UMEM, RX chains, completions of no frame sent. */
	pp_net_xstat_put(out, n, &i, "rx_bad_descs", bad_desc);
	pp_net_xstat_put(out, n, &i, "rx_bad_chains", bad_chain);
	pp_net_xstat_put(out, n, &i, "tx_bad_completions", bad_comp);
	return (int)i;
}

int af_xdp_mac_addr(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret = -ENODATA;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
		ret = 0;
	}
	close(fd);
	return ret;
}
