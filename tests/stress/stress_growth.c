/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stress_growth.c - an allocator over a growable arena, resized while
 * several threads allocate and free through it:
 *
 *   - each worker takes pages in bulk (array and list calls) and one at a
 *     time, holds a number of them that rises and falls in waves (so the
 *     zone runs short, then idle), and frees them in bulk;
 *   - each worker owns a page_pool, takes pages from it and hands them to
 *     the other workers over a queue, who return them through the pool's
 *     recycle ring (the cross-thread path that must give pages of a step
 *     being given back to the allocator instead of reusing them);
 *   - and the memory changes under them:
 *       manual  a resizer thread grows the zone step by step to its
 *               maximum and shrinks it again, over and over
 *               (PP_ALLOCATOR_F_MANUAL_RESIZE, pp_allocator_grow/shrink);
 *       auto    the allocator's own pp-grow thread, with watermarks that
 *               make it grow and shrink all the time (a step low, two
 *               steps high, a 1 ms shrink delay).
 *
 * Every page carries a tag while it is out, checked when it comes back, so
 * a page handed out twice shows; a page of a step given back would fault
 * (its range is PROT_NONE again). At the end everything is back, the
 * walker (pp_allocator_check) passes with nothing out, the zone did grow
 * and shrink, and in the TSan build (scripts/run-tests.sh) no race.
 *
 * usage: stress_growth manual|auto [OPS]   (default 2000000 per worker)
 * PP_STRESS_SCALE=N divides OPS (the sanitizer runs).
 */
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "pp_test.h"

#define WORKERS 3
#define BATCH_MAX 64
#define QUEUE_LEN 16             /* pool batches in flight */
#define STEP (2UL << 20)         /* 512 pages of 4 KiB a step (the least) */
#define MIN_SIZE (2 * STEP)
#define MAX_SIZE (24 * STEP)
#define HOLD_MAX 3072            /* a worker's wave top, in pages */
#define WAVE 4096                /* ops from one wave top to the next */
/* Not a repeated byte: debug_level 2 poisons free pages with 0x6b. */
#define TAG_LIVE 0x7e57ULL
#define TAG_IS_LIVE(w) ((w) >> 48 == TAG_LIVE)

struct batch {
	unsigned int n;
	struct pp_page *page[BATCH_MAX];
	uint64_t tag[BATCH_MAX];
};

static struct {
	pthread_mutex_t lock;
	struct batch q[QUEUE_LEN];
	unsigned int head, count;
} queue = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct pp_allocator *alloc;
static struct pp_arena *arena;
static unsigned long ops_per_worker;
static atomic_int workers_left;
static atomic_ulong errors, alloc_failed, handed;
static atomic_long resizer_grows, resizer_shrinks;

static void fail(const char *what, struct pp_page *page, uint64_t want,
		 uint64_t got)
{
	if (atomic_fetch_add(&errors, 1) < 10)
		fprintf(stderr, "%s: page %p: tag %#llx, expected %#llx\n",
			what, (void *)page, (unsigned long long)got,
			(unsigned long long)want);
}

/* The tag sits in the page's first and last words. */
static uint64_t *word(struct pp_page *page, int last)
{
	char *d = pp_page_address(page);

	return (uint64_t *)(last ? d + PP_PAGE_SIZE - sizeof(uint64_t) : d);
}

static void tag(struct pp_page *page, uint64_t t)
{
	for (int last = 0; last < 2; last++) {
		if (TAG_IS_LIVE(*word(page, last)))
			fail("handed out while in use", page, 0,
			     *word(page, last));
		*word(page, last) = t;
	}
}

static void untag(struct pp_page *page, uint64_t t)
{
	for (int last = 0; last < 2; last++) {
		if (*word(page, last) != t)
			fail("changed while out", page, t, *word(page, last));
		*word(page, last) = 0;
	}
}

static bool queue_push(const struct batch *b)
{
	bool ok;

	pthread_mutex_lock(&queue.lock);
	ok = queue.count < QUEUE_LEN;
	if (ok) {
		queue.q[(queue.head + queue.count) % QUEUE_LEN] = *b;
		queue.count++;
	}
	pthread_mutex_unlock(&queue.lock);
	return ok;
}

static bool queue_pop(struct batch *b)
{
	bool ok;

	pthread_mutex_lock(&queue.lock);
	ok = queue.count > 0;
	if (ok) {
		*b = queue.q[queue.head];
		queue.head = (queue.head + 1) % QUEUE_LEN;
		queue.count--;
	}
	pthread_mutex_unlock(&queue.lock);
	return ok;
}

/* Another worker's pool pages: checked, and home through its ring. */
static void return_batch(const struct batch *b)
{
	for (unsigned int i = 0; i < b->n; i++)
		untag(b->page[i], b->tag[i]);
	pp_pool_put_pages_bulk(pp_page_pool(b->page[0]),
			       (struct pp_page **)b->page, b->n);
}

struct worker {
	unsigned int id;
	uint64_t seq;
	struct pp_pool *pool;
	struct pp_page *held[HOLD_MAX];
	uint64_t held_tag[HOLD_MAX];
	unsigned int nr_held;
};

static uint64_t next_tag(struct worker *w)
{
	return TAG_LIVE << 48 | (uint64_t)w->id << 40 |
	       (++w->seq & ((1ULL << 40) - 1));
}

static void hold(struct worker *w, struct pp_page **pages, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		uint64_t t = next_tag(w);

		if (pp_page_ref_count(pages[i]) != 1)
			fail("refcount", pages[i], 1,
			     pp_page_ref_count(pages[i]));
		tag(pages[i], t);
		w->held[w->nr_held] = pages[i];
		w->held_tag[w->nr_held++] = t;
	}
}

/* Free the last @n held pages, in bulk or one by one. */
static void drop(struct worker *w, unsigned int n, unsigned int how)
{
	struct pp_page_list list;
	unsigned int from = w->nr_held - n;

	for (unsigned int i = from; i < w->nr_held; i++)
		untag(w->held[i], w->held_tag[i]);
	if (how == 0) {
		pp_free_pages_bulk(alloc, &w->held[from], n);
	} else if (how == 1) {
		pp_page_list_init(&list);
		for (unsigned int i = from; i < w->nr_held; i++)
			pp_page_list_add_tail(&list, w->held[i]);
		pp_free_page_list(alloc, &list);
	} else {
		for (unsigned int i = from; i < w->nr_held; i++)
			pp_free_page(alloc, w->held[i]);
	}
	w->nr_held = from;
}

/* Take up to @want pages from the allocator into the held set. */
static void take(struct worker *w, unsigned int want, unsigned int how)
{
	struct pp_page *pages[BATCH_MAX] = { NULL };
	struct pp_page_list list;
	unsigned long n;

	if (how == 0) {
		n = pp_alloc_pages_bulk_array(alloc, (int)want, pages);
	} else if (how == 1) {
		pp_page_list_init(&list);
		n = pp_alloc_pages_bulk_list(alloc, (int)want, &list);
		for (unsigned long i = 0; i < n; i++)
			pages[i] = pp_page_list_pop(&list);
	} else {
		pages[0] = pp_alloc_page(alloc);
		n = pages[0] != NULL;
	}
	if (n < want)
		atomic_fetch_add(&alloc_failed, 1);
	hold(w, pages, n);
}

/* Pool pages out to the others; theirs back home. */
static void pool_round(struct worker *w, unsigned int want)
{
	struct batch b = { .n = 0 };

	while (b.n < want) {
		struct pp_page *p = pp_pool_alloc_pages(w->pool);

		if (!p) {
			atomic_fetch_add(&alloc_failed, 1);
			break;
		}
		b.tag[b.n] = next_tag(w);
		tag(p, b.tag[b.n]);
		b.page[b.n++] = p;
	}
	if (b.n && !queue_push(&b)) {
		/* The queue is full: our own, straight back. */
		for (unsigned int i = 0; i < b.n; i++) {
			untag(b.page[i], b.tag[i]);
			pp_pool_recycle_direct(w->pool, b.page[i]);
		}
	} else if (b.n) {
		atomic_fetch_add(&handed, b.n);
	}
	if (queue_pop(&b))
		return_batch(&b);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pp_pool_params pp = {
		.sz = sizeof(pp), .allocator = alloc, .pool_size = 256,
		.nid = PP_NUMA_NODE_ANY, .name = "stress",
	};
	unsigned int seed = w->id * 7919 + 17;

	w->pool = pp_pool_create(&pp);
	REQUIRE(w->pool != NULL);
	for (unsigned long op = 0; op < ops_per_worker; op++) {
		unsigned int r = (unsigned int)rand_r(&seed);
		/* The wave: up to HOLD_MAX and down to 0, out of phase. */
		unsigned long ph = (op + w->id * WAVE / WORKERS) % WAVE;
		unsigned int target = (unsigned int)(ph < WAVE / 2 ?
			ph * 2 * HOLD_MAX / WAVE :
			(WAVE - ph) * 2 * HOLD_MAX / WAVE);
		unsigned int n = 1 + (r >> 8) % BATCH_MAX;

		if (r % 4 == 0) {
			pool_round(w, n / 2 + 1);
		} else if (w->nr_held + n <= target) {
			take(w, n, (r >> 4) % 3);
		} else if (w->nr_held > target) {
			unsigned int d = w->nr_held - target;

			drop(w, d < n ? d : n, (r >> 4) % 3);
		}
	}
	drop(w, w->nr_held, 0);
	/* What is still queued is anybody's to return: the last one out
	 * returns the lot before the pools go. */
	atomic_fetch_sub(&workers_left, 1);
	return NULL;
}

/* The manual variant's resizer: up to the maximum and down, again. */
static void *resizer_main(void *arg)
{
	(void)arg;
	while (atomic_load(&workers_left) > 0) {
		/* Up to the maximum (past it is refused, with a message). */
		while (pp_arena_committed(arena) < MAX_SIZE) {
			int rc = pp_allocator_grow(alloc, 0);

			if (rc) {
				fprintf(stderr, "pp_allocator_grow: %s\n",
					strerror(-rc));
				atomic_fetch_add(&errors, 1);
				break;
			}
			atomic_fetch_add(&resizer_grows, 1);
		}
		sched_yield();
		long got = pp_allocator_shrink(alloc, 0);

		if (got < 0) {
			fprintf(stderr, "pp_allocator_shrink: %s\n",
				strerror((int)-got));
			atomic_fetch_add(&errors, 1);
		} else {
			atomic_fetch_add(&resizer_shrinks, got);
		}
		sched_yield();
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *scale = getenv("PP_STRESS_SCALE");
	bool manual = argc > 1 && !strcmp(argv[1], "manual");
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = MIN_SIZE, .max_size = MAX_SIZE,
		.grow_step = STEP, .page_size = PP_PAGE_SIZE_4K,
		.numa_node = PP_NUMA_NODE_ANY, .name = "stress-growth",
	};
	struct pp_allocator_opts o = {
		.sz = sizeof(o), .nr_arenas = 1,
		/* Small caches: batches go to the zone and back all the time. */
		.thread_cache_size = 128, .thread_cache_batch = 32,
	};
	static struct worker w[WORKERS];
	pthread_t t[WORKERS], rt;
	unsigned long out = ~0UL;
	struct pp_zone_growth g = { .sz = sizeof(g) };
	struct batch b;
	double t0;
	static char json[4096];

	if (argc < 2 || (!manual && strcmp(argv[1], "auto"))) {
		fprintf(stderr, "usage: %s manual|auto [OPS]\n", argv[0]);
		return 2;
	}
	ops_per_worker = argc > 2 ? strtoul(argv[2], NULL, 0) : 2000000;
	if (scale && atol(scale) > 1)
		ops_per_worker /= (unsigned long)atol(scale);
	arena = pp_arena_create(&ao);
	if (!arena)
		pp_test_skip("no growable arena of 4 KiB pages (%lu MiB reserved): %s",
			     MAX_SIZE >> 20, strerror(errno));
	o.arenas = &arena;
	if (manual) {
		o.flags = PP_ALLOCATOR_F_MANUAL_RESIZE;
	} else {
		/* Grow below a step free, shrink above two for 1 ms. */
		o.grow_wmark = STEP >> PP_PAGE_SHIFT;
		o.shrink_wmark = 2 * (STEP >> PP_PAGE_SHIFT);
		o.shrink_delay_ms = 1;
	}
	alloc = pp_allocator_create(&o);
	REQUIRE(alloc != NULL);
	printf("%s: %u workers, %lu ops each, %lu-%lu MiB in %lu MiB steps\n",
	       argv[1], WORKERS, ops_per_worker, MIN_SIZE >> 20, MAX_SIZE >> 20,
	       STEP >> 20);

	atomic_store(&workers_left, WORKERS);
	t0 = now_s();
	for (unsigned int i = 0; i < WORKERS; i++) {
		w[i].id = i + 1;
		REQUIRE(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
	}
	if (manual)
		REQUIRE(pthread_create(&rt, NULL, resizer_main, NULL) == 0);
	for (unsigned int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	if (manual)
		pthread_join(rt, NULL);
	/* The batches nobody took: home through their pools' rings. */
	while (queue_pop(&b))
		return_batch(&b);
	for (unsigned int i = 0; i < WORKERS; i++) {
		pp_pool_set_owner(w[i].pool);
		CHECK_EQ(pp_pool_destroy(w[i].pool), 0);
	}
	printf("%.2f s, %lu pool pages handed across threads, %lu short allocations\n",
	       now_s() - t0, atomic_load(&handed), atomic_load(&alloc_failed));

	CHECK_EQ(pp_allocator_zone_growth(alloc, 0, &g), 0);
	printf("grows %llu, shrinks %llu, failed grows %llu, drains cancelled %llu, committed %zu MiB (resizer: %ld grows, %ld shrinks)\n",
	       (unsigned long long)g.grows, (unsigned long long)g.shrinks,
	       (unsigned long long)g.grow_failures,
	       (unsigned long long)g.drains_cancelled,
	       g.committed_bytes >> 20, atomic_load(&resizer_grows),
	       atomic_load(&resizer_shrinks));
	CHECK_EQ(atomic_load(&errors), 0);
	CHECK(g.grows >= 1);
	CHECK(g.shrinks >= 1);
	if (manual) {
		CHECK_EQ(g.grows, (uint64_t)atomic_load(&resizer_grows));
		CHECK_EQ(g.shrinks, (uint64_t)atomic_load(&resizer_shrinks));
	}
	CHECK_EQ(pp_allocator_check(alloc, &out), 0);
	CHECK_EQ(out, 0);
	/* Everything free: a shrink takes the zone back to its minimum. */
	CHECK(pp_allocator_shrink(alloc, 0) >= 0);
	CHECK_EQ(pp_allocator_zone_growth(alloc, 0, &g), 0);
	CHECK_EQ(g.committed_bytes, MIN_SIZE);
	CHECK_EQ(pp_allocator_check(alloc, &out), 0);
	CHECK_EQ(out, 0);
	pp_allocator_stats_json(alloc, json, sizeof(json));
	printf("%s\n", json);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	return pp_test_result();
}
