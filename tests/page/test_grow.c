/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_grow.c - a growable zone's steps, one at a time (manual resizing)
 * and by the allocator's own thread: the geometry and the options'
 * refusals, growing hands out pages of a new step only once it is
 * committed, a manual shrink gives back exactly the steps whose pages
 * are all free, the thread keeps ahead of a consumer and gives memory
 * back after it, and a page_pool's ring stops keeping steps alive once
 * its owner trims it. The walker agrees after every step. (The kernel's
 * own hugepage counts are test_growth's.)
 *
 * Usage: test_grow 4k|2m (2m skips when too few hugepages are free).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pagepool/pp_arena.h>
#include <pagepool/pp_page.h>
#include <pagepool/pp_page_pool.h>

#include "pp_test.h"

#define MIN_BYTES (4UL << 20)
#define STEP_BYTES (2UL << 20)
#define MAX_BYTES (16UL << 20)
#define MAX_PAGES (MAX_BYTES >> PP_PAGE_SHIFT)

static size_t page_size;

static struct pp_arena *growable_arena(void)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o),
		.size = MIN_BYTES,
		.max_size = MAX_BYTES,
		.grow_step = STEP_BYTES,
		.page_size = page_size,
		.numa_node = PP_NUMA_NODE_ANY,
		.name = "grow",
	};
	struct pp_arena *a = pp_arena_create(&o);

	if (!a && errno == ENOMEM && page_size != PP_PAGE_SIZE_4K)
		pp_test_skip("no %zu KiB hugepages free for a %lu KiB arena (run scripts/setup.sh)",
			     page_size >> 10, MIN_BYTES >> 10);
	REQUIRE(a != NULL);
	return a;
}

static struct pp_allocator *allocator(struct pp_arena **a, unsigned int flags,
				      unsigned int delay_ms)
{
	struct pp_allocator_opts o = {
		.sz = sizeof(o),
		.arenas = a,
		.nr_arenas = 1,
		.flags = flags,
		.shrink_delay_ms = delay_ms,
		/* Small caches, so the counts below are the zone's. */
		.thread_cache_size = 64,
		.thread_cache_batch = 16,
	};
	struct pp_allocator *alloc = pp_allocator_create(&o);

	REQUIRE(alloc != NULL);
	return alloc;
}

static struct pp_zone_growth growth(struct pp_allocator *alloc)
{
	struct pp_zone_growth g = { .sz = sizeof(g) };

	REQUIRE(pp_allocator_zone_growth(alloc, 0, &g) == 0);
	return g;
}

static unsigned long take_all(struct pp_allocator *alloc,
			      struct pp_page **pages, unsigned long from)
{
	unsigned long n = from;

	while (n < MAX_PAGES) {
		struct pp_page *p = pp_alloc_page(alloc);

		if (!p)
			break;
		pages[n++] = p;
	}
	return n;
}

static void put_all(struct pp_allocator *alloc, struct pp_page **pages,
		    unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		if (pages[i])
			pp_free_page(alloc, pages[i]);
}

static void walker(struct pp_allocator *alloc, unsigned long out)
{
	unsigned long got = ~0UL;

	CHECK_EQ(pp_allocator_check(alloc, &got), 0);
	CHECK_EQ(got, out);
}

static void test_geometry_and_refusals(void)
{
	struct pp_arena *a = growable_arena();
	struct pp_arena_opts bad = {
		.sz = sizeof(bad), .size = MIN_BYTES, .max_size = MIN_BYTES / 2,
		.page_size = page_size, .numa_node = PP_NUMA_NODE_ANY,
	};
	struct pp_allocator *alloc;
	struct pp_zone_growth g;

	CHECK(pp_arena_growable(a));
	CHECK_EQ(pp_arena_size(a), MAX_BYTES);
	CHECK_EQ(pp_arena_committed(a), MIN_BYTES);
	CHECK_EQ(pp_arena_segment_count(a), MIN_BYTES / STEP_BYTES);
	errno = 0;
	CHECK(pp_arena_create(&bad) == NULL && errno == EINVAL);
	bad.max_size = 0, bad.grow_step = STEP_BYTES;
	errno = 0;
	CHECK(pp_arena_create(&bad) == NULL && errno == EINVAL);

	alloc = allocator(&a, PP_ALLOCATOR_F_MANUAL_RESIZE, 0);
	g = growth(alloc);
	CHECK(g.growable && !g.pinned);
	CHECK_EQ(g.committed_bytes, MIN_BYTES);
	CHECK_EQ(g.min_bytes, MIN_BYTES);
	CHECK_EQ(g.max_bytes, MAX_BYTES);
	CHECK_EQ(g.step_bytes, STEP_BYTES);
	walker(alloc, 0);
	/* An older caller's struct: only its part is written. */
	{
		struct pp_zone_growth small = { .sz = offsetof(struct pp_zone_growth, committed_bytes) };

		CHECK_EQ(pp_allocator_zone_growth(alloc, 0, &small), 0);
		CHECK_EQ(small.sz, offsetof(struct pp_zone_growth, committed_bytes));
		CHECK_EQ(small.committed_bytes, 0);
	}
	CHECK_EQ(pp_allocator_grow(alloc, 1), -EINVAL);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(a), 0);
}

static void test_grow_to_max_and_shrink(void)
{
	struct pp_arena *a = growable_arena();
	struct pp_allocator *alloc = allocator(&a, PP_ALLOCATOR_F_MANUAL_RESIZE, 0);
	static struct pp_page *pages[MAX_PAGES];
	unsigned long n, steps = (MAX_BYTES - MIN_BYTES) / STEP_BYTES;

	n = take_all(alloc, pages, 0);
	CHECK_EQ(n, MIN_BYTES >> PP_PAGE_SHIFT);
	for (unsigned long s = 0; s < steps; s++) {
		CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
		n = take_all(alloc, pages, n);
		CHECK_EQ(n, (MIN_BYTES + (s + 1) * STEP_BYTES) >> PP_PAGE_SHIFT);
		walker(alloc, n);
	}
	CHECK_EQ(pp_allocator_grow(alloc, 0), -ENOSPC);
	CHECK_EQ(growth(alloc).grows, steps);
	CHECK_EQ(growth(alloc).grow_failures, 1);
	CHECK_EQ(growth(alloc).last_error, -ENOSPC);
	for (unsigned long i = 0; i < n; i++)
		CHECK(pp_arena_contains(a, pp_page_address(pages[i])));

	/* Keep one page of the highest slot: that slot stays. */
	for (unsigned long i = 0; i < n; i++) {
		uintptr_t off = (uintptr_t)pp_page_address(pages[i]) -
				(uintptr_t)pp_arena_base(a);

		if (off >= MAX_BYTES - STEP_BYTES && off < MAX_BYTES - STEP_BYTES + PP_PAGE_SIZE)
			continue;
		pp_free_page(alloc, pages[i]);
		pages[i] = NULL;
	}
	CHECK_EQ(pp_allocator_shrink(alloc, 0), (long)steps - 1);
	CHECK_EQ(pp_arena_committed(a), MIN_BYTES + STEP_BYTES);
	CHECK_EQ(growth(alloc).shrinks, steps - 1);
	CHECK_EQ(growth(alloc).isolated_pages, 0);
	walker(alloc, 1);
	put_all(alloc, pages, n);
	CHECK_EQ(pp_allocator_shrink(alloc, 0), 1);
	CHECK_EQ(pp_arena_committed(a), MIN_BYTES);
	walker(alloc, 0);
	/* The slots come back as good as new. */
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	n = take_all(alloc, pages, 0);
	CHECK_EQ(n, (MIN_BYTES + STEP_BYTES) >> PP_PAGE_SHIFT);
	walker(alloc, n);
	put_all(alloc, pages, n);
	walker(alloc, 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(a), 0);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The thread grows ahead of a consumer and gives the memory back. */
static void test_thread_follows(void)
{
	struct pp_arena *a = growable_arena();
	struct pp_allocator *alloc = allocator(&a, 0, 50);
	static struct pp_page *pages[MAX_PAGES];
	unsigned long n = 0, want = (MAX_BYTES - STEP_BYTES) >> PP_PAGE_SHIFT;

	/* Take pages a few at a time; the thread keeps ahead. */
	for (int tries = 0; n < want && tries < 20000; tries++) {
		struct pp_page *p = pp_alloc_page(alloc);

		if (!p) {
			sleep_ms(1);
			continue;
		}
		pages[n++] = p;
	}
	CHECK_EQ(n, want);
	CHECK(growth(alloc).grows >= (want - (MIN_BYTES >> PP_PAGE_SHIFT)) /
					   (STEP_BYTES >> PP_PAGE_SHIFT));
	walker(alloc, n);
	put_all(alloc, pages, n);
	for (int i = 0; i < 300 && pp_arena_committed(a) > MIN_BYTES + STEP_BYTES; i++)
		sleep_ms(10);
	CHECK(pp_arena_committed(a) <= MIN_BYTES + STEP_BYTES);
	CHECK(growth(alloc).shrinks >= 1);
	walker(alloc, 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(a), 0);
}

/*
 * A page_pool's ring keeps pages of every step after a burst; an idle
 * pool trimmed by its owner gives the isolated steps' pages back, and the
 * steps leave. A pool that holds no such page gives nothing.
 */
static void test_pool_gives_back(void)
{
	struct pp_arena *a = growable_arena();
	struct pp_allocator *alloc = allocator(&a, 0, 20);
	struct pp_pool_params pp = {
		.sz = sizeof(pp), .allocator = alloc, .pool_size = 1024,
		.nid = PP_NUMA_NODE_ANY, .name = "grow-pool",
	};
	static struct pp_page *pages[MAX_PAGES];
	unsigned long n = 0, want = (MAX_BYTES - STEP_BYTES) >> PP_PAGE_SHIFT;
	struct pp_pool *pool = pp_pool_create(&pp);
	struct pp_pool_stats st;

	REQUIRE(pool != NULL);
	CHECK_EQ(pp_pool_trim(pool), 0);
	for (int tries = 0; n < want && tries < 20000; tries++) {
		struct pp_page *p = pp_pool_alloc_pages(pool);

		if (!p) {
			sleep_ms(1);
			continue;
		}
		pages[n++] = p;
	}
	CHECK_EQ(n, want);
	/* The last taken first: the ring (1024) keeps pages of the highest
	 * steps, the rest go to the allocator. */
	for (unsigned long i = n; i-- > 0;)
		pp_pool_put_page(pool, pages[i], 0, false);
	for (int i = 0; i < 300 && pp_arena_committed(a) > MIN_BYTES + STEP_BYTES; i++) {
		pp_pool_trim(pool);
		sleep_ms(10);
	}
	CHECK(pp_arena_committed(a) <= MIN_BYTES + STEP_BYTES);
	CHECK_EQ(pp_pool_get_stats(pool, &st), 0);
	CHECK(st.alloc.waive > 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	walker(alloc, 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(a), 0);
}

int main(int argc, char **argv)
{
	page_size = argc > 1 && !strcmp(argv[1], "2m") ? PP_PAGE_SIZE_2M :
							  PP_PAGE_SIZE_4K;
	RUN_TEST(test_geometry_and_refusals);
	RUN_TEST(test_grow_to_max_and_shrink);
	RUN_TEST(test_thread_follows);
	RUN_TEST(test_pool_gives_back);
	return pp_test_result();
}
