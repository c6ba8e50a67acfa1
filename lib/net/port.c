/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port.c - a port's life: open from a device string, its queues and the
 * page_pool of each RX queue, the program and stack settings, close; and
 * the raw rx/tx bursts. The NAPI-style poll is in poll.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "pp_opts.h"
#include "net_priv.h"
#include "pp_os_fault.h"
#include "pp_unregister.h"

__thread char net_thread_marker __attribute__((tls_model("initial-exec")));
__thread struct pp_pool *net_napi_pool
	__attribute__((tls_model("initial-exec")));

/* The 1024 default ring matches a NIC's usual RX descriptor count. */
#define NET_RING_DEFAULT 1024
#define NET_QUEUES_MAX 64

static int conf_fill(const struct pp_port_conf *in, struct pp_port_conf *out,
		     const char *devstr)
{
	/* The first published size: the struct without its tail padding. */
	if (pp_opts_copy(out, in, offsetof(struct pp_port_conf, nid) +
			 sizeof(int), sizeof(*out), "struct pp_port_conf"))
		return -EINVAL;
	if (!out->allocator) {
		PP_ERR("device '%s': pp_port_conf.allocator is required (the RX pools refill from it)",
		       devstr);
		return -EINVAL;
	}
	if (!out->nr_rxq)
		out->nr_rxq = 1;
	if (!out->nr_txq)
		out->nr_txq = out->nr_rxq;
	if (out->nr_rxq > NET_QUEUES_MAX || out->nr_txq > NET_QUEUES_MAX) {
		PP_ERR("device '%s': %u RX / %u TX queues asked, at most %d each",
		       devstr, out->nr_rxq, out->nr_txq, NET_QUEUES_MAX);
		return -EINVAL;
	}
	if (!out->ring_size)
		out->ring_size = NET_RING_DEFAULT;
	if (!out->headroom)
		out->headroom = PP_FRAME_HEADROOM;
	/*
	 * Leave 2 KiB behind the headroom: a full 1518-byte Ethernet frame
	 * plus the cache colour (pp_net_buf_color) must fit in the page.
	 */
	if (out->headroom > PP_PAGE_SIZE - 2048) {
		PP_ERR("device '%s': headroom %u leaves no room for a frame (at most %lu)",
		       devstr, out->headroom, PP_PAGE_SIZE - 2048);
		return -EINVAL;
	}
	if (!out->mtu)
		out->mtu = PP_PORT_MTU_DEFAULT;
	if (out->mtu < PP_PORT_MTU_MIN || out->mtu > PP_PORT_MTU_MAX) {
		PP_ERR("device '%s': MTU %u is out of range: give %d to %d (frames of up to %d bytes)",
		       devstr, out->mtu, PP_PORT_MTU_MIN, PP_PORT_MTU_MAX,
		       PP_FRAME_MAX_PKT);
		return -EINVAL;
	}
	if (out->refill != PP_REFILL_ARRAY && out->refill != PP_REFILL_LIST &&
	    out->refill != PP_REFILL_SINGLE) {
		PP_ERR("device '%s': unknown refill mode %d", devstr,
		       (int)out->refill);
		return -EINVAL;
	}
	return 0;
}

/* Destroy the pools (each on this thread, made owner first). */
static int port_destroy_pools(struct pp_port *port)
{
	int busy = 0;
	unsigned int q;

	for (q = 0; q < port->nr_rxq; q++) {
		struct pp_pool *pool = port->rxq[q].pool;

		if (!pool)
			continue;
		pp_pool_set_owner(pool);
		if (pp_pool_destroy(pool) == -EBUSY)
			busy = -EBUSY;
		port->rxq[q].pool = NULL;
	}
	return busy;
}

int pp_net_port_free(struct pp_port *port)
{
	int ret;

	if (!port)
		return 0;
	ret = port_destroy_pools(port);
	/* After the pools: their leak report names the port by it. */
	net_port_id_drop(port);
	free(port->rxq);
	free(port->txq);
	free(port);
	return ret;
}

static int port_create_pools(struct pp_port *port)
{
	unsigned int q;

	for (q = 0; q < port->nr_rxq; q++) {
		char name[PP_PORT_NAME_MAX + 16];
		struct pp_pool_params pp = {
			.sz = sizeof(pp),
			.allocator = port->allocator,
			.dma = port->conf.dma,
			.flags = port->conf.dma ? PP_POOL_F_DMA_MAP : 0,
			.order = 0,
			.pool_size = port->conf.pool_size,
			.nid = port->conf.nid,
			/* XDP_TX sends what was received: both ways. */
			.dma_dir = PP_DMA_BIDIRECTIONAL,
			.offset = port->conf.headroom,
			.refill = port->conf.refill,
			.name = name,
		};

		/* The pool copies its name. */
		snprintf(name, sizeof(name), "%s-rx%u", port->name, q);

		port->rxq[q].pool = pp_pool_create(&pp);
		if (!port->rxq[q].pool) {
			int err = errno;

			PP_ERR("port %s: cannot create the page_pool of RX queue %u: %s",
			       port->name, q, strerror(err));
			return -err;
		}
		port->rxq[q].owner = net_self();
	}
	return 0;
}

struct pp_port *pp_net_port_create(const struct pp_net_driver *drv,
				   const struct pp_devargs *da,
				   const struct pp_port_conf *conf)
{
	struct pp_port *port;
	unsigned int q;
	int err;

	port = pp_os_calloc(1, sizeof(*port));
	if (!port) {
		PP_ERR("device '%s': out of memory for the port", da->devstr);
		errno = ENOMEM;
		return NULL;
	}
	port->id = PP_PORT_ID_MAX; /* none yet, for the error path */
	if (conf_fill(conf, &port->conf, da->devstr)) {
		err = EINVAL;
		goto err_free_port;
	}
	memcpy(port->name, da->name, sizeof(port->name));
	if (net_port_id_take(port)) {
		err = ENOSPC;
		goto err_free_port;
	}
	port->drv = drv;
	port->rx_burst = drv->ops.rx_burst;
	port->tx_burst = drv->ops.tx_burst;
	port->allocator = port->conf.allocator;
	port->nr_rxq = port->conf.nr_rxq;
	port->nr_txq = port->conf.nr_txq;
	port->rxq = pp_os_aligned_alloc(PP_CACHE_LINE,
					port->nr_rxq * sizeof(*port->rxq));
	port->txq = pp_os_aligned_alloc(PP_CACHE_LINE,
					port->nr_txq * sizeof(*port->txq));
	if (!port->rxq || !port->txq) {
		PP_ERR("device '%s': out of memory for %u RX and %u TX queues",
		       da->devstr, port->nr_rxq, port->nr_txq);
		err = ENOMEM;
		goto err_free_queues;
	}
	memset(port->rxq, 0, port->nr_rxq * sizeof(*port->rxq));
	memset(port->txq, 0, port->nr_txq * sizeof(*port->txq));
	for (q = 0; q < port->nr_rxq; q++) {
		port->rxq[q].port = port;
		port->rxq[q].idx = q;
	}
	for (q = 0; q < port->nr_txq; q++) {
		port->txq[q].port = port;
		port->txq[q].idx = q;
	}
	err = -port_create_pools(port);
	if (err)
		goto err_destroy_pools;
	err = -drv->ops.probe(port, da);
	if (err)
		goto err_destroy_pools;
	net_port_publish(port);
	return port;

err_destroy_pools:
	port_destroy_pools(port);
err_free_queues:
	free(port->rxq);
	free(port->txq);
err_free_port:
	net_port_id_drop(port);
	free(port);
	errno = err;
	return NULL;
}

struct pp_port *pp_net_port_open_table(const struct pp_net_driver *const *table,
				       const char *devstr,
				       const struct pp_port_conf *conf)
{
	const struct pp_net_driver *const *d;
	struct pp_devargs da;
	char known[128] = "";

	if (net_devargs_parse(devstr, &da)) {
		errno = EINVAL;
		return NULL;
	}
	for (d = table; d && *d; d++) {
		if (!strcmp((*d)->name, da.driver))
			break;
		if (strlen(known) + strlen((*d)->name) + 3 < sizeof(known)) {
			if (known[0])
				strcat(known, ", ");
			strcat(known, (*d)->name);
		}
	}
	if (!d || !*d) {
		/* Finish the list of known drivers for the message. */
		PP_ERR("device '%s': unknown driver '%s' (known drivers: %s)",
		       devstr, da.driver, known[0] ? known : "none");
		errno = EINVAL;
		return NULL;
	}
	if (net_devargs_check_keys(&da, *d)) {
		errno = EINVAL;
		return NULL;
	}
	return pp_net_port_create(*d, &da, conf);
}

int pp_port_close(struct pp_port *port)
{
	struct pp_port *peer;
	int ret, ret_peer = 0;

	if (!port)
		return 0;
	peer = port->peer;
	/* Out of telemetry's registry before the drivers stop and the
	 * memory goes (its pools leave it as they are destroyed). */
	pp_unregister_obj(port);
	pp_unregister_obj(peer);
	net_port_unpublish(port);
	net_port_unpublish(peer);
	/*
	 * Both ends' drivers give back what their rings hold before either
	 * end's pools go: a veth ring holds pages of the other end's pools.
	 */
	if (port->drv->ops.remove)
		port->drv->ops.remove(port);
	if (peer && peer->drv->ops.remove)
		peer->drv->ops.remove(peer);
	if (peer) {
		peer->peer = NULL;
		ret_peer = pp_net_port_free(peer);
	}
	ret = pp_net_port_free(port);
	return ret ? ret : ret_peer;
}

unsigned int pp_port_mtu(const struct pp_port *port)
{
	return port->conf.mtu;
}

const char *pp_port_name(const struct pp_port *port)
{
	return port->name;
}

const char *pp_port_driver(const struct pp_port *port)
{
	return port->drv->name;
}

unsigned int pp_port_nr_rxq(const struct pp_port *port)
{
	return port->nr_rxq;
}

unsigned int pp_port_nr_txq(const struct pp_port *port)
{
	return port->nr_txq;
}

struct pp_port *pp_port_peer(const struct pp_port *port)
{
	return port->peer;
}

struct pp_allocator *pp_port_allocator(const struct pp_port *port)
{
	return port->allocator;
}

struct pp_pool *pp_port_rxq_pool(const struct pp_port *port, unsigned int q)
{
	return q < port->nr_rxq ? port->rxq[q].pool : NULL;
}

int pp_port_set_prog(struct pp_port *port, const struct pp_prog *prog)
{
	unsigned int i;

	if (!prog) {
		memset(&port->prog, 0, sizeof(port->prog));
		return 0;
	}
	if (pp_opts_valid(prog, sizeof(*prog), sizeof(*prog),
			  "struct pp_prog"))
		return -EINVAL;
	if (!prog->fn || prog->nr_targets > PP_PROG_MAX_TARGETS) {
		PP_ERR("port %s: bad program (fn must be set, at most %d targets)",
		       port->name, PP_PROG_MAX_TARGETS);
		return -EINVAL;
	}
	for (i = 0; i < prog->nr_targets; i++) {
		if (!prog->targets[i]) {
			PP_ERR("port %s: redirect target %u of the program is NULL",
			       port->name, i);
			return -EINVAL;
		}
	}
	port->prog = *prog;
	return 0;
}

void pp_port_set_stack(struct pp_port *port, pp_stack_fn fn, void *arg)
{
	port->stack_fn = fn;
	port->stack_arg = arg;
}

/* Put back up to PP_NET_BURST frames, some in a pool: pp_frame_put_bulk(). */
static void frame_put_burst(struct pp_allocator *alloc,
			    const struct pp_frame *frames, unsigned int n)
{
	struct pp_page *pages[PP_NET_BURST], *pooled[PP_NET_BURST];
	unsigned int i, nr_pooled = 0;

	for (i = 0; i < n; i++) {
		pages[i] = frames[i].page;
		if (PP_UNLIKELY(pp_page_pool(pages[i]))) {
			pooled[nr_pooled++] = pages[i];
			pages[i] = NULL;
		}
	}
	/* The released whole pages: one thread-cache operation (NULL
	 * entries, the fragments, are skipped). */
	if (PP_LIKELY(nr_pooled < n))
		pp_free_pages_bulk(alloc, pages, n);
	/* Inside a poll's stack call, its own pool's directly. */
	if (nr_pooled)
		pp_net_put_pages(alloc, net_napi_pool, pooled, nr_pooled);
}

void pp_frame_put_bulk_slow(struct pp_allocator *alloc,
			    const struct pp_frame *frames, unsigned int n)
{
	while (n) {
		unsigned int k = n < PP_NET_BURST ? n : PP_NET_BURST;

		frame_put_burst(alloc, frames, k);
		frames += k;
		n -= k;
	}
}

unsigned int pp_port_rx_burst(struct pp_port *port, unsigned int q,
			      struct pp_frame *frames, unsigned int n)
{
	struct pp_rxq *rxq = &port->rxq[q];
	uint64_t bytes = 0, stamp;
	unsigned int got, i, more = 0;

	net_rxq_claim(rxq);
	got = port->rx_burst(rxq, frames, n);
	pp_where_clock_burst(got == n);
	if (PP_UNLIKELY(!got))
		net_rxq_idle(rxq);
	/* The frames are the application's now (pp_where.h). */
	stamp = pp_where_stamp(PP_HOLDER(PP_HOLDER_APP_RX, port->id, q));
	for (i = 0; i < got; i++) {
		bytes += frames[i].len;
		more += frames[i].offset_word_ >> 31;
		pp_page_set_where(frames[i].page, stamp);
	}
	pp_net_stat_add(&rxq->stats.packets, got - more);
	pp_net_stat_add(&rxq->stats.bytes, bytes);
	return got;
}

unsigned int pp_port_tx_burst(struct pp_port *port, unsigned int q,
			      struct pp_frame *frames, unsigned int n)
{
	struct pp_txq *txq = &port->txq[q];
	uint64_t bytes = 0;
	unsigned int sent, i, more = 0;

	pp_where_clock_burst(true);
	sent = port->tx_burst(txq, frames, n);
	for (i = 0; i < sent; i++) {
		bytes += frames[i].len;
		more += frames[i].offset_word_ >> 31;
	}
	pp_net_stat_add(&txq->stats.packets, sent - more);
	pp_net_stat_add(&txq->stats.bytes, bytes);
	return sent;
}

struct pp_arena *pp_net_port_arena(struct pp_port *port, const char *why)
{
	struct pp_page *page;
	struct pp_arena *arena;

	if (pp_allocator_zone_count(port->allocator) != 1) {
		PP_ERR("port %s: %s needs an allocator over exactly one arena (%s)",
		       port->name, port->drv->name, why);
		return NULL;
	}
	page = pp_pool_alloc_pages(port->rxq[0].pool);
	if (!page) {
		PP_ERR("port %s: no page in the allocator; give the arena more memory",
		       port->name);
		return NULL;
	}
	arena = pp_page_arena(port->allocator, page);
	pp_pool_recycle_direct(port->rxq[0].pool, page);
	return arena;
}

void pp_net_put_pages(struct pp_allocator *alloc, struct pp_pool *napi_pool,
		      struct pp_page **pages, unsigned int n)
{
	unsigned int i = 0;

	while (i < n) {
		struct pp_pool *pool = pp_page_pool(pages[i]);
		unsigned int j = i + 1;

		if (pool && pool == napi_pool) {
			/* The poll's own pool: directly, a run in one call. */
			while (j < n && pp_page_pool(pages[j]) == pool)
				j++;
			if (j - i == 1)
				pp_pool_recycle_direct(pool, pages[i]);
			else
				pp_pool_recycle_direct_bulk(pool, &pages[i],
							    j - i);
			i = j;
			continue;
		}
		if (!pool) {
			pp_put_page(alloc, pages[i++]);
			continue;
		}
		/* One ring operation per run of pages of one foreign pool. */
		while (j < n && pp_page_pool(pages[j]) == pool)
			j++;
		pp_pool_put_pages_bulk(pool, &pages[i], j - i);
		i = j;
	}
}
