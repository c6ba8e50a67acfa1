/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * null.c - the null poll-mode driver: an endless source and a bottomless
 * sink, with no privileges and no device.
 *
 * RX does what a NIC's DMA would: it takes a buffer from the queue's
 * page_pool, writes an Ethernet header and a per-queue sequence number
 * into the page after the headroom, and reports a frame of the configured
 * size. TX completes at once: each page goes back to its pool, directly
 * when the sending thread owns that pool (a poll flushing its own frames),
 * through the pool's ring otherwise. A frame outside its page is taken
 * all the same and counted in the TX queue's errors, as a NIC's driver
 * would drop it: null sends nothing, but it keeps the same contract.
 *
 * With frag=, each RX buffer is a fragment of a pool page instead of a
 * page (pp_pool_alloc_frag()): frag=SIZE takes SIZE bytes, at least the
 * headroom and a minimum frame; frag=auto takes the headroom and the
 * frame rounded up to a cache line (a page at most). TX returns a
 * fragment as it returns a page (pp_pool_put_page(): the last
 * fragment's return recycles the page).
 *
 * A size larger than one buffer (a page, or frag= bytes) comes as a
 * multi-buffer packet: the head segment fills its buffer behind the
 * headroom, each further one a whole buffer, the last the rest (9018
 * bytes in 4 KiB pages: 3840 + 4096 + 1082). A burst holds whole packets
 * only; one that cannot get all its buffers gives back those it got and
 * counts one drop. TX takes whole packets (pp_burst_whole()) and counts
 * a packet with a bad segment once in its errors.
 *
 * Keys: size=<60..PP_FRAME_MAX_PKT> (frame length, default 64),
 *       frag=<bytes>|auto (RX buffers are fragments).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pagepool/pp_drivers.h>
#include <pagepool/pp_net_driver.h>

#include "pp_log.h"
#include "drivers.h"
#include "pp_os_fault.h"

/* The minimum Ethernet frame without FCS; smaller frames are runts. */
#define NULL_SIZE_MIN 60
#define NULL_SIZE_DEFAULT 64
/* Local-experimental EtherType (IEEE 802 88B5) marks fabricated frames. */
#define NULL_ETHERTYPE 0x88b5

struct null_rxq {
	uint64_t seq;
	unsigned int size;
	unsigned int frag;  /* fragment size; 0: a page per frame */
	unsigned int segs;  /* buffers per packet: 1, or more for large ones */
	uint16_t headroom;
} __attribute__((aligned(PP_CACHE_LINE)));

struct null_port {
	unsigned int size;
	struct null_rxq rxq[];
};

/* dst 02:00:00:00:00:02, src 02:00:00:00:00:01 (locally administered). */
static const uint8_t null_hdr[PP_NULL_HDR_LEN] = {
	0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01,
	NULL_ETHERTYPE >> 8, NULL_ETHERTYPE & 0xff,
};

/*
 * The RX loop, inlined twice: with @frag 0 (a page per frame), where its
 * test folds away, and with the queue's fragment size.
 */
static __attribute__((always_inline)) inline unsigned int
rx_fill(struct pp_rxq *rxq, struct null_rxq *nq, struct pp_frame *frames,
	unsigned int n, unsigned int frag)
{
	struct pp_pool *pool = rxq->pool;
	struct pp_page *pages[PP_NET_BURST];
	uint8_t *data[PP_NET_BURST];
	uint64_t seq = nq->seq;
	/* Read once: the stores to @frames could alias them for all the
	 * compiler knows, and it would read them again for every frame. */
	const uint16_t headroom = nq->headroom, size = (uint16_t)nq->size;
	unsigned int i, got, want = n;

	/* Pages: the burst's buffers in one step (pp_pool_alloc_bulk()). */
	if (!frag)
		n = pp_pool_alloc_bulk(pool, pages,
				       n < PP_NET_BURST ? n : PP_NET_BURST);
	/*
	 * Two passes: take the buffers and announce the writes first, then
	 * write. A page that went through another core (a veth peer copied
	 * it) has its line shared there; prefetching for write overlaps
	 * those ownership requests instead of paying them one by one.
	 */
	for (i = 0; i < n; i++) {
		struct pp_page *page;
		unsigned int off;

		if (frag) {
			page = pp_pool_alloc_frag(pool, &off, frag);
			if (PP_UNLIKELY(!page))
				break;
		} else {
			page = pages[i];
			off = pp_net_buf_color(page, headroom, size);
		}
		frames[i] = (struct pp_frame){
			.page = page, .offset_word_ = off,
			.headroom = headroom, .len = size,
		};
		/* Kept for the second pass, which then reads nothing back. */
		data[i] = pp_frame_data(&frames[i]);
		__builtin_prefetch(data[i], 1);
	}
	got = i;
	for (i = 0; i < got; i++) {
		memcpy(data[i], null_hdr, PP_NULL_HDR_LEN);
		memcpy(data[i] + PP_NULL_HDR_LEN, &seq, sizeof(seq));
		seq++;
	}
	nq->seq = seq;
	/* The wire always has frames: a missing buffer is a drop. */
	if (PP_UNLIKELY(got < want))
		pp_net_stat_add(&rxq->stats.drops, want - got);
	return got;
}

/* One RX buffer: a fragment of @frag bytes, or a page (@frag 0). */
static struct pp_page *rx_buf(struct pp_pool *pool, unsigned int frag,
			      unsigned int *off)
{
	*off = 0;
	return frag ? pp_pool_alloc_frag(pool, off, frag) :
		      pp_pool_alloc_pages(pool);
}

/*
 * The RX loop for packets over one buffer: nq->segs segments each, whole
 * packets only. The head carries the header and sequence number, as a
 * single-buffer frame does.
 */
static __attribute__((noinline)) unsigned int
rx_fill_segs(struct pp_rxq *rxq, struct null_rxq *nq, struct pp_frame *frames,
	     unsigned int n)
{
	const unsigned int buf = nq->frag ? nq->frag : PP_PAGE_SIZE;
	unsigned int want = n / nq->segs, pkts, k = 0;

	for (pkts = 0; pkts < want; pkts++) {
		unsigned int left = nq->size, s, off;

		for (s = 0; s < nq->segs; s++) {
			unsigned int hr = s ? 0 : nq->headroom;
			unsigned int len = buf - hr < left ? buf - hr : left;
			struct pp_page *page = rx_buf(rxq->pool, nq->frag, &off);

			if (PP_UNLIKELY(!page))
				break;
			frames[k + s] = (struct pp_frame){
				.page = page, .offset = off, .headroom = hr,
				.len = (uint16_t)len, .more = left > len,
			};
			left -= len;
		}
		if (PP_UNLIKELY(s < nq->segs)) {
			/* No whole packet: its buffers go back. */
			while (s--)
				pp_pool_recycle_direct(rxq->pool,
						       frames[k + s].page);
			break;
		}
		uint8_t *d = pp_frame_data(&frames[k]);

		memcpy(d, null_hdr, PP_NULL_HDR_LEN);
		memcpy(d + PP_NULL_HDR_LEN, &nq->seq, sizeof(nq->seq));
		nq->seq++;
		k += nq->segs;
	}
	if (PP_UNLIKELY(pkts < want))
		pp_net_stat_add(&rxq->stats.drops, want - pkts);
	return k;
}

static unsigned int null_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
				  unsigned int n)
{
	struct null_rxq *nq = rxq->priv;

	if (PP_UNLIKELY(nq->segs > 1))
		return rx_fill_segs(rxq, nq, frames, n);
	if (PP_LIKELY(!nq->frag))
		return rx_fill(rxq, nq, frames, n, 0);
	return rx_fill(rxq, nq, frames, n, nq->frag);
}

/* The packets among @n frames with a segment outside its buffer: each
 * is one error, however many of its segments are bad. */
static __attribute__((cold, noinline)) unsigned int
bad_packets(const struct pp_frame *frames, unsigned int n)
{
	unsigned int i, bad = 0;
	bool bad_seg = false;

	for (i = 0; i < n; i++) {
		bad_seg |= !pp_frame_valid(&frames[i]);
		if (!frames[i].more) {
			bad += bad_seg;
			bad_seg = false;
		}
	}
	return bad;
}

static unsigned int null_tx_burst(struct pp_txq *txq, struct pp_frame *frames,
				  unsigned int n)
{
	struct pp_pool *napi = txq->napi_pool;
	struct pp_page *other[PP_NET_BURST], *own[PP_NET_BURST];
	unsigned int i, nr_other = 0, nr_own = 0, bad = 0;

	n = pp_burst_whole(frames, n);
	for (i = 0; i < n; i++) {
		struct pp_page *page = frames[i].page;

		/*
		 * The frame's bounds on its offset word: a segment with
		 * .more fails them as a frame outside its page does, and
		 * bad_packets() tells the two apart, off the common path.
		 */
		if (PP_UNLIKELY(!pp_frame_bounds_ok(page,
						    frames[i].offset_word_,
						    frames[i].headroom,
						    frames[i].len)))
			bad++;
		/* The sending thread's own pages, recycled in one step. */
		if (PP_LIKELY(napi && pp_page_pool(page) == napi)) {
			own[nr_own++] = page;
			if (PP_UNLIKELY(nr_own == PP_NET_BURST)) {
				pp_pool_recycle_direct_bulk(napi, own, nr_own);
				nr_own = 0;
			}
			continue;
		}
		other[nr_other++] = page;
		if (nr_other == PP_NET_BURST) {
			pp_net_put_pages(txq->port->allocator, NULL, other,
					 nr_other);
			nr_other = 0;
		}
	}
	if (nr_own)
		pp_pool_recycle_direct_bulk(napi, own, nr_own);
	if (nr_other)
		pp_net_put_pages(txq->port->allocator, NULL, other,
				 nr_other);
	if (PP_UNLIKELY(bad)) {
		bad = bad_packets(frames, n);
		if (bad)
			pp_net_stat_add(&txq->stats.errors, bad);
	}
	return n;
}

static int null_probe(struct pp_port *port, const struct pp_devargs *da)
{
	unsigned long size = NULL_SIZE_DEFAULT;
	const unsigned int hr = port->conf.headroom;
	struct null_port *np;
	unsigned int q, frag, buf, segs;

	if (pp_devargs_uint(da, "size", NULL_SIZE_MIN, PP_FRAME_MAX_PKT,
			    &size))
		return -EINVAL;
	/* A fragment holds the headroom and a minimum frame; a frame over
	 * it comes in segments. */
	if (pp_devargs_frag(da, hr, PP_NET_FRAG_MIN_FRAME, &frag))
		return -EINVAL;
	if (frag == PP_NET_FRAG_AUTO) {
		frag = hr + (((unsigned int)size + PP_CACHE_LINE - 1) &
			     ~(PP_CACHE_LINE - 1u));
		if (frag > PP_PAGE_SIZE)
			frag = PP_PAGE_SIZE;
	}
	/* The head's buffer holds buf - hr bytes, each further one buf. */
	buf = frag ? frag : PP_PAGE_SIZE;
	segs = 1;
	if (size > buf - hr)
		segs += (unsigned int)((size - (buf - hr) + buf - 1) / buf);
	if (segs > PP_FRAME_MAX_SEGS) {
		PP_ERR("device '%s': a %lu-byte frame takes %u buffers of %u bytes, more than a packet's %d: give a larger frag= or a smaller size=",
		       da->devstr, size, segs, buf, PP_FRAME_MAX_SEGS);
		return -EINVAL;
	}
	np = pp_os_aligned_alloc(PP_CACHE_LINE,
				 sizeof(*np) + port->nr_rxq * sizeof(np->rxq[0]));
	if (!np) {
		PP_ERR("device '%s': out of memory for the null port",
		       da->devstr);
		return -ENOMEM;
	}
	np->size = (unsigned int)size;
	for (q = 0; q < port->nr_rxq; q++) {
		memset(&np->rxq[q], 0, sizeof(np->rxq[q]));
		np->rxq[q].size = (unsigned int)size;
		np->rxq[q].frag = frag;
		np->rxq[q].segs = segs;
		np->rxq[q].headroom = (uint16_t)hr;
		port->rxq[q].priv = &np->rxq[q];
	}
	port->priv = np;
	return 0;
}

static void null_remove(struct pp_port *port)
{
	free(port->priv);
	port->priv = NULL;
}

static const char *const null_keys[] = { "size", "frag", NULL };

const struct pp_net_driver pp_net_null_driver = {
	.name = "null",
	.keys = null_keys,
	.help = "size=<60..9216> (frame length, default 64; over one buffer: multi-buffer packets), frag=<bytes>|auto (RX buffers are fragments)",
	.ops = {
		.probe = null_probe,
		.remove = null_remove,
		.rx_burst = null_rx_burst,
		.tx_burst = null_tx_burst,
	},
};
