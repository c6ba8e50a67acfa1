/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp_priv.h - what the two halves of the AF_XDP driver share: the
 * per-queue state, the page tags and the data-path entry points.
 *
 * af_xdp.c is the control path (bpffs, the XDP program, the UMEM, the
 * sockets, probe and remove); af_xdp_rxtx.c is the data path over one
 * queue's four rings (fill, RX, TX, completion). The data path needs no
 * socket, only rings, so tests/fuzz/fuzz_af_xdp.c drives it over rings in
 * plain memory, playing a kernel that lies. Nothing here is exported from
 * the library.
 */
#ifndef PP_AF_XDP_PRIV_H
#define PP_AF_XDP_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <xdp/xsk.h>

#include <pagepool/pp_net_driver.h>

/*
 * Fill ring entries per refill: one NAPI budget, so one poll's worth of
 * received pages is replaced with one bulk take from the pool.
 */
#define XDP_FILL_BATCH PP_NET_BURST
/* Completion entries reaped per TX burst, as many as one burst sends. */
#define XDP_COMP_BATCH PP_NET_BURST

/*
 * Low bits of a page's private_data tag: which ring the page is in. The
 * rest is the queue's address (xdp_queue.tag), cache-line aligned.
 */
#define XDP_TAG_FILL 1u
#define XDP_TAG_TX 2u
#define XDP_TAG_RINGS 3u

/*
 * AF_XDP multi-buffer (Linux 6.6, include/uapi/linux/if_xdp.h): a socket
 * bound with XDP_USE_SG gets a packet larger than one UMEM frame as a
 * chain of descriptors, every one but the last with XDP_PKT_CONTD in its
 * options, and sends chains marked the same way. Older headers (Debian
 * 12's are 6.1's) have neither name; the values are the kernel ABI.
 */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

/*
 * One queue: its socket and four rings. RX queue q and TX queue q share
 * the socket; the RX thread touches rx and fill, the TX thread tx and
 * comp, so the two halves sit on separate cache lines.
 */
struct xdp_queue {
	/* RX thread */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod fill;
	struct pp_page *first;
	uint64_t umem_size;
	uint64_t tag;               /* this queue's address, low bits clear */
	uint32_t rx_holder;         /* holder codes of its rings (pp_where.h) */
	uint32_t tx_holder;
	uint64_t bad_desc;          /* descriptors dropped by validation */
	unsigned int fill_batch;    /* pages per refill: a burst, or the level */
	unsigned int rx_level;      /* most pages the kernel may hold for RX */
	unsigned int rx_held;       /* into the fill ring, not yet out of RX */
	int fd;
	/* Multi-buffer RX only (af_xdp_rx_burst_mb); after the fields above
	 * so that the single-buffer path's layout is as it was. */
	bool rx_skip;               /* dropping the rest of a refused chain */
	uint64_t bad_chain;         /* RX chains refused (each one error) */
	/* TX thread */
	struct xsk_ring_prod tx __attribute__((aligned(PP_CACHE_LINE)));
	struct xsk_ring_cons comp;
	char *base;
	uint64_t tx_outstanding;    /* in the TX ring or not yet completed */
	uint64_t bad_comp;
	unsigned int tx_budget;     /* frames one copy-mode sendto() may send */
	bool zero_copy;
	/* Multi-buffer TX only: the most descriptors the kernel takes in
	 * one chain (copy mode: MAX_SKB_FRAGS + 1; zero-copy: the device's
	 * xdp_zc_max_segs), at most PP_FRAME_MAX_SEGS. */
	unsigned int tx_max_segs;
	/* control */
	struct xsk_socket *xsk __attribute__((aligned(PP_CACHE_LINE)));
	struct pp_pool *pool;
	unsigned int qid;
};

/* A UMEM address's page descriptor: the arena's are one dense array. */
static inline struct pp_page *xdp_addr_page(struct pp_page *first,
					    uint64_t addr)
{
	return first + (addr >> PP_PAGE_SHIFT);
}

/* A page's UMEM address: its offset in the arena. */
static inline uint64_t xdp_page_addr(const char *base,
				     const struct pp_page *page)
{
	return (uint64_t)((char *)pp_page_address(page) - base);
}

/*
 * af_xdp_fill_level_set - how many pages the kernel may hold for RX (and
 * the refill batch), for an RX ring of @ring_size; once the socket is bound.
 * af_xdp_fill_refill - top the fill ring up from @pool to that level, at
 * most @max_batches batches; returns how many pages went in.
 * af_xdp_rx_burst, af_xdp_tx_burst - the driver's ops (rxq->priv and
 * txq->priv are the queue).
 * af_xdp_complete - reap the completion ring: sent pages go back to their
 * pools (af_xdp_tx_burst does it first thing).
 * af_xdp_queue_drain_tx - at close, with the socket still bound: wait a
 * little for queued TX frames to complete.
 * af_xdp_queue_reclaim - at close, with the socket gone: every page still
 * tagged as this queue's goes back to its pool (or to @alloc).
 */
void af_xdp_fill_level_set(struct xdp_queue *xq, unsigned int ring_size);
unsigned int af_xdp_fill_refill(struct xdp_queue *xq, struct pp_pool *pool,
				unsigned int max_batches);
unsigned int af_xdp_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
			     unsigned int n);
unsigned int af_xdp_tx_burst(struct pp_txq *txq, struct pp_frame *frames,
			     unsigned int n);
void af_xdp_complete(struct xdp_queue *xq, struct pp_txq *txq);
/*
 * af_xdp_kick_rx, af_xdp_kick_tx_ring - the kicks the bursts make, for
 * the multi-buffer bursts (out of line, so the single-buffer ones keep
 * theirs inlined).
 * af_xdp_rx_burst_mb, af_xdp_tx_burst_mb - the bursts of a socket bound
 * with XDP_USE_SG (af_xdp_rxtx_mb.c): descriptor chains in and out as
 * multi-buffer packets. The probe installs them in place of the two
 * above on such a port, so a single-buffer port runs exactly the code it
 * ran before.
 */
void af_xdp_kick_rx(struct xdp_queue *xq);
void af_xdp_kick_tx_ring(struct xdp_queue *xq);
unsigned int af_xdp_rx_burst_mb(struct pp_rxq *rxq, struct pp_frame *frames,
				unsigned int n);
unsigned int af_xdp_tx_burst_mb(struct pp_txq *txq, struct pp_frame *frames,
				unsigned int n);
void af_xdp_queue_drain_tx(struct xdp_queue *xq, struct pp_txq *txq);
void af_xdp_queue_reclaim(struct xdp_queue *xq, struct pp_allocator *alloc);

#endif /* PP_AF_XDP_PRIV_H */
