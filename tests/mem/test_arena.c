/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_arena.c - the hugepage arena against the real kernel: page sizes,
 * AUTO, several arenas, hugepage exhaustion (foreseen from the counts,
 * and real: every free page taken), the 4 KiB fallback, argument errors,
 * hugetlbfs directories, NUMA nodes, mlock limits and the user count.
 *
 * One executable, one case per argument, so that meson reports a case
 * that lacks hugepages as skipped without hiding the others. A case with
 * a 2 MiB and a 1 GiB half runs the first on a CPU without 1 GiB pages
 * and prints a SKIP line for the second; the gig guest (tests/gig) has
 * 1 GiB pages and reruns the 1 GiB cases, where any skip fails.
 *
 * Where the kernel keeps a per-process figure, the checks use it rather
 * than the machine's free counts: other programs (and the other tests,
 * which meson runs in parallel) take and return hugepages all the time,
 * so "free count unchanged" is only meaningful for this process's own
 * share: HugetlbPages and VmLck in /proc/self/status, mappings in
 * /proc/self/maps, descriptors in /proc/self/fd.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pp_arena_user.h"
#include "pp_test.h"
#include "pp_test_proc.h"

#define MiB (1UL << 20)

/* ---- what the kernel says about this process ---- */

/* Mappings of arenas named "test_arena". */
#define ARENA_MAPS() pp_test_count_maps("test_arena", 0, 0)

/*
 * The /proc/self/numa_maps line of the mapping at @addr: the kernel's own
 * account of its page size and of how many pages sit on each node.
 */
static int numa_maps_line(void *addr, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/numa_maps", "r");
	char want[32];
	int found = 0;

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "%" PRIxPTR " ", (uintptr_t)addr);
	while (fgets(out, (int)len, f))
		if (!strncmp(out, want, strlen(want))) {
			found = 1;
			break;
		}
	fclose(f);
	return found;
}

/* Pages of the mapping at @addr on @node per numa_maps ("N0=4"). */
static long numa_maps_pages_on(void *addr, int node)
{
	char line[1024], key[16], *p;

	if (!numa_maps_line(addr, line, sizeof(line)))
		return -1;
	snprintf(key, sizeof(key), " N%d=", node);
	p = strstr(line, key);
	return p ? strtol(p + strlen(key), NULL, 10) : 0;
}

static long numa_maps_kpage_kb(void *addr)
{
	char line[1024], *p;

	if (!numa_maps_line(addr, line, sizeof(line)))
		return -1;
	p = strstr(line, "kernelpagesize_kB=");
	return p ? strtol(p + strlen("kernelpagesize_kB="), NULL, 10) : -1;
}

static long sysfs_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static long hp_sysfs(size_t page_size, const char *leaf)
{
	char path[160];

	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/hugepages/hugepages-%zukB/%s",
		 page_size >> 10, leaf);
	return sysfs_long(path);
}

/* Skip unless @n pages of @page_size are free now (any node). */
static void need_hugepages(size_t page_size, long n)
{
	pp_test_need_hugepages(page_size, n,
			       pp_hugepages_free(page_size, PP_NUMA_NODE_ANY),
			       "free");
}

/*
 * Pages of @page_size a new arena can take now: free minus those other
 * mappings reserved and have not touched yet, the figure the arena
 * checks before it takes any. 0 where the size does not exist.
 */
static long hp_available(size_t page_size)
{
	long free_now = hp_sysfs(page_size, "free_hugepages");
	long resv = hp_sysfs(page_size, "resv_hugepages");

	if (free_now < 0)
		return 0;
	if (resv > 0)
		free_now = free_now > resv ? free_now - resv : 0;
	return free_now;
}

static struct pp_arena *make(size_t size, size_t page_size, int node,
			     unsigned int flags, const char *dir)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o),
		.size = size,
		.page_size = page_size,
		.numa_node = node,
		.flags = flags,
		.hugetlbfs_dir = dir,
		.name = "test_arena",
	};

	return pp_arena_create(&o);
}

/*
 * Write a pattern unique to the arena and the page into every 4 KiB page,
 * then read all of it back: every page is mapped, writable, and distinct.
 */
static void fill_and_verify(struct pp_arena *a, uint64_t seed)
{
	char *base = pp_arena_base(a);
	size_t size = pp_arena_size(a);
	size_t bad = 0;

	for (size_t off = 0; off < size; off += PP_PAGE_SIZE) {
		uint64_t *w = (uint64_t *)(base + off);

		w[0] = seed ^ off;
		w[PP_PAGE_SIZE / 8 - 1] = ~(seed ^ off);
	}
	for (size_t off = 0; off < size; off += PP_PAGE_SIZE) {
		uint64_t *w = (uint64_t *)(base + off);

		if (w[0] != (seed ^ off) || w[PP_PAGE_SIZE / 8 - 1] != ~(seed ^ off))
			bad++;
	}
	CHECK_EQ(bad, 0);
}

/* Everything an arena of @page_size should be, checked from outside. */
static void check_arena(struct pp_arena *a, size_t size, size_t page_size)
{
	struct pp_arena_segment seg;
	uintptr_t base = (uintptr_t)pp_arena_base(a);
	size_t align = page_size > 2 * MiB ? page_size : 2 * MiB;

	CHECK(base != 0);
	CHECK_EQ(base & (align - 1), 0);
	CHECK_EQ(pp_arena_page_size(a), page_size);
	CHECK(pp_arena_size(a) >= size);
	CHECK_EQ(pp_arena_size(a) % page_size, 0);
	CHECK(pp_arena_size(a) - size < page_size);
	CHECK(!strcmp(pp_arena_name(a), "test_arena"));
	CHECK(pp_arena_contains(a, (void *)base));
	CHECK(pp_arena_contains(a, (void *)(base + pp_arena_size(a) - 1)));
	CHECK(!pp_arena_contains(a, (void *)(base + pp_arena_size(a))));
	CHECK(!pp_arena_contains(a, (void *)(base - 1)));
	/* The needle the leak checks count by does find the arena. */
	CHECK(ARENA_MAPS() >= 1);
	/* One mapping covers the arena, nothing else inside the range. */
	CHECK_EQ(pp_test_count_maps(NULL, base, base + pp_arena_size(a)), 1);

	CHECK_EQ(pp_arena_segment_count(a), 1);
	REQUIRE(pp_arena_segment(a, 0, &seg) == 0);
	CHECK_EQ((uintptr_t)seg.addr, base);
	CHECK_EQ(seg.len, pp_arena_size(a));
	CHECK_EQ(seg.page_size, page_size);
	CHECK_EQ(seg.node, pp_arena_node(a));
	CHECK(seg.fd >= 0 && fcntl(seg.fd, F_GETFD) >= 0);
	CHECK_EQ(seg.fd_offset, 0);
	CHECK_EQ(pp_arena_segment(a, 1, &seg), -EINVAL);

	/* The kernel's own view: page size and node of every page. */
	CHECK_EQ(numa_maps_kpage_kb(pp_arena_base(a)), page_size >> 10);
	if (pp_test_node_count() == 1) {
		CHECK_EQ(pp_arena_node(a), 0);
		CHECK_EQ(numa_maps_pages_on(pp_arena_base(a), 0),
			 pp_arena_size(a) / (page_size == PP_PAGE_SIZE_4K ?
						     PP_PAGE_SIZE : page_size));
	}
	fill_and_verify(a, base);
}

/* Destroy @a and check that its whole range was given back. */
static void destroy_gone(struct pp_arena *a)
{
	uintptr_t base = (uintptr_t)pp_arena_base(a);
	size_t size = pp_arena_size(a);

	CHECK_EQ(pp_arena_destroy(a), 0);
	CHECK_EQ(pp_test_count_maps(NULL, base, base + size), 0);
}

/* ---- cases ---- */

static void test_2m(void)
{
	long fds = pp_test_count_fds(), maps = ARENA_MAPS();
	long hp_kb = pp_test_status_kb("HugetlbPages");
	struct pp_arena *a;

	need_hugepages(PP_PAGE_SIZE_2M, 4);
	a = make(7 * MiB + 1, PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY, 0, NULL);
	if (!a && errno == ENOMEM)
		pp_test_skip("2 MiB hugepages taken by others meanwhile");
	REQUIRE(a != NULL);
	check_arena(a, 7 * MiB + 1, PP_PAGE_SIZE_2M);
	CHECK_EQ(pp_arena_size(a), 8 * MiB);
	/* Pre-faulted: the process holds all its pages before any touch. */
	if (hp_kb >= 0)
		CHECK_EQ(pp_test_status_kb("HugetlbPages") - hp_kb, 8 * 1024);
	destroy_gone(a);
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(ARENA_MAPS(), maps);
	if (hp_kb >= 0)
		CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp_kb);
}

static void test_1g(void)
{
	struct pp_arena *a;
	long fds = pp_test_count_fds();

	need_hugepages(PP_PAGE_SIZE_1G, 1);
	a = make(PP_PAGE_SIZE_1G, PP_PAGE_SIZE_1G, PP_NUMA_NODE_ANY, 0, NULL);
	if (!a && errno == ENOMEM)
		pp_test_skip("1 GiB hugepage taken by others meanwhile");
	REQUIRE(a != NULL);
	check_arena(a, PP_PAGE_SIZE_1G, PP_PAGE_SIZE_1G);
	destroy_gone(a);

	/* AUTO picks a 1 GiB page for a 1 GiB arena when one is free. */
	a = make(PP_PAGE_SIZE_1G, PP_PAGE_SIZE_AUTO, PP_NUMA_NODE_ANY, 0,
		 NULL);
	REQUIRE(a != NULL);
	if (pp_arena_page_size(a) != PP_PAGE_SIZE_1G)
		/* Only right if someone took the page in between. */
		CHECK(pp_hugepages_free(PP_PAGE_SIZE_1G, PP_NUMA_NODE_ANY) < 1);
	destroy_gone(a);
	CHECK_EQ(pp_test_count_fds(), fds);
}

static void test_4k(void)
{
	long fds = pp_test_count_fds(), maps = ARENA_MAPS();
	long lck = pp_test_status_kb("VmLck");
	struct pp_arena *a;

	a = make(3 * MiB + 5, PP_PAGE_SIZE_4K, PP_NUMA_NODE_ANY, 0, NULL);
	REQUIRE(a != NULL);
	check_arena(a, 3 * MiB + 5, PP_PAGE_SIZE_4K);
	CHECK_EQ(pp_arena_size(a), 3 * MiB + PP_PAGE_SIZE);
	/* 4 KiB pages can be swapped, so they are locked. */
	CHECK_EQ(pp_test_status_kb("VmLck") - lck, pp_arena_size(a) >> 10);
	destroy_gone(a);
	CHECK_EQ(pp_test_status_kb("VmLck"), lck);

	/* PP_ARENA_F_NO_LOCK leaves them unlocked. */
	a = make(MiB, PP_PAGE_SIZE_4K, PP_NUMA_NODE_ANY, PP_ARENA_F_NO_LOCK,
		 NULL);
	REQUIRE(a != NULL);
	CHECK_EQ(pp_test_status_kb("VmLck"), lck);
	fill_and_verify(a, 7);
	destroy_gone(a);
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(ARENA_MAPS(), maps);
}

static void test_auto(void)
{
	struct pp_arena *a;

	need_hugepages(PP_PAGE_SIZE_2M, 2);
	/* 4 MiB fits 2 MiB pages and not a 1 GiB one. */
	a = make(4 * MiB, PP_PAGE_SIZE_AUTO, PP_NUMA_NODE_ANY, 0, NULL);
	REQUIRE(a != NULL);
	CHECK_EQ(pp_arena_page_size(a), PP_PAGE_SIZE_2M);
	check_arena(a, 4 * MiB, PP_PAGE_SIZE_2M);
	destroy_gone(a);

	/* Smaller than any hugepage: one 2 MiB page, not 4 KiB pages. */
	a = make(100 * 1024, PP_PAGE_SIZE_AUTO, PP_NUMA_NODE_ANY, 0, NULL);
	REQUIRE(a != NULL);
	CHECK_EQ(pp_arena_page_size(a), PP_PAGE_SIZE_2M);
	CHECK_EQ(pp_arena_size(a), 2 * MiB);
	destroy_gone(a);
}

static void test_several(void)
{
	struct pp_arena *a[4];
	static const size_t sizes[4] = { 4 * MiB, MiB, 6 * MiB, 2 * MiB };
	static const size_t pages[4] = { PP_PAGE_SIZE_2M, PP_PAGE_SIZE_4K,
					 PP_PAGE_SIZE_2M, PP_PAGE_SIZE_AUTO };
	long fds = pp_test_count_fds();

	need_hugepages(PP_PAGE_SIZE_2M, 6);
	for (int i = 0; i < 4; i++) {
		a[i] = make(sizes[i], pages[i], PP_NUMA_NODE_ANY, 0, NULL);
		REQUIRE(a[i] != NULL);
	}
	/* Disjoint ranges, each its own memory. */
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			if (i != j) {
				CHECK(!pp_arena_contains(a[j], pp_arena_base(a[i])));
				CHECK(!pp_arena_contains(a[i], pp_arena_base(a[j])));
			}
	for (int i = 0; i < 4; i++)
		fill_and_verify(a[i], 0x1000u * (unsigned int)i + 1);
	/* Writing one changed no other: verify all again after all writes. */
	for (int i = 0; i < 4; i++) {
		uint64_t *w = pp_arena_base(a[i]);

		CHECK_EQ(w[0], 0x1000u * (unsigned int)i + 1);
	}
	/* Destroy out of creation order. */
	destroy_gone(a[1]);
	destroy_gone(a[3]);
	destroy_gone(a[0]);
	destroy_gone(a[2]);
	CHECK_EQ(pp_test_count_fds(), fds);
}

/*
 * Ask for one page more than the machine has reserved in all: more than
 * are free now, whatever other processes do meanwhile, and the arena
 * never takes a page it cannot keep. Check the one message and that
 * nothing is left behind. Takes no page, so it runs beside other tests;
 * exhaust_all below takes them all.
 */
static void exhaust_one(size_t page_size, int node)
{
	long total = hp_sysfs(page_size, "nr_hugepages");
	long fds = pp_test_count_fds(), maps = ARENA_MAPS();
	long hp_kb = pp_test_status_kb("HugetlbPages");
	char want[160], path[160];
	struct pp_arena *a;
	long free_before;

	REQUIRE(total >= 0); /* the caller checked the size exists */
	free_before = hp_sysfs(page_size, "free_hugepages");
	pp_test_log_reset();
	a = make((size_t)(total + 1) * page_size, page_size, node, 0, NULL);
	CHECK(a == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(pp_test_log_count, 1);

	snprintf(want, sizeof(want), "need %ld free %zu kB hugepages", total + 1,
		 page_size >> 10);
	CHECK(pp_test_log_has(want));
	if (node >= 0) {
		snprintf(want, sizeof(want), "on node %d", node);
		CHECK(pp_test_log_has(want));
		/* The fix is pp-hugepages on that node, not a hand-written
		 * count (the total it names moves with other processes). */
		snprintf(path, sizeof(path), " --pages -p %s -n %d'",
			 page_size == PP_PAGE_SIZE_1G ? "1G" : "2M", node);
	} else {
		snprintf(path, sizeof(path), " --pages -p %s'",
			 page_size == PP_PAGE_SIZE_1G ? "1G" : "2M");
	}
	CHECK(pp_test_log_has("more with 'pp-hugepages -r "));
	CHECK(pp_test_log_has(path));
	CHECK(!pp_test_log_has("echo"));
	/* The free figure in the message is one sysfs showed: <= total. */
	{
		const char *p = strstr(pp_test_last_log, " but ");
		long said = p ? strtol(p + 5, NULL, 10) : -1;

		CHECK(said >= 0 && said <= total);
		(void)free_before;
	}
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(ARENA_MAPS(), maps);
	if (hp_kb >= 0)
		CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp_kb);
}

/*
 * A size this CPU or kernel lacks: the request fails at once with a
 * message that names the missing sysfs directory, never a count of
 * pages (a count there would be an errno).
 */
static void unsupported_one(size_t page_size)
{
	long fds = pp_test_count_fds(), maps = ARENA_MAPS();
	char want[96];
	struct pp_arena *a;

	pp_test_log_reset();
	a = make(page_size, page_size, PP_NUMA_NODE_ANY, 0, NULL);
	CHECK(a == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(pp_test_log_count, 1);
	CHECK(pp_test_log_has("offers no"));
	snprintf(want, sizeof(want), "hugepages-%zukB", page_size >> 10);
	CHECK(pp_test_log_has(want));
	CHECK(!pp_test_log_has("are free"));
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(ARENA_MAPS(), maps);
}

/*
 * 2 MiB pages on every machine that has them; 1 GiB pages where the CPU
 * has them (the gig guest, tests/gig), else the unsupported message and
 * a SKIP line for that half.
 */
static void test_exhaust(void)
{
	if (!pp_test_hugepage_size_supported(PP_PAGE_SIZE_2M))
		pp_test_skip(PP_TEST_NO_HUGEPAGE_SIZE, PP_PAGE_SIZE_2M >> 10,
			     PP_PAGE_SIZE_2M >> 10);
	exhaust_one(PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY);
	exhaust_one(PP_PAGE_SIZE_2M, 0);
	if (pp_test_hugepage_size_supported(PP_PAGE_SIZE_1G)) {
		exhaust_one(PP_PAGE_SIZE_1G, PP_NUMA_NODE_ANY);
		exhaust_one(PP_PAGE_SIZE_1G, 0);
	} else {
		unsupported_one(PP_PAGE_SIZE_1G);
		pp_test_skip_part("exhaust 1 GiB", PP_TEST_NO_HUGEPAGE_SIZE,
				  PP_PAGE_SIZE_1G >> 10, PP_PAGE_SIZE_1G >> 10);
	}
}

/*
 * An arena of every @page_size page a new arena can take now, or NULL
 * when there is none. Others may take pages between the count and the
 * arena: a few tries, then a skip.
 */
static struct pp_arena *take_all(size_t page_size)
{
	long hp_kb = pp_test_status_kb("HugetlbPages");

	for (int tries = 0; tries < 3; tries++) {
		long n = hp_available(page_size);
		struct pp_arena *a;

		if (n == 0)
			return NULL;
		a = make((size_t)n * page_size, page_size, PP_NUMA_NODE_ANY,
			 0, NULL);
		if (!a) {
			CHECK_EQ(errno, ENOMEM);
			continue;
		}
		CHECK_EQ(pp_arena_size(a), (size_t)n * page_size);
		CHECK_EQ(pp_arena_page_size(a), page_size);
		/* Every page taken at creation, none left to fault later. */
		if (hp_kb >= 0)
			CHECK_EQ(pp_test_status_kb("HugetlbPages") - hp_kb,
				 n * (long)(page_size >> 10));
		return a;
	}
	pp_test_skip("%zu kB hugepages taken by others while this test took them all",
		     page_size >> 10);
}

/* With no @page_size page left: one page fails at once and takes nothing. */
static void check_exhausted(size_t page_size)
{
	long fds = pp_test_count_fds(), maps = ARENA_MAPS();
	long hp_kb = pp_test_status_kb("HugetlbPages");
	char want[96];
	struct pp_arena *a;

	pp_test_log_reset();
	a = make(page_size, page_size, PP_NUMA_NODE_ANY, 0, NULL);
	if (a)
		/* Only right if another process gave pages back meanwhile. */
		pp_test_skip("%zu kB hugepages given back by others meanwhile",
			     page_size >> 10);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(pp_test_log_count, 1);
	snprintf(want, sizeof(want), "need 1 free %zu kB hugepages but 0 are free",
		 page_size >> 10);
	CHECK(pp_test_log_has(want));
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(ARENA_MAPS(), maps);
	if (hp_kb >= 0)
		CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp_kb);
}

/* Once the holder is gone, its pages serve a new arena again. */
static void check_given_back(size_t page_size)
{
	struct pp_arena *a = make(page_size, page_size, PP_NUMA_NODE_ANY, 0,
				  NULL);

	if (!a && errno == ENOMEM)
		pp_test_skip("%zu kB hugepages taken by others meanwhile",
			     page_size >> 10);
	REQUIRE(a != NULL);
	check_arena(a, page_size, page_size);
	destroy_gone(a);
}

/*
 * Exhaustion for real, not foreseen from the counts: an arena takes every
 * free 2 MiB page, and another must then fail cleanly; likewise 1 GiB
 * pages where the CPU has them. With both gone, AUTO falls back to 4 KiB
 * pages when allowed and fails when not; with only 2 MiB pages gone, it
 * takes a whole 1 GiB page for a 4 MiB arena. Destroying the holders
 * gives every page back. This empties the machine's free pools for a
 * moment: meson runs it alone (is_parallel: false).
 */
static void test_exhaust_all(void)
{
	long fds = pp_test_count_fds(), maps = ARENA_MAPS();
	long hp_kb = pp_test_status_kb("HugetlbPages");
	bool gig = pp_test_hugepage_size_supported(PP_PAGE_SIZE_1G);
	struct pp_arena *all_2m, *all_1g = NULL, *a;

	need_hugepages(PP_PAGE_SIZE_2M, 1);
	all_2m = take_all(PP_PAGE_SIZE_2M);
	if (!all_2m)
		pp_test_skip("2 MiB hugepages taken by others meanwhile");
	check_exhausted(PP_PAGE_SIZE_2M);

	if (gig && hp_available(PP_PAGE_SIZE_1G) > 0) {
		a = make(4 * MiB, PP_PAGE_SIZE_AUTO, PP_NUMA_NODE_ANY, 0, NULL);
		REQUIRE(a != NULL);
		CHECK_EQ(pp_arena_page_size(a), PP_PAGE_SIZE_1G);
		CHECK_EQ(pp_arena_size(a), PP_PAGE_SIZE_1G);
		destroy_gone(a);
	}
	if (gig) {
		all_1g = take_all(PP_PAGE_SIZE_1G);
		check_exhausted(PP_PAGE_SIZE_1G);
	}

	/* No hugepage of any size: 4 KiB pages if allowed, with the reason. */
	pp_test_log_reset();
	a = make(4 * MiB, PP_PAGE_SIZE_AUTO, PP_NUMA_NODE_ANY,
		 PP_ARENA_F_ALLOW_4K, NULL);
	REQUIRE(a != NULL);
	CHECK_EQ(pp_test_log_count, 1);
	CHECK(pp_test_log_has("need 2 free 2048 kB hugepages but 0 are free"));
	CHECK(pp_test_log_has("using 4 KiB pages"));
	check_arena(a, 4 * MiB, PP_PAGE_SIZE_4K);
	destroy_gone(a);
	pp_test_log_reset();
	a = make(4 * MiB, PP_PAGE_SIZE_AUTO, PP_NUMA_NODE_ANY, 0, NULL);
	CHECK(a == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(pp_test_log_count, 1);
	CHECK(pp_test_log_has("need 2 free 2048 kB hugepages but 0 are free"));
	CHECK(pp_test_log_has("PP_ARENA_F_ALLOW_4K"));

	if (all_1g) {
		destroy_gone(all_1g);
		check_given_back(PP_PAGE_SIZE_1G);
	} else if (gig) {
		pp_test_skip_part("exhaust_all 1 GiB",
				  "no 1 GiB hugepage free to take (scripts/setup.sh reserves them)");
	} else {
		pp_test_skip_part("exhaust_all 1 GiB", PP_TEST_NO_HUGEPAGE_SIZE,
				  PP_PAGE_SIZE_1G >> 10, PP_PAGE_SIZE_1G >> 10);
	}
	destroy_gone(all_2m);
	check_given_back(PP_PAGE_SIZE_2M);

	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(ARENA_MAPS(), maps);
	if (hp_kb >= 0)
		CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp_kb);
}

/* One bad argument: NULL, EINVAL, and one message containing @needle. */
static void expect_einval(const struct pp_arena_opts *o, const char *needle,
			  int line)
{
	struct pp_arena *a;

	pp_test_log_reset();
	errno = 0;
	a = pp_arena_create(o);
	if (a || errno != EINVAL || pp_test_log_count != 1 ||
	    !pp_test_log_has(needle)) {
		fprintf(stderr, "line %d: got %p errno %d, %d message(s), last '%s', wanted '%s'\n",
			line, (void *)a, errno, pp_test_log_count,
			pp_test_last_log, needle);
		pp_test_failures++;
		if (a)
			pp_arena_destroy(a);
	}
}

#define EXPECT_EINVAL(o, needle) expect_einval(o, needle, __LINE__)

static void test_bad_args(void)
{
	struct pp_arena_opts good = {
		.sz = sizeof(good),
		.size = 4 * MiB,
		.page_size = PP_PAGE_SIZE_4K,
		.numa_node = PP_NUMA_NODE_ANY,
		.name = "test_arena",
	};
	struct pp_arena_opts o;
	struct {
		struct pp_arena_opts o;
		uint64_t newer;
	} big = { .o = good, .newer = 1 };
	long fds = pp_test_count_fds(), maps = ARENA_MAPS();

	EXPECT_EINVAL(NULL, "struct pp_arena_opts is NULL");
	o = good, o.sz = 0;
	EXPECT_EINVAL(&o, "struct pp_arena_opts: sz is");
	/* Below the first published struct (which ended at max_size). */
	o = good, o.sz = offsetof(struct pp_arena_opts, max_size) - 1;
	EXPECT_EINVAL(&o, "struct pp_arena_opts: sz is");
	big.o.sz = sizeof(big);
	EXPECT_EINVAL(&big.o, "this pagepool knows");
	o = good, o.size = 0;
	EXPECT_EINVAL(&o, "size is 0");
	o = good, o.size = SIZE_MAX;
	EXPECT_EINVAL(&o, "too large");
	o = good, o.size = SIZE_MAX - 4096, o.page_size = PP_PAGE_SIZE_1G;
	EXPECT_EINVAL(&o, "too large");
	o = good, o.page_size = 12345;
	EXPECT_EINVAL(&o, "page size 12345");
	o = good, o.page_size = 64 * 1024;
	EXPECT_EINVAL(&o, "page size 65536");
	o = good, o.flags = 1u << 30;
	EXPECT_EINVAL(&o, "unknown flags");
	o = good, o.numa_node = -7;
	EXPECT_EINVAL(&o, "node -7");
	o = good, o.numa_node = 63;
	EXPECT_EINVAL(&o, "node 63 is not online");
	o = good, o.hugetlbfs_dir = "/";
	EXPECT_EINVAL(&o, "not a hugetlbfs mount");

	/* Still usable afterwards, and nothing was left behind. */
	o = good;
	{
		struct pp_arena *a = pp_arena_create(&o);

		REQUIRE(a != NULL);
		destroy_gone(a);
	}
	CHECK_EQ(pp_arena_destroy(NULL), 0);
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(ARENA_MAPS(), maps);
}

/* A hugetlbfs mount with 2 MiB pages: an existing one or our own. */
static char *find_hugetlbfs(size_t page_size)
{
	FILE *f = fopen("/proc/mounts", "r");
	char dev[256], dir[512], type[64], optstr[512], want[32];
	static char found[512];

	if (!f)
		return NULL;
	snprintf(want, sizeof(want), "pagesize=%zuM", page_size >> 20);
	while (fscanf(f, "%255s %511s %63s %511s %*d %*d", dev, dir, type,
		      optstr) == 4) {
		if (!strcmp(type, "hugetlbfs") && strstr(optstr, want) &&
		    access(dir, W_OK) == 0) {
			snprintf(found, sizeof(found), "%s", dir);
			fclose(f);
			return found;
		}
	}
	fclose(f);
	return NULL;
}

static int dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/*
 * Mount hugetlbfs with @opts on a fresh directory in @tmp, in a private
 * mount namespace so the mount dies with the test; skip without root.
 */
static void mount_private_hugetlbfs(char *tmp, const char *opts)
{
	if (geteuid() != 0)
		pp_test_skip("mounting hugetlbfs needs root");
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		pp_test_skip("cannot make a private mount namespace: %s",
			     strerror(errno));
	REQUIRE(mkdtemp(tmp) != NULL);
	if (mount("none", tmp, "hugetlbfs", 0, opts) < 0) {
		int err = errno;

		rmdir(tmp);
		pp_test_skip("cannot mount hugetlbfs (%s): %s", opts,
			     strerror(err));
	}
}

static void unmount_private(char *tmp)
{
	CHECK_EQ(umount(tmp), 0);
	CHECK_EQ(rmdir(tmp), 0);
}

static void test_hugetlbfs(void)
{
	char tmp[] = "/tmp/pp-hugetlbfs-XXXXXX";
	char *dir = find_hugetlbfs(PP_PAGE_SIZE_2M);
	bool mounted = false;
	struct pp_arena_segment seg;
	struct pp_arena *a;
	struct stat st;
	long fds;

	need_hugepages(PP_PAGE_SIZE_2M, 2);
	if (!dir) {
		mount_private_hugetlbfs(tmp, "pagesize=2M,mode=0700");
		dir = tmp;
		mounted = true;
	}
	fds = pp_test_count_fds();
	a = make(4 * MiB, PP_PAGE_SIZE_AUTO, PP_NUMA_NODE_ANY, 0, dir);
	if (!a && errno == ENOMEM)
		pp_test_skip("2 MiB hugepages taken by others meanwhile");
	REQUIRE(a != NULL);
	/* The file was unlinked at once: nothing in the directory. */
	if (mounted)
		CHECK_EQ(dir_entries(dir), 0);
	check_arena(a, 4 * MiB, PP_PAGE_SIZE_2M);
	REQUIRE(pp_arena_segment(a, 0, &seg) == 0);
	REQUIRE(fstat(seg.fd, &st) == 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(st.st_nlink, 0);
	destroy_gone(a);
	CHECK_EQ(pp_test_count_fds(), fds);

	/* The mount's page size rules: asking another one is an error. */
	{
		struct pp_arena_opts o = {
			.sz = sizeof(o),
			.size = 4 * MiB,
			.page_size = PP_PAGE_SIZE_1G,
			.numa_node = PP_NUMA_NODE_ANY,
			.hugetlbfs_dir = dir,
		};

		EXPECT_EINVAL(&o, "2048 kB pages");
		o.page_size = PP_PAGE_SIZE_4K;
		EXPECT_EINVAL(&o, "2048 kB pages");
	}
	if (mounted)
		unmount_private(tmp);
}

/*
 * The 4 KiB fallback. Hugepages are made short for this arena only, with
 * a hugetlbfs mount limited to one page: the machine's pool is left
 * alone (other programs share it), and the arena stays small.
 */
static void test_fallback(void)
{
	char tmp[] = "/tmp/pp-hugetlbfs-XXXXXX";
	static const size_t sizes[] = { PP_PAGE_SIZE_2M, PP_PAGE_SIZE_AUTO };
	struct pp_arena *a;
	long fds;

	need_hugepages(PP_PAGE_SIZE_2M, 2);
	mount_private_hugetlbfs(tmp, "pagesize=2M,size=2M,mode=0700");
	fds = pp_test_count_fds();
	for (int i = 0; i < 2; i++) {
		pp_test_log_reset();
		a = make(4 * MiB, sizes[i], PP_NUMA_NODE_ANY,
			 PP_ARENA_F_ALLOW_4K, tmp);
		REQUIRE(a != NULL);
		CHECK_EQ(pp_test_log_count, 1);
		CHECK(pp_test_log_has("has no room for 2 2048 kB pages"));
		CHECK(pp_test_log_has("using 4 KiB pages"));
		check_arena(a, 4 * MiB, PP_PAGE_SIZE_4K);
		destroy_gone(a);
		CHECK_EQ(dir_entries(tmp), 0);
	}

	/* Without the flag: the clean error, no fallback, nothing left. */
	pp_test_log_reset();
	a = make(4 * MiB, PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY, 0, tmp);
	CHECK(a == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(pp_test_log_count, 1);
	CHECK(pp_test_log_has("has no room"));
	CHECK(pp_test_log_has("PP_ARENA_F_ALLOW_4K"));
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(dir_entries(tmp), 0);

	/* One page fits the mount: no fallback, no message. */
	pp_test_log_reset();
	a = make(2 * MiB, PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY,
		 PP_ARENA_F_ALLOW_4K, tmp);
	if (!a && errno == ENOMEM)
		pp_test_skip("2 MiB hugepages taken by others meanwhile");
	REQUIRE(a != NULL);
	CHECK_EQ(pp_arena_page_size(a), PP_PAGE_SIZE_2M);
	CHECK_EQ(pp_test_log_count, 0);
	destroy_gone(a);
	unmount_private(tmp);
}

static void test_node(void)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o),
		.size = 4 * MiB,
		.page_size = PP_PAGE_SIZE_AUTO,
		.numa_node = 0,
		.flags = PP_ARENA_F_ALLOW_4K,
		.name = "test_arena",
	};
	struct pp_arena *a;

	/* Node 0 exists on every Linux machine. */
	a = pp_arena_create(&o);
	REQUIRE(a != NULL);
	CHECK_EQ(pp_arena_node(a), 0);
	{
		size_t ps = pp_arena_page_size(a);
		long pages = (long)(pp_arena_size(a) / (ps == PP_PAGE_SIZE_4K ?
							 PP_PAGE_SIZE : ps));

		CHECK_EQ(numa_maps_pages_on(pp_arena_base(a), 0), pages);
		fill_and_verify(a, 99);
	}
	destroy_gone(a);

	/* Nodes past the last online one. */
	for (int node = pp_test_node_count(); node < 64; node += 31) {
		pp_test_log_reset();
		o.numa_node = node;
		a = pp_arena_create(&o);
		CHECK(a == NULL);
		CHECK_EQ(errno, EINVAL);
		CHECK(pp_test_log_has("is not online"));
	}
}

static void test_free_counts(void)
{
	CHECK_EQ(pp_hugepages_free(PP_PAGE_SIZE_4K, PP_NUMA_NODE_ANY), -EINVAL);
	CHECK_EQ(pp_hugepages_free(12345, PP_NUMA_NODE_ANY), -EINVAL);
	CHECK_EQ(pp_hugepages_free(PP_PAGE_SIZE_2M, -2), -EINVAL);
	if (hp_sysfs(PP_PAGE_SIZE_2M, "nr_hugepages") < 0)
		pp_test_skip("no 2048 kB hugepages on this kernel");
	/* Against sysfs read here; counts move, so they must only bracket. */
	{
		long total = hp_sysfs(PP_PAGE_SIZE_2M, "nr_hugepages");
		long f = pp_hugepages_free(PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY);
		long f0 = pp_hugepages_free(PP_PAGE_SIZE_2M, 0);

		CHECK(f >= 0 && f <= total);
		CHECK(f0 >= 0 && f0 <= total);
		if (pp_test_node_count() == 1)
			CHECK(f0 <= f + 64 && f <= f0 + 64);
	}
	CHECK_EQ(pp_hugepages_free(PP_PAGE_SIZE_2M, 1000), -ENOENT);
}

static void test_busy(void)
{
	struct pp_arena *a = make(MiB, PP_PAGE_SIZE_4K, PP_NUMA_NODE_ANY, 0,
				  NULL);

	REQUIRE(a != NULL);
	CHECK_EQ(pp_arena_get_user(a), 0);
	CHECK_EQ(pp_arena_get_user(a), 0);
	/* Each -EBUSY comes with its message (doc/errors.md): who still
	 * uses the arena, and what to destroy first. */
	pp_test_log_reset();
	CHECK_EQ(pp_arena_destroy(a), -EBUSY);
	CHECK(pp_test_log_has("arena 'test_arena': destroy refused, 2 allocator(s) still use it"));
	CHECK(pp_test_log_has("pp_allocator_destroy()"));
	/* -EBUSY freed nothing: the memory is still there. */
	fill_and_verify(a, 5);
	pp_arena_put_user(a);
	pp_test_log_reset();
	CHECK_EQ(pp_arena_destroy(a), -EBUSY);
	CHECK(pp_test_log_has("1 allocator(s) still use it"));
	pp_arena_put_user(a);
	pp_test_log_reset();
	destroy_gone(a);
	CHECK_EQ(pp_test_log_count, 0);
	CHECK_EQ(pp_arena_get_user(NULL), -EINVAL);
}

/*
 * mlock beyond RLIMIT_MEMLOCK without CAP_IPC_LOCK: in a child that drops
 * the capability, so the parent keeps its privileges.
 */
static void test_mlock_limit(void)
{
	pid_t pid;
	int status;

	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct hdr = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct data[2];
		struct rlimit rl = { 64 * 1024, 64 * 1024 };
		struct pp_arena *a;

		if (syscall(SYS_capget, &hdr, data) < 0)
			_exit(PP_TEST_SKIP);
		data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
		if (syscall(SYS_capset, &hdr, data) < 0 ||
		    setrlimit(RLIMIT_MEMLOCK, &rl) < 0)
			_exit(PP_TEST_SKIP);
		pp_test_log_reset();
		a = make(MiB, PP_PAGE_SIZE_4K, PP_NUMA_NODE_ANY, 0, NULL);
		CHECK(a == NULL);
		CHECK(errno == EPERM);
		CHECK(pp_test_log_has("RLIMIT_MEMLOCK"));
		CHECK(pp_test_log_has("ulimit -l"));
		/* The way out the message names works. */
		a = make(MiB, PP_PAGE_SIZE_4K, PP_NUMA_NODE_ANY,
			 PP_ARENA_F_NO_LOCK, NULL);
		CHECK(a != NULL);
		if (a)
			destroy_gone(a);
		_exit(pp_test_failures ? 1 : 0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	REQUIRE(WIFEXITED(status));
	if (WEXITSTATUS(status) == PP_TEST_SKIP)
		pp_test_skip("cannot drop CAP_IPC_LOCK or lower RLIMIT_MEMLOCK");
	CHECK_EQ(WEXITSTATUS(status), 0);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "2m", test_2m },
	{ "1g", test_1g },
	{ "4k", test_4k },
	{ "auto", test_auto },
	{ "several", test_several },
	{ "exhaust", test_exhaust },
	{ "exhaust_all", test_exhaust_all },
	{ "fallback", test_fallback },
	{ "bad_args", test_bad_args },
	{ "hugetlbfs", test_hugetlbfs },
	{ "node", test_node },
	{ "free_counts", test_free_counts },
	{ "busy", test_busy },
	{ "mlock_limit", test_mlock_limit },
};

int main(int argc, char **argv)
{
	pp_test_capture_log();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		cases[i].fn();
		printf("%s %s\n", pp_test_failures ? "FAIL" : "ok  ",
		       cases[i].name);
	}
	return pp_test_result();
}
