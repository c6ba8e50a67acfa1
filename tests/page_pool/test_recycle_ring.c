/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_recycle_ring.c - the page_pool's recycle ring (pp_recycle_ring.h):
 * construction errors, burst semantics (as many as fit, as many as there
 * are), the free prefix when only part of a burst fits, wrap-around of the
 * slots over many laps, the close; then threads: several producers and the
 * one consumer, every pointer arriving exactly once and each producer's in
 * its order; and producers racing a close and drain, where every pointer a
 * push reported taken must come out of the ring exactly once and none that
 * it refused.
 *
 * Cases: basic, mpsc, close (one argument each).
 */
#include <sched.h>
#include <stdint.h>

#include "pp_recycle_ring.h"
#include "pp_test.h"

/* Pointers are encoded integers: 0 never appears. */
#define ENC(i) ((void *)(uintptr_t)((i) + 1))
#define DEC(p) ((uintptr_t)(p) - 1)

static unsigned long scale(unsigned long n)
{
	const char *s = getenv("PP_STRESS_SCALE");
	unsigned long div = s ? strtoul(s, NULL, 10) : 1;

	return div > 1 ? n / div : n;
}

static unsigned int push(struct pp_recycle_ring *r, void *const *objs,
			 unsigned int n)
{
	bool closed = false;
	unsigned int done = pp_recycle_ring_push(r, objs, n, &closed);

	CHECK(!closed);
	return done;
}

static void test_basic(void)
{
	void *in[64], *out[64];
	struct pp_recycle_ring *r;
	unsigned int i, n, round;
	uint64_t pushed = 0;
	bool closed;

	errno = 0;
	CHECK(pp_recycle_ring_create(0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pp_recycle_ring_create(6) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pp_recycle_ring_create(PP_RECYCLE_RING_SIZE_MAX * 2u) == NULL &&
	      errno == EINVAL);

	r = pp_recycle_ring_create(16);
	REQUIRE(r != NULL);
	CHECK_EQ(pp_recycle_ring_count(r), 0);
	CHECK_EQ(pp_recycle_ring_pop(r, out, 4), 0);

	for (i = 0; i < 64; i++)
		in[i] = ENC(i);
	/* As many as fit: 20 offered, 16 taken; then none, and not closed. */
	CHECK_EQ(push(r, in, 20), 16);
	pushed += 16;
	CHECK_EQ(pp_recycle_ring_count(r), 16);
	CHECK_EQ(push(r, in, 1), 0);
	/* As many as there are, in order. */
	CHECK_EQ(pp_recycle_ring_pop(r, out, 10), 10);
	for (i = 0; i < 10; i++)
		CHECK(out[i] == in[i]);
	CHECK_EQ(pp_recycle_ring_count(r), 6);
	/* Ten slots free again, at the start of the next lap: a burst of 12
	 * finds only a prefix of 10 free. */
	CHECK_EQ(push(r, in + 20, 12), 10);
	pushed += 10;
	CHECK_EQ(pp_recycle_ring_count(r), 16);
	CHECK_EQ(pp_recycle_ring_pop(r, out, 64), 16);
	for (i = 0; i < 6; i++)
		CHECK(out[i] == in[10 + i]);
	for (i = 0; i < 10; i++)
		CHECK(out[6 + i] == in[20 + i]);
	CHECK_EQ(pp_recycle_ring_count(r), 0);
	CHECK_EQ(pp_recycle_ring_pop(r, out, 64), 0);

	/* Wrap the slots many times with odd burst sizes, some past the
	 * size, consumed in other odd bursts. */
	for (round = 0; round < 3000; round++) {
		unsigned int k = 1 + round % 19;
		unsigned int got = 0;

		n = push(r, in, k);
		CHECK_EQ(n, k < 16 ? k : 16);
		pushed += n;
		while (got < n) {
			unsigned int m = pp_recycle_ring_pop(r, out + got,
							     1 + round % 5);

			REQUIRE(m > 0);
			got += m;
		}
		CHECK_EQ(got, n);
		for (i = 0; i < n; i++)
			CHECK(out[i] == in[i]);
	}
	CHECK_EQ(pp_recycle_ring_pushed(r), pushed);

	/* Close with pointers in: pushes are refused, the drain takes the
	 * rest in order, then the ring stays empty. */
	CHECK_EQ(push(r, in, 5), 5);
	pp_recycle_ring_close(r);
	closed = false;
	CHECK_EQ(pp_recycle_ring_push(r, in, 3, &closed), 0);
	CHECK(closed);
	CHECK_EQ(pp_recycle_ring_count(r), 5);
	CHECK_EQ(pp_recycle_ring_drain(r, out, 2), 2);
	CHECK_EQ(pp_recycle_ring_drain(r, out + 2, 64), 3);
	for (i = 0; i < 5; i++)
		CHECK(out[i] == in[i]);
	CHECK_EQ(pp_recycle_ring_drain(r, out, 64), 0);
	CHECK_EQ(pp_recycle_ring_count(r), 0);
	CHECK_EQ(pp_recycle_ring_pushed(r), pushed + 5);
	pp_recycle_ring_free(r);

	/*
	 * The smallest ring, 2 slots. One slot cannot work: a written slot
	 * and a free one would carry the same sequence number, and a push
	 * into a full ring would overwrite the page in it (the fuzzer found
	 * that through a pool with pool_size 1).
	 */
	CHECK(pp_recycle_ring_create(1) == NULL && errno == EINVAL);
	r = pp_recycle_ring_create(2);
	REQUIRE(r != NULL);
	for (round = 0; round < 10; round++) {
		CHECK_EQ(push(r, in + round, 3), 2);
		/* Full: nothing more goes in, whatever the count asked. */
		CHECK_EQ(push(r, in + 5, 1), 0);
		CHECK_EQ(push(r, in + 5, 3), 0);
		CHECK_EQ(pp_recycle_ring_count(r), 2);
		CHECK_EQ(pp_recycle_ring_pop(r, out, 1), 1);
		CHECK(out[0] == in[round]);
		CHECK_EQ(push(r, in + 7, 2), 1);
		CHECK_EQ(pp_recycle_ring_pop(r, out, 3), 2);
		CHECK(out[0] == in[round + 1] && out[1] == in[7]);
	}
	pp_recycle_ring_free(r);
}

/* ---- several producers, the one consumer ---- */

#define PRODUCERS 3

struct mpsc {
	struct pp_recycle_ring *r;
	unsigned long per_producer;
	unsigned long total;
	unsigned int *seen;      /* consumer only */
	unsigned long bad_order; /* consumer only */
};

struct producer_arg {
	struct mpsc *m;
	unsigned int id;
};

static void *mpsc_producer(void *arg)
{
	struct producer_arg *a = arg;
	struct mpsc *m = a->m;
	unsigned long base = a->id * m->per_producer, next = 0;
	void *buf[48];
	unsigned int i, k, done;
	bool closed = false;

	while (next < m->per_producer) {
		k = 1 + (unsigned int)((next * 7 + a->id) % 48);
		if (k > m->per_producer - next)
			k = (unsigned int)(m->per_producer - next);
		for (i = 0; i < k; i++)
			buf[i] = ENC(base + next + i);
		done = pp_recycle_ring_push(m->r, buf, k, &closed);
		next += done;
		if (!done)
			sched_yield();
	}
	return closed ? arg : NULL;
}

static void test_mpsc(void)
{
	struct mpsc m = { .per_producer = scale(400000) };
	struct producer_arg args[PRODUCERS];
	unsigned long last[PRODUCERS]; /* the next value expected */
	pthread_t th[PRODUCERS];
	unsigned long i, got = 0, round = 0, once = 0;
	unsigned int t, n;
	void *buf[64], *ret;

	m.total = m.per_producer * PRODUCERS;
	m.seen = calloc(m.total, sizeof(*m.seen));
	REQUIRE(m.seen != NULL);
	m.r = pp_recycle_ring_create(128);
	REQUIRE(m.r != NULL);
	for (t = 0; t < PRODUCERS; t++) {
		args[t].m = &m;
		args[t].id = t;
		last[t] = t * m.per_producer;
		REQUIRE(pthread_create(&th[t], NULL, mpsc_producer,
				       &args[t]) == 0);
	}
	/* This thread is the consumer. */
	while (got < m.total) {
		n = pp_recycle_ring_pop(m.r, buf,
					1 + (unsigned int)(round++ % 64));
		for (i = 0; i < n; i++) {
			uintptr_t v = DEC(buf[i]);
			unsigned int p = (unsigned int)(v / m.per_producer);

			if (v >= m.total) {
				m.bad_order++;
				continue;
			}
			m.seen[v]++;
			/* Each producer's pointers arrive in its order. */
			if (v != last[p])
				m.bad_order++;
			last[p] = v + 1;
		}
		got += n;
		if (!n)
			sched_yield();
	}
	for (t = 0; t < PRODUCERS; t++) {
		pthread_join(th[t], &ret);
		CHECK(ret == NULL);
	}
	for (i = 0; i < m.total; i++)
		once += m.seen[i] == 1;
	CHECK_EQ(once, m.total);
	CHECK_EQ(m.bad_order, 0);
	CHECK_EQ(pp_recycle_ring_count(m.r), 0);
	CHECK_EQ(pp_recycle_ring_pushed(m.r), m.total);
	free(m.seen);
	pp_recycle_ring_free(m.r);
}

/* ---- producers racing the close ---- */

struct race {
	struct pp_recycle_ring *r;
	unsigned long limit;             /* values per producer, at most */
	unsigned long pushed[PRODUCERS]; /* each producer's own */
	bool refused[PRODUCERS];
	pthread_barrier_t start;
};

struct race_arg {
	struct race *rc;
	unsigned int id;
};

static void *race_producer(void *arg)
{
	struct race_arg *a = arg;
	struct race *rc = a->rc;
	unsigned long base = a->id * rc->limit, next = 0;
	void *buf[8];
	unsigned int i, k, done;
	bool closed = false;

	pthread_barrier_wait(&rc->start);
	while (next < rc->limit && !closed) {
		k = 1 + (unsigned int)((next + a->id) % 8);
		if (k > rc->limit - next)
			k = (unsigned int)(rc->limit - next);
		for (i = 0; i < k; i++)
			buf[i] = ENC(base + next + i);
		done = pp_recycle_ring_push(rc->r, buf, k, &closed);
		next += done;
		if (!done && !closed)
			sched_yield();
	}
	rc->pushed[a->id] = next;
	rc->refused[a->id] = closed;
	return NULL;
}

static void race_round(unsigned int round, unsigned int *seen,
		       unsigned long *closed_early)
{
	struct race rc = { .limit = 4096 };
	struct race_arg args[PRODUCERS];
	pthread_t th[PRODUCERS];
	unsigned long total = 0, got = 0, i, once = 0, spins;
	unsigned int t, n;
	void *buf[32];

	rc.r = pp_recycle_ring_create(32);
	REQUIRE(rc.r != NULL);
	REQUIRE(pthread_barrier_init(&rc.start, NULL, PRODUCERS + 1) == 0);
	memset(seen, 0, PRODUCERS * rc.limit * sizeof(*seen));
	for (t = 0; t < PRODUCERS; t++) {
		args[t].rc = &rc;
		args[t].id = t;
		REQUIRE(pthread_create(&th[t], NULL, race_producer,
				       &args[t]) == 0);
	}
	pthread_barrier_wait(&rc.start);
	/* Consume for a while that varies by round, then close. */
	for (spins = 0; spins < 1 + round * 37 % 400; spins++) {
		n = pp_recycle_ring_pop(rc.r, buf, 32);
		for (i = 0; i < n; i++)
			seen[DEC(buf[i])]++;
		got += n;
	}
	pp_recycle_ring_close(rc.r);
	while ((n = pp_recycle_ring_drain(rc.r, buf, 1 + round % 32))) {
		for (i = 0; i < n; i++)
			seen[DEC(buf[i])]++;
		got += n;
	}
	for (t = 0; t < PRODUCERS; t++)
		pthread_join(th[t], NULL);

	/* Every pointer a push took came out once; none other did. */
	for (t = 0; t < PRODUCERS; t++) {
		total += rc.pushed[t];
		*closed_early += rc.refused[t];
		for (i = 0; i < rc.limit; i++) {
			unsigned int want = i < rc.pushed[t] ? 1 : 0;

			once += seen[t * rc.limit + i] == want;
		}
	}
	CHECK_EQ(once, PRODUCERS * rc.limit);
	CHECK_EQ(got, total);
	CHECK_EQ(pp_recycle_ring_pushed(rc.r), total);
	CHECK_EQ(pp_recycle_ring_count(rc.r), 0);
	pthread_barrier_destroy(&rc.start);
	pp_recycle_ring_free(rc.r);
}

static void test_close(void)
{
	unsigned int *seen = calloc(PRODUCERS * 4096, sizeof(*seen));
	unsigned long rounds = scale(400), closed_early = 0, r;

	REQUIRE(seen != NULL);
	for (r = 0; r < rounds && !pp_test_failures; r++)
		race_round((unsigned int)r, seen, &closed_early);
	/* The close must have cut some producers short, or the case tested
	 * nothing. */
	CHECK(closed_early > 0);
	free(seen);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "all";
	int all = !strcmp(c, "all");

	if (all || !strcmp(c, "basic"))
		RUN_TEST(test_basic);
	if (all || !strcmp(c, "mpsc"))
		RUN_TEST(test_mpsc);
	if (all || !strcmp(c, "close"))
		RUN_TEST(test_close);
	return pp_test_result();
}
