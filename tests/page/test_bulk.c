/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bulk.c - the bulk allocator's semantics, one test per line of
 * doc/design.md's "Bulk allocator semantics", plus creation errors, higher
 * orders, debug detection and destroy. Run with "4k" (no hugepages needed)
 * or "2m" (skips when no 2 MiB pages are free).
 */
#include <stddef.h>
#include <sys/mman.h>

#include "page_test.h"

#if PP_TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define BULK 64

/* Array form: only NULL entries, all filled with fresh order-0 pages. */
static void test_null_only_fill(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	struct pp_page *pages[BULK] = { 0 };
	unsigned long n;

	n = pp_alloc_pages_bulk_array(alloc, BULK, pages);
	CHECK_EQ(n, BULK);
	for (int i = 0; i < BULK; i++) {
		CHECK(test_page_ok(alloc, pages[i]));
		memset(pp_page_address(pages[i]), i, PP_PAGE_SIZE);
	}
	CHECK(test_distinct(pages, BULK));
	CHECK_EQ(STAT(alloc, bulk_calls), 1);
	CHECK_EQ(STAT(alloc, pages_allocated), BULK);
	CHECK_ALLOCATED(alloc, BULK);
	pp_free_pages_bulk(alloc, pages, BULK);
	CHECK_EQ(STAT(alloc, pages_freed), BULK);
	test_done(alloc);
}

/*
 * A bulk free skips NULL entries, both when the thread cache has room for
 * the lot (the branchless copy) and when it must drain on the way.
 */
static void test_free_bulk_skips_null(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	enum { SMALL = 24, LARGE = 1500 };
	static struct pp_page *pages[LARGE];
	unsigned long freed = 0;

	for (int round = 0; round < 2; round++) {
		int nr = round ? LARGE : SMALL;
		unsigned long out = 0;

		memset(pages, 0, sizeof(pages));
		for (int i = 0; i < nr; i++) {
			if (i % 3 == 1)
				continue;
			pages[i] = pp_alloc_page(alloc);
			REQUIRE(pages[i]);
			out++;
		}
		CHECK_ALLOCATED(alloc, out);
		pp_free_pages_bulk(alloc, pages, (unsigned long)nr);
		freed += out;
		CHECK_EQ(STAT(alloc, pages_freed), freed);
		CHECK_ALLOCATED(alloc, 0);
	}
	test_done(alloc);
}

/* Entries already set are kept, and counted in the return value. */
static void test_prepopulated_kept(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	struct pp_page *pages[16] = { 0 };
	struct pp_page *kept[3];
	const int at[3] = { 0, 5, 15 };
	unsigned long n;

	for (int i = 0; i < 3; i++) {
		kept[i] = pp_alloc_page(alloc);
		REQUIRE(kept[i]);
		pages[at[i]] = kept[i];
	}
	n = pp_alloc_pages_bulk_array(alloc, 16, pages);
	CHECK_EQ(n, 16);
	for (int i = 0; i < 3; i++)
		CHECK(pages[at[i]] == kept[i]);
	for (int i = 0; i < 16; i++)
		CHECK(test_page_ok(alloc, pages[i]));
	CHECK(test_distinct(pages, 16));
	/* 13 were allocated by the bulk call, whatever it returned. */
	CHECK_EQ(STAT(alloc, pages_allocated), 3 + 13);
	CHECK_ALLOCATED(alloc, 16);
	pp_free_pages_bulk(alloc, pages, 16);
	test_done(alloc);
}

/*
 * A full array returns nr_pages at once without reading array[nr_pages]:
 * the array ends where a PROT_NONE page begins, so a read past it faults.
 */
static void test_full_array_no_overread(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	const int nr = 32;
	long psz = sysconf(_SC_PAGESIZE);
	struct pp_page **pages;
	uint64_t calls;
	char *map;

	map = mmap(NULL, 2 * (size_t)psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(map != MAP_FAILED);
	REQUIRE(mprotect(map + psz, (size_t)psz, PROT_NONE) == 0);
	pages = (struct pp_page **)(map + psz) - nr;

	memset(pages, 0, nr * sizeof(*pages));
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, nr, pages), nr);
	calls = STAT(alloc, bulk_calls) + STAT(alloc, alloc_calls);
	/* Full now: nothing allocated, nothing read past the end. */
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, nr, pages), nr);
	CHECK_EQ(STAT(alloc, bulk_calls) + STAT(alloc, alloc_calls), calls);
	CHECK_ALLOCATED(alloc, nr);
	/* The last entry missing: filled, still no read past it. */
	pp_free_page(alloc, pages[nr - 1]);
	pages[nr - 1] = NULL;
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, nr, pages), nr);
	CHECK(test_page_ok(alloc, pages[nr - 1]));
	CHECK(test_distinct(pages, nr));
	pp_free_pages_bulk(alloc, pages, nr);
	munmap(map, 2 * (size_t)psz);
	test_done(alloc);
}

/* nr_pages 0 or negative: 0, nothing allocated, nothing touched. */
static void test_nr_pages_zero_negative(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	struct pp_page *pages[4] = { 0 };
	struct pp_page_list list;
	const int bad[] = { 0, -1, -64, -2147483647 - 1 };

	pp_page_list_init(&list);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(pp_alloc_pages_bulk_array(alloc, bad[i], pages), 0);
		CHECK_EQ(pp_alloc_pages_bulk_list(alloc, bad[i], &list), 0);
		/* Even a NULL array is never looked at. */
		CHECK_EQ(pp_alloc_pages_bulk_array(alloc, bad[i], NULL), 0);
	}
	for (int i = 0; i < 4; i++)
		CHECK(pages[i] == NULL);
	CHECK(list.head == NULL && list.count == 0);
	CHECK_EQ(STAT(alloc, pages_allocated), 0);
	CHECK_EQ(STAT(alloc, bulk_calls) + STAT(alloc, alloc_calls), 0);
	test_done(alloc);
}

/*
 * Neither a list nor an array: nowhere to put pages. As the kernel warns
 * once and returns 0, the call logs one error (the first time only),
 * returns 0, takes no page and leaves errno alone; both the bulk path
 * (several pages) and the single-page path (one) are refused.
 */
static void test_no_list_no_array(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	const int nr[] = { 4, 1, BULK };

	pp_test_capture_log();
	pp_test_log_reset();
	errno = 0;
	for (unsigned int i = 0; i < sizeof(nr) / sizeof(nr[0]); i++) {
		CHECK_EQ(pp_alloc_pages_bulk(alloc, PP_NUMA_NODE_ANY,
					     PP_NODEMASK_PREFERRED_ONLY, nr[i],
					     NULL, NULL), 0);
		CHECK_EQ(pp_alloc_pages_bulk(alloc, 0, PP_NODEMASK_ALL, nr[i],
					     NULL, NULL), 0);
	}
	CHECK_EQ(errno, 0);
	CHECK(pp_test_log_has("neither a list nor an array"));
	CHECK_EQ(pp_test_log_count, 1);
	CHECK_EQ(STAT(alloc, pages_allocated), 0);
	CHECK_EQ(STAT(alloc, bulk_calls) + STAT(alloc, alloc_calls), 0);
	CHECK_ALLOCATED(alloc, 0);
	test_done(alloc);
}

/* Exactly one missing: the single-page path, counted as a single call. */
static void test_one_missing_single_path(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	struct pp_page *pages[8] = { 0 };
	struct pp_page_list list;

	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, 8, pages), 8);
	CHECK_EQ(STAT(alloc, bulk_calls), 1);
	pp_free_page(alloc, pages[3]);
	pages[3] = NULL;
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, 8, pages), 8);
	CHECK(test_page_ok(alloc, pages[3]));
	CHECK_EQ(STAT(alloc, bulk_calls), 1);
	CHECK_EQ(STAT(alloc, alloc_calls), 1);

	/* The list form asked for one page takes the same path. */
	pp_page_list_init(&list);
	CHECK_EQ(pp_alloc_pages_bulk_list(alloc, 1, &list), 1);
	CHECK_EQ(list.count, 1);
	CHECK_EQ(STAT(alloc, bulk_calls), 1);
	CHECK_EQ(STAT(alloc, alloc_calls), 2);
	pp_free_page_list(alloc, &list);
	pp_free_pages_bulk(alloc, pages, 8);
	test_done(alloc);
}

/*
 * Below the watermark plus the request: one single-page attempt, so a
 * partial result of one page, never a block.
 */
static void test_below_watermark_partial(void)
{
	unsigned long managed = test_managed();
	struct pp_allocator_opts o = {
		.sz = sizeof(o),
		/* 40 pages above the mark: 32 pass, 64 do not. */
		.wmark_low = managed - 40,
	};
	struct pp_allocator *alloc = test_alloc(&o);
	struct pp_page *pages[BULK] = { 0 };
	struct pp_zone_stats s;

	CHECK_EQ(pp_allocator_zone_stats(alloc, 0, &s), 0);
	CHECK_EQ(s.wmark_low, managed - 40);
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, BULK, pages), 1);
	CHECK(test_page_ok(alloc, pages[0]));
	for (int i = 1; i < BULK; i++)
		CHECK(pages[i] == NULL);
	CHECK_EQ(STAT(alloc, bulk_calls), 0);
	CHECK_EQ(STAT(alloc, alloc_calls), 1);
	pp_free_page(alloc, pages[0]);
	pages[0] = NULL;
	pp_allocator_drain_thread(alloc);
	/* Within the watermark the whole request is served. */
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, 32, pages), 32);
	CHECK_EQ(STAT(alloc, bulk_calls), 1);
	pp_free_pages_bulk(alloc, pages, 32);
	test_done(alloc);
}

/* A zone-less node or mask yields nothing; the zone's node works. */
static void test_nodemask_respected(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	int node = pp_arena_node(test_arena);
	int other = node >= 0 ? (node + 1) % 64 : 1;
	struct pp_page *pages[16] = { 0 };
	struct pp_page_list list;
	struct pp_page *p;

	pp_page_list_init(&list);
	CHECK_EQ(pp_alloc_pages_bulk(alloc, other, PP_NODEMASK_PREFERRED_ONLY,
				     16, NULL, pages), 0);
	CHECK_EQ(pp_alloc_pages_bulk(alloc, other, 1ULL << other, 16, &list,
				     NULL), 0);
	CHECK_EQ(pp_alloc_pages_bulk_array_node(alloc, other, 16, pages), 0);
	/* Exactly one missing takes the single path: still not allowed. */
	CHECK_EQ(pp_alloc_pages_bulk(alloc, other, 1ULL << other, 1, NULL,
				     pages), 0);
	for (int i = 0; i < 16; i++)
		CHECK(pages[i] == NULL);
	CHECK(list.count == 0);
	CHECK_EQ(STAT(alloc, pages_allocated), 0);

	if (node >= 0) {
		/* The mask lets the zone's node in. */
		CHECK_EQ(pp_alloc_pages_bulk(alloc, other, 1ULL << node, 16,
					     NULL, pages), 16);
		pp_free_pages_bulk(alloc, pages, 16);
		memset(pages, 0, sizeof(pages));
		CHECK_EQ(pp_alloc_pages_bulk_array_node(alloc, node, 16,
							pages), 16);
		for (int i = 0; i < 16; i++)
			CHECK(pp_page_to_nid(alloc, pages[i]) == node);
		pp_free_pages_bulk(alloc, pages, 16);
	}
	/* PP_NODEMASK_ALL allows any zone. */
	memset(pages, 0, sizeof(pages));
	CHECK_EQ(pp_alloc_pages_bulk(alloc, other, PP_NODEMASK_ALL, 16, NULL,
				     pages), 16);
	pp_free_pages_bulk(alloc, pages, 16);
	/* The single-page call prefers a node but falls back to any zone. */
	p = pp_alloc_pages(alloc, other, 0);
	CHECK(test_page_ok(alloc, p));
	pp_free_page(alloc, p);
	test_done(alloc);
}

/* Online NUMA nodes, from sysfs ("0-1,3" style ranges). */
static int online_nodes(void)
{
	FILE *f = fopen("/sys/devices/system/node/online", "r");
	int a, b, n = 0;
	char sep;

	if (!f)
		return 1;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' &&
		    fscanf(f, "%d", &b) == 1)
			fscanf(f, "%c", &sep);
		n += b - a + 1;
	}
	fclose(f);
	return n ? n : 1;
}

/*
 * Two zones on two nodes: the preferred node's zone serves, and another
 * node's zone only when the mask allows it.
 */
static void test_two_nodes(void)
{
	struct pp_arena_opts ao = { .sz = sizeof(ao), .size = 4UL << 20,
				    .page_size = PP_PAGE_SIZE_4K,
				    .name = "node" };
	struct pp_arena *arenas[2];
	struct pp_allocator_opts o = { .sz = sizeof(o), .arenas = arenas,
				       .nr_arenas = 2, .wmark_low = 1 };
	struct pp_allocator *alloc;
	struct pp_page *pages[16] = { 0 }, **all;
	unsigned long n1 = (4UL << 20) >> PP_PAGE_SHIFT, got = 0, n;

	if (online_nodes() < 2) {
		printf("     SKIP test_two_nodes: machine has one NUMA node\n");
		return;
	}
	for (int i = 0; i < 2; i++) {
		ao.numa_node = i;
		arenas[i] = pp_arena_create(&ao);
		REQUIRE(arenas[i]);
	}
	alloc = pp_allocator_create(&o);
	REQUIRE(alloc);
	for (int nid = 0; nid < 2; nid++) {
		CHECK_EQ(pp_alloc_pages_bulk_array_node(alloc, nid, 16, pages),
			 16);
		for (int i = 0; i < 16; i++)
			CHECK_EQ(pp_page_to_nid(alloc, pages[i]), nid);
		pp_free_pages_bulk(alloc, pages, 16);
		memset(pages, 0, sizeof(pages));
	}
	/* Empty node 1's zone, then ask node 1 with and without node 0. */
	all = calloc(n1, sizeof(*all));
	REQUIRE(all);
	while (got < n1 && (n = pp_alloc_pages_bulk_array_node(alloc, 1,
				(int)(n1 - got < 64 ? n1 - got : 64),
				all + got)))
		got += n;
	CHECK_EQ(got, n1);
	CHECK_EQ(pp_alloc_pages_bulk_array_node(alloc, 1, 16, pages), 0);
	CHECK_EQ(pp_alloc_pages_bulk(alloc, 1, 1ULL << 0, 16, NULL, pages),
		 16);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(pp_page_to_nid(alloc, pages[i]), 0);
	pp_free_pages_bulk(alloc, pages, 16);
	pp_free_pages_bulk(alloc, all, got);
	free(all);
	CHECK_ALLOCATED(alloc, 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pp_arena_destroy(arenas[i]), 0);
}

/*
 * Nearly empty: calls return fewer than asked (one each, the single path
 * below the watermark), exactly what is left in total, then 0.
 */
static void test_short_when_nearly_empty(void)
{
	unsigned long managed = test_managed(), n, got = 0, total = 0;
	struct pp_allocator_opts o = { .sz = sizeof(o), .wmark_low = 1 };
	struct pp_allocator *alloc = test_alloc(&o);
	struct pp_page **all = calloc(managed + 1, sizeof(*all));
	struct pp_page *pages[BULK];
	const unsigned long left = 5;
	int calls = 0;

	REQUIRE(all);
	/* Take every page: bulk calls, the last ones one page each. */
	while (got < managed) {
		int want = managed - got < BULK ? (int)(managed - got) : BULK;

		n = pp_alloc_pages_bulk_array(alloc, want, all + got);
		if (n == 0)
			break;
		got += n;
	}
	CHECK_EQ(got, managed);
	memset(pages, 0, sizeof(pages));
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, BULK, pages), 0);
	CHECK(pp_alloc_page(alloc) == NULL);
	CHECK(STAT(alloc, alloc_failed) >= 2);

	/* Give back @left pages to the zone itself. */
	pp_free_pages_bulk(alloc, all + managed - left, left);
	pp_allocator_drain_thread(alloc);
	CHECK_ALLOCATED(alloc, managed - left);
	do {
		memset(pages, 0, sizeof(pages));
		n = pp_alloc_pages_bulk_array(alloc, BULK, pages);
		CHECK(n < BULK);
		for (unsigned long i = 0; i < n; i++)
			all[managed - left + total + i] = pages[i];
		total += n;
		calls++;
	} while (n && calls < 100);
	CHECK_EQ(total, left);
	CHECK(test_distinct(all, managed));
	CHECK_ALLOCATED(alloc, managed);
	pp_free_pages_bulk(alloc, all, managed);
	free(all);
	test_done(alloc);
}

/* List form: appended at the tail, the return value counts what was added. */
static void test_list_appends(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	struct pp_page_list list;
	struct pp_page *first[3], *p, *seen[40];
	unsigned long i = 0;

	pp_page_list_init(&list);
	CHECK_EQ(pp_alloc_pages_bulk_list(alloc, 3, &list), 3);
	CHECK_EQ(list.count, 3);
	first[0] = list.head;
	first[1] = first[0]->next;
	first[2] = first[1]->next;
	CHECK(list.tail == first[2]);
	CHECK_EQ(pp_alloc_pages_bulk_list(alloc, 32, &list), 32);
	CHECK_EQ(list.count, 35);
	CHECK(list.head == first[0] && first[0]->next == first[1] &&
	      first[1]->next == first[2]);
	for (p = list.head; p && i < 40; p = p->next)
		seen[i++] = p;
	CHECK_EQ(i, 35);
	CHECK(list.tail == seen[34] && list.tail->next == NULL);
	for (unsigned long j = 0; j < i; j++)
		CHECK(test_page_ok(alloc, seen[j]));
	CHECK(test_distinct(seen, i));
	CHECK_ALLOCATED(alloc, 35);
	pp_free_page_list(alloc, &list);
	CHECK(list.head == NULL && list.tail == NULL && list.count == 0);
	test_done(alloc);
}

/* Bigger than the cache: served under one zone lock, all distinct. */
static void test_large_request(void)
{
	struct pp_allocator_opts o = { .sz = sizeof(o), .thread_cache_size = 128,
				       .thread_cache_batch = 32, .wmark_low = 1 };
	struct pp_allocator *alloc = test_alloc(&o);
	const int nr = 1000;
	struct pp_page **pages = calloc(nr, sizeof(*pages));

	REQUIRE(pages);
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, nr, pages), nr);
	for (int i = 0; i < nr; i++)
		CHECK(test_page_ok(alloc, pages[i]));
	CHECK(test_distinct(pages, nr));
	CHECK_EQ(STAT(alloc, thread_cache_refills), 1);
	CHECK_ALLOCATED(alloc, nr);
	pp_free_pages_bulk(alloc, pages, nr);
	/* The cache holds at most thread_cache_size: the rest went back in batches. */
	CHECK(STAT(alloc, thread_cache_drains) >= 1);
	free(pages);
	test_done(alloc);
}

/*
 * Higher orders split blocks and merge them back: once all is freed,
 * every page is free and the zone is whole max-order blocks again (the
 * order-0 pages the thread cache drained wait in the zone's depot until
 * a block needs them merged).
 */
static void test_orders_split_merge(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	unsigned int max = pp_allocator_max_order(alloc);
	unsigned long managed = test_managed(), nblocks = 0, want;
	uintptr_t base = (uintptr_t)pp_arena_base(test_arena);
	struct pp_page *blocks[PP_PAGE_SIZE_1G / PP_PAGE_SIZE_2M];
	struct pp_page *order0[7], *b;

	CHECK_EQ(max, 9);
	/* An order-0 page first, so every block below is split from one. */
	for (int i = 0; i < 7; i++)
		order0[i] = pp_alloc_page(alloc);
	for (unsigned int o = 1; o <= max; o++) {
		b = pp_alloc_pages(alloc, PP_NUMA_NODE_ANY, o);
		REQUIRE(b);
		CHECK_EQ(b->order, o);
		CHECK_EQ(pp_page_ref_count(b), 1);
		CHECK_EQ(((uintptr_t)pp_page_address(b) - base) &
			 ((PP_PAGE_SIZE << o) - 1), 0);
		/* The whole block is ours to write. */
		memset(pp_page_address(b), 0xa5, PP_PAGE_SIZE << o);
		CHECK_ALLOCATED(alloc, 7 + ((2UL << o) - 2));
		blocks[o] = b;
	}
	CHECK(pp_alloc_pages(alloc, PP_NUMA_NODE_ANY, max + 1) == NULL);
	for (int i = 0; i < 7; i++)
		pp_free_page(alloc, order0[i]);
	for (unsigned int o = max; o >= 1; o--)
		pp_free_pages(alloc, blocks[o], o);
	pp_allocator_drain_thread(alloc);
	CHECK_ALLOCATED(alloc, 0);
	CHECK_EQ(STAT(alloc, free_pages), managed);

	/* All merged: the zone yields exactly managed >> max max blocks. */
	want = managed >> max;
	while (nblocks < sizeof(blocks) / sizeof(blocks[0]) &&
	       (b = pp_alloc_pages(alloc, PP_NUMA_NODE_ANY, max)))
		blocks[nblocks++] = b;
	CHECK_EQ(nblocks, want);
	CHECK_ALLOCATED(alloc, managed);
	for (unsigned long i = 0; i < nblocks; i++)
		pp_free_pages(alloc, blocks[i], max);
	pp_put_page(alloc, pp_alloc_pages(alloc, PP_NUMA_NODE_ANY, 3));
	test_done(alloc);
}

/* Debug builds report a double free and a foreign page, and ignore them. */
static void test_double_free_foreign(void)
{
#if PP_DEBUG >= 1
	struct pp_allocator *alloc = test_alloc(NULL);
	struct pp_page fake, *p, *q, *pages[4];

	pp_test_capture_log();
	p = pp_alloc_page(alloc);
	q = pp_alloc_page(alloc);
	REQUIRE(p && q);
	pp_free_page(alloc, p);
	pp_test_log_reset();
	pp_free_page(alloc, p);
	CHECK(pp_test_log_has("double free"));
	CHECK_ALLOCATED(alloc, 1);

	/* Bulk: the bad entries are skipped, the good one freed. */
	memset(&fake, 0, sizeof(fake));
	pages[0] = p;
	pages[1] = &fake;
	pages[2] = q;
	pages[3] = NULL;
	pp_test_log_reset();
	pp_free_pages_bulk(alloc, pages, 4);
	CHECK_EQ(pp_test_log_count, 2);
	CHECK_ALLOCATED(alloc, 0);

	pp_test_log_reset();
	pp_free_page(alloc, &fake);
	CHECK(pp_test_log_has("foreign page"));
	/* An interior pointer into the descriptor array is foreign too. */
	pp_free_page(alloc, (struct pp_page *)((char *)q + 8));
	CHECK(pp_test_log_has("foreign page"));

	/* The wrong order is reported and the block kept. */
	p = pp_alloc_pages(alloc, PP_NUMA_NODE_ANY, 2);
	REQUIRE(p);
	pp_test_log_reset();
	pp_free_pages(alloc, p, 1);
	CHECK(pp_test_log_has("order"));
	CHECK_ALLOCATED(alloc, 4);
	pp_free_pages(alloc, p, 2);
	pp_log_set_handler(NULL, NULL, PP_LOG_WARN);
	test_done(alloc);
#else
	printf("     (debug_level 0: no double-free detection to test)\n");
#endif
}

/*
 * Debug level 2: a write after free is reported when the page comes back;
 * under ASan, which would stop at the write itself, the shadow is checked.
 */
static void test_write_after_free(void)
{
#if PP_DEBUG >= 2 && !PP_TEST_ASAN
	struct pp_allocator_opts o = { .sz = sizeof(o), .thread_cache_size = 1,
				       .thread_cache_batch = 1 };
	struct pp_allocator *alloc = test_alloc(&o);
	struct pp_page *p, *q;
	char *data;

	pp_test_capture_log();
	p = pp_alloc_page(alloc);
	REQUIRE(p);
	data = pp_page_address(p);
	pp_free_page(alloc, p);
	data[100] = 1; /* the bug the poison is there to catch */
	pp_test_log_reset();
	/* A cache of one: the same page comes straight back. */
	q = pp_alloc_page(alloc);
	CHECK(q == p);
	CHECK(pp_test_log_has("written after free"));
	pp_free_page(alloc, q);
	pp_log_set_handler(NULL, NULL, PP_LOG_WARN);
	test_done(alloc);
#elif PP_TEST_ASAN
	/* ASan builds: a freed page's data is poisoned in the shadow. */
	struct pp_allocator_opts o = { .sz = sizeof(o), .thread_cache_size = 1,
				       .thread_cache_batch = 1 };
	struct pp_allocator *alloc = test_alloc(&o);
	struct pp_page *p = pp_alloc_page(alloc);
	char *data;

	REQUIRE(p);
	data = pp_page_address(p);
	CHECK(!__asan_region_is_poisoned(data, PP_PAGE_SIZE));
	pp_free_page(alloc, p);
	CHECK(__asan_address_is_poisoned(data));
	CHECK(__asan_address_is_poisoned(data + PP_PAGE_SIZE - 1));
	CHECK(pp_alloc_page(alloc) == p);
	CHECK(!__asan_region_is_poisoned(data, PP_PAGE_SIZE));
	pp_free_page(alloc, p);
	test_done(alloc);
#else
	printf("     (needs debug_level 2 or an ASan build)\n");
#endif
}

/* Destroy with pages out: -EBUSY naming them, nothing freed. */
static void test_destroy_busy(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	struct pp_page *pages[3] = { 0 };

	pp_test_capture_log();
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, 3, pages), 3);
	pp_test_log_reset();
	CHECK_EQ(pp_allocator_destroy(alloc), -EBUSY);
	CHECK(pp_test_log_has("3 pages still allocated"));
	CHECK(pp_test_log_has("zone 0"));
	/* The arena is still in use, and the allocator still works. */
	CHECK_EQ(pp_arena_destroy(test_arena), -EBUSY);
	CHECK_ALLOCATED(alloc, 3);
	pp_free_pages_bulk(alloc, pages, 3);
	pp_log_set_handler(NULL, NULL, PP_LOG_WARN);
	test_done(alloc);
}

/* Creation errors: EINVAL, with nothing left behind. */
static void test_create_errors(void)
{
	struct pp_arena *arenas[2] = { test_arena, test_arena };
	struct pp_allocator_opts o = { .sz = sizeof(o), .arenas = arenas,
				       .nr_arenas = 2 };
	struct pp_allocator *alloc;

	pp_test_capture_log();
	errno = 0;
	CHECK(pp_allocator_create(&o) == NULL && errno == EINVAL);
	CHECK(pp_test_log_has("one arena per node"));
	o.nr_arenas = 0;
	errno = 0;
	CHECK(pp_allocator_create(&o) == NULL && errno == EINVAL);
	o.nr_arenas = 1;
	o.thread_cache_size = 16;
	o.thread_cache_batch = 32;
	errno = 0;
	CHECK(pp_allocator_create(&o) == NULL && errno == EINVAL);
	o.thread_cache_size = 0;
	o.thread_cache_batch = 0;
	/* Shorter than the first published struct: refused. */
	o.sz = offsetof(struct pp_allocator_opts, grow_wmark) - 1;
	errno = 0;
	CHECK(pp_allocator_create(&o) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pp_allocator_create(NULL) == NULL && errno == EINVAL);
	/* The first published struct, before growth: accepted. */
	o.sz = offsetof(struct pp_allocator_opts, grow_wmark);
	o.grow_wmark = 12345; /* past its sz: never read */
	alloc = pp_allocator_create(&o);
	REQUIRE(alloc);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	o.grow_wmark = 0;
	/* The failures took no user of the arena. */
	o.sz = sizeof(o);
	alloc = pp_allocator_create(&o);
	REQUIRE(alloc);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	pp_log_set_handler(NULL, NULL, PP_LOG_WARN);
	CHECK_EQ(pp_arena_destroy(test_arena), 0);
	test_arena = pp_test_arena(TEST_ARENA_SIZE, test_page_size);
}

/*
 * Several allocators in one thread, and one destroyed and another made
 * (likely at the same address): each call finds its own thread cache.
 */
static void test_several_allocators(void)
{
	struct pp_arena *a2 = pp_test_arena(4UL << 20, PP_PAGE_SIZE_4K);
	struct pp_allocator_opts o = { .sz = sizeof(o), .arenas = &a2,
				       .nr_arenas = 1 };
	struct pp_allocator *x = test_alloc(NULL), *y;
	struct pp_page *px[8] = { 0 }, *py[8] = { 0 };

	for (int round = 0; round < 3; round++) {
		y = pp_allocator_create(&o);
		REQUIRE(y);
		for (int i = 0; i < 4; i++) {
			CHECK_EQ(pp_alloc_pages_bulk_array(x, 8, px), 8);
			CHECK_EQ(pp_alloc_pages_bulk_array(y, 8, py), 8);
			for (int j = 0; j < 8; j++) {
				CHECK(pp_arena_contains(test_arena,
					pp_page_address(px[j])));
				CHECK(pp_arena_contains(a2,
					pp_page_address(py[j])));
			}
			pp_free_pages_bulk(x, px, 8);
			pp_free_pages_bulk(y, py, 8);
			memset(px, 0, sizeof(px));
			memset(py, 0, sizeof(py));
		}
		CHECK_ALLOCATED(y, 0);
		CHECK_EQ(pp_allocator_destroy(y), 0);
	}
	test_done(x);
	CHECK_EQ(pp_arena_destroy(a2), 0);
}

/* The JSON statistics: well formed, and the length snprintf-like. */
static void test_stats_json(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	struct pp_page *pages[BULK] = { 0 };
	char buf[1024], small[8];
	int len;

	pp_alloc_pages_bulk_array(alloc, BULK, pages);
	len = pp_allocator_stats_json(alloc, buf, sizeof(buf));
	CHECK(len > 0 && (size_t)len == strlen(buf));
	CHECK(strncmp(buf, "{\"zones\":[{", 11) == 0);
	CHECK(strstr(buf, "\"pages_allocated\":64") != NULL);
	CHECK(strcmp(buf + len - 3, "}]}") == 0);
	CHECK_EQ(pp_allocator_stats_json(alloc, small, sizeof(small)), len);
	CHECK_EQ(strlen(small), sizeof(small) - 1);
	pp_free_pages_bulk(alloc, pages, BULK);
	test_done(alloc);
}

int main(int argc, char **argv)
{
	test_setup(argc, argv);
	RUN_TEST(test_null_only_fill);
	RUN_TEST(test_prepopulated_kept);
	RUN_TEST(test_free_bulk_skips_null);
	RUN_TEST(test_full_array_no_overread);
	RUN_TEST(test_nr_pages_zero_negative);
	RUN_TEST(test_no_list_no_array);
	RUN_TEST(test_one_missing_single_path);
	RUN_TEST(test_below_watermark_partial);
	RUN_TEST(test_nodemask_respected);
	RUN_TEST(test_two_nodes);
	RUN_TEST(test_short_when_nearly_empty);
	RUN_TEST(test_list_appends);
	RUN_TEST(test_large_request);
	RUN_TEST(test_orders_split_merge);
	RUN_TEST(test_double_free_foreign);
	RUN_TEST(test_write_after_free);
	RUN_TEST(test_destroy_busy);
	RUN_TEST(test_create_errors);
	RUN_TEST(test_several_allocators);
	RUN_TEST(test_stats_json);
	test_teardown();
	return pp_test_result();
}
