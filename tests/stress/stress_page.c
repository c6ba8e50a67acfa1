/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stress_page.c - the page allocator under several threads: producers
 * allocate (single pages, bulk list, bulk array, now and then a
 * higher-order block) and hand every page over a queue to consumers,
 * which check it and free it (single, bulk, list). Each page carries a
 * tag written when it is handed out and checked before it is freed, so a
 * page handed out twice, or freed while in use, shows as a wrong tag. At
 * the end the accounting must balance: nothing allocated, every page
 * back in the zone, as many pages freed as allocated.
 *
 * usage: stress_page [PAGES [THREADS]]   (default 10^7 pages, 4 threads)
 * PP_STRESS_SCALE=N in the environment divides PAGES (sanitizer runs).
 */
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "pp_test.h"

#define BATCH_MAX 64
#define QUEUE_LEN 32		/* batches in flight: up to 2048 pages */
#define ARENA_SIZE (4UL << 20)	/* 1024 pages: fewer than can be in flight */
/*
 * A live tag: this in the top 16 bits, the producer in the next 8, a
 * sequence number below. Free pages hold anything else (zero, or the
 * allocator's poison in debug builds).
 */
#define TAG_LIVE 0x5a5aULL
#define TAG_IS_LIVE(w) ((w) >> 48 == TAG_LIVE)

struct item {
	struct pp_page *page;
	unsigned int order;
	uint64_t tag;
};

struct batch {
	unsigned int n;
	struct item it[BATCH_MAX];
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	struct batch q[QUEUE_LEN];
	unsigned int head, count;
	unsigned int producers_left;
} queue = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.not_empty = PTHREAD_COND_INITIALIZER,
	.not_full = PTHREAD_COND_INITIALIZER,
};

static struct pp_allocator *alloc;
static unsigned long pages_per_producer;
static atomic_ulong pages_out, pages_back, errors;

/* The tag sits in the first and last words of every page of a block. */
static uint64_t *tag_words(struct pp_page *page, unsigned int order,
			   unsigned int i, int last)
{
	char *data = (char *)pp_page_address(page) + ((size_t)i << PP_PAGE_SHIFT);

	(void)order;
	return (uint64_t *)(last ? data + PP_PAGE_SIZE - sizeof(uint64_t) :
			    data);
}

static void fail(const char *what, struct pp_page *page, uint64_t want,
		 uint64_t got)
{
	if (atomic_fetch_add(&errors, 1) < 10)
		fprintf(stderr, "%s: page %p: tag %#llx, expected %#llx\n",
			what, (void *)page, (unsigned long long)got,
			(unsigned long long)want);
}

/* Handed out: the page must hold no live tag, then gets ours. */
static void tag_page(struct item *it)
{
	for (unsigned int i = 0; i < 1u << it->order; i++) {
		for (int last = 0; last < 2; last++) {
			uint64_t *w = tag_words(it->page, it->order, i, last);

			if (TAG_IS_LIVE(*w))
				fail("handed out while in use", it->page, 0,
				     *w);
			*w = it->tag;
		}
	}
}

/* Before the free: still our tag; then cleared to mark it free. */
static void untag_page(struct item *it)
{
	for (unsigned int i = 0; i < 1u << it->order; i++) {
		for (int last = 0; last < 2; last++) {
			uint64_t *w = tag_words(it->page, it->order, i, last);

			if (*w != it->tag)
				fail("changed while handed out", it->page,
				     it->tag, *w);
			*w = 0;
		}
	}
}

static void queue_push(const struct batch *b)
{
	pthread_mutex_lock(&queue.lock);
	while (queue.count == QUEUE_LEN)
		pthread_cond_wait(&queue.not_full, &queue.lock);
	queue.q[(queue.head + queue.count) % QUEUE_LEN] = *b;
	queue.count++;
	pthread_cond_signal(&queue.not_empty);
	pthread_mutex_unlock(&queue.lock);
}

/* False when every producer is done and the queue is empty. */
static bool queue_pop(struct batch *b)
{
	pthread_mutex_lock(&queue.lock);
	while (queue.count == 0 && queue.producers_left)
		pthread_cond_wait(&queue.not_empty, &queue.lock);
	if (queue.count == 0) {
		pthread_mutex_unlock(&queue.lock);
		return false;
	}
	*b = queue.q[queue.head];
	queue.head = (queue.head + 1) % QUEUE_LEN;
	queue.count--;
	pthread_cond_signal(&queue.not_full);
	pthread_mutex_unlock(&queue.lock);
	return true;
}

static void *producer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, seed = id * 7919 + 1;
	struct pp_page *pages[BATCH_MAX];
	struct pp_page_list list;
	unsigned long done = 0, seq = 0;
	struct batch b;

	while (done < pages_per_producer) {
		unsigned int r = (unsigned int)rand_r(&seed);
		unsigned int want = 1 + (r >> 8) % BATCH_MAX;
		unsigned int order = 0;
		unsigned long n = 0;

		if (want > pages_per_producer - done)
			want = (unsigned int)(pages_per_producer - done);
		memset(pages, 0, sizeof(pages));
		switch (r % 64) {
		case 0: /* now and then a higher-order block */
			order = 1 + (r >> 16) % 3;
			if ((1UL << order) > pages_per_producer - done)
				order = 0;
			pages[0] = pp_alloc_pages(alloc, PP_NUMA_NODE_ANY,
						  order);
			n = pages[0] != NULL;
			break;
		case 1 ... 16:
			pages[0] = pp_alloc_page(alloc);
			n = pages[0] != NULL;
			break;
		case 17 ... 40:
			pp_page_list_init(&list);
			n = pp_alloc_pages_bulk_list(alloc, (int)want, &list);
			if (n != list.count)
				fail("list count", list.head, n, list.count);
			for (unsigned long i = 0; i < n; i++)
				pages[i] = pp_page_list_pop(&list);
			break;
		default:
			n = pp_alloc_pages_bulk_array(alloc, (int)want, pages);
			break;
		}
		if (n == 0) {
			/* Everything is in flight: let the consumers run. */
			sched_yield();
			continue;
		}
		b.n = (unsigned int)n;
		for (unsigned int i = 0; i < b.n; i++) {
			struct item *it = &b.it[i];

			it->page = pages[i];
			it->order = order;
			it->tag = TAG_LIVE << 48 | (uint64_t)(id & 0xff) << 40 |
				  (++seq & ((1ULL << 40) - 1));
			if (pp_page_ref_count(it->page) != 1 ||
			    it->page->order != order)
				fail("bad refcount or order", it->page, 1,
				     pp_page_ref_count(it->page));
			tag_page(it);
		}
		atomic_fetch_add(&pages_out, (unsigned long)b.n << order);
		done += (unsigned long)b.n << order;
		queue_push(&b);
	}
	pthread_mutex_lock(&queue.lock);
	queue.producers_left--;
	pthread_cond_broadcast(&queue.not_empty);
	pthread_mutex_unlock(&queue.lock);
	return NULL;
}

static void *consumer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 104729 + 3;
	struct pp_page *pages[BATCH_MAX];
	struct pp_page_list list;
	struct batch b;

	while (queue_pop(&b)) {
		unsigned int how = (unsigned int)rand_r(&seed) % 3, nr = 0;
		unsigned long freed = 0;

		pp_page_list_init(&list);
		for (unsigned int i = 0; i < b.n; i++) {
			struct item *it = &b.it[i];

			untag_page(it);
			freed += 1UL << it->order;
			if (it->order) {
				pp_put_page(alloc, it->page);
			} else if (how == 0) {
				pp_free_page(alloc, it->page);
			} else if (how == 1) {
				pages[nr++] = it->page;
			} else {
				pp_page_list_add_tail(&list, it->page);
			}
		}
		pp_free_pages_bulk(alloc, pages, nr);
		pp_free_page_list(alloc, &list);
		atomic_fetch_add(&pages_back, freed);
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
	unsigned long total = argc > 1 ? strtoul(argv[1], NULL, 0) : 10000000;
	unsigned int threads = argc > 2 ? (unsigned int)atoi(argv[2]) : 4;
	const char *scale = getenv("PP_STRESS_SCALE");
	struct pp_arena_opts ao = {
		.sz = sizeof(ao),
		.size = ARENA_SIZE,
		.page_size = PP_PAGE_SIZE_2M,
		.numa_node = PP_NUMA_NODE_ANY,
		.flags = PP_ARENA_F_ALLOW_4K,
		.name = "stress",
	};
	struct pp_allocator_opts o = { .sz = sizeof(o), .nr_arenas = 1 };
	unsigned int nprod, ncons;
	unsigned long allocated = ~0UL;
	struct pp_zone_stats s;
	struct pp_arena *arena;
	pthread_t *t;
	double t0;
	char json[1024];

	if (scale && atol(scale) > 1)
		total /= (unsigned long)atol(scale);
	if (threads < 2 || total == 0) {
		fprintf(stderr, "usage: %s [PAGES [THREADS >= 2]]\n", argv[0]);
		return 2;
	}
	nprod = threads / 2;
	ncons = threads - nprod;
	pages_per_producer = total / nprod;

	arena = pp_arena_create(&ao);
	if (!arena)
		pp_test_skip("no arena of %lu MiB, even of 4 KiB pages: %s",
			     ARENA_SIZE >> 20, strerror(errno));
	o.arenas = &arena;
	/* A small cache, so batches go to the zone and back all the time. */
	o.thread_cache_size = 128;
	o.thread_cache_batch = 32;
	alloc = pp_allocator_create(&o);
	REQUIRE(alloc);
	printf("%lu pages through %u producers and %u consumers, %zu KiB pages\n",
	       pages_per_producer * nprod, nprod, ncons,
	       pp_arena_page_size(arena) >> 10);

	t = calloc(threads, sizeof(*t));
	REQUIRE(t);
	queue.producers_left = nprod;
	t0 = now_s();
	for (unsigned int i = 0; i < threads; i++)
		REQUIRE(pthread_create(&t[i], NULL,
				       i < nprod ? producer : consumer,
				       (void *)(uintptr_t)i) == 0);
	for (unsigned int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("%.2f s, %.1f ns per page handed over\n", now_s() - t0,
	       (now_s() - t0) * 1e9 / (double)atomic_load(&pages_out));

	CHECK_EQ(atomic_load(&errors), 0);
	CHECK_EQ(atomic_load(&pages_out), pages_per_producer * nprod);
	CHECK_EQ(atomic_load(&pages_back), atomic_load(&pages_out));
	CHECK_EQ(pp_allocator_check(alloc, &allocated), 0);
	CHECK_EQ(allocated, 0);
	CHECK_EQ(pp_allocator_zone_stats(alloc, 0, &s), 0);
	/* Every thread has exited, so every cache is back in the zone. */
	CHECK_EQ(s.thread_cache_pages, 0);
	CHECK_EQ(s.free_pages, s.managed_pages);
	CHECK_EQ(s.pages_allocated, atomic_load(&pages_out));
	CHECK_EQ(s.pages_freed, atomic_load(&pages_out));
	pp_allocator_stats_json(alloc, json, sizeof(json));
	printf("%s\n", json);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	free(t);
	return pp_test_result();
}
