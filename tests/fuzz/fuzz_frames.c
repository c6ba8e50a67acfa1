/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_frames.c - frame geometry from the input, on a 256-page arena of
 * 4 KiB pages.
 *
 * Helpers: a frame on a block of order 0-3 gets an offset, headroom and
 * length near 0, the block's end, 2^16 and 2^32, and an edit of the head
 * or tail by a delta near 0, +-2^16 and INT_MIN/INT_MAX. Each helper must
 * agree with the rule written out here in 64 bits (doc/net.md, "Bounds"):
 * pp_frame_bounds_ok() and pp_frame_valid() with offset + headroom + len
 * <= block, pp_frame_room() with what is left after the headroom (0 past
 * the block), the edits with it and the 16-bit limits; a refused edit
 * leaves the frame as it was, an accepted one keeps the frame in its
 * block (its first and last data bytes are written to prove it).
 *
 * TX: frames received from a null port get such geometries and go out
 * through another null port or one end of a veth pair (pp_port_tx_burst):
 * the port takes a prefix of the burst, counts every taken frame outside
 * its block as a TX error, never puts one on the wire (the veth peer
 * receives exactly the good frames taken, each valid, less those longer
 * than its buffers, which it counts as RX errors); after each burst every
 * allocated page is one of the four pools' (pp_pool_inflight), and when
 * the ports close no page is left allocated.
 *
 * Poll: multi-buffer packets (a null port's frames of 60 to 9216 bytes,
 * whole pages or fragments) through a program that gives each packet a
 * verdict from the input (every verdict, bad redirect indexes, unknown
 * ones), garbage verdicts on the other segments, and sometimes moves a
 * segment out of its block. A program sees whole packets of the port's
 * size; one verdict per packet counts; the counters add up packet by
 * packet; the stack consumer gets only whole, valid packets; a spoilt
 * packet is one error wherever it goes (PASS: the RX queue's, TX and
 * REDIRECT: the target's TX); the veth peer receives whole packets of the
 * size; and every allocated page is some pool's after each poll.
 */
#include <errno.h>
#include <limits.h>

#include <pagepool/pp_net.h>

#include "fuzz_common.h"

#define ARENA_PAGES 512
#define MAX_ORDER_USED 3
#define TX_MAX 48

static uint32_t pick_u32(struct fuzz_in *in, uint8_t kind, uint64_t block)
{
	uint32_t raw = fuzz_u32(in);

	switch (kind & 3) {
	case 0: return raw;
	case 1: return (uint32_t)(block - (raw & 0x1fff));  /* the block's end */
	case 2: return 0x10000u - (raw & 0x1ff);            /* 2^16 */
	default: return 0u - (raw & 0xffff);                /* 2^32 */
	}
}

static uint16_t pick_u16(struct fuzz_in *in, uint8_t kind, uint64_t block)
{
	uint16_t raw = fuzz_u16(in);

	switch (kind & 3) {
	case 0: return raw;
	case 1: return (uint16_t)(raw & 0xff);
	case 2: return (uint16_t)((block > 0xffff ? 0xffff : block) -
				  (raw & 0xffu));
	default: return (uint16_t)(0xffff - (raw & 0x1ff));
	}
}

static int pick_delta(struct fuzz_in *in, uint8_t kind)
{
	uint32_t raw = fuzz_u32(in);
	int small = (int8_t)(raw & 0xff);

	switch (kind & 3) {
	case 0: return (int)raw;
	case 1: return small;
	case 2: return (raw & 0x100 ? -65536 : 65536) + small;
	default: return (raw & 0x100) ? INT_MIN + (small & 0x7f)
				      : INT_MAX - (small & 0x7f);
	}
}

/* Geometry for @f, whose page is already set, from the input. */
static void pick_geometry(struct fuzz_in *in, struct pp_frame *f)
{
	uint64_t block = (uint64_t)PP_PAGE_SIZE << f->page->order;
	uint8_t kinds = fuzz_u8(in);

	f->offset = pick_u32(in, kinds, block);
	f->headroom = pick_u16(in, (uint8_t)(kinds >> 2), block);
	f->len = pick_u16(in, (uint8_t)(kinds >> 4), block);
}

static bool model_ok(const struct pp_frame *f, int64_t hr, int64_t len)
{
	uint64_t block = (uint64_t)PP_PAGE_SIZE << f->page->order;

	return hr >= 0 && len >= 0 && hr <= UINT16_MAX && len <= UINT16_MAX &&
	       (uint64_t)f->offset + (uint64_t)hr + (uint64_t)len <= block;
}

static void check_helpers(struct pp_frame *f, struct fuzz_in *in)
{
	uint64_t block = (uint64_t)PP_PAGE_SIZE << f->page->order;
	uint64_t start = (uint64_t)f->offset + f->headroom;
	bool ok = model_ok(f, f->headroom, f->len);
	uint8_t kinds = fuzz_u8(in);
	int delta = pick_delta(in, kinds);
	struct pp_frame was = *f;

	FUZZ_CHECK(pp_frame_bounds_ok(f->page, f->offset, f->headroom,
				      f->len) == ok);
	FUZZ_CHECK(pp_frame_valid(f) == ok);
	FUZZ_CHECK(pp_frame_room(f) == (start <= block ? block - start : 0));
	if (ok)
		fuzz_frame_touch(f);

	if (kinds & 0x80) {
		bool want = model_ok(f, (int64_t)f->headroom + delta,
				     (int64_t)f->len - delta);

		if (pp_frame_adjust_head(f, delta)) {
			FUZZ_CHECK(!want);
			FUZZ_CHECK(!memcmp(f, &was, sizeof(*f)));
		} else {
			FUZZ_CHECK(want);
			FUZZ_CHECK(f->headroom == (int64_t)was.headroom + delta);
			/* The data's end stays where it was. */
			FUZZ_CHECK(f->headroom + f->len ==
				   was.headroom + was.len);
			FUZZ_CHECK(f->offset == was.offset &&
				   f->page == was.page);
			fuzz_frame_touch(f);
		}
	} else {
		bool want = model_ok(f, f->headroom, (int64_t)f->len + delta);

		if (pp_frame_adjust_tail(f, delta)) {
			FUZZ_CHECK(!want);
			FUZZ_CHECK(!memcmp(f, &was, sizeof(*f)));
		} else {
			FUZZ_CHECK(want);
			FUZZ_CHECK(f->len == (int64_t)was.len + delta);
			FUZZ_CHECK(f->headroom == was.headroom &&
				   f->offset == was.offset &&
				   f->page == was.page);
			fuzz_frame_touch(f);
			/* Room shrinks by what the tail grew. */
			FUZZ_CHECK(pp_frame_room(f) ==
				   block - f->offset - f->headroom);
		}
	}
}

static void helpers(struct fuzz_env *env, struct fuzz_in *in)
{
	struct pp_page *blocks[MAX_ORDER_USED + 1];
	unsigned int o, n = fuzz_u8(in) % 32;

	for (o = 0; o <= MAX_ORDER_USED; o++) {
		blocks[o] = pp_alloc_pages(env->alloc, PP_NUMA_NODE_ANY, o);
		FUZZ_CHECK(blocks[o] != NULL);
	}
	while (n--) {
		struct pp_frame f = { .page = blocks[fuzz_u8(in) %
						     (MAX_ORDER_USED + 1)] };

		pick_geometry(in, &f);
		check_helpers(&f, in);
	}
	for (o = 0; o <= MAX_ORDER_USED; o++)
		pp_free_pages(env->alloc, blocks[o], o);
}

/* Return frames the caller still owns to their pools. */
static void recycle(struct pp_frame *f, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		pp_pool_recycle_direct(pp_page_pool(f[i].page), f[i].page);
}

static void tx_burst(struct pp_port *src, struct pp_port *dst,
		     struct pp_port *peer, struct fuzz_in *in)
{
	unsigned int n = fuzz_u8(in) % (TX_MAX + 1), got, taken, bad = 0, big = 0;
	uint8_t mask = fuzz_u8(in);
	struct pp_frame f[TX_MAX], rx[TX_MAX];
	struct pp_txq_stats before, after;
	struct pp_rxq_stats rs_before, rs_after;
	unsigned int i, received = 0;

	got = pp_port_rx_burst(src, 0, f, n);
	for (i = 0; i < got; i++) {
		FUZZ_CHECK(pp_frame_valid(&f[i]));
		/* Some keep null's geometry, the others get the input's. */
		if (mask >> (i % 8) & 1)
			pick_geometry(in, &f[i]);
	}
	FUZZ_CHECK(pp_port_txq_stats(dst, 0, &before) == 0);
	if (peer)
		FUZZ_CHECK(pp_port_rxq_stats(peer, 0, &rs_before) == 0);
	taken = pp_port_tx_burst(dst, 0, f, got);
	FUZZ_CHECK(taken <= got);
	for (i = 0; i < taken; i++) {
		bad += !pp_frame_valid(&f[i]);
		/* Valid, but longer than the peer's buffer (its MTU). */
		big += pp_frame_valid(&f[i]) &&
		       f[i].len > PP_PAGE_SIZE - PP_FRAME_HEADROOM;
	}
	FUZZ_CHECK(pp_port_txq_stats(dst, 0, &after) == 0);
	FUZZ_CHECK(after.packets - before.packets == taken);
	FUZZ_CHECK(after.errors - before.errors == bad);
	/* What the port did not take is still the caller's. */
	recycle(f + taken, got - taken);

	if (!peer) {
		FUZZ_CHECK(taken == got);
		return;
	}
	/* The peer receives the good frames taken, and only those. */
	while ((n = pp_port_rx_burst(peer, 0, rx, TX_MAX))) {
		for (i = 0; i < n; i++)
			FUZZ_CHECK(pp_frame_valid(&rx[i]));
		received += n;
		recycle(rx, n);
	}
	FUZZ_CHECK(pp_port_rxq_stats(peer, 0, &rs_after) == 0);
	FUZZ_CHECK(received + (rs_after.drops - rs_before.drops) ==
		   taken - bad - big);
	FUZZ_CHECK(rs_after.errors - rs_before.errors == big);
}

static void ports(struct fuzz_env *env, struct fuzz_in *in)
{
	struct pp_port_conf conf = {
		.sz = sizeof(conf),
		.allocator = env->alloc,
		.ring_size = 64,
		.pool_size = 64,
		.nid = PP_NUMA_NODE_ANY,
	};
	struct pp_port *src, *sink, *veth;
	unsigned int bursts = fuzz_u8(in) % 8;

	src = pp_port_open("null0", &conf);
	sink = pp_port_open("null1", &conf);
	veth = pp_port_open("veth0,peer=veth1", &conf);
	FUZZ_CHECK(src && sink && veth);
	while (bursts--) {
		struct pp_port *all[] = { src, sink, veth, pp_port_peer(veth) };
		unsigned long held = 0;
		struct pp_zone_stats zs;

		if (fuzz_u8(in) & 1)
			tx_burst(src, veth, pp_port_peer(veth), in);
		else
			tx_burst(src, sink, NULL, in);
		/* Every allocated page is some pool's: nothing lost. */
		for (unsigned int i = 0; i < 4; i++)
			held += pp_pool_inflight(pp_port_rxq_pool(all[i], 0));
		FUZZ_CHECK(pp_allocator_zone_stats(env->alloc, 0, &zs) == 0);
		FUZZ_CHECK(zs.managed_pages - zs.free_pages - zs.thread_cache_pages ==
			   held);
	}
	for (unsigned int q = 0; q < 2; q++) {
		struct pp_port *p = q ? pp_port_peer(veth) : src;

		FUZZ_CHECK(pp_pool_check(pp_port_rxq_pool(p, 0)) == 0);
	}
	FUZZ_CHECK(pp_port_close(veth) == 0);
	FUZZ_CHECK(pp_port_close(sink) == 0);
	FUZZ_CHECK(pp_port_close(src) == 0);
}

struct poll_fuzz {
	struct fuzz_in *in;
	unsigned int size;        /* the packets' bytes */
	uint64_t pkts;            /* packets the program saw */
	uint64_t kinds[8];        /* packets by verdict (poll_verdicts[]) */
	uint64_t spoilt[8];       /* spoilt packets, by verdict */
	uint64_t stack_pkts;
};

/* The verdicts the input picks from: all kinds, good and bad. */
static const uint16_t poll_verdicts[8] = {
	PP_XDP_DROP, PP_XDP_PASS, PP_XDP_TX, PP_XDP_REDIRECT_TO(0),
	PP_XDP_REDIRECT_TO(1), PP_XDP_REDIRECT_TO(5), PP_XDP_ABORTED, 200,
};

static void prog_fuzz(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		      uint16_t *verdicts, unsigned int n)
{
	struct poll_fuzz *pf = ctx->arg;
	unsigned int i, j, segs;

	for (i = 0; i < n; i += segs) {
		uint8_t b = fuzz_u8(pf->in);

		segs = pp_pkt_segs(&frames[i], n - i);
		FUZZ_CHECK(!frames[i + segs - 1].more);
		FUZZ_CHECK(segs <= PP_FRAME_MAX_SEGS);
		FUZZ_CHECK(pp_pkt_len(&frames[i], segs) == pf->size);
		verdicts[i] = poll_verdicts[b & 7];
		pf->kinds[b & 7]++;
		for (j = 1; j < segs; j++)
			verdicts[i + j] = fuzz_u16(pf->in);
		if (b & 0x80) {
			struct pp_frame *f = &frames[i + (b >> 3 & 15) % segs];

			f->headroom = 0xffff;
			f->len = 0xffff;
			pf->spoilt[b & 7]++;
		}
		pf->pkts++;
	}
}

static void stack_fuzz(void *arg, struct pp_port *port,
		       struct pp_frame *frames, unsigned int n)
{
	struct poll_fuzz *pf = arg;
	unsigned int i, j, segs;

	for (i = 0; i < n; i += segs) {
		segs = pp_pkt_segs(&frames[i], n - i);
		FUZZ_CHECK(!frames[i + segs - 1].more);
		FUZZ_CHECK(pp_pkt_len(&frames[i], segs) == pf->size);
		for (j = 0; j < segs; j++)
			FUZZ_CHECK(pp_frame_valid(&frames[i + j]));
		pf->stack_pkts++;
	}
	pp_frame_put_bulk(pp_port_allocator(port), frames, n);
}

/* Everything @p received: whole packets of @size, back to their pools. */
static void drain_whole(struct pp_port *p, unsigned int size)
{
	struct pp_frame f[PP_NET_BURST];
	unsigned int n, i, segs;

	while ((n = pp_port_rx_burst(p, 0, f, PP_NET_BURST))) {
		for (i = 0; i < n; i += segs) {
			segs = pp_pkt_segs(&f[i], n - i);
			FUZZ_CHECK(!f[i + segs - 1].more);
			FUZZ_CHECK(pp_pkt_len(&f[i], segs) == size);
		}
		recycle(f, n);
	}
}

static void polls(struct fuzz_env *env, struct fuzz_in *in)
{
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = env->alloc, .ring_size = 64,
		.pool_size = 64, .nid = PP_NUMA_NODE_ANY,
	};
	struct poll_fuzz pf = { .in = in };
	unsigned int polls = fuzz_u8(in) % 8, q;
	uint8_t how = fuzz_u8(in);
	struct pp_port *src, *sink, *veth, *all[4];
	struct pp_prog prog = { .sz = sizeof(prog), .fn = prog_fuzz,
				.arg = &pf, .nr_targets = 2 };
	char dev[64];

	pf.size = 60 + fuzz_u16(in) % (PP_FRAME_MAX_PKT - 60 + 1);
	snprintf(dev, sizeof(dev), "null2,size=%u%s", pf.size,
		 how & 1 ? ",frag=2048" : "");
	src = pp_port_open(dev, &conf);
	sink = pp_port_open("null3", &conf);
	veth = pp_port_open("veth2,peer=veth3", &conf);
	FUZZ_CHECK(src && sink && veth);
	prog.targets[0] = sink;
	prog.targets[1] = veth;
	FUZZ_CHECK(pp_port_set_prog(src, &prog) == 0);
	pp_port_set_stack(src, stack_fuzz, &pf);
	all[0] = src;
	all[1] = sink;
	all[2] = veth;
	all[3] = pp_port_peer(veth);
	while (polls--) {
		struct pp_rxq_stats r0, r1;
		struct pp_txq_stats s0, s1, k0, k1, v0, v1;
		struct pp_zone_stats zs;
		uint64_t pkts = pf.pkts, stack = pf.stack_pkts, spoilt[8], k[8];
		unsigned long held = 0;

		memcpy(spoilt, pf.spoilt, sizeof(spoilt));
		memcpy(k, pf.kinds, sizeof(k));
		FUZZ_CHECK(pp_port_rxq_stats(src, 0, &r0) == 0);
		FUZZ_CHECK(pp_port_txq_stats(src, 0, &s0) == 0);
		FUZZ_CHECK(pp_port_txq_stats(sink, 0, &k0) == 0);
		FUZZ_CHECK(pp_port_txq_stats(veth, 0, &v0) == 0);
		pp_port_poll(src, 0, 1 + fuzz_u8(in) % 128);
		FUZZ_CHECK(pp_port_rxq_stats(src, 0, &r1) == 0);
		FUZZ_CHECK(pp_port_txq_stats(src, 0, &s1) == 0);
		FUZZ_CHECK(pp_port_txq_stats(sink, 0, &k1) == 0);
		FUZZ_CHECK(pp_port_txq_stats(veth, 0, &v1) == 0);
		for (q = 0; q < 8; q++) {
			spoilt[q] = pf.spoilt[q] - spoilt[q];
			k[q] = pf.kinds[q] - k[q];
		}

		/* Packet by packet: the head's verdict is the packet's fate;
		 * bad verdicts and a spoilt PASS are RX errors. */
		FUZZ_CHECK(r1.packets - r0.packets == pf.pkts - pkts);
		FUZZ_CHECK(r1.xdp_drop - r0.xdp_drop == k[0]);
		FUZZ_CHECK(r1.xdp_pass - r0.xdp_pass == k[1] - spoilt[1]);
		FUZZ_CHECK(r1.xdp_tx - r0.xdp_tx == k[2]);
		FUZZ_CHECK(r1.xdp_redirect - r0.xdp_redirect == k[3] + k[4]);
		FUZZ_CHECK(r1.errors - r0.errors ==
			   k[5] + k[6] + k[7] + spoilt[1]);
		FUZZ_CHECK(pf.stack_pkts - stack == r1.xdp_pass - r0.xdp_pass);
		/* A spoilt packet sent is one TX error (null takes all; a
		 * full veth ring may refuse one first, a drop). */
		FUZZ_CHECK(s1.errors - s0.errors == spoilt[2]);
		FUZZ_CHECK(k1.errors - k0.errors == spoilt[3]);
		FUZZ_CHECK(v1.errors - v0.errors <= spoilt[4]);
		FUZZ_CHECK(s1.packets - s0.packets == k[2]);
		/* Taken or dropped, whole: null takes all. */
		FUZZ_CHECK(k1.packets - k0.packets == k[3]);
		FUZZ_CHECK((v1.packets - v0.packets) + (v1.drops - v0.drops) ==
			   k[4]);
		drain_whole(pp_port_peer(veth), pf.size);
		for (q = 0; q < 4; q++)
			held += pp_pool_inflight(pp_port_rxq_pool(all[q], 0));
		FUZZ_CHECK(pp_allocator_zone_stats(env->alloc, 0, &zs) == 0);
		FUZZ_CHECK(zs.managed_pages - zs.free_pages -
				   zs.thread_cache_pages == held);
	}
	for (q = 0; q < 4; q++) {
		pp_pool_set_owner(pp_port_rxq_pool(all[q], 0));
		FUZZ_CHECK(pp_pool_check(pp_port_rxq_pool(all[q], 0)) == 0);
	}
	FUZZ_CHECK(pp_port_close(veth) == 0);
	FUZZ_CHECK(pp_port_close(sink) == 0);
	FUZZ_CHECK(pp_port_close(src) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_env *env = fuzz_env_get(ARENA_PAGES * PP_PAGE_SIZE);
	struct fuzz_in in = { data, size };

	helpers(env, &in);
	ports(env, &in);
	polls(env, &in);
	pp_allocator_drain_thread(env->alloc);
	fuzz_check_allocated(env, 0);
	return 0;
}
