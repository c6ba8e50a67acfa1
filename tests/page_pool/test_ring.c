/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ring.c - pp_ring: construction errors, burst semantics (as many as
 * fit / as there are), wrap-around of the free-running indexes, and
 * threaded runs where every pointer must arrive exactly once: one producer
 * and one consumer with the sp/sc calls (arrival in order), then several
 * producers and consumers with the mp/mc calls.
 *
 * Cases: basic, spsc, mpmc (one argument each).
 */
#include <sched.h>
#include <stdint.h>

#include "pp_ring.h"
#include "pp_test.h"

/* Pointers are encoded integers: 0 never appears (NULL is legal in a ring,
 * but an uninitialised slot is likelier to read as 0). */
#define ENC(i) ((void *)(uintptr_t)((i) + 1))
#define DEC(p) ((uintptr_t)(p) - 1)

static unsigned long scale(unsigned long n)
{
	const char *s = getenv("PP_STRESS_SCALE");
	unsigned long div = s ? strtoul(s, NULL, 10) : 1;

	return div > 1 ? n / div : n;
}

static void test_basic(void)
{
	void *in[64], *out[64];
	struct pp_ring *r;
	unsigned int i, n, round;

	errno = 0;
	CHECK(pp_ring_create(0, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pp_ring_create(6, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pp_ring_create(8, 1u << 7) == NULL && errno == EINVAL);
	CHECK_EQ(pp_ring_memsize(12), 0);

	r = pp_ring_create(16, 0);
	REQUIRE(r != NULL);
	CHECK_EQ(pp_ring_size(r), 16);
	CHECK_EQ(pp_ring_count(r), 0);
	CHECK_EQ(pp_ring_free_count(r), 16);
	CHECK(pp_ring_empty(r));
	CHECK_EQ(pp_ring_dequeue_burst(r, out, 4), 0);

	for (i = 0; i < 64; i++)
		in[i] = ENC(i);
	/* As many as fit: 20 offered, 16 taken; then none. */
	CHECK_EQ(pp_ring_enqueue_burst(r, in, 20), 16);
	CHECK_EQ(pp_ring_count(r), 16);
	CHECK_EQ(pp_ring_free_count(r), 0);
	CHECK(!pp_ring_enqueue(r, in[0]));
	/* As many as there are, in FIFO order. */
	CHECK_EQ(pp_ring_dequeue_burst(r, out, 10), 10);
	for (i = 0; i < 10; i++)
		CHECK(out[i] == in[i]);
	CHECK_EQ(pp_ring_dequeue_burst(r, out, 64), 6);
	for (i = 0; i < 6; i++)
		CHECK(out[i] == in[10 + i]);
	CHECK(pp_ring_empty(r));

	/* Wrap the slots many times with odd burst sizes. */
	for (round = 0; round < 1000; round++) {
		unsigned int k = 1 + round % 13;

		n = pp_ring_mp_enqueue_burst(r, in, k);
		CHECK_EQ(n, k);
		n = pp_ring_mc_dequeue_burst(r, out, 64);
		CHECK_EQ(n, k);
		for (i = 0; i < n; i++)
			CHECK(out[i] == in[i]);
	}
	pp_ring_free(r);

	/* In place, single-thread flavours by flag. */
	{
		static union {
			struct pp_ring r;
			char mem[4096];
		} u __attribute__((aligned(PP_CACHE_LINE)));
		void *p = NULL;

		CHECK(pp_ring_memsize(8) <= sizeof(u.mem));
		CHECK_EQ(pp_ring_init(&u.r, 8, PP_RING_F_SP_ENQ |
					       PP_RING_F_SC_DEQ), 0);
		CHECK_EQ(pp_ring_init(&u.r, 7, 0), -EINVAL);
		CHECK_EQ(pp_ring_init(&u.r, 8, PP_RING_F_SP_ENQ |
					       PP_RING_F_SC_DEQ), 0);
		CHECK(pp_ring_enqueue(&u.r, ENC(41)));
		CHECK(pp_ring_dequeue(&u.r, &p));
		CHECK(p == ENC(41));
		CHECK(!pp_ring_dequeue(&u.r, &p));
	}
}

/* ---- one producer, one consumer ---- */

struct spsc {
	struct pp_ring *r;
	unsigned long n;
	unsigned long bad;
};

static void *spsc_producer(void *arg)
{
	struct spsc *t = arg;
	void *buf[32];
	unsigned long next = 0;
	unsigned int i, k, done;

	while (next < t->n) {
		k = 1 + (unsigned int)(next % 32);
		if (k > t->n - next)
			k = (unsigned int)(t->n - next);
		for (i = 0; i < k; i++)
			buf[i] = ENC(next + i);
		done = pp_ring_sp_enqueue_burst(t->r, buf, k);
		next += done;
		if (!done)
			sched_yield();
	}
	return NULL;
}

static void *spsc_consumer(void *arg)
{
	struct spsc *t = arg;
	void *buf[32];
	unsigned long expect = 0;
	unsigned int i, n;

	while (expect < t->n) {
		n = pp_ring_sc_dequeue_burst(t->r, buf, 1 + expect % 29);
		for (i = 0; i < n; i++, expect++)
			if (DEC(buf[i]) != expect)
				t->bad++;
		if (!n)
			sched_yield();
	}
	return NULL;
}

static void test_spsc(void)
{
	struct spsc t = { .n = scale(2000000) };
	pthread_t p, c;

	t.r = pp_ring_create(64, PP_RING_F_SP_ENQ | PP_RING_F_SC_DEQ);
	REQUIRE(t.r != NULL);
	REQUIRE(pthread_create(&c, NULL, spsc_consumer, &t) == 0);
	REQUIRE(pthread_create(&p, NULL, spsc_producer, &t) == 0);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	CHECK_EQ(t.bad, 0);
	CHECK(pp_ring_empty(t.r));
	pp_ring_free(t.r);
}

/* ---- several producers and consumers ---- */

#define MP 3
#define MC 3

struct mpmc {
	struct pp_ring *r;
	unsigned long per_producer;
	unsigned int *seen;        /* arrivals per value, atomically */
	unsigned long received;    /* atomically */
	unsigned long total;
};

struct mpmc_arg {
	struct mpmc *m;
	unsigned int id;
};

static void *mpmc_producer(void *arg)
{
	struct mpmc_arg *a = arg;
	struct mpmc *m = a->m;
	unsigned long base = a->id * m->per_producer, next = 0;
	void *buf[48];
	unsigned int i, k, done;

	while (next < m->per_producer) {
		k = 1 + (unsigned int)((next * 7 + a->id) % 48);
		if (k > m->per_producer - next)
			k = (unsigned int)(m->per_producer - next);
		for (i = 0; i < k; i++)
			buf[i] = ENC(base + next + i);
		done = pp_ring_mp_enqueue_burst(m->r, buf, k);
		next += done;
		if (!done)
			sched_yield();
	}
	return NULL;
}

static void *mpmc_consumer(void *arg)
{
	struct mpmc_arg *a = arg;
	struct mpmc *m = a->m;
	void *buf[48];
	unsigned long round = 0;
	unsigned int i, n;

	while (__atomic_load_n(&m->received, __ATOMIC_RELAXED) < m->total) {
		n = pp_ring_mc_dequeue_burst(m->r, buf,
					     1 + (unsigned int)(round++ % 40));
		for (i = 0; i < n; i++) {
			uintptr_t v = DEC(buf[i]);

			if (v < m->total)
				__atomic_fetch_add(&m->seen[v], 1,
						   __ATOMIC_RELAXED);
		}
		if (n)
			__atomic_fetch_add(&m->received, n, __ATOMIC_RELAXED);
		else
			sched_yield();
	}
	return NULL;
}

static void test_mpmc(void)
{
	struct mpmc m = { .per_producer = scale(400000) };
	struct mpmc_arg args[MP + MC];
	pthread_t th[MP + MC];
	unsigned long i, once = 0;
	unsigned int t;

	m.total = m.per_producer * MP;
	m.seen = calloc(m.total, sizeof(*m.seen));
	REQUIRE(m.seen != NULL);
	m.r = pp_ring_create(128, 0);
	REQUIRE(m.r != NULL);
	for (t = 0; t < MP + MC; t++) {
		args[t].m = &m;
		args[t].id = t < MP ? t : t - MP;
		REQUIRE(pthread_create(&th[t], NULL,
				       t < MP ? mpmc_producer : mpmc_consumer,
				       &args[t]) == 0);
	}
	for (t = 0; t < MP + MC; t++)
		pthread_join(th[t], NULL);
	for (i = 0; i < m.total; i++)
		once += m.seen[i] == 1;
	CHECK_EQ(once, m.total);
	CHECK_EQ(m.received, m.total);
	CHECK(pp_ring_empty(m.r));
	free(m.seen);
	pp_ring_free(m.r);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "all";
	int all = !strcmp(c, "all");

	if (all || !strcmp(c, "basic"))
		RUN_TEST(test_basic);
	if (all || !strcmp(c, "spsc"))
		RUN_TEST(test_spsc);
	if (all || !strcmp(c, "mpmc"))
		RUN_TEST(test_mpmc);
	return pp_test_result();
}
