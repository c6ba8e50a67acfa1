/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * poll.c - the NAPI-style poll: receive a burst, run the port's program
 * over it once, act on every verdict, flush in bulk.
 *
 * Page ownership through a poll (the invariant the tests check: every page
 * is in exactly one pool, one ring or one consumer's hands):
 *   DROP      recycled straight into the queue's alloc cache (this thread
 *             owns the pool, so no atomics: the kernel's XDP_DROP fast path);
 *   TX        queued for the port's own TX queue with the same index;
 *   REDIRECT  queued per target (the kernel's per-CPU devmap bulk queue)
 *             and sent with one tx_burst per target per burst, as
 *             xdp_do_flush() does at the end of a NAPI poll;
 *   PASS      released from the pool (unmapped, counted as released) and
 *             handed to the stack consumer, who frees it to the allocator;
 *             a fragment cannot leave its pool: it goes to the consumer
 *             still in it, and the consumer's pp_frame_put_bulk()
 *             returns it there (without a consumer, recycled here);
 *   a frame the program left outside its page (bad offset, headroom
 *             or length): PASS recycles it and counts an RX error, so the
 *             stack consumer never gets it; TX and REDIRECT hand it to
 *             the target's driver, whose TX drops it and counts a TX
 *             error; DROP recycles it, as any other.
 * While flushing, the TX queue learns which pool this thread owns, so a
 * driver that completes TX at once (null) recycles directly too.
 *
 * A multi-buffer packet (pp_net.h) takes its first frame's verdict for
 * all its segments, so that every path above moves it whole; counters
 * count packets. The single-buffer burst pays one test for this: the sum
 * of the frames' .more bits, which is 0.
 */
#include <string.h>

#include "net_priv.h"

struct poll_burst {
	struct pp_frame frames[PP_NET_BURST];
	uint16_t verdicts[PP_NET_BURST];
	struct pp_frame tx[PP_NET_BURST];
	struct pp_frame pass[PP_NET_BURST];
	struct pp_frame redir[PP_PROG_MAX_TARGETS][PP_NET_BURST];
	unsigned int nr_redir[PP_PROG_MAX_TARGETS];
};

/* The bytes of @n frames. */
static uint64_t frames_bytes(const struct pp_frame *frames, unsigned int n)
{
	uint64_t bytes = 0;

	for (unsigned int i = 0; i < n; i++)
		bytes += frames[i].len;
	return bytes;
}

/* The packets among @n frames: the frames that end one. */
static unsigned int frames_pkts(const struct pp_frame *frames, unsigned int n)
{
	unsigned int pkts = n;

	for (unsigned int i = 0; i < n; i++)
		pkts -= frames[i].more;
	return pkts;
}

/*
 * Send @n frames (@pkts packets, @bytes in all) on @port's TX queue for
 * RX queue @rxq; drop the rest. The driver takes whole packets, so what
 * it refuses is whole packets too.
 */
static void flush_tx(struct pp_rxq *rxq, struct pp_port *port,
		     struct pp_frame *frames, unsigned int n, unsigned int pkts,
		     uint64_t bytes)
{
	struct pp_txq *txq = &port->txq[rxq->idx % port->nr_txq];
	struct pp_page *rest[PP_NET_BURST];
	unsigned int sent, i, left;

	txq->napi_pool = rxq->pool;
	sent = port->tx_burst(txq, frames, n);
	txq->napi_pool = NULL;
	left = 0;
	if (PP_UNLIKELY(sent != n)) {
		bytes -= frames_bytes(frames + sent, n - sent);
		left = frames_pkts(frames + sent, n - sent);
	}
	pp_net_stat_add(&txq->stats.packets, pkts - left);
	pp_net_stat_add(&txq->stats.bytes, bytes);
	if (PP_LIKELY(sent == n))
		return;
	for (i = sent; i < n; i++)
		rest[i - sent] = frames[i].page;
	pp_net_put_pages(port->allocator, rxq->pool, rest, n - sent);
	pp_net_stat_add(&txq->stats.drops, left);
}

/*
 * A PASS burst with fragments in it: release the whole pages, one bulk
 * call per run of one pool, and leave the fragments in theirs (a
 * fragment cannot leave its pool); the consumer frees both with
 * pp_frame_put_bulk(), fragments of this thread's pool directly.
 */
static __attribute__((cold, noinline)) void
pass_frags(struct pp_port *port, struct pp_rxq *rxq, struct pp_frame *frames,
	   struct pp_page **pages, unsigned int n)
{
	struct pp_page *whole[PP_NET_BURST], *frags[PP_NET_BURST];
	unsigned int i, k = 0, run = 0, nr_frag = 0;
	uint64_t stamp = pp_where_stamp(
		PP_HOLDER(PP_HOLDER_STACK, port->id, rxq->idx));

	for (i = 0; i < n; i++) {
		if (pp_page_is_frag(pages[i])) {
			/* Still the pool's, held by the stack now. */
			pp_page_set_where(pages[i], stamp);
			frags[nr_frag++] = pages[i];
			pages[i] = NULL;
			continue;
		}
		whole[k] = pages[i];
		if (pp_page_pool(whole[k]) != pp_page_pool(whole[run])) {
			pp_pool_release_pages_bulk(pp_page_pool(whole[run]),
						   &whole[run], k - run);
			run = k;
		}
		k++;
	}
	if (k)
		pp_pool_release_pages_bulk(pp_page_pool(whole[run]),
					   &whole[run], k - run);
	if (port->stack_fn) {
		net_napi_pool = rxq->pool;
		port->stack_fn(port->stack_arg, port, frames, n);
		net_napi_pool = NULL;
		return;
	}
	/* NULL entries (the fragments) are skipped. */
	if (k)
		pp_free_pages_bulk(port->allocator, pages, n);
	pp_net_put_pages(port->allocator, rxq->pool, frags, nr_frag);
}

static void pass_to_stack(struct pp_port *port, struct pp_rxq *rxq,
			  struct pp_frame *frames, unsigned int n)
{
	struct pp_page *pages[PP_NET_BURST];
	unsigned int i, run = 0;
	bool frag = false;

	for (i = 0; i < n; i++) {
		pages[i] = frames[i].page;
		frag |= pp_page_is_frag(pages[i]);
	}
	if (PP_UNLIKELY(frag)) {
		pass_frags(port, rxq, frames, pages, n);
		return;
	}
	/* One release per run of pages from the same pool (usually all). */
	for (i = 0; i < n; i++) {
		if (pp_page_pool(pages[i]) != pp_page_pool(pages[run])) {
			pp_pool_release_pages_bulk(pp_page_pool(pages[run]),
						   &pages[run], i - run);
			run = i;
		}
	}
	if (n)
		pp_pool_release_pages_bulk(pp_page_pool(pages[run]),
					   &pages[run], n - run);
	if (port->stack_fn) {
		port->stack_fn(port->stack_arg, port, frames, n);
		return;
	}
	pp_free_pages_bulk(port->allocator, pages, n);
}

/* Whether the @n verdicts are all verdicts[0]. */
static inline bool verdicts_same(const uint16_t *verdicts, unsigned int n)
{
	unsigned int diff = 0;

	for (unsigned int i = 0; i < n; i++)
		diff |= verdicts[i] ^ verdicts[0];
	return !diff;
}

/*
 * Give every segment of a multi-buffer packet its first frame's verdict
 * (what the program set for the others does not count).
 */
static __attribute__((cold, noinline)) void
spread_verdicts(struct poll_burst *b, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++)
		if (b->frames[i - 1].more)
			b->verdicts[i] = b->verdicts[i - 1];
}

/* Recycle the @segs pages of the packet at @f into @pool (its owner). */
static inline void recycle_pkt(struct pp_pool *pool, const struct pp_frame *f,
			       unsigned int segs)
{
	for (unsigned int j = 0; j < segs; j++)
		pp_pool_recycle_direct(pool, f[j].page);
}

/* Every segment of the packet at @f lies in its buffer. */
static bool pkt_valid(const struct pp_frame *f, unsigned int segs)
{
	for (unsigned int j = 0; j < segs; j++)
		if (PP_UNLIKELY(!pp_frame_valid(&f[j])))
			return false;
	return true;
}

static void run_burst(struct pp_port *port, struct pp_rxq *rxq,
		      struct poll_burst *b, unsigned int n)
{
	const struct pp_prog *prog = &port->prog;
	unsigned int i, t, segs, more = 0, nr_tx = 0, nr_pass = 0;
	uint64_t bytes = 0, drop = 0, err = 0, redirect = 0, pass = 0, tx = 0;

	if (PP_LIKELY(prog->fn)) {
		struct pp_prog_ctx ctx = {
			.port = port, .queue = rxq->idx, .arg = prog->arg,
		};

		prog->fn(&ctx, b->frames, b->verdicts, n);
	} else {
		for (i = 0; i < n; i++)
			b->verdicts[i] = PP_XDP_DROP;
	}

	/*
	 * One verdict for the whole burst, a forwarder's usual case: the
	 * burst goes to its target as it is (or back to the cache in one
	 * step), without being sorted frame by frame; the sorting below
	 * keeps each target's count in memory, and reading back a count
	 * just stored costs a store-to-load forward per frame.
	 */
	unsigned int v0 = b->verdicts[0];
	uint32_t words = 0;
	bool same = true;

	/*
	 * Each field read as the driver stored it, the length and the
	 * offset word that holds .more: the frames were written a moment
	 * ago, and a wider load across two stores (a vectorized loop's)
	 * waits for them to reach the cache instead of taking them from
	 * the store buffer.
	 */
	for (i = 0; i < n; i++) {
		bytes += b->frames[i].len;
		words |= b->frames[i].offset_word_;
		same &= b->verdicts[i] == v0;
	}
	if (PP_UNLIKELY(words >> 31)) {
		more = n - frames_pkts(b->frames, n);
		spread_verdicts(b, n);
		same = verdicts_same(b->verdicts, n);
	}
	if (same && (v0 & 0xff) == PP_XDP_REDIRECT &&
	    (v0 >> 8) < prog->nr_targets) {
		flush_tx(rxq, prog->targets[v0 >> 8], b->frames, n, n - more,
			 bytes);
		redirect = n - more;
		goto count;
	}
	if (same && v0 == PP_XDP_DROP) {
		struct pp_page *pages[PP_NET_BURST];

		for (i = 0; i < n; i++)
			pages[i] = b->frames[i].page;
		pp_pool_recycle_direct_bulk(rxq->pool, pages, n);
		drop = n - more;
		goto count;
	}

	/* Packet by packet: a multi-buffer one moves whole. */
	for (i = 0; i < n; i += segs) {
		struct pp_frame *f = &b->frames[i];
		unsigned int v = b->verdicts[i], j;

		segs = PP_LIKELY(!f->more) ? 1 : pp_pkt_segs(f, n - i);
		switch (v & 0xff) {
		case PP_XDP_REDIRECT:
			t = v >> 8;
			if (PP_UNLIKELY(t >= prog->nr_targets))
				goto error;
			for (j = 0; j < segs; j++)
				b->redir[t][b->nr_redir[t]++] = f[j];
			redirect++;
			break;
		case PP_XDP_DROP:
			recycle_pkt(rxq->pool, f, segs);
			drop++;
			break;
		case PP_XDP_PASS:
			/*
			 * The stack consumer reads the data and has no check
			 * of its own. TX and REDIRECT need none here: every
			 * driver's TX checks each frame (and counts a bad one
			 * in its TX errors), and one check per frame is what
			 * the forwarding budget allows.
			 */
			if (PP_UNLIKELY(!pkt_valid(f, segs)))
				goto error;
			for (j = 0; j < segs; j++)
				b->pass[nr_pass++] = f[j];
			pass++;
			break;
		case PP_XDP_TX:
			for (j = 0; j < segs; j++)
				b->tx[nr_tx++] = f[j];
			tx++;
			break;
		default:
error:
			recycle_pkt(rxq->pool, f, segs);
			err++;
			break;
		}
	}

	for (t = 0; t < prog->nr_targets; t++) {
		unsigned int k = b->nr_redir[t];

		if (k) {
			flush_tx(rxq, prog->targets[t], b->redir[t], k,
				 frames_pkts(b->redir[t], k),
				 frames_bytes(b->redir[t], k));
			b->nr_redir[t] = 0;
		}
	}
	if (nr_tx)
		flush_tx(rxq, port, b->tx, nr_tx, (unsigned int)tx,
			 frames_bytes(b->tx, nr_tx));
	if (nr_pass)
		pass_to_stack(port, rxq, b->pass, nr_pass);

count:
	pp_net_stat_add(&rxq->stats.packets, n - more);
	pp_net_stat_add(&rxq->stats.bytes, bytes);
	pp_net_stat_add(&rxq->stats.xdp_redirect, redirect);
	pp_net_stat_add(&rxq->stats.xdp_drop, drop);
	pp_net_stat_add(&rxq->stats.xdp_pass, pass);
	pp_net_stat_add(&rxq->stats.xdp_tx, tx);
	if (PP_UNLIKELY(err))
		pp_net_stat_add(&rxq->stats.errors, err);
}

unsigned int pp_port_poll(struct pp_port *port, unsigned int q,
			  unsigned int budget)
{
	struct pp_rxq *rxq = &port->rxq[q];
	struct poll_burst b;
	unsigned int total = 0;

	net_rxq_claim(rxq);
	memset(b.nr_redir, 0, sizeof(b.nr_redir));
	while (total < budget) {
		unsigned int want = budget - total, got;

		if (want > PP_NET_BURST)
			want = PP_NET_BURST;
		/* The first receive has room for a whole packet, so that a
		 * small budget still moves a multi-buffer one. */
		if (want < PP_FRAME_MAX_SEGS && !total)
			want = PP_FRAME_MAX_SEGS;
		got = port->rx_burst(rxq, b.frames, want);
		if (!got) {
			if (!total)
				net_rxq_idle(rxq);
			break;
		}
		run_burst(port, rxq, &b, got);
		total += got;
		if (got < want)
			break;
	}
	/* The clock this thread's stamps read (pp_where.h). */
	pp_where_clock_burst(total >= budget);
	return total;
}
