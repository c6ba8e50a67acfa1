/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_veth_mb.c - multi-buffer packets through a veth pair: 9000-byte
 * packets built by hand from segments of the sender's pool (whole pages,
 * fragments, 18 small segments) go out with pp_port_tx_burst() on veth0
 * and come in on veth1 with PASS (a stack consumer checks every byte of
 * every packet), REDIRECT (back through veth0, checked there) and DROP,
 * with frag= and without. Also: rx_burst hands out whole packets only
 * (a packet that does not fit in n waits, a burst that ends inside a
 * packet takes the rest), TX takes a packet whole or not at all (full
 * ring, unfinished packet at the end of the burst), and bad packets
 * (too many segments, a segment outside its block, a head too long for
 * the receiver's buffer) are dropped whole and counted once. Every case
 * ends with the pools' walkers passing and the allocator balanced.
 */
#include "net_test.h"

static struct net_env env;

#define PKT_LEN 9000
#define HR 256

static uint8_t pattern(uint64_t seq, uint32_t j)
{
	return (uint8_t)(seq * 7 + j * 13 + 5);
}

/* Byte @j of packet @seq of @len bytes: the seq, the length, a pattern. */
static uint8_t pkt_byte(uint64_t seq, uint32_t len, uint32_t j)
{
	if (j < 8)
		return (uint8_t)(seq >> (8 * j));
	if (j < 12)
		return (uint8_t)(len >> (8 * (j - 8)));
	return pattern(seq, j);
}

/* How a test cuts a packet into the sender's buffers. */
enum shape {
	SHAPE_PAGES,  /* whole pages: 3840 behind the headroom, then 4096s */
	SHAPE_FRAGS,  /* 1500 bytes in 2048-byte fragments (slot pairs) */
	SHAPE_SMALL,  /* 500-byte segments in whole pages */
};

/*
 * Build packet @seq of @len bytes into @f from @src (this thread owns
 * it): segments cut as @shape says. Returns the segments used.
 */
static unsigned int build_pkt(struct pp_pool *src, struct pp_frame *f,
			      uint64_t seq, uint32_t len, enum shape shape)
{
	uint32_t done = 0;
	unsigned int k = 0;

	while (done < len) {
		uint32_t hr = k ? 0 : HR, take, off = 0, cap;
		struct pp_page *page;

		switch (shape) {
		case SHAPE_FRAGS:
			page = pp_pool_alloc_frag(src, &off, 2048);
			cap = 1500;
			break;
		case SHAPE_SMALL:
			page = pp_pool_alloc_pages(src);
			cap = 500;
			break;
		default:
			page = pp_pool_alloc_pages(src);
			cap = PP_PAGE_SIZE - hr;
			break;
		}
		REQUIRE(page != NULL);
		take = len - done < cap ? len - done : cap;
		f[k] = (struct pp_frame){
			.page = page, .offset = off, .headroom = (uint16_t)hr,
			.len = (uint16_t)take, .more = done + take < len,
		};
		for (uint32_t j = 0; j < take; j++)
			((uint8_t *)pp_frame_data(&f[k]))[j] =
				pkt_byte(seq, len, done + j);
		done += take;
		k++;
	}
	return k;
}

/* What a consumer saw. */
struct seen {
	uint64_t next_seq;
	uint64_t pkts;
	uint64_t segs;
	uint64_t bad;
	uint64_t max_segs;   /* the most segments one packet had */
};

/*
 * Check the packet at @f (@segs segments): valid segments, the head with
 * the receiver's headroom, the bytes of packet s->next_seq.
 */
static void check_pkt(struct seen *s, const struct pp_frame *f,
		      unsigned int segs, uint32_t expect_len)
{
	uint32_t len = pp_pkt_len(f, segs), j = 0;
	uint64_t seq = s->next_seq++;
	bool ok = len == expect_len && f[segs - 1].more == 0;

	for (unsigned int i = 0; i < segs; i++) {
		const uint8_t *d = pp_frame_data(&f[i]);

		ok &= pp_frame_valid(&f[i]);
		ok &= f[i].more == (i + 1 < segs);
		for (uint32_t b = 0; ok && b < f[i].len; b++, j++)
			ok &= d[b] == pkt_byte(seq, len, j);
	}
	if (!ok) {
		fprintf(stderr, "packet %llu (%u segments, %u bytes) damaged\n",
			(unsigned long long)seq, segs, len);
		s->bad++;
	}
	s->pkts++;
	s->segs += segs;
	if (segs > s->max_segs)
		s->max_segs = segs;
}

/* Every packet a test sends has this length (0: PKT_LEN). */
static uint32_t pkt_len_of(uint64_t seq)
{
	/* Every fourth a single-buffer one between the large ones. */
	return seq % 4 == 3 ? 1000 : PKT_LEN;
}

static void stack_check(void *arg, struct pp_port *port,
			struct pp_frame *frames, unsigned int n)
{
	struct seen *s = arg;

	for (unsigned int i = 0; i < n;) {
		unsigned int segs = pp_pkt_segs(&frames[i], n - i);

		check_pkt(s, &frames[i], segs, pkt_len_of(s->next_seq));
		i += segs;
	}
	pp_frame_put_bulk(pp_port_allocator(port), frames, n);
}

static uint16_t verdict_of;

static void prog_all(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		     uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = verdict_of;
}

static void reset_env(void)
{
	net_env_fini(&env);
	net_env_init(&env, 64 << 20);
}

/* Poll until the pair is empty (@v on veth1; PASS on veth0). */
static void drain(struct pp_port *v0, struct pp_port *v1, uint16_t v)
{
	unsigned int got;

	do {
		verdict_of = v;
		got = pp_port_poll(v1, 0, PP_NET_BURST);
		if (v == PP_XDP_REDIRECT) {
			verdict_of = PP_XDP_PASS;
			got += pp_port_poll(v0, 0, PP_NET_BURST);
		}
	} while (got);
}

/*
 * Send @nr packets (pkt_len_of()) cut as @shape from veth0 to veth1 in
 * bursts, polling veth1 (verdict @v) after each; with REDIRECT, veth1
 * sends them back to veth0, polled with PASS. The PASS end's consumer
 * checks every byte.
 */
static void mb_case(const char *dev, enum shape shape, uint16_t v)
{
	const unsigned int nr = 400;
	struct pp_port *v0 = net_open(&env, dev);
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_pool *src = pp_port_rxq_pool(v0, 0);
	struct pp_prog prog = { .sz = sizeof(prog), .fn = prog_all };
	struct pp_prog pass = { .sz = sizeof(pass), .fn = prog_all };
	struct pp_port *sink = v == PP_XDP_REDIRECT ? v0 : v1;
	struct seen s = { 0 };
	struct pp_rxq_stats rs;
	struct pp_txq_stats ts;
	uint64_t seq = 0, segs_sent = 0, bytes_sent = 0;

	verdict_of = v;
	prog.targets[0] = v1;   /* veth1's TX feeds veth0's ring */
	prog.nr_targets = 1;
	CHECK_EQ(pp_port_set_prog(v1, &prog), 0);
	/* veth0 PASSes what comes back (drain() sets verdict_of). */
	if (v == PP_XDP_REDIRECT)
		CHECK_EQ(pp_port_set_prog(v0, &pass), 0);
	pp_port_set_stack(sink, stack_check, &s);
	while (seq < nr) {
		struct pp_frame f[PP_NET_BURST];
		unsigned int k = 0, sent, pkts = 0;

		pp_pool_set_owner(src);
		/* Whole packets while they fit in the burst. */
		while (seq + pkts < nr && k + PP_FRAME_MAX_SEGS <= PP_NET_BURST) {
			unsigned int segs = build_pkt(src, &f[k], seq + pkts,
						      pkt_len_of(seq + pkts),
						      shape);

			for (unsigned int j = 0; j < segs; j++)
				bytes_sent += f[k + j].len;
			k += segs;
			pkts++;
		}
		sent = pp_port_tx_burst(v0, 0, f, k);
		CHECK_EQ(sent, k);
		segs_sent += sent;
		seq += pkts;
		drain(v0, v1, v);
	}
	CHECK_EQ(pp_port_txq_stats(v0, 0, &ts), 0);
	CHECK_EQ(ts.packets, nr);
	CHECK_EQ(ts.bytes, bytes_sent);
	CHECK_EQ(ts.errors + ts.drops, 0);
	CHECK_EQ(pp_port_rxq_stats(v1, 0, &rs), 0);
	CHECK_EQ(rs.packets, nr);
	CHECK_EQ(rs.bytes, bytes_sent);
	CHECK_EQ(rs.errors + rs.drops, 0);
	switch (v) {
	case PP_XDP_PASS:
		CHECK_EQ(rs.xdp_pass, nr);
		break;
	case PP_XDP_DROP:
		CHECK_EQ(rs.xdp_drop, nr);
		CHECK_EQ(s.pkts, 0);
		break;
	case PP_XDP_REDIRECT:
		CHECK_EQ(rs.xdp_redirect, nr);
		CHECK_EQ(pp_port_txq_stats(v1, 0, &ts), 0);
		CHECK_EQ(ts.packets, nr);
		CHECK_EQ(ts.errors + ts.drops, 0);
		CHECK_EQ(pp_port_rxq_stats(v0, 0, &rs), 0);
		CHECK_EQ(rs.packets, nr);
		CHECK_EQ(rs.xdp_pass, nr);
		CHECK_EQ(rs.errors + rs.drops, 0);
		break;
	}
	if (v != PP_XDP_DROP) {
		CHECK_EQ(s.pkts, nr);
		CHECK_EQ(s.bad, 0);
		/* A 9000-byte packet is 3 segments on the receiver (the head
		 * behind the headroom, two more) with whole pages; fragments
		 * and small segments are copied one for one. */
		if (shape == SHAPE_PAGES && !strstr(dev, "frag"))
			CHECK_EQ(s.max_segs, 3);
		if (shape == SHAPE_SMALL)
			CHECK_EQ(s.max_segs, PP_FRAME_MAX_SEGS);
		CHECK(segs_sent >= s.segs);
	}
	net_check_pools(v0);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	reset_env();
}

static void test_pass_pages(void)
{
	mb_case("veth0,peer=veth1", SHAPE_PAGES, PP_XDP_PASS);
}

static void test_pass_frags(void)
{
	mb_case("veth0,peer=veth1", SHAPE_FRAGS, PP_XDP_PASS);
}

static void test_pass_small(void)
{
	mb_case("veth0,peer=veth1", SHAPE_SMALL, PP_XDP_PASS);
}

static void test_pass_frag2048(void)
{
	mb_case("veth0,peer=veth1,frag=2048", SHAPE_PAGES, PP_XDP_PASS);
	mb_case("veth0,peer=veth1,frag=2048", SHAPE_FRAGS, PP_XDP_PASS);
}

static void test_pass_fragauto(void)
{
	mb_case("veth0,peer=veth1,frag=auto", SHAPE_PAGES, PP_XDP_PASS);
	mb_case("veth0,peer=veth1,frag=auto", SHAPE_SMALL, PP_XDP_PASS);
}

static void test_redirect(void)
{
	mb_case("veth0,peer=veth1", SHAPE_PAGES, PP_XDP_REDIRECT);
	mb_case("veth0,peer=veth1", SHAPE_FRAGS, PP_XDP_REDIRECT);
	mb_case("veth0,peer=veth1,frag=auto", SHAPE_PAGES, PP_XDP_REDIRECT);
	mb_case("veth0,peer=veth1,frag=2048", SHAPE_SMALL, PP_XDP_REDIRECT);
}

static void test_drop(void)
{
	mb_case("veth0,peer=veth1", SHAPE_PAGES, PP_XDP_DROP);
	mb_case("veth0,peer=veth1,frag=2048", SHAPE_FRAGS, PP_XDP_DROP);
}

/* Give back frames rx_burst handed out (this thread owns their pool). */
static void put_frames(struct pp_port *p, struct pp_frame *f, unsigned int n)
{
	struct pp_page *pages[PP_NET_BURST];

	for (unsigned int i = 0; i < n; i++)
		pages[i] = f[i].page;
	pp_pool_recycle_direct_bulk(pp_port_rxq_pool(p, 0), pages, n);
}

/*
 * rx_burst hands out whole packets: one that does not fit in n waits for
 * a call with room; a burst of 64 slots that ends inside a packet takes
 * the packet's rest, and carries it when it does not fit; order is kept.
 */
static void test_rx_whole(void)
{
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1");
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_pool *src = pp_port_rxq_pool(v0, 0);
	struct pp_frame f[PP_NET_BURST + PP_FRAME_MAX_SEGS];
	struct pp_frame got[PP_NET_BURST];
	struct seen s = { 0 };
	unsigned int k, n, i;

	/* One 9000-byte packet (3 segments): n = 2 gets nothing. */
	pp_pool_set_owner(src);
	k = build_pkt(src, f, 0, PKT_LEN, SHAPE_PAGES);
	CHECK_EQ(k, 3);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, k), 3);
	CHECK_EQ(pp_port_rx_burst(v1, 0, got, 2), 0);
	CHECK_EQ(pp_port_rx_burst(v1, 0, got, 1), 0);
	n = pp_port_rx_burst(v1, 0, got, 3);
	CHECK_EQ(n, 3);
	check_pkt(&s, got, n, PKT_LEN);
	put_frames(v1, got, n);

	/* 63 single frames, then a packet: a 64-slot burst cuts it. */
	pp_pool_set_owner(src);
	for (k = 0; k < 63; k++)
		build_pkt(src, &f[k], 1 + k, 1000, SHAPE_PAGES);
	k += build_pkt(src, &f[k], 64, PKT_LEN, SHAPE_SMALL);
	CHECK_EQ(k, 63 + PP_FRAME_MAX_SEGS);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, 63), 63);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f + 63, k - 63), k - 63);
	n = pp_port_rx_burst(v1, 0, got, PP_NET_BURST);
	CHECK_EQ(n, 63);
	for (i = 0; i < n; i++)
		check_pkt(&s, &got[i], 1, 1000);
	put_frames(v1, got, n);
	/* The packet waits whole: too big for 17, there for 18. */
	CHECK_EQ(pp_port_rx_burst(v1, 0, got, PP_FRAME_MAX_SEGS - 1), 0);
	n = pp_port_rx_burst(v1, 0, got, PP_FRAME_MAX_SEGS);
	CHECK_EQ(n, PP_FRAME_MAX_SEGS);
	check_pkt(&s, got, n, PKT_LEN);
	put_frames(v1, got, n);
	CHECK_EQ(pp_port_rx_burst(v1, 0, got, PP_NET_BURST), 0);

	/* A carried packet, and more behind it in the ring, then close
	 * with both still held: veth_remove gives them back. */
	pp_pool_set_owner(src);
	for (k = 0; k < 63; k++)
		build_pkt(src, &f[k], 100 + k, 60, SHAPE_PAGES);
	k += build_pkt(src, &f[k], 163, PKT_LEN, SHAPE_FRAGS);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, k), k);
	k = build_pkt(src, f, 164, PKT_LEN, SHAPE_PAGES);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, k), k);
	n = pp_port_rx_burst(v1, 0, got, PP_NET_BURST);
	CHECK_EQ(n, 63);
	put_frames(v1, got, n);
	CHECK_EQ(s.bad, 0);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	reset_env();
}

/*
 * TX takes a packet whole or not at all: on a ring with too little room
 * it takes the packets before it and stops; an unfinished packet at the
 * end of the burst is not taken; the count never ends inside a packet.
 */
static void test_tx_whole(void)
{
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1,ring=64");
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_pool *src = pp_port_rxq_pool(v0, 0);
	struct pp_frame f[PP_NET_BURST], got[PP_NET_BURST];
	struct pp_txq_stats ts;
	unsigned int k, n, i, a;

	pp_pool_set_owner(src);
	/* 60 single frames leave 4 slots: a 6-segment fragment packet
	 * (12 slots) does not go, a 3-segment one of pages does. */
	for (k = 0; k < 60; k++)
		build_pkt(src, &f[k], k, 100, SHAPE_PAGES);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, 60), 60);
	k = build_pkt(src, f, 60, PKT_LEN, SHAPE_PAGES);
	a = k;
	k += build_pkt(src, &f[k], 61, PKT_LEN, SHAPE_FRAGS);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, k), a);
	/* Nothing else fits: the rest of the burst stays ours. */
	CHECK_EQ(pp_port_tx_burst(v0, 0, f + a, k - a), 0);
	/* An unfinished packet at the end of a burst is not taken. */
	CHECK_EQ(pp_port_tx_burst(v0, 0, f + a, 1), 0);
	n = pp_port_rx_burst(v1, 0, got, 60);
	CHECK_EQ(n, 60);
	put_frames(v1, got, n);
	n = pp_port_rx_burst(v1, 0, got, PP_NET_BURST);
	CHECK_EQ(n, a);
	put_frames(v1, got, n);
	/* Room now: the fragment packet goes whole. */
	pp_pool_set_owner(src);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f + a, k - a - 2), 0);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f + a, k - a), k - a);
	n = pp_port_rx_burst(v1, 0, got, PP_NET_BURST);
	CHECK_EQ(n, k - a);
	for (i = 0; i < n; i++)
		CHECK_EQ(got[i].more, i + 1 < n);
	put_frames(v1, got, n);
	CHECK_EQ(pp_port_txq_stats(v0, 0, &ts), 0);
	CHECK_EQ(ts.packets, 62);
	CHECK_EQ(ts.errors, 0);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	reset_env();
}

/*
 * Bad packets: TX takes and drops whole, with one error each, a packet
 * of 19 segments and one with a segment outside its block; RX drops
 * whole, with one error, a packet whose head does not fit behind the
 * receiver's headroom. The packets around them arrive intact.
 */
static void test_bad(void)
{
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1");
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_pool *src = pp_port_rxq_pool(v0, 0);
	struct pp_frame f[PP_NET_BURST], got[PP_NET_BURST];
	struct seen s = { 0 };
	struct pp_txq_stats ts;
	struct pp_rxq_stats rs;
	unsigned int k = 0, n, a, b;

	pp_pool_set_owner(src);
	k += build_pkt(src, &f[k], 0, PKT_LEN, SHAPE_PAGES);
	/* 19 segments: 18 of 500 bytes and one more. */
	a = k;
	k += build_pkt(src, &f[k], 99, PKT_LEN + 10, SHAPE_SMALL);
	CHECK_EQ(k - a, PP_FRAME_MAX_SEGS + 1);
	k += build_pkt(src, &f[k], 1, PKT_LEN, SHAPE_PAGES);
	/* A segment whose length runs past its block. */
	b = k;
	k += build_pkt(src, &f[k], 99, PKT_LEN, SHAPE_PAGES);
	f[b + 1].len = 4097;
	k += build_pkt(src, &f[k], 2, PKT_LEN, SHAPE_PAGES);
	/* A head of a whole page behind no headroom: valid to send, but
	 * longer than the receiver's buffer behind its 256 of headroom. */
	a = k;
	k += build_pkt(src, &f[k], 99, 5000, SHAPE_PAGES);
	f[a].headroom = 0;
	f[a].len = PP_PAGE_SIZE;
	f[a + 1].len = 5000 - PP_PAGE_SIZE;
	k += build_pkt(src, &f[k], 3, PKT_LEN, SHAPE_PAGES);
	REQUIRE(k <= PP_NET_BURST);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, k), k);
	CHECK_EQ(pp_port_txq_stats(v0, 0, &ts), 0);
	CHECK_EQ(ts.errors, 2);
	CHECK_EQ(ts.packets, 7);
	n = pp_port_rx_burst(v1, 0, got, PP_NET_BURST);
	CHECK_EQ(n, 4 * 3);
	for (unsigned int i = 0; i < n; i += 3)
		check_pkt(&s, &got[i], 3, PKT_LEN);
	CHECK_EQ(s.bad, 0);
	put_frames(v1, got, n);
	CHECK_EQ(pp_port_rxq_stats(v1, 0, &rs), 0);
	CHECK_EQ(rs.errors, 1);
	CHECK_EQ(rs.packets, 4);
	net_check_pools(v0);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	reset_env();
}

/*
 * Geometry rewritten on the ring after TX checked it (the page's
 * private_data, meta_pack()'s layout), in the middle segment of a
 * 3-segment packet: offsets and headrooms near 2^16 and 2^32, an offset
 * with bit 31 set (one past the frame's 31 bits: it must fail the check,
 * not wrap to a small offset), one byte past the page. Each packet is
 * dropped whole with one RX error; the good packets around them arrive.
 */
static void test_ring_geometry(void)
{
	static const struct { uint32_t off; uint16_t hr, len; } bad[] = {
		{ 0xffffff00u, 0x100, 64 },      /* offset + headroom wraps */
		{ 0xfffffff0u, 0, 0x20 },        /* offset + len wraps */
		{ 0xffffffffu, 0xffff, 0xffff }, /* every field at its max */
		{ 0x80000000u, 0, 64 },          /* bit 31: 0 once masked */
		{ 0xffff, 0, 64 },               /* offset near 2^16 */
		{ 0, 0xffff, 1 },                /* headroom near 2^16 */
		{ 0, 0, PP_PAGE_SIZE + 1 },      /* one byte past the page */
	};
	const unsigned int nr = sizeof(bad) / sizeof(bad[0]);
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1");
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_pool *src = pp_port_rxq_pool(v0, 0);
	struct pp_frame f[3], got[PP_NET_BURST];
	struct seen s = { 0 };
	struct pp_rxq_stats rs;
	unsigned int i, k, n;

	for (i = 0; i < nr; i++) {
		pp_pool_set_owner(src);
		k = build_pkt(src, f, 99, PKT_LEN, SHAPE_PAGES);
		CHECK_EQ(pp_port_tx_burst(v0, 0, f, k), k);
		f[1].page->private_data = (uint64_t)bad[i].off << 32 |
					  (uint64_t)bad[i].hr << 16 |
					  bad[i].len;
		k = build_pkt(src, f, i, PKT_LEN, SHAPE_PAGES);
		CHECK_EQ(pp_port_tx_burst(v0, 0, f, k), k);
		n = pp_port_rx_burst(v1, 0, got, PP_NET_BURST);
		CHECK_EQ(n, 3);
		if (n == 3)
			check_pkt(&s, got, 3, PKT_LEN);
		put_frames(v1, got, n);
	}
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.pkts, nr);
	CHECK_EQ(pp_port_rxq_stats(v1, 0, &rs), 0);
	CHECK_EQ(rs.errors, nr);
	CHECK_EQ(rs.packets, nr);
	net_check_pools(v0);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	reset_env();
}

/* xorshift64: a fixed sequence, so a failure reproduces. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/*
 * Build a random packet @seq into @f: 1 to 18 segments (19, to be
 * refused, one time in 32), each a page or a 2048-byte fragment of @src
 * with a random length, the head behind the headroom; one time in 32 a
 * segment runs past its block. *@len: its bytes; *@bad: TX must drop it.
 */
static unsigned int random_pkt(struct pp_pool *src, struct pp_frame *f,
			       uint64_t seq, uint32_t *len, bool *bad)
{
	unsigned int segs = rnd(32) ? 1 + rnd(rnd(4) ? 4 : PP_FRAME_MAX_SEGS) :
				      PP_FRAME_MAX_SEGS + 1;
	uint32_t total = 0, done = 0;
	unsigned int j;

	*bad = segs > PP_FRAME_MAX_SEGS;
	for (j = 0; j < segs; j++) {
		uint32_t hr = j ? 0 : HR, off = 0, cap;
		struct pp_page *page;

		if (rnd(3)) {
			page = pp_pool_alloc_pages(src);
			cap = PP_PAGE_SIZE - hr;
		} else {
			page = pp_pool_alloc_frag(src, &off, 2048);
			cap = 2048 - hr;
		}
		REQUIRE(page != NULL);
		f[j] = (struct pp_frame){
			.page = page, .offset = off, .headroom = (uint16_t)hr,
			.len = (uint16_t)(1 + rnd(cap)), .more = j + 1 < segs,
		};
		if (!j && f[j].len < 12)
			f[j].len = 12;   /* room for the seq and the length */
		total += f[j].len;
	}
	for (j = 0; j < segs; j++) {
		for (uint32_t b = 0; b < f[j].len; b++)
			((uint8_t *)pp_frame_data(&f[j]))[b] =
				pkt_byte(seq, total, done + b);
		done += f[j].len;
	}
	if (!rnd(32)) {
		j = rnd(segs);
		f[j].len = (uint16_t)(PP_PAGE_SIZE - f[j].offset -
				      f[j].headroom + 1);
		*bad = true;
	}
	*len = total;
	return segs;
}

/*
 * Random bursts of random packets (random segments, pages and
 * fragments, some bad, some cut by the burst's end) into a 64-slot ring,
 * received with random n: TX takes whole packets only and drops bad ones
 * whole (one error each); RX gives exactly the good packets taken, in
 * order and intact, whole, never more than n frames; the pools balance.
 */
static void random_case(const char *dev)
{
	struct pp_port *v0 = net_open(&env, dev);
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_pool *src = pp_port_rxq_pool(v0, 0), *dst;
	static uint32_t want_len[1 << 16];
	uint64_t seq = 0, next_rx = 0, nr_want = 0, bad_taken = 0;
	struct seen s = { 0 };
	struct pp_txq_stats ts;
	struct pp_rxq_stats rs;
	unsigned int round;

	dst = pp_port_rxq_pool(v1, 0);
	for (round = 0; round < 3000; round++) {
		struct pp_frame f[PP_NET_BURST + 2 * PP_FRAME_MAX_SEGS];
		struct pp_frame got[PP_NET_BURST];
		uint32_t lens[PP_NET_BURST + 2 * PP_FRAME_MAX_SEGS];
		bool bad[PP_NET_BURST + 2 * PP_FRAME_MAX_SEGS];
		unsigned int start[PP_NET_BURST + 2 * PP_FRAME_MAX_SEGS];
		unsigned int k = 0, npkt = 0, sent, i, n, want_n;

		pp_pool_set_owner(src);
		while (k + PP_FRAME_MAX_SEGS + 1 <= PP_NET_BURST && rnd(8)) {
			start[npkt] = k;
			k += random_pkt(src, &f[k], seq + npkt, &lens[npkt],
					&bad[npkt]);
			npkt++;
		}
		/* Sometimes the burst ends inside the last packet. */
		n = k;
		if (npkt && f[k - 1].more == 0 && start[npkt - 1] + 1 < k &&
		    !rnd(8))
			n = k - 1;
		sent = pp_port_tx_burst(v0, 0, f, n);
		CHECK(sent <= n);
		CHECK(!sent || !f[sent - 1].more);
		/* Whole packets taken; bad ones count, good ones arrive. */
		for (i = 0; i < npkt && start[i] < sent; i++) {
			CHECK(i + 1 == npkt || start[i + 1] <= sent);
			if (bad[i])
				bad_taken++;
			else
				want_len[nr_want++ % (1 << 16)] = lens[i];
		}
		/* Packets not taken: the sender recycles them. */
		for (unsigned int j = sent; j < k; j++)
			pp_pool_recycle_direct(src, f[j].page);
		seq += i;
		/* Renumber what was not taken: it is sent again never. */
		CHECK(i == npkt || n < k || sent < n);
		/* The receiver takes with a random n. */
		for (unsigned int r = rnd(3); r < 3; r++) {
			want_n = 1 + rnd(80);
			n = pp_port_rx_burst(v1, 0, got, want_n);
			CHECK(n <= want_n && n <= PP_NET_BURST);
			CHECK(!n || !got[n - 1].more);
			for (i = 0; i < n;) {
				unsigned int segs = pp_pkt_segs(&got[i], n - i);

				CHECK(next_rx < nr_want);
				/* Seqs of refused or untaken packets are
				 * skipped: match on the expected length and
				 * the seq the bytes carry. */
				s.next_seq = *(uint64_t *)pp_frame_data(&got[i]);
				check_pkt(&s, &got[i], segs,
					  want_len[next_rx++ % (1 << 16)]);
				i += segs;
			}
			pp_pool_set_owner(dst);
			put_frames(v1, got, n);
		}
	}
	/* Drain. */
	for (;;) {
		struct pp_frame got[PP_NET_BURST];
		unsigned int n = pp_port_rx_burst(v1, 0, got, PP_NET_BURST);

		if (!n)
			break;
		for (unsigned int i = 0; i < n;) {
			unsigned int segs = pp_pkt_segs(&got[i], n - i);

			s.next_seq = *(uint64_t *)pp_frame_data(&got[i]);
			check_pkt(&s, &got[i], segs,
				  want_len[next_rx++ % (1 << 16)]);
			i += segs;
		}
		put_frames(v1, got, n);
	}
	CHECK_EQ(next_rx, nr_want);
	CHECK_EQ(s.bad, 0);
	CHECK(s.max_segs > 4);
	CHECK(bad_taken > 0);
	CHECK_EQ(pp_port_txq_stats(v0, 0, &ts), 0);
	CHECK_EQ(ts.errors, bad_taken);
	CHECK_EQ(ts.packets, nr_want + bad_taken);
	CHECK_EQ(pp_port_rxq_stats(v1, 0, &rs), 0);
	CHECK_EQ(rs.errors + rs.drops, 0);
	CHECK_EQ(rs.packets, nr_want);
	net_check_pools(v0);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	reset_env();
}

static void test_random(void)
{
	random_case("veth0,peer=veth1,ring=64");
	random_case("veth0,peer=veth1,ring=128,frag=2048");
	random_case("veth0,peer=veth1,ring=64,frag=auto");
}

int main(void)
{
	net_env_init(&env, 64 << 20);
	RUN_TEST(test_pass_pages);
	RUN_TEST(test_pass_frags);
	RUN_TEST(test_pass_small);
	RUN_TEST(test_pass_frag2048);
	RUN_TEST(test_pass_fragauto);
	RUN_TEST(test_redirect);
	RUN_TEST(test_drop);
	RUN_TEST(test_rx_whole);
	RUN_TEST(test_tx_whole);
	RUN_TEST(test_bad);
	RUN_TEST(test_ring_geometry);
	RUN_TEST(test_random);
	net_env_fini(&env);
	return pp_test_result();
}
