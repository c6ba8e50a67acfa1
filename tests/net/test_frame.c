/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_frame.c - the frame bounds check and the helpers that edit a frame,
 * on page descriptors made up here (only their order and address are
 * read): sums that wrap in 32 bits, fields at their 16-bit limits, data
 * ending on the block's last byte and one byte past it. Fragment frames
 * (a page in a pool, its fragment count above 1) also try to grow into
 * the neighbouring fragment, near 2^16 and 2^32.
 */
#include <limits.h>

#include <pagepool/pp_net.h>

#include "pp_test.h"

static uint8_t block[4 * PP_PAGE_SIZE] __attribute__((aligned(4096)));

static struct pp_page page_of_order(uint8_t order)
{
	struct pp_page p = { .addr = block, .order = order };

	return p;
}

/* Only compared with NULL by pp_page_is_frag(), never dereferenced. */
static char pool_token;

/* A page split into fragments, @users of them out (count above 1). */
static struct pp_page split_page_of_order(uint8_t order, int64_t users)
{
	struct pp_page p = page_of_order(order);

	p.pp = (struct pp_pool *)(void *)&pool_token;
	p.pp_ref_count = users;
	return p;
}

static void test_bounds_ok(void)
{
	struct pp_page p0 = page_of_order(0), p1 = page_of_order(1);
	struct pp_page p18 = page_of_order(18);
	const uint32_t end = PP_PAGE_SIZE;

	/* Inside, up to the last byte; then one byte past. */
	CHECK(pp_frame_bounds_ok(&p0, 0, 0, end));
	CHECK(!pp_frame_bounds_ok(&p0, 0, 0, end + 1));
	CHECK(pp_frame_bounds_ok(&p0, 64, 256, end - 320));
	CHECK(!pp_frame_bounds_ok(&p0, 64, 256, end - 319));
	CHECK(pp_frame_bounds_ok(&p0, end, 0, 0));
	CHECK(!pp_frame_bounds_ok(&p0, end, 0, 1));
	CHECK(!pp_frame_bounds_ok(&p0, end + 1, 0, 0));
	/* Sums that wrap in 32 bits. */
	CHECK(!pp_frame_bounds_ok(&p0, 0xffffff00u, 0x100, 64));
	CHECK(!pp_frame_bounds_ok(&p0, 0xfffffff0u, 0, 0x20));
	CHECK(!pp_frame_bounds_ok(&p0, 0, 64, 0xffffffc0u));
	CHECK(!pp_frame_bounds_ok(&p0, 0xffffffffu, 0xffffffffu,
				  0xffffffffu));
	CHECK(!pp_frame_bounds_ok(&p0, 1, 0, UINT32_MAX));
	/* 16-bit fields at their limits. */
	CHECK(!pp_frame_bounds_ok(&p0, 0xffff, 0, 64));
	CHECK(!pp_frame_bounds_ok(&p0, 0, 0xffff, 1));
	CHECK(!pp_frame_bounds_ok(&p0, 0, 0, 0xffff));
	/* The block, not the page: order 1 is 8 KiB, order 18 is 1 GiB. */
	CHECK(pp_frame_bounds_ok(&p1, end, 0, end));
	CHECK(!pp_frame_bounds_ok(&p1, end, 0, end + 1));
	CHECK(pp_frame_bounds_ok(&p18, (1u << 30) - 0x20000, 0xffff, 0xffff));
	CHECK(!pp_frame_bounds_ok(&p18, (1u << 30) - 0x1fffd, 0xffff, 0xffff));
	CHECK(!pp_frame_bounds_ok(&p18, 0xffffff00u, 0x100, 64));
}

/* A buffer that ends before its block: a fragment's remembered end. */
static void test_bounds_end_ok(void)
{
	/* The second 2 KiB fragment of a page: [2048, 4096). */
	CHECK(pp_frame_bounds_end_ok(2048, 256, 1792, 4096));
	CHECK(!pp_frame_bounds_end_ok(2048, 256, 1793, 4096));
	/* The first: data that would fit the page but not the fragment. */
	CHECK(pp_frame_bounds_end_ok(0, 256, 1792, 2048));
	CHECK(!pp_frame_bounds_end_ok(0, 256, 1793, 2048));
	CHECK(!pp_frame_bounds_end_ok(0, 256, 3840, 2048));
	CHECK(pp_frame_bounds_end_ok(2048, 0, 0, 2048));
	CHECK(!pp_frame_bounds_end_ok(2049, 0, 0, 2048));
	/* Near 2^16 and 2^32: nothing wraps. */
	CHECK(!pp_frame_bounds_end_ok(0xffff, 1, 0xffff, 0x10000));
	CHECK(pp_frame_bounds_end_ok(0xff00, 0xff, 1, 0x10000));
	CHECK(!pp_frame_bounds_end_ok(0xff00, 0xff, 2, 0x10000));
	CHECK(!pp_frame_bounds_end_ok(0xffffff00u, 0x100, 64, 2048));
	CHECK(!pp_frame_bounds_end_ok(0, 64, 0xffffffc0u, 2048));
	CHECK(!pp_frame_bounds_end_ok(0xffffffffu, 0xffffffffu, 0xffffffffu,
				      UINT32_MAX));
	CHECK(pp_frame_bounds_end_ok(0xffffffffu, 0xffffffffu, 2,
				     (uint64_t)UINT32_MAX * 2 + 2));
	CHECK(!pp_frame_bounds_end_ok(0xffffffffu, 0xffffffffu, 3,
				      (uint64_t)UINT32_MAX * 2 + 2));
}

static void test_valid(void)
{
	struct pp_page p0 = page_of_order(0);
	struct pp_frame f = { .page = &p0, .offset = 64, .headroom = 256,
			      .len = PP_PAGE_SIZE - 320 };

	CHECK(pp_frame_valid(&f));
	f.len++;
	CHECK(!pp_frame_valid(&f));
	f = (struct pp_frame){ .page = &p0, .offset = 0x7fffff00u,
			       .headroom = 0x100, .len = 64 };
	CHECK(!pp_frame_valid(&f));
}

static void test_room(void)
{
	struct pp_page p0 = page_of_order(0), p1 = page_of_order(1);
	struct pp_frame f = { .page = &p0, .offset = 64, .headroom = 256 };

	CHECK_EQ(pp_frame_room(&f), PP_PAGE_SIZE - 320);
	f.page = &p1;
	CHECK_EQ(pp_frame_room(&f), 2 * PP_PAGE_SIZE - 320);
	f = (struct pp_frame){ .page = &p0, .offset = PP_PAGE_SIZE };
	CHECK_EQ(pp_frame_room(&f), 0);
	/* Beyond the block: no room, not a wrapped 32-bit difference. */
	f = (struct pp_frame){ .page = &p0, .offset = 0x7fffff00u,
			       .headroom = 0x100 };
	CHECK_EQ(pp_frame_room(&f), 0);
	f = (struct pp_frame){ .page = &p0, .offset = 0xffff };
	CHECK_EQ(pp_frame_room(&f), 0);
}

static void test_adjust_head(void)
{
	struct pp_page p0 = page_of_order(0), p5 = page_of_order(5);
	struct pp_frame f = { .page = &p0, .offset = 64, .headroom = 256,
			      .len = 100 }, g;

	/* Push a header, pull it again; the end stays. */
	CHECK_EQ(pp_frame_adjust_head(&f, -14), 0);
	CHECK_EQ(f.headroom, 242);
	CHECK_EQ(f.len, 114);
	CHECK_EQ(pp_frame_adjust_head(&f, 14), 0);
	CHECK_EQ(f.headroom, 256);
	CHECK_EQ(f.len, 100);
	/* Down to the buffer start and to no data; not past either. */
	CHECK_EQ(pp_frame_adjust_head(&f, -256), 0);
	CHECK_EQ(pp_frame_adjust_head(&f, 356), 0);
	CHECK_EQ(f.len, 0);
	g = f;
	CHECK_EQ(pp_frame_adjust_head(&f, 1), -1);
	CHECK_EQ(pp_frame_adjust_head(&f, -357), -1);
	CHECK(!memcmp(&f, &g, sizeof(f)));

	/* Deltas whose int arithmetic would overflow. */
	f = (struct pp_frame){ .page = &p0, .offset = 0, .headroom = 10,
			       .len = 10 };
	g = f;
	CHECK_EQ(pp_frame_adjust_head(&f, INT_MIN), -1);
	CHECK_EQ(pp_frame_adjust_head(&f, INT_MAX), -1);
	CHECK(!memcmp(&f, &g, sizeof(f)));

	/*
	 * A 128 KiB block has room for 16-bit fields at their limits: the
	 * bounds hold, but the results do not fit the fields, and a
	 * truncated headroom of 0 or length of 0 is refused, not stored.
	 */
	f = (struct pp_frame){ .page = &p5, .offset = 0, .headroom = 0xffff,
			       .len = 100 };
	g = f;
	CHECK_EQ(pp_frame_adjust_head(&f, 1), -1);
	CHECK(!memcmp(&f, &g, sizeof(f)));
	f = (struct pp_frame){ .page = &p5, .offset = 0, .headroom = 10,
			       .len = 0xffff };
	g = f;
	CHECK_EQ(pp_frame_adjust_head(&f, -1), -1);
	CHECK(!memcmp(&f, &g, sizeof(f)));

	/* A frame outside its block stays refused, whichever way it moves. */
	f = (struct pp_frame){ .page = &p0, .offset = 0x7fffff00u,
			       .headroom = 0x100, .len = 64 };
	g = f;
	CHECK_EQ(pp_frame_adjust_head(&f, -64), -1);
	CHECK_EQ(pp_frame_adjust_head(&f, 64), -1);
	CHECK(!memcmp(&f, &g, sizeof(f)));
}

static void test_adjust_tail(void)
{
	struct pp_page p0 = page_of_order(0), p5 = page_of_order(5);
	struct pp_frame f = { .page = &p0, .offset = 64, .headroom = 256,
			      .len = 100 }, g;

	CHECK_EQ(pp_frame_adjust_tail(&f, -100), 0);
	CHECK_EQ(f.len, 0);
	CHECK_EQ(pp_frame_adjust_tail(&f, -1), -1);
	/* Grow to the block's last byte; one more is refused. */
	CHECK_EQ(pp_frame_adjust_tail(&f, (int)pp_frame_room(&f)), 0);
	CHECK_EQ(f.len, PP_PAGE_SIZE - 320);
	g = f;
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
	CHECK_EQ(pp_frame_adjust_tail(&f, INT_MAX), -1);
	CHECK_EQ(pp_frame_adjust_tail(&f, INT_MIN), -1);
	CHECK(!memcmp(&f, &g, sizeof(f)));

	/* Room in the block, none in the 16-bit length. */
	f = (struct pp_frame){ .page = &p5, .offset = 0, .headroom = 0,
			       .len = 0xffff };
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
	CHECK_EQ(f.len, 0xffff);

	f = (struct pp_frame){ .page = &p0, .offset = 0x7ffffff0u,
			       .headroom = 0, .len = 0 };
	CHECK_EQ(pp_frame_adjust_tail(&f, 0x20), -1);
	CHECK_EQ(f.len, 0);
}


static void test_frag_is_frag(void)
{
	struct pp_page whole = split_page_of_order(0, 1);
	struct pp_page split = split_page_of_order(0, 2);
	struct pp_page biased = split_page_of_order(0, 64); /* a block being split */
	struct pp_page loose = page_of_order(0);

	CHECK(!pp_page_is_frag(&whole));
	CHECK(pp_page_is_frag(&split));
	CHECK(pp_page_is_frag(&biased));
	/* Outside a pool the count is the allocator's list link: ignored. */
	loose.pp_ref_count = 7;
	CHECK(!pp_page_is_frag(&loose));
}

/*
 * A fragment frame ends at the end of the cache line its data ends in:
 * the fragment behind it is someone else's, whatever the block says.
 */
static void test_frag_tail(void)
{
	struct pp_page p0 = split_page_of_order(0, 2);
	struct pp_page w0 = split_page_of_order(0, 1);
	struct pp_frame f = { .page = &p0, .offset = 2048, .headroom = 256,
			      .len = 100 }, g;

	/* 2048 + 256 + 100 = 2404: its line ends at 2432. */
	CHECK_EQ(pp_frame_buf_end(&f), 2432);
	CHECK_EQ(pp_frame_room(&f), 128);
	CHECK(pp_frame_valid(&f));
	CHECK_EQ(pp_frame_adjust_tail(&f, 28), 0);
	g = f;
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
	CHECK_EQ(pp_frame_adjust_tail(&f, 1024), -1);
	CHECK_EQ(pp_frame_adjust_tail(&f, INT_MAX), -1);
	CHECK(!memcmp(&f, &g, sizeof(f)));
	/* Shrinking within the line gives it back, never more. */
	CHECK_EQ(pp_frame_adjust_tail(&f, -30), 0);
	CHECK_EQ(pp_frame_adjust_tail(&f, 64), -1);
	CHECK_EQ(pp_frame_adjust_tail(&f, 30), 0);
	/* A header push keeps the end: allowed within the headroom. */
	CHECK_EQ(pp_frame_adjust_head(&f, -14), 0);
	CHECK_EQ(pp_frame_adjust_head(&f, -243), -1);
	/* Data ending on a line boundary: no room to grow at all. */
	f = (struct pp_frame){ .page = &p0, .offset = 1024, .headroom = 256,
			       .len = 768 };
	CHECK_EQ(pp_frame_room(&f), 768);
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
	/* The same frame on a whole page grows to the block's end. */
	f.page = &w0;
	CHECK_EQ(pp_frame_room(&f), PP_PAGE_SIZE - 1280);
	CHECK_EQ(pp_frame_adjust_tail(&f, PP_PAGE_SIZE - 2048), 0);
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
	/* The last fragment of the block: its line, then the block's end. */
	f = (struct pp_frame){ .page = &p0, .offset = 4032, .headroom = 0,
			       .len = 60 };
	CHECK_EQ(pp_frame_buf_end(&f), PP_PAGE_SIZE);
	CHECK_EQ(pp_frame_adjust_tail(&f, 4), 0);
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
}

/* Near 2^16: 128 and 256 KiB blocks hold 16-bit fields at their limits. */
static void test_frag_tail_2_16(void)
{
	struct pp_page p5 = split_page_of_order(5, 3);
	struct pp_page p6 = split_page_of_order(6, 3);
	struct pp_frame f = { .page = &p5, .offset = 0, .headroom = 0,
			      .len = 0xffc0 }, g;

	/* Ends on a line boundary (65472): a whole page's frame would grow. */
	g = f;
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
	CHECK(!memcmp(&f, &g, sizeof(f)));
	/* 65525 ends in the line up to 2^16: 10 more bytes, not 11. */
	f.len = 0xfff5;
	CHECK_EQ(pp_frame_buf_end(&f), 0x10000);
	CHECK_EQ(pp_frame_adjust_tail(&f, 10), 0);
	CHECK_EQ(f.len, 0xffff);
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
	/* A fragment at 2^16 - 64 whose data crosses 2^16. */
	f = (struct pp_frame){ .page = &p5, .offset = 0xffc0, .headroom = 0x40,
			       .len = 0x30 };
	CHECK_EQ(pp_frame_buf_end(&f), 0x10040);
	CHECK_EQ(pp_frame_room(&f), 0x40);
	CHECK_EQ(pp_frame_adjust_tail(&f, 0x10), 0);
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
	/* Headroom and length at 65535 each: the sum passes 2^16 twice. */
	f = (struct pp_frame){ .page = &p6, .offset = 0x40, .headroom = 0xffff,
			       .len = 0xfff0 };
	CHECK_EQ(pp_frame_buf_end(&f), 0x20040);
	CHECK_EQ(pp_frame_adjust_tail(&f, 15), 0);
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
}

/* Near 2^31 (the top of a frame's offset field) with headroom and
 * length at 2^16: sums past the block stay refused. */
static void test_frag_tail_2_32(void)
{
	struct pp_page p0 = split_page_of_order(0, 2);
	struct pp_page p18 = split_page_of_order(18, 2);
	struct pp_frame f = { .page = &p0, .offset = 0x7fffffc0u,
			      .headroom = 0x40, .len = 0 }, g;

	/* offset + headroom is 2^31: past the block. */
	CHECK_EQ(pp_frame_buf_end(&f), PP_PAGE_SIZE);
	CHECK_EQ(pp_frame_room(&f), 0);
	g = f;
	CHECK_EQ(pp_frame_adjust_tail(&f, 0x40), -1);
	CHECK_EQ(pp_frame_adjust_head(&f, -0x40), -1);
	CHECK(!memcmp(&f, &g, sizeof(f)));
	f = (struct pp_frame){ .page = &p0, .offset = PP_FRAME_OFFSET_MAX,
			       .headroom = 0xffff, .len = 0xffff };
	CHECK(!pp_frame_valid(&f));
	CHECK_EQ(pp_frame_room(&f), 0);
	CHECK_EQ(pp_frame_adjust_tail(&f, -1), -1);
	/* A 1 GiB block: a fragment in its last line, then one past it. */
	f = (struct pp_frame){ .page = &p18, .offset = (1u << 30) - 64,
			       .headroom = 0, .len = 32 };
	CHECK_EQ(pp_frame_buf_end(&f), 1u << 30);
	CHECK_EQ(pp_frame_adjust_tail(&f, 32), 0);
	CHECK_EQ(pp_frame_adjust_tail(&f, 1), -1);
	f = (struct pp_frame){ .page = &p18, .offset = 0x7fffff00u,
			       .headroom = 0x100, .len = 64 };
	CHECK_EQ(pp_frame_room(&f), 0);
	CHECK_EQ(pp_frame_adjust_tail(&f, -64), -1);
}

int main(void)
{
	RUN_TEST(test_bounds_ok);
	RUN_TEST(test_bounds_end_ok);
	RUN_TEST(test_valid);
	RUN_TEST(test_room);
	RUN_TEST(test_adjust_head);
	RUN_TEST(test_adjust_tail);
	RUN_TEST(test_frag_is_frag);
	RUN_TEST(test_frag_tail);
	RUN_TEST(test_frag_tail_2_16);
	RUN_TEST(test_frag_tail_2_32);
	return pp_test_result();
}
