/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_numa.c - placement on a machine with two NUMA nodes, checked from
 * the kernel's side: an arena made for node N has every page on node N
 * (move_pages() in query mode and /proc/self/numa_maps), and the bulk
 * allocator and a page_pool asked for node N hand out pages of node N's
 * zone that really sit on node N, with node 0 as the control. Each check
 * runs on a CPU of the other node, so that a missing binding or a zone
 * chosen by the caller's node would show. Run as
 * "test_numa CASE 4k|2m"; skips (77) unless nodes 0 and 1 are online, so
 * it runs for real in the two-node QEMU guest (run-guest.sh --numa).
 */
#include <sched.h>
#include <sys/syscall.h>

#include "pp_test.h"

#define MiB (1UL << 20)
/* Small: the guest reserves 64 x 2 MiB per node, shared by every case. */
#define ARENA_SIZE (8 * MiB)
#define BULK 64

static size_t page_size = PP_PAGE_SIZE_4K;

static void need_two_nodes(void)
{
	if (!PP_HAVE_NUMA)
		pp_test_skip("pagepool was built without libnuma");
	if (access("/sys/devices/system/node/node1", F_OK) != 0)
		pp_test_skip("one NUMA node: these checks need nodes 0 and 1 (the qemu suite's numa guest has them)");
}

/*
 * The node each of @n addresses sits on, per move_pages(2) with no target
 * nodes (query only): the kernel's page tables, not the library's word.
 * A negative entry is -errno for that page (-EFAULT: not mapped).
 */
static void query_nodes(void **addrs, int *status, unsigned long n)
{
	long rc = syscall(SYS_move_pages, 0, n, addrs, NULL, status, 0);

	REQUIRE(rc == 0);
}

/* How many of @n addresses are not on @node (printing the first one). */
static unsigned long off_node(void **addrs, unsigned long n, int node)
{
	int *status = calloc(n, sizeof(*status));
	unsigned long bad = 0;

	REQUIRE(status != NULL);
	query_nodes(addrs, status, n);
	for (unsigned long i = 0; i < n; i++) {
		if (status[i] == node)
			continue;
		if (!bad)
			fprintf(stderr, "page %p: node %d, want %d\n", addrs[i],
				status[i], node);
		bad++;
	}
	free(status);
	return bad;
}

/* Pages of the mapping at @addr on @node, per numa_maps ("N1=4"). */
static long numa_maps_pages_on(const void *addr, int node)
{
	FILE *f = fopen("/proc/self/numa_maps", "r");
	char line[1024], key[16];
	unsigned long start;
	long pages = -1;

	if (!f)
		return -1;
	snprintf(key, sizeof(key), " N%d=", node);
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if (sscanf(line, "%lx", &start) != 1 ||
		    start != (unsigned long)addr)
			continue;
		p = strstr(line, key);
		pages = p ? strtol(p + strlen(key), NULL, 10) : 0;
		break;
	}
	fclose(f);
	return pages;
}

/*
 * Run on a CPU of the node that is not @node: pages that the library
 * failed to bind would then land, by first touch, on the wrong node, and
 * the checks would see it. The first CPU of node !@node, from sysfs.
 */
static void run_away_from(int node)
{
	char path[64];
	cpu_set_t set;
	FILE *f;
	int cpu;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist",
		 !node);
	f = fopen(path, "r");
	REQUIRE(f != NULL);
	if (fscanf(f, "%d", &cpu) != 1)
		cpu = -1; /* a node with memory and no CPU: nowhere to go */
	fclose(f);
	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	REQUIRE(sched_setaffinity(0, sizeof(set), &set) == 0);
}

static struct pp_arena *arena_on(int node)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o),
		.size = ARENA_SIZE,
		.page_size = page_size,
		.numa_node = node,
		.name = "test_numa",
	};
	struct pp_arena *a;

	run_away_from(node);
	a = pp_arena_create(&o);
	if (!a && errno == ENOMEM && page_size != PP_PAGE_SIZE_4K)
		pp_test_skip("no %zu KiB hugepages free on node %d for a %lu KiB arena",
			     page_size >> 10, node, ARENA_SIZE >> 10);
	REQUIRE(a != NULL);
	return a;
}

/* ---- cases ---- */

/* Every 4 KiB page of an arena for node N is on node N, for N = 0, 1. */
static void test_arena_place(void)
{
	unsigned long n = ARENA_SIZE / PP_PAGE_SIZE;
	void **addrs = calloc(n, sizeof(*addrs));

	REQUIRE(addrs != NULL);
	for (int node = 0; node < 2; node++) {
		struct pp_arena *a = arena_on(node);
		struct pp_arena_segment seg;
		char *base = pp_arena_base(a);
		size_t kpage = page_size == PP_PAGE_SIZE_4K ? PP_PAGE_SIZE :
							     page_size;

		CHECK_EQ(pp_arena_node(a), node);
		REQUIRE(pp_arena_segment(a, 0, &seg) == 0);
		CHECK_EQ(seg.node, node);
		for (unsigned long i = 0; i < n; i++)
			addrs[i] = base + i * PP_PAGE_SIZE;
		CHECK_EQ(off_node(addrs, n, node), 0);
		/* numa_maps counts kernel pages: all of them on the node. */
		CHECK_EQ(numa_maps_pages_on(base, node),
			 (long)(pp_arena_size(a) / kpage));
		CHECK_EQ(numa_maps_pages_on(base, !node), 0);
		CHECK_EQ(pp_arena_destroy(a), 0);
	}
	free(addrs);
}

/*
 * One allocator, one zone per node: a bulk call for node N with no other
 * node allowed returns pages of node N's zone, and those pages sit on node
 * N; the array and list forms both. Node 0 is the control: a zone mix-up
 * shows up as node-0 pages for node 1 or the other way round.
 */
static void test_bulk_place(void)
{
	struct pp_arena *arenas[2] = { arena_on(0), arena_on(1) };
	struct pp_allocator_opts o = {
		.sz = sizeof(o),
		.arenas = arenas,
		.nr_arenas = 2,
	};
	struct pp_allocator *alloc = pp_allocator_create(&o);
	struct pp_page *pages[BULK];
	void *addrs[BULK];

	REQUIRE(alloc != NULL);
	for (int nid = 0; nid < 2; nid++) {
		struct pp_page_list list;
		struct pp_page *p;
		unsigned long n = 0;

		/* The local node must not win over the one asked for. */
		run_away_from(nid);
		memset(pages, 0, sizeof(pages));
		CHECK_EQ(pp_alloc_pages_bulk(alloc, nid,
					     PP_NODEMASK_PREFERRED_ONLY, BULK,
					     NULL, pages), BULK);
		for (int i = 0; i < BULK; i++) {
			REQUIRE(pages[i] != NULL);
			CHECK_EQ(pp_page_to_nid(alloc, pages[i]), nid);
			CHECK(pp_arena_contains(arenas[nid],
						pp_page_address(pages[i])));
			addrs[i] = pp_page_address(pages[i]);
		}
		CHECK_EQ(off_node(addrs, BULK, nid), 0);
		pp_free_pages_bulk(alloc, pages, BULK);

		pp_page_list_init(&list);
		CHECK_EQ(pp_alloc_pages_bulk(alloc, nid, 1ULL << nid, BULK,
					     &list, NULL), BULK);
		while ((p = pp_page_list_pop(&list))) {
			CHECK_EQ(pp_page_to_nid(alloc, p), nid);
			pages[n] = p;
			addrs[n++] = pp_page_address(p);
		}
		CHECK_EQ(n, BULK);
		CHECK_EQ(off_node(addrs, n, nid), 0);
		pp_free_pages_bulk(alloc, pages, n);
	}
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pp_arena_destroy(arenas[i]), 0);
}

/*
 * A page_pool with params.nid N over the two-zone allocator: several
 * refills' worth of pages, every one from node N's zone and on node N;
 * pages recycled through the ring come back to the same node.
 */
static void test_pool_place(void)
{
	enum { N = 200 };
	struct pp_arena *arenas[2] = { arena_on(0), arena_on(1) };
	struct pp_allocator_opts o = {
		.sz = sizeof(o),
		.arenas = arenas,
		.nr_arenas = 2,
	};
	struct pp_allocator *alloc = pp_allocator_create(&o);
	static struct pp_page *pages[N];
	static void *addrs[N];

	REQUIRE(alloc != NULL);
	for (int nid = 0; nid < 2; nid++) {
		struct pp_pool_params p = {
			.sz = sizeof(p),
			.allocator = alloc,
			.nid = nid,
			.name = "test_numa",
		};
		struct pp_pool *pool;
		struct pp_pool_stats s;

		run_away_from(nid);
		pool = pp_pool_create(&p);
		REQUIRE(pool != NULL);
		for (int round = 0; round < 2; round++) {
			CHECK_EQ(pp_pool_alloc_bulk(pool, pages, N), N);
			for (int i = 0; i < N; i++) {
				CHECK_EQ(pp_page_to_nid(alloc, pages[i]), nid);
				addrs[i] = pp_page_address(pages[i]);
			}
			CHECK_EQ(off_node(addrs, N, nid), 0);
			/* Through the ring, for the second round to refill. */
			pp_pool_put_pages_bulk(pool, pages, N);
		}
		/* The second round came from the ring, none waived as
		 * another node's. */
		CHECK_EQ(pp_pool_check(pool), 0);
		CHECK_EQ(pp_pool_get_stats(pool, &s), 0);
		if (PP_STATS) {
			CHECK(s.alloc.refill > 0);
			CHECK_EQ(s.alloc.waive, 0);
		}
		CHECK_EQ(pp_pool_destroy(pool), 0);
	}
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pp_arena_destroy(arenas[i]), 0);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "arena_place", test_arena_place },
	{ "bulk_place", test_bulk_place },
	{ "pool_place", test_pool_place },
};

int main(int argc, char **argv)
{
	const char *usage = "usage: test_numa arena_place|bulk_place|pool_place [4k|2m]\n";

	if (argc < 2 || (argc > 2 && strcmp(argv[2], "4k") &&
			 strcmp(argv[2], "2m"))) {
		fputs(usage, stderr);
		return 2;
	}
	if (argc > 2 && !strcmp(argv[2], "2m"))
		page_size = PP_PAGE_SIZE_2M;
	pp_test_capture_log();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(argv[1], cases[i].name))
			continue;
		need_two_nodes();
		printf("%s on %zu KiB pages\n", cases[i].name, page_size >> 10);
		cases[i].fn();
		printf("%s %s\n", pp_test_failures ? "FAIL" : "ok  ",
		       cases[i].name);
		return pp_test_result();
	}
	fputs(usage, stderr);
	return 2;
}
