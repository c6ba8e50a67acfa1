/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_threads.c - the seed's workload on two threads: null0 redirects
 * into veth0 on one, veth1 PASSes to a stack consumer on the other. The
 * receiver sees strictly increasing sequence numbers (the ring is FIFO;
 * drops leave gaps), and after both stop every page is accounted for.
 */
#include <stdatomic.h>

#include "net_test.h"

static struct net_env env;
static atomic_int stop;

struct side {
	struct pp_port *port;
	uint64_t last_seq;
	uint64_t frames;
	uint64_t disorder;
};

static void redirect_all(const struct pp_prog_ctx *ctx,
			 struct pp_frame *frames, uint16_t *verdicts,
			 unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_REDIRECT;
}

static void pass_checked(const struct pp_prog_ctx *ctx,
			 struct pp_frame *frames, uint16_t *verdicts,
			 unsigned int n)
{
	struct side *s = ctx->arg;

	for (unsigned int i = 0; i < n; i++) {
		uint64_t seq = frame_seq(&frames[i]);

		if (s->frames && seq <= s->last_seq)
			s->disorder++;
		s->last_seq = seq;
		s->frames++;
		verdicts[i] = PP_XDP_PASS;
	}
}

static void *poller(void *arg)
{
	struct side *s = arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		pp_port_poll(s->port, 0, PP_NET_BURST);
	return NULL;
}

static void test_two_threads(void)
{
	struct pp_port *n0 = net_open(&env, "null0");
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1,ring=256");
	struct side tx = { .port = n0 }, rx = { .port = pp_port_peer(v0) };
	struct pp_prog p0 = {
		.sz = sizeof(p0), .fn = redirect_all,
		.targets = { v0 }, .nr_targets = 1,
	};
	struct pp_prog p1 = { .sz = sizeof(p1), .fn = pass_checked, .arg = &rx };
	struct pp_rxq_stats rs;
	struct pp_txq_stats ts;
	pthread_t t0, t1;

	CHECK_EQ(pp_port_set_prog(n0, &p0), 0);
	CHECK_EQ(pp_port_set_prog(rx.port, &p1), 0);
	REQUIRE(pthread_create(&t0, NULL, poller, &tx) == 0);
	REQUIRE(pthread_create(&t1, NULL, poller, &rx) == 0);
	usleep(300 * 1000);
	atomic_store(&stop, 1);
	pthread_join(t0, NULL);
	pthread_join(t1, NULL);

	CHECK(rx.frames > 0);
	CHECK_EQ(rx.disorder, 0);
	pp_port_rxq_stats(rx.port, 0, &rs);
	CHECK_EQ(rs.xdp_pass, rx.frames);
	pp_port_txq_stats(v0, 0, &ts);
	/* Every frame sent into the ring was received or is still there. */
	CHECK(ts.packets >= rs.packets);
	CHECK(ts.packets - rs.packets <= 256);
	net_check_pools(n0);
	net_check_pools(rx.port);
	CHECK_EQ(pp_port_close(v0), 0);
	CHECK_EQ(pp_port_close(n0), 0);
}

int main(void)
{
	pp_test_capture_log();
	net_env_init(&env, 32 << 20);
	RUN_TEST(test_two_threads);
	net_env_fini(&env);
	return pp_test_result();
}
