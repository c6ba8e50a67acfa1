/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * veth.c - an in-process veth pair: what one end sends, the other end
 * receives, possibly on another thread.
 *
 * Each RX queue has a lock-free pointer ring (pp_ring). TX queue i of one
 * end is the only producer of RX ring i of the other end and that queue's
 * poller is its only consumer, so the rings are single-producer and
 * single-consumer (hence the rule nr_txq <= nr_rxq). A frame travels as
 * its page pointer; offset, headroom and length ride in the page
 * descriptor's private_data, which belongs to the page's holder, so the
 * data page itself carries no metadata.
 *
 * RX follows the kernel's veth XDP path for frames that are not its own:
 * the receiving queue takes a fresh page from its own page_pool for every
 * frame, copies the frame into it and gives the sender's page back to the
 * sender's pool (through that pool's ring: the sender's pool is owned by
 * another thread). The program then runs on the copy. So the sender's pool
 * keeps recycling its pages, and when the program PASSes frames to the
 * stack it is the receiver's pool that loses a page per frame and refills
 * from the allocator, 64 at a time with the bulk array call: the workload
 * of the 5.13 bulk-allocator series.
 *
 * With frag=, the copy goes into a fragment of the receiving pool's page
 * instead of a page of its own, as the kernel's veth does since it took
 * page_pool fragments (6.6): frag=auto sizes each fragment to its frame,
 * headroom plus the frame rounded up to a cache line (the kernel's
 * SKB_HEAD_ALIGN without the skb_shared_info we do not have), through
 * pp_pool_alloc(), which gives a whole page to a frame over half of one;
 * frag=SIZE takes SIZE-byte fragments (pp_pool_alloc_frag()), and a whole
 * page for a frame that does not fit in one. A passed fragment stays in
 * the pool (pp_port_set_stack()); so the pool refills less.
 *
 * A fragment's geometry cannot ride in its page's private_data, which the
 * page's other fragments share: a fragment travels as two ring slots, its
 * page pointer tagged with VETH_SLOT_META and then the geometry itself.
 * Whole pages keep the single slot.
 *
 * A multi-buffer packet (pp_net.h) travels as its segments' slots in a
 * row, each tagged VETH_SLOT_MORE where its frame has .more: the tag, not
 * the geometry, carries the bit, so that the consumer learns from the
 * slots it already ORs together whether a burst holds one, and the
 * single-buffer burst pays no more than that test. TX puts a packet's
 * slots on the ring in one enqueue, all or none (the room is counted for
 * the whole packet first), so a consumer that dequeues the start of a
 * packet finds the rest published. RX copies every segment as it copies
 * a frame (the head behind the port's headroom, the others from their
 * buffer's start, so a 9000-byte packet takes 3 pages) and hands out
 * whole packets: the rest of one that a burst cut is taken off the ring
 * at once, and a packet that does not fit in what the caller asked for
 * waits in the queue's carry buffer for the next call. That work is in
 * rx_mb() and tx_pkt(), out of the single-buffer loops.
 *
 * Keys: peer=<name> (required: the other end, created with this one),
 *       ring=<64..65536> (slots per RX ring, a power of two; default the
 *       port's ring_size, which must then be in that range too),
 *       frag=<bytes>|auto (RX copies into fragments, see above; both ends
 *       take it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pagepool/pp_net_driver.h>

#include "pp_log.h"
#include "drivers.h"
#include "pp_os_fault.h"
#include "pp_ring.h"

#define VETH_RING_MIN 64
#define VETH_RING_MAX 65536
/* Internal key naming the end whose probe creates this one. Not in
 * veth_keys, so no device string can set it. */
#define VETH_PAIR_KEY "_pair"

/*
 * A frame taken off the ring, decoded: its slot (the page pointer with
 * VETH_SLOT_MORE as it came; seg_page(), seg_more()) and its geometry as
 * the ring held it (meta_pack()'s layout, unchecked: seg_pkt_ok() checks
 * it in 64 bits before a frame is made of it).
 */
struct veth_seg {
	uintptr_t slot;
	uint64_t meta;
};

/*
 * What rx_mb() works on at most: a burst's frames (PP_NET_BURST) and the
 * rest of the packet the burst cut (up to PP_FRAME_MAX_SEGS + 1 segments
 * in all: one more than a packet may have tells a chain that is too long).
 */
#define VETH_SEGS_MAX (PP_NET_BURST + PP_FRAME_MAX_SEGS + 1)

/* An RX queue's state (rxq->priv). Its consumer alone writes it. */
struct veth_rxq {
	struct pp_ring *ring;
	unsigned int frag;       /* 0: a page per frame; PP_NET_FRAG_AUTO */
	/* The packet (whole, never handed out in part) that did not fit in
	 * the last rx_burst's @n: the next call starts with it. */
	unsigned int nr_carry;
	struct veth_seg carry[VETH_SEGS_MAX];
};

struct veth_port {
	unsigned int ring_size;
	unsigned int frag;       /* 0: a page per frame; PP_NET_FRAG_AUTO */
	struct veth_rxq *rxqs[]; /* one per RX queue */
};

/*
 * Ring slots hold page pointers. Descriptors are 64-byte aligned, so bit 0
 * is free to say that the next slot holds the frame's geometry (a
 * fragment) instead of the page's private_data. The producer enqueues a
 * pair in one go, so the consumer finds the second slot published.
 */
#define VETH_SLOT_META ((uintptr_t)1)
/* Bit 1: the frame has .more (a multi-buffer packet goes on). */
#define VETH_SLOT_MORE ((uintptr_t)2)
#define VETH_SLOT_TAGS (VETH_SLOT_META | VETH_SLOT_MORE)
static_assert(sizeof(void *) == sizeof(uint64_t),
	      "a ring slot carries a frame's 64-bit geometry");
static_assert(sizeof(struct pp_page) % 4 == 0 &&
	      _Alignof(struct pp_page) >= 4,
	      "bits 0 and 1 of a descriptor's address are free");

/* Frames ahead to prefetch; twice that for descriptors. */
#define VETH_PREFETCH 8

static inline void prefetch_data(const struct pp_page *page, uint64_t meta)
{
	__builtin_prefetch((const char *)pp_page_address(page) +
			   (meta >> 32) + ((meta >> 16) & 0xffff));
}

/*
 * A frame's .more, read as bit 31 of the 32-bit word it shares with the
 * offset (the x86-64 and AArch64 ABIs fill a bit field from the bottom):
 * the same load the offset takes. A byte load of the bit on its own,
 * just after the caller stored the frame, measured 3% of the veth PASS
 * path (frag_bench): likely a store-forwarding miss on the frame's
 * 16-byte store.
 */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "frame_more() reads the frame's offset word as little-endian"
#endif
static inline bool frame_more(const struct pp_frame *f)
{
	uint32_t w;

	memcpy(&w, (const char *)f + sizeof(f->page), sizeof(w));
	return w >> 31;
}

static inline uint64_t meta_pack(const struct pp_frame *f)
{
	return (uint64_t)f->offset << 32 | (uint64_t)f->headroom << 16 |
	       f->len;
}

/*
 * Copy a frame into a fresh page. Small frames (the common 64-byte case)
 * are copied in whole cache lines inline, which both buffers have room
 * for; a call into libc's memcpy cost more than the copy itself there.
 * An empty frame is no line: the inline path copies at least one whole
 * line, and an empty frame may start in the last bytes of its block
 * (src_room < 64), so it takes memcpy's path, which copies nothing.
 */
static inline void copy_frame(char *dst, const char *src, uint32_t len,
			      uint32_t dst_room, uint32_t src_room)
{
	uint32_t lines = (len + PP_CACHE_LINE - 1) / PP_CACHE_LINE;

	if (PP_LIKELY(len && lines <= 2 && lines * PP_CACHE_LINE <= dst_room &&
		      lines * PP_CACHE_LINE <= src_room)) {
		__builtin_memcpy(dst, src, PP_CACHE_LINE);
		if (lines == 2)
			__builtin_memcpy(dst + PP_CACHE_LINE,
					 src + PP_CACHE_LINE, PP_CACHE_LINE);
		return;
	}
	memcpy(dst, src, len);
}

/*
 * Put @nr slots on @ring; the caller counted the room, so all go. The
 * ring's release store of the producer tail orders the private_data and
 * payload writes before the consumer's acquire of it (pp_ring pairs them).
 */
static inline void ring_put(struct pp_ring *ring, void **objs, unsigned int nr)
{
	if (nr)
		pp_ring_sp_enqueue_burst(ring, objs, nr);
}

/*
 * The packet at @f (one frame, or a multi-buffer packet's segments),
 * @left frames before the burst's end: its slots go into @objs (*@nr
 * used) as a run that ring_put() enqueues in one go, so the consumer
 * never finds half a packet. Returns the frames taken, or 0 when the
 * packet is not: unfinished (the burst ends inside it) or more than the
 * *@room free slots (whole or not at all; the caller stops there). A bad
 * packet is taken and dropped whole, one error.
 */
static __attribute__((noinline)) unsigned int
tx_pkt(struct pp_txq *txq, struct pp_ring *ring, const struct pp_frame *f,
       unsigned int left, void **objs, unsigned int *nr, unsigned int *room)
{
	unsigned int segs = pp_pkt_segs(f, left), j, need = 0;
	uint32_t frag = 0;  /* bit j: segment j is a fragment (two slots) */
	bool ok = segs <= PP_FRAME_MAX_SEGS;

	if (f[segs - 1].more)
		return 0;
	for (j = 0; ok && j < segs; j++) {
		ok = pp_frame_valid(&f[j]);
		/* Read once: the count only falls to 1 under a holder, and
		 * two slots for what became a whole page are still right. */
		if (pp_page_is_frag(f[j].page))
			frag |= 1u << j;
		need += 1 + (frag >> j & 1);
	}
	if (PP_UNLIKELY(!ok)) {
		pp_net_tx_drop_pkt(txq, f, segs);
		return segs;
	}
	if (need > *room)
		return 0;
	/* Room in @objs for the whole packet (at most 36 slots). */
	if (*nr + need >= 2 * PP_NET_BURST - 1) {
		ring_put(ring, objs, *nr);
		*nr = 0;
	}
	for (j = 0; j < segs; j++) {
		uintptr_t tag = f[j].more ? VETH_SLOT_MORE : 0;
		uint64_t meta = meta_pack(&f[j]);

		if (frag >> j & 1) {
			objs[(*nr)++] = (void *)((uintptr_t)f[j].page |
						 VETH_SLOT_META | tag);
			objs[(*nr)++] = (void *)(uintptr_t)meta;
			continue;
		}
		if (f[j].page->private_data != meta)
			f[j].page->private_data = meta;
		objs[(*nr)++] = (void *)((uintptr_t)f[j].page | tag);
	}
	*room -= need;
	return segs;
}

/*
 * The rest of a TX burst from its first multi-buffer packet on, frames
 * and packets alike through tx_pkt(), after what tx_fill() put on the
 * ring (so the slots keep the burst's order), with the @room it left.
 * Apart so that tx_fill()'s loop stays a plain count over the frames
 * with its counts in registers: stepping over a packet's segments in
 * it, and handing tx_pkt() their addresses, cost the single-buffer PASS
 * path 3% (frag_bench).
 */
static __attribute__((noinline)) unsigned int
tx_fill_mb(struct pp_txq *txq, struct pp_ring *ring,
	   const struct pp_frame *frames, unsigned int n, unsigned int room)
{
	void *objs[2 * PP_NET_BURST];
	unsigned int i = 0, nr = 0, segs;

	while (i < n) {
		segs = tx_pkt(txq, ring, &frames[i], n - i, objs, &nr, &room);
		if (!segs)
			break;
		i += segs;
	}
	ring_put(ring, objs, nr);
	return i;
}

/*
 * The TX loop: put @n frames on @ring, which has @room free slots, and
 * return how many were taken. Inlined twice: with @check_room false when
 * the room cannot run out (two slots per frame fit), where its tests fold
 * away, and true.
 */
static __attribute__((always_inline)) inline unsigned int
tx_fill(struct pp_txq *txq, struct pp_ring *ring, struct pp_frame *frames,
	unsigned int n, unsigned int room, const bool check_room)
{
	struct pp_page *bad[PP_NET_BURST];
	void *objs[2 * PP_NET_BURST];
	unsigned int i, nr = 0, nr_bad = 0;

	for (i = 0; i < n; i++) {
		struct pp_frame *f = &frames[i];
		uint64_t meta;

		/* A multi-buffer packet: tx_fill_mb() takes the rest. */
		if (PP_UNLIKELY(frame_more(f)))
			break;
		if (PP_UNLIKELY(!pp_frame_valid(f))) {
			/* Taken and dropped. */
			bad[nr_bad++] = f->page;
			if (nr_bad == PP_NET_BURST) {
				pp_net_tx_drop(txq, bad, nr_bad);
				nr_bad = 0;
			}
			continue;
		}
		meta = meta_pack(f);
		if (PP_UNLIKELY(pp_page_is_frag(f->page))) {
			if (check_room && room < 2)
				break;
			room -= 2;
			objs[nr++] = (void *)((uintptr_t)f->page |
					      VETH_SLOT_META);
			objs[nr++] = (void *)(uintptr_t)meta;
		} else {
			if (check_room && !room)
				break;
			room--;
			/*
			 * Store only a change: a page cycling with the same
			 * geometry keeps its descriptor line shared between
			 * the two cores instead of bouncing it per frame.
			 */
			if (f->page->private_data != meta)
				f->page->private_data = meta;
			objs[nr++] = f->page;
		}
		if (nr >= 2 * PP_NET_BURST - 1) {
			ring_put(ring, objs, nr);
			nr = 0;
		}
	}
	ring_put(ring, objs, nr);
	if (PP_UNLIKELY(nr_bad))
		pp_net_tx_drop(txq, bad, nr_bad);
	/* Stopped at a multi-buffer packet, not for want of room. */
	if (PP_UNLIKELY(i < n && frame_more(&frames[i])))
		i += tx_fill_mb(txq, ring, &frames[i], n - i, room);
	return i;
}

static unsigned int veth_tx_burst(struct pp_txq *txq, struct pp_frame *frames,
				  unsigned int n)
{
	struct pp_port *peer = txq->port->peer;
	struct pp_ring *ring;
	unsigned int room;

	if (PP_UNLIKELY(!peer))
		return 0;   /* carrier down: the caller keeps the frames */
	ring = ((struct veth_rxq *)peer->rxq[txq->idx].priv)->ring;
	/*
	 * This thread is the ring's only producer: the room only grows under
	 * it, so what is counted here fits, every enqueue takes all it is
	 * given (a fragment's two slots, a packet's segments never split),
	 * and what a full ring refuses is one run at the end of @frames.
	 */
	room = pp_ring_free_count(ring);
	if (PP_LIKELY(room >= 2 * (uint64_t)n))
		return tx_fill(txq, ring, frames, n, room, false);
	return tx_fill(txq, ring, frames, n, room, true);
}

/*
 * Decode a burst of @got slots in @pages that holds fragments' pairs:
 * pages in place, geometry into @metas, bit i of *@frag_mask for the
 * fragments. A burst that ends between a fragment's two slots takes the
 * second as well (it was published with the first). Returns the number
 * of frames. Only for bursts without VETH_SLOT_MORE (rx_mb() takes
 * those). Context: the ring's consumer.
 */
static __attribute__((noinline)) unsigned int
ring_take_pairs(struct pp_ring *ring, struct pp_page **pages, uint64_t *metas,
		uint64_t *frag_mask, unsigned int got)
{
	void **slots = (void **)pages;
	unsigned int s, k = 0;
	uint64_t mask = 0;

	for (s = 0; s < got; k++) {
		uintptr_t v = (uintptr_t)slots[s++];

		if (!(v & VETH_SLOT_META)) {
			pages[k] = (struct pp_page *)v;
			continue;
		}
		if (s == got)
			got += pp_ring_sc_dequeue_burst(ring, &slots[s], 1);
		pages[k] = (struct pp_page *)(v & ~VETH_SLOT_META);
		metas[k] = (uint64_t)(uintptr_t)slots[s++];
		mask |= 1ULL << k;
	}
	*frag_mask = mask;
	return k;
}

/*
 * A buffer for a copy of @len bytes behind @hr of headroom: a fragment
 * when the port asks for them (@frag), else a page. Sets *@doff to the
 * buffer's start and *@room to the bytes behind the headroom that are the
 * copy's to write (whole cache lines of a fragment included).
 */
static inline struct pp_page *rx_buf(struct pp_pool *pool, unsigned int frag,
				     uint32_t hr, uint32_t len, uint32_t *doff,
				     uint32_t *room)
{
	struct pp_page *dst;
	unsigned int size;

	if (frag == PP_NET_FRAG_AUTO) {
		size = hr + ((len + PP_CACHE_LINE - 1) &
			     ~(uint32_t)(PP_CACHE_LINE - 1));
		/* A headroom off the line grid can round past the page. */
		if (size > PP_PAGE_SIZE)
			size = PP_PAGE_SIZE;
		dst = pp_pool_alloc(pool, doff, &size);
		*room = ((size + PP_CACHE_LINE - 1) &
			 ~(uint32_t)(PP_CACHE_LINE - 1)) - hr;
		return dst;
	}
	if (frag && hr + len <= frag) {
		*room = ((frag + PP_CACHE_LINE - 1) &
			 ~(uint32_t)(PP_CACHE_LINE - 1)) - hr;
		return pp_pool_alloc_frag(pool, doff, frag);
	}
	dst = pp_pool_alloc_pages(pool);
	if (PP_LIKELY(dst != NULL)) {
		*doff = pp_net_buf_color(dst, hr, len);
		*room = (uint32_t)PP_PAGE_SIZE - hr - *doff;
	}
	return dst;
}

/*
 * The copy loop of veth_rx_burst(), on @got frames taken off the ring.
 * Inlined twice: with @frag and @frag_mask 0 (whole pages, the common
 * case), where their tests fold away, and as given.
 */
static __attribute__((always_inline)) inline unsigned int
rx_copy(struct pp_rxq *rxq, struct pp_frame *frames, struct pp_page **in,
	const uint64_t *metas, uint64_t frag_mask, unsigned int frag,
	unsigned int got)
{
	struct pp_pool *pool = rxq->pool;
	struct pp_port *port = rxq->port;
	const uint16_t hr = (uint16_t)port->conf.headroom;
	const uint32_t room = (uint32_t)PP_PAGE_SIZE - hr;
	struct pp_page *ret[PP_NET_BURST];
	unsigned int i, k = 0, nr_ret = 0, nobuf = 0, bad = 0;

	/*
	 * The descriptors and data come from the sender's core. Prefetch in
	 * a pipeline (descriptors 2 * VETH_PREFETCH frames ahead, data
	 * VETH_PREFETCH ahead) rather than all 64 at once: a core tracks
	 * only so many misses, and prefetches beyond that are dropped.
	 */
#define FRAME_META(j) \
	(PP_UNLIKELY(frag_mask >> (j) & 1) ? metas[j] : in[j]->private_data)
	for (i = 0; i < got && i < 2 * VETH_PREFETCH; i++)
		__builtin_prefetch(in[i]);
	for (i = 0; i < got && i < VETH_PREFETCH; i++)
		prefetch_data(in[i], FRAME_META(i));

	for (i = 0; i < got; i++) {
		struct pp_page *src = in[i], *dst;
		uint32_t off, doff, droom;
		uint16_t shr, len;
		uint64_t meta;

		if (i + 2 * VETH_PREFETCH < got)
			__builtin_prefetch(in[i + 2 * VETH_PREFETCH]);
		if (i + VETH_PREFETCH < got)
			prefetch_data(in[i + VETH_PREFETCH],
				      FRAME_META(i + VETH_PREFETCH));
		meta = FRAME_META(i);
		off = (uint32_t)(meta >> 32);
		shr = (uint16_t)(meta >> 16);
		len = (uint16_t)meta;

		/*
		 * In-process, but still a device's word: the sender's TX
		 * checked the frame, this end does not trust that it did.
		 * Our own page or not, a bad one goes home uncopied.
		 */
		if (PP_UNLIKELY(!pp_frame_bounds_ok(src, off, shr, len))) {
			ret[nr_ret++] = src;
			bad++;
			continue;
		}
		if (PP_UNLIKELY(pp_page_pool(src) == pool)) {
			/* Our own page came back (a loop): no copy needed. */
			/* offset_word_: checked above, below 2^31. */
			frames[k] = (struct pp_frame){
				.page = src, .offset_word_ = off,
				.headroom = shr, .len = len,
			};
			k++;
			continue;
		}
		ret[nr_ret++] = src;
		/* Longer than our buffer (a frame from a larger block). */
		if (PP_UNLIKELY(len > room)) {
			bad++;
			continue;
		}
		dst = rx_buf(pool, frag, hr, len, &doff, &droom);
		if (PP_UNLIKELY(!dst)) {
			nobuf++;
			continue;
		}
		copy_frame((char *)pp_page_address(dst) + doff + hr,
			   (char *)pp_page_address(src) + off + shr, len,
			   droom, (PP_PAGE_SIZE << src->order) - off - shr);
		frames[k] = (struct pp_frame){
			.page = dst, .offset_word_ = doff,
			.headroom = hr, .len = len,
		};
		k++;
	}
#undef FRAME_META
	/* Sender pages go home in one ring operation per pool; bad ones of
	 * our own pool are recycled directly (this thread owns it). */
	if (nr_ret)
		pp_net_put_pages(port->allocator, pool, ret, nr_ret);
	if (PP_UNLIKELY(nobuf))
		pp_net_stat_add(&rxq->stats.drops, nobuf);
	if (PP_UNLIKELY(bad))
		pp_net_stat_add(&rxq->stats.errors, bad);
	return k;
}

/* One slot off @ring into *@slot; false when it is empty. */
static inline bool take_slot(struct pp_ring *ring, void **slot)
{
	return pp_ring_sc_dequeue_burst(ring, slot, 1) == 1;
}

/*
 * Decode the frame whose first slot is @v (its second, for a fragment, is
 * *@next when @next is not NULL, else taken off @ring). A fragment's
 * geometry missing from the ring (never, from our TX, which enqueues the
 * pair at once) decodes as a frame outside its block, which RX refuses.
 */
static struct veth_seg seg_decode(struct pp_ring *ring, uintptr_t v,
				  void *const *next)
{
	struct pp_page *page = (struct pp_page *)(v & ~VETH_SLOT_TAGS);
	uint64_t meta;
	void *m;

	if (!(v & VETH_SLOT_META))
		meta = page->private_data;
	else if (next)
		meta = (uint64_t)(uintptr_t)*next;
	else
		meta = take_slot(ring, &m) ? (uint64_t)(uintptr_t)m :
					    UINT64_MAX;
	return (struct veth_seg){
		.slot = (uintptr_t)page | (v & VETH_SLOT_MORE), .meta = meta,
	};
}

static inline struct pp_page *seg_page(const struct veth_seg *g)
{
	return (struct pp_page *)(g->slot & ~VETH_SLOT_TAGS);
}

static inline bool seg_more(const struct veth_seg *g)
{
	return g->slot & VETH_SLOT_MORE;
}

/* The offset as the ring held it: all 32 bits, so that one past the
 * frame's 31 fails the bounds check instead of wrapping into them. */
static inline uint32_t seg_off(const struct veth_seg *g)
{
	return (uint32_t)(g->meta >> 32);
}

/*
 * The rest of the packet a burst cut: while the last of the @ns segments
 * in @seg has .more, take the next frame off @ring. The producer enqueued
 * the packet at once, so it is all there; a chain longer than a packet
 * may be (PP_FRAME_MAX_SEGS) keeps one segment over the limit, which
 * makes rx_mb() refuse it, and the rest of it goes home here as it comes
 * (counted with that packet). Returns the new count.
 */
static unsigned int seg_complete(struct pp_rxq *rxq, struct pp_ring *ring,
				 struct veth_seg *seg, unsigned int ns)
{
	unsigned int first;
	bool more = true;
	void *v;

	if (!ns || !seg_more(&seg[ns - 1]))
		return ns;
	/* Where the last packet starts. */
	first = ns - 1;
	while (first && seg_more(&seg[first - 1]))
		first--;
	while (more && take_slot(ring, &v)) {
		struct veth_seg g = seg_decode(ring, (uintptr_t)v, NULL);

		more = seg_more(&g);
		if (ns - first <= PP_FRAME_MAX_SEGS && ns < VETH_SEGS_MAX) {
			seg[ns++] = g;
			continue;
		}
		/* Over the limit: the packet is refused (its last segment
		 * kept has .more); this page goes home now. */
		struct pp_page *page = seg_page(&g);

		pp_net_put_pages(rxq->port->allocator, rxq->pool, &page, 1);
	}
	return ns;
}

/*
 * A packet rx_mb() refuses: more segments than PP_FRAME_MAX_SEGS or a
 * chain cut short (its last segment has .more), a segment outside its
 * block, or one longer than a buffer of our pool holds behind the
 * headroom it gets (the head's the port's, the others none).
 */
static bool seg_pkt_ok(const struct pp_pool *pool, uint32_t hr,
		       const struct veth_seg *seg, unsigned int segs)
{
	if (segs > PP_FRAME_MAX_SEGS || seg_more(&seg[segs - 1]))
		return false;
	for (unsigned int j = 0; j < segs; j++) {
		const struct veth_seg *g = &seg[j];
		uint32_t len = (uint16_t)g->meta;

		if (!pp_frame_bounds_ok(seg_page(g), seg_off(g),
					(uint16_t)(g->meta >> 16), len))
			return false;
		if (pp_page_pool(seg_page(g)) != pool &&
		    len > (uint32_t)PP_PAGE_SIZE - (j ? 0 : hr))
			return false;
	}
	return true;
}

/*
 * Copy the @segs segments of a packet (checked by seg_pkt_ok()) into
 * buffers of the queue's pool, as frames @out; the sender's pages go on
 * @ret. Returns @segs, or 0 when the pool ran out: the buffers taken so
 * far are recycled, every source page is on @ret, and the packet is lost.
 */
static unsigned int seg_copy_pkt(struct pp_rxq *rxq, unsigned int frag,
				 struct pp_frame *out,
				 const struct veth_seg *seg, unsigned int segs,
				 struct pp_page **ret, unsigned int *nr_ret)
{
	struct pp_pool *pool = rxq->pool;
	const uint16_t hr = (uint16_t)rxq->port->conf.headroom;
	unsigned int j;

	for (j = 0; j < segs; j++) {
		const struct veth_seg *g = &seg[j];
		struct pp_page *src = seg_page(g), *dst;
		uint32_t off = seg_off(g), doff, droom;
		uint16_t shr = (uint16_t)(g->meta >> 16), len = (uint16_t)g->meta;
		uint16_t h = j ? 0 : hr;

		if (pp_page_pool(src) == pool) {
			/* Our own page came back (a loop): no copy. */
			out[j] = (struct pp_frame){
				.page = src, .offset = off,
				.headroom = shr, .len = len,
				.more = seg_more(g),
			};
			continue;
		}
		dst = rx_buf(pool, frag, h, len, &doff, &droom);
		if (PP_UNLIKELY(!dst))
			goto nobuf;
		copy_frame((char *)pp_page_address(dst) + doff + h,
			   (char *)pp_page_address(src) + off + shr, len,
			   droom, (PP_PAGE_SIZE << src->order) - off - shr);
		ret[(*nr_ret)++] = src;
		out[j] = (struct pp_frame){
			.page = dst, .offset = doff, .headroom = h, .len = len,
			.more = seg_more(g),
		};
	}
	return segs;

nobuf:
	/* What we hold of the packet is our pool's: back to its cache; the
	 * sources not copied yet go home with the others (ours too: @ret
	 * recycles pages of the queue's pool directly). */
	for (unsigned int i = 0; i < j; i++)
		pp_pool_recycle_direct(pool, out[i].page);
	for (; j < segs; j++)
		ret[(*nr_ret)++] = seg_page(&seg[j]);
	return 0;
}

/*
 * The RX burst for multi-buffer packets, and for the call after one that
 * left a packet in the carry buffer: the carried packet first, then up to
 * @n frames' slots from the ring (@in holds @got already taken), the rest
 * of a packet the burst cut, and whole packets out into @frames. A
 * packet that does not fit in @n is carried to the next call: only the
 * last one can be, as every other lies within the first @n frames.
 */
static __attribute__((noinline)) unsigned int
rx_mb(struct pp_rxq *rxq, struct veth_rxq *vq, struct pp_frame *frames,
      unsigned int n, void **in, unsigned int got)
{
	struct veth_seg seg[VETH_SEGS_MAX];
	struct pp_page *ret[VETH_SEGS_MAX];
	const uint32_t hr = rxq->port->conf.headroom;
	unsigned int ns = vq->nr_carry, s, i, k = 0, nr_ret = 0;
	unsigned int bad = 0, nobuf = 0;

	memcpy(seg, vq->carry, ns * sizeof(seg[0]));
	vq->nr_carry = 0;
	if (ns && ns < n)
		got = pp_ring_sc_dequeue_burst(vq->ring, in, n - ns);
	for (s = 0; s < got; s++) {
		uintptr_t v = (uintptr_t)in[s];

		seg[ns++] = seg_decode(vq->ring, v,
				       (v & VETH_SLOT_META) && s + 1 < got ?
				       &in[s + 1] : NULL);
		s += (v & VETH_SLOT_META) && s + 1 < got;
	}
	/* Only a burst just taken can end inside a packet: a carried one
	 * is whole. */
	if (got)
		ns = seg_complete(rxq, vq->ring, seg, ns);

	for (i = 0; i < ns;) {
		unsigned int segs = 1;

		while (i + segs < ns && seg_more(&seg[i + segs - 1]))
			segs++;
		if (PP_UNLIKELY(!seg_pkt_ok(rxq->pool, hr, &seg[i], segs))) {
			/* Dropped whole, counted once; ours recycled. */
			for (s = 0; s < segs; s++)
				ret[nr_ret++] = seg_page(&seg[i + s]);
			bad++;
		} else if (k + segs > n) {
			break;   /* the caller's next call takes it */
		} else if (seg_copy_pkt(rxq, vq->frag, &frames[k], &seg[i],
					segs, ret, &nr_ret)) {
			k += segs;
		} else {
			nobuf++;
		}
		i += segs;
	}
	vq->nr_carry = ns - i;
	memcpy(vq->carry, &seg[i], vq->nr_carry * sizeof(seg[0]));
	if (nr_ret)
		pp_net_put_pages(rxq->port->allocator, rxq->pool, ret, nr_ret);
	if (nobuf)
		pp_net_stat_add(&rxq->stats.drops, nobuf);
	if (bad)
		pp_net_stat_add(&rxq->stats.errors, bad);
	return k;
}

/* The OR of @n slots: which tags the burst holds. */
static inline uintptr_t slot_tags(void *const *slots, unsigned int n)
{
	uintptr_t tags = 0;

	for (unsigned int s = 0; s < n; s++)
		tags |= (uintptr_t)slots[s];
	return tags & VETH_SLOT_TAGS;
}

static unsigned int veth_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
				  unsigned int n)
{
	struct veth_rxq *vq = rxq->priv;
	struct pp_page *in[PP_NET_BURST + 1];
	uint64_t metas[PP_NET_BURST], frag_mask;
	unsigned int got;
	uintptr_t tags;

	if (n > PP_NET_BURST)
		n = PP_NET_BURST;
	if (PP_UNLIKELY(vq->nr_carry))
		return rx_mb(rxq, vq, frames, n, (void **)in, 0);
	got = pp_ring_sc_dequeue_burst(vq->ring, (void **)in, n);
	if (!got)
		return 0;
	frag_mask = 0;
	tags = slot_tags((void **)in, got);
	/* Whole pages only (no tag): nothing to decode. */
	if (PP_UNLIKELY(tags)) {
		if (tags & VETH_SLOT_MORE)
			return rx_mb(rxq, vq, frames, n, (void **)in, got);
		got = ring_take_pairs(vq->ring, in, metas, &frag_mask, got);
	}
	if (PP_LIKELY(!vq->frag && !frag_mask))
		return rx_copy(rxq, frames, in, metas, 0, 0, got);
	return rx_copy(rxq, frames, in, metas, frag_mask, vq->frag, got);
}

static int veth_setup(struct pp_port *port, const struct pp_devargs *da)
{
	unsigned long ring = port->conf.ring_size;
	struct veth_port *vp;
	unsigned int q, frag;

	if (port->nr_txq > port->nr_rxq) {
		PP_ERR("device '%s': veth needs at least as many RX as TX queues (%u TX, %u RX): each TX queue feeds one RX ring of the peer",
		       da->devstr, port->nr_txq, port->nr_rxq);
		return -EINVAL;
	}
	if (pp_devargs_uint(da, "ring", VETH_RING_MIN, VETH_RING_MAX, &ring))
		return -EINVAL;
	/* Without ring=, the conf's size gets the key's checks: a size
	 * out of range is the caller's mistake, not a failed allocation. */
	if (ring < VETH_RING_MIN || ring > VETH_RING_MAX) {
		PP_ERR("device '%s': pp_port_conf.ring_size %lu is out of range: a veth ring takes %d to %d slots, a power of two (or give ring=)",
		       da->devstr, ring, VETH_RING_MIN, VETH_RING_MAX);
		return -EINVAL;
	}
	if (ring & (ring - 1)) {
		PP_ERR("device '%s': ring size %lu is not a power of two (try %lu)",
		       da->devstr, ring, 1UL << (64 - __builtin_clzl(ring)));
		return -EINVAL;
	}
	/* A fragment holds the headroom and at least a minimum frame. */
	if (pp_devargs_frag(da, port->conf.headroom, PP_NET_FRAG_MIN_FRAME,
			    &frag))
		return -EINVAL;
	vp = pp_os_calloc(1, sizeof(*vp) + port->nr_rxq * sizeof(vp->rxqs[0]));
	if (!vp) {
		PP_ERR("device '%s': out of memory for the veth port",
		       da->devstr);
		return -ENOMEM;
	}
	vp->ring_size = (unsigned int)ring;
	vp->frag = frag;
	for (q = 0; q < port->nr_rxq; q++) {
		struct veth_rxq *vq = pp_os_calloc(1, sizeof(*vq));

		if (!vq) {
			PP_ERR("device '%s': out of memory for RX queue %u",
			       da->devstr, q);
			goto err_free_rings;
		}
		vq->frag = frag;
		vq->ring = pp_os_ring_create(vp->ring_size,
					     PP_RING_F_SP_ENQ |
					     PP_RING_F_SC_DEQ);
		if (!vq->ring) {
			PP_ERR("device '%s': out of memory for RX ring %u (%u slots)",
			       da->devstr, q, vp->ring_size);
			free(vq);
			goto err_free_rings;
		}
		vp->rxqs[q] = vq;
		port->rxq[q].priv = vq;
	}
	port->priv = vp;
	return 0;

err_free_rings:
	while (q--) {
		pp_ring_free(vp->rxqs[q]->ring);
		free(vp->rxqs[q]);
		port->rxq[q].priv = NULL;
	}
	free(vp);
	return -ENOMEM;
}

static void veth_rxq_drain(struct pp_port *port, struct veth_rxq *vq)
{
	struct pp_page *pages[PP_NET_BURST];
	void *slots[PP_NET_BURST];
	bool geometry = false;   /* the next slot is a fragment's meta */
	unsigned int got, s, k;

	for (s = 0; s < vq->nr_carry; s++) {
		struct pp_page *page = seg_page(&vq->carry[s]);

		pp_net_put_pages(port->allocator, NULL, &page, 1);
	}
	vq->nr_carry = 0;
	while ((got = pp_ring_sc_dequeue_burst(vq->ring, slots,
					       PP_NET_BURST))) {
		for (s = k = 0; s < got; s++) {
			uintptr_t v = (uintptr_t)slots[s];

			if (geometry) {
				geometry = false;
				continue;
			}
			geometry = v & VETH_SLOT_META;
			pages[k++] = (struct pp_page *)(v & ~VETH_SLOT_TAGS);
		}
		pp_net_put_pages(port->allocator, NULL, pages, k);
	}
}

/*
 * What this port's RX rings hold, for the reports of where pages are
 * (pp_net_driver_ops.ring_pages): the peer's TX put them there, and this
 * port's RX, on another core, takes them, so the peer stamps nothing (a
 * store per frame would bounce the descriptor's line between the two
 * cores); read here instead, racily, from the consumer's tail to the
 * producer's. A slot tagged VETH_SLOT_META is followed by a geometry,
 * skipped; a misread one only makes a key that matches no page. Pages
 * in the carry buffer are this queue's own, waiting for its next call.
 */
static void veth_ring_pages(struct pp_port *port,
			    void (*fn)(const struct pp_page *page,
				       uint32_t code, void *arg),
			    void *arg)
{
	struct veth_port *vp = port->priv;
	struct pp_port *peer = port->peer;

	for (unsigned int q = 0; vp && q < port->nr_rxq; q++) {
		const struct veth_rxq *vq = vp->rxqs[q];
		const struct pp_ring *r = vq->ring;
		uint32_t code = peer ? PP_HOLDER(PP_HOLDER_TX_RING, peer->id, q) :
				       PP_HOLDER(PP_HOLDER_RX_RING, port->id, q);
		uint32_t i = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
		uint32_t end = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
		unsigned int left = r->size, nr_carry;

		for (; i != end && left; i++, left--) {
			uintptr_t v = (uintptr_t)__atomic_load_n(
				&r->slots[i & r->mask], __ATOMIC_RELAXED);

			fn((const struct pp_page *)(v & ~VETH_SLOT_TAGS), code,
			   arg);
			if (v & VETH_SLOT_META) {
				i++;
				left--;
			}
		}
		nr_carry = __atomic_load_n(&vq->nr_carry, __ATOMIC_RELAXED);
		for (unsigned int k = 0; k < nr_carry && k < VETH_SEGS_MAX; k++)
			fn((const struct pp_page *)(vq->carry[k].slot &
						    ~VETH_SLOT_TAGS),
			   PP_HOLDER(PP_HOLDER_RX_RING, port->id, q), arg);
	}
}

static void veth_remove(struct pp_port *port)
{
	struct veth_port *vp = port->priv;
	unsigned int q;

	if (!vp)
		return;
	for (q = 0; q < port->nr_rxq; q++) {
		/* In-flight frames go back to their pools (any thread). */
		veth_rxq_drain(port, vp->rxqs[q]);
		pp_ring_free(vp->rxqs[q]->ring);
		free(vp->rxqs[q]);
		port->rxq[q].priv = NULL;
	}
	free(vp);
	port->priv = NULL;
}

static int veth_probe(struct pp_port *port, const struct pp_devargs *da)
{
	const char *peer_name = pp_devargs_get(da, "peer");
	struct pp_devargs pda;
	struct pp_port *peer;
	size_t n;
	int ret;

	if (pp_devargs_get(da, VETH_PAIR_KEY))
		return veth_setup(port, da);  /* we are the created peer */
	if (!peer_name) {
		PP_ERR("device '%s': veth needs peer=<name> for the other end of the pair",
		       da->devstr);
		return -EINVAL;
	}
	n = strlen(peer_name);
	if (n >= sizeof(pda.name) || !strcmp(peer_name, da->name)) {
		PP_ERR("device '%s': bad value '%s' for key 'peer': give another port name of at most %zu characters",
		       da->devstr, peer_name, sizeof(pda.name) - 1);
		return -EINVAL;
	}
	ret = veth_setup(port, da);
	if (ret)
		return ret;

	/* The peer shares our conf and ring size. */
	memset(&pda, 0, sizeof(pda));
	pda.devstr = da->devstr;
	memcpy(pda.name, peer_name, n + 1);
	memcpy(pda.driver, "veth", sizeof("veth"));
	pda.key[0] = VETH_PAIR_KEY;
	pda.value[0] = da->name;
	pda.nr = 1;
	if (pp_devargs_get(da, "ring")) {
		pda.key[pda.nr] = "ring";
		pda.value[pda.nr++] = pp_devargs_get(da, "ring");
	}
	if (pp_devargs_get(da, "frag")) {
		pda.key[pda.nr] = "frag";
		pda.value[pda.nr++] = pp_devargs_get(da, "frag");
	}
	peer = pp_net_port_create(&pp_net_veth_driver, &pda, &port->conf);
	if (!peer) {
		veth_remove(port);
		return -errno;
	}
	peer->peer = port;
	peer->peer_owned = true;
	port->peer = peer;
	return 0;
}

static const char *const veth_keys[] = { "peer", "ring", "frag", NULL };

const struct pp_net_driver pp_net_veth_driver = {
	.name = "veth",
	.keys = veth_keys,
	.help = "peer=<name> (required), ring=<64..65536, power of two>, frag=<bytes>|auto (RX copies into fragments)",
	.ops = {
		.probe = veth_probe,
		.remove = veth_remove,
		.rx_burst = veth_rx_burst,
		.tx_burst = veth_tx_burst,
		.ring_pages = veth_ring_pages,
	},
};
