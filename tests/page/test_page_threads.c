/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_page_threads.c - the allocator across threads: pages freed by
 * another thread than the one that allocated them, a thread's cache
 * returned when it exits, a dry zone draining another thread's cache
 * before a call fails, and a short mixed run of several threads. The
 * statistics: they never wait for a thread inside a call (one parked in
 * its cache), and read beside running threads they stay within bounds,
 * only grow, and are exact once the threads are done. Run with "4k" or
 * "2m" like test_bulk.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

#include "page_test.h"
/* To park a thread inside its cache, as if preempted in a call. */
#include "../../lib/page/page_alloc_priv.h"

#define NR_PASS 512

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stage;
} sync_state = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };

static void stage_set(int stage)
{
	pthread_mutex_lock(&sync_state.lock);
	sync_state.stage = stage;
	pthread_cond_broadcast(&sync_state.cond);
	pthread_mutex_unlock(&sync_state.lock);
}

static void stage_wait(int stage)
{
	pthread_mutex_lock(&sync_state.lock);
	while (sync_state.stage < stage)
		pthread_cond_wait(&sync_state.cond, &sync_state.lock);
	pthread_mutex_unlock(&sync_state.lock);
}

struct pass {
	struct pp_allocator *alloc;
	struct pp_page *pages[NR_PASS];
	unsigned long got;
};

static void *alloc_thread(void *arg)
{
	struct pass *ps = arg;

	while (ps->got < NR_PASS) {
		unsigned long n = pp_alloc_pages_bulk_array(ps->alloc, 64,
							    ps->pages + ps->got);
		if (!n)
			break;
		ps->got += n;
	}
	for (unsigned long i = 0; i < ps->got; i++)
		*(unsigned long *)pp_page_address(ps->pages[i]) = i;
	return NULL;
}

static void *free_thread(void *arg)
{
	struct pass *ps = arg;

	for (unsigned long i = 0; i < ps->got; i++)
		if (*(unsigned long *)pp_page_address(ps->pages[i]) != i)
			return (void *)1;
	/* Half one by one, half in one bulk call. */
	for (unsigned long i = 0; i < ps->got / 2; i++)
		pp_free_page(ps->alloc, ps->pages[i]);
	pp_free_pages_bulk(ps->alloc, ps->pages + ps->got / 2,
			   ps->got - ps->got / 2);
	return NULL;
}

/* Pages allocated in one thread and freed in another. */
static void test_free_from_other_thread(void)
{
	struct pass *ps = calloc(1, sizeof(*ps));
	pthread_t a, b;
	void *ret;

	REQUIRE(ps);
	ps->alloc = test_alloc(NULL);
	REQUIRE(pthread_create(&a, NULL, alloc_thread, ps) == 0);
	pthread_join(a, NULL);
	CHECK_EQ(ps->got, NR_PASS);
	CHECK(test_distinct(ps->pages, NR_PASS));
	CHECK_ALLOCATED(ps->alloc, NR_PASS);
	REQUIRE(pthread_create(&b, NULL, free_thread, ps) == 0);
	pthread_join(b, &ret);
	CHECK(ret == NULL);
	CHECK_EQ(STAT(ps->alloc, pages_freed), NR_PASS);
	CHECK_ALLOCATED(ps->alloc, 0);
	test_done(ps->alloc);
	free(ps);
}

static void *cache_then_wait(void *arg)
{
	struct pp_allocator *alloc = arg;
	struct pp_page *pages[100] = { 0 };

	pp_alloc_pages_bulk_array(alloc, 100, pages);
	pp_free_pages_bulk(alloc, pages, 100);
	stage_set(1);
	stage_wait(2);
	return NULL;
}

/* A thread's cache goes back to the zone when the thread exits. */
static void test_cache_returned_at_exit(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	struct pp_zone_stats s;
	pthread_t t;

	stage_set(0);
	REQUIRE(pthread_create(&t, NULL, cache_then_wait, alloc) == 0);
	stage_wait(1);
	CHECK_EQ(pp_allocator_zone_stats(alloc, 0, &s), 0);
	CHECK(s.thread_cache_pages >= 100);
	CHECK_EQ(s.free_pages + s.thread_cache_pages, s.managed_pages);
	CHECK_ALLOCATED(alloc, 0);
	stage_set(2);
	pthread_join(t, NULL);
	CHECK_EQ(pp_allocator_zone_stats(alloc, 0, &s), 0);
	CHECK_EQ(s.thread_cache_pages, 0);
	CHECK_EQ(s.free_pages, s.managed_pages);
	/* Its counters outlive it. */
	CHECK_EQ(s.pages_allocated, 100);
	CHECK_EQ(s.pages_freed, 100);
	test_done(alloc);
}

static void *hoard_then_wait(void *arg)
{
	struct pp_allocator *alloc = arg;
	unsigned long managed = test_managed(), got = 0, n;
	struct pp_page **all = calloc(managed, sizeof(*all));

	if (!all)
		return (void *)1;
	while (got < managed) {
		int want = managed - got < 64 ? (int)(managed - got) : 64;

		n = pp_alloc_pages_bulk_array(alloc, want, all + got);
		if (!n)
			break;
		got += n;
	}
	/* Every page ends in this thread's cache; the zone is empty. */
	pp_free_pages_bulk(alloc, all, got);
	free(all);
	stage_set(1);
	stage_wait(2);
	return got == managed ? NULL : (void *)2;
}

/*
 * A dry zone drains another thread's cache before a call fails, while
 * that cache's owner is parked in a system call (a condition variable's
 * futex wait): the drain never waits for an owner outside a call.
 */
static void test_dry_zone_drains_other_cache(void)
{
	unsigned long managed = test_managed();
	struct pp_allocator_opts o = {
		.sz = sizeof(o),
		.thread_cache_size = (unsigned int)managed,	/* one cache holds all */
	};
	struct pp_allocator *alloc = test_alloc(&o);
	struct pp_page *pages[64] = { 0 }, *p;
	struct pp_zone_stats s;
	pthread_t t;
	void *ret;

	stage_set(0);
	REQUIRE(pthread_create(&t, NULL, hoard_then_wait, alloc) == 0);
	stage_wait(1);
	CHECK_EQ(pp_allocator_zone_stats(alloc, 0, &s), 0);
	CHECK_EQ(s.free_pages, 0);
	CHECK_EQ(s.thread_cache_pages, managed);

	/* Bulk: below the watermark, the single path drains and gets one. */
	CHECK_EQ(pp_alloc_pages_bulk_array(alloc, 64, pages), 1);
	CHECK(test_page_ok(alloc, pages[0]));
	CHECK_EQ(STAT(alloc, remote_drains), 1);
	CHECK_EQ(pp_allocator_zone_stats(alloc, 0, &s), 0);
	CHECK_EQ(s.free_pages + s.thread_cache_pages, managed - 1);
	/* Now the zone has pages again: a single call needs no drain. */
	p = pp_alloc_page(alloc);
	CHECK(test_page_ok(alloc, p));
	CHECK_EQ(STAT(alloc, remote_drains), 1);
	CHECK_ALLOCATED(alloc, 2);
	stage_set(2);
	pthread_join(t, &ret);
	CHECK(ret == NULL);
	pp_free_page(alloc, p);
	pp_free_page(alloc, pages[0]);
	test_done(alloc);
}

/* ---- several threads at once, pages crossing between them ---- */

#define MIX_THREADS 4
#define MIX_ROUNDS 2000
#define MIX_SLOTS 64

static struct {
	pthread_mutex_t lock;
	struct pp_page *slot[MIX_SLOTS]; /* pages left for any thread */
} mix = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *mix_thread(void *arg)
{
	struct pp_allocator *alloc = arg;
	struct pp_page *pages[32];
	struct pp_page_list list;
	unsigned int seed = (unsigned int)(uintptr_t)&pages;

	for (int r = 0; r < MIX_ROUNDS; r++) {
		int n = 1 + (int)(rand_r(&seed) % 32);
		unsigned long got;

		memset(pages, 0, sizeof(pages));
		if (r & 1) {
			got = pp_alloc_pages_bulk_array(alloc, n, pages);
		} else {
			pp_page_list_init(&list);
			got = pp_alloc_pages_bulk_list(alloc, n, &list);
			for (unsigned long i = 0; i < got; i++)
				pages[i] = pp_page_list_pop(&list);
		}
		/* Swap the first page with one another thread left. */
		pthread_mutex_lock(&mix.lock);
		if (got) {
			int k = (int)(rand_r(&seed) % MIX_SLOTS);
			struct pp_page *t = mix.slot[k];

			mix.slot[k] = pages[0];
			pages[0] = t;
		}
		pthread_mutex_unlock(&mix.lock);
		pp_free_pages_bulk(alloc, pages, got);
	}
	return NULL;
}

static void test_mixed_threads(void)
{
	struct pp_allocator_opts o = { .sz = sizeof(o), .thread_cache_size = 64,
				       .thread_cache_batch = 16 };
	struct pp_allocator *alloc = test_alloc(&o);
	pthread_t t[MIX_THREADS];

	for (int i = 0; i < MIX_THREADS; i++)
		REQUIRE(pthread_create(&t[i], NULL, mix_thread, alloc) == 0);
	for (int i = 0; i < MIX_THREADS; i++)
		pthread_join(t[i], NULL);
	pp_free_pages_bulk(alloc, mix.slot, MIX_SLOTS);
	memset(mix.slot, 0, sizeof(mix.slot));
	CHECK_EQ(STAT(alloc, pages_allocated), STAT(alloc, pages_freed));
	test_done(alloc);
}

/* ---- statistics beside threads ---- */

static void *park_in_cache(void *arg)
{
	struct pp_allocator *alloc = arg;
	struct pp_tcache *tc;

	/* The cache exists and holds pages. */
	pp_free_page(alloc, pp_alloc_page(alloc));
	tc = pp_tcache_memo_.tc;
	if (!tc)
		return (void *)1;
	/* Inside a call, as the owner enters one, and stays there. */
	tcache_lock(tc);
	stage_set(1);
	stage_wait(2);
	tcache_unlock(tc);
	return NULL;
}

struct reader {
	struct pp_allocator *alloc;
	struct pp_zone_stats s;
	atomic_int done;
	atomic_ulong reads;
};

static void *read_stats(void *arg)
{
	struct reader *r = arg;
	char json[1024];

	pp_allocator_stats_json(r->alloc, json, sizeof(json));
	pp_allocator_zone_stats(r->alloc, 0, &r->s);
	atomic_store(&r->done, 1);
	return NULL;
}

/*
 * Statistics are for any thread at any time: they never wait for an
 * owner to leave its cache (nor stop it; the stop-the-world reader
 * cut another thread's fast path to 0.01x). Here the owner never
 * leaves until the reader is done: a reader that waits would hang.
 */
static void test_stats_never_wait(void)
{
	struct pp_allocator *alloc = test_alloc(NULL);
	struct reader r = { .alloc = alloc };
	pthread_t owner, reader;
	void *ret;

	stage_set(0);
	REQUIRE(pthread_create(&owner, NULL, park_in_cache, alloc) == 0);
	stage_wait(1);
	REQUIRE(pthread_create(&reader, NULL, read_stats, &r) == 0);
	for (int i = 0; i < 2000 && !atomic_load(&r.done); i++)
		usleep(1000);
	if (!atomic_load(&r.done))
		fprintf(stderr, "the statistics waited 2 s for a thread inside a call\n");
	CHECK(atomic_load(&r.done));
	if (atomic_load(&r.done)) {
		/* What the parked cache holds is counted, not lost. */
		CHECK(r.s.thread_cache_pages > 0);
		CHECK_EQ(r.s.free_pages + r.s.thread_cache_pages,
			 r.s.managed_pages);
		CHECK_EQ(r.s.pages_allocated, 1);
	}
	stage_set(2);
	pthread_join(owner, &ret);
	CHECK(ret == NULL);
	pthread_join(reader, NULL);
	test_done(alloc);
}

static atomic_int readers_stop;

/* Reads in a loop beside running threads: bounded, never shrinking. */
static void *read_loop(void *arg)
{
	struct reader *r = arg;
	uint64_t last_alloc = 0, last_freed = 0;
	unsigned long bad = 0;
	char json[1024];

	while (!atomic_load(&readers_stop)) {
		struct pp_zone_stats s;

		if (pp_allocator_zone_stats(r->alloc, 0, &s) ||
		    s.free_pages + s.thread_cache_pages > s.managed_pages ||
		    s.pages_allocated < last_alloc ||
		    s.pages_freed < last_freed) {
			if (!bad++)
				fprintf(stderr, "statistics out of bounds or going back: free %lu + cached %lu of %lu; allocated %llu after %llu, freed %llu after %llu\n",
					s.free_pages, s.thread_cache_pages,
					s.managed_pages,
					(unsigned long long)s.pages_allocated,
					(unsigned long long)last_alloc,
					(unsigned long long)s.pages_freed,
					(unsigned long long)last_freed);
		}
		last_alloc = s.pages_allocated;
		last_freed = s.pages_freed;
		pp_allocator_stats_json(r->alloc, json, sizeof(json));
		atomic_fetch_add(&r->reads, 1);
	}
	return (void *)(uintptr_t)(bad ? 1 : 0);
}

static void test_stats_beside_threads(void)
{
	struct pp_allocator_opts o = { .sz = sizeof(o), .thread_cache_size = 64,
				       .thread_cache_batch = 16 };
	struct pp_allocator *alloc = test_alloc(&o);
	struct reader r = { .alloc = alloc };
	pthread_t t[MIX_THREADS], rd;
	struct pp_zone_stats s;
	void *ret;

	atomic_store(&readers_stop, 0);
	REQUIRE(pthread_create(&rd, NULL, read_loop, &r) == 0);
	/* Reading before the threads start, so that it overlaps them even
	 * on a loaded machine. */
	while (!atomic_load(&r.reads))
		usleep(100);
	for (int i = 0; i < MIX_THREADS; i++)
		REQUIRE(pthread_create(&t[i], NULL, mix_thread, alloc) == 0);
	for (int i = 0; i < MIX_THREADS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&readers_stop, 1);
	pthread_join(rd, &ret);
	CHECK(ret == NULL);
	pp_free_pages_bulk(alloc, mix.slot, MIX_SLOTS);
	memset(mix.slot, 0, sizeof(mix.slot));
	/* Quiescent: exact. */
	CHECK_EQ(pp_allocator_zone_stats(alloc, 0, &s), 0);
	CHECK_EQ(s.pages_allocated, s.pages_freed);
	CHECK_EQ(s.free_pages + s.thread_cache_pages, s.managed_pages);
	CHECK_ALLOCATED(alloc, 0);
	test_done(alloc);
}

int main(int argc, char **argv)
{
	test_setup(argc, argv);
	RUN_TEST(test_free_from_other_thread);
	RUN_TEST(test_cache_returned_at_exit);
	RUN_TEST(test_dry_zone_drains_other_cache);
	RUN_TEST(test_mixed_threads);
	RUN_TEST(test_stats_never_wait);
	RUN_TEST(test_stats_beside_threads);
	test_teardown();
	return pp_test_result();
}
