/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pool_destroy.c - destroy racing the returners (CVE-2025-38129).
 *
 * Each round the owner creates a pool, hands pages to returner threads and
 * then destroys the pool while they return them, each in its own way: one
 * page at a time through the ring, in bulk, or by the release path (the
 * page leaves the pool and is freed through the allocator). The owner
 * recycles some pages itself before and after destroy. Whoever returns the
 * last page frees the pool; sometimes that is the destroyer.
 *
 * What must hold every round: destroy returns 0 or -EBUSY (and then warns
 * with the count), every page is back in the allocator (its own walker
 * says so), and the allocator reports no double free. A pool freed twice
 * or touched after its free is what ASan (the CI's sanitizer build) sees;
 * a pool never freed is what LeakSanitizer sees at exit.
 */
#include <sched.h>
#include <stdatomic.h>

#include "pp_test.h"

#define MiB (1UL << 20)
#define RETURNERS 3
#define MAX_PAGES 256

enum how { ONE_BY_ONE, BULK, RELEASE, MIXED, HOW_MAX };

struct shared {
	struct pp_allocator *alloc;
	struct pp_pool *pool;
	struct pp_page *pages[RETURNERS][MAX_PAGES];
	unsigned int n[RETURNERS];
	enum how how[RETURNERS];
	pthread_barrier_t start, done;
	atomic_bool go;
	atomic_uint finished; /* returners done this round */
	bool stop;
};

struct returner_arg {
	struct shared *sh;
	unsigned int id;
};

static atomic_int log_errors, log_deferred;

static void count_log(enum pp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (strstr(msg, "destroy deferred")) {
		atomic_fetch_add(&log_deferred, 1);
		return;
	}
	if (level == PP_LOG_ERR) {
		atomic_fetch_add(&log_errors, 1);
		fprintf(stderr, "[log] %s\n", msg);
	}
}

static void return_all(struct shared *sh, unsigned int id)
{
	struct pp_page **pages = sh->pages[id];
	unsigned int i, n = sh->n[id];

	switch (sh->how[id]) {
	case ONE_BY_ONE:
		for (i = 0; i < n; i++)
			pp_pool_put_page(sh->pool, pages[i], (unsigned int)-1,
					 false);
		break;
	case BULK:
		for (i = 0; i < n; i += 16)
			pp_pool_put_pages_bulk(sh->pool, pages + i,
					       n - i < 16 ? n - i : 16);
		break;
	case RELEASE:
		for (i = 0; i < n; i++) {
			pp_pool_release_page(sh->pool, pages[i]);
			pp_put_page(sh->alloc, pages[i]);
		}
		break;
	default:
		for (i = 0; i < n; i++) {
			if (i % 3 == 0) {
				pp_pool_put_page(sh->pool, pages[i],
						 (unsigned int)-1, false);
			} else if (i % 3 == 1) {
				/* Shared: released_refcnt, then our ref. */
				pp_page_ref_inc(pages[i]);
				pp_pool_put_page(sh->pool, pages[i],
						 (unsigned int)-1, false);
				pp_put_page(sh->alloc, pages[i]);
			} else {
				pp_pool_release_page(sh->pool, pages[i]);
				pp_put_page(sh->alloc, pages[i]);
			}
		}
		break;
	}
}

static void *returner(void *arg)
{
	struct returner_arg *a = arg;
	struct shared *sh = a->sh;

	for (;;) {
		pthread_barrier_wait(&sh->start);
		if (sh->stop)
			break;
		while (!atomic_load_explicit(&sh->go, memory_order_acquire))
			;
		return_all(sh, a->id);
		atomic_fetch_add(&sh->finished, 1);
		pthread_barrier_wait(&sh->done);
	}
	return NULL;
}

static unsigned long rounds(void)
{
	const char *s = getenv("PP_STRESS_SCALE");
	unsigned long div = s ? strtoul(s, NULL, 10) : 1;

	return div > 1 ? 3000 / div : 3000;
}

static void test_destroy_race(void)
{
	struct pp_arena *arena = pp_test_arena(16 * MiB, PP_PAGE_SIZE_4K);
	struct pp_dma_opts dopts = { .sz = sizeof(dopts), .mode = PP_IOVA_VA };
	struct pp_dma *dma = pp_dma_create(&dopts);
	struct returner_arg args[RETURNERS];
	pthread_t th[RETURNERS];
	struct shared *sh = calloc(1, sizeof(*sh));
	struct pp_page *mine[64];
	unsigned long r, nr = rounds(), busy = 0, freed_by_destroy = 0;
	unsigned long allocated;
	unsigned int t, i, nmine;
	int rc;

	REQUIRE(sh && dma);
	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	sh->alloc = pp_test_allocator(arena);
	pp_log_set_handler(count_log, NULL, PP_LOG_WARN);
	pthread_barrier_init(&sh->start, NULL, RETURNERS + 1);
	pthread_barrier_init(&sh->done, NULL, RETURNERS + 1);
	for (t = 0; t < RETURNERS; t++) {
		args[t].sh = sh;
		args[t].id = t;
		REQUIRE(pthread_create(&th[t], NULL, returner, &args[t]) == 0);
	}

	for (r = 0; r < nr; r++) {
		struct pp_pool_params p = {
			.sz = sizeof(p),
			.allocator = sh->alloc,
			.dma = dma,
			.flags = PP_POOL_F_DMA_MAP,
			.nid = PP_NUMA_NODE_ANY,
			.dma_dir = PP_DMA_FROM_DEVICE,
			.pool_size = (r & 1) ? 64 : 1024, /* ring_full too */
			.refill = (enum pp_pool_refill)(r % 3),
			.name = "race",
		};
		/* Destroy at varying moments against the returners, and
		 * every fourth round only after they are all done. */
		unsigned int spin = (unsigned int)(r * 7919 % 20000);
		bool after = r % 4 == 3;

		sh->pool = pp_pool_create(&p);
		REQUIRE(sh->pool != NULL);
		for (t = 0; t < RETURNERS; t++) {
			/* 0 pages sometimes: destroy may find nothing. */
			sh->n[t] = (unsigned int)((r * 31 + t * 17) % 97);
			sh->how[t] = (enum how)((r + t) % HOW_MAX);
			for (i = 0; i < sh->n[t]; i++) {
				sh->pages[t][i] = pp_pool_alloc_pages(sh->pool);
				REQUIRE(sh->pages[t][i] != NULL);
			}
		}
		nmine = (unsigned int)(r % 64);
		for (i = 0; i < nmine; i++)
			REQUIRE((mine[i] = pp_pool_alloc_pages(sh->pool)) != NULL);
		/* Some go back into the cache before destroy. */
		while (nmine > (unsigned int)(r % 5))
			pp_pool_recycle_direct(sh->pool, mine[--nmine]);

		atomic_store_explicit(&sh->go, false, memory_order_relaxed);
		atomic_store_explicit(&sh->finished, 0, memory_order_relaxed);
		pthread_barrier_wait(&sh->start);
		atomic_store_explicit(&sh->go, true, memory_order_release);
		if (after) {
			while (atomic_load(&sh->finished) < RETURNERS)
				sched_yield();
		} else {
			for (i = 0; i < spin; i++)
				__asm__ __volatile__("" ::: "memory");
		}
		rc = pp_pool_destroy(sh->pool);
		CHECK(rc == 0 || rc == -EBUSY);
		/* With the returners done, only the owner's pages remain. */
		if (after)
			CHECK_EQ(rc, nmine ? -EBUSY : 0);
		if (rc == -EBUSY)
			busy++;
		/* The owner's own pages after destroy: to the allocator. */
		while (nmine)
			pp_pool_recycle_direct(sh->pool, mine[--nmine]);
		if (rc == 0)
			freed_by_destroy++;
		pthread_barrier_wait(&sh->done);

		REQUIRE(pp_allocator_check(sh->alloc, &allocated) == 0);
		CHECK_EQ(allocated, 0);
		if (allocated)
			break;
	}
	sh->stop = true;
	pthread_barrier_wait(&sh->start);
	for (t = 0; t < RETURNERS; t++)
		pthread_join(th[t], NULL);

	printf("%lu rounds: destroy returned -EBUSY %lu times, 0 %lu times\n",
	       nr, busy, freed_by_destroy);
	CHECK_EQ(atomic_load(&log_deferred), busy);
	CHECK_EQ(atomic_load(&log_errors), 0);
	pp_log_set_handler(NULL, NULL, PP_LOG_WARN);
	pthread_barrier_destroy(&sh->start);
	pthread_barrier_destroy(&sh->done);
	CHECK_EQ(pp_allocator_destroy(sh->alloc), 0);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	free(sh);
}

int main(void)
{
	RUN_TEST(test_destroy_race);
	return pp_test_result();
}
