/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_growth.c - an allocator over a growable arena of real 2 MiB
 * hugepages, resized by hand (PP_ALLOCATOR_F_MANUAL_RESIZE), against the
 * kernel's own counts:
 *
 *   shrink   grow to the maximum a step at a time, allocate every page and
 *            free them, shrink: each step given back returns its hugepages
 *            (HugePages_Free in /proc/meminfo rises by them, the process's
 *            HugetlbPages falls by them) and pp_allocator_zone_growth()
 *            says the same, step by step; then grow again into the holes.
 *   held     nothing is given back while one page of a step is out: a
 *            page allocated from it, a page_pool's cache holding pages of
 *            it, a page_pool's recycle ring holding them. Each time the
 *            step stays (and only it), and goes once the page is back.
 *   refused  what growth refuses: past max_size (-ENOSPC), a fixed arena
 *            (-EINVAL), a zone that does not exist; the zone unchanged.
 *
 * The walker (pp_allocator_check) runs after every step. Skipped (77)
 * without enough free 2 MiB hugepages. HugePages_Free is the machine's:
 * another process taking or freeing hugepages between the two reads
 * would change it, so a mismatch there is retried (the whole
 * grow-and-shrink round) before it counts; the process's own HugetlbPages
 * must match every time.
 *
 * usage: test_growth shrink|held|refused|all
 */
#include "pp_test.h"
#include "pp_test_proc.h"

#define MiB (1UL << 20)
#define STEP (4 * MiB)             /* two hugepages a step */
#define STEPS 5                    /* max_size: the minimum and 4 more */
#define HUGE_PER_STEP (STEP / PP_PAGE_SIZE_2M)
#define PAGES_PER_STEP (STEP >> PP_PAGE_SHIFT)
#define MEMINFO_TRIES 3

static struct pp_arena *arena;
static struct pp_allocator *alloc;

static struct pp_arena *growable_arena(void)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o), .size = STEP, .max_size = STEPS * STEP,
		.grow_step = STEP, .page_size = PP_PAGE_SIZE_2M,
		.numa_node = PP_NUMA_NODE_ANY, .name = "growth",
	};
	struct pp_arena *a = pp_arena_create(&o);

	if (!a && errno == ENOMEM)
		pp_test_skip("no 2 MiB hugepages free for a %lu MiB arena (run scripts/setup.sh)",
			     STEP / MiB);
	REQUIRE(a != NULL);
	return a;
}

static void setup(void)
{
	struct pp_allocator_opts o = {
		.sz = sizeof(o), .flags = PP_ALLOCATOR_F_MANUAL_RESIZE,
	};

	pp_test_need_hugepages(PP_PAGE_SIZE_2M, STEPS * HUGE_PER_STEP,
			       pp_hugepages_free(PP_PAGE_SIZE_2M,
						 PP_NUMA_NODE_ANY),
			       "free");
	arena = growable_arena();
	o.arenas = &arena;
	o.nr_arenas = 1;
	alloc = pp_allocator_create(&o);
	REQUIRE(alloc != NULL);
}

static void teardown(void)
{
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	alloc = NULL;
	arena = NULL;
}

static struct pp_zone_growth growth(void)
{
	struct pp_zone_growth g = { .sz = sizeof(g) };

	REQUIRE(pp_allocator_zone_growth(alloc, 0, &g) == 0);
	return g;
}

/* The walker passes, with @expect pages out. */
static void walk(unsigned long expect, const char *when)
{
	unsigned long out = ~0UL;
	int rc;

	pp_allocator_drain_thread(alloc);
	rc = pp_allocator_check(alloc, &out);
	if (rc || out != expect)
		printf("walker %s: %d, %lu pages out (expected %lu)\n", when,
		       rc, out, expect);
	CHECK_EQ(rc, 0);
	CHECK_EQ(out, expect);
}

/* HugePages_Free of /proc/meminfo (the default size: 2 MiB here). */
static long meminfo_free(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long v = -1, size = 0;

	REQUIRE(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "HugePages_Free: %ld", &v);
		sscanf(line, "Hugepagesize: %ld kB", &size);
	}
	fclose(f);
	return size == (long)(PP_PAGE_SIZE_2M >> 10) ? v : -1;
}

/* This process's hugetlb pages, in 2 MiB pages. */
static long own_huge(void)
{
	return pp_test_status_kb("HugetlbPages") / (long)(PP_PAGE_SIZE_2M >> 10);
}

/* Which step @page lies in. */
static unsigned int step_of(struct pp_page *page)
{
	return (unsigned int)(((char *)pp_page_address(page) -
			       (char *)pp_arena_base(arena)) / STEP);
}

/* Every page the allocator has, one at a time: how many. */
static unsigned long take_all(struct pp_page **pages, unsigned long cap)
{
	unsigned long n = 0;

	while (n < cap && (pages[n] = pp_alloc_pages(alloc, PP_NUMA_NODE_ANY, 0)))
		n++;
	return n;
}

static void give_all(struct pp_page **pages, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		if (pages[i])
			pp_free_pages(alloc, pages[i], 0);
}

/* Grow to the maximum, a step at a time, checking each. */
static void grow_to_max(void)
{
	for (;;) {
		struct pp_zone_growth before = growth();
		long own = own_huge();
		int rc;

		if (before.committed_bytes == before.max_bytes)
			break;
		rc = pp_allocator_grow(alloc, 0);
		CHECK_EQ(rc, 0);
		if (rc)
			return;
		struct pp_zone_growth after = growth();
		CHECK_EQ(after.committed_bytes, before.committed_bytes + STEP);
		CHECK_EQ(after.grows, before.grows + 1);
		CHECK_EQ(after.free_pages, before.free_pages + PAGES_PER_STEP);
		CHECK_EQ(own_huge(), own + (long)HUGE_PER_STEP);
		CHECK_EQ(pp_arena_committed(arena), after.committed_bytes);
		walk(0, "after a grow");
	}
}

/*
 * Shrink, expecting @steps steps back: the zone's record, the process's
 * hugepages and (when nobody else moved them meanwhile) the machine's.
 * Returns whether HugePages_Free agreed.
 */
static bool shrink_expect(long steps, unsigned long out)
{
	struct pp_zone_growth before = growth(), after;
	long own = own_huge(), mfree = meminfo_free(), mfree2, got;

	got = pp_allocator_shrink(alloc, 0);
	mfree2 = meminfo_free();
	after = growth();
	CHECK_EQ(got, steps);
	CHECK_EQ(after.committed_bytes,
		 before.committed_bytes - (size_t)steps * STEP);
	CHECK_EQ(after.shrinks, before.shrinks + (uint64_t)steps);
	CHECK_EQ(pp_arena_committed(arena), after.committed_bytes);
	CHECK_EQ(own_huge(), own - steps * (long)HUGE_PER_STEP);
	walk(out, "after a shrink");
	printf("shrink: %ld steps back, committed %zu MiB, HugePages_Free %ld -> %ld, HugetlbPages %ld -> %ld\n",
	       got, after.committed_bytes / MiB, mfree, mfree2, own,
	       own_huge());
	return mfree < 0 || mfree2 - mfree == steps * (long)HUGE_PER_STEP;
}

static void case_shrink(void)
{
	unsigned long cap = STEPS * PAGES_PER_STEP, n;
	struct pp_page **pages = calloc(cap + 1, sizeof(*pages));
	bool meminfo_ok = false;

	REQUIRE(pages != NULL);
	setup();
	struct pp_zone_growth g = growth();
	CHECK(g.growable);
	CHECK(!g.pinned);
	CHECK_EQ(g.committed_bytes, STEP);
	CHECK_EQ(g.min_bytes, STEP);
	CHECK_EQ(g.max_bytes, STEPS * STEP);
	CHECK_EQ(g.step_bytes, STEP);
	CHECK_EQ(pp_arena_size(arena), STEPS * STEP);
	walk(0, "at the start");

	for (int round = 0; round < MEMINFO_TRIES && !meminfo_ok; round++) {
		grow_to_max();
		/* Every page of every step is the allocator's to give. */
		n = take_all(pages, cap + 1);
		CHECK_EQ(n, cap);
		walk(n, "with every page out");
		CHECK_EQ(pp_allocator_shrink(alloc, 0), 0);
		walk(n, "after a shrink with every page out");
		give_all(pages, n);
		walk(0, "with every page back");
		meminfo_ok = shrink_expect(STEPS - 1, 0);
		CHECK_EQ(growth().committed_bytes, STEP);
		/* At the minimum: nothing more to give. */
		CHECK_EQ(pp_allocator_shrink(alloc, 0), 0);
		walk(0, "at the minimum");
		if (!meminfo_ok)
			printf("HugePages_Free moved by another process too: round %d again\n",
			       round + 2);
	}
	CHECK(meminfo_ok);
	teardown();
	free(pages);
}

/*
 * Grow to the maximum, then take every page but those of the top step,
 * so that whatever is allocated next comes from the top step.
 */
static unsigned long isolate_top(struct pp_page **pages, unsigned long cap)
{
	unsigned long n, kept = 0;

	grow_to_max();
	n = take_all(pages, cap);
	CHECK_EQ(n, cap);
	for (unsigned long i = 0; i < n; i++) {
		if (step_of(pages[i]) == STEPS - 1) {
			pp_free_pages(alloc, pages[i], 0);
			pages[i] = NULL;
		} else {
			kept++;
		}
	}
	return kept;
}

static struct pp_pool *pool_new(void)
{
	struct pp_pool_params p = {
		.sz = sizeof(p), .allocator = alloc, .pool_size = 256,
		.nid = PP_NUMA_NODE_ANY, .name = "growth",
	};
	struct pp_pool *pool = pp_pool_create(&p);

	REQUIRE(pool != NULL);
	return pool;
}

static void case_held(void)
{
	unsigned long cap = STEPS * PAGES_PER_STEP, kept;
	struct pp_page **pages = calloc(cap, sizeof(*pages));
	struct pp_page *one, *ring[PP_POOL_CACHE_REFILL];
	struct pp_pool *pool;
	unsigned int i, n;

	REQUIRE(pages != NULL);
	setup();

	/* One page of the top step allocated: the step stays. */
	kept = isolate_top(pages, cap);
	one = pp_alloc_pages(alloc, PP_NUMA_NODE_ANY, 0);
	REQUIRE(one != NULL);
	CHECK_EQ(step_of(one), STEPS - 1);
	give_all(pages, cap);
	walk(1, "one page of the top step out");
	shrink_expect(STEPS - 2, 1);
	CHECK(pp_arena_committed(arena) == 2 * STEP);
	pp_free_pages(alloc, one, 0);
	walk(0, "the page back");
	shrink_expect(1, 0);

	/* A page_pool's cache holds pages of the top step. */
	kept = isolate_top(pages, cap);
	pool = pool_new();
	one = pp_pool_alloc_pages(pool);
	REQUIRE(one != NULL);
	CHECK_EQ(step_of(one), STEPS - 1);
	pp_pool_recycle_direct(pool, one);
	give_all(pages, cap);
	shrink_expect(STEPS - 2, PP_POOL_CACHE_REFILL);
	CHECK_EQ(pp_pool_check(pool), 0);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	walk(0, "the pool destroyed");
	shrink_expect(1, 0);

	/* A page_pool's recycle ring holds them: put there from "another
	 * thread" (allow_direct false). */
	kept = isolate_top(pages, cap);
	pool = pool_new();
	for (n = 0; n < PP_POOL_CACHE_REFILL; n++) {
		ring[n] = pp_pool_alloc_pages(pool);
		REQUIRE(ring[n] != NULL);
		CHECK_EQ(step_of(ring[n]), STEPS - 1);
	}
	pp_pool_put_pages_bulk(pool, ring, n);
	give_all(pages, cap);
	shrink_expect(STEPS - 2, PP_POOL_CACHE_REFILL);
	/* A manual shrink puts back what it could not give: the step is
	 * live again, and the owner reuses its ring's pages. */
	for (i = 0; i < n; i++) {
		ring[i] = pp_pool_alloc_pages(pool);
		REQUIRE(ring[i] != NULL);
		CHECK_EQ(step_of(ring[i]), STEPS - 1);
	}
	for (i = 0; i < n; i++)
		pp_pool_recycle_direct(pool, ring[i]);
	shrink_expect(0, PP_POOL_CACHE_REFILL);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	walk(0, "the pool destroyed");
	shrink_expect(1, 0);
	CHECK_EQ(growth().committed_bytes, STEP);
	(void)kept;
	teardown();
	free(pages);
}

static void case_refused(void)
{
	struct pp_zone_growth before, after, bad = { .sz = 0 };
	struct pp_allocator *fixed_alloc;
	struct pp_arena *fixed;

	setup();
	grow_to_max();
	before = growth();
	pp_test_capture_log();
	pp_test_log_reset();
	CHECK_EQ(pp_allocator_grow(alloc, 0), -ENOSPC);
	CHECK(pp_test_log_count > 0);
	after = growth();
	CHECK_EQ(after.committed_bytes, before.committed_bytes);
	CHECK_EQ(after.grows, before.grows);
	CHECK_EQ(after.grow_failures, before.grow_failures + 1);
	CHECK_EQ(after.last_error, -ENOSPC);
	CHECK_EQ(pp_allocator_grow(alloc, 1), -EINVAL);
	CHECK_EQ(pp_allocator_shrink(alloc, 1), -EINVAL);
	CHECK_EQ(pp_allocator_zone_growth(alloc, 1, &after), -EINVAL);
	CHECK_EQ(pp_allocator_zone_growth(alloc, 0, &bad), -EINVAL);
	CHECK_EQ(pp_allocator_zone_growth(alloc, 0, NULL), -EINVAL);
	walk(0, "after the refusals");
	teardown();

	/* A fixed arena: not growable, nothing to grow or give back. */
	fixed = pp_test_arena(STEP, PP_PAGE_SIZE_2M);
	fixed_alloc = pp_test_allocator(fixed);
	alloc = fixed_alloc;
	after = growth();
	CHECK(!after.growable);
	CHECK_EQ(after.committed_bytes, STEP);
	CHECK_EQ(pp_allocator_grow(fixed_alloc, 0), -EINVAL);
	CHECK_EQ(pp_allocator_shrink(fixed_alloc, 0), -EINVAL);
	CHECK(!pp_arena_growable(fixed));
	CHECK_EQ(pp_arena_committed(fixed), pp_arena_size(fixed));
	CHECK_EQ(pp_allocator_destroy(fixed_alloc), 0);
	CHECK_EQ(pp_arena_destroy(fixed), 0);
	alloc = NULL;
	pp_log_set_handler(NULL, NULL, PP_LOG_WARN);
}

int main(int argc, char **argv)
{
	static const struct pp_test_case cases[] = {
		{ "shrink", case_shrink },
		{ "held", case_held },
		{ "refused", case_refused },
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s shrink|held|refused|all\n", argv[0]);
		return 2;
	}
	return pp_test_run_cases(cases, sizeof(cases) / sizeof(cases[0]),
				 argv[1], "(2 MiB)");
}
