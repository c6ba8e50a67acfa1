/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e1000e_xstats.c - the 82574's statistics registers for telemetry's
 * /ethdev/xstats (pp_net_driver_ops.xstats), the MAC for /ethdev/info,
 * and pp_e1000e_stats(). The registers clear on read (10.2.7), so two
 * readers would steal each other's counts: every read goes through
 * e1000e_hw_stats_fold(), which adds them to totals since the probe under
 * the port's hw_lock, and pp_e1000e_stats() reports the totals' growth
 * since its own last call, as it did when it read the registers itself.
 * The data path never reads them; the telemetry thread may at any time
 * while the port is listed (the registers stay mapped until remove()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "e1000e_priv.h"

static const uint32_t hw_reg[E1000E_HW_NR] = {
	[E1000E_HW_GPRC] = E1000_GPRC,     [E1000E_HW_GPTC] = E1000_GPTC,
	[E1000E_HW_MPC] = E1000_MPC,       [E1000E_HW_CRCERRS] = E1000_CRCERRS,
	[E1000E_HW_RNBC] = E1000_RNBC,     [E1000E_HW_TPR] = E1000_TPR,
};

/* The names of DPDK's e1000 drivers where one exists. */
static const char *const hw_name[E1000E_HW_NR] = {
	[E1000E_HW_GPRC] = "rx_hw_good_packets",
	[E1000E_HW_GPTC] = "tx_hw_good_packets",
	[E1000E_HW_MPC] = "rx_missed_packets",     /* no descriptor free */
	[E1000E_HW_CRCERRS] = "rx_crc_errors",
	[E1000E_HW_RNBC] = "rx_no_buffers",        /* ring empty on arrival */
	[E1000E_HW_TPR] = "rx_total_packets",
};

/* Under ep->hw_lock. */
static void fold(struct e1000e_port *ep)
{
	for (unsigned int i = 0; i < E1000E_HW_NR; i++)
		ep->hw_total[i] += e1000_read(ep->regs, hw_reg[i]);
}

void e1000e_hw_stats_delta(struct e1000e_port *ep, uint64_t d[E1000E_HW_NR])
{
	pthread_mutex_lock(&ep->hw_lock);
	fold(ep);
	for (unsigned int i = 0; i < E1000E_HW_NR; i++) {
		d[i] = ep->hw_total[i] - ep->hw_seen[i];
		ep->hw_seen[i] = ep->hw_total[i];
	}
	pthread_mutex_unlock(&ep->hw_lock);
}

int e1000e_xstats(struct pp_port *port, struct pp_net_xstat *out,
		  unsigned int n)
{
	struct e1000e_port *ep = port->priv;
	uint64_t t[E1000E_HW_NR];

	pthread_mutex_lock(&ep->hw_lock);
	fold(ep);
	memcpy(t, ep->hw_total, sizeof(t));
	pthread_mutex_unlock(&ep->hw_lock);
	for (unsigned int i = 0; i < E1000E_HW_NR && i < n; i++) {
		snprintf(out[i].name, sizeof(out[i].name), "%s", hw_name[i]);
		out[i].value = t[i];
	}
	return E1000E_HW_NR;
}

int e1000e_mac_addr(struct pp_port *port, uint8_t mac[6])
{
	const struct e1000e_port *ep = port->priv;

	memcpy(mac, ep->mac, 6);
	return 0;
}
