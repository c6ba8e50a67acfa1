/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_vmalloc.c - huge vmalloc areas against the real kernel: the page
 * sizes an area is made of (checked in /proc/self/smaps, the kernel's own
 * account, not only in our statistics), each fallback, the off switch,
 * exhaustion (foreseen from the counts, and real: every free page taken),
 * base pages from the allocator, NUMA placement, and that nothing leaks.
 *
 * One executable, one case per argument, so that a case that lacks
 * hugepages is reported skipped without hiding the others. A case with a
 * 2 MiB and a 1 GiB half runs the first on a CPU without 1 GiB pages and
 * prints a SKIP line for the second; the gig guest (tests/gig) has 1 GiB
 * pages and reruns the 1 GiB cases, where any skip fails. Hugepage
 * figures are this process's own (HugetlbPages in /proc/self/status): the
 * machine's free counts move with whatever else runs.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pp_test.h"
#include "pp_test_proc.h"

#define KiB (1UL << 10)
#define MiB (1UL << 20)
#define GiB (1UL << 30)

/* ---- what the kernel says about this process ---- */

/*
 * Bytes of [@lo, @hi) mapped with each kernel page size, from smaps:
 * out[0] 4 KiB, out[1] 2 MiB, out[2] 1 GiB; @thp gets AnonHugePages.
 */
static void smaps_sizes(uintptr_t lo, uintptr_t hi, size_t out[3],
			size_t *thp)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t start = 0, end = 0;
	size_t size_kb = 0;
	char line[512];
	bool in = false;

	REQUIRE(f != NULL);
	out[0] = out[1] = out[2] = 0;
	*thp = 0;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t s, e;
		size_t v;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &s, &e) == 2 &&
		    strchr(line, ' ') == line + strcspn(line, " ")) {
			start = s;
			end = e;
			in = start >= lo && end <= hi;
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "Size: %zu kB", &v) == 1)
			size_kb = v;
		else if (sscanf(line, "AnonHugePages: %zu kB", &v) == 1)
			*thp += v * KiB;
		else if (sscanf(line, "KernelPageSize: %zu kB", &v) == 1)
			out[v == 4 ? 0 : v == 2048 ? 1 : 2] += size_kb * KiB;
	}
	fclose(f);
}

/* The /proc/self/numa_maps line of the mapping at @addr. */
static int numa_maps_line(const void *addr, char *out, size_t len)
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

static long available(size_t page_size)
{
	return pp_vmalloc_pages_available(page_size, PP_NUMA_NODE_ANY);
}

/* Skip unless @n hugepages of @page_size are available to a new area. */
static void need_hugepages(size_t page_size, long n)
{
	pp_test_need_hugepages(page_size, n, available(page_size), "available");
}

/* ---- helpers ---- */

static struct pp_vm_area *vmalloc_flags(size_t size, unsigned int flags)
{
	struct pp_vmalloc_opts o = {
		.sz = sizeof(o),
		.flags = flags,
		.numa_node = PP_NUMA_NODE_ANY,
		.name = "test_vmalloc",
	};

	return pp_vmalloc(size, &o);
}

/*
 * Write a pattern into every byte of the area (whole area, end to end)
 * and read it back; the area must read zero before.
 */
static void check_rw(struct pp_vm_area *a, size_t size)
{
	uint64_t *p = pp_vm_area_addr(a);
	unsigned char *b = pp_vm_area_addr(a);
	size_t words = size / 8, bad = 0;

	for (size_t i = 0; i < size; i += 4096)
		bad += b[i] != 0;
	bad += b[size - 1] != 0;
	CHECK_EQ(bad, 0);
	for (size_t i = 0; i < words; i++)
		p[i] = i * 0x9e3779b97f4a7c15ULL;
	for (size_t i = words * 8; i < size; i++)
		b[i] = (unsigned char)i;
	for (size_t i = 0; i < words; i++)
		bad += p[i] != i * 0x9e3779b97f4a7c15ULL;
	for (size_t i = words * 8; i < size; i++)
		bad += b[i] != (unsigned char)i;
	CHECK_EQ(bad, 0);
}

/* Statistics against themselves and against the kernel's smaps. */
static void check_layout(struct pp_vm_area *a, size_t size,
			 unsigned long n1g, unsigned long n2m)
{
	struct pp_vm_area_stats s;
	uintptr_t base = (uintptr_t)pp_vm_area_addr(a);
	size_t k[3], thp, align;
	char json[512];

	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	CHECK_EQ(s.size, size);
	CHECK_EQ(pp_vm_area_size(a), size);
	CHECK_EQ(s.pages_1g, n1g);
	CHECK_EQ(s.pages_2m, n2m);
	CHECK_EQ(s.bytes_1g + s.bytes_2m + s.bytes_4k, s.mapped);
	CHECK_EQ(s.bytes_4k, s.pages_4k * 4096);
	CHECK_EQ(s.wasted, s.mapped - size);
	CHECK(s.wasted < 4096);
	align = n1g ? GiB : n2m ? 2 * MiB : 4 * KiB;
	CHECK_EQ(base & (align - 1), 0);

	smaps_sizes(base, base + s.mapped, k, &thp);
	CHECK_EQ(k[0], s.bytes_4k);
	CHECK_EQ(k[1], s.bytes_2m);
	CHECK_EQ(k[2], s.bytes_1g);
	CHECK_EQ(thp, 0);

	CHECK(pp_vm_area_stats_json(a, json, sizeof(json)) <
	      (int)sizeof(json));
	CHECK(strstr(json, "\"wasted\":") != NULL);
	CHECK(json[0] == '{' && json[strlen(json) - 1] == '}');
}

/* ---- cases ---- */

/* An area of every size class, end to end, aligned, with what it uses. */
static void test_sizes(void)
{
	static const size_t sizes[] = {
		1, 4095, 4096, 4097, 1 * MiB, 2 * MiB - 1, 2 * MiB,
		2 * MiB + 1, 3 * MiB, 5 * MiB + 12345, 64 * MiB + 4096,
	};
	need_hugepages(PP_PAGE_SIZE_2M, 33);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i];
		/* NO_1G: the machine's two 1 GiB pages are not ours. */
		struct pp_vm_area *a = vmalloc_flags(size, PP_VMALLOC_F_NO_1G);
		struct pp_vm_area_stats s;

		REQUIRE(a != NULL);
		REQUIRE(pp_vm_area_stats(a, &s) == 0);
		/* Others may take 2 MiB pages meanwhile: then fewer here. */
		/* 2 MiB - 1 rounds to 4 KiB pages first: one 2 MiB page. */
		CHECK(s.pages_2m <= ((size + 4095) & ~4095UL) / (2 * MiB));
		if (s.fallbacks == 0)
			CHECK_EQ(s.pages_2m,
				 ((size + 4095) & ~4095UL) / (2 * MiB));
		check_layout(a, size, 0, s.pages_2m);
		check_rw(a, size);
		CHECK_EQ(pp_vfree(a), 0);
	}
}

/* 3 MiB: one 2 MiB page and 256 base pages, nothing wasted. */
static void test_mixed(void)
{
	struct pp_vm_area_stats s;
	struct pp_vm_area *a;
	long hp_before = pp_test_status_kb("HugetlbPages");

	need_hugepages(PP_PAGE_SIZE_2M, 1);
	a = vmalloc_flags(3 * MiB, PP_VMALLOC_F_NO_FALLBACK);
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	check_layout(a, 3 * MiB, 0, 1);
	CHECK_EQ(s.pages_4k, 256);
	CHECK_EQ(s.wasted, 0);
	CHECK_EQ(s.kernel_wasted, 1 * MiB);
	CHECK_EQ(s.fallbacks, 0);
	CHECK_EQ(pp_test_status_kb("HugetlbPages") - hp_before, 2048);
	check_rw(a, 3 * MiB);
	pp_vfree(a);
	CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp_before);

	/* Round-up: the kernel's way, with its waste reported. */
	a = vmalloc_flags(3 * MiB, PP_VMALLOC_F_NO_1G |
					   PP_VMALLOC_F_ROUND_UP |
					   PP_VMALLOC_F_NO_FALLBACK);
	if (!a && errno == ENOMEM)
		pp_test_skip("2 MiB hugepages taken by others meanwhile");
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	CHECK_EQ(s.pages_2m, 2);
	CHECK_EQ(s.pages_4k, 0);
	CHECK_EQ(s.wasted, 1 * MiB);
	pp_vfree(a);
}

/* 1 GiB + 2 MiB + 4 KiB: one page of each size, in that order. */
static void test_gig(void)
{
	size_t size = GiB + 2 * MiB + 4096;
	struct pp_vm_area *a;
	struct pp_vm_area_stats s;

	need_hugepages(PP_PAGE_SIZE_1G, 1);
	need_hugepages(PP_PAGE_SIZE_2M, 1);
	a = vmalloc_flags(size, PP_VMALLOC_F_NO_FALLBACK);
	if (!a && errno == ENOMEM)
		pp_test_skip("hugepages taken by others meanwhile");
	REQUIRE(a != NULL);
	check_layout(a, size, 1, 1);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	CHECK_EQ(s.pages_4k, 1);
	check_rw(a, size);
	pp_vfree(a);
}

/*
 * No 1 GiB pages usable: switched off for the area (NO_1G), absent from
 * the CPU or kernel (the same area, and no fallback either), or short
 * (more asked than are free), where what 1 GiB pages cannot cover falls
 * to smaller pages. A machine has either the second or the third; the
 * gig guest (tests/gig) has the third.
 */
static void test_no_1g(void)
{
	size_t size = GiB + 4096;
	struct pp_vm_area_stats s;
	struct pp_vm_area *a;
	long n1g;

	need_hugepages(PP_PAGE_SIZE_2M, 512);
	a = vmalloc_flags(size, PP_VMALLOC_F_NO_1G | PP_VMALLOC_F_NO_FALLBACK);
	if (!a && errno == ENOMEM)
		pp_test_skip("2 MiB hugepages taken by others meanwhile");
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	check_layout(a, size, 0, 512);
	CHECK_EQ(s.fallbacks, 0); /* switched off is not a fallback */
	pp_vfree(a);

	n1g = available(PP_PAGE_SIZE_1G);
	if (n1g < 0) {
		/* A size the kernel lacks is never short: no fallback. */
		a = vmalloc_flags(size, PP_VMALLOC_F_NO_FALLBACK);
		if (!a && errno == ENOMEM)
			pp_test_skip("2 MiB hugepages taken by others meanwhile");
		REQUIRE(a != NULL);
		REQUIRE(pp_vm_area_stats(a, &s) == 0);
		check_layout(a, size, 0, 512);
		CHECK_EQ(s.fallbacks, 0);
		pp_vfree(a);
		pp_test_skip_part("no_1g short", PP_TEST_NO_HUGEPAGE_SIZE,
				  PP_PAGE_SIZE_1G >> 10, PP_PAGE_SIZE_1G >> 10);
		return;
	}

	/*
	 * Short: one 1 GiB page more than are available, and no 2 MiB pages
	 * (NO_2M), so what 1 GiB pages cannot cover falls to base pages.
	 */
	if (n1g > 2)
		pp_test_skip("%ld 1 GiB pages free: the short case would map %ld GiB",
			     n1g, n1g + 1);
	size = (size_t)(n1g + 1) * GiB;
	a = vmalloc_flags(size, PP_VMALLOC_F_NO_2M);
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	CHECK_EQ(s.fallbacks, 1);
	CHECK(s.pages_1g <= (unsigned long)n1g);
	check_layout(a, size, s.pages_1g, 0);
	CHECK_EQ(s.bytes_4k, size - s.pages_1g * GiB);
	pp_vfree(a);
}

/* No hugepages at all: both sizes switched off; equals the off switch. */
static void check_all_base(struct pp_vm_area *a, size_t size)
{
	struct pp_vm_area_stats s;

	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	check_layout(a, size, 0, 0);
	CHECK_EQ(s.pages_4k, (size + 4095) / 4096);
	CHECK_EQ(s.fallbacks, 0);
	check_rw(a, size);
	CHECK_EQ(pp_vfree(a), 0);
}

static void test_no_huge(void)
{
	long hp = pp_test_status_kb("HugetlbPages");

	check_all_base(vmalloc_flags(6 * MiB, PP_VMALLOC_F_NO_1G |
						      PP_VMALLOC_F_NO_2M),
		       6 * MiB);
	/* NO_FALLBACK is no obstacle: nothing is short, sizes are off. */
	check_all_base(vmalloc_flags(6 * MiB, PP_VMALLOC_F_NO_HUGE |
						      PP_VMALLOC_F_NO_FALLBACK),
		       6 * MiB);
	CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp);
}

static void test_env(void)
{
	long hp = pp_test_status_kb("HugetlbPages");

	CHECK(setenv(PP_VMALLOC_ENV_NOHUGE, "1", 1) == 0);
	CHECK(pp_vmalloc_huge_disabled());
	check_all_base(vmalloc_flags(6 * MiB, 0), 6 * MiB);
	/* ROUND_UP rounds to the largest size allowed: 4 KiB. */
	check_all_base(vmalloc_flags(6 * MiB + 1, PP_VMALLOC_F_ROUND_UP),
		       6 * MiB + 1);
	CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp);
	CHECK(setenv(PP_VMALLOC_ENV_NOHUGE, "0", 1) == 0);
	CHECK(!pp_vmalloc_huge_disabled());
	unsetenv(PP_VMALLOC_ENV_NOHUGE);
	CHECK(!pp_vmalloc_huge_disabled());
}

/* Support queries: 4 KiB always, hugepage sizes as sysfs says. */
static void test_support(void)
{
	CHECK(pp_vmalloc_page_size_supported(PP_PAGE_SIZE_4K));
	CHECK(!pp_vmalloc_page_size_supported(64 * KiB));
	CHECK(!pp_vmalloc_page_size_supported(0));
	CHECK_EQ(pp_vmalloc_page_size_supported(PP_PAGE_SIZE_2M),
		 access("/sys/kernel/mm/hugepages/hugepages-2048kB", F_OK) == 0);
	CHECK_EQ(pp_vmalloc_page_size_supported(PP_PAGE_SIZE_1G),
		 access("/sys/kernel/mm/hugepages/hugepages-1048576kB", F_OK) == 0);
	CHECK_EQ(pp_vmalloc_pages_available(PP_PAGE_SIZE_4K, -1), -EINVAL);
	CHECK_EQ(pp_vmalloc_pages_available(3 * MiB, -1), -EINVAL);
}

/*
 * Exhaustion with fallback forbidden: a clear error naming the sysfs file,
 * checked before any page is taken, and nothing left behind. Takes no
 * page, so it runs beside other tests; exhaust_all takes them all.
 */
static void test_exhaust(void)
{
	int fds = pp_test_count_fds();
	long hp = pp_test_status_kb("HugetlbPages");
	struct pp_vm_area *a;
	long n;

	n = available(PP_PAGE_SIZE_2M);
	if (n < 0)
		pp_test_skip(PP_TEST_NO_HUGEPAGE_SIZE, PP_PAGE_SIZE_2M >> 10,
			     PP_PAGE_SIZE_2M >> 10);
	pp_test_log_reset();
	a = vmalloc_flags((size_t)(n + 1) * 2 * MiB,
			  PP_VMALLOC_F_NO_1G | PP_VMALLOC_F_NO_FALLBACK);
	CHECK(a == NULL && errno == ENOMEM);
	CHECK(pp_test_log_has("more with 'pp-hugepages -r "));
	CHECK(pp_test_log_has(" --pages -p 2M', or drop"));

	n = available(PP_PAGE_SIZE_1G);
	if (n >= 0) {
		pp_test_log_reset();
		a = vmalloc_flags((size_t)(n + 1) * GiB,
				  PP_VMALLOC_F_NO_FALLBACK);
		CHECK(a == NULL && errno == ENOMEM);
		CHECK(pp_test_log_has(" --pages -p 1G', or drop"));
	} else {
		pp_test_skip_part("exhaust 1 GiB", PP_TEST_NO_HUGEPAGE_SIZE,
				  PP_PAGE_SIZE_1G >> 10, PP_PAGE_SIZE_1G >> 10);
	}
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp);
}

/*
 * An area one @page_size page larger than all that are available, the
 * smaller sizes in @flags: it takes every one of them and maps the rest
 * with the next size allowed, one fallback. Others may take pages
 * between the count and the area (then fewer here, still one fallback)
 * or give some back (then nothing is short: a skip).
 */
static struct pp_vm_area *take_all(size_t page_size, unsigned int flags,
				   long *n, struct pp_vm_area_stats *s)
{
	struct pp_vm_area *a;
	size_t size;

	*n = available(page_size);
	size = (size_t)(*n + 1) * page_size;
	a = vmalloc_flags(size, flags);
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, s) == 0);
	if (s->fallbacks == 0)
		pp_test_skip("%zu kB hugepages given back by others meanwhile",
			     page_size >> 10);
	CHECK_EQ(s->fallbacks, 1);
	CHECK_EQ(s->size, size);
	CHECK_EQ(s->wasted, 0);
	return a;
}

/*
 * Exhaustion for real, fallback allowed: an area takes every available
 * 2 MiB page and maps its last 2 MiB with base pages; while it holds them
 * a new area is all base pages (one fallback) or, with NO_FALLBACK, an
 * error that says 0 are available; once it is freed, 2 MiB pages serve
 * again. Then one size up where the CPU has it: every 1 GiB page taken,
 * the last GiB on 2 MiB pages. This empties the machine's free pools for
 * a moment: meson runs it alone (is_parallel: false).
 */
static void test_exhaust_all(void)
{
	int fds = pp_test_count_fds();
	long hp = pp_test_status_kb("HugetlbPages");
	struct pp_vm_area_stats s, t;
	struct pp_vm_area *all, *a;
	long n, n1g;

	need_hugepages(PP_PAGE_SIZE_2M, 1);
	all = take_all(PP_PAGE_SIZE_2M, PP_VMALLOC_F_NO_1G, &n, &s);
	CHECK(s.pages_2m <= (unsigned long)n);
	CHECK_EQ(s.bytes_4k, s.size - s.bytes_2m);
	check_layout(all, s.size, 0, s.pages_2m);
	CHECK_EQ(pp_test_status_kb("HugetlbPages") - hp, (long)s.pages_2m * 2048);
	if (available(PP_PAGE_SIZE_2M) != 0)
		pp_test_skip("2 MiB hugepages given back by others meanwhile");

	a = vmalloc_flags(4 * MiB, PP_VMALLOC_F_NO_1G);
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &t) == 0);
	check_layout(a, 4 * MiB, 0, 0);
	CHECK_EQ(t.fallbacks, 1);
	check_rw(a, 4 * MiB);
	CHECK_EQ(pp_vfree(a), 0);
	pp_test_log_reset();
	a = vmalloc_flags(4 * MiB, PP_VMALLOC_F_NO_1G | PP_VMALLOC_F_NO_FALLBACK);
	CHECK(a == NULL && errno == ENOMEM);
	CHECK(pp_test_log_has("need 2 free 2048 kB hugepages but 0 are available"));

	CHECK_EQ(pp_vfree(all), 0);
	a = vmalloc_flags(4 * MiB, PP_VMALLOC_F_NO_1G | PP_VMALLOC_F_NO_FALLBACK);
	if (!a && errno == ENOMEM)
		pp_test_skip("2 MiB hugepages taken by others meanwhile");
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &t) == 0);
	check_layout(a, 4 * MiB, 0, 2);
	CHECK_EQ(t.fallbacks, 0);
	CHECK_EQ(pp_vfree(a), 0);
	CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp);

	/* 1 GiB pages short, 2 MiB pages cover the last GiB. */
	n1g = available(PP_PAGE_SIZE_1G);
	if (n1g < 0) {
		pp_test_skip_part("exhaust_all 1 GiB", PP_TEST_NO_HUGEPAGE_SIZE,
				  PP_PAGE_SIZE_1G >> 10, PP_PAGE_SIZE_1G >> 10);
	} else if (n1g == 0 || n1g > 2) {
		pp_test_skip_part("exhaust_all 1 GiB",
				  "%ld 1 GiB hugepages available: wants 1 or 2 (an area of %ld GiB)",
				  n1g, n1g + 1);
	} else if (available(PP_PAGE_SIZE_2M) < 512) {
		pp_test_skip_part("exhaust_all 1 GiB",
				  "need 512 available 2048 kB hugepages for the last GiB, %ld available",
				  available(PP_PAGE_SIZE_2M));
	} else {
		all = take_all(PP_PAGE_SIZE_1G, 0, &n, &s);
		CHECK(s.pages_1g <= (unsigned long)n);
		CHECK_EQ(s.pages_4k, 0);
		check_layout(all, s.size, s.pages_1g, s.pages_2m);
		CHECK_EQ(pp_test_status_kb("HugetlbPages") - hp,
			 (long)(s.bytes_1g + s.bytes_2m) / 1024);
		CHECK_EQ(pp_vfree(all), 0);
		CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp);
	}
	CHECK_EQ(pp_test_count_fds(), fds);
}

/* Base pages from the allocator's bulk array call, mapped into the area. */
static void test_allocator(void)
{
	struct pp_arena *arena = pp_test_arena(8 * MiB, PP_PAGE_SIZE_4K);
	struct pp_allocator *alloc = pp_test_allocator(arena);
	struct pp_vmalloc_opts o = {
		.sz = sizeof(o),
		.flags = PP_VMALLOC_F_NO_1G,
		.numa_node = PP_NUMA_NODE_ANY,
		.alloc = alloc,
		.name = "test_vmalloc",
	};
	size_t size = 3 * MiB, tail;
	unsigned long allocated = 1, marked = 0;
	struct pp_vm_area_stats s;
	struct pp_vm_area *a;
	unsigned char *base, *ab;

	a = pp_vmalloc(size, &o);
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	CHECK(s.base_from_allocator);
	tail = s.bytes_4k;
	CHECK_EQ(tail, size - s.pages_2m * 2 * MiB);
	CHECK(pp_allocator_check(alloc, &allocated) == 0);
	CHECK_EQ(allocated, s.pages_4k);
	check_layout(a, size, 0, s.pages_2m);
	check_rw(a, size);

	/* The tail is the arena's memory: marks written here show there. */
	base = (unsigned char *)pp_vm_area_addr(a) + (size - tail);
	for (size_t off = 0; off < tail; off += 4096)
		memcpy(base + off, "VMALLOC-TAIL-MARK", 17);
	ab = pp_arena_base(arena);
	for (size_t off = 0; off < pp_arena_size(arena); off += 4096)
		marked += memcmp(ab + off, "VMALLOC-TAIL-MARK", 17) == 0;
	CHECK_EQ(marked, tail / 4096);

	CHECK_EQ(pp_vfree(a), 0);
	CHECK(pp_allocator_check(alloc, &allocated) == 0);
	CHECK_EQ(allocated, 0);

	/* More base pages than the allocator has: a clean ENOMEM. */
	o.flags = PP_VMALLOC_F_NO_HUGE;
	pp_test_log_reset();
	a = pp_vmalloc(16 * MiB, &o);
	CHECK(a == NULL && errno == ENOMEM);
	CHECK(pp_test_log_has("allocator"));
	CHECK(pp_allocator_check(alloc, &allocated) == 0);
	CHECK_EQ(allocated, 0);

	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

/* An allocator over 2 MiB pages cannot lend base pages: EINVAL. */
static void test_allocator_huge_arena(void)
{
	struct pp_arena *arena = pp_test_arena(2 * MiB, PP_PAGE_SIZE_2M);
	struct pp_allocator *alloc = pp_test_allocator(arena);
	struct pp_vmalloc_opts o = {
		.sz = sizeof(o),
		.flags = PP_VMALLOC_F_NO_HUGE,
		.numa_node = PP_NUMA_NODE_ANY,
		.alloc = alloc,
	};
	unsigned long allocated = 1;
	int fds = pp_test_count_fds();

	pp_test_log_reset();
	CHECK(pp_vmalloc(64 * KiB, &o) == NULL && errno == EINVAL);
	CHECK(pp_test_log_has("4 KiB pages"));
	CHECK(pp_allocator_check(alloc, &allocated) == 0);
	CHECK_EQ(allocated, 0);
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

/* Node-local and interleaved placement, as far as this machine has nodes. */
static void test_numa(void)
{
	struct pp_vmalloc_opts o = {
		.sz = sizeof(o),
		.flags = PP_VMALLOC_F_NO_1G,
		.numa_node = 0,
		.name = "test_vmalloc",
	};
	struct pp_vm_area_stats s;
	struct pp_vm_area *a;
	char line[1024];
	int nodes = pp_test_node_count();

	if (!PP_HAVE_NUMA)
		pp_test_skip("pagepool was built without libnuma");
	a = pp_vmalloc(3 * MiB, &o);
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	CHECK_EQ(s.node, 0);
	CHECK_EQ(s.nodes_seen, 1);
	/* The tail carries the policy: the kernel shows it in numa_maps. */
	REQUIRE(numa_maps_line((char *)pp_vm_area_addr(a) + s.bytes_2m, line,
			       sizeof(line)));
	CHECK(strstr(line, "bind:0") != NULL);
	pp_vfree(a);

	o.flags |= PP_VMALLOC_F_INTERLEAVE;
	o.numa_node = PP_NUMA_NODE_ANY;
	a = pp_vmalloc(3 * MiB, &o);
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	CHECK(s.interleaved);
	REQUIRE(numa_maps_line((char *)pp_vm_area_addr(a) + s.bytes_2m, line,
			       sizeof(line)));
	CHECK(strstr(line, "interleave:") != NULL);
	check_rw(a, 3 * MiB);
	/* Every page is on a node the mask names (here: all online). */
	CHECK(s.nodes_seen != 0);
	CHECK_EQ(__builtin_popcountll(s.nodes_seen) <= nodes, 1);
	pp_vfree(a);
}

/* Interleave over two nodes really spreads: needs a machine that has them. */
static void test_numa_spread(void)
{
	struct pp_vmalloc_opts o = {
		.sz = sizeof(o),
		.flags = PP_VMALLOC_F_NO_HUGE | PP_VMALLOC_F_INTERLEAVE,
		.interleave_nodes = 3,
		.name = "test_vmalloc",
	};
	struct pp_vm_area_stats s;
	struct pp_vm_area *a;

	if (!PP_HAVE_NUMA)
		pp_test_skip("pagepool was built without libnuma");
	if (pp_test_node_count() < 2 ||
	    access("/sys/devices/system/node/node1", F_OK) != 0)
		pp_test_skip("one NUMA node: spreading an interleave over nodes 0 and 1 needs a two-node machine (the one-node interleave is checked by vmalloc_numa)");
	a = pp_vmalloc(2 * MiB, &o);
	REQUIRE(a != NULL);
	REQUIRE(pp_vm_area_stats(a, &s) == 0);
	/* 512 base pages, every one looked up: both nodes appear. */
	CHECK_EQ(s.nodes_seen & 3, 3);
	pp_vfree(a);
}

static void test_bad_args(void)
{
	struct pp_vmalloc_opts o = {
		.sz = sizeof(o),
		.numa_node = PP_NUMA_NODE_ANY,
	};
	int fds = pp_test_count_fds();

	CHECK(pp_vmalloc(0, NULL) == NULL && errno == EINVAL);
	CHECK(pp_vmalloc(SIZE_MAX, NULL) == NULL && errno == EINVAL);
	o.flags = 1u << 30;
	CHECK(pp_vmalloc(4096, &o) == NULL && errno == EINVAL);
	o.flags = 0;
	o.sz = sizeof(o) - 1;
	CHECK(pp_vmalloc(4096, &o) == NULL && errno == EINVAL);
	o.sz = sizeof(o);
	o.numa_node = 1000;
	CHECK(pp_vmalloc(4096, &o) == NULL && errno == EINVAL);
	o.numa_node = -5;
	CHECK(pp_vmalloc(4096, &o) == NULL && errno == EINVAL);
	o.numa_node = PP_NUMA_NODE_ANY;
	o.flags = PP_VMALLOC_F_INTERLEAVE;
	o.interleave_nodes = 1ULL << 63;
	CHECK(pp_vmalloc(4096, &o) == NULL && errno == EINVAL);
	CHECK_EQ(pp_vfree(NULL), 0);
	CHECK_EQ(pp_vm_area_stats(NULL, NULL), -EINVAL);
	CHECK_EQ(pp_test_count_fds(), fds);
}

/* Create and free areas of every kind; nothing stays behind. */
static void test_leaks(void)
{
	static const unsigned int flags[] = {
		PP_VMALLOC_F_NO_1G, PP_VMALLOC_F_NO_HUGE,
		PP_VMALLOC_F_NO_1G | PP_VMALLOC_F_ROUND_UP,
		PP_VMALLOC_F_NO_1G | PP_VMALLOC_F_INTERLEAVE,
	};
	int fds = pp_test_count_fds();
	long hp = pp_test_status_kb("HugetlbPages");

	for (int round = 0; round < 5; round++) {
		for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
			struct pp_vm_area *a =
				vmalloc_flags(5 * MiB + 4096, flags[i]);
			struct pp_vm_area_stats s;
			uintptr_t lo;
			size_t len;

			REQUIRE(a != NULL);
			REQUIRE(pp_vm_area_stats(a, &s) == 0);
			lo = (uintptr_t)pp_vm_area_addr(a);
			len = s.mapped;
			memset(pp_vm_area_addr(a), 0xa5, 5 * MiB + 4096);
			CHECK(pp_test_count_maps(NULL, lo, lo + len) > 0);
			pp_vfree(a);
			CHECK_EQ(pp_test_count_maps(NULL, lo, lo + len), 0);
		}
	}
	CHECK_EQ(pp_test_count_fds(), fds);
	CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp);
}

/*
 * The allocator keeps the descriptor array of an arena of 128 MiB or more
 * in a huge vmalloc area: 2 MiB of descriptors, one 2 MiB page.
 */
static void test_descriptors(void)
{
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_page *pages[64] = { NULL };
	unsigned long allocated = 1;
	long hp, hp_arena;

	/* Slack, so that others taking a few pages meanwhile changes nothing. */
	need_hugepages(PP_PAGE_SIZE_2M, 8);
	hp = pp_test_status_kb("HugetlbPages");
	arena = pp_test_arena(128 * MiB, PP_PAGE_SIZE_4K);
	hp_arena = pp_test_status_kb("HugetlbPages");
	CHECK_EQ(hp_arena, hp); /* 4 KiB arena: shmem, no hugepages */
	alloc = pp_test_allocator(arena);
	CHECK_EQ(pp_test_status_kb("HugetlbPages") - hp_arena, 2048);
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, 64, pages), 64);
	for (int i = 0; i < 64; i++)
		CHECK(pp_virt_to_page(alloc, pp_page_address(pages[i])) ==
		      pages[i]);
	pp_free_pages_bulk(alloc, pages, 64);
	pp_allocator_drain_thread(alloc);
	CHECK(pp_allocator_check(alloc, &allocated) == 0);
	CHECK_EQ(allocated, 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_test_status_kb("HugetlbPages"), hp_arena);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "sizes", test_sizes },
	{ "mixed", test_mixed },
	{ "gig", test_gig },
	{ "no_1g", test_no_1g },
	{ "no_huge", test_no_huge },
	{ "env", test_env },
	{ "support", test_support },
	{ "exhaust", test_exhaust },
	{ "exhaust_all", test_exhaust_all },
	{ "allocator", test_allocator },
	{ "allocator_huge_arena", test_allocator_huge_arena },
	{ "numa", test_numa },
	{ "numa_spread", test_numa_spread },
	{ "bad_args", test_bad_args },
	{ "leaks", test_leaks },
	{ "descriptors", test_descriptors },
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
