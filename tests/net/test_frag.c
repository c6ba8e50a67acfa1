/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_frag.c - RX buffers that are fragments of the RX pools' pages
 * (frag= of null and veth): every frame arrives intact in a fragment of
 * its own, fragments of one page do not overlap, a frame cannot grow into
 * its neighbour, fragments travel through a veth pair (two fragments of
 * one page in one burst included, and a ring too full for a fragment's
 * two slots), PASSed fragments go back to their pool, and every run ends
 * with the pools' walkers passing and the allocator balanced.
 */
#include "net_test.h"

static struct net_env env;

/* Mixed lengths: minimum, cache-line edges, 2048-byte fragments' edge
 * (2048 - 256 = 1792), over half a page (a whole page with auto). */
static const uint16_t lens[] = {
	60, 64, 65, 127, 128, 200, 1000, 1500, 1791, 1792, 1793, 2000,
	3000, PP_PAGE_SIZE - 256,
};
#define NR_LENS (sizeof(lens) / sizeof(lens[0]))

static uint8_t pattern(uint64_t seq, unsigned int j)
{
	return (uint8_t)(seq * 7 + j * 13 + 5);
}

/* Fill @f (a buffer of a source pool) with frame number @seq. */
static void fill(struct pp_frame *f, uint64_t seq)
{
	uint8_t *d;

	f->offset = 0;
	f->headroom = 256;
	f->len = lens[seq % NR_LENS];
	d = pp_frame_data(f);
	memcpy(d, &seq, sizeof(seq));
	for (unsigned int j = sizeof(seq); j < f->len; j++)
		d[j] = pattern(seq, j);
}

/* Frame number @seq, intact, valid, unable to grow out of its buffer. */
static int intact(const struct pp_frame *f, uint64_t seq)
{
	const uint8_t *d = pp_frame_data(f);
	struct pp_frame g = *f;
	uint64_t got;

	if (!pp_frame_valid(f) || f->len != lens[seq % NR_LENS])
		return 0;
	memcpy(&got, d, sizeof(got));
	if (got != seq)
		return 0;
	for (unsigned int j = sizeof(seq); j < f->len; j++)
		if (d[j] != pattern(seq, j))
			return 0;
	/* Past the buffer's end is refused (the neighbour's, or beyond). */
	if (pp_frame_adjust_tail(&g, (int)pp_frame_room(&g) - g.len + 1) != -1)
		return 0;
	return 1;
}

struct stack {
	uint64_t next_seq;
	uint64_t seen;
	uint64_t bad;
	uint64_t frags;
};

static void stack_check(void *arg, struct pp_port *port,
			struct pp_frame *frames, unsigned int n)
{
	struct stack *s = arg;

	for (unsigned int i = 0; i < n; i++) {
		if (!intact(&frames[i], s->next_seq))
			s->bad++;
		s->frags += pp_page_pool(frames[i].page) != NULL;
		s->next_seq++;
		s->seen++;
	}
	pp_frame_put_bulk(pp_port_allocator(port), frames, n);
}

static void prog_pass(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		      uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_PASS;
}

/*
 * veth PASS with @dev's frag=: many frames of mixed lengths from a source
 * pool, each copied into the receiver's pool and passed to a stack that
 * checks it. @expect_frags: how many of the lens[] cycle land in a
 * fragment (the others take a whole page).
 */
static void veth_pass_case(const char *dev, bool consumer,
			   unsigned int expect_frags)
{
	const unsigned int nr = 20000;
	struct pp_port *v0 = net_open(&env, dev);
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_pool *src = pp_port_rxq_pool(v0, 0);
	struct pp_prog prog = { .sz = sizeof(prog), .fn = prog_pass };
	struct stack s = { 0 };
	struct pp_pool_stats ps;
	struct pp_rxq_stats rs;
	uint64_t seq = 0;

	CHECK_EQ(pp_port_set_prog(v1, &prog), 0);
	if (consumer)
		pp_port_set_stack(v1, stack_check, &s);
	while (seq < nr) {
		struct pp_frame f[PP_NET_BURST] = { 0 };
		unsigned int i, k = 0, sent;

		/* v0's pool is this thread's: the source buffers. */
		for (i = 0; i < PP_NET_BURST && seq + i < nr; i++, k++) {
			f[i].page = pp_pool_alloc_pages(src);
			REQUIRE(f[i].page != NULL);
			fill(&f[i], seq + i);
		}
		sent = pp_port_tx_burst(v0, 0, f, k);
		CHECK_EQ(sent, k);
		seq += sent;
		pp_port_poll(v1, 0, PP_NET_BURST);
		/* v1 polled: this thread owns its pool; v0's back. */
		pp_pool_set_owner(src);
	}
	while (pp_port_poll(v1, 0, PP_NET_BURST))
		;
	CHECK_EQ(pp_port_rxq_stats(v1, 0, &rs), 0);
	CHECK_EQ(rs.xdp_pass, nr);
	CHECK_EQ(rs.errors + rs.drops, 0);
	if (consumer) {
		CHECK_EQ(s.seen, nr);
		CHECK_EQ(s.bad, 0);
	}
	CHECK_EQ(pp_pool_get_stats(pp_port_rxq_pool(v1, 0), &ps), 0);
	/* Each length goes the same way every time; the fragments' are the
	 * first @expect_frags of the cycle, also in the last, short one. */
	CHECK_EQ(ps.frag_alloc, (uint64_t)nr / NR_LENS * expect_frags +
		 (nr % NR_LENS < expect_frags ? nr % NR_LENS : expect_frags));
	if (expect_frags) {
		CHECK(ps.frag_pages > 0);
		CHECK(ps.frag_pages < ps.frag_alloc);
		if (consumer)
			CHECK(s.frags > 0);
	}
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	net_env_fini(&env);
	net_env_init(&env, 32 << 20);
}

static void test_veth_pass_2048(void)
{
	/* 2048-byte fragments hold 256 of headroom and up to 1792. */
	veth_pass_case("veth0,peer=veth1,frag=2048", true, 10);
}

static void test_veth_pass_auto(void)
{
	/* Sized to the frame: a fragment up to half a page (1792 bytes
	 * behind the headroom), a page beyond. */
	veth_pass_case("veth0,peer=veth1,frag=auto", true, 10);
}

static void test_veth_pass_no_stack(void)
{
	/* No consumer: pp_port_poll returns the fragments itself. */
	veth_pass_case("veth0,peer=veth1,frag=auto", false, 10);
}

static void test_veth_pass_pages(void)
{
	/* Without frag=: a page per frame, no fragment. */
	veth_pass_case("veth0,peer=veth1", true, 0);
}

/*
 * frag=auto with a headroom off the cache-line grid: headroom 100 and a
 * 3996-byte frame round up past the page; the copy takes the whole page
 * instead (an error here would be a drop on every such frame).
 */
static void test_veth_auto_odd_headroom(void)
{
	static const uint16_t odd[] = { 3996, 60, 1000, 1949, 1950 };
	struct pp_port *v0, *v1;
	/* Zeroed: the frames are built field by field, and .more must be clear. */
	struct pp_frame f[5] = { 0 }, got[5];
	struct pp_rxq_stats rs;
	unsigned int i, n;

	env.conf.headroom = 100;
	v0 = net_open(&env, "veth0,peer=veth1,frag=auto");
	v1 = pp_port_peer(v0);
	for (i = 0; i < 5; i++) {
		f[i].page = pp_pool_alloc_pages(pp_port_rxq_pool(v0, 0));
		REQUIRE(f[i].page != NULL);
		f[i].offset = 0;
		f[i].headroom = 0;
		f[i].len = odd[i];
		memset(pp_frame_data(&f[i]), 0x5a + i, f[i].len);
	}
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, 5), 5);
	n = pp_port_rx_burst(v1, 0, got, 5);
	CHECK_EQ(n, 5);
	for (i = 0; i < n; i++) {
		const uint8_t *d = pp_frame_data(&got[i]);

		CHECK_EQ(got[i].len, odd[i]);
		CHECK_EQ(got[i].headroom, 100);
		CHECK(pp_frame_valid(&got[i]));
		CHECK_EQ(d[0], 0x5a + i);
		CHECK_EQ(d[got[i].len - 1], 0x5a + i);
		pp_pool_recycle_direct(pp_port_rxq_pool(v1, 0), got[i].page);
	}
	CHECK_EQ(pp_port_rxq_stats(v1, 0, &rs), 0);
	CHECK_EQ(rs.errors + rs.drops, 0);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	env.conf.headroom = 0;
	net_env_fini(&env);
	net_env_init(&env, 32 << 20);
}

/* ---- null frag=: RX fragments, TX returns them ---- */

static void null_case(const char *dev, unsigned int frag, unsigned int size)
{
	struct pp_port *a = net_open(&env, dev);
	struct pp_port *b = net_open(&env, "null1");
	struct pp_pool *pool = pp_port_rxq_pool(a, 0);
	struct pp_frame f[PP_NET_BURST] = { 0 };
	struct pp_pool_stats ps;
	uint64_t total = 0;
	unsigned int i, j, n, round;

	for (round = 0; round < 200; round++) {
		n = pp_port_rx_burst(a, 0, f, PP_NET_BURST);
		CHECK_EQ(n, PP_NET_BURST);
		for (i = 0; i < n; i++) {
			CHECK_EQ(f[i].len, size);
			CHECK_EQ(frame_seq(&f[i]), total + i);
			CHECK(pp_frame_valid(&f[i]));
			CHECK_EQ(f[i].offset % PP_CACHE_LINE, 0);
			/* Two fragments of one page never overlap. */
			for (j = 0; j < i; j++)
				if (f[j].page == f[i].page)
					CHECK(f[j].offset + frag <= f[i].offset ||
					      f[i].offset + frag <= f[j].offset);
		}
		CHECK_EQ(pp_port_tx_burst(b, 0, f, n), n);
		total += n;
	}
	CHECK_EQ(pp_pool_get_stats(pool, &ps), 0);
	CHECK_EQ(ps.frag_alloc, total);
	CHECK_EQ(ps.frag_pages >= total / (PP_PAGE_SIZE / frag), 1);
	net_check_pools(a);
	CHECK_EQ(pp_port_close(a), 0);
	CHECK_EQ(pp_port_close(b), 0);
	net_env_fini(&env);
	net_env_init(&env, 32 << 20);
}

static void test_null_frag(void)
{
	null_case("null0,frag=1024", 1024, 64);
	null_case("null0,size=1500,frag=2048", 2048, 1500);
	/* auto: 256 + 64 = 320 bytes, 12 to a page. */
	null_case("null0,frag=auto", 320, 64);
}

/*
 * Fragments through a veth pair: each carries its own geometry (two of
 * one page in one burst must not see each other's), and a ring with room
 * for fewer slots than the burst needs takes a whole number of frames.
 */
static void test_veth_frag_tx(void)
{
	struct pp_port *a = net_open(&env, "null0,size=200,frag=512");
	struct pp_port *v0 = net_open(&env, "veth0,peer=veth1,ring=64");
	struct pp_port *v1 = pp_port_peer(v0);
	struct pp_frame f[PP_NET_BURST], got[PP_NET_BURST];
	struct pp_txq_stats ts;
	unsigned int i, n, taken, k = 0;

	REQUIRE(pp_port_rx_burst(a, 0, f, 40) == 40);
	/* Different lengths per fragment: swapped geometry would show. */
	for (i = 0; i < 40; i++)
		f[i].len = (uint16_t)(100 + i);
	CHECK(f[0].page == f[1].page);
	/* 40 fragments need 80 slots: 32 fit in 64. */
	taken = pp_port_tx_burst(v0, 0, f, 40);
	CHECK_EQ(taken, 32);
	CHECK_EQ(pp_port_txq_stats(v0, 0, &ts), 0);
	CHECK_EQ(ts.errors, 0);
	/* Bursts of 7 slots end halfway through a fragment's pair. */
	while ((n = pp_port_rx_burst(v1, 0, got, 7))) {
		for (i = 0; i < n; i++, k++) {
			CHECK_EQ(got[i].len, 100 + k);
			CHECK_EQ(frame_seq(&got[i]), k);
		}
		for (i = 0; i < n; i++)
			pp_pool_recycle_direct(pp_port_rxq_pool(v1, 0),
					       got[i].page);
	}
	CHECK_EQ(k, 32);
	/* The rest once there is room; the sender's fragments came home. */
	pp_pool_set_owner(pp_port_rxq_pool(a, 0));
	CHECK_EQ(pp_port_tx_burst(v0, 0, f + taken, 40 - taken), 40 - taken);
	n = pp_port_rx_burst(v1, 0, got, PP_NET_BURST);
	CHECK_EQ(n, 40 - taken);
	for (i = 0; i < n; i++) {
		CHECK_EQ(frame_seq(&got[i]), taken + i);
		pp_pool_recycle_direct(pp_port_rxq_pool(v1, 0), got[i].page);
	}
	/* Some left on the ring at close: veth_remove takes pairs too. */
	pp_pool_set_owner(pp_port_rxq_pool(a, 0));
	REQUIRE(pp_port_rx_burst(a, 0, f, 9) == 9);
	CHECK_EQ(pp_port_tx_burst(v0, 0, f, 9), 9);
	net_check_pools(v1);
	CHECK_EQ(pp_port_close(v0), 0);
	CHECK_EQ(pp_port_close(a), 0);
	net_env_fini(&env);
	net_env_init(&env, 32 << 20);
}

/*
 * PASS of fragments straight from null (frag=) without a copy: they stay
 * in the pool and the consumer returns them.
 */
static void test_null_frag_pass(void)
{
	struct pp_port *a = net_open(&env, "null0,frag=auto");
	struct pp_prog prog = { .sz = sizeof(prog), .fn = prog_pass };
	struct pp_rxq_stats rs;

	CHECK_EQ(pp_port_set_prog(a, &prog), 0);
	for (unsigned int i = 0; i < 100; i++)
		CHECK_EQ(pp_port_poll(a, 0, PP_NET_BURST), PP_NET_BURST);
	CHECK_EQ(pp_port_rxq_stats(a, 0, &rs), 0);
	CHECK_EQ(rs.xdp_pass, 100 * PP_NET_BURST);
	CHECK_EQ(rs.errors, 0);
	net_check_pools(a);
	CHECK_EQ(pp_port_close(a), 0);
	net_env_fini(&env);
	net_env_init(&env, 32 << 20);
}

int main(void)
{
	net_env_init(&env, 32 << 20);
	RUN_TEST(test_veth_pass_2048);
	RUN_TEST(test_veth_pass_auto);
	RUN_TEST(test_veth_pass_no_stack);
	RUN_TEST(test_veth_pass_pages);
	RUN_TEST(test_veth_auto_odd_headroom);
	RUN_TEST(test_null_frag);
	RUN_TEST(test_veth_frag_tx);
	RUN_TEST(test_null_frag_pass);
	net_env_fini(&env);
	return pp_test_result();
}
