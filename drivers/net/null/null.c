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
 * headroom and the frame; frag=auto takes the headroom and the frame
 * rounded up to a cache line. TX returns a fragment as it returns a page
 * (pp_pool_put_page(): the last fragment's return recycles the page).
 *
 * Keys: size=<60..PAGE-headroom> (frame length, default 64),
 *       frag=<headroom+size..PAGE>|auto (RX buffers are fragments).
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
			.page = page, .offset = off,
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

static unsigned int null_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
				  unsigned int n)
{
	struct null_rxq *nq = rxq->priv;

	if (PP_LIKELY(!nq->frag))
		return rx_fill(rxq, nq, frames, n, 0);
	return rx_fill(rxq, nq, frames, n, nq->frag);
}

static unsigned int null_tx_burst(struct pp_txq *txq, struct pp_frame *frames,
				  unsigned int n)
{
	struct pp_pool *napi = txq->napi_pool;
	struct pp_page *other[PP_NET_BURST], *own[PP_NET_BURST];
	unsigned int i, nr_other = 0, nr_own = 0, bad = 0;

	for (i = 0; i < n; i++) {
		struct pp_page *page = frames[i].page;

		if (PP_UNLIKELY(!pp_frame_valid(&frames[i])))
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
	if (PP_UNLIKELY(bad))
		pp_net_stat_add(&txq->stats.errors, bad);
	return n;
}

static int null_probe(struct pp_port *port, const struct pp_devargs *da)
{
	unsigned long size = NULL_SIZE_DEFAULT;
	unsigned long max = PP_PAGE_SIZE - port->conf.headroom;
	struct null_port *np;
	unsigned int q, frag;

	if (max > UINT16_MAX)
		max = UINT16_MAX;
	if (pp_devargs_uint(da, "size", NULL_SIZE_MIN, max, &size))
		return -EINVAL;
	/* A fragment holds the headroom and the frame. */
	if (pp_devargs_frag(da, port->conf.headroom, (unsigned int)size,
			    &frag))
		return -EINVAL;
	if (frag == PP_NET_FRAG_AUTO) {
		frag = port->conf.headroom +
		       (((unsigned int)size + PP_CACHE_LINE - 1) &
			~(PP_CACHE_LINE - 1u));
		if (frag > PP_PAGE_SIZE)
			frag = PP_PAGE_SIZE;
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
		np->rxq[q].headroom = (uint16_t)port->conf.headroom;
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
	.help = "size=<60..4096 minus headroom> (frame length, default 64), frag=<headroom+size..4096>|auto (RX buffers are fragments)",
	.ops = {
		.probe = null_probe,
		.remove = null_remove,
		.rx_burst = null_rx_burst,
		.tx_burst = null_tx_burst,
	},
};
