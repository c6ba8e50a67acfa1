/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.c - per-queue statistics: read through the API or as JSON. Each
 * counter has one writer (the queue's thread) and is read with relaxed
 * loads; a snapshot taken while traffic runs is approximate, never torn.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "net_priv.h"
#include "pp_port_json.h"

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

int pp_port_rxq_stats(const struct pp_port *port, unsigned int q,
		      struct pp_rxq_stats *out)
{
	const struct pp_rxq_stats *s;

	if (q >= port->nr_rxq)
		return -EINVAL;
	s = &port->rxq[q].stats;
	out->packets = ld(&s->packets);
	out->bytes = ld(&s->bytes);
	out->drops = ld(&s->drops);
	out->errors = ld(&s->errors);
	out->xdp_drop = ld(&s->xdp_drop);
	out->xdp_pass = ld(&s->xdp_pass);
	out->xdp_tx = ld(&s->xdp_tx);
	out->xdp_redirect = ld(&s->xdp_redirect);
	return 0;
}

int pp_port_txq_stats(const struct pp_port *port, unsigned int q,
		      struct pp_txq_stats *out)
{
	const struct pp_txq_stats *s;

	if (q >= port->nr_txq)
		return -EINVAL;
	s = &port->txq[q].stats;
	out->packets = ld(&s->packets);
	out->bytes = ld(&s->bytes);
	out->drops = ld(&s->drops);
	out->errors = ld(&s->errors);
	return 0;
}

/* snprintf into buf at *off, keeping the would-be length like snprintf. */
#define EMIT(...)                                                          \
	do {                                                               \
		size_t room_ = *off < len ? len - *off : 0;                \
		*off += (size_t)snprintf(room_ ? buf + *off : NULL, room_, \
					 __VA_ARGS__);                     \
	} while (0)

static void rxq_json(const struct pp_port *port, unsigned int q, char *buf,
		     size_t len, size_t *off)
{
	struct pp_rxq_stats s;
	size_t room;

	pp_port_rxq_stats(port, q, &s);
	EMIT("{\"queue\":%u,\"packets\":%llu,\"bytes\":%llu,\"drops\":%llu,"
	     "\"errors\":%llu,\"xdp_drop\":%llu,\"xdp_pass\":%llu,"
	     "\"xdp_tx\":%llu,\"xdp_redirect\":%llu,\"pool\":",
	     q, (unsigned long long)s.packets, (unsigned long long)s.bytes,
	     (unsigned long long)s.drops, (unsigned long long)s.errors,
	     (unsigned long long)s.xdp_drop, (unsigned long long)s.xdp_pass,
	     (unsigned long long)s.xdp_tx,
	     (unsigned long long)s.xdp_redirect);
	room = *off < len ? len - *off : 0;
	*off += (size_t)pp_pool_stats_json(port->rxq[q].pool,
					   room ? buf + *off : NULL, room);
	EMIT("}");
}

int pp_port_stats_json(const struct pp_port *port, char *buf, size_t len)
{
	return pp_port_stats_json_as(port, port->name, buf, len);
}

int pp_port_stats_json_as(const struct pp_port *port, const char *name,
			  char *buf, size_t len)
{
	size_t o = 0, *off = &o;
	unsigned int q;

	EMIT("{\"name\":\"%s\",\"driver\":\"%s\",\"rxq\":[", name,
	     port->drv->name);
	for (q = 0; q < port->nr_rxq; q++) {
		if (q)
			EMIT(",");
		rxq_json(port, q, buf, len, off);
	}
	EMIT("],\"txq\":[");
	for (q = 0; q < port->nr_txq; q++) {
		struct pp_txq_stats s;

		pp_port_txq_stats(port, q, &s);
		EMIT("%s{\"queue\":%u,\"packets\":%llu,\"bytes\":%llu,"
		     "\"drops\":%llu,\"errors\":%llu}", q ? "," : "", q,
		     (unsigned long long)s.packets,
		     (unsigned long long)s.bytes,
		     (unsigned long long)s.drops,
		     (unsigned long long)s.errors);
	}
	EMIT("]}");
	return (int)o;
}
