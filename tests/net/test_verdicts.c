/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_verdicts.c - frames through every verdict keep their payload and
 * sequence numbers, the counters say what happened, and no page is lost:
 * pools pass their walker and the allocator balances after every run,
 * PASS (pages leaving the pool for the stack) included.
 */
#include "net_test.h"

static struct net_env env;

/* ---- null RX fabricates ordered frames ---- */

static void test_null_raw_bursts(void)
{
	struct pp_port *a = net_open(&env, "null0,size=128");
	struct pp_port *b = net_open(&env, "null1");
	struct pp_frame f[32] = { 0 };
	struct pp_rxq_stats rs;
	struct pp_txq_stats ts;
	unsigned int i, n;

	n = pp_port_rx_burst(a, 0, f, 32);
	CHECK_EQ(n, 32);
	for (i = 0; i < n; i++) {
		const uint8_t *d = pp_frame_data(&f[i]);

		CHECK_EQ(frame_seq(&f[i]), i);
		CHECK_EQ(f[i].len, 128);
		CHECK_EQ(d[12], 0x88);
		CHECK_EQ(d[13], 0xb5);
		CHECK(pp_page_pool(f[i].page) == pp_port_rxq_pool(a, 0));
	}
	/* null TX completes at once: pages back to null0's pool. */
	CHECK_EQ(pp_port_tx_burst(b, 0, f, n), n);
	pp_port_rxq_stats(a, 0, &rs);
	pp_port_txq_stats(b, 0, &ts);
	CHECK_EQ(rs.packets, 32);
	CHECK_EQ(rs.bytes, 32 * 128);
	CHECK_EQ(ts.packets, 32);
	CHECK_EQ(ts.bytes, 32 * 128);
	CHECK_EQ(pp_pool_inflight(pp_port_rxq_pool(a, 0)) >= 32, 1);
	net_check_pools(a);
	CHECK_EQ(pp_port_close(a), 0);
	CHECK_EQ(pp_port_close(b), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

/* ---- a program that checks order and picks verdicts ---- */

struct checker {
	uint64_t next_seq;    /* expected sequence number */
	uint64_t seen;
	uint64_t bad;
	unsigned int stride;  /* sequence step between frames (0: 1) */
	unsigned int pattern; /* 0: null frames; 1: test payload frames */
	uint16_t verdicts[4]; /* cycled through */
	unsigned int nr_verdicts;
	uint64_t stack_frames;
	uint64_t stack_bad;
};

/* Payload frames: byte j of frame k is (k * 7 + j) & 0xff after a seq. */
static int payload_ok(const struct pp_frame *f)
{
	const uint8_t *d = pp_frame_data(f);
	uint64_t k = frame_seq(f);

	for (unsigned int j = PP_NULL_SEQ_OFF + 8; j < f->len; j++)
		if (d[j] != (uint8_t)(k * 7 + j))
			return 0;
	return f->len == 60 + (k * 37) % 1400;
}

static void prog_check(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		       uint16_t *verdicts, unsigned int n)
{
	struct checker *c = ctx->arg;

	for (unsigned int i = 0; i < n; i++) {
		uint64_t seq = frame_seq(&frames[i]);

		if (seq != c->next_seq || (c->pattern && !payload_ok(&frames[i])))
			c->bad++;
		c->next_seq = seq + (c->stride ? c->stride : 1);
		verdicts[i] = c->verdicts[c->seen++ % c->nr_verdicts];
	}
}

/* The stack: checks what arrives and frees it through the allocator. */
static void stack_check(void *arg, struct pp_port *port,
			struct pp_frame *frames, unsigned int n)
{
	struct checker *c = arg;

	for (unsigned int i = 0; i < n; i++) {
		/* Released: no pool, sole reference. */
		if (pp_page_pool(frames[i].page) != NULL ||
		    pp_page_ref_count(frames[i].page) != 1 ||
		    (c->pattern && !payload_ok(&frames[i])))
			c->stack_bad++;
		c->stack_frames++;
		pp_free_page(pp_port_allocator(port), frames[i].page);
	}
}

static void set_checker(struct pp_port *p, struct checker *c,
			struct pp_port *target)
{
	struct pp_prog prog = {
		.sz = sizeof(prog), .fn = prog_check, .arg = c,
		.targets = { target }, .nr_targets = target ? 1 : 0,
	};

	CHECK_EQ(pp_port_set_prog(p, &prog), 0);
	pp_port_set_stack(p, stack_check, c);
}

/*
 * null0 --REDIRECT--> veth0 ~~> veth1: DROP, PASS, TX (back out of veth1,
 * so it arrives on veth0), REDIRECT to null1 (consumed). Then veth0
 * receives the TX'd quarter, checks it and PASSes it.
 */
static void test_every_verdict(void)
{
	struct pp_port *n0 = net_open(&env, "null0");
	struct pp_port *n1 = net_open(&env, "null1");
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1");
	struct pp_port *v1 = pp_port_peer(v0);
	struct checker src = { .verdicts = { PP_XDP_REDIRECT }, .nr_verdicts = 1 };
	struct checker mid = {
		.verdicts = { PP_XDP_DROP, PP_XDP_PASS, PP_XDP_TX,
			      PP_XDP_REDIRECT_TO(0) },
		.nr_verdicts = 4,
	};
	struct checker back = {
		.verdicts = { PP_XDP_PASS }, .nr_verdicts = 1, .stride = 4,
		.next_seq = 2, /* the TX quarter: sequence numbers 2, 6, ... */
	};
	struct pp_rxq_stats rs;
	struct pp_txq_stats ts;
	unsigned int round;
	const unsigned int rounds = 100;

	set_checker(n0, &src, v0);
	set_checker(v1, &mid, n1);
	set_checker(v0, &back, NULL);

	for (round = 0; round < rounds; round++) {
		CHECK_EQ(pp_port_poll(n0, 0, PP_NET_BURST), PP_NET_BURST);
		CHECK_EQ(pp_port_poll(v1, 0, PP_NET_BURST), PP_NET_BURST);
		CHECK_EQ(pp_port_poll(v0, 0, PP_NET_BURST), PP_NET_BURST / 4);
	}
	CHECK_EQ(src.bad, 0);
	CHECK_EQ(mid.bad, 0);
	CHECK_EQ(back.bad, 0);
	CHECK_EQ(mid.stack_frames, rounds * PP_NET_BURST / 4);
	CHECK_EQ(mid.stack_bad, 0);
	CHECK_EQ(back.stack_frames, rounds * PP_NET_BURST / 4);
	CHECK_EQ(back.stack_bad, 0);

	pp_port_rxq_stats(v1, 0, &rs);
	CHECK_EQ(rs.packets, rounds * PP_NET_BURST);
	CHECK_EQ(rs.xdp_drop, rounds * PP_NET_BURST / 4);
	CHECK_EQ(rs.xdp_pass, rounds * PP_NET_BURST / 4);
	CHECK_EQ(rs.xdp_tx, rounds * PP_NET_BURST / 4);
	CHECK_EQ(rs.xdp_redirect, rounds * PP_NET_BURST / 4);
	CHECK_EQ(rs.drops + rs.errors, 0);
	pp_port_txq_stats(n1, 0, &ts);
	CHECK_EQ(ts.packets, rounds * PP_NET_BURST / 4);
	pp_port_txq_stats(v0, 0, &ts);
	CHECK_EQ(ts.packets, rounds * PP_NET_BURST);
	CHECK_EQ(ts.drops, 0);

	/* The PASS path took pages out of the veth pools: they were
	 * released, and the pools refilled from the allocator. */
	{
		struct pp_pool_stats ps;

		pp_pool_get_stats(pp_port_rxq_pool(v1, 0), &ps);
		CHECK(ps.release >= rounds * PP_NET_BURST / 4);
		CHECK(ps.alloc.slow > 0);
	}

	net_check_pools(n0);
	net_check_pools(v0);
	net_check_pools(v1);
	{
		char js[8192];
		int len = pp_port_stats_json(v1, js, sizeof(js));

		CHECK(len > 0 && (size_t)len < sizeof(js));
		CHECK(strstr(js, "\"xdp_pass\":1600") != NULL);
		CHECK(strstr(js, "\"pool\":{") != NULL);
	}
	CHECK_EQ(pp_port_close(v0), 0);   /* and veth1 */
	CHECK_EQ(pp_port_close(n0), 0);
	CHECK_EQ(pp_port_close(n1), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

/*
 * Test-made frames of many lengths, on plain allocator pages, sent into
 * veth0: veth1 copies them into its pool and its program sees every byte
 * intact; the sender's pages (no pool) are freed by the receiver.
 */
static void test_payload_through_veth(void)
{
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1,ring=256");
	struct pp_port *v1 = pp_port_peer(v0);
	struct checker c = {
		.verdicts = { PP_XDP_PASS, PP_XDP_DROP }, .nr_verdicts = 2,
		.pattern = 1,
	};
	struct pp_frame f[PP_NET_BURST] = { 0 };
	uint64_t k = 0;

	set_checker(v1, &c, NULL);
	for (int round = 0; round < 20; round++) {
		unsigned int i;

		for (i = 0; i < PP_NET_BURST; i++, k++) {
			struct pp_page *pg = pp_alloc_page(env.alloc);
			uint8_t *d;

			REQUIRE(pg != NULL);
			f[i] = (struct pp_frame){
				.page = pg, .offset = 64, .headroom = 32,
				.len = (uint16_t)(60 + (k * 37) % 1400),
			};
			d = pp_frame_data(&f[i]);
			memcpy(d + PP_NULL_SEQ_OFF, &k, sizeof(k));
			for (unsigned int j = PP_NULL_SEQ_OFF + 8; j < f[i].len; j++)
				d[j] = (uint8_t)(k * 7 + j);
		}
		CHECK_EQ(pp_port_tx_burst(v0, 0, f, PP_NET_BURST), PP_NET_BURST);
		CHECK_EQ(pp_port_poll(v1, 0, 256), PP_NET_BURST);
	}
	CHECK_EQ(c.bad, 0);
	CHECK_EQ(c.stack_bad, 0);
	CHECK_EQ(c.stack_frames, k / 2);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v1), 0);    /* either end closes the pair */
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

/* No program: everything is dropped back into the pool. Unknown
 * verdicts and bad redirect indexes count as errors and lose nothing. */
static void prog_bogus(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		       uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = i % 3 == 0 ? 99 : i % 3 == 1 ?
			PP_XDP_REDIRECT_TO(5) : PP_XDP_ABORTED;
}

static void test_default_and_bogus(void)
{
	struct pp_port *p = net_open(&env, "null0");
	struct pp_prog prog = { .sz = sizeof(prog), .fn = prog_bogus };
	struct pp_rxq_stats rs;

	CHECK_EQ(pp_port_poll(p, 0, 200), 200);
	pp_port_rxq_stats(p, 0, &rs);
	CHECK_EQ(rs.xdp_drop, 200);
	CHECK_EQ(pp_port_set_prog(p, &prog), 0);
	CHECK_EQ(pp_port_poll(p, 0, 64), 64);
	pp_port_rxq_stats(p, 0, &rs);
	CHECK_EQ(rs.errors, 64);
	prog.sz = 1;
	CHECK_EQ(pp_port_set_prog(p, &prog), -EINVAL);
	prog.sz = sizeof(prog);
	prog.nr_targets = 1;
	CHECK_EQ(pp_port_set_prog(p, &prog), -EINVAL);   /* NULL target */
	net_check_pools(p);
	CHECK_EQ(pp_port_close(p), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

int main(void)
{
	pp_test_capture_log();
	net_env_init(&env, 16 << 20);
	RUN_TEST(test_null_raw_bursts);
	RUN_TEST(test_every_verdict);
	RUN_TEST(test_payload_through_veth);
	RUN_TEST(test_default_and_bogus);
	net_env_fini(&env);
	return pp_test_result();
}
