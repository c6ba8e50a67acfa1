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

struct veth_port {
	unsigned int ring_size;
	unsigned int frag;       /* 0: a page per frame; PP_NET_FRAG_AUTO */
	struct pp_ring *rings[]; /* one per RX queue */
};

/*
 * Ring slots hold page pointers. Descriptors are 64-byte aligned, so bit 0
 * is free to say that the next slot holds the frame's geometry (a
 * fragment) instead of the page's private_data. The producer enqueues a
 * pair in one go, so the consumer finds the second slot published.
 */
#define VETH_SLOT_META ((uintptr_t)1)
static_assert(sizeof(void *) == sizeof(uint64_t),
	      "a ring slot carries a frame's 64-bit geometry");
static_assert(sizeof(struct pp_page) % 2 == 0,
	      "bit 0 of a descriptor's address is free");

/* Frames ahead to prefetch; twice that for descriptors. */
#define VETH_PREFETCH 8

static inline void prefetch_data(const struct pp_page *page, uint64_t meta)
{
	__builtin_prefetch((const char *)pp_page_address(page) +
			   (meta >> 32) + ((meta >> 16) & 0xffff));
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
	ring = peer->rxq[txq->idx].priv;
	/*
	 * This thread is the ring's only producer: the room only grows under
	 * it, so what is counted here fits, every enqueue takes all it is
	 * given (a fragment's two slots never split), and what a full ring
	 * refuses is one run at the end of @frames.
	 */
	room = pp_ring_free_count(ring);
	if (PP_LIKELY(room >= 2 * (uint64_t)n))
		return tx_fill(txq, ring, frames, n, room, false);
	return tx_fill(txq, ring, frames, n, room, true);
}

/*
 * Decode a burst of @got slots in @pages that holds fragments' pairs:
 * pages in place, geometry into @metas. See ring_take().
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
 * Take up to @n frames' slots off @ring into @pages (room for @n + 1):
 * their pages and, for fragments (bit i of *@frag_mask), their geometry
 * into @metas. A burst that ends between a fragment's two slots takes the
 * second as well (it was published with the first). Returns the number
 * of frames. Context: the ring's consumer.
 */
static inline unsigned int ring_take(struct pp_ring *ring,
				     struct pp_page **pages, uint64_t *metas,
				     uint64_t *frag_mask, unsigned int n)
{
	unsigned int got, s;
	uintptr_t tags = 0;

	got = pp_ring_sc_dequeue_burst(ring, (void **)pages, n);
	for (s = 0; s < got; s++)
		tags |= (uintptr_t)pages[s];
	*frag_mask = 0;
	if (PP_LIKELY(!(tags & VETH_SLOT_META)))
		return got;   /* whole pages only: nothing to decode */
	return ring_take_pairs(ring, pages, metas, frag_mask, got);
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
			frames[k] = (struct pp_frame){
				.page = src, .offset = off,
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
			.page = dst, .offset = doff,
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

static unsigned int veth_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
				  unsigned int n)
{
	const unsigned int frag = ((struct veth_port *)rxq->port->priv)->frag;
	struct pp_page *in[PP_NET_BURST + 1];
	uint64_t metas[PP_NET_BURST], frag_mask;
	unsigned int got;

	if (n > PP_NET_BURST)
		n = PP_NET_BURST;
	got = ring_take(rxq->priv, in, metas, &frag_mask, n);
	if (!got)
		return 0;
	if (PP_LIKELY(!frag && !frag_mask))
		return rx_copy(rxq, frames, in, metas, 0, 0, got);
	return rx_copy(rxq, frames, in, metas, frag_mask, frag, got);
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
	vp = pp_os_calloc(1, sizeof(*vp) + port->nr_rxq * sizeof(vp->rings[0]));
	if (!vp) {
		PP_ERR("device '%s': out of memory for the veth port",
		       da->devstr);
		return -ENOMEM;
	}
	vp->ring_size = (unsigned int)ring;
	vp->frag = frag;
	for (q = 0; q < port->nr_rxq; q++) {
		vp->rings[q] = pp_os_ring_create(vp->ring_size,
						 PP_RING_F_SP_ENQ |
						 PP_RING_F_SC_DEQ);
		if (!vp->rings[q]) {
			PP_ERR("device '%s': out of memory for RX ring %u (%u slots)",
			       da->devstr, q, vp->ring_size);
			goto err_free_rings;
		}
		port->rxq[q].priv = vp->rings[q];
	}
	port->priv = vp;
	return 0;

err_free_rings:
	while (q--)
		pp_ring_free(vp->rings[q]);
	free(vp);
	return -ENOMEM;
}

static void veth_remove(struct pp_port *port)
{
	struct veth_port *vp = port->priv;
	unsigned int q;

	if (!vp)
		return;
	for (q = 0; q < port->nr_rxq; q++) {
		struct pp_page *pages[PP_NET_BURST + 1];
		uint64_t metas[PP_NET_BURST], frag_mask;
		unsigned int got;

		/* In-flight frames go back to their pools (any thread). */
		while ((got = ring_take(vp->rings[q], pages, metas,
					&frag_mask, PP_NET_BURST)))
			pp_net_put_pages(port->allocator, NULL, pages, got);
		pp_ring_free(vp->rings[q]);
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
	},
};
