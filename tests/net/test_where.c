/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_where.c - where a pool's pages are (pp_where.h): each holder a
 * page can have, counted by the walk behind /pagepool/inflight, with its
 * age; the leak report of a destroy with pages out; the destroyed pool
 * listed until its last page is back.
 */
#include <time.h>

#include "net_test.h"
#include "pp_pool_inflight.h"

static struct net_env env;

/* How many pages @in counts under @kind (any port and queue). */
static uint64_t held_by(const struct pp_inflight *in, enum pp_holder_kind kind)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < in->nr_holders; i++)
		if (PP_HOLDER_KIND(in->holder[i].code) == kind)
			n += in->holder[i].pages;
	return n;
}

static const struct pp_inflight_holder *holder(const struct pp_inflight *in,
					       uint32_t code)
{
	for (unsigned int i = 0; i < in->nr_holders; i++)
		if (in->holder[i].code == code)
			return &in->holder[i];
	return NULL;
}

static void walk(struct pp_pool *pool, struct pp_inflight *in)
{
	pp_pool_inflight_walk(pool, in);
	pp_pool_inflight_finish(in);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Frames an RX burst handed out are the application's, port and queue
 * named, aged from the burst; given back, they are the pool's again. */
static void test_app_rx(void)
{
	struct pp_port *n0 = net_open(&env, "null0");
	struct pp_pool *pool = pp_port_rxq_pool(n0, 0);
	struct pp_frame f[8] = { 0 };
	const struct pp_inflight_holder *h;
	struct pp_inflight in;

	CHECK_EQ(pp_port_rx_burst(n0, 0, f, 8), 8);
	sleep_ms(30);
	walk(pool, &in);
	CHECK_EQ(in.pages, 8);
	CHECK_EQ(in.nr_holders, 1);
	h = holder(&in, PP_HOLDER(PP_HOLDER_APP_RX, pp_port_id(n0), 0));
	REQUIRE(h != NULL);
	CHECK_EQ(h->pages, 8);
	CHECK(h->aged);
	/* 30 ms asleep, and not an hour: the clock's unit is under 1 ms. */
	CHECK(h->oldest_s >= 0.025 && h->oldest_s < 5.0);
	CHECK_EQ(in.age[PP_AGE_UNDER_1S], 8);
	CHECK(in.have_oldest);
	CHECK_EQ(in.oldest_code, h->code);
	CHECK_EQ(in.block_bytes, PP_PAGE_SIZE);

	for (int i = 0; i < 8; i++)
		pp_pool_recycle_direct(pool, f[i].page);
	walk(pool, &in);
	CHECK_EQ(in.pages, 0);
	CHECK_EQ(in.nr_holders, 0);
	CHECK(in.in_pool >= 8);
	CHECK_EQ(pp_port_close(n0), 0);
}

/* Pages taken from the pool by the application itself record nothing:
 * counted as "app", by difference, age unknown. */
static void test_app_alloc(void)
{
	struct pp_port *n0 = net_open(&env, "null0");
	struct pp_pool *pool = pp_port_rxq_pool(n0, 0);
	struct pp_page *pages[5];
	struct pp_inflight in;

	for (int i = 0; i < 5; i++)
		REQUIRE((pages[i] = pp_pool_alloc_pages(pool)) != NULL);
	walk(pool, &in);
	CHECK_EQ(in.pages, 5);
	CHECK_EQ(held_by(&in, PP_HOLDER_APP), 5);
	CHECK_EQ(in.age[PP_AGE_UNKNOWN], 5);
	CHECK(!in.have_oldest);
	for (int i = 0; i < 5; i++)
		pp_pool_recycle_direct(pool, pages[i]);
	walk(pool, &in);
	CHECK_EQ(in.pages, 0);
	CHECK_EQ(pp_port_close(n0), 0);
}

/* Frames sent into a veth ring are in the sender's TX ring (read from
 * the ring, which its pages carry no stamp for), whatever they said
 * before; once the peer takes them they are gone from there. */
static void test_veth_ring(void)
{
	struct pp_port *n0 = net_open(&env, "null0");
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1");
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_pool *pool = pp_port_rxq_pool(n0, 0);
	struct pp_frame f[PP_NET_BURST] = { 0 };
	struct pp_inflight in;
	unsigned int got;

	CHECK_EQ(pp_port_rx_burst(n0, 0, f, 16), 16);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, 12), 12);
	walk(pool, &in);
	CHECK_EQ(in.pages, 16);
	CHECK_EQ(holder(&in, PP_HOLDER(PP_HOLDER_TX_RING, pp_port_id(v0), 0))
			 ->pages,
		 12);
	CHECK_EQ(holder(&in, PP_HOLDER(PP_HOLDER_APP_RX, pp_port_id(n0), 0))
			 ->pages,
		 4);

	/* veth1 copies them into its own pool's pages, which its RX burst
	 * hands the application, and returns null0's. */
	got = pp_port_rx_burst(v1, 0, f, 12);   /* f[12..15] are kept */
	CHECK_EQ(got, 12);
	walk(pool, &in);
	CHECK_EQ(in.pages, 4);
	walk(pp_port_rxq_pool(v1, 0), &in);
	CHECK_EQ(holder(&in, PP_HOLDER(PP_HOLDER_APP_RX, pp_port_id(v1), 0))
			 ->pages,
		 12);
	pp_frame_put_bulk(env.alloc, f, 16);
	CHECK_EQ(pp_port_close(v0), 0);
	CHECK_EQ(pp_port_close(n0), 0);
}

static int count_detached(struct pp_pool *pool, int64_t t, void *arg)
{
	(void)pool;
	CHECK(t > 0);
	(*(int *)arg)++;
	return 0;
}

/* A port closed while the application holds frames: the destroy says who
 * holds how many for how long, and the pool stays listed until the last
 * one is back. */
static void test_leak_report(void)
{
	struct pp_port *n0 = net_open(&env, "null0");
	struct pp_frame f[6] = { 0 };
	int nr = 0;

	CHECK_EQ(pp_port_rx_burst(n0, 0, f, 6), 6);
	sleep_ms(20);
	pp_test_log_reset();
	CHECK_EQ(pp_port_close(n0), -EBUSY);
	CHECK(pp_test_log_has("null0-rx0: destroy deferred, 6 pages in flight; the pool is freed when the last one is returned; held by: 6 pages (24576 bytes) app_rx of port null0 (closed), queue 0, the oldest for 0.0"));
	pp_pool_detached_each(count_detached, &nr);
	CHECK_EQ(nr, 1);
	pp_frame_put_bulk(env.alloc, f, 6);
	nr = 0;
	pp_pool_detached_each(count_detached, &nr);
	CHECK_EQ(nr, 0);
}

int main(void)
{
	pp_test_capture_log();
	net_env_init(&env, 16 << 20);
	RUN_TEST(test_app_rx);
	RUN_TEST(test_app_alloc);
	RUN_TEST(test_veth_ring);
	RUN_TEST(test_leak_report);
	net_env_fini(&env);
	return pp_test_result();
}
