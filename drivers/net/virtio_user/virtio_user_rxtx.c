/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio_user_rxtx.c - the virtio_user driver's data path: split
 * virtqueues (virtio 1.1 section 2.6) in which we are the driver and the
 * vhost-user back-end is the device.
 *
 * RX: each buffer is one page of the queue's page_pool, or with frag=SIZE
 * one SIZE-byte fragment of a page (pp_page_pool.h "Fragments"), one
 * descriptor that the device may write. The 12-byte virtio-net header
 * goes in the last bytes of the frame's headroom, so the data lands where
 * a frame's data starts and nothing is copied. TX: the same in reverse:
 * the header is written in front of the data and one descriptor covers
 * both; the page (a fragment's page: the frame is the fragment) stays on
 * the ring until the device returns its id in the used ring, then goes
 * back to its pool (directly when the sending thread owns that pool),
 * with the calls that return pages and fragments alike.
 *
 * The rings are memory the back-end writes, so everything read from the
 * used ring is checked before use (pp_range_ok, pp_frame_bounds_ok, and
 * pp_frame_bounds_end_ok for a fragment): the used index may claim no
 * more entries than we have out, an id must be in range and be one we
 * handed out (pages[id] set), and a length must fit the buffer: the page
 * block, or the fragment (its end kept in rx_end[id]), never the
 * neighbouring fragment of the same page. A bad entry is counted
 * (bad_used, the queue's errors) and never followed. With
 * VIRTIO_F_IN_ORDER the pages come back by position (RX) or by count
 * (TX) and an id is only compared with its position, so no id is
 * followed at all.
 *
 * Multi-buffer packets have their own functions, out of line, so that
 * the single-buffer loops stay as they were: with MRG_RXBUF negotiated
 * (the MTU needs it, or mrg_rxbuf=1) every RX burst is rx_burst_mrg(),
 * which reads each head's num_buffers and hands a packet out whole or
 * not yet; TX's loops stop at the first frame with .more and
 * tx_burst_mb() sends the rest of the burst, a multi-buffer packet as
 * one indirect descriptor (struct vq_mb in virtio_user_priv.h says why).
 *
 * No notifications while polling: the avail ring asks the device never to
 * interrupt us (VRING_AVAIL_F_NO_INTERRUPT), and we kick only when the
 * device has not said it polls (VRING_USED_F_NO_NOTIFY clear); a polling
 * back-end such as DPDK's vhost PMD sets it, so the data path makes no
 * system call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "virtio_user_priv.h"

size_t vq_ring_bytes(unsigned int size)
{
	size_t desc = (size_t)size * sizeof(struct vring_desc);
	size_t avail = 4 + 2 * (size_t)size + 2;
	size_t used_off = (desc + avail + PP_CACHE_LINE - 1) &
			  ~(size_t)(PP_CACHE_LINE - 1);

	return used_off + 4 + 8 * (size_t)size + 2;
}

void vq_layout(struct vq *vq, void *mem, unsigned int size)
{
	size_t desc = (size_t)size * sizeof(struct vring_desc);
	size_t avail = 4 + 2 * (size_t)size + 2;
	size_t used_off = (desc + avail + PP_CACHE_LINE - 1) &
			  ~(size_t)(PP_CACHE_LINE - 1);
	unsigned int i;

	memset(mem, 0, vq_ring_bytes(size));
	vq->desc = mem;
	vq->avail = (struct vring_avail *)((char *)mem + desc);
	vq->used = (struct vring_used *)((char *)mem + used_off);
	vq->size = (uint16_t)size;
	vq->avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	vq->avail_idx = 0;
	vq->last_used = 0;
	vq->nr_free = (uint16_t)size;
	for (i = 0; i < size; i++) {
		vq->pages[i] = NULL;
		/* Slot i always carries descriptor i: written once. */
		vq->avail->ring[i] = (uint16_t)i;
	}
}

/*
 * Kick the device when it asked for kicks. A device that polls says so
 * with VRING_USED_F_NO_NOTIFY, and while it does no barrier is paid: the
 * flag is read straight after the avail index is published. The full
 * barrier that virtio 1.1 2.6.13.8 pairs with the device's (its flags
 * store, then its avail->idx load) is taken only when the flag is seen
 * clear, and there it is needed: it orders our avail->idx store before
 * the flags load, so that one side sees the other's write.
 *
 * Without it on the polling path, a device that clears the flag (to
 * sleep) at the instant we publish may miss that publish: both sides can
 * read the other's old value. The next publish sees the flag clear and
 * kicks; and when no publish follows, the port's reconnect thread kicks
 * (vq_kick_sweep(), every VU_KICK_SWEEP_MS). The barrier drains the store
 * buffer, which holds the burst's descriptor stores to lines the device
 * had: on this path it cost more than a third of a poll's cycles.
 */
static void vq_kick_slow(struct vq *vq)
{
	uint64_t one = 1;
	int saved;
	int fence = 0;

	/* A locked read-modify-write on a local is the full barrier on
	 * x86 at a fraction of mfence's cost (DPDK's rte_smp_mb does the
	 * same); elsewhere it is a seq_cst RMW, a full barrier as well. */
	__atomic_fetch_or(&fence, 0, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&vq->used->flags, __ATOMIC_RELAXED) &
	    VRING_USED_F_NO_NOTIFY || vq->kickfd < 0)
		return;
	saved = errno;
	if (write(vq->kickfd, &one, sizeof(one)) == sizeof(one))
		vq->kicks++;
	errno = saved;
}

static inline void vq_kick(struct vq *vq)
{
	if (PP_LIKELY(__atomic_load_n(&vq->used->flags, __ATOMIC_RELAXED) &
		      VRING_USED_F_NO_NOTIFY))
		return;
	vq_kick_slow(vq);
}

/* Only while @vq is up: the reconnect thread, which alone takes queues
 * down, calls this only while a back-end is there. */
uint16_t vq_kick_sweep(struct vq *vq, uint16_t last)
{
	int fence = 0;
	uint16_t idx;

	__atomic_fetch_or(&fence, 0, __ATOMIC_SEQ_CST);
	idx = __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);
	/* @last moves only with a kick: a device that polled when the index
	 * moved may have stopped before it read it. */
	if (idx != last && vq->kickfd >= 0 &&
	    !(__atomic_load_n(&vq->used->flags, __ATOMIC_RELAXED) &
	      VRING_USED_F_NO_NOTIFY)) {
		uint64_t one = 1;
		int saved = errno;

		if (write(vq->kickfd, &one, sizeof(one)) != sizeof(one))
			idx = last;   /* try again next time */
		errno = saved;
		return idx;
	}
	return last;
}

static inline void vq_publish(struct vq *vq)
{
	/* Release: the descriptors and ring slots written before are
	 * visible to the device once it reads the new index. */
	__atomic_store_n(&vq->avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
	vq_kick(vq);
}

/*
 * How many used entries the device has added since we last looked. The
 * count may not exceed the descriptors we have out: a larger one is a lie
 * (or a ring we no longer share), counted and cut to what can be ours.
 */
static inline uint16_t vq_used_new(struct vq *vq)
{
	/* Acquire: pairs with the device's release of used->idx after
	 * it wrote the entries. */
	uint16_t idx = __atomic_load_n(&vq->used->idx, __ATOMIC_ACQUIRE);
	uint16_t n = (uint16_t)(idx - vq->last_used);
	uint16_t out = (uint16_t)(vq->size - vq->nr_free);

	if (PP_UNLIKELY(!pp_range_ok(0, n, out))) {
		vq->bad_used++;
		n = out;
	}
	return n;
}

/*
 * Read used entry @i once (the device may rewrite it meanwhile) and take
 * its id back; returns the page behind it, or NULL for an id out of
 * range or not ours.
 */
static inline struct pp_page *vq_used_take(struct vq *vq, uint16_t slot,
					   uint32_t *len, uint16_t *id_out)
{
	const volatile struct vring_used_elem *e =
		&vq->used->ring[slot & (vq->size - 1)];
	uint32_t id = e->id;
	struct pp_page *page;

	*len = e->len;
	if (PP_UNLIKELY(!pp_range_ok(id, 1, vq->size)))
		return NULL;
	page = vq->pages[id];
	if (PP_UNLIKELY(!page))
		return NULL;
	vq->pages[id] = NULL;
	vq->nr_free++;
	*id_out = (uint16_t)id;
	return page;
}

/*
 * Descriptor i always goes in avail slot i (mod size), in the order the
 * slots come, as an in-order driver's would: a device that completes in
 * order (DPDK's vhost does) then sees descriptors written in ascending
 * order, and the avail ring's entries never change after the first lap,
 * so its lines are never written again (DPDK's vq_update_avail_ring has
 * the same test). A descriptor still out blocks its slot (the ring looks
 * full) until the device returns it: never two buffers on one id.
 */
static inline void vq_avail_put(struct vq *vq, uint16_t id)
{
	uint16_t *slot = &vq->avail->ring[vq->avail_idx & (vq->size - 1)];

	if (PP_UNLIKELY(*slot != id))
		*slot = id;
	vq->avail_idx++;
}

/*
 * One descriptor in one 16-byte store: the line is the device's (it read
 * the descriptor last lap), and a single store takes one store-buffer
 * entry where four field stores take four, while the ownership request
 * for the line is in flight.
 */
static inline void vq_desc_write(struct vring_desc *d, uint64_t addr,
				 uint32_t len, uint16_t flags)
{
	struct vring_desc v = { .addr = addr, .len = len, .flags = flags };

	memcpy(d, &v, sizeof(v));
}

/* ---- RX ------------------------------------------------------------- */

/* Whole pages, a burst of them at a time. */
static unsigned int vq_rx_refill(struct vq *vq, struct pp_pool *pool,
				 uint64_t stamp)
{
	struct pp_page *pages[PP_NET_BURST];
	/* Locals: the stores below (descriptors, ring slots) may alias
	 * *vq for the compiler, which would reload each field a frame. */
	struct vring_desc *const desc = vq->desc;
	struct pp_page **const out = vq->pages;
	uint32_t *const rx_off = vq->rx_off;
	uint16_t *const ring = vq->avail->ring;
	const uint16_t mask = (uint16_t)(vq->size - 1);
	const uint32_t hr = vq->headroom, hdr = vq->hdr_len;
	const uint32_t color_len = vq->color_len;
	uint16_t aidx = vq->avail_idx, nr_free = vq->nr_free;
	unsigned int total = 0;
	bool blocked = false;

	while (nr_free && !blocked) {
		unsigned int want = nr_free < PP_NET_BURST ? nr_free :
							     PP_NET_BURST;
		unsigned int got = pp_pool_alloc_bulk(pool, pages, want);
		unsigned int i;

		for (i = 0; i < got; i++) {
			struct pp_page *page = pages[i];
			const uint16_t id = aidx & mask;
			uint32_t off = pp_net_buf_color(page, hr, color_len);

			/* The slot's descriptor is still out (the device
			 * completes out of order): post no further. */
			if (PP_UNLIKELY(out[id] != NULL)) {
				blocked = true;
				break;
			}
			nr_free--;
			out[id] = page;
			rx_off[id] = off;
			pp_page_set_where(page, stamp);
			vq_desc_write(&desc[id], (uint64_t)(uintptr_t)
					 pp_page_address(page) + off + hr - hdr,
				      (uint32_t)(((uint64_t)PP_PAGE_SIZE
						  << page->order) - off - hr +
						 hdr),
				      VRING_DESC_F_WRITE);
			/* Slot i always carries descriptor i (see
			 * vq_avail_put()). */
			if (PP_UNLIKELY(ring[id] != id))
				ring[id] = id;
			aidx++;
		}
		total += i;
		/* What a blocked slot left over goes back to the pool. */
		for (; i < got; i++)
			pp_pool_recycle_direct(pool, pages[i]);
		if (got < want)
			break;
	}
	vq->avail_idx = aidx;
	vq->nr_free = nr_free;
	if (total)
		vq_publish(vq);
	return total;
}

static unsigned int vq_rx_refill_frags(struct vq *vq, struct pp_pool *pool,
				       uint64_t stamp);

/* The refill of the ring's kind: @frag is a constant in each inlined
 * copy of a burst, the ring's own at open (vq_rx_fill()). */
static inline __attribute__((always_inline)) unsigned int
vq_rx_refill_mode(struct vq *vq, struct pp_pool *pool, uint64_t stamp,
		  const bool frag)
{
	if (frag)
		return vq_rx_refill_frags(vq, pool, stamp);
	return vq_rx_refill(vq, pool, stamp);
}

/*
 * Whether the back-end's @len (header and data) fits RX buffer @id: the
 * page block's end for a whole page, the fragment's end (rx_end) with
 * frag=. @frag is a constant in each inlined copy of a burst.
 */
static inline __attribute__((always_inline)) bool
vq_rx_len_ok(const struct pp_page *page, const uint32_t *rx_end, uint16_t id,
	     uint32_t off, uint32_t len, uint32_t hdr, uint32_t hr,
	     const bool frag)
{
	/* Header plus at least one byte, all inside our buffer. */
	if (len <= hdr || len - hdr > UINT16_MAX)
		return false;
	if (frag)
		return pp_frame_bounds_end_ok(off, hr, len - hdr, rx_end[id]);
	return pp_frame_bounds_ok(page, off, hr, len - hdr);
}

/*
 * A burst is its queue's owner while it works on the ring: it enters
 * vq->hs, which the reconnect thread holds while the queue is down
 * (vq_take_down() to vq_up()). Where membarrier() works that is a plain
 * store, a compiler barrier and a load; elsewhere one uncontended
 * exchange on the queue's own line a burst (pp_handshake.h). A burst
 * that finds the queue held does nothing. Entering sees the reconnect
 * thread's rewrite of the ring; leaving, this burst's ring work comes
 * before the reconnect thread's (pp_os_handshake.h pairs them).
 */
static inline bool vq_enter(struct vq *vq)
{
	return pp_handshake_try_enter(&vq->hs);
}

static inline void vq_leave(struct vq *vq)
{
	pp_handshake_exit(&vq->hs);
}

static inline __attribute__((always_inline)) unsigned int
rx_burst(struct pp_rxq *rxq, struct vq *vq, struct pp_frame *frames,
	 unsigned int n, const bool frag)
{
	const uint16_t hdr = vq->hdr_len, hr = vq->headroom;
	const uint32_t *const rx_end = frag ? vq->rx_end : NULL;
	unsigned int i, got, ok = 0, bad = 0;

	got = vq_used_new(vq);
	if (got > n)
		got = n;
	for (i = 0; i < got; i++) {
		uint16_t id = 0;
		uint32_t len, off;
		struct pp_page *page = vq_used_take(vq, vq->last_used + i,
						    &len, &id);

		if (PP_UNLIKELY(!page)) {
			vq->bad_used++;
			bad++;
			continue;
		}
		off = vq->rx_off[id];
		if (PP_UNLIKELY(!vq_rx_len_ok(page, rx_end, id, off, len, hdr,
					      hr, frag))) {
			vq->bad_used++;
			pp_pool_recycle_direct(rxq->pool, page);
			bad++;
			continue;
		}
		frames[ok] = (struct pp_frame){
			.page = page, .offset = off,
			.headroom = hr, .len = (uint16_t)(len - hdr),
		};
		ok++;
	}
	vq->last_used = (uint16_t)(vq->last_used + got);
	if (PP_UNLIKELY(bad))
		pp_net_stat_add(&rxq->stats.errors, bad);
	/* Replace what was taken (and catch up after a dry pool). */
	if (vq->nr_free >= PP_NET_BURST / 2 || vq->nr_free == vq->size)
		vq_rx_refill_mode(vq, rxq->pool, pp_net_rx_ring_stamp(rxq), frag);
	return ok;
}

/*
 * An in-order RX poll that found nothing waits a few pause instructions
 * before the caller polls again. The used index shares its line with
 * what the device writes for every frame: read in a tight loop, the line
 * is pulled away from the device between its writes, and where the two
 * threads share a core (a guest's vCPUs may be one core's hyperthreads)
 * the loop takes issue slots from the device too; the device is what
 * limits the rate. Four pauses (a few hundred cycles at most) measured a
 * few per cent more frames from DPDK's vhost and fewer cycles a frame.
 */
#define VQ_IDLE_PAUSES 4

static inline void vq_idle(void)
{
	for (int i = 0; i < VQ_IDLE_PAUSES; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#elif defined(__aarch64__)
		__asm__ __volatile__("yield" ::: "memory");
#endif
	}
}

/*
 * RX with VIRTIO_F_IN_ORDER: used entry p is the p-th buffer we made
 * available, descriptor p (mod size), so its page is taken by position
 * and no id is followed: an entry that names another id, or whose length
 * does not fit the buffer, is refused (its buffer recycled, counted), and
 * no page can be lost or given back twice. Every entry is still read:
 * virtio-net needs each buffer's length.
 */
static inline __attribute__((always_inline)) unsigned int
rx_burst_in_order(struct pp_rxq *rxq, struct vq *vq, struct pp_frame *frames,
		  unsigned int n, const bool frag)
{
	const struct vring_used_elem *const used = vq->used->ring;
	struct pp_page **const out = vq->pages;
	const uint32_t *const rx_off = vq->rx_off;
	const uint32_t *const rx_end = frag ? vq->rx_end : NULL;
	const uint16_t hdr = vq->hdr_len, hr = vq->headroom;
	const uint16_t mask = (uint16_t)(vq->size - 1);
	unsigned int i, got, ok = 0, bad = 0;
	uint16_t pos = vq->last_used;

	got = vq_used_new(vq);
	if (!got) {
		vq_idle();
		goto refill;
	}
	if (got > n)
		got = n;
	for (i = 0; i < got; i++, pos++) {
		const uint16_t slot = pos & mask;
		const volatile struct vring_used_elem *e = &used[slot];
		const uint32_t id = e->id, len = e->len;
		struct pp_page *page = out[slot];
		const uint32_t off = rx_off[slot];
		bool lie;

		out[slot] = NULL;
		lie = id != slot ||
		      !vq_rx_len_ok(page, rx_end, slot, off, len, hdr, hr,
				    frag);
		if (PP_UNLIKELY(lie)) {
			vq->bad_used++;
			pp_pool_recycle_direct(rxq->pool, page);
			bad++;
			continue;
		}
		frames[ok] = (struct pp_frame){
			.page = page, .offset = off,
			.headroom = hr, .len = (uint16_t)(len - hdr),
		};
		ok++;
	}
	vq->last_used = pos;
	vq->nr_free = (uint16_t)(vq->nr_free + got);
	if (PP_UNLIKELY(bad))
		pp_net_stat_add(&rxq->stats.errors, bad);
refill:
	if (vq->nr_free >= PP_NET_BURST / 2 || vq->nr_free == vq->size)
		vq_rx_refill_mode(vq, rxq->pool, pp_net_rx_ring_stamp(rxq), frag);
	return ok;
}

static unsigned int rx_burst_frags(struct pp_rxq *rxq, struct vq *vq,
				   struct pp_frame *frames, unsigned int n);
static unsigned int rx_burst_mrg(struct pp_rxq *rxq, struct vq *vq,
				 struct pp_frame *frames, unsigned int n);

unsigned int virtio_user_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
				  unsigned int n)
{
	struct vq *vq = rxq->priv;
	unsigned int got;

	if (PP_UNLIKELY(!vq_enter(vq)))
		return 0;
	/* Whole pages: the bursts inlined here as before fragments (they
	 * check against the block and read no rx_end); fragments: their
	 * own copies, out of line; mergeable buffers (a packet may lie
	 * over several): their own burst, out of line, which reads every
	 * head's num_buffers. */
	if (PP_UNLIKELY(vq->mrg_rxbuf))
		got = rx_burst_mrg(rxq, vq, frames, n);
	else if (PP_UNLIKELY(vq->frag))
		got = rx_burst_frags(rxq, vq, frames, n);
	else if (PP_LIKELY(vq->in_order))
		got = rx_burst_in_order(rxq, vq, frames, n, false);
	else
		got = rx_burst(rxq, vq, frames, n, false);
	vq_leave(vq);
	return got;
}

/* ---- RX into fragments (frag=) ----------------------------------------- */

static __attribute__((noinline)) unsigned int
rx_burst_frags(struct pp_rxq *rxq, struct vq *vq, struct pp_frame *frames,
	       unsigned int n)
{
	if (PP_LIKELY(vq->in_order))
		return rx_burst_in_order(rxq, vq, frames, n, true);
	return rx_burst(rxq, vq, frames, n, true);
}

/*
 * frag=: each buffer a fragment of vq->frag bytes (pp_pool_alloc_frag(),
 * whole cache lines carved from the block's start), one at a time: the
 * owner's inline path, no atomic while a block lasts. The descriptor
 * covers the header and what the fragment holds after the headroom, up
 * to its end (rx_end), never the next fragment's bytes. No colour: the
 * fragments' offsets already differ.
 */
static unsigned int vq_rx_refill_frags(struct vq *vq, struct pp_pool *pool,
				       uint64_t stamp)
{
	struct vring_desc *const desc = vq->desc;
	struct pp_page **const out = vq->pages;
	uint32_t *const rx_off = vq->rx_off, *const rx_end = vq->rx_end;
	uint16_t *const ring = vq->avail->ring;
	const uint16_t mask = (uint16_t)(vq->size - 1);
	const uint32_t hr = vq->headroom, hdr = vq->hdr_len, frag = vq->frag;
	const uint32_t room = (frag + PP_CACHE_LINE - 1) &
			      ~(uint32_t)(PP_CACHE_LINE - 1);
	uint16_t aidx = vq->avail_idx, nr_free = vq->nr_free;
	unsigned int total = 0;

	while (nr_free) {
		const uint16_t id = aidx & mask;
		struct pp_page *page;
		unsigned int off;
		uint64_t end;

		/* The slot's descriptor is still out: post no further. */
		if (PP_UNLIKELY(out[id] != NULL))
			break;
		page = pp_pool_alloc_frag(pool, &off, frag);
		if (PP_UNLIKELY(!page))
			break;
		end = (uint64_t)off + room;
		if (end > pp_frame_block_end_(page))
			end = pp_frame_block_end_(page);
		nr_free--;
		out[id] = page;
		rx_off[id] = off;
		rx_end[id] = (uint32_t)end;
		pp_page_set_where(page, stamp);
		vq_desc_write(&desc[id], (uint64_t)(uintptr_t)
				 pp_page_address(page) + off + hr - hdr,
			      (uint32_t)(end - off - hr + hdr),
			      VRING_DESC_F_WRITE);
		if (PP_UNLIKELY(ring[id] != id))
			ring[id] = id;
		aidx++;
		total++;
	}
	vq->avail_idx = aidx;
	vq->nr_free = nr_free;
	if (total)
		vq_publish(vq);
	return total;
}

/* ---- RX of mergeable buffers (VIRTIO_NET_F_MRG_RXBUF) ------------------ */

/*
 * With MRG_RXBUF the header's num_buffers says over how many buffers the
 * device spread the packet: the head (header and the first bytes) and
 * num_buffers - 1 more, each a used entry of its own, in a row. The
 * packet leaves as a run of frames, each but the last with .more set:
 * the head's data behind the header as in the single-buffer bursts, a
 * later buffer's data from its descriptor's start (the header's place:
 * headroom hr - hdr), all the device wrote there.
 *
 * Only whole packets leave: a packet whose later buffers are not in the
 * used ring yet, or that does not fit in what is left of @n, is not
 * touched (the used index stays at its head: that is the queue's
 * progress), and is read afresh on the next call. A device that writes
 * them all at once (DPDK's vhost publishes a burst's used entries with
 * one index store) is never waited for.
 *
 * What the device wrote is checked before anything is followed: each
 * entry names a buffer of ours (in order: its position's), a head holds
 * the header and a byte, a later buffer at least a byte, every length
 * within its buffer (pp_frame_bounds_ok(), or the fragment's end), and
 * num_buffers is at least 1 and at most the buffers we have out (so at
 * most the ring). A head whose num_buffers is a lie is refused alone; a
 * chain with a bad later entry, or one longer than PP_FRAME_MAX_SEGS,
 * is refused whole once it is all there. Either way every buffer taken
 * goes back to the pool, one error is counted per packet refused, and
 * each lie in bad_used.
 */

/*
 * Used entry @pos, read once: its length in *@len and the buffer it
 * stands for. In order that is the position's own descriptor, and *@good
 * says whether the entry named it; otherwise the id it names, when in
 * range and out (*@good false and -1 when not: nothing to take back).
 */
static inline int rx_mrg_entry(const struct vq *vq, uint16_t pos,
			       uint32_t *len, bool *good)
{
	const uint16_t slot = pos & (vq->size - 1);
	const volatile struct vring_used_elem *e = &vq->used->ring[slot];
	const uint32_t named = e->id;

	*len = e->len;
	if (vq->in_order) {
		*good = named == slot;
		return slot;
	}
	*good = pp_range_ok(named, 1, vq->size) && vq->pages[named];
	return *good ? (int)named : -1;
}

/* Take buffer @id back off the ring (-1: none); its page, or NULL. */
static inline struct pp_page *rx_mrg_take(struct vq *vq, int id)
{
	struct pp_page *page;

	if (id < 0)
		return NULL;
	page = vq->pages[id];
	vq->pages[id] = NULL;
	vq->nr_free++;
	return page;
}

/* Whether a later buffer's @len (data only, from the descriptor's
 * start) is at least a byte and within buffer @id. */
static inline bool rx_mrg_seg_ok(const struct vq *vq, const struct pp_page *page,
				 int id, uint32_t len)
{
	const uint32_t off = vq->rx_off[id];
	const uint32_t hr = (uint32_t)vq->headroom - vq->hdr_len;

	if (!len || len > UINT16_MAX)
		return false;
	if (vq->frag)
		return pp_frame_bounds_end_ok(off, hr, len, vq->rx_end[id]);
	return pp_frame_bounds_ok(page, off, hr, len);
}

/*
 * The packet at the next used entry, @avail of them there. Returns how
 * many used entries it took: 0 when it waits (see above). Its segments
 * go to @frames (*@got of them, at most @room); *@got is 0 when it was
 * refused, counted in *@errors.
 */
static unsigned int rx_mrg_pkt(struct pp_rxq *rxq, struct vq *vq,
			       struct pp_frame *frames, unsigned int room,
			       uint16_t avail, unsigned int *got,
			       unsigned int *errors)
{
	const uint16_t hdr = vq->hdr_len, hr = vq->headroom;
	const uint16_t pos = vq->last_used;
	struct pp_page *page;
	unsigned int k, out, kept;
	uint32_t len, off;
	bool good, lie = false;
	uint16_t nb;
	int id;

	*got = 0;
	id = rx_mrg_entry(vq, pos, &len, &good);
	if (good) {
		page = vq->pages[id];
		off = vq->rx_off[id];
		good = vq->frag ? vq_rx_len_ok(page, vq->rx_end, (uint16_t)id,
					       off, len, hdr, hr, true) :
				  vq_rx_len_ok(page, NULL, (uint16_t)id, off, len,
					       hdr, hr, false);
	}
	if (!good)
		goto refuse_head;
	/* The header is in our buffer whatever the device claims. */
	memcpy(&nb, (char *)pp_page_address(page) + off + hr - hdr +
			    VIRTIO_NET_HDR_NUM_BUFFERS_OFF, sizeof(nb));
	/* Buffers out, the head's included: more cannot be the packet's. */
	out = (unsigned int)vq->size - vq->nr_free;
	if (PP_UNLIKELY(!nb || nb > out))
		goto refuse_head;
	if (nb > avail || (nb <= PP_FRAME_MAX_SEGS && nb > room))
		return 0;
	rx_mrg_take(vq, id);
	frames[0] = (struct pp_frame){
		.page = page, .offset = off, .headroom = hr,
		.len = (uint16_t)(len - hdr), .more = nb > 1,
	};
	/* Every later entry is taken, whatever happens: the packet is
	 * kept in @frames while all is well (kept segments), and once it
	 * is not, the rest of its buffers go straight back. */
	kept = 1;
	for (k = 1; k < nb; k++) {
		id = rx_mrg_entry(vq, (uint16_t)(pos + k), &len, &good);
		page = rx_mrg_take(vq, id);
		if (PP_UNLIKELY(!good || !rx_mrg_seg_ok(vq, page, id, len)))
			lie = true;
		if (PP_UNLIKELY(lie || nb > PP_FRAME_MAX_SEGS)) {
			if (page)
				pp_pool_recycle_direct(rxq->pool, page);
			continue;
		}
		frames[kept++] = (struct pp_frame){
			.page = page, .offset = vq->rx_off[id],
			.headroom = (uint16_t)(hr - hdr), .len = (uint16_t)len,
			.more = k + 1 < nb,
		};
	}
	if (PP_UNLIKELY(lie || nb > PP_FRAME_MAX_SEGS)) {
		for (k = 0; k < kept; k++)
			pp_pool_recycle_direct(rxq->pool, frames[k].page);
		vq->bad_used += lie;
		(*errors)++;
		return nb;
	}
	*got = nb;
	return nb;

refuse_head:
	page = rx_mrg_take(vq, id);
	if (page)
		pp_pool_recycle_direct(rxq->pool, page);
	vq->bad_used++;
	(*errors)++;
	return 1;
}

static __attribute__((noinline)) unsigned int
rx_burst_mrg(struct pp_rxq *rxq, struct vq *vq, struct pp_frame *frames,
	     unsigned int n)
{
	uint16_t avail = vq_used_new(vq);
	unsigned int ok = 0, errors = 0;

	if (!avail && vq->in_order)
		vq_idle();
	while (avail && ok < n) {
		unsigned int got, used;

		used = rx_mrg_pkt(rxq, vq, frames + ok, n - ok, avail, &got,
				  &errors);
		if (!used)
			break;
		vq->last_used = (uint16_t)(vq->last_used + used);
		avail = (uint16_t)(avail - used);
		ok += got;
	}
	if (PP_UNLIKELY(errors))
		pp_net_stat_add(&rxq->stats.errors, errors);
	if (vq->nr_free >= PP_NET_BURST / 2 || vq->nr_free == vq->size)
		vq_rx_refill_mode(vq, rxq->pool, pp_net_rx_ring_stamp(rxq),
				  vq->frag != 0);
	return ok;
}

/* At open, from the probing thread: whichever kind the ring takes. */
unsigned int vq_rx_fill(struct vq *vq, struct pp_rxq *rxq)
{
	return vq_rx_refill_mode(vq, rxq->pool, pp_net_rx_ring_stamp(rxq),
				 vq->frag != 0);
}

/* ---- TX ------------------------------------------------------------- */

/*
 * The single-buffer loops check a frame's bounds with its offset word
 * (pp_frame.offset_word_) in place of the offset: a frame with .more
 * fails that check as a frame outside its page does, and the loop tells
 * the two apart only in its unlikely branch. One test a frame for both,
 * and no masking.
 */
static inline uint32_t vq_frame_word(const struct pp_frame *f)
{
	return f->offset_word_;
}

/* The frame word's bounds check (pp_frame_bounds_ok() on the word):
 * false for a frame outside its block, and for one with .more set. */
static inline bool vq_frame_single_ok(const struct pp_frame *f, uint32_t w)
{
	return pp_range_ok((uint64_t)w + f->headroom, f->len,
			   pp_frame_block_end_(f->page));
}

/* The data's first byte, from the frame word of a single-buffer frame
 * (.more clear: the word is the offset). */
static inline uintptr_t vq_frame_data(const struct pp_frame *f, uint32_t w)
{
	return (uintptr_t)pp_page_address(f->page) + w + f->headroom;
}

/*
 * A header that asks for nothing (no checksum, no GSO), written only when
 * it is not all zeroes already. It lies in the line before the data, in
 * the headroom the back-end wrote when the page was last received into:
 * a back-end that writes only the fields that change (DPDK's vhost does,
 * and without offloads or mergeable buffers every field stays 0) then
 * leaves the line shared between the two cores, where a store would pull
 * it over here, and the back-end's next write pull it back, each frame.
 */
static inline void vq_hdr_clear(void *h)
{
	uint64_t v8;
	uint32_t v4;

	static_assert(VIRTIO_NET_HDR_LEN == 12, "8 + 4 bytes");
	memcpy(&v8, h, 8);
	memcpy(&v4, (char *)h + 8, 4);
	if (v8 | v4) {
		v8 = 0;
		v4 = 0;
		memcpy(h, &v8, 8);
		memcpy((char *)h + 8, &v4, 4);
	}
}

/*
 * Sent pages back to their pools: the used ring's entries. Pages of the
 * sending thread's pool are recycled here, inline (the loop topology's
 * every page); others go out in bulk.
 */
static void vq_tx_complete(struct vq *vq, struct pp_txq *txq)
{
	struct pp_page *pages[PP_NET_BURST];
	struct pp_pool *napi = txq->napi_pool;
	uint16_t left = vq_used_new(vq);

	while (left) {
		unsigned int i, k = 0;
		uint16_t got = left < PP_NET_BURST ? left : PP_NET_BURST;

		for (i = 0; i < got; i++) {
			uint16_t id;
			uint32_t len;
			struct pp_page *page = vq_used_take(vq,
							    vq->last_used + i,
							    &len, &id);

			if (PP_UNLIKELY(!page)) {
				vq->bad_used++;
				continue;
			}
			if (PP_LIKELY(napi && pp_page_pool(page) == napi)) {
				pp_pool_recycle_direct(napi, page);
				continue;
			}
			pages[k++] = page;
		}
		vq->last_used = (uint16_t)(vq->last_used + got);
		left = (uint16_t)(left - got);
		if (k)
			pp_net_put_pages(txq->port->allocator, NULL,
					 pages, k);
	}
}

static unsigned int tx_burst(struct pp_txq *txq, struct vq *vq,
			     struct pp_frame *frames, unsigned int n)
{
	struct pp_page *foreign[PP_NET_BURST];
	const uint16_t hdr = vq->hdr_len;
	unsigned int i, k = 0, nr_foreign = 0;

	vq_tx_complete(vq, txq);
	if (n > PP_NET_BURST)
		n = PP_NET_BURST;
	if (n > vq->nr_free)
		n = vq->nr_free;
	for (i = 0; i < n; i++) {
		struct pp_frame *f = &frames[i];
		uint16_t id = vq->avail_idx & (vq->size - 1);
		const uint32_t w = vq_frame_word(f);
		uint64_t addr;
		struct vring_desc *d;

		if (PP_UNLIKELY(vq->pages[id] != NULL))
			break;  /* out of order: slot busy, ring full */

		/*
		 * The device reads header and data from the memory table:
		 * a frame outside its page, without room for the header in
		 * its headroom, empty, or on memory the table does not
		 * cover (another arena) is taken and dropped, as af_xdp
		 * does for frames it cannot address. A multi-buffer
		 * packet (.more fails the bounds check, vq_frame_word())
		 * ends the loop: tx_burst_mb() takes it from here.
		 */
		if (PP_UNLIKELY(!vq_frame_single_ok(f, w) ||
				f->headroom < hdr || !f->len)) {
			if (f->more)
				break;
			foreign[nr_foreign++] = f->page;
			continue;
		}
		addr = (uint64_t)vq_frame_data(f, w) - hdr;
		if (PP_UNLIKELY(!pp_range_ok(addr - vq->mem_base,
					     (uint64_t)f->len + hdr,
					     vq->mem_size))) {
			foreign[nr_foreign++] = f->page;
			continue;
		}
		vq_hdr_clear((void *)(uintptr_t)addr);
		vq->nr_free--;
		vq->pages[id] = f->page;
		pp_page_set_where(f->page, pp_net_tx_ring_stamp(txq));
		d = &vq->desc[id];
		vq_desc_write(d, addr, (uint32_t)f->len + hdr, 0);
		vq_avail_put(vq, id);
		k++;
	}
	if (k)
		vq_publish(vq);
	if (PP_UNLIKELY(nr_foreign))
		pp_net_tx_drop(txq, foreign, nr_foreign);
	return i;
}

/*
 * TX completions with VIRTIO_F_IN_ORDER: the device returns descriptors
 * in the order they went out, so the used index alone says which: the
 * oldest n (checked against what is out, vq_used_new()). No used entry is
 * read: a device may write only the last entry of a batch (virtio 1.1
 * 2.6.9), a TX entry carries nothing we use, and the id it names cannot
 * change which pages come back (by position, each once). DPDK's in-order
 * TX reads none either. Reading the batch's last entry cost a cache miss
 * a reclaim (the device had just written the line).
 *
 * Taken back at every burst, all that is done. Taking them back lazily,
 * as DPDK's in-order TX does (only once the ring runs short), measured
 * no fewer cycles and a slightly lower rate here: the used index's line
 * is read on every publish anyway (vq_kick()), and pages that come back
 * at once keep the pool's cache, which the RX refill draws from, full
 * and warm.
 */
static void vq_tx_complete_in_order(struct vq *vq, struct pp_txq *txq)
{
	struct pp_page *pages[PP_NET_BURST];
	struct pp_pool *napi = txq->napi_pool;
	struct pp_page **const out = vq->pages;
	const uint16_t mask = (uint16_t)(vq->size - 1);
	uint16_t n = vq_used_new(vq), pos = vq->last_used, i;
	unsigned int k = 0;

	for (i = 0; i < n; i++, pos++) {
		const uint16_t slot = pos & mask;
		struct pp_page *page = out[slot];

		out[slot] = NULL;
		if (PP_LIKELY(napi && pp_page_pool(page) == napi)) {
			pp_pool_recycle_direct(napi, page);
			continue;
		}
		pages[k++] = page;
		if (k == PP_NET_BURST) {
			pp_net_put_pages(txq->port->allocator, NULL, pages,
					 k);
			k = 0;
		}
	}
	vq->last_used = pos;
	vq->nr_free = (uint16_t)(vq->nr_free + n);
	if (k)
		pp_net_put_pages(txq->port->allocator, NULL, pages, k);
}

static unsigned int tx_burst_in_order(struct pp_txq *txq, struct vq *vq,
				      struct pp_frame *frames, unsigned int n)
{
	struct pp_page *foreign[PP_NET_BURST];
	const uint16_t hdr = vq->hdr_len;
	const uint16_t mask = (uint16_t)(vq->size - 1);
	unsigned int i, k = 0, nr_foreign = 0;
	struct vring_desc *desc;
	struct pp_page **out;
	uint16_t *ring, aidx;
	uintptr_t mem_base;
	uint64_t mem_size;

	const uint64_t stamp = pp_net_tx_ring_stamp(txq);

	vq_tx_complete_in_order(vq, txq);
	if (n > PP_NET_BURST)
		n = PP_NET_BURST;
	if (n > vq->nr_free)
		n = vq->nr_free;
	/* Locals, as in vq_rx_refill(). */
	desc = vq->desc;
	out = vq->pages;
	ring = vq->avail->ring;
	aidx = vq->avail_idx;
	mem_base = vq->mem_base;
	mem_size = vq->mem_size;
	for (i = 0; i < n; i++) {
		struct pp_frame *f = &frames[i];
		const uint16_t id = aidx & mask;
		const uint32_t w = vq_frame_word(f);
		uint64_t addr;

		/* As in tx_burst(). */
		if (PP_UNLIKELY(!vq_frame_single_ok(f, w) ||
				f->headroom < hdr || !f->len)) {
			if (f->more)
				break;
			foreign[nr_foreign++] = f->page;
			continue;
		}
		addr = (uint64_t)vq_frame_data(f, w) - hdr;
		if (PP_UNLIKELY(!pp_range_ok(addr - mem_base,
					     (uint64_t)f->len + hdr,
					     mem_size))) {
			foreign[nr_foreign++] = f->page;
			continue;
		}
		vq_hdr_clear((void *)(uintptr_t)addr);
		out[id] = f->page;
		pp_page_set_where(f->page, stamp);
		vq_desc_write(&desc[id], addr, (uint32_t)f->len + hdr, 0);
		if (PP_UNLIKELY(ring[id] != id))
			ring[id] = id;
		aidx++;
		k++;
	}
	if (k) {
		vq->avail_idx = aidx;
		vq->nr_free = (uint16_t)(vq->nr_free - k);
		vq_publish(vq);
	}
	if (PP_UNLIKELY(nr_foreign))
		pp_net_tx_drop(txq, foreign, nr_foreign);
	return i;
}

/* ---- TX of multi-buffer packets ----------------------------------------- */

/*
 * Whether packet @f (@segs segments) can go out whole: the head with
 * room for the header in its headroom, every segment in its page,
 * carrying a byte at least, and on memory the table covers; at most
 * PP_FRAME_MAX_SEGS segments, and more than one only where chains can
 * go (vq_mb, VIRTIO_RING_F_INDIRECT_DESC negotiated).
 */
static bool tx_mb_ok(const struct vq *vq, const struct pp_frame *f,
		     unsigned int segs)
{
	const uint16_t hdr = vq->hdr_len;
	unsigned int k;

	if (segs > PP_FRAME_MAX_SEGS ||
	    (segs > 1 && (!vq->mb || !vq->mb->indirect)) ||
	    f[0].headroom < hdr)
		return false;
	for (k = 0; k < segs; k++) {
		uint64_t addr = (uint64_t)(uintptr_t)pp_frame_data(&f[k]);
		uint64_t len = f[k].len;

		if (!k) {
			addr -= hdr;
			len += hdr;
		}
		if (!pp_frame_valid(&f[k]) || !f[k].len ||
		    !pp_range_ok(addr - vq->mem_base, len, vq->mem_size))
			return false;
	}
	return true;
}

/*
 * Packet @f of @segs (> 1) segments into slot @id: its indirect table
 * (the header in front of the head's data, then each segment), the ring
 * descriptor pointing at it, and our record of the pages.
 */
static void tx_mb_chain(struct vq *vq, uint16_t id, uint64_t stamp,
			const struct pp_frame *f,
			unsigned int segs)
{
	struct vq_mb *mb = vq->mb;
	struct vring_desc *t = mb->ind + (size_t)id * PP_FRAME_MAX_SEGS;
	struct pp_page **pages = mb->segs + (size_t)id * PP_FRAME_MAX_SEGS;
	const uint16_t hdr = vq->hdr_len;
	unsigned int k;

	for (k = 0; k < segs; k++) {
		uint64_t addr = (uint64_t)(uintptr_t)pp_frame_data(&f[k]);
		uint32_t len = f[k].len;

		if (!k) {
			addr -= hdr;
			len += hdr;
			vq_hdr_clear((void *)(uintptr_t)addr);
		}
		t[k] = (struct vring_desc){
			.addr = addr, .len = len,
			.flags = k + 1 < segs ? VRING_DESC_F_NEXT : 0,
			.next = (uint16_t)(k + 1 < segs ? k + 1 : 0),
		};
		pages[k] = f[k].page;
		pp_page_set_where(f[k].page, stamp);
	}
	mb->nsegs[id] = (uint8_t)segs;
	vq_desc_write(&vq->desc[id], (uint64_t)(uintptr_t)t,
		      (uint32_t)(segs * sizeof(*t)), VRING_DESC_F_INDIRECT);
	vq->pages[id] = (struct pp_page *)((uintptr_t)f[0].page |
					    VQ_CHAIN_TAG);
	mb->chains++;
}

/*
 * The rest of a burst from its first multi-buffer packet on (after the
 * single-buffer loop stopped there), packet by packet: whole or not at
 * all. A packet that cannot go out (tx_mb_ok()) is taken and dropped
 * whole, one error; an unfinished one at the end is not taken
 * (pp_burst_whole()); a full ring stops the burst before a packet. A
 * single-buffer packet among them goes out as the fast loops send one.
 */
static __attribute__((noinline)) unsigned int
tx_burst_mb(struct pp_txq *txq, struct vq *vq, struct pp_frame *frames,
	    unsigned int n)
{
	struct pp_page *drop[PP_NET_BURST];
	const uint16_t hdr = vq->hdr_len;
	const uint16_t mask = (uint16_t)(vq->size - 1);
	unsigned int i = 0, k, sent = 0, nr_drop = 0, errors = 0;

	n = pp_burst_whole(frames, n < PP_NET_BURST ? n : PP_NET_BURST);
	while (i < n) {
		unsigned int segs = pp_pkt_segs(frames + i, n - i);
		const uint16_t id = vq->avail_idx & mask;

		if (!vq->nr_free || vq->pages[id])
			break;
		if (PP_UNLIKELY(!tx_mb_ok(vq, frames + i, segs))) {
			for (k = 0; k < segs; k++)
				drop[nr_drop++] = frames[i + k].page;
			errors++;
			i += segs;
			continue;
		}
		if (segs == 1) {
			uint64_t addr = (uint64_t)(uintptr_t)
						pp_frame_data(&frames[i]) - hdr;

			vq_hdr_clear((void *)(uintptr_t)addr);
			vq_desc_write(&vq->desc[id], addr,
				      (uint32_t)frames[i].len + hdr, 0);
			vq->pages[id] = frames[i].page;
			pp_page_set_where(frames[i].page,
					  pp_net_tx_ring_stamp(txq));
		} else {
			tx_mb_chain(vq, id, pp_net_tx_ring_stamp(txq),
				    frames + i, segs);
		}
		vq->nr_free--;
		vq_avail_put(vq, id);
		sent++;
		i += segs;
	}
	if (sent)
		vq_publish(vq);
	if (PP_UNLIKELY(nr_drop)) {
		pp_net_put_pages(txq->port->allocator, txq->napi_pool, drop,
				 nr_drop);
		pp_net_stat_add(&txq->stats.errors, errors);
	}
	return i;
}

/*
 * TX completions while chains are on the ring (vq_mb.chains): what the
 * single-buffer loops' completions do (by position in order, by id
 * otherwise, checked alike), and a chain's slot (its pages[] entry
 * tagged, VQ_CHAIN_TAG) gives back every segment from our own record
 * of them. Out of line, so that the fast completions test no tag.
 */
static __attribute__((noinline)) void
vq_tx_complete_mb(struct vq *vq, struct pp_txq *txq)
{
	struct vq_mb *mb = vq->mb;
	const uint16_t mask = (uint16_t)(vq->size - 1);
	uint16_t n = vq_used_new(vq), i;

	for (i = 0; i < n; i++) {
		const uint16_t pos = (uint16_t)(vq->last_used + i);
		struct pp_page *page;
		uint16_t id = pos & mask;
		uint32_t len;

		if (vq->in_order) {
			page = vq->pages[id];
			vq->pages[id] = NULL;
			vq->nr_free++;
		} else {
			page = vq_used_take(vq, pos, &len, &id);
			if (PP_UNLIKELY(!page)) {
				vq->bad_used++;
				continue;
			}
		}
		if ((uintptr_t)page & VQ_CHAIN_TAG) {
			pp_net_put_pages(txq->port->allocator, txq->napi_pool,
					 mb->segs + (size_t)id * PP_FRAME_MAX_SEGS,
					 mb->nsegs[id]);
			mb->chains--;
			continue;
		}
		pp_net_put_pages(txq->port->allocator, txq->napi_pool, &page, 1);
	}
	vq->last_used = (uint16_t)(vq->last_used + n);
}

unsigned int virtio_user_tx_burst(struct pp_txq *txq, struct pp_frame *frames,
				  unsigned int n)
{
	struct vq *vq = txq->priv;
	unsigned int sent;

	/* No back-end: nothing is taken (the caller keeps or drops). */
	if (PP_UNLIKELY(!vq_enter(vq)))
		return 0;
	/*
	 * Chains on the ring: the whole burst out of line, completions
	 * and all, so that the single-buffer loops' completions never meet
	 * a chain's tagged slot (not even one the device returns while
	 * the burst runs). Otherwise the single-buffer loops, which stop
	 * at a multi-buffer packet.
	 */
	if (PP_UNLIKELY(vq->mb && vq->mb->chains)) {
		vq_tx_complete_mb(vq, txq);
		sent = tx_burst_mb(txq, vq, frames, n);
	} else {
		if (PP_LIKELY(vq->in_order))
			sent = tx_burst_in_order(txq, vq, frames, n);
		else
			sent = tx_burst(txq, vq, frames, n);
		if (PP_UNLIKELY(sent < n && frames[sent].more))
			sent += tx_burst_mb(txq, vq, frames + sent, n - sent);
	}
	vq_leave(vq);
	return sent;
}

/*
 * The reconnect thread's side: hold @vq (wait for a burst in progress),
 * take every page off its ring and reset the ring to empty. The hold
 * stays until vq_up(), once the new back-end knows the ring: the queue
 * is down meanwhile, and bursts do nothing.
 */
void vq_take_down(struct vq *vq, struct pp_allocator *alloc)
{
	pp_handshake_hold(&vq->hs);
	vq_reclaim(vq, alloc);
	vq_layout(vq, vq->desc, vq->size);
}

void vq_up(struct vq *vq)
{
	pp_handshake_release(&vq->hs);
}

/* ---- teardown ------------------------------------------------------- */

void vq_reclaim(struct vq *vq, struct pp_allocator *alloc)
{
	struct pp_page *batch[PP_NET_BURST];
	unsigned int i, k = 0;

	if (!vq->pages)
		return;
	for (i = 0; i < vq->size; i++) {
		if (!vq->pages[i])
			continue;
		if ((uintptr_t)vq->pages[i] & VQ_CHAIN_TAG) {
			/* A TX chain: all its segments (vq_mb). */
			pp_net_put_pages(alloc, NULL, vq->mb->segs +
					 (size_t)i * PP_FRAME_MAX_SEGS,
					 vq->mb->nsegs[i]);
			vq->mb->chains--;
			vq->pages[i] = NULL;
			continue;
		}
		batch[k++] = vq->pages[i];
		vq->pages[i] = NULL;
		if (k == PP_NET_BURST) {
			pp_net_put_pages(alloc, NULL, batch, k);
			k = 0;
		}
	}
	if (k)
		pp_net_put_pages(alloc, NULL, batch, k);
	vq->nr_free = vq->size;
}
