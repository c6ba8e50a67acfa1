/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e1000e_rxtx.c - the e1000e data path: RX refill and receive, TX send and
 * clean, and the two ring helpers probe and remove share with the
 * descriptor-ring fuzzer (tests/fuzz/fuzz_e1000e.c).
 *
 * Why a file of its own: everything here touches only the descriptor
 * rings, the port's pools and the RDT/TDT registers, never PCI or VFIO,
 * so a simulated device in plain memory can drive it exactly as the
 * driver runs it. e1000e.c keeps probe, remove, reset and link. The burst
 * functions are reached through the driver's ops as before; the helpers
 * they call stay static here, so the compiled data path is the same.
 *
 * The trust rules (what is dropped, what is counted) and the ownership of
 * descriptors are described at the top of e1000e.c.
 */
#include <errno.h>
#include <string.h>

#include <pagepool/pp_net_driver.h>

#include "pp_log.h"
#include "e1000e_priv.h"

/* Ethernet header: anything shorter is not a frame. */
#define ETH_HLEN 14
/*
 * Refilled RX descriptors are handed back (an RDT write) in batches of at
 * least this many: every register write is a trap into the device model
 * (a PCIe write on hardware). DPDK's em driver uses the same threshold
 * (rx_free_thresh 32); the device still holds at least 256 - 32 - 1.
 */
#define RX_FREE_THRESH 32

/*
 * The IOVA of @page in this port's domain, 0 when it has none. A page of
 * the port's own RX pool carries it: the pool mapped the page through the
 * same domain. A page of another pool carries the IOVA of that pool's
 * domain, which may be another device's (a forwarder whose ports each
 * have their own VFIO container): handed to this device, it would make
 * the NIC read whatever its own domain has at that address onto the wire.
 * Those pages, and pages of no pool, are looked up in this port's domain
 * (an O(1) lookup), the whole block of 2^order pages the frame may span.
 */
static uint64_t page_iova(struct pp_txq *txq, struct e1000e_port *ep,
			  struct pp_page *page)
{
	uint64_t iova;

	if (PP_LIKELY(pp_page_pool(page) == txq->port->rxq[0].pool))
		return pp_page_dma_addr(page);
	if (pp_dma_map_page(ep->dma, pp_page_address(page), page->order,
			    PP_DMA_BIDIRECTIONAL, &iova))
		return 0;
	return iova;
}

/* Give slot @i a fresh buffer. */
static void rx_fill(struct e1000e_port *ep, unsigned int i,
		    struct pp_page *page)
{
	uint32_t off = pp_net_buf_color(page, ep->headroom, E1000_RX_BUF_LEN);

	pp_page_set_where(page, pp_where_stamp(ep->rx_holder));
	ep->rx_page[i] = page;
	ep->rx_off[i] = off;
	ep->rx_ring[i].addr = pp_page_dma_addr(page) + off + ep->headroom;
	ep->rx_ring[i].status = 0;
}

/* Refilled descriptors go back to the device in batches (RDT). */
static inline void rx_give_back(struct e1000e_port *ep, unsigned int i,
				unsigned int used)
{
	ep->rx_next = i;
	ep->rx_hold += used;
	if (ep->rx_hold >= RX_FREE_THRESH) {
		ep->rx_hold = 0;
		/* Descriptors are written before the device may use them;
		 * RDT is the slot after the last one refilled, minus the
		 * one that stays empty. */
		__atomic_thread_fence(__ATOMIC_RELEASE);
		e1000_write(ep->regs, E1000_RDT, (i - 1) & RING_MASK);
	}
}

/*
 * Multi-buffer RX: at most this many descriptors a call takes, a burst's
 * worth and one refused chain (PP_FRAME_MAX_SEGS + 1), so that a call
 * ends even when the device marks every descriptor done.
 */
#define RX_CHAIN_DESCS (PP_NET_BURST + PP_FRAME_MAX_SEGS + 1)

/* The done descriptors from @i on, at most @max: a run the device wrote
 * back (DD set), which RX takes without another look at DD. */
static inline unsigned int rx_ready(const struct e1000e_port *ep,
				    unsigned int i, unsigned int max)
{
	unsigned int ready;

	for (ready = 0; ready < max; ready++)
		if (!(__atomic_load_n(&ep->rx_ring[(i + ready) & RING_MASK].status,
				      __ATOMIC_RELAXED) & E1000_RXD_STAT_DD))
			break;
	return ready;
}

/*
 * The descriptors of the packet that starts at slot @i, looking at no
 * more than @limit: the done (DD) ones up to and including the first
 * with EOP (*@eop true), or the run of done ones without it (*@eop false:
 * the device is still writing the chain, or, @limit long, lies).
 */
static unsigned int rx_chain_len(const struct e1000e_port *ep, unsigned int i,
				 unsigned int limit, bool *eop)
{
	unsigned int c;

	*eop = false;
	for (c = 0; c < limit; c++) {
		uint8_t st = __atomic_load_n(
			&ep->rx_ring[(i + c) & RING_MASK].status,
			__ATOMIC_RELAXED);

		if (!(st & E1000_RXD_STAT_DD))
			break;
		if (st & E1000_RXD_STAT_EOP) {
			*eop = true;
			return c + 1;
		}
	}
	return c;
}

/*
 * Whether the @c descriptors from slot @i (done, the last with EOP) make
 * a packet to hand out: none has errors, each length lies in its 2048-byte
 * buffer and its page, and the packet is an Ethernet header at least and
 * the MTU's frame at most. Each length is read once, into @lens, which
 * the frames are then made of: the device may write the descriptor
 * again, and what was checked must be what is used. Read after the
 * acquire fence on DD.
 */
static bool rx_chain_ok(const struct e1000e_port *ep, unsigned int i,
			unsigned int c, uint16_t *lens)
{
	uint32_t total = 0;

	for (unsigned int j = 0; j < c; j++) {
		unsigned int s = (i + j) & RING_MASK;
		const struct e1000_rx_desc *d = &ep->rx_ring[s];
		uint16_t len = d->length;

		lens[j] = len;
		if (d->errors || len > E1000_RX_BUF_LEN ||
		    !pp_frame_bounds_ok(ep->rx_page[s], ep->rx_off[s],
					ep->headroom, len))
			return false;
		total += len;
	}
	return total >= ETH_HLEN && total <= ep->rx_max_pkt;
}

/*
 * e1000e_rx_burst() for a port whose MTU needs chains: a packet is a run
 * of done descriptors up to one with EOP, handed out whole as that many
 * frames (.more on all but the last; the first with the headroom, the
 * others starting at their buffer). A chain whose EOP has not come yet
 * stays in the ring, untouched, until it has; one that does not fit in
 * what is left of @n waits there for the next call. Refused, counted once
 * and every buffer recycled: a chain with an error or a bad length
 * anywhere in it (rx_chain_ok()), and one that runs past
 * PP_FRAME_MAX_SEGS descriptors without EOP, whose descriptors up to the
 * EOP that ends it are then dropped as they come (ep->rx_discard). As in
 * the single-buffer loop, a descriptor is only taken when its slot can be
 * refilled.
 */
static __attribute__((noinline)) unsigned int
rx_burst_chain(struct pp_rxq *rxq, struct e1000e_port *ep,
	       struct pp_frame *frames, unsigned int n)
{
	struct pp_page *fresh[RX_CHAIN_DESCS];
	uint16_t lens[PP_FRAME_MAX_SEGS + 1];
	unsigned int k = 0, bad = 0, nr_fresh, used = 0, i = ep->rx_next;
	unsigned int ready, c, j, limit;
	bool eop;

	if (n > PP_NET_BURST)
		n = PP_NET_BURST;
	/* The run of done descriptors, one buffer for each. */
	ready = rx_ready(ep, i, RX_CHAIN_DESCS);
	if (!ready)
		return 0;
	nr_fresh = pp_pool_alloc_bulk(rxq->pool, fresh, ready);
	while (used < nr_fresh) {
		bool take;

		limit = nr_fresh - used < PP_FRAME_MAX_SEGS + 1 ?
				nr_fresh - used : PP_FRAME_MAX_SEGS + 1;
		c = rx_chain_len(ep, i, limit, &eop);
		if (!c || (!eop && c < PP_FRAME_MAX_SEGS + 1))
			break;   /* not all there yet (or no buffer for it) */
		/* Fields are read after DD (7.1.4.1), as in the loop. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!eop) {
			/* Too long: refused, and the rest of it after. */
			take = false;
			bad += !ep->rx_discard;
			ep->rx_discard = true;
		} else if (ep->rx_discard) {
			take = false;   /* the refused chain's end */
			ep->rx_discard = false;
		} else if (!rx_chain_ok(ep, i, c, lens)) {
			take = false;
			bad++;
		} else if (k + c > n) {
			break;   /* whole packets only: the next call's */
		} else {
			take = true;
		}
		for (j = 0; j < c; j++) {
			unsigned int s = (i + j) & RING_MASK;

			if (!take) {
				pp_pool_recycle_direct(rxq->pool,
						       ep->rx_page[s]);
			} else if (!j) {
				frames[k++] = (struct pp_frame){
					.page = ep->rx_page[s],
					.offset = ep->rx_off[s],
					.headroom = ep->headroom,
					.len = lens[j],
					.more = c > 1,
				};
			} else {
				frames[k++] = (struct pp_frame){
					.page = ep->rx_page[s],
					.offset = ep->rx_off[s] + ep->headroom,
					.len = lens[j],
					.more = j + 1 < c,
				};
			}
			rx_fill(ep, s, fresh[used++]);
		}
		i = (i + c) & RING_MASK;
	}
	while (used < nr_fresh)
		pp_pool_recycle_direct(rxq->pool, fresh[--nr_fresh]);
	rx_give_back(ep, i, used);
	if (PP_UNLIKELY(bad))
		pp_net_stat_add(&rxq->stats.errors, bad);
	return k;
}

unsigned int e1000e_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
			     unsigned int n)
{
	struct e1000e_port *ep = rxq->port->priv;
	struct pp_page *fresh[PP_NET_BURST];
	unsigned int got = 0, bad = 0, nr_fresh, used = 0, i = ep->rx_next;
	unsigned int ready;

	if (PP_UNLIKELY(ep->rx_chain))
		return rx_burst_chain(rxq, ep, frames, n);
	if (n > PP_NET_BURST)
		n = PP_NET_BURST;
	/* How many are done, so that an empty poll costs one load. */
	ready = rx_ready(ep, i, n);
	if (!ready)
		return 0;
	/* Replacement buffers first, in one bulk call: a descriptor is only
	 * taken when its slot can be refilled, so the ring never has holes. */
	nr_fresh = pp_pool_alloc_bulk(rxq->pool, fresh, ready);
	while (used < nr_fresh) {
		struct e1000_rx_desc *d = &ep->rx_ring[i];
		uint8_t status = __atomic_load_n(&d->status, __ATOMIC_RELAXED);
		struct pp_page *page;
		uint16_t len;

		if (!(status & E1000_RXD_STAT_DD))
			break;
		/* Fields are read after DD: pairs with the device's write
		 * order (status written last, 7.1.4.1). */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		len = d->length;
		page = ep->rx_page[i];
		if (PP_UNLIKELY(d->errors || !(status & E1000_RXD_STAT_EOP) ||
				len > E1000_RX_BUF_LEN || len < ETH_HLEN ||
				!pp_frame_bounds_ok(page, ep->rx_off[i],
						    ep->headroom, len))) {
			pp_pool_recycle_direct(rxq->pool, page);
			bad++;
		} else {
			frames[got] = (struct pp_frame){
				.page = page, .offset = ep->rx_off[i],
				.headroom = ep->headroom, .len = len,
			};
			got++;
		}
		rx_fill(ep, i, fresh[used++]);
		i = (i + 1) & RING_MASK;
	}
	while (used < nr_fresh)
		pp_pool_recycle_direct(rxq->pool, fresh[--nr_fresh]);
	rx_give_back(ep, i, used);
	if (PP_UNLIKELY(bad))
		pp_net_stat_add(&rxq->stats.errors, bad);
	return got;
}

/*
 * Reclaim sent descriptors; their pages go back to their pools. A burst is
 * done when its last descriptor, the one with RS, has DD: the device
 * processes descriptors in order and writes status back only where RS is
 * set (the command field, 7.2.10.1), so the others' is never read.
 */
static void tx_clean(struct pp_txq *txq, struct e1000e_port *ep)
{
	struct pp_page *done[PP_NET_BURST];
	unsigned int nr = 0, i = ep->tx_clean;

	while (i != ep->tx_tail) {
		unsigned int rs = ep->tx_rs[i];
		uint8_t st = __atomic_load_n(&ep->tx_ring[rs].status,
					     __ATOMIC_RELAXED);

		if (!(st & E1000_TXD_STAT_DD))
			break;
		do {
			done[nr++] = ep->tx_page[i];
			ep->tx_page[i] = NULL;
			if (nr == PP_NET_BURST) {
				pp_net_put_pages(txq->port->allocator,
						 txq->napi_pool, done, nr);
				nr = 0;
			}
			i = (i + 1) & RING_MASK;
		} while (i != ((rs + 1) & RING_MASK));
	}
	ep->tx_clean = i;
	if (nr)
		pp_net_put_pages(txq->port->allocator, txq->napi_pool, done,
				 nr);
}

/* A frame's .more, from the word it shares with the offset: the load
 * the offset takes anyway, not a byte load of its own. */
static inline bool frame_more(const struct pp_frame *f)
{
	return f->offset_word_ >> 31;
}

/*
 * The packet at @f (one frame, or a multi-buffer packet's segments; @left
 * frames to the burst's end): one descriptor per segment from *@tp on,
 * EOP on the last only (the device sends the chain as one frame,
 * 7.2.10.1), each holding its segment's page until tx_clean(). Returns
 * the frames taken, *@tp moved past them; or 0, nothing written, when
 * the packet is not taken: unfinished (the burst ends inside it), more
 * segments than free descriptors (whole or not at all), or a page the
 * device cannot address (counted, as in the loop). A bad packet is taken
 * and dropped whole, one error.
 */
static __attribute__((noinline)) unsigned int
tx_chain(struct pp_txq *txq, struct e1000e_port *ep, const struct pp_frame *f,
	 unsigned int left, unsigned int *tp)
{
	unsigned int segs = pp_pkt_segs(f, left), j, t = *tp;
	uint64_t iova[PP_FRAME_MAX_SEGS];
	bool ok = segs <= PP_FRAME_MAX_SEGS;

	if (f[segs - 1].more)
		return 0;
	for (j = 0; ok && j < segs; j++)
		ok = pp_frame_valid(&f[j]);
	if (PP_UNLIKELY(!ok)) {
		pp_net_tx_drop_pkt(txq, f, segs);
		return segs;
	}
	/* Free: from the tail up to the slot before the oldest in use. */
	if (segs > ((ep->tx_clean - t - 1) & RING_MASK))
		return 0;
	for (j = 0; j < segs; j++) {
		iova[j] = page_iova(txq, ep, f[j].page);
		if (PP_UNLIKELY(!iova[j])) {
			pp_net_stat_add(&txq->stats.errors, 1);
			return 0;
		}
	}
	for (j = 0; j < segs; j++) {
		struct e1000_tx_desc *d = &ep->tx_ring[t];

		d->addr = iova[j] + f[j].offset + f[j].headroom;
		d->length = f[j].len;
		d->cso = 0;
		d->cmd = E1000_TXD_CMD_IFCS |
			 (j + 1 == segs ? E1000_TXD_CMD_EOP : 0);
		d->status = 0;
		d->css = 0;
		d->special = 0;
		pp_page_set_where(f[j].page, pp_where_stamp(ep->tx_holder));
		ep->tx_page[t] = f[j].page;
		t = (t + 1) & RING_MASK;
	}
	*tp = t;
	return segs;
}

/*
 * The rest of a TX burst from its first multi-buffer packet on, frames
 * and packets alike through tx_chain(), from descriptor *@tp (moved past
 * what is filled). Returns the frames taken. Apart so that the loop in
 * e1000e_tx_burst() stays a plain count over the frames with its tail
 * in a register.
 */
static __attribute__((noinline)) unsigned int
tx_rest(struct pp_txq *txq, struct e1000e_port *ep, const struct pp_frame *f,
	unsigned int n, unsigned int *tp)
{
	unsigned int i = 0, segs;

	while (i < n) {
		segs = tx_chain(txq, ep, &f[i], n - i, tp);
		if (!segs)
			break;
		i += segs;
	}
	return i;
}

unsigned int e1000e_tx_burst(struct pp_txq *txq, struct pp_frame *frames,
			     unsigned int n)
{
	struct e1000e_port *ep = txq->port->priv;
	struct pp_page *bad[PP_NET_BURST];
	unsigned int taken, first, last, nr_bad = 0, t = ep->tx_tail;
	const uint64_t stamp = pp_where_stamp(ep->tx_holder);

	tx_clean(txq, ep);
	for (taken = 0; taken < n; taken++) {
		struct pp_frame *f = &frames[taken];
		struct e1000_tx_desc *d = &ep->tx_ring[t];
		uint64_t iova;

		/* A multi-buffer packet: tx_rest() takes the rest. */
		if (PP_UNLIKELY(frame_more(f)))
			break;
		/* The device reads what the descriptor says: the frame
		 * must lie in its page before it gets one. */
		if (PP_UNLIKELY(!pp_frame_valid(f))) {
			bad[nr_bad++] = f->page;
			if (nr_bad == PP_NET_BURST) {
				pp_net_tx_drop(txq, bad, nr_bad);
				nr_bad = 0;
			}
			continue;
		}
		if (((t + 1) & RING_MASK) == ep->tx_clean)
			break;
		iova = page_iova(txq, ep, f->page);
		if (PP_UNLIKELY(!iova)) {
			pp_net_stat_add(&txq->stats.errors, 1);
			break;
		}
		d->addr = iova + f->offset + f->headroom;
		d->length = f->len;
		d->cso = 0;
		d->cmd = E1000_TXD_CMD_EOP | E1000_TXD_CMD_IFCS;
		d->status = 0;
		d->css = 0;
		d->special = 0;
		ep->tx_page[t] = f->page;
		pp_page_set_where(f->page, stamp);
		t = (t + 1) & RING_MASK;
	}
	/* Stopped at a multi-buffer packet, not for want of room. */
	if (PP_UNLIKELY(taken < n && frame_more(&frames[taken]))) {
		unsigned int tail = t;

		taken += tx_rest(txq, ep, &frames[taken], n - taken, &tail);
		t = tail;
	}
	if (t != ep->tx_tail) {
		/*
		 * One status write-back per burst, not per frame: each is a
		 * DMA write through the IOMMU (DPDK's em batches the same
		 * way, tx_rs_thresh).
		 */
		first = ep->tx_tail;
		last = (t - 1) & RING_MASK;
		ep->tx_ring[last].cmd |= E1000_TXD_CMD_RS;
		for (unsigned int j = first; j != t; j = (j + 1) & RING_MASK)
			ep->tx_rs[j] = (uint16_t)last;
		ep->tx_tail = t;
		__atomic_thread_fence(__ATOMIC_RELEASE);
		e1000_write(ep->regs, E1000_TDT, t);
	}
	if (PP_UNLIKELY(nr_bad))
		pp_net_tx_drop(txq, bad, nr_bad);
	return taken;
}


/* One zeroed arena page for a descriptor ring, and its IOVA. */
static int ring_alloc(struct pp_port *port, struct e1000e_port *ep,
		      unsigned int which, uint64_t *iova)
{
	struct pp_page *page = pp_alloc_page(port->allocator);

	if (!page)
		return -ENOMEM;
	ep->ring_page[which] = page;
	memset(pp_page_address(page), 0, PP_PAGE_SIZE);
	return pp_dma_map_page(ep->dma, pp_page_address(page), 0,
			       PP_DMA_BIDIRECTIONAL, iova);
}

/* See e1000e_priv.h. */
int e1000e_rings_init(struct pp_port *port, struct e1000e_port *ep,
		      const char *name, uint64_t *rx_iova, uint64_t *tx_iova)
{
	unsigned int i;
	int err;

	err = ring_alloc(port, ep, 0, rx_iova);
	if (!err)
		err = ring_alloc(port, ep, 1, tx_iova);
	if (err) {
		PP_ERR("e1000e: %s: no DMA-mapped page for the descriptor rings (%s): grow the arena or map it in conf.dma",
		       name, strerror(-err));
		return err;
	}
	ep->rx_ring = pp_page_address(ep->ring_page[0]);
	ep->tx_ring = pp_page_address(ep->ring_page[1]);
	/* Frames longer than a buffer come in chains of descriptors. */
	ep->rx_max_pkt = pp_port_mtu(port) + PP_ETH_OVERHEAD;
	ep->rx_chain = ep->rx_max_pkt > E1000_RX_BUF_LEN;
	ep->rx_discard = false;
	ep->rx_holder = PP_HOLDER(PP_HOLDER_RX_RING, port->id, 0);
	ep->tx_holder = PP_HOLDER(PP_HOLDER_TX_RING, port->id, 0);
	/* Every slot always holds a buffer, the one the tail hides too: it
	 * is handed over when the tail moves past it. */
	for (i = 0; i < RING_SIZE; i++) {
		struct pp_page *page = pp_pool_alloc_pages(port->rxq[0].pool);

		if (!page) {
			PP_ERR("e1000e: %s: the RX pool gave %u of %zu buffers: grow the arena",
			       name, i, RING_SIZE);
			return -ENOMEM;
		}
		rx_fill(ep, i, page);
	}
	return 0;
}

/* See e1000e_priv.h. */
void e1000e_rings_release(struct pp_port *port, struct e1000e_port *ep)
{
	struct pp_page *pages[RING_SIZE];
	unsigned int i, nr = 0;

	for (i = 0; i < RING_SIZE; i++) {
		if (ep->rx_page[i])
			pp_pool_recycle_direct(port->rxq[0].pool,
					       ep->rx_page[i]);
		ep->rx_page[i] = NULL;
	}
	for (i = 0; i < RING_SIZE; i++) {
		if (ep->tx_page[i])
			pages[nr++] = ep->tx_page[i];
		ep->tx_page[i] = NULL;
	}
	if (nr)
		pp_net_put_pages(port->allocator, NULL, pages, nr);
	for (i = 0; i < 2; i++) {
		if (ep->ring_page[i])
			pp_free_page(port->allocator, ep->ring_page[i]);
		ep->ring_page[i] = NULL;
	}
	ep->rx_ring = NULL;
	ep->tx_ring = NULL;
}
