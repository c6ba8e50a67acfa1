/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_test.h - what the allocator's tests share: one arena per process
 * whose page size comes from the command line ("4k" runs without
 * hugepages, "2m" skips when none are free), a fresh allocator per test,
 * and the check every test ends with: the invariant walker passes and, once
 * the test has freed everything, no page is out.
 */
#ifndef PP_PAGE_TEST_H
#define PP_PAGE_TEST_H

#include <stdbool.h>

#include "pp_test.h"
#include "pp_test_proc.h"


/* Small arenas: the hugepages are shared with everything else running. */
#define TEST_ARENA_SIZE (16UL << 20)

static struct pp_arena *test_arena;
static size_t test_page_size;

static inline size_t test_parse_page_size(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "2m"))
		return PP_PAGE_SIZE_2M;
	if (argc > 1 && strcmp(argv[1], "4k")) {
		fprintf(stderr, "usage: %s [4k|2m]\n", argv[0]);
		exit(2);
	}
	return PP_PAGE_SIZE_4K;
}

static inline void test_setup(int argc, char **argv)
{
	test_page_size = test_parse_page_size(argc, argv);
	test_arena = pp_test_arena(TEST_ARENA_SIZE, test_page_size);
	printf("arena: %zu KiB of %zu KiB pages on node %d\n",
	       TEST_ARENA_SIZE >> 10, test_page_size >> 10,
	       pp_arena_node(test_arena));
}

static inline void test_teardown(void)
{
	CHECK_EQ(pp_arena_destroy(test_arena), 0);
}

static inline unsigned long test_managed(void)
{
	return pp_arena_size(test_arena) >> PP_PAGE_SHIFT;
}

/* An allocator over the test arena; @o may be NULL for the defaults. */
static inline struct pp_allocator *
test_alloc(const struct pp_allocator_opts *o)
{
	struct pp_allocator_opts d = {
		.sz = sizeof(d),
	};
	struct pp_allocator *alloc;

	if (o)
		d = *o;
	d.arenas = &test_arena;
	d.nr_arenas = 1;
	alloc = pp_allocator_create(&d);
	REQUIRE(alloc != NULL);
	return alloc;
}

/* The walker passes and @expect pages are out. */
#define CHECK_ALLOCATED(alloc, expect)                                      \
	do {                                                                \
		unsigned long out_ = ~0UL;                                  \
		CHECK_EQ(pp_allocator_check((alloc), &out_), 0);            \
		CHECK_EQ(out_, (expect));                                   \
	} while (0)

/* Every test ends here: nothing out, everything back, destroyed. */
static inline void test_done(struct pp_allocator *alloc)
{
	struct pp_zone_stats s;
	unsigned long out = ~0UL;

	CHECK_EQ(pp_allocator_check(alloc, &out), 0);
	CHECK_EQ(out, 0);
	pp_allocator_drain_thread(alloc);
	CHECK_EQ(pp_allocator_zone_stats(alloc, 0, &s), 0);
	CHECK_EQ(s.free_pages + s.thread_cache_pages, s.managed_pages);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
}

static inline uint64_t test_stat(struct pp_allocator *alloc,
				 size_t field_offset)
{
	struct pp_zone_stats s;

	REQUIRE(pp_allocator_zone_stats(alloc, 0, &s) == 0);
	return *(const uint64_t *)((const char *)&s + field_offset);
}
#define STAT(alloc, field) \
	test_stat((alloc), offsetof(struct pp_zone_stats, field))

/* A page handed out: refcount 1, order 0, its address in the arena. */
static inline bool test_page_ok(struct pp_allocator *alloc,
				const struct pp_page *p)
{
	return p && pp_page_ref_count(p) == 1 && p->order == 0 &&
	       pp_arena_contains(test_arena, pp_page_address(p)) &&
	       pp_virt_to_page(alloc, pp_page_address(p)) == p;
}

/* No page twice among @n entries (NULLs ignored). */
static inline bool test_distinct(struct pp_page **pages, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		for (unsigned long j = i + 1; j < n; j++)
			if (pages[i] && pages[i] == pages[j])
				return false;
	return true;
}

#endif /* PP_PAGE_TEST_H */
