/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp_rxtx.c - the AF_XDP driver's data path: one queue's four rings
 * (fill, RX, TX, completion), the pages in them, and the kicks.
 *
 * Apart from af_xdp.c (sockets, UMEM, program) because none of it needs
 * a socket: every function here works on struct xdp_queue, whose rings
 * are libxdp's plain ring structs, so a test can point them at memory of
 * its own and play the kernel (tests/fuzz/fuzz_af_xdp.c lies to it). The
 * RX and TX bursts are called through the ops table, as they were.
 *
 * Ownership of a page while the kernel has it: page->private_data holds
 * the queue's tag and the ring (XDP_TAG_FILL or XDP_TAG_TX). Everything
 * the kernel hands back is checked against it before it is used: an
 * address outside the UMEM or on a page not tagged for that ring is
 * counted (bad_desc, bad_comp) and dropped, never followed. At close the
 * pages still tagged are found by one pass over the arena.
 */
#include <errno.h>
#include <sys/socket.h>
#include <time.h>

#include <pagepool/pp_net_driver.h>

#include "af_xdp_priv.h"

/* How long close waits for the kernel to complete queued TX frames. */
#define XDP_DRAIN_MS 200

/* ---- kicks ---------------------------------------------------------- */

/*
 * A kick for the kernel: a zero-length sendto() or recvfrom(). The data
 * path never changes errno, so it is saved around the call; EAGAIN,
 * EBUSY and ENOBUFS only mean "try again on the next burst".
 */
static void xdp_kick_tx(int fd)
{
	int saved = errno;

	(void)sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	errno = saved;
}

/*
 * Zero-copy: one kick wakes the driver, whose NAPI sends everything.
 * Copy mode: the kernel sends in the sendto() itself, at most 32 frames a
 * call (TX_BATCH_SIZE in net/xdp/xsk.c), so kick until the ring is empty
 * or the kernel stops taking frames (full device queue: the next burst
 * kicks again). Bounded, so a stuck device cannot hold the thread.
 */
#define XDP_COPY_KICKS 8

static void xdp_kick_tx_ring(struct xdp_queue *xq)
{
	unsigned int i;

	xdp_kick_tx(xq->fd);
	if (xq->zero_copy)
		return;
	for (i = 1; i < XDP_COPY_KICKS; i++) {
		/* Acquire: pairs with the kernel's release of the consumer
		 * index once it has read the descriptors. */
		uint32_t cons = __atomic_load_n(xq->tx.consumer,
						__ATOMIC_ACQUIRE);

		if (cons == *xq->tx.producer)
			break;
		xdp_kick_tx(xq->fd);
	}
}

static void xdp_kick_rx(int fd)
{
	int saved = errno;

	(void)recvfrom(fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	errno = saved;
}

/* ---- data path ------------------------------------------------------ */

/*
 * How many pages the kernel may hold for receiving: in the fill ring, in
 * the RX ring, and between the two (taken from the fill ring and not yet
 * delivered: copy mode's spare buffer, a zero-copy device's own ring),
 * together. The bound is the RX ring's size: the kernel can never deliver
 * more than that while this thread is away. Every socket of a UMEM gets a
 * fill ring of the size the UMEM's first port chose, so a later port with
 * larger rings is bounded by its smaller fill ring.
 *
 * Counting the RX ring in is what matters when this thread falls behind
 * (forwarding in copy mode, where the kernel's transmit takes most of its
 * core): the RX ring is then full, so a fill ring topped up besides gave
 * the kernel a second ring's worth of pages. It took one for each frame
 * that came, copied the frame into it, found no room in the RX ring and
 * dropped it (the copy wasted on the sender's core: rx_ring_full in
 * XDP_STATISTICS), and the pages in circulation were twice as many
 * (cache and TLB misses on both cores). Held to one ring's worth, the
 * kernel drops a frame it has no room for before the copy (the fill ring
 * is empty: rx_fill_ring_empty_descs), as it does for DPDK's net_af_xdp,
 * which refills exactly what each burst took (doc/benchmarks.md, the
 * AF_XDP section, has the counters before and after).
 *
 * A refill is one burst, or half the level when that is smaller: small
 * rings are topped up while the kernel still has buffers.
 */
void af_xdp_fill_level_set(struct xdp_queue *xq, unsigned int ring_size)
{
	unsigned int level = ring_size < xq->fill.size ? ring_size :
							  xq->fill.size;

	xq->fill_batch = level / 2 < XDP_FILL_BATCH ? level / 2 : XDP_FILL_BATCH;
	if (!xq->fill_batch)
		xq->fill_batch = 1;
	xq->rx_level = level;
}

/*
 * Top the fill ring up from the pool, a batch at a time, while the kernel
 * holds fewer than rx_level pages; every page that goes in is tagged as
 * this queue's. Returns how many were added.
 */
static unsigned int xdp_fill_refill(struct xdp_queue *xq, struct pp_pool *pool,
				    unsigned int max_batches)
{
	struct pp_page *pages[XDP_FILL_BATCH];
	const unsigned int batch = xq->fill_batch;
	const uint64_t stamp = pp_where_stamp(xq->rx_holder);
	const char *base = xq->base;
	unsigned int total = 0;

	while (max_batches-- && xq->rx_held + batch <= xq->rx_level) {
		unsigned int n, i;
		uint32_t idx = 0;

		n = pp_pool_alloc_bulk(pool, pages, batch);
		if (!n)
			break;
		/*
		 * The fill ring holds at most rx_held pages, so there is room
		 * for the batch, unless the kernel's consumer index lies:
		 * then the pages go back to the pool.
		 */
		if (PP_UNLIKELY(!xsk_ring_prod__reserve(&xq->fill, n, &idx))) {
			pp_pool_recycle_direct_bulk(pool, pages, n);
			break;
		}
		for (i = 0; i < n; i++) {
			pages[i]->private_data = xq->tag | XDP_TAG_FILL;
			pp_page_set_where(pages[i], stamp);
			*xsk_ring_prod__fill_addr(&xq->fill, idx + i) =
				xdp_page_addr(base, pages[i]);
		}
		xsk_ring_prod__submit(&xq->fill, n);
		xq->rx_held += n;
		total += n;
		if (n < batch)
			break;
	}
	return total;
}

unsigned int af_xdp_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
			     unsigned int n)
{
	struct xdp_queue *xq = rxq->priv;
	struct pp_page *first = xq->first;
	const uint64_t tag = xq->tag | XDP_TAG_FILL;
	unsigned int i, got, ok = 0, mine = 0;
	uint32_t idx = 0;

	got = xsk_ring_cons__peek(&xq->rx, n, &idx);
	for (i = 0; i < got; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xq->rx,
								  idx + i);
		uint64_t addr = d->addr;
		uint32_t len = d->len;
		uint32_t off = (uint32_t)(addr & (PP_PAGE_SIZE - 1));
		struct pp_page *page;

		/*
		 * The kernel's word is checked before it is used: the
		 * address inside the UMEM, the frame one this queue put in
		 * its fill ring, and the data inside that page (the raw
		 * 32-bit length, before it is narrowed into the frame). A
		 * bad length on our page sends the page back to the pool.
		 */
		if (PP_UNLIKELY(addr >= xq->umem_size)) {
			xq->bad_desc++;
			continue;
		}
		page = xdp_addr_page(first, addr);
		if (PP_UNLIKELY(page->private_data != tag)) {
			xq->bad_desc++;
			continue;
		}
		page->private_data = 0;
		mine++;
		if (PP_UNLIKELY(!len || !pp_frame_bounds_ok(page, 0, off, len))) {
			pp_pool_recycle_direct(rxq->pool, page);
			xq->bad_desc++;
			continue;
		}
		frames[ok] = (struct pp_frame){
			.page = page, .offset = 0,
			.headroom = (uint16_t)off, .len = (uint16_t)len,
		};
		ok++;
	}
	/* Only pages of this queue's fill ring: a descriptor the kernel
	 * made up took nothing from what it holds. */
	xq->rx_held -= mine;
	if (got) {
		xsk_ring_cons__release(&xq->rx, got);
		if (PP_UNLIKELY(ok != got))
			pp_net_stat_add(&rxq->stats.errors, got - ok);
	}
	/* Replace what was taken (and catch up after a dry pool). */
	xdp_fill_refill(xq, rxq->pool, 2);
	if (xsk_ring_prod__needs_wakeup(&xq->fill))
		xdp_kick_rx(xq->fd);
	return ok;
}

/* Reap the completion ring: sent pages go back to their pools. */
static void xdp_complete(struct xdp_queue *xq, struct pp_txq *txq)
{
	struct pp_page *pages[XDP_COMP_BATCH];
	const uint64_t tag = xq->tag | XDP_TAG_TX;
	unsigned int i, got, k = 0;
	uint32_t idx = 0;

	got = xsk_ring_cons__peek(&xq->comp, XDP_COMP_BATCH, &idx);
	if (!got)
		return;
	for (i = 0; i < got; i++) {
		uint64_t addr = *xsk_ring_cons__comp_addr(&xq->comp, idx + i);
		struct pp_page *page;

		if (PP_UNLIKELY(addr >= xq->umem_size)) {
			xq->bad_comp++;
			continue;
		}
		page = xdp_addr_page(xq->first, addr);
		if (PP_UNLIKELY(page->private_data != tag)) {
			xq->bad_comp++;
			continue;
		}
		page->private_data = 0;
		pages[k++] = page;
	}
	xsk_ring_cons__release(&xq->comp, got);
	/*
	 * Only the pages that were ours: a completion the kernel made up
	 * (wild, replayed, never sent) took no page off the TX side, and
	 * counting it would wrap the count (close then waits its whole
	 * XDP_DRAIN_MS for nothing) or zero it early (close stops waiting
	 * for frames still queued).
	 */
	xq->tx_outstanding -= k;
	if (k)
		pp_net_put_pages(txq->port->allocator, txq->napi_pool,
				 pages, k);
}

unsigned int af_xdp_tx_burst(struct pp_txq *txq, struct pp_frame *frames,
			     unsigned int n)
{
	struct xdp_queue *xq = txq->priv;
	struct pp_page *foreign[PP_NET_BURST];
	const uint64_t tag = xq->tag | XDP_TAG_TX;
	const uint64_t stamp = pp_where_stamp(xq->tx_holder);
	unsigned int i, r, room, k = 0, nr_foreign = 0;
	uint32_t idx = 0;

	xdp_complete(xq, txq);
	if (n > PP_NET_BURST)
		n = PP_NET_BURST;
	/* reserve() takes all or nothing: ask for what fits (a ring
	 * smaller than a burst, or one still full of unsent frames). */
	room = xsk_prod_nb_free(&xq->tx, n);
	if (room < n)
		n = room;
	r = xsk_ring_prod__reserve(&xq->tx, n, &idx);
	for (i = 0; i < r; i++) {
		struct pp_frame *f = &frames[i];
		uint64_t addr = xdp_page_addr(xq->base, f->page);
		struct xdp_desc *d;

		/*
		 * A page of another arena has no UMEM address, a block of
		 * a higher order spans several UMEM frames, and a frame
		 * outside its page would make a descriptor outside it: each
		 * is taken and freed, and counted as an error (copying it
		 * would need a buffer this TX queue does not own). So is an
		 * empty frame: nothing to send, and at its page's end its
		 * address is the next page's (the UMEM's end, for the last
		 * page), a descriptor the kernel refuses and never completes.
		 * So is a fragment (another pool's, with frag=): the page's
		 * tag below can name one holder, and the completion of a
		 * second fragment in flight would find it taken.
		 */
		if (PP_UNLIKELY(addr >= xq->umem_size || f->page->order ||
				!f->len || !pp_frame_valid(f) ||
				pp_page_is_frag(f->page))) {
			foreign[nr_foreign++] = f->page;
			continue;
		}
		f->page->private_data = tag;
		pp_page_set_where(f->page, stamp);
		d = xsk_ring_prod__tx_desc(&xq->tx, idx + k);
		d->addr = addr + f->offset + f->headroom;
		d->len = f->len;
		d->options = 0;
		k++;
	}
	/* Give back the reserved slots the foreign frames did not use. */
	xq->tx.cached_prod -= r - k;
	if (k) {
		xsk_ring_prod__submit(&xq->tx, k);
		xq->tx_outstanding += k;
	}
	if (xsk_ring_prod__needs_wakeup(&xq->tx))
		xdp_kick_tx_ring(xq);
	if (PP_UNLIKELY(nr_foreign))
		pp_net_tx_drop(txq, foreign, nr_foreign);
	return r;
}

/*
 * The two functions above, for af_xdp.c and tests: static themselves, so
 * the bursts keep them inlined as before the split.
 */
unsigned int af_xdp_fill_refill(struct xdp_queue *xq, struct pp_pool *pool,
				unsigned int max_batches)
{
	return xdp_fill_refill(xq, pool, max_batches);
}

void af_xdp_complete(struct xdp_queue *xq, struct pp_txq *txq)
{
	xdp_complete(xq, txq);
}

void af_xdp_kick_rx(struct xdp_queue *xq)
{
	xdp_kick_rx(xq->fd);
}

void af_xdp_kick_tx_ring(struct xdp_queue *xq)
{
	xdp_kick_tx_ring(xq);
}

/* ---- close ---------------------------------------------------------- */

/*
 * Return every page the kernel still holds for this queue (fill ring, RX
 * ring, TX ring, completion ring) to its pool: after the socket is gone
 * they are found by their tags. One pass over the arena's descriptors.
 * Pages of no pool (none should be) go to @alloc.
 */
void af_xdp_queue_reclaim(struct xdp_queue *xq, struct pp_allocator *alloc)
{
	struct pp_page *batch[PP_NET_BURST];
	uint64_t i, npages = xq->umem_size >> PP_PAGE_SHIFT;
	unsigned int k = 0;

	for (i = 0; i < npages; i++) {
		struct pp_page *page = xq->first + i;
		uint64_t t = page->private_data;

		if ((t & ~(uint64_t)XDP_TAG_RINGS) != xq->tag ||
		    !(t & XDP_TAG_RINGS))
			continue;
		page->private_data = 0;
		batch[k++] = page;
		if (k == PP_NET_BURST) {
			pp_net_put_pages(alloc, NULL, batch, k);
			k = 0;
		}
	}
	if (k)
		pp_net_put_pages(alloc, NULL, batch, k);
}

/* Wait a little for queued TX frames to complete, so they go back to
 * their pools through the normal path. */
void af_xdp_queue_drain_tx(struct xdp_queue *xq, struct pp_txq *txq)
{
	struct timespec ts = { 0, 1000000 };
	unsigned int ms;

	for (ms = 0; xq->tx_outstanding && ms < XDP_DRAIN_MS; ms++) {
		xdp_kick_tx(xq->fd);
		xdp_complete(xq, txq);
		if (xq->tx_outstanding)
			nanosleep(&ts, NULL);
	}
}
