/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_test.h - the few things every test needs: checks that report where
 * they failed and keep going, a skip exit (77, which meson reports as
 * SKIP) and a SKIP line for a part of a case, a log capture to assert on
 * the library's messages, and hugepage and arena helpers that skip with
 * the reason when the machine lacks hugepages (lacks the size at all, or
 * has too few free).
 */
#ifndef PP_TEST_H
#define PP_TEST_H

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pagepool/pagepool.h>

#define PP_TEST_SKIP 77

static int pp_test_failures;

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                          \
			pp_test_failures++;                                \
		}                                                          \
	} while (0)

#define CHECK_EQ(a, b)                                                     \
	do {                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);        \
		if (a_ != b_) {                                            \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", \
				__FILE__, __LINE__, #a, #b, a_, b_);       \
			pp_test_failures++;                                \
		}                                                          \
	} while (0)

/* Stop this test now (a check that later ones depend on failed). */
#define REQUIRE(cond)                                                      \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: REQUIRE failed: %s\n",     \
				__FILE__, __LINE__, #cond);                \
			exit(1);                                           \
		}                                                          \
	} while (0)

__attribute__((noreturn, format(printf, 1, 2)))
static inline void pp_test_skip(const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "SKIP: ");
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fprintf(stdout, "\n");
	exit(PP_TEST_SKIP);
}

/*
 * A case that runs without one of its parts says so on a line of its own,
 * "     SKIP <part>: <reason>", and still passes on what did run. The guest
 * that has what the part needs fails a case whose output has such a line
 * (tests/gig for every case it reruns, tests/numa for test_bulk).
 */
__attribute__((format(printf, 2, 3)))
static inline void pp_test_skip_part(const char *part, const char *fmt, ...)
{
	va_list ap;

	printf("     SKIP %s: ", part);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Run one test function by name, printing a line per test. */
#define RUN_TEST(fn)                                                       \
	do {                                                               \
		int before_ = pp_test_failures;                            \
		fn();                                                      \
		printf("%s %s\n", pp_test_failures == before_ ? "ok  " : "FAIL", #fn); \
	} while (0)

static inline int pp_test_result(void)
{
	if (pp_test_failures)
		fprintf(stderr, "%d check(s) failed\n", pp_test_failures);
	return pp_test_failures ? 1 : 0;
}

/* A named test case, for pp_test_run_cases(). */
struct pp_test_case {
	const char *name;
	void (*fn)(void);
};

/*
 * Run the case named @only ("all": every case), printing "ok" or "FAIL"
 * per case with @label after its name. Returns the program's exit
 * status: 2 for an unknown case, else pp_test_result().
 */
static inline int pp_test_run_cases(const struct pp_test_case *cases,
				    size_t n, const char *only,
				    const char *label)
{
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		int before;

		if (strcmp(only, "all") && strcmp(only, cases[i].name))
			continue;
		before = pp_test_failures;
		found = 1;
		cases[i].fn();
		printf("%s %s %s\n", pp_test_failures == before ? "ok  " : "FAIL",
		       cases[i].name, label);
	}
	if (!found) {
		fprintf(stderr, "unknown case %s\n", only);
		return 2;
	}
	return pp_test_result();
}

/* ---- log capture: the last message at WARN or worse, per process ---- */

static pthread_mutex_t pp_test_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char pp_test_last_log[512];
static int pp_test_log_count;

static void pp_test_log_fn(enum pp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level > PP_LOG_WARN)
		return;
	pthread_mutex_lock(&pp_test_log_lock);
	snprintf(pp_test_last_log, sizeof(pp_test_last_log), "%s", msg);
	pp_test_log_count++;
	pthread_mutex_unlock(&pp_test_log_lock);
	fprintf(stderr, "[log] %s\n", msg);
}

static inline void pp_test_capture_log(void)
{
	pp_log_set_handler(pp_test_log_fn, NULL, PP_LOG_WARN);
}

static inline void pp_test_log_reset(void)
{
	pthread_mutex_lock(&pp_test_log_lock);
	pp_test_last_log[0] = '\0';
	pp_test_log_count = 0;
	pthread_mutex_unlock(&pp_test_log_lock);
}

/* True when the last captured message contains @needle. */
static inline int pp_test_log_has(const char *needle)
{
	int found;

	pthread_mutex_lock(&pp_test_log_lock);
	found = strstr(pp_test_last_log, needle) != NULL;
	pthread_mutex_unlock(&pp_test_log_lock);
	return found;
}

/* ---- hugepage counts ---- */

/*
 * Why a hugepage size cannot be had at all, for skip messages; its two
 * arguments are the size in kB, twice. A CPU without 1 GiB pages (no
 * pdpe1gb) or a kernel without hugetlb has no sysfs directory for the
 * size, and the counts are then -ENOENT, not a number of pages.
 */
#define PP_TEST_NO_HUGEPAGE_SIZE \
	"this CPU/kernel has no %zu kB hugepages (no /sys/kernel/mm/hugepages/hugepages-%zukB)"

/* Whether the kernel offers hugepages of @page_size at all. */
static inline int pp_test_hugepage_size_supported(size_t page_size)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%zukB",
		 page_size >> 10);
	return access(path, F_OK) == 0;
}

/*
 * Skip unless @have, a count of @page_size hugepages (@counted says which:
 * "free" from pp_hugepages_free(), "available" from
 * pp_vmalloc_pages_available()), is at least @need. Those calls return
 * -errno when there is no count to give; that is said as such, never
 * printed as a number of pages.
 */
static inline void pp_test_need_hugepages(size_t page_size, long need,
					  long have, const char *counted)
{
	if (have < 0 && !pp_test_hugepage_size_supported(page_size))
		pp_test_skip(PP_TEST_NO_HUGEPAGE_SIZE, page_size >> 10,
			     page_size >> 10);
	if (have < 0)
		pp_test_skip("need %ld %s %zu kB hugepages, and their count cannot be read: %s",
			     need, counted, page_size >> 10, strerror((int)-have));
	if (have < need)
		pp_test_skip("need %ld %s %zu kB hugepages, %ld %s (scripts/setup.sh reserves them)",
			     need, counted, page_size >> 10, have, counted);
}

/* ---- arenas ---- */

/* NUMA nodes the kernel shows (node directories in sysfs), at least 1. */
static inline int pp_test_node_count(void)
{
	char path[64];
	int n = 0;

	for (int i = 0; i < 1024; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d",
			 i);
		if (access(path, F_OK) == 0)
			n++;
	}
	return n ? n : 1;
}

/*
 * An arena of @size bytes with @page_size pages; skips the test (exit 77)
 * with the reason when the machine cannot give that page size.
 */
static inline struct pp_arena *pp_test_arena(size_t size, size_t page_size)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o),
		.size = size,
		.page_size = page_size,
		.numa_node = PP_NUMA_NODE_ANY,
		.name = "test",
	};
	struct pp_arena *a = pp_arena_create(&o);

	if (!a && errno == ENOMEM && page_size != PP_PAGE_SIZE_4K &&
	    !pp_test_hugepage_size_supported(page_size))
		pp_test_skip(PP_TEST_NO_HUGEPAGE_SIZE, page_size >> 10,
			     page_size >> 10);
	if (!a && errno == ENOMEM && page_size != PP_PAGE_SIZE_4K)
		pp_test_skip("no %zu KiB hugepages free for a %zu KiB arena (run scripts/setup.sh)",
			     page_size >> 10, size >> 10);
	if (!a) {
		fprintf(stderr, "pp_arena_create(%zu, %zu): %s\n", size,
			page_size, strerror(errno));
		exit(1);
	}
	return a;
}

/* An allocator over one arena with default tuning. */
static inline struct pp_allocator *pp_test_allocator(struct pp_arena *arena)
{
	struct pp_allocator_opts o = {
		.sz = sizeof(o),
		.arenas = &arena,
		.nr_arenas = 1,
	};
	struct pp_allocator *alloc = pp_allocator_create(&o);

	REQUIRE(alloc != NULL);
	return alloc;
}

#endif /* PP_TEST_H */
