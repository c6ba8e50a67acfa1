/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry_ethdev.c - DPDK's /ethdev/list, /ethdev/info, /ethdev/stats
 * and /ethdev/xstats, with DPDK 22.11's keys, value types and order, so
 * that a collector written for DPDK reads pagepool's ports unchanged.
 *
 * Every open port is listed, registered with telemetry or not, as DPDK
 * lists every ethdev. Ports are read only inside pp_port_ids_each/with:
 * the port table's lock is held there, and pp_port_close() takes a port
 * off that list under the lock before its driver is removed and its
 * memory freed (lib/net/port_id.c).
 *
 * The counters (struct eth_sums) map pagepool's per-queue statistics to
 * struct rte_eth_stats:
 *   ipackets, ibytes, opackets, obytes: the queues' packets and bytes.
 *   imissed: the RX queues' drops. A pagepool drop is a frame that was
 *     on the wire (null) or the peer's ring (veth) and was lost before
 *     the program because its queue's pool had no buffer: a packet lost
 *     for want of an RX buffer, which is what DPDK's imissed counts
 *     ("RX packets dropped by the HW because there are no available
 *     buffer").
 *   rx_nombuf: 0. DPDK counts failed buffer allocations there, events
 *     that lose no packet by themselves (the driver retries the refill
 *     and the device counts the misses that follow, in imissed).
 *     pagepool counts no refill failure apart from the loss it causes,
 *     which is already in imissed; counting it again here would make
 *     a collector that adds the two count every loss twice.
 *   ierrors: the RX queues' errors (bad descriptors, frames outside
 *     their buffer, ABORTED or unknown verdicts).
 *   oerrors: the TX queues' errors only: frames the port took and did
 *     not send. A frame a full TX queue refuses is not the port's: in
 *     DPDK rte_eth_tx_burst() leaves it to the caller, no ethdev counter
 *     sees it (testpmd counts it itself, as "TX-dropped"). pagepool's
 *     poll counts those in the TX queues' drops; they are reported in
 *     /ethdev/xstats as tx_full_drops, not in oerrors.
 *   q_errors[q]: RX queue q's drops and errors: DPDK's definition is the
 *     queue's "packets received that are dropped", whatever the reason.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pagepool/pp_net_driver.h>

#include "pp_port_ids.h"
#include "pp_strbuf.h"
#include "telemetry_priv.h"

/* DPDK's RTE_ETHDEV_QUEUE_STAT_CNTRS: the q_* arrays' length and the
 * queues that get per-queue xstats. */
#define ETH_QUEUE_STAT_CNTRS 16

/* DPDK's RTE_ETH_DEV_ATTACHED and RTE_ETH_QUEUE_STATE_STARTED. */
#define ETH_DEV_ATTACHED 1
#define ETH_QUEUE_STATE_STARTED 1
/* DPDK's RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS: the per-queue xstats come
 * from the queue counters, as pagepool's do. */
#define ETH_DEV_AUTOFILL_QUEUE_XSTATS 0x40

struct eth_sums {
	uint64_t ipackets, opackets, ibytes, obytes;
	uint64_t imissed, ierrors, oerrors, rx_nombuf;
	uint64_t tx_full_drops;
	uint64_t xdp_drop, xdp_pass, xdp_tx, xdp_redirect;
	uint64_t q_ipackets[ETH_QUEUE_STAT_CNTRS];
	uint64_t q_opackets[ETH_QUEUE_STAT_CNTRS];
	uint64_t q_ibytes[ETH_QUEUE_STAT_CNTRS];
	uint64_t q_obytes[ETH_QUEUE_STAT_CNTRS];
	uint64_t q_errors[ETH_QUEUE_STAT_CNTRS];
	/* DPDK's rx_qN_errors xstat is q_errors; no TX queue error xstat. */
};

static void eth_sums_read(const struct pp_port *port, struct eth_sums *s)
{
	unsigned int q;

	memset(s, 0, sizeof(*s));
	for (q = 0; q < pp_port_nr_rxq(port); q++) {
		struct pp_rxq_stats r;

		pp_port_rxq_stats(port, q, &r);
		s->ipackets += r.packets;
		s->ibytes += r.bytes;
		s->imissed += r.drops;
		s->ierrors += r.errors;
		s->xdp_drop += r.xdp_drop;
		s->xdp_pass += r.xdp_pass;
		s->xdp_tx += r.xdp_tx;
		s->xdp_redirect += r.xdp_redirect;
		if (q < ETH_QUEUE_STAT_CNTRS) {
			s->q_ipackets[q] = r.packets;
			s->q_ibytes[q] = r.bytes;
			s->q_errors[q] = r.drops + r.errors;
		}
	}
	for (q = 0; q < pp_port_nr_txq(port); q++) {
		struct pp_txq_stats t;

		pp_port_txq_stats(port, q, &t);
		s->opackets += t.packets;
		s->obytes += t.bytes;
		s->oerrors += t.errors;
		s->tx_full_drops += t.drops;
		if (q < ETH_QUEUE_STAT_CNTRS) {
			s->q_opackets[q] = t.packets;
			s->q_obytes[q] = t.bytes;
		}
	}
}

/* ---- the port id parameter ---- */

/*
 * DPDK's handlers take a decimal port id (strtoul, nothing after it) and
 * answer null for anything else or for a port that does not exist. The
 * request's characters are checked already; digits only here.
 */
static int parse_port_id(const char *param, unsigned int *id)
{
	unsigned long v = 0;
	size_t i;

	if (!param[0] || strlen(param) > 9)
		return -EINVAL;
	for (i = 0; param[i]; i++) {
		if (param[i] < '0' || param[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(param[i] - '0');
	}
	*id = (unsigned int)v;
	return 0;
}

/* ---- /ethdev/list ---- */

struct list_ctx {
	struct pp_strbuf *o;
	bool first;
};

static int list_one(struct pp_port *port, void *arg)
{
	struct list_ctx *c = arg;

	pp_strbuf_printf(c->o, "%s%u", c->first ? "" : ",", pp_port_id(port));
	c->first = false;
	return 0;
}

int telemetry_ethdev_list(struct pp_strbuf *o, const char *param)
{
	struct list_ctx c = { o, true };

	(void)param;
	pp_strbuf_printf(o, "[");
	pp_port_ids_each(list_one, &c);
	pp_strbuf_printf(o, "]");
	return 0;
}

/* ---- /ethdev/stats ---- */

static void u64_array(struct pp_strbuf *o, const char *key,
		      const uint64_t *v)
{
	pp_strbuf_printf(o, ",\"%s\":[", key);
	for (unsigned int i = 0; i < ETH_QUEUE_STAT_CNTRS; i++)
		pp_strbuf_printf(o, "%s%llu", i ? "," : "",
				 (unsigned long long)v[i]);
	pp_strbuf_printf(o, "]");
}

static int stats_one(struct pp_port *port, void *arg)
{
	struct pp_strbuf *o = arg;
	struct eth_sums s;

	eth_sums_read(port, &s);
	pp_strbuf_printf(o, "{\"ipackets\":%llu,\"opackets\":%llu,"
			 "\"ibytes\":%llu,\"obytes\":%llu,\"imissed\":%llu,"
			 "\"ierrors\":%llu,\"oerrors\":%llu,"
			 "\"rx_nombuf\":%llu",
			 (unsigned long long)s.ipackets,
			 (unsigned long long)s.opackets,
			 (unsigned long long)s.ibytes,
			 (unsigned long long)s.obytes,
			 (unsigned long long)s.imissed,
			 (unsigned long long)s.ierrors,
			 (unsigned long long)s.oerrors,
			 (unsigned long long)s.rx_nombuf);
	u64_array(o, "q_ipackets", s.q_ipackets);
	u64_array(o, "q_opackets", s.q_opackets);
	u64_array(o, "q_ibytes", s.q_ibytes);
	u64_array(o, "q_obytes", s.q_obytes);
	u64_array(o, "q_errors", s.q_errors);
	pp_strbuf_printf(o, "}");
	return 0;
}

static int with_port(const char *param,
		     int (*fn)(struct pp_port *port, void *arg), void *arg)
{
	unsigned int id;

	if (parse_port_id(param, &id))
		return -EINVAL;
	return pp_port_ids_with(id, fn, arg);
}

int telemetry_ethdev_stats(struct pp_strbuf *o, const char *param)
{
	return with_port(param, stats_one, o);
}

/* ---- /ethdev/info ---- */

static void queue_states(struct pp_strbuf *o, const char *key,
			 unsigned int n)
{
	pp_strbuf_printf(o, ",\"%s\":[", key);
	for (unsigned int i = 0; i < n; i++)
		pp_strbuf_printf(o, "%s%d", i ? "," : "",
				 ETH_QUEUE_STATE_STARTED);
	pp_strbuf_printf(o, "]");
}

/*
 * The keys of DPDK 22.11's eth_dev_handle_port_info(), in its order.
 * What pagepool cannot know, or has not, gets the value DPDK gives a
 * port without it: no promiscuous or all-multicast switch (pagepool's
 * software ports take every frame; the e1000e driver programs its own
 * filters), no LRO, no offloads, no RSS hash functions (0 each).
 */
static int info_one(struct pp_port *port, void *arg)
{
	struct pp_strbuf *o = arg;
	const struct pp_net_driver *drv = port->drv;
	uint8_t mac[6] = { 0 };
	unsigned int mtu = pp_port_mtu(port);
	/* A frame longer than what one RX buffer holds behind the headroom
	 * comes in segments: DPDK's scattered_rx. */
	int scattered = mtu + PP_ETH_OVERHEAD + port->conf.headroom >
			PP_PAGE_SIZE;

	/* No MAC (null, veth): zeros, as DPDK's null PMD before it draws
	 * a random one; the format is DPDK's RTE_ETHER_ADDR_PRT_FMT. */
	if (!drv->ops.mac_addr || drv->ops.mac_addr(port, mac))
		memset(mac, 0, sizeof(mac));
	pp_strbuf_printf(o, "{\"name\":\"%s\",\"state\":%d,"
			 "\"nb_rx_queues\":%u,\"nb_tx_queues\":%u,"
			 "\"port_id\":%u,\"mtu\":%u,",
			 pp_port_name(port), ETH_DEV_ATTACHED,
			 pp_port_nr_rxq(port), pp_port_nr_txq(port),
			 pp_port_id(port), mtu);
	/*
	 * rx_mbuf_size_min: DPDK's smallest RX buffer, headroom included
	 * (2176 for testpmd's mbufs). An RX pool's buffer is a page; a
	 * driver's frag= mode cuts smaller ones, which only the driver
	 * knows, so this is the most a buffer holds.
	 */
	pp_strbuf_printf(o, "\"rx_mbuf_size_min\":%lu,"
			 "\"mac_addr\":\"%02X:%02X:%02X:%02X:%02X:%02X\","
			 "\"promiscuous\":0,\"scattered_rx\":%d,"
			 "\"all_multicast\":0,\"dev_started\":1,\"lro\":0,"
			 "\"dev_configured\":1",
			 (unsigned long)PP_PAGE_SIZE, mac[0], mac[1], mac[2],
			 mac[3], mac[4], mac[5], scattered);
	queue_states(o, "rxq_state", pp_port_nr_rxq(port));
	queue_states(o, "txq_state", pp_port_nr_txq(port));
	/* PP_NUMA_NODE_ANY is -1, DPDK's SOCKET_ID_ANY. */
	pp_strbuf_printf(o, ",\"numa_node\":%d,\"dev_flags\":%d,"
			 "\"rx_offloads\":0,\"tx_offloads\":0,"
			 "\"ethdev_rss_hf\":0}",
			 port->conf.nid, ETH_DEV_AUTOFILL_QUEUE_XSTATS);
	return 0;
}

int telemetry_ethdev_info(struct pp_strbuf *o, const char *param)
{
	return with_port(param, info_one, o);
}

/* ---- /ethdev/xstats ---- */

static void xstat(struct pp_strbuf *o, bool *first, const char *name,
		  uint64_t v)
{
	pp_strbuf_printf(o, "%s\"%s\":%llu", *first ? "" : ",", name,
			 (unsigned long long)v);
	*first = false;
}

static void xstat_q(struct pp_strbuf *o, bool *first, const char *dir,
		    unsigned int q, const char *what, uint64_t v)
{
	char name[PP_NET_XSTAT_NAME_MAX];

	snprintf(name, sizeof(name), "%s_q%u_%s", dir, q, what);
	xstat(o, first, name, v);
}

/* A driver's counter name: what DPDK's drivers use, nothing to escape. */
static bool xstat_name_ok(const char *s)
{
	size_t n = strnlen(s, PP_NET_XSTAT_NAME_MAX);

	if (!n || n == PP_NET_XSTAT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static void driver_xstats(struct pp_port *port, struct pp_strbuf *o,
			  bool *first)
{
	struct pp_net_xstat *x;
	int n;

	if (!port->drv->ops.xstats)
		return;
	x = calloc(PP_NET_XSTATS_MAX, sizeof(*x));
	if (!x)
		return;
	n = port->drv->ops.xstats(port, x, PP_NET_XSTATS_MAX);
	if (n > PP_NET_XSTATS_MAX)
		n = PP_NET_XSTATS_MAX;
	for (int i = 0; i < n; i++)
		if (xstat_name_ok(x[i].name))
			xstat(o, first, x[i].name, x[i].value);
	free(x);
}

/*
 * DPDK's generic xstats first (eth_dev_get_xstats_basic: the totals,
 * then rx_qN_packets/bytes/errors for the first 16 RX queues, then
 * tx_qN_packets/bytes for the first 16 TX queues), then pagepool's own
 * port counters, then the driver's (pp_net_driver_ops.xstats).
 */
static int xstats_one(struct pp_port *port, void *arg)
{
	struct pp_strbuf *o = arg;
	struct eth_sums s;
	bool first = true;
	unsigned int q, nq;

	eth_sums_read(port, &s);
	pp_strbuf_printf(o, "{");
	xstat(o, &first, "rx_good_packets", s.ipackets);
	xstat(o, &first, "tx_good_packets", s.opackets);
	xstat(o, &first, "rx_good_bytes", s.ibytes);
	xstat(o, &first, "tx_good_bytes", s.obytes);
	xstat(o, &first, "rx_missed_errors", s.imissed);
	xstat(o, &first, "rx_errors", s.ierrors);
	xstat(o, &first, "tx_errors", s.oerrors);
	xstat(o, &first, "rx_mbuf_allocation_errors", s.rx_nombuf);
	nq = pp_port_nr_rxq(port);
	for (q = 0; q < nq && q < ETH_QUEUE_STAT_CNTRS; q++) {
		xstat_q(o, &first, "rx", q, "packets", s.q_ipackets[q]);
		xstat_q(o, &first, "rx", q, "bytes", s.q_ibytes[q]);
		xstat_q(o, &first, "rx", q, "errors", s.q_errors[q]);
	}
	nq = pp_port_nr_txq(port);
	for (q = 0; q < nq && q < ETH_QUEUE_STAT_CNTRS; q++) {
		xstat_q(o, &first, "tx", q, "packets", s.q_opackets[q]);
		xstat_q(o, &first, "tx", q, "bytes", s.q_obytes[q]);
	}
	/* pagepool's: refused by a full TX queue (see oerrors above), and
	 * the program's verdicts over all RX queues. */
	xstat(o, &first, "tx_full_drops", s.tx_full_drops);
	xstat(o, &first, "rx_xdp_drop", s.xdp_drop);
	xstat(o, &first, "rx_xdp_pass", s.xdp_pass);
	xstat(o, &first, "rx_xdp_tx", s.xdp_tx);
	xstat(o, &first, "rx_xdp_redirect", s.xdp_redirect);
	driver_xstats(port, o, &first);
	pp_strbuf_printf(o, "}");
	return 0;
}

int telemetry_ethdev_xstats(struct pp_strbuf *o, const char *param)
{
	return with_port(param, xstats_one, o);
}
