/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_iova_space.c - the free-IOVA-range allocator of lib/dma
 * (iova_space.c) on its own, no kernel needed: first-fit allocation with
 * alignment, exact takes, frees merged with their neighbours, exhaustion,
 * a full array, and ranges that reach 2^64 - 1 without any sum wrapping.
 *
 *   test_iova_space [basic|align|top]   (no argument: all)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/dma/pp_iova_space_priv.h"
#include "pp_test.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* The list's invariant: sorted, disjoint, not touching (merged). */
static void check_sorted(const struct pp_iova_space *s)
{
	unsigned int i;

	for (i = 0; i < s->nr; i++)
		CHECK(s->free[i].start <= s->free[i].end);
	for (i = 1; i < s->nr; i++)
		CHECK(s->free[i - 1].end < s->free[i].start);
}

/* What type1 reports around the MSI window: allocation, identity, reuse,
 * merging, exhaustion and a full array. */
static void test_basic(void)
{
	/* Two ranges around a hole, out of order, the first partly below
	 * the floor: what type1 reports around the MSI window. */
	const struct pp_iova_range ranges[] = {
		{ 0xfef00000ull, (1ull << 39) - 1 },
		{ 0, 0xfedfffffull },
	};
	uint64_t total = ((1ull << 39) - 0xfef00000ull) + (0xfee00000ull - MiB);
	struct pp_iova_space s;
	uint64_t a, b, c, d, e;

	pp_iova_space_init(&s, ranges, 2, MiB);
	CHECK_EQ(s.nr, 2);
	CHECK_EQ(s.free[0].start, MiB);
	CHECK_EQ(pp_iova_space_free_bytes(&s), total);

	/* First fit, aligned: 4 MiB at 1 MiB aligned to 2 MiB is 2 MiB,
	 * leaving the 1 MiB gap below free. */
	CHECK_EQ(pp_iova_space_alloc(&s, 4 * MiB, 2 * MiB, &a), 0);
	CHECK_EQ(a, 2 * MiB);
	CHECK_EQ(pp_iova_space_alloc(&s, 512 * 1024, 4096, &b), 0);
	CHECK_EQ(b, MiB);                /* the gap is used first */
	CHECK_EQ(pp_iova_space_alloc(&s, 8 * MiB, 2 * MiB, &c), 0);
	CHECK_EQ(c, 6 * MiB);
	CHECK_EQ(pp_iova_space_alloc(&s, 3, 3, &d), -EINVAL); /* align */

	/* Freed space is reused: the same size lands where it was. */
	pp_iova_space_free(&s, a, 4 * MiB);
	CHECK_EQ(pp_iova_space_alloc(&s, 4 * MiB, 2 * MiB, &d), 0);
	CHECK_EQ(d, a);
	/* A larger one does not fit the hole and goes above. */
	pp_iova_space_free(&s, d, 4 * MiB);
	CHECK_EQ(pp_iova_space_alloc(&s, 6 * MiB, 2 * MiB, &e), 0);
	CHECK_EQ(e, 14 * MiB);

	/* Identity: free space can be taken exactly, taken space cannot. */
	CHECK_EQ(pp_iova_space_take(&s, c, MiB), -EBUSY);
	CHECK_EQ(pp_iova_space_take(&s, 0xfee00000ull, MiB), -EBUSY); /* hole */
	CHECK_EQ(pp_iova_space_take(&s, 1ull << 38, 64 * MiB), 0);
	CHECK_EQ(pp_iova_space_take(&s, (1ull << 38) + MiB, MiB), -EBUSY);
	CHECK_EQ(pp_iova_space_take(&s, (1ull << 39) - MiB, 2 * MiB), -EBUSY);

	/* Everything back, in an order that needs each merge: below,
	 * above, both. Then the list is the two ranges again. */
	pp_iova_space_free(&s, 1ull << 38, 64 * MiB);
	pp_iova_space_free(&s, c, 8 * MiB);
	pp_iova_space_free(&s, b, 512 * 1024);
	pp_iova_space_free(&s, e, 6 * MiB);
	CHECK_EQ(s.nr, 2);
	CHECK_EQ(s.free[0].start, MiB);
	CHECK_EQ(pp_iova_space_free_bytes(&s), total);
	pp_iova_space_free(&s, MiB, 0); /* nothing */
	CHECK_EQ(s.nr, 2);

	/* Exhaustion, then a full array: splitting past PP_IOVA_SPACE_MAX
	 * entries leaves space unused but never corrupts the list. */
	CHECK_EQ(pp_iova_space_alloc(&s, 1ull << 40, 4096, &a), -ENOSPC);
	for (unsigned int i = 0; i < PP_IOVA_SPACE_MAX + 8; i++) {
		uint64_t at = (1ull << 36) + (uint64_t)i * 4 * MiB;

		CHECK_EQ(pp_iova_space_take(&s, at, MiB), 0);
	}
	CHECK_EQ(s.nr, PP_IOVA_SPACE_MAX);
	for (unsigned int i = 1; i < s.nr; i++)
		CHECK(s.free[i - 1].end < s.free[i].start);
	CHECK(pp_iova_space_free_bytes(&s) <
	      total - (PP_IOVA_SPACE_MAX + 8) * MiB);
	CHECK_EQ(pp_iova_space_alloc(&s, 1ull << 37, 1ull << 37, &a), 0);
	CHECK_EQ(a, 1ull << 37);
}

/* Alignment: the lowest aligned run wins, and what the alignment skips
 * stays free for the next, smaller allocation. */
static void test_align(void)
{
	const struct pp_iova_range r = { 0, GiB - 1 };
	struct pp_iova_space s;
	uint64_t a, b, c, d;

	pp_iova_space_init(&s, &r, 1, MiB);
	CHECK_EQ(pp_iova_space_alloc(&s, 4096, 4096, &a), 0);
	CHECK_EQ(a, MiB);
	CHECK_EQ(pp_iova_space_alloc(&s, MiB, 256 * MiB, &b), 0);
	CHECK_EQ(b, 256 * MiB);
	CHECK_EQ(s.nr, 2);
	/* The run below 256 MiB is used first by what fits there. */
	CHECK_EQ(pp_iova_space_alloc(&s, 2 * MiB, 2 * MiB, &c), 0);
	CHECK_EQ(c, 2 * MiB);
	/* Unaligned starts round up; alignment 1 takes the next byte. */
	CHECK_EQ(pp_iova_space_alloc(&s, 1, 1, &d), 0);
	CHECK_EQ(d, MiB + 4096);
	check_sorted(&s);
	/* Bad arguments. */
	CHECK_EQ(pp_iova_space_alloc(&s, 0, 4096, &d), -EINVAL);
	CHECK_EQ(pp_iova_space_alloc(&s, 4096, 0, &d), -EINVAL);
	CHECK_EQ(pp_iova_space_alloc(&s, 4096, 6144, &d), -EINVAL);
	CHECK_EQ(pp_iova_space_take(&s, 512 * MiB, 0), -EBUSY);
	/* An alignment larger than the space: nothing fits. */
	CHECK_EQ(pp_iova_space_alloc(&s, 4096, 2 * GiB, &d), -ENOSPC);

	pp_iova_space_free(&s, d, 1);
	pp_iova_space_free(&s, c, 2 * MiB);
	pp_iova_space_free(&s, b, MiB);
	pp_iova_space_free(&s, a, 4096);
	CHECK_EQ(s.nr, 1);
	CHECK_EQ(pp_iova_space_free_bytes(&s), GiB - MiB);
}

/* Ranges up to the last IOVA: nothing wraps past 2^64 - 1, neither the
 * rounding up to an alignment nor the end of a run, nor the merge of a
 * freed run that ends at the top. */
static void test_top(void)
{
	const uint64_t top = UINT64_MAX;
	const struct pp_iova_range r = { top - 16 * MiB + 1, top };
	const struct pp_iova_range all = { 0, top };
	struct pp_iova_space s;
	uint64_t a, b;

	pp_iova_space_init(&s, &r, 1, MiB);
	CHECK_EQ(s.nr, 1);
	CHECK_EQ(pp_iova_space_free_bytes(&s), 16 * MiB);
	CHECK_EQ(pp_iova_space_alloc(&s, 4 * MiB, 2 * MiB, &a), 0);
	CHECK(a == top - 16 * MiB + 1);
	/* 12 MiB are left: 16 do not fit, and the end does not wrap. */
	CHECK_EQ(pp_iova_space_alloc(&s, 16 * MiB, 2 * MiB, &b), -ENOSPC);
	CHECK_EQ(pp_iova_space_alloc(&s, top, 1, &b), -ENOSPC);
	/* Rounding up to 2^63 wraps to 0: below the range, refused. */
	CHECK_EQ(pp_iova_space_alloc(&s, 4096, 1ull << 63, &b), -ENOSPC);
	/* A take that would run past the top is refused, one that ends on
	 * it is fine. */
	CHECK_EQ(pp_iova_space_take(&s, top - MiB + 1, 2 * MiB), -EBUSY);
	CHECK_EQ(pp_iova_space_take(&s, top, 2), -EBUSY);
	CHECK_EQ(pp_iova_space_take(&s, top - MiB + 1, MiB), 0);
	CHECK(s.free[s.nr - 1].end == top - MiB);
	/* The rest, to the byte below the taken MiB. */
	CHECK_EQ(pp_iova_space_alloc(&s, 11 * MiB, 4096, &b), 0);
	CHECK(b == top - 12 * MiB + 1);
	CHECK_EQ(s.nr, 0);
	CHECK_EQ(pp_iova_space_free_bytes(&s), 0);
	CHECK_EQ(pp_iova_space_alloc(&s, 4096, 4096, &b), -ENOSPC);
	/* Back, the top first: the merges below it reach the top. */
	pp_iova_space_free(&s, top - MiB + 1, MiB);
	pp_iova_space_free(&s, a, 4 * MiB);
	pp_iova_space_free(&s, top - 12 * MiB + 1, 11 * MiB);
	CHECK_EQ(s.nr, 1);
	CHECK(s.free[0].start == top - 16 * MiB + 1);
	CHECK(s.free[0].end == top);
	CHECK_EQ(pp_iova_space_free_bytes(&s), 16 * MiB);

	/* The whole 64-bit space: its size does not fit in 64 bits, and
	 * the count saturates rather than wrapping to 0. */
	pp_iova_space_init(&s, &all, 1, 0);
	CHECK(pp_iova_space_free_bytes(&s) == top);
	CHECK_EQ(pp_iova_space_alloc(&s, 1ull << 63, 1ull << 63, &a), 0);
	CHECK(a == 0);
	CHECK_EQ(pp_iova_space_alloc(&s, 1ull << 63, 1ull << 63, &b), 0);
	CHECK(b == 1ull << 63);
	CHECK_EQ(s.nr, 0);
	pp_iova_space_free(&s, b, 1ull << 63);
	pp_iova_space_free(&s, a, 1ull << 63);
	CHECK_EQ(s.nr, 1);
	CHECK(s.free[0].start == 0 && s.free[0].end == top);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : NULL;

	if (!which || !strcmp(which, "basic"))
		RUN_TEST(test_basic);
	if (!which || !strcmp(which, "align"))
		RUN_TEST(test_align);
	if (!which || !strcmp(which, "top"))
		RUN_TEST(test_top);
	return pp_test_result();
}
