/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_multibuf.c - multi-buffer packets through lib/net and the null
 * driver: a 9018-byte frame comes as whole packets of segments, a program
 * sees one verdict per packet, every verdict moves a packet whole, TX
 * never takes half a packet, counters count packets, and a packet with
 * one bad segment is one error that loses no page.
 */
#include "net_test.h"

static struct net_env env;

#define JUMBO 9018

/* Segment lengths of a 9018-byte frame in 4 KiB pages behind 256 bytes of
 * headroom: the head fills its page, the next one a page, the last the
 * rest. */
static const uint16_t jumbo_segs[] = { 4096 - 256, 4096, JUMBO - 3840 - 4096 };

static void fini(void)
{
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

static void test_helpers(void)
{
	struct pp_page p0 = { 0 };
	struct pp_frame f[5] = {
		{ .page = &p0, .len = 10, .more = 1 },
		{ .page = &p0, .len = 20, .more = 1 },
		{ .page = &p0, .len = 30 },
		{ .page = &p0, .len = 40 },
		{ .page = &p0, .len = 50, .more = 1 },
	};

	CHECK_EQ(sizeof(struct pp_frame), 16);
	CHECK_EQ(pp_pkt_segs(f, 5), 3);
	CHECK_EQ(pp_pkt_len(f, 5), 60);
	CHECK_EQ(pp_pkt_segs(f + 3, 2), 1);
	/* Unfinished: all the frames there are. */
	CHECK_EQ(pp_pkt_segs(f + 4, 1), 1);
	CHECK_EQ(pp_pkt_segs(f, 2), 2);
	CHECK_EQ(pp_burst_whole(f, 5), 4);
	CHECK_EQ(pp_burst_whole(f, 4), 4);
	CHECK_EQ(pp_burst_whole(f, 2), 0);
	CHECK_EQ(pp_burst_whole(f, 0), 0);
	/* The word the drivers' loops read and write: the offset in its
	 * low 31 bits, .more at the top (bit fields fill from the low bit
	 * on the ABIs pagepool builds for). */
	{
		struct pp_frame g = { .more = 1 };

		CHECK_EQ(g.offset_word_, 1u << 31);
		g = (struct pp_frame){ .offset = 0x12345 };
		CHECK_EQ(g.offset_word_, 0x12345u);
		g = (struct pp_frame){ .offset_word_ = 4032 };
		CHECK_EQ(g.offset, 4032);
		CHECK_EQ(g.more, 0);
	}
	/* The offset field keeps its 31 bits beside the flag. */
	f[0].offset = PP_FRAME_OFFSET_MAX;
	CHECK_EQ(f[0].more, 1);
	CHECK_EQ(f[0].offset, PP_FRAME_OFFSET_MAX);
	f[0].more = 0;
	CHECK_EQ(f[0].offset, PP_FRAME_OFFSET_MAX);
}

/* A received jumbo packet: segments, lengths, header and number. */
static void check_jumbo(const struct pp_frame *f, uint64_t seq)
{
	const uint8_t *d = pp_frame_data(&f[0]);

	CHECK_EQ(pp_pkt_segs(f, 3), 3);
	CHECK_EQ(pp_pkt_len(f, 3), JUMBO);
	for (unsigned int s = 0; s < 3; s++) {
		CHECK_EQ(f[s].len, jumbo_segs[s]);
		CHECK_EQ(f[s].more, s < 2);
		CHECK(pp_frame_valid(&f[s]));
	}
	CHECK_EQ(f[1].headroom, 0);
	CHECK_EQ(d[12], 0x88);
	CHECK_EQ(frame_seq(&f[0]), seq);
}

static void test_null_rx_tx(void)
{
	struct pp_port *a = net_open(&env, "null0,size=9018");
	struct pp_port *b = net_open(&env, "null1");
	struct pp_frame f[PP_NET_BURST] = { 0 };
	struct pp_rxq_stats rs;
	struct pp_txq_stats ts;
	unsigned int n, i;

	/* 64 frames hold 21 whole packets, never a piece of a 22nd. */
	n = pp_port_rx_burst(a, 0, f, PP_NET_BURST);
	CHECK_EQ(n, 63);
	for (i = 0; i < n; i += 3)
		check_jumbo(&f[i], i / 3);
	/* No room for a whole packet: nothing, and no drop either. */
	CHECK_EQ(pp_port_rx_burst(a, 0, f + n, 1), 0);
	pp_port_rxq_stats(a, 0, &rs);
	CHECK_EQ(rs.packets, 21);
	CHECK_EQ(rs.bytes, 21ull * JUMBO);
	CHECK_EQ(rs.drops, 0);

	/* TX stops before an unfinished packet and takes whole ones. */
	CHECK_EQ(pp_port_tx_burst(b, 0, f, 5), 3);
	CHECK_EQ(pp_port_tx_burst(b, 0, f + 3, 2), 0);
	CHECK_EQ(pp_port_tx_burst(b, 0, f + 3, n - 3), n - 3);
	pp_port_txq_stats(b, 0, &ts);
	CHECK_EQ(ts.packets, 21);
	CHECK_EQ(ts.bytes, 21ull * JUMBO);
	CHECK_EQ(ts.errors, 0);
	net_check_pools(a);
	CHECK_EQ(pp_port_close(a), 0);
	CHECK_EQ(pp_port_close(b), 0);
	fini();
}

/* Fragments as segments: 2048-byte buffers, five per jumbo packet. */
static void test_null_frag_segments(void)
{
	struct pp_port *a = net_open(&env, "null0,size=9018,frag=2048");
	struct pp_frame f[PP_NET_BURST] = { 0 };
	unsigned int n, i;

	n = pp_port_rx_burst(a, 0, f, PP_NET_BURST);
	CHECK_EQ(n, 60);
	for (i = 0; i < n; i += 5) {
		CHECK_EQ(pp_pkt_segs(&f[i], n - i), 5);
		CHECK_EQ(pp_pkt_len(&f[i], n - i), JUMBO);
		CHECK_EQ(f[i].len, 2048 - 256);
		CHECK_EQ(f[i + 1].len, 2048);
	}
	for (i = 0; i < n; i++)
		pp_pool_recycle_direct(pp_page_pool(f[i].page), f[i].page);
	net_check_pools(a);
	CHECK_EQ(pp_port_close(a), 0);

	/* A frame over its fragment, however small: 768 + 732 bytes. */
	a = net_open(&env, "null0,size=1500,frag=1024");
	n = pp_port_rx_burst(a, 0, f, PP_NET_BURST);
	CHECK_EQ(n, 64);
	CHECK_EQ(f[0].len, 1024 - 256);
	CHECK_EQ(f[1].len, 1500 - 768);
	CHECK_EQ(pp_pkt_len(f, n), 1500);
	for (i = 0; i < n; i++)
		pp_pool_recycle_direct(pp_page_pool(f[i].page), f[i].page);
	net_check_pools(a);
	CHECK_EQ(pp_port_close(a), 0);
	fini();
}

static void test_null_refusals(void)
{
	/* 512-byte buffers would take 19 segments for 9216 bytes. */
	CHECK(pp_port_open("null0,size=9216,frag=512", &env.conf) == NULL);
	CHECK(pp_test_log_has("more than a packet's 18"));
	CHECK(pp_port_open("null0,size=9217", &env.conf) == NULL);
	CHECK(pp_test_log_has("from 60 to 9216"));
	env.conf.mtu = PP_PORT_MTU_MAX + 1;
	CHECK(pp_port_open("null0", &env.conf) == NULL);
	CHECK(pp_test_log_has("MTU 9199 is out of range"));
	env.conf.mtu = 9000;
	struct pp_port *p = net_open(&env, "null0");
	CHECK_EQ(pp_port_mtu(p), 9000);
	CHECK_EQ(pp_port_close(p), 0);
	env.conf.mtu = 0;
	p = net_open(&env, "null0");
	CHECK_EQ(pp_port_mtu(p), PP_PORT_MTU_DEFAULT);
	CHECK_EQ(pp_port_close(p), 0);
	fini();
}

/*
 * A program that gives each packet's head @verdict and the other
 * segments garbage (which must not count), and spoils segment 2 of
 * packet @bad_pkt (its length past the page).
 */
struct seg_prog {
	uint16_t verdict;
	int bad_pkt;
	uint64_t pkts_seen;
	uint64_t stack_pkts;
	uint64_t stack_bad;
};

static void prog_segs(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		      uint16_t *verdicts, unsigned int n)
{
	struct seg_prog *sp = ctx->arg;

	for (unsigned int i = 0; i < n; i++) {
		bool head = i == 0 || !frames[i - 1].more;

		verdicts[i] = head ? sp->verdict : 77;
		if (!head)
			continue;
		if ((int64_t)sp->pkts_seen == sp->bad_pkt) {
			/* 64 + 4096 bytes in a 4096-byte page. */
			frames[i + 2].headroom = 64;
			frames[i + 2].len = 4096;
		}
		sp->pkts_seen++;
	}
}

static void stack_segs(void *arg, struct pp_port *port,
		       struct pp_frame *frames, unsigned int n)
{
	struct seg_prog *sp = arg;
	unsigned int i, segs;

	for (i = 0; i < n; i += segs) {
		segs = pp_pkt_segs(&frames[i], n - i);
		sp->stack_pkts++;
		sp->stack_bad += pp_pkt_len(&frames[i], n - i) != JUMBO;
	}
	pp_frame_put_bulk(pp_port_allocator(port), frames, n);
}

static void run_verdict(uint16_t verdict, int bad_pkt, const char *frag)
{
	char dev[64];
	struct pp_port *a, *b;
	struct seg_prog sp = { .verdict = verdict, .bad_pkt = bad_pkt };
	struct pp_prog prog = { .sz = sizeof(prog), .fn = prog_segs,
				.arg = &sp };
	struct pp_rxq_stats rs;
	struct pp_txq_stats ts;

	snprintf(dev, sizeof(dev), "null0,size=9018%s", frag);
	a = net_open(&env, dev);
	b = net_open(&env, "null1");
	prog.targets[0] = b;
	prog.nr_targets = 1;
	CHECK_EQ(pp_port_set_prog(a, &prog), 0);
	pp_port_set_stack(a, stack_segs, &sp);
	for (int r = 0; r < 10; r++)
		pp_port_poll(a, 0, 256);
	pp_port_rxq_stats(a, 0, &rs);
	pp_port_txq_stats(b, 0, &ts);
	CHECK_EQ(rs.packets, sp.pkts_seen);
	/* The spoilt segment counts with its new length. */
	CHECK_EQ(rs.bytes, rs.packets * JUMBO +
				   (bad_pkt >= 0 ? 4096 - jumbo_segs[2] : 0));
	CHECK_EQ(rs.errors, bad_pkt >= 0);
	switch (verdict) {
	case PP_XDP_DROP:
		CHECK_EQ(rs.xdp_drop, rs.packets);
		break;
	case PP_XDP_PASS:
		CHECK_EQ(rs.xdp_pass + rs.errors, rs.packets);
		CHECK_EQ(sp.stack_pkts, rs.xdp_pass);
		CHECK_EQ(sp.stack_bad, 0);
		break;
	case PP_XDP_REDIRECT:
		/* The spoilt packet is redirected, and null1 drops it. */
		CHECK_EQ(rs.xdp_redirect, rs.packets);
		CHECK_EQ(ts.packets, rs.packets);
		CHECK_EQ(ts.errors, bad_pkt >= 0);
		CHECK_EQ(rs.errors, 0);
		break;
	}
	net_check_pools(a);
	CHECK_EQ(pp_port_close(a), 0);
	CHECK_EQ(pp_port_close(b), 0);
	fini();
}

static void test_poll_verdicts(void)
{
	run_verdict(PP_XDP_DROP, -1, "");
	run_verdict(PP_XDP_PASS, -1, "");
	run_verdict(PP_XDP_PASS, 5, "");
	run_verdict(PP_XDP_PASS, -1, ",frag=2048");
	run_verdict(PP_XDP_REDIRECT, -1, "");
}

/* A redirect of a spoilt packet: null1's TX counts it once. */
static void test_redirect_bad(void)
{
	struct pp_port *a = net_open(&env, "null0,size=9018");
	struct pp_port *b = net_open(&env, "null1");
	struct seg_prog sp = { .verdict = PP_XDP_REDIRECT, .bad_pkt = 3 };
	struct pp_prog prog = { .sz = sizeof(prog), .fn = prog_segs,
				.arg = &sp, .targets = { b }, .nr_targets = 1 };
	struct pp_txq_stats ts;

	CHECK_EQ(pp_port_set_prog(a, &prog), 0);
	pp_port_poll(a, 0, 64);
	pp_port_txq_stats(b, 0, &ts);
	CHECK_EQ(ts.errors, 1);
	CHECK_EQ(ts.packets, 21);
	net_check_pools(a);
	CHECK_EQ(pp_port_close(a), 0);
	CHECK_EQ(pp_port_close(b), 0);
	fini();
}

/* A budget below one packet still moves one. */
static void test_small_budget(void)
{
	struct pp_port *a = net_open(&env, "null0,size=9018");

	CHECK_EQ(pp_port_poll(a, 0, 1), 18);
	CHECK_EQ(pp_port_close(a), 0);
	fini();
}

int main(void)
{
	pp_test_capture_log();
	net_env_init(&env, 16 << 20);
	RUN_TEST(test_helpers);
	RUN_TEST(test_null_rx_tx);
	RUN_TEST(test_null_frag_segments);
	RUN_TEST(test_null_refusals);
	RUN_TEST(test_poll_verdicts);
	RUN_TEST(test_redirect_bad);
	RUN_TEST(test_small_budget);
	net_env_fini(&env);
	return pp_test_result();
}
