/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_af_xdp.c - the AF_XDP driver's data path (af_xdp_rxtx.c) against a
 * kernel that lies, on a 1024-page arena of 4 KiB pages.
 *
 * The target plays the kernel. One struct xdp_queue gets four rings in
 * this file's memory (producer, consumer and flags words, the entry
 * arrays), set up as libxdp sets up the rings it maps, starting at an
 * index from the input so the 32-bit indices wrap; its fd is -1, so a
 * kick is a failed system call, after which errno must be as it was. The
 * UMEM is the whole arena, as the driver registers it.
 *
 * Why a port, an RX queue and a TX queue of our own rather than lib/net's:
 * the bursts read only rxq->{priv, pool, stats}, txq->{priv, napi_pool,
 * stats} and port->allocator. A null port opened for its queues would
 * bring a driver whose priv we would displace and whose remove() would
 * run on our queue, for nothing the three structs here do not give.
 *
 * The input is a program for the kernel, one step a byte:
 *   - take entries from the fill ring (the kernel now holds those pages);
 *   - write RX descriptors: honest (a page it holds, at the usual 256-byte
 *     headroom or anywhere in the page), replayed (already delivered),
 *     wild (past the UMEM, near 2^32 and 2^64), another page (never given
 *     to it), a page the driver has on the TX ring, a fill-ring page it
 *     has not taken yet; lengths typical, small, 0, exactly to the page's
 *     end, past it, near 2^32; options set or not;
 *   - call the RX burst with a budget of 0 to 64;
 *   - send: frames the app received (as they came or re-shaped), fresh
 *     pages of the pool and order-1 blocks of a second pool, with offset,
 *     headroom and length near 0, the page's end, 2^16 and 2^32;
 *   - take descriptors from the TX ring; write completions: honest (in
 *     order or not), replayed, wild, never sent, a fill-ring page;
 *   - reap completions (af_xdp_complete, or an empty TX burst);
 *   - the app returns frames, flips need_wakeup, tops up the fill ring.
 *
 * A model keeps each page's state (the pool's, in the fill ring or the
 * kernel's hands from it, the app's, on the TX side) and says what the
 * driver must do with every descriptor; after each step:
 *   - the RX burst returned exactly the descriptors the model accepts, in
 *     order, each frame at its page with the kernel's offset and length,
 *     inside the page (both ends written); a page the app holds is never
 *     handed out again, and the fill ring never gets a page that is not
 *     the pool's;
 *   - every TX descriptor lies inside the UMEM and inside its frame's page
 *     (64-bit sums), is not empty, and is the frame's data; the burst took
 *     min(frames, free slots), and the frames it could not send are
 *     counted and back in their pools;
 *   - each page's tag (private_data) agrees with the model, so no page is
 *     both in the app's hands and in a ring; the pool's in-flight count is
 *     what the rings and the app hold;
 *   - bad_desc and the RX errors move by exactly the descriptors the model
 *     refuses, bad_comp by the completions it refuses, the TX errors by
 *     the frames it cannot send, and tx_outstanding is the pages on the
 *     TX side: each moves when, and only when, someone lied.
 * At the end the app returns what it holds, af_xdp_queue_reclaim takes
 * back what the kernel kept, both pools are destroyed with nothing in
 * flight and no page is left allocated.
 *
 * Multi-buffer (a socket bound with XDP_USE_SG; the setup byte's top bit
 * picks it, and af_xdp_rxtx_mb.c's bursts run): the kernel also writes
 * chains, honest (two or three descriptors, XDP_PKT_CONTD on all but the
 * last), too long (up to 24), endless (XDP_PKT_CONTD on every one, so
 * the ring fills mid-chain or the chain is left unfinished), with bad
 * addresses and lengths inside; the app sends packets of several
 * segments, some too long for the chain limit (tx_max_segs, 1 to 18 as
 * a zero-copy device would say), some unfinished at the burst's end.
 * The model walks the chains as the kernel's word says: a whole chain of
 * good descriptors comes back as one packet of frames with .more on all
 * but the last, or waits (unfinished so far, or larger than the burst);
 * a chain with a bad descriptor, longer than PP_FRAME_MAX_SEGS, or
 * filling the whole ring without an end, is refused whole (one RX error,
 * every page of ours back to the pool) together with the rest of it
 * still to come; TX takes packets whole or not at all, drops a bad one
 * whole with one error, never ends inside a packet, and marks every
 * descriptor of a chain but the last with XDP_PKT_CONTD.
 */
#include <errno.h>

#include <linux/if_xdp.h>

#include <pagepool/pp_net_driver.h>

#include "af_xdp_priv.h"
#include "fuzz_common.h"

#define ARENA_PAGES 1024
#define RING_MAX 128            /* RX, TX, completion; the fill ring twice */
#define LIST_MAX 512
#define HISTORY 64
#define TX_MAX 64
#define STEPS_MAX 400
#define ERRNO_MARK 4242

enum { M_OUT, M_FILL, M_APP, M_TX, M_STATES };

/* The kernel's side of one ring: its indices and flags word. */
struct kring {
	uint32_t producer;
	uint32_t consumer;
	uint32_t flags;
};

/* Addresses in order; the oldest one goes when it is full. */
struct addr_list {
	uint64_t a[LIST_MAX];
	unsigned int n;
	unsigned int cap;
};

struct sim {
	struct fuzz_env *env;
	struct pp_pool *pool;       /* the RX queue's */
	struct pp_pool *pool2;      /* order 1: the driver must refuse them */
	struct pp_port port;
	struct pp_rxq rxq;
	struct pp_txq txq;
	unsigned int size;          /* RX, TX and completion ring entries */
	char *base;
	struct pp_page *first;
	uint64_t umem_size;
	unsigned int npages;
	uint64_t tag;
	/* the model */
	uint8_t st[ARENA_PAGES];
	unsigned int count[M_STATES];
	unsigned int app2;          /* pool2 blocks the app holds */
	struct pp_frame app[ARENA_PAGES];
	unsigned int nr_app;
	uint64_t bad_desc, bad_comp, tx_err;
	uint64_t rx_err;            /* RX errors: bad descriptors, or (sg)
				     * refused chains */
	uint64_t bad_chain;
	bool sg;                    /* the multi-buffer bursts */
	bool rx_skip;               /* the model's: dropping a chain's rest */
	uint32_t fill_seen;         /* fill entries the model has read */
	/* the kernel */
	struct addr_list held;      /* taken from the fill ring */
	struct addr_list delivered; /* history, for replays */
	struct addr_list sent;      /* taken from the TX ring */
	struct addr_list completed; /* history, for replays */
};

static struct xdp_queue xq;
static struct kring k_fill, k_rx, k_tx, k_comp;
static uint64_t fill_ring[2 * RING_MAX], comp_ring[RING_MAX];
static struct xdp_desc rx_ring[RING_MAX], tx_ring[RING_MAX];
static struct sim sim;

/* ---- bits ----------------------------------------------------------- */

static void list_push(struct addr_list *l, uint64_t a)
{
	if (l->n == l->cap) {
		memmove(l->a, l->a + 1, (l->n - 1) * sizeof(l->a[0]));
		l->n--;
	}
	l->a[l->n++] = a;
}

static uint64_t list_take(struct addr_list *l, unsigned int i)
{
	uint64_t a = l->a[i];

	memmove(l->a + i, l->a + i + 1, (l->n - i - 1) * sizeof(l->a[0]));
	l->n--;
	return a;
}

static void set_state(struct sim *s, unsigned int i, uint8_t st)
{
	s->count[s->st[i]]--;
	s->st[i] = st;
	s->count[st]++;
}

static unsigned int page_index(const struct sim *s, const struct pp_page *p)
{
	FUZZ_CHECK(p >= s->first && p < s->first + s->npages);
	return (unsigned int)(p - s->first);
}

static uint64_t page_addr(unsigned int i)
{
	return (uint64_t)i << PP_PAGE_SHIFT;
}

/* A frame of the model: order 0, data in the page, not empty. */
static bool model_tx_ok(const struct pp_frame *f)
{
	return f->page->order == 0 && f->len != 0 &&
	       (uint64_t)f->offset + f->headroom + f->len <= PP_PAGE_SIZE;
}

/* Offset, headroom and length near 0, the block's end, 2^16 and 2^32. */
static void pick_geometry(struct fuzz_in *in, struct pp_frame *f)
{
	uint64_t block = (uint64_t)PP_PAGE_SIZE << f->page->order;
	uint8_t k = fuzz_u8(in);
	uint16_t r1 = fuzz_u16(in), r2 = fuzz_u16(in), r3 = fuzz_u16(in);
	uint64_t end;

	switch (k & 3) {
	case 0: f->offset = 0; break;
	case 1: f->offset = r1 & (uint32_t)(block - 1); break;
	case 2: f->offset = (uint32_t)(block - (r1 & 0xff)); break;
	default: f->offset = 0u - (uint32_t)(r1 & 0xff); break;
	}
	switch ((k >> 2) & 3) {
	case 0: f->headroom = 0; break;
	case 1: f->headroom = PP_FRAME_HEADROOM; break;
	case 2: f->headroom = (uint16_t)(r2 & 0xfff); break;
	default: f->headroom = (uint16_t)(0xffff - (r2 & 0xff)); break;
	}
	end = (uint64_t)f->offset + f->headroom;
	switch ((k >> 4) & 7) {
	case 0: f->len = (uint16_t)(60 + r3 % 1455); break;
	case 1: f->len = 0; break;
	case 2: /* to the block's last byte, or past when that is too far */
		f->len = (uint16_t)(end <= block ? block - end : r3);
		break;
	case 3: f->len = (uint16_t)(end < block ? block - end + 1 : r3); break;
	case 4: f->len = 0xffff; break;
	case 5: f->len = r3; break;
	case 6: f->len = 1; break;
	default: f->len = (uint16_t)(r3 & 0xff); break;
	}
}

static void app_add(struct sim *s, const struct pp_frame *f)
{
	FUZZ_CHECK(s->nr_app < ARENA_PAGES);
	s->app[s->nr_app++] = *f;
}

static struct pp_frame app_take(struct sim *s, unsigned int i)
{
	struct pp_frame f = s->app[i];

	s->app[i] = s->app[--s->nr_app];
	return f;
}

/* The app is done with a page it holds: back to its pool. */
static void app_return(struct sim *s, struct pp_page *page)
{
	unsigned int i = page_index(s, page);

	FUZZ_CHECK(s->st[i] == M_APP);
	if (page->order)
		s->app2--;
	set_state(s, i, M_OUT);
	pp_pool_recycle_direct(pp_page_pool(page), page);
}

/* ---- the checks after every step ------------------------------------ */

/* Entries the driver put in the fill ring since the last look. */
static void scan_fill(struct sim *s)
{
	const uint32_t mask = xq.fill.mask;

	FUZZ_CHECK(k_fill.producer - k_fill.consumer <= xq.fill.size);
	while (s->fill_seen != k_fill.producer) {
		uint64_t a = fill_ring[s->fill_seen & mask];
		unsigned int i = (unsigned int)(a >> PP_PAGE_SHIFT);

		FUZZ_CHECK(a < s->umem_size && !(a & (PP_PAGE_SIZE - 1)));
		/* Only a page of the pool's goes in: never one held. */
		FUZZ_CHECK(s->st[i] == M_OUT);
		FUZZ_CHECK(pp_page_pool(s->first + i) == s->pool);
		set_state(s, i, M_FILL);
		s->fill_seen++;
	}
}

static void check_all(struct sim *s)
{
	struct pp_pool_stats ps;
	unsigned int i;

	scan_fill(s);
	for (i = 0; i < s->npages; i++) {
		uint64_t t = s->first[i].private_data;
		bool ours = (t & ~(uint64_t)XDP_TAG_RINGS) == s->tag &&
			    (t & XDP_TAG_RINGS);

		switch (s->st[i]) {
		case M_FILL:
			FUZZ_CHECK(t == (s->tag | XDP_TAG_FILL));
			break;
		case M_TX:
			FUZZ_CHECK(t == (s->tag | XDP_TAG_TX));
			break;
		default:
			FUZZ_CHECK(!ours);
			break;
		}
	}
	for (i = 0; i < s->nr_app; i++)
		FUZZ_CHECK(s->st[page_index(s, s->app[i].page)] == M_APP);
	FUZZ_CHECK(s->count[M_APP] == s->nr_app);
	FUZZ_CHECK(pp_pool_get_stats(s->pool, &ps) == 0);
	FUZZ_CHECK(ps.inflight == s->count[M_FILL] + s->count[M_TX] +
				  s->count[M_APP] - s->app2);
	FUZZ_CHECK(pp_pool_get_stats(s->pool2, &ps) == 0);
	FUZZ_CHECK(ps.inflight == s->app2);
	FUZZ_CHECK(xq.bad_desc == s->bad_desc);
	FUZZ_CHECK(s->rxq.stats.errors == s->rx_err);
	FUZZ_CHECK(xq.bad_chain == s->bad_chain);
	FUZZ_CHECK(xq.rx_skip == s->rx_skip);
	FUZZ_CHECK(xq.bad_comp == s->bad_comp);
	FUZZ_CHECK(s->txq.stats.errors == s->tx_err);
	FUZZ_CHECK(xq.tx_outstanding == s->count[M_TX]);
	/* What the kernel holds for RX, as the driver counts it: the
	 * pages of its fill ring not yet back, never above the level. */
	FUZZ_CHECK(xq.rx_held == s->count[M_FILL]);
	FUZZ_CHECK(xq.rx_held <= xq.rx_level);
	FUZZ_CHECK(k_rx.producer - k_rx.consumer <= s->size);
	FUZZ_CHECK(k_tx.producer - k_tx.consumer <= s->size);
	FUZZ_CHECK(k_comp.producer - k_comp.consumer <= s->size);
}

/* ---- the kernel ----------------------------------------------------- */

static void k_take_fill(struct sim *s, struct fuzz_in *in)
{
	uint32_t avail = k_fill.producer - k_fill.consumer;
	uint32_t n = fuzz_u8(in) % (avail + 1);

	while (n--) {
		list_push(&s->held, fill_ring[k_fill.consumer & xq.fill.mask]);
		k_fill.consumer++;
	}
}

/* An address past the UMEM: just past, near 2^32, near 2^64, any. */
static uint64_t wild_addr(struct sim *s, struct fuzz_in *in)
{
	uint8_t k = fuzz_u8(in);
	uint32_t r = fuzz_u32(in);

	switch (k & 3) {
	case 0: return s->umem_size + (r & 0xffff);
	case 1: return 0x100000000ull - (r & 0xffff);
	case 2: return 0ull - 1 - (r & 0xffff);
	default: return s->umem_size + ((uint64_t)r << 12) + (k >> 2);
	}
}

/* A page on the TX side, by the model; or any page when there is none. */
static uint64_t tx_side_page(struct sim *s, struct fuzz_in *in)
{
	unsigned int start = fuzz_u16(in) % s->npages, i;

	for (i = 0; i < s->npages; i++) {
		unsigned int p = (start + i) % s->npages;

		if (s->st[p] == M_TX)
			return page_addr(p);
	}
	return page_addr(start);
}

/*
 * One RX descriptor as the kernel may write it (not yet published):
 * honest or not, by the input.
 */
static struct xdp_desc *k_rx_desc(struct sim *s, struct fuzz_in *in)
{
	uint8_t k = fuzz_u8(in);
	uint16_t r = fuzz_u16(in);
	uint32_t off = (k & 0x80) ? (r & (PP_PAGE_SIZE - 1))
				  : PP_FRAME_HEADROOM;
	uint64_t addr;
	uint32_t len, to_end;
	struct xdp_desc *d;

	switch (k & 7) {
	case 0: case 1: case 2: /* honest, when it holds a page */
		if (s->held.n) {
			addr = list_take(&s->held, r % s->held.n);
			list_push(&s->delivered, addr);
			addr += off;
			break;
		}
		/* fall through */
	case 3: /* replayed */
		if (s->delivered.n) {
			addr = s->delivered.a[r % s->delivered.n] + off;
			break;
		}
		/* fall through */
	case 4:
		addr = wild_addr(s, in);
		break;
	case 5: /* a page it was never given */
		addr = page_addr(r % s->npages) + off;
		break;
	case 6:
		addr = tx_side_page(s, in) + off;
		break;
	default: { /* in the fill ring, not taken yet */
		uint32_t avail = k_fill.producer - k_fill.consumer;

		addr = avail ? fill_ring[(k_fill.consumer + r % avail) &
					  xq.fill.mask] + off
			     : wild_addr(s, in);
		break;
	}
	}
	to_end = PP_PAGE_SIZE - (uint32_t)(addr & (PP_PAGE_SIZE - 1));
	switch ((k >> 3) & 7) {
	case 0: case 1: len = 60 + fuzz_u16(in) % 1455; break;
	case 2: len = 1 + fuzz_u8(in); break;
	case 3: len = to_end; break;
	case 4: len = to_end + 1 + fuzz_u8(in); break;
	case 5: len = 0; break;
	case 6: len = 0xffffffffu - fuzz_u8(in); break;
	default: len = fuzz_u32(in); break;
	}
	d = &rx_ring[k_rx.producer & xq.rx.mask];
	d->addr = addr;
	d->len = len;
	d->options = (k & 0x40) ? fuzz_u32(in) : 0;
	return d;
}

static void k_rx_publish(void)
{
	__atomic_store_n(&k_rx.producer, k_rx.producer + 1, __ATOMIC_RELEASE);
}

/*
 * A chain (multi-buffer): @c descriptors, XDP_PKT_CONTD on all but the
 * last, or on every one (endless); other option bits set or not (the
 * driver reads only XDP_PKT_CONTD). Stops where the ring is full.
 */
static void k_write_rx_chain(struct sim *s, struct fuzz_in *in)
{
	uint8_t k = fuzz_u8(in);
	unsigned int c = 1 + fuzz_u8(in) % 24, j;

	for (j = 0; j < c && k_rx.producer - k_rx.consumer < s->size; j++) {
		struct xdp_desc *d = k_rx_desc(s, in);

		d->options = (k & 2) ? d->options & ~(uint32_t)XDP_PKT_CONTD : 0;
		if (j + 1 < c || (k & 1))
			d->options |= XDP_PKT_CONTD;
		k_rx_publish();
	}
}

static void k_write_rx(struct sim *s, struct fuzz_in *in)
{
	unsigned int n;

	/* Multi-buffer: chains, half the time. */
	if (s->sg && (fuzz_u8(in) & 1)) {
		k_write_rx_chain(s, in);
		return;
	}
	n = 1 + fuzz_u8(in) % 8;
	while (n-- && k_rx.producer - k_rx.consumer < s->size) {
		k_rx_desc(s, in);
		k_rx_publish();
	}
}

static void k_take_tx(struct sim *s, struct fuzz_in *in)
{
	uint32_t avail = k_tx.producer - k_tx.consumer;
	uint32_t n = fuzz_u8(in) % (avail + 1);

	while (n--) {
		list_push(&s->sent, tx_ring[k_tx.consumer & xq.tx.mask].addr);
		k_tx.consumer++;
	}
}

static void k_write_comp(struct sim *s, struct fuzz_in *in)
{
	unsigned int n = 1 + fuzz_u8(in) % 8;

	while (n-- && k_comp.producer - k_comp.consumer < s->size) {
		uint8_t k = fuzz_u8(in);
		uint16_t r = fuzz_u16(in);
		uint64_t addr;

		switch (k & 7) {
		case 0: case 1: case 2: case 3: /* honest, in order or not */
			if (s->sent.n) {
				addr = list_take(&s->sent,
						 (k & 8) ? r % s->sent.n : 0);
				list_push(&s->completed, addr);
				break;
			}
			/* fall through */
		case 4: /* replayed */
			if (s->completed.n) {
				addr = s->completed.a[r % s->completed.n];
				break;
			}
			/* fall through */
		case 5:
			addr = wild_addr(s, in);
			break;
		case 6: /* never sent */
			addr = page_addr(r % s->npages) +
			       (fuzz_u16(in) & (PP_PAGE_SIZE - 1));
			break;
		default: /* a page of the fill side */
			addr = s->held.n ? s->held.a[r % s->held.n]
					 : page_addr(r % s->npages);
			break;
		}
		comp_ring[k_comp.producer & xq.comp.mask] = addr;
		__atomic_store_n(&k_comp.producer, k_comp.producer + 1,
				 __ATOMIC_RELEASE);
	}
}

/* ---- the driver's calls, with what the model expects ---------------- */

/* Completions the driver reaped since @old: pages on the TX side go back. */
static void model_comp(struct sim *s, uint32_t old)
{
	uint32_t got = k_comp.consumer - old, j;

	FUZZ_CHECK(got <= XDP_COMP_BATCH);
	for (j = 0; j < got; j++) {
		uint64_t a = comp_ring[(old + j) & xq.comp.mask];
		unsigned int i = (unsigned int)(a >> PP_PAGE_SHIFT);

		if (a >= s->umem_size || s->st[i] != M_TX) {
			s->bad_comp++;
			continue;
		}
		set_state(s, i, M_OUT);
	}
}

/* ---- multi-buffer RX, as the model sees it ---------------------------- */

static const struct xdp_desc *rx_desc_at(uint32_t i)
{
	return &rx_ring[i & xq.rx.mask];
}

/* The model's claim of a descriptor's page: -1 (counted) when not ours. */
static int model_claim(struct sim *s, const struct xdp_desc *d)
{
	unsigned int i = (unsigned int)(d->addr >> PP_PAGE_SHIFT);

	if (d->addr >= s->umem_size || s->st[i] != M_FILL) {
		s->bad_desc++;
		return -1;
	}
	set_state(s, i, M_OUT);
	return (int)i;
}

/* A descriptor dropped without a look at its length. */
static void model_drop(struct sim *s, const struct xdp_desc *d)
{
	(void)model_claim(s, d);
}

/*
 * The chain at @at of @segs descriptors: true, with the frames checked
 * against @f, when every descriptor is good; else refused.
 */
static bool model_chain(struct sim *s, uint32_t at, unsigned int segs,
			const struct pp_frame *f)
{
	int pages[PP_FRAME_MAX_SEGS];
	unsigned int j;
	bool ok = true;

	for (j = 0; j < segs; j++) {
		const struct xdp_desc *d = rx_desc_at(at + j);
		uint32_t off = (uint32_t)(d->addr & (PP_PAGE_SIZE - 1));

		pages[j] = model_claim(s, d);
		if (pages[j] < 0) {
			ok = false;
			continue;
		}
		if (!d->len || (uint64_t)off + d->len > PP_PAGE_SIZE) {
			s->bad_desc++;
			ok = false;
		}
	}
	if (!ok) {
		s->bad_chain++;
		s->rx_err++;
		return false;
	}
	for (j = 0; j < segs; j++) {
		const struct xdp_desc *d = rx_desc_at(at + j);

		FUZZ_CHECK(f[j].page == s->first + pages[j]);
		FUZZ_CHECK(f[j].offset == 0 &&
			   f[j].headroom == (d->addr & (PP_PAGE_SIZE - 1)) &&
			   f[j].len == d->len);
		FUZZ_CHECK(f[j].more == (j + 1 < segs));
		fuzz_frame_touch(&f[j]);
		set_state(s, (unsigned int)pages[j], M_APP);
		app_add(s, &f[j]);
	}
	return true;
}

/* The chain's length at @at among @avail: as af_xdp_rxtx_mb.c counts. */
static unsigned int model_chain_len(uint32_t at, unsigned int avail)
{
	unsigned int i;

	for (i = 0; i < avail; i++) {
		if (i == PP_FRAME_MAX_SEGS)
			return PP_FRAME_MAX_SEGS + 1;
		if (!(rx_desc_at(at + i)->options & XDP_PKT_CONTD))
			return i + 1;
	}
	return 0;
}

static void rx_burst_mb(struct sim *s, struct fuzz_in *in)
{
	struct pp_frame f[PP_NET_BURST] = { 0 };
	unsigned int n = fuzz_u8(in) % (PP_NET_BURST + 1);
	uint32_t old = k_rx.consumer, avail = k_rx.producer - old;
	unsigned int want = n > PP_FRAME_MAX_SEGS + 1 ? n : PP_FRAME_MAX_SEGS + 1;
	unsigned int got, peek, used = 0, ok = 0;

	errno = ERRNO_MARK;
	got = af_xdp_rx_burst_mb(&s->rxq, f, n);
	FUZZ_CHECK(errno == ERRNO_MARK);
	FUZZ_CHECK(got <= n);
	peek = avail < want ? avail : want;
	while (used < peek) {
		unsigned int segs;

		if (s->rx_skip) {
			const struct xdp_desc *d = rx_desc_at(old + used);

			if (!(d->options & XDP_PKT_CONTD))
				s->rx_skip = false;
			model_drop(s, d);
			used++;
			continue;
		}
		segs = model_chain_len(old + used, peek - used);
		if (!segs) {
			/* Unfinished: waits, unless it fills the ring. */
			if (used || peek < s->size)
				break;
			segs = PP_FRAME_MAX_SEGS + 1;
		}
		if (segs > PP_FRAME_MAX_SEGS) {
			unsigned int j, nr = peek - used < PP_FRAME_MAX_SEGS ?
					     peek - used : PP_FRAME_MAX_SEGS;

			for (j = 0; j < nr; j++)
				model_drop(s, rx_desc_at(old + used + j));
			s->bad_chain++;
			s->rx_err++;
			s->rx_skip = true;
			used += nr;
			continue;
		}
		if (segs > n - ok)
			break;
		if (model_chain(s, old + used, segs, f + ok))
			ok += segs;
		used += segs;
	}
	FUZZ_CHECK(k_rx.consumer - old == used);
	FUZZ_CHECK(ok == got);
	/* Whole packets only. */
	FUZZ_CHECK(!got || !f[got - 1].more);
}

static void rx_burst_sb(struct sim *s, struct fuzz_in *in)
{
	struct pp_frame f[PP_NET_BURST] = { 0 };
	unsigned int n = fuzz_u8(in) % (PP_NET_BURST + 1);
	uint32_t old = k_rx.consumer, avail = k_rx.producer - old, used, j;
	unsigned int got, ok = 0;

	errno = ERRNO_MARK;
	got = af_xdp_rx_burst(&s->rxq, f, n);
	FUZZ_CHECK(errno == ERRNO_MARK);
	used = k_rx.consumer - old;
	FUZZ_CHECK(used <= n && used <= avail);
	for (j = 0; j < used; j++) {
		const struct xdp_desc *d = &rx_ring[(old + j) & xq.rx.mask];
		uint32_t off = (uint32_t)(d->addr & (PP_PAGE_SIZE - 1));
		unsigned int i = (unsigned int)(d->addr >> PP_PAGE_SHIFT);

		if (d->addr >= s->umem_size || s->st[i] != M_FILL) {
			s->bad_desc++;
			s->rx_err++;
			continue;
		}
		if (!d->len || (uint64_t)off + d->len > PP_PAGE_SIZE) {
			/* Our page with a bad length: back to the pool. */
			s->bad_desc++;
			s->rx_err++;
			set_state(s, i, M_OUT);
			continue;
		}
		FUZZ_CHECK(ok < got);
		FUZZ_CHECK(f[ok].page == s->first + i);
		FUZZ_CHECK(f[ok].offset == 0 && f[ok].headroom == off &&
			   f[ok].len == d->len);
		fuzz_frame_touch(&f[ok]);
		set_state(s, i, M_APP);
		app_add(s, &f[ok]);
		ok++;
	}
	FUZZ_CHECK(ok == got);
}

/*
 * A packet the model would send: every segment sendable, few enough for
 * the chain limit and for the TX ring (one longer than the ring could
 * never go in whole).
 */
static bool model_tx_pkt_ok(const struct sim *s, const struct pp_frame *f,
			    unsigned int segs)
{
	unsigned int j;

	if (segs > xq.tx_max_segs || segs > s->size)
		return false;
	for (j = 0; j < segs; j++)
		if (!model_tx_ok(&f[j]))
			return false;
	return true;
}

/* A frame the burst refused or did not take leaves the model's ring side. */
static void model_tx_drop(struct sim *s, const struct pp_frame *f)
{
	if (f->page->order)
		s->app2--;
	set_state(s, page_index(s, f->page), M_OUT);
}

/*
 * The multi-buffer burst over the @nf frames the app built (with .more
 * bits): packets whole or not at all, each bad one dropped whole with one
 * error, chains marked with XDP_PKT_CONTD on all but their last.
 */
static void tx_check_mb(struct sim *s, struct pp_frame *f, unsigned int nf,
			unsigned int r, uint32_t old_prod, uint32_t room)
{
	unsigned int n = nf < PP_NET_BURST ? nf : PP_NET_BURST, i = 0, k = 0;
	unsigned int slots;

	while (n && f[n - 1].more)
		n--;
	slots = n < room ? n : room;
	while (i < n) {
		unsigned int segs = pp_pkt_segs(f + i, n - i), j;

		if (!model_tx_pkt_ok(s, f + i, segs)) {
			for (j = 0; j < segs; j++)
				model_tx_drop(s, &f[i + j]);
			s->tx_err++;
			i += segs;
			continue;
		}
		if (segs > slots - k)
			break;
		for (j = 0; j < segs; j++) {
			const struct pp_frame *fr = &f[i + j];
			unsigned int p = page_index(s, fr->page);
			const struct xdp_desc *d =
				&tx_ring[(old_prod + k + j) & xq.tx.mask];

			FUZZ_CHECK(d->addr < s->umem_size &&
				   d->addr + d->len <= s->umem_size);
			FUZZ_CHECK(d->addr >> PP_PAGE_SHIFT == p);
			FUZZ_CHECK(d->addr == page_addr(p) + fr->offset +
						      fr->headroom &&
				   d->len == fr->len && d->len != 0);
			FUZZ_CHECK(d->options ==
				   (j + 1 < segs ? XDP_PKT_CONTD : 0u));
			set_state(s, p, M_TX);
		}
		k += segs;
		i += segs;
	}
	FUZZ_CHECK(r == i);
	FUZZ_CHECK(k == k_tx.producer - old_prod);
	/* Never inside a packet. */
	FUZZ_CHECK(!r || !f[r - 1].more);
	for (; i < nf; i++)
		app_add(s, &f[i]);
}

static void rx_burst(struct sim *s, struct fuzz_in *in)
{
	if (s->sg)
		rx_burst_mb(s, in);
	else
		rx_burst_sb(s, in);
}

static void tx_burst(struct sim *s, struct fuzz_in *in)
{
	struct pp_frame f[TX_MAX] = { 0 };
	unsigned int n = fuzz_u8(in) % (TX_MAX + 1), nf = 0, i, r, k = 0;
	uint32_t old_prod = k_tx.producer, old_comp = k_comp.consumer;
	uint32_t room;

	s->txq.napi_pool = (fuzz_u8(in) & 1) ? s->pool : NULL;
	while (nf < n) {
		uint8_t src = fuzz_u8(in);
		struct pp_frame fr = { 0 };

		if ((src & 3) < 2) {
			if (!s->nr_app)
				break;
			fr = app_take(s, fuzz_u8(in) % s->nr_app);
			if (src & 0x10)
				pick_geometry(in, &fr);
		} else {
			struct pp_pool *pool = (src & 3) == 2 ? s->pool
							      : s->pool2;

			fr.page = pp_pool_alloc_pages(pool);
			if (!fr.page)
				break;
			/* A page the pool hands out is nobody's. */
			FUZZ_CHECK(s->st[page_index(s, fr.page)] == M_OUT);
			set_state(s, page_index(s, fr.page), M_APP);
			if (fr.page->order)
				s->app2++;
			pick_geometry(in, &fr);
		}
		/* Multi-buffer: the packet goes on in the next frame, by
		 * the input (a frame the app received keeps no .more). */
		fr.more = s->sg && (src & 0x20);
		f[nf++] = fr;
	}
	/* What a burst must take: as many as the TX ring has room for. */
	room = s->size - (k_tx.producer - k_tx.consumer);

	errno = ERRNO_MARK;
	r = s->sg ? af_xdp_tx_burst_mb(&s->txq, f, nf) :
		    af_xdp_tx_burst(&s->txq, f, nf);
	FUZZ_CHECK(errno == ERRNO_MARK);
	model_comp(s, old_comp);
	if (s->sg) {
		tx_check_mb(s, f, nf, r, old_prod, room);
		return;
	}
	FUZZ_CHECK(r == (nf < room ? nf : room));
	for (i = 0; i < r; i++) {
		unsigned int p = page_index(s, f[i].page);
		const struct xdp_desc *d;

		if (!model_tx_ok(&f[i])) {
			if (f[i].page->order)
				s->app2--;
			set_state(s, p, M_OUT);
			s->tx_err++;
			continue;
		}
		FUZZ_CHECK(k < k_tx.producer - old_prod);
		d = &tx_ring[(old_prod + k++) & xq.tx.mask];
		/* Inside the UMEM and inside the frame's page, in 64 bits. */
		FUZZ_CHECK(d->addr < s->umem_size &&
			   d->addr + d->len <= s->umem_size);
		FUZZ_CHECK(d->addr >> PP_PAGE_SHIFT == p);
		FUZZ_CHECK((d->addr & (PP_PAGE_SIZE - 1)) + d->len <=
			   PP_PAGE_SIZE);
		FUZZ_CHECK(d->len != 0 && d->options == 0);
		FUZZ_CHECK(d->addr == page_addr(p) + f[i].offset +
					      f[i].headroom &&
			   d->len == f[i].len);
		set_state(s, p, M_TX);
	}
	FUZZ_CHECK(k == k_tx.producer - old_prod);
	/* What it did not take is still the app's. */
	for (; i < nf; i++)
		app_add(s, &f[i]);
}

static void complete(struct sim *s, struct fuzz_in *in)
{
	uint8_t how = fuzz_u8(in);
	uint32_t old = k_comp.consumer;

	s->txq.napi_pool = (how & 2) ? s->pool : NULL;
	errno = ERRNO_MARK;
	if (how & 1) {
		af_xdp_complete(&xq, &s->txq);
	} else {
		struct pp_frame none[1] = { 0 };

		FUZZ_CHECK((s->sg ? af_xdp_tx_burst_mb(&s->txq, none, 0) :
				    af_xdp_tx_burst(&s->txq, none, 0)) == 0);
	}
	FUZZ_CHECK(errno == ERRNO_MARK);
	model_comp(s, old);
}

static void app_step(struct sim *s, struct fuzz_in *in)
{
	uint8_t k = fuzz_u8(in);
	unsigned int n;

	switch (k & 3) {
	case 0: /* return some frames */
		n = fuzz_u8(in);
		while (n-- && s->nr_app) {
			unsigned int i = fuzz_u8(in) % s->nr_app;

			app_return(s, app_take(s, i).page);
		}
		break;
	case 1: /* the kernel asks for (or stops asking for) wakeups */
		k_fill.flags = (k & 4) ? XDP_RING_NEED_WAKEUP : 0;
		k_tx.flags = (k & 8) ? XDP_RING_NEED_WAKEUP : 0;
		break;
	case 2:
		xq.zero_copy = k & 4;
		break;
	default: /* a top-up, as at open */
		errno = ERRNO_MARK;
		af_xdp_fill_refill(&xq, s->pool, 1 + (k >> 2) % 4);
		FUZZ_CHECK(errno == ERRNO_MARK);
		break;
	}
}

/* ---- setup and teardown --------------------------------------------- */

static void ring_prod(struct xsk_ring_prod *r, struct kring *k, void *ring,
		      uint32_t size, uint32_t start)
{
	k->producer = k->consumer = start;
	r->producer = &k->producer;
	r->consumer = &k->consumer;
	r->flags = &k->flags;
	r->ring = ring;
	r->size = size;
	r->mask = size - 1;
	r->cached_prod = start;
	r->cached_cons = start + size;
}

static void ring_cons(struct xsk_ring_cons *r, struct kring *k, void *ring,
		      uint32_t size, uint32_t start)
{
	k->producer = k->consumer = start;
	r->producer = &k->producer;
	r->consumer = &k->consumer;
	r->flags = &k->flags;
	r->ring = ring;
	r->size = size;
	r->mask = size - 1;
	r->cached_prod = start;
	r->cached_cons = start;
}

static void setup(struct sim *s, struct fuzz_in *in)
{
	struct pp_pool_params pp = {
		.sz = sizeof(pp),
		.allocator = s->env->alloc,
		.pool_size = 256,
		.nid = PP_NUMA_NODE_ANY,
		.name = "fuzz_af_xdp",
	};
	uint8_t k = fuzz_u8(in);
	uint32_t start = fuzz_u32(in);

	s->size = 1u << (k % 8);
	s->base = pp_arena_base(s->env->arena);
	s->umem_size = pp_arena_size(s->env->arena);
	s->npages = (unsigned int)(s->umem_size >> PP_PAGE_SHIFT);
	FUZZ_CHECK(s->npages <= ARENA_PAGES);
	s->first = pp_virt_to_page(s->env->alloc, s->base);
	FUZZ_CHECK(s->first != NULL);
	s->count[M_OUT] = s->npages;
	s->held.cap = s->sent.cap = LIST_MAX;
	s->delivered.cap = s->completed.cap = HISTORY;

	s->pool = pp_pool_create(&pp);
	pp.order = 1;
	pp.pool_size = 16;
	s->pool2 = pp_pool_create(&pp);
	FUZZ_CHECK(s->pool && s->pool2);

	s->port.allocator = s->env->alloc;
	s->port.rxq = &s->rxq;
	s->port.txq = &s->txq;
	s->port.nr_rxq = s->port.nr_txq = 1;
	snprintf(s->port.name, sizeof(s->port.name), "fuzz_af_xdp");
	s->rxq.port = &s->port;
	s->rxq.pool = s->pool;
	s->rxq.priv = &xq;
	s->txq.port = &s->port;
	s->txq.priv = &xq;

	memset(&xq, 0, sizeof(xq));
	ring_prod(&xq.fill, &k_fill, fill_ring, 2 * s->size, start);
	ring_cons(&xq.rx, &k_rx, rx_ring, s->size, start);
	ring_prod(&xq.tx, &k_tx, tx_ring, s->size, start);
	ring_cons(&xq.comp, &k_comp, comp_ring, s->size, start);
	k_fill.flags = (k & 0x10) ? XDP_RING_NEED_WAKEUP : 0;
	k_tx.flags = (k & 0x20) ? XDP_RING_NEED_WAKEUP : 0;
	s->fill_seen = start;
	xq.first = s->first;
	xq.base = s->base;
	xq.umem_size = s->umem_size;
	xq.fd = -1;
	xq.pool = s->pool;
	xq.zero_copy = k & 0x40;
	/* Multi-buffer, and the chain limit a zero-copy device may set. */
	s->sg = k & 0x80;
	xq.tx_max_segs = (k & 8) ? 1 + (start >> 27) % PP_FRAME_MAX_SEGS :
				   PP_FRAME_MAX_SEGS;
	xq.tag = s->tag = (uint64_t)(uintptr_t)&xq;
	FUZZ_CHECK(!(s->tag & XDP_TAG_RINGS));

	/* As at open: level, then the ring filled. */
	af_xdp_fill_level_set(&xq, s->size);
	errno = ERRNO_MARK;
	af_xdp_fill_refill(&xq, s->pool, xq.fill.size / xq.fill_batch);
	FUZZ_CHECK(errno == ERRNO_MARK);
}

static void teardown(struct sim *s)
{
	struct pp_pool_stats ps;
	unsigned int i;

	while (s->nr_app) {
		struct pp_frame f = app_take(s, 0);

		app_return(s, f.page);
	}
	/* The socket is gone: whatever the kernel kept comes back. */
	af_xdp_queue_reclaim(&xq, s->env->alloc);
	for (i = 0; i < s->npages; i++) {
		uint64_t t = s->first[i].private_data;

		FUZZ_CHECK((t & ~(uint64_t)XDP_TAG_RINGS) != s->tag ||
			   !(t & XDP_TAG_RINGS));
		if (s->st[i] != M_OUT)
			set_state(s, i, M_OUT);
	}
	FUZZ_CHECK(pp_pool_check(s->pool) == 0);
	FUZZ_CHECK(pp_pool_check(s->pool2) == 0);
	FUZZ_CHECK(pp_pool_get_stats(s->pool, &ps) == 0 && !ps.inflight);
	FUZZ_CHECK(pp_pool_get_stats(s->pool2, &ps) == 0 && !ps.inflight);
	FUZZ_CHECK(pp_pool_destroy(s->pool) == 0);
	FUZZ_CHECK(pp_pool_destroy(s->pool2) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_env *env = fuzz_env_get(ARENA_PAGES * PP_PAGE_SIZE);
	struct fuzz_in in = { data, size };
	unsigned int steps = 0;

	memset(&sim, 0, sizeof(sim));
	sim.env = env;
	setup(&sim, &in);
	check_all(&sim);
	while (in.left && steps++ < STEPS_MAX) {
		switch (fuzz_u8(&in) % 8) {
		case 0: k_take_fill(&sim, &in); break;
		case 1: k_write_rx(&sim, &in); break;
		case 2: rx_burst(&sim, &in); break;
		case 3: tx_burst(&sim, &in); break;
		case 4: k_take_tx(&sim, &in); break;
		case 5: k_write_comp(&sim, &in); break;
		case 6: complete(&sim, &in); break;
		default: app_step(&sim, &in); break;
		}
		check_all(&sim);
	}
	teardown(&sim);
	pp_allocator_drain_thread(env->alloc);
	fuzz_check_allocated(env, 0);
	return 0;
}
