/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_full.c - a full ring or an empty pool: frames are dropped and
 * counted, and nothing leaks, neither in the pools nor in the allocator,
 * also when the port is closed with frames still in a ring.
 */
#include "net_test.h"

static struct net_env env;

static void redirect_all(const struct pp_prog_ctx *ctx,
			 struct pp_frame *frames, uint16_t *verdicts,
			 unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_REDIRECT;
}

/* veth ring of 64; nobody polls the peer: the second burst is dropped. */
static void test_full_ring_drops(void)
{
	struct pp_port *n0 = net_open(&env, "null0");
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1,ring=64");
	struct pp_prog prog = {
		.sz = sizeof(prog), .fn = redirect_all,
		.targets = { v0 }, .nr_targets = 1,
	};
	struct pp_txq_stats ts;
	struct pp_rxq_stats rs;
	struct pp_frame f[PP_NET_BURST] = { 0 };

	CHECK_EQ(pp_port_set_prog(n0, &prog), 0);
	CHECK_EQ(pp_port_poll(n0, 0, 3 * PP_NET_BURST), 3 * PP_NET_BURST);
	pp_port_txq_stats(v0, 0, &ts);
	CHECK_EQ(ts.packets, 64);
	CHECK_EQ(ts.drops, 2 * PP_NET_BURST);
	pp_port_rxq_stats(n0, 0, &rs);
	CHECK_EQ(rs.xdp_redirect, 3 * PP_NET_BURST);

	/* A raw tx_burst on the full ring takes nothing; the caller keeps
	 * the frames (and here gives them back). */
	CHECK_EQ(pp_port_rx_burst(n0, 0, f, 8), 8);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, 8), 0);
	for (int i = 0; i < 8; i++)
		pp_pool_recycle_direct(pp_page_pool(f[i].page), f[i].page);

	/* The dropped frames are back in null0's pool. */
	net_check_pools(n0);
	CHECK_EQ(pp_pool_inflight(pp_port_rxq_pool(n0, 0)) >= 64, 1);
	/* Close with 64 frames of null0's pool still in veth1's ring: they
	 * go home first, so null0's pool is destroyed with none out. */
	CHECK_EQ(pp_port_close(v0), 0);
	CHECK_EQ(pp_port_close(n0), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

/* The other order: null0 closes while its pages sit in veth1's ring. Its
 * pool is then freed by the last returning page. */
static void test_close_with_frames_out(void)
{
	struct pp_port *n0 = net_open(&env, "null0");
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1");
	struct pp_frame f[PP_NET_BURST] = { 0 };

	CHECK_EQ(pp_port_rx_burst(n0, 0, f, PP_NET_BURST), PP_NET_BURST);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, PP_NET_BURST), PP_NET_BURST);
	pp_test_log_reset();
	CHECK_EQ(pp_port_close(n0), -EBUSY);
	CHECK(pp_test_log_has("null0-rx0: destroy deferred, 64 pages in flight"));
	CHECK_EQ(pp_port_close(v0), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

/* An arena too small for the traffic: RX runs out of buffers, counts
 * drops, and recovers once frames come back. */
static void test_pool_exhausted(void)
{
	struct pp_port *n0;
	struct pp_frame *held;
	struct pp_rxq_stats rs;
	unsigned int got = 0, n;

	net_env_fini(&env);
	net_env_init(&env, 1 << 20);   /* 256 pages */
	n0 = net_open(&env, "null0");
	held = calloc(512, sizeof(*held));
	REQUIRE(held != NULL);
	while (got < 512 &&
	       (n = pp_port_rx_burst(n0, 0, held + got, 16)) > 0)
		got += n;
	CHECK(got > 0 && got <= 256);
	pp_port_rxq_stats(n0, 0, &rs);
	CHECK(rs.drops > 0);
	for (unsigned int i = 0; i < got; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(n0, 0), held[i].page);
	CHECK_EQ(pp_port_rx_burst(n0, 0, held, 16), 16);
	for (unsigned int i = 0; i < 16; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(n0, 0), held[i].page);
	free(held);
	net_check_pools(n0);
	CHECK_EQ(pp_port_close(n0), 0);
	net_env_fini(&env);
	net_env_init(&env, 16 << 20);
}

int main(void)
{
	pp_test_capture_log();
	net_env_init(&env, 16 << 20);
	RUN_TEST(test_full_ring_drops);
	RUN_TEST(test_close_with_frames_out);
	RUN_TEST(test_pool_exhausted);
	net_env_fini(&env);
	return pp_test_result();
}
