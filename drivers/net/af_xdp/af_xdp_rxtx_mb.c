/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp_rxtx_mb.c - the AF_XDP data path of a socket bound with
 * XDP_USE_SG (Linux 6.6): packets larger than one UMEM frame (a 9000-byte
 * MTU in 4 KiB pages) as chains of descriptors, every one but the last
 * with XDP_PKT_CONTD in its options, which are pagepool's multi-buffer
 * packets (pp_net.h: one frame a descriptor, .more on all but the last).
 *
 * Apart from af_xdp_rxtx.c so that a single-buffer port runs the bursts
 * it always ran, unchanged: the probe installs these two in the port's
 * burst pointers only on a port whose UMEM is bound with XDP_USE_SG (the
 * kernel then chains any packet larger than a frame, whatever this
 * port's MTU). Pages, tags and completions are af_xdp_rxtx.c's: a chain
 * of n descriptors is n pages, each tagged as a single buffer is, and
 * the kernel completes every descriptor of a sent chain, so the
 * completion ring returns every segment without a change there.
 *
 * The kernel is not trusted here either. RX: a chain is taken whole when
 * every descriptor in it is ours and lies in its page; otherwise it is
 * refused whole (its pages back to the pool, one RX error, bad_chain),
 * as is a chain longer than PP_FRAME_MAX_SEGS (the kernel's own bound,
 * MAX_SKB_FRAGS + 1) and one that fills the whole RX ring without an
 * end (the kernel could never finish it). The rest of a refused chain
 * that is still to come is dropped as it comes (rx_skip). A chain whose
 * end the kernel has not produced yet is legitimate: it stays in the
 * ring, peeked and not consumed, until its end is there.
 */
#include <pagepool/pp_net_driver.h>

#include "af_xdp_priv.h"

/*
 * Descriptors peeked at once: a burst, and never fewer than a chain too
 * long to be ours (PP_FRAME_MAX_SEGS + 1), so a small burst still sees
 * that it is too long.
 */
#define XDP_MB_PEEK_MIN (PP_FRAME_MAX_SEGS + 1)

/* ---- RX -------------------------------------------------------------- */

/*
 * The page of RX descriptor @d when the kernel had it from this queue's
 * fill ring: the tag is cleared (the page is ours again, and a second
 * descriptor naming it, in this chain or later, is refused). NULL, and
 * counted, for anything else: that page is not ours to touch. @d is the
 * caller's copy of the ring's descriptor: what is checked is what is used.
 */
static struct pp_page *xdp_mb_rx_claim(struct xdp_queue *xq,
				       const struct xdp_desc *d)
{
	struct pp_page *page;

	if (PP_UNLIKELY(d->addr >= xq->umem_size)) {
		xq->bad_desc++;
		return NULL;
	}
	page = xdp_addr_page(xq->first, d->addr);
	if (PP_UNLIKELY(page->private_data != (xq->tag | XDP_TAG_FILL))) {
		xq->bad_desc++;
		return NULL;
	}
	page->private_data = 0;
	xq->rx_held--;
	return page;
}

/* Drop @nr descriptors from @idx: their pages, where ours, to the pool. */
static void xdp_mb_rx_drop(struct xdp_queue *xq, struct pp_rxq *rxq,
			   uint32_t idx, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		const struct xdp_desc d = *xsk_ring_cons__rx_desc(&xq->rx,
								  idx + i);
		struct pp_page *page = xdp_mb_rx_claim(xq, &d);

		if (page)
			pp_pool_recycle_direct(rxq->pool, page);
	}
}

/*
 * Take the chain of @segs descriptors at @idx into @frames: true when
 * every descriptor is ours and its data lies in its page (the raw 64-bit
 * address and 32-bit length checked before they are narrowed). Otherwise
 * every page of the chain that is ours goes back to the pool and the
 * chain is refused.
 */
static bool xdp_mb_rx_chain(struct xdp_queue *xq, struct pp_rxq *rxq,
			    uint32_t idx, unsigned int segs,
			    struct pp_frame *frames)
{
	struct pp_page *claimed[PP_FRAME_MAX_SEGS];
	unsigned int s, nr = 0;
	bool ok = true;

	for (s = 0; s < segs; s++) {
		/* One read of the kernel's descriptor: checked, then used. */
		const struct xdp_desc d = *xsk_ring_cons__rx_desc(&xq->rx,
								  idx + s);
		uint32_t off = (uint32_t)(d.addr & (PP_PAGE_SIZE - 1));
		struct pp_page *page = xdp_mb_rx_claim(xq, &d);

		if (!page) {
			ok = false;
			continue;
		}
		claimed[nr++] = page;
		if (PP_UNLIKELY(!d.len ||
				!pp_frame_bounds_ok(page, 0, off, d.len))) {
			xq->bad_desc++;
			ok = false;
			continue;
		}
		frames[s] = (struct pp_frame){
			.page = page, .offset = 0, .headroom = (uint16_t)off,
			.len = (uint16_t)d.len, .more = s + 1 < segs,
		};
	}
	if (PP_LIKELY(ok))
		return true;
	for (s = 0; s < nr; s++)
		pp_pool_recycle_direct(rxq->pool, claimed[s]);
	xq->bad_chain++;
	return false;
}

/*
 * The length of the chain that starts at @idx among the @avail
 * descriptors peeked: up to and including the first without
 * XDP_PKT_CONTD; PP_FRAME_MAX_SEGS + 1 for one longer than a packet may
 * be; 0 when every descriptor up to @avail goes on (unfinished so far).
 */
static unsigned int xdp_mb_chain_len(struct xdp_queue *xq, uint32_t idx,
				     unsigned int avail)
{
	unsigned int i;

	for (i = 0; i < avail; i++) {
		if (i == PP_FRAME_MAX_SEGS)
			return PP_FRAME_MAX_SEGS + 1;
		if (!(xsk_ring_cons__rx_desc(&xq->rx, idx + i)->options &
		      XDP_PKT_CONTD))
			return i + 1;
	}
	return 0;
}

/*
 * Drop the rest of a refused chain, from @idx among @avail descriptors:
 * up to and including its last descriptor, which ends rx_skip. Returns
 * how many were dropped.
 */
static unsigned int xdp_mb_rx_skip(struct xdp_queue *xq, struct pp_rxq *rxq,
				   uint32_t idx, unsigned int avail)
{
	unsigned int i;

	for (i = 0; i < avail && xq->rx_skip; i++) {
		if (!(xsk_ring_cons__rx_desc(&xq->rx, idx + i)->options &
		      XDP_PKT_CONTD))
			xq->rx_skip = false;
		xdp_mb_rx_drop(xq, rxq, idx + i, 1);
	}
	return i;
}

unsigned int af_xdp_rx_burst_mb(struct pp_rxq *rxq, struct pp_frame *frames,
				unsigned int n)
{
	struct xdp_queue *xq = rxq->priv;
	unsigned int got, used = 0, ok = 0, refused = 0;
	unsigned int want = n > XDP_MB_PEEK_MIN ? n : XDP_MB_PEEK_MIN;
	uint32_t idx = 0;

	/*
	 * libxdp's peek reads the kernel's producer index only once the
	 * entries it saw before are all consumed. An unfinished chain left
	 * at the end of those would then be all it ever saw again, never
	 * its end: read the index whenever fewer than wanted are known.
	 * Acquire: pairs with the kernel's release of the descriptors.
	 */
	if (xq->rx.cached_prod - xq->rx.cached_cons < want)
		xq->rx.cached_prod = __atomic_load_n(xq->rx.producer,
						     __ATOMIC_ACQUIRE);
	got = xsk_ring_cons__peek(&xq->rx, want, &idx);
	while (used < got) {
		unsigned int segs;

		if (PP_UNLIKELY(xq->rx_skip)) {
			used += xdp_mb_rx_skip(xq, rxq, idx + used, got - used);
			continue;
		}
		segs = xdp_mb_chain_len(xq, idx + used, got - used);
		if (PP_UNLIKELY(!segs)) {
			/*
			 * Unfinished so far: its end comes with the kernel's
			 * next batch, unless the chain fills the whole ring,
			 * which leaves the kernel no room to end it.
			 */
			if (used || got < xq->rx.size)
				break;
			segs = PP_FRAME_MAX_SEGS + 1;
		}
		if (PP_UNLIKELY(segs > PP_FRAME_MAX_SEGS)) {
			/* Too long to be a packet: refuse what is here
			 * and whatever of it is still to come. */
			segs = got - used < PP_FRAME_MAX_SEGS ? got - used :
								PP_FRAME_MAX_SEGS;
			xdp_mb_rx_drop(xq, rxq, idx + used, segs);
			xq->bad_chain++;
			xq->rx_skip = true;
			refused++;
			used += segs;
			continue;
		}
		/* A packet that does not fit waits for the next call. */
		if (segs > n - ok)
			break;
		if (xdp_mb_rx_chain(xq, rxq, idx + used, segs, frames + ok))
			ok += segs;
		else
			refused++;
		used += segs;
	}
	/* What was peeked and not taken stays for the next call. */
	xq->rx.cached_cons -= got - used;
	if (used)
		xsk_ring_cons__release(&xq->rx, used);
	if (PP_UNLIKELY(refused))
		pp_net_stat_add(&rxq->stats.errors, refused);
	af_xdp_fill_refill(xq, rxq->pool, 2);
	if (xsk_ring_prod__needs_wakeup(&xq->fill))
		af_xdp_kick_rx(xq);
	return ok;
}

/* ---- TX -------------------------------------------------------------- */

/*
 * Whether every segment of the packet at @f (@segs frames) can go out as
 * a descriptor: the single-buffer path's checks (af_xdp_tx_burst) on
 * each, no more segments than the kernel takes in one chain, and no more
 * than the TX ring holds (a chain goes in whole: a longer one would wait
 * for room forever).
 */
static bool xdp_mb_tx_pkt_ok(const struct xdp_queue *xq,
			     const struct pp_frame *f, unsigned int segs)
{
	unsigned int s;

	if (PP_UNLIKELY(segs > xq->tx_max_segs || segs > xq->tx.size))
		return false;
	for (s = 0; s < segs; s++) {
		uint64_t addr = xdp_page_addr(xq->base, f[s].page);

		if (PP_UNLIKELY(addr >= xq->umem_size || f[s].page->order ||
				!f[s].len || !pp_frame_valid(&f[s]) ||
				pp_page_is_frag(f[s].page)))
			return false;
	}
	return true;
}

unsigned int af_xdp_tx_burst_mb(struct pp_txq *txq, struct pp_frame *frames,
				unsigned int n)
{
	struct xdp_queue *xq = txq->priv;
	struct pp_page *drop[PP_NET_BURST];
	const uint64_t tag = xq->tag | XDP_TAG_TX;
	const uint64_t stamp = pp_where_stamp(xq->tx_holder);
	unsigned int i = 0, k = 0, r, room, nr_drop = 0, bad = 0;
	uint32_t idx = 0;

	af_xdp_complete(xq, txq);
	if (n > PP_NET_BURST)
		n = PP_NET_BURST;
	/* Whole packets only: an unfinished one at the end is not taken. */
	n = pp_burst_whole(frames, n);
	room = xsk_prod_nb_free(&xq->tx, n);
	r = xsk_ring_prod__reserve(&xq->tx, room < n ? room : n, &idx);
	while (i < n) {
		unsigned int segs = pp_pkt_segs(frames + i, n - i), s;

		if (PP_UNLIKELY(!xdp_mb_tx_pkt_ok(xq, frames + i, segs))) {
			/* Taken and dropped whole, one error. */
			for (s = 0; s < segs; s++)
				drop[nr_drop++] = frames[i + s].page;
			bad++;
			i += segs;
			continue;
		}
		/* A packet goes into the ring whole or waits. */
		if (segs > r - k)
			break;
		for (s = 0; s < segs; s++) {
			const struct pp_frame *f = &frames[i + s];
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&xq->tx,
								    idx + k + s);

			f->page->private_data = tag;
			pp_page_set_where(f->page, stamp);
			d->addr = xdp_page_addr(xq->base, f->page) + f->offset +
				  f->headroom;
			d->len = f->len;
			d->options = s + 1 < segs ? XDP_PKT_CONTD : 0;
		}
		k += segs;
		i += segs;
	}
	/* Give back the reserved slots no packet used. */
	xq->tx.cached_prod -= r - k;
	if (k) {
		xsk_ring_prod__submit(&xq->tx, k);
		xq->tx_outstanding += k;
	}
	if (xsk_ring_prod__needs_wakeup(&xq->tx))
		af_xdp_kick_tx_ring(xq);
	if (PP_UNLIKELY(nr_drop)) {
		pp_net_put_pages(txq->port->allocator, txq->napi_pool, drop,
				 nr_drop);
		pp_net_stat_add(&txq->stats.errors, bad);
	}
	return i;
}
