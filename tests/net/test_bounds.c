/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bounds.c - frames that do not fit in their page, on every path of
 * the null and veth drivers and the poll: each one is dropped, counted in
 * its queue's errors and its page goes home; nothing is copied from or
 * sent beyond the page. The geometries are chosen where 32-bit sums wrap
 * (offset + headroom, + len) and at the page's last byte.
 */
#include "net_test.h"

static struct net_env env;

struct geom {
	uint32_t offset;
	uint16_t headroom;
	uint16_t len;
};

static const struct geom bad_geoms[] = {
	{ 0xffffff00u, 0x100, 64 },     /* offset + headroom wraps to 0 */
	{ 0xfffffff0u, 0, 0x20 },       /* offset + len wraps to 0x10 */
	{ 0xffffffffu, 0xffff, 0xffff },/* every field at its maximum */
	{ 0xffff, 0, 64 },              /* offset near 2^16, far past the page */
	{ 0, 0xffff, 1 },               /* headroom near 2^16 */
	{ 0xffff, 0xffff, 0xffff },     /* 16-bit values that sum past 2^17 */
	{ 64, 256, PP_PAGE_SIZE - 320 + 1 }, /* one byte past the page end */
};
#define NR_BAD (sizeof(bad_geoms) / sizeof(bad_geoms[0]))

/* The largest good frame: its last byte is the page's last byte. */
static const struct geom edge = { 64, 256, PP_PAGE_SIZE - 320 };

static void set_geom(struct pp_frame *f, const struct geom *g)
{
	f->offset = g->offset;
	f->headroom = g->headroom;
	f->len = g->len;
}

/* Where veth keeps a frame's geometry while its page is on the ring
 * (veth.c's meta_pack): what a misbehaving peer could write. */
static void set_ring_meta(struct pp_page *page, const struct geom *g)
{
	page->private_data = (uint64_t)g->offset << 32 |
			     (uint64_t)g->headroom << 16 | g->len;
}

static void fill_edge(struct pp_frame *f)
{
	uint8_t *d;

	set_geom(f, &edge);
	d = pp_frame_data(f);
	for (unsigned int j = 0; j < f->len; j++)
		d[j] = (uint8_t)(j * 13 + 5);
}

static int edge_ok(const struct pp_frame *f)
{
	const uint8_t *d = pp_frame_data(f);

	if (f->len != edge.len)
		return 0;
	for (unsigned int j = 0; j < f->len; j++)
		if (d[j] != (uint8_t)(j * 13 + 5))
			return 0;
	return 1;
}

/* ---- null TX: a sink, but it still refuses to take bad frames ---- */

static void test_null_tx(void)
{
	struct pp_port *src = net_open(&env, "null0");
	struct pp_port *sink = net_open(&env, "null1");
	struct pp_frame f[NR_BAD + 1] = { 0 };
	struct pp_txq_stats ts;
	unsigned int i;

	REQUIRE(pp_port_rx_burst(src, 0, f, NR_BAD + 1) == NR_BAD + 1);
	for (i = 0; i < NR_BAD; i++)
		set_geom(&f[i], &bad_geoms[i]);
	set_geom(&f[NR_BAD], &edge);
	/* All taken: bad frames are the port's to drop, not the caller's. */
	CHECK_EQ(pp_port_tx_burst(sink, 0, f, NR_BAD + 1), NR_BAD + 1);
	CHECK_EQ(pp_port_txq_stats(sink, 0, &ts), 0);
	CHECK_EQ(ts.errors, NR_BAD);
	CHECK_EQ(ts.drops, 0);
	net_check_pools(src);
	CHECK_EQ(pp_port_close(src), 0);
	CHECK_EQ(pp_port_close(sink), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

/* ---- veth TX: bad frames never reach the ring ---- */

static void test_veth_tx(void)
{
	struct pp_port *src = net_open(&env, "null0");
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1");
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_frame f[NR_BAD + 1], got[NR_BAD + 1];
	struct pp_txq_stats ts;
	struct pp_rxq_stats rs;
	unsigned int i, n;

	REQUIRE(pp_port_rx_burst(src, 0, f, NR_BAD + 1) == NR_BAD + 1);
	/* The good one in the middle: what follows a bad frame goes too. */
	for (i = 0; i < NR_BAD; i++)
		set_geom(&f[i < NR_BAD / 2 ? i : i + 1], &bad_geoms[i]);
	fill_edge(&f[NR_BAD / 2]);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, NR_BAD + 1), NR_BAD + 1);
	CHECK_EQ(pp_port_txq_stats(v0, 0, &ts), 0);
	CHECK_EQ(ts.errors, NR_BAD);

	n = pp_port_rx_burst(v1, 0, got, NR_BAD + 1);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK(edge_ok(&got[0]));
		pp_pool_recycle_direct(pp_port_rxq_pool(v1, 0), got[0].page);
	}
	CHECK_EQ(pp_port_rxq_stats(v1, 0, &rs), 0);
	CHECK_EQ(rs.errors, 0);
	net_check_pools(src);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	CHECK_EQ(pp_port_close(src), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

/*
 * A full ring: a bad frame is taken only when every frame in front of it
 * went on the ring, so what the port refuses is one run at the end.
 */
static void test_veth_tx_full_ring(void)
{
	struct pp_port *src = net_open(&env, "null0");
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1,ring=64");
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_frame f[PP_NET_BURST + 2], got[PP_NET_BURST];
	struct pp_txq_stats ts;
	unsigned int i;

	/* 64 good, then a bad one (taken), then a good one (refused). */
	REQUIRE(pp_port_rx_burst(src, 0, f, PP_NET_BURST) == PP_NET_BURST);
	REQUIRE(pp_port_rx_burst(src, 0, f + PP_NET_BURST, 2) == 2);
	set_geom(&f[PP_NET_BURST], &bad_geoms[0]);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, PP_NET_BURST + 2),
		 PP_NET_BURST + 1);
	CHECK_EQ(pp_port_txq_stats(v0, 0, &ts), 0);
	CHECK_EQ(ts.errors, 1);

	/* Ring still full: a good frame in front keeps the bad one out. */
	f[0] = f[PP_NET_BURST + 1];
	REQUIRE(pp_port_rx_burst(src, 0, &f[1], 1) == 1);
	set_geom(&f[1], &bad_geoms[1]);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, 2), 0);
	CHECK_EQ(pp_port_txq_stats(v0, 0, &ts), 0);
	CHECK_EQ(ts.errors, 1);
	for (i = 0; i < 2; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(src, 0), f[i].page);

	CHECK_EQ(pp_port_rx_burst(v1, 0, got, PP_NET_BURST), PP_NET_BURST);
	for (i = 0; i < PP_NET_BURST; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(v1, 0), got[i].page);
	net_check_pools(src);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	CHECK_EQ(pp_port_close(src), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

/*
 * veth RX: geometry rewritten on the ring, after TX checked it. @own: the
 * pages are the receiver's (a loop through the pair, taken without a
 * copy); otherwise another pool's (copied).
 */
static void veth_rx_case(int own)
{
	struct pp_port *src = net_open(&env, "null0");
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1");
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_pool *rx_pool = pp_port_rxq_pool(v1, 0);
	/* Zeroed: the own case sets only .page here, and .more must be clear. */
	struct pp_frame f[NR_BAD + 1] = { 0 }, got[NR_BAD + 1];
	struct pp_rxq_stats rs;
	unsigned int i, n;

	if (own) {
		/* This thread opened v1, so it owns v1's pool. */
		for (i = 0; i < NR_BAD + 1; i++) {
			f[i].page = pp_pool_alloc_pages(rx_pool);
			REQUIRE(f[i].page != NULL);
		}
	} else {
		REQUIRE(pp_port_rx_burst(src, 0, f, NR_BAD + 1) == NR_BAD + 1);
	}
	for (i = 0; i < NR_BAD + 1; i++)
		fill_edge(&f[i]);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, NR_BAD + 1), NR_BAD + 1);
	for (i = 0; i < NR_BAD; i++)
		set_ring_meta(f[i + 1].page, &bad_geoms[i]);

	n = pp_port_rx_burst(v1, 0, got, NR_BAD + 1);
	CHECK_EQ(n, 1);
	for (i = 0; i < n; i++) {
		CHECK(edge_ok(&got[i]));
		pp_pool_recycle_direct(rx_pool, got[i].page);
	}
	CHECK_EQ(pp_port_rxq_stats(v1, 0, &rs), 0);
	CHECK_EQ(rs.errors, NR_BAD);
	CHECK_EQ(rs.packets, n);
	net_check_pools(src);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	CHECK_EQ(pp_port_close(src), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

static void test_veth_rx_copied(void)
{
	veth_rx_case(0);
}

static void test_veth_rx_own_pages(void)
{
	veth_rx_case(1);
}

/* ---- the poll: a program that moves frames out of their page ---- */

struct mover {
	unsigned int seen;
	unsigned int stacked;
};

static void prog_move_out(const struct pp_prog_ctx *ctx,
			  struct pp_frame *frames, uint16_t *verdicts,
			  unsigned int n)
{
	static const uint16_t cycle[] = {
		PP_XDP_PASS, PP_XDP_TX, PP_XDP_REDIRECT_TO(0), PP_XDP_DROP,
	};
	struct mover *m = ctx->arg;

	for (unsigned int i = 0; i < n; i++, m->seen++) {
		set_geom(&frames[i], &bad_geoms[m->seen % NR_BAD]);
		verdicts[i] = cycle[m->seen % 4];
	}
}

/* Counts what arrives and frees it; never reads the data. */
static void stack_count(void *arg, struct pp_port *port,
			struct pp_frame *frames, unsigned int n)
{
	struct mover *m = arg;

	for (unsigned int i = 0; i < n; i++)
		pp_free_page(pp_port_allocator(port), frames[i].page);
	m->stacked += n;
}

static void test_poll_program_moves_out(void)
{
	struct pp_port *p = net_open(&env, "null0");
	struct pp_port *sink = net_open(&env, "null1");
	struct mover m = { 0 };
	struct pp_prog prog = {
		.sz = sizeof(prog), .fn = prog_move_out, .arg = &m,
		.targets = { sink }, .nr_targets = 1,
	};
	struct pp_rxq_stats rs;
	struct pp_txq_stats ts;

	CHECK_EQ(pp_port_set_prog(p, &prog), 0);
	pp_port_set_stack(p, stack_count, &m);
	/*
	 * A quarter each: PASS never reaches the stack (an RX error); TX
	 * and REDIRECT reach the target's driver, which drops them as TX
	 * errors; DROP recycles.
	 */
	CHECK_EQ(pp_port_poll(p, 0, 2 * PP_NET_BURST), 2 * PP_NET_BURST);
	CHECK_EQ(m.seen, 2 * PP_NET_BURST);
	CHECK_EQ(m.stacked, 0);
	CHECK_EQ(pp_port_rxq_stats(p, 0, &rs), 0);
	CHECK_EQ(rs.errors, PP_NET_BURST / 2);
	CHECK_EQ(rs.xdp_pass, 0);
	CHECK_EQ(rs.xdp_tx, PP_NET_BURST / 2);
	CHECK_EQ(rs.xdp_redirect, PP_NET_BURST / 2);
	CHECK_EQ(rs.xdp_drop, PP_NET_BURST / 2);
	CHECK_EQ(pp_port_txq_stats(p, 0, &ts), 0);
	CHECK_EQ(ts.errors, PP_NET_BURST / 2);
	CHECK_EQ(pp_port_txq_stats(sink, 0, &ts), 0);
	CHECK_EQ(ts.errors, PP_NET_BURST / 2);
	net_check_pools(p);
	CHECK_EQ(pp_port_close(p), 0);
	CHECK_EQ(pp_port_close(sink), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

/* ---- the range check itself, where sums wrap ---- */

static void test_range_ok(void)
{
	/* Indices into a ring of 2^16 slots (a virtqueue's largest). */
	REQUIRE(pp_range_ok(0xffff, 1, 0x10000));
	REQUIRE(!pp_range_ok(0x10000, 1, 0x10000));
	REQUIRE(!pp_range_ok(0xffff, 2, 0x10000));
	/* 32-bit lengths: their 32-bit sum would wrap to a small value. */
	REQUIRE(!pp_range_ok(0xffffffffu, 2, PP_PAGE_SIZE));
	REQUIRE(!pp_range_ok(16, 0xfffffff0u, PP_PAGE_SIZE));
	REQUIRE(pp_range_ok(0xffffffffu, 1, 0x100000000ull));
	REQUIRE(!pp_range_ok(0x100000000ull, 0, 0xffffffffu));
	/* 64-bit: off + len wraps to 1, still refused. */
	REQUIRE(!pp_range_ok(UINT64_MAX, 2, PP_PAGE_SIZE));
	REQUIRE(!pp_range_ok(2, UINT64_MAX, PP_PAGE_SIZE));
	/* Empty spans: at the end is inside, past it is not. */
	REQUIRE(pp_range_ok(PP_PAGE_SIZE, 0, PP_PAGE_SIZE));
	REQUIRE(!pp_range_ok(PP_PAGE_SIZE + 1, 0, PP_PAGE_SIZE));
	REQUIRE(pp_range_ok(0, PP_PAGE_SIZE, PP_PAGE_SIZE));
}

int main(void)
{
	pp_test_capture_log();
	net_env_init(&env, 16 << 20);
	RUN_TEST(test_range_ok);
	RUN_TEST(test_null_tx);
	RUN_TEST(test_veth_tx);
	RUN_TEST(test_veth_tx_full_ring);
	RUN_TEST(test_veth_rx_copied);
	RUN_TEST(test_veth_rx_own_pages);
	RUN_TEST(test_poll_program_moves_out);
	net_env_fini(&env);
	return pp_test_result();
}
