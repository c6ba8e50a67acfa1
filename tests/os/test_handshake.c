/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_handshake.c - the owner/holder handshake (pp_os_handshake.h), both
 * ways, each case once per way: the lock word always, the asymmetric way
 * where this process can use membarrier() (else a SKIP line). What the
 * thread caches and the virtio_user queues rely on:
 *
 *   - a held handshake refuses its owner (try_enter), or makes it wait
 *     (enter) until the release, and the owner then sees the holder's
 *     writes;
 *   - a hold waits for an owner inside a call, and holders wait for each
 *     other;
 *   - many handshakes held with one membarrier();
 *   - under load, owner and holder are never inside at once (each side
 *     checks the other is out and does a non-atomic read-modify-write
 *     of one counter, whose total then shows any overlap).
 *
 * Run twice by meson: as is, and with PAGEPOOL_NO_MEMBARRIER=1, under
 * which pp_handshake_init() must choose the lock word.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "pp_os.h"
#include "pp_os_handshake.h"
#include "pp_test.h"

/* Long enough for a thread that should block to have run if it would
 * not: the checks after it may only pass wrongly, never fail wrongly. */
#define BLOCK_MS 50

static bool asym_way;   /* the way the current pass sets up */

static void setup(struct pp_handshake_ *hs)
{
	if (asym_way)
		REQUIRE(pp_handshake_init(hs) == 0);
	else
		pp_handshake_init_lockword(hs);
	REQUIRE(pp_handshake_is_asym(hs) == asym_way);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- the choice ----------------------------------------------------- */

static void test_init(void)
{
	const char *off = getenv("PAGEPOOL_NO_MEMBARRIER");
	struct pp_handshake_ hs, zero = { 0, 0 };
	int err = pp_handshake_init(&hs);

	CHECK_EQ(err, pp_os_membarrier_usable());
	CHECK(pp_handshake_is_asym(&hs) == (err == 0));
	if (off && !strcmp(off, "1"))
		CHECK_EQ(err, -ECANCELED);
	/* Zeroes are the lock word, free: usable as they are. */
	CHECK(!pp_handshake_is_asym(&zero));
	CHECK(!pp_handshake_enter_fast_(&zero));
	CHECK(pp_handshake_try_enter(&zero));
	pp_handshake_exit(&zero);
	CHECK(!pp_handshake_hold_begin(&zero));
	pp_handshake_release(&zero);
}

/* ---- one thread ----------------------------------------------------- */

static void test_one_thread(void)
{
	struct pp_handshake_ hs;

	setup(&hs);
	CHECK(pp_handshake_try_enter(&hs));
	pp_handshake_exit(&hs);
	CHECK(pp_handshake_enter_fast_(&hs) == asym_way);
	if (asym_way)
		pp_handshake_exit_fast_(&hs);

	pp_handshake_hold(&hs);
	CHECK(!pp_handshake_enter_fast_(&hs));
	CHECK(!pp_handshake_try_enter(&hs));
	/* A refused owner leaves nothing behind for the holder to wait on. */
	CHECK_EQ(__atomic_load_n(&hs.busy, __ATOMIC_RELAXED), 0);
	pp_handshake_release(&hs);

	CHECK(pp_handshake_try_enter(&hs));
	pp_handshake_exit(&hs);
	CHECK_EQ(hs.busy, 0);
	CHECK_EQ(hs.stop, asym_way ? PP_HANDSHAKE_ASYM_ : 0);
}

/* ---- two threads ---------------------------------------------------- */

struct pair {
	struct pp_handshake_ hs;
	atomic_int done;
	int data;       /* written by one side, read by the other */
};

static void *hold_then_release(void *arg)
{
	struct pair *p = arg;

	pp_handshake_hold(&p->hs);
	atomic_store(&p->done, 1);
	p->data = 42;
	pp_handshake_release(&p->hs);
	return NULL;
}

static void *hold_and_keep(void *arg)
{
	struct pair *p = arg;

	pp_handshake_hold(&p->hs);
	p->data = 7;
	atomic_store(&p->done, 1);
	return NULL;
}

/* A hold waits for the owner to leave the call it is in. */
static void test_hold_waits_for_owner(void)
{
	struct pair p = { .data = 0 };
	pthread_t t;

	setup(&p.hs);
	atomic_init(&p.done, 0);
	pp_handshake_enter(&p.hs);
	REQUIRE(pthread_create(&t, NULL, hold_and_keep, &p) == 0);
	sleep_ms(BLOCK_MS);
	CHECK_EQ(atomic_load(&p.done), 0);
	pp_handshake_exit(&p.hs);
	pthread_join(t, NULL);
	CHECK_EQ(atomic_load(&p.done), 1);
	/* Still held by the thread that has gone: the owner is refused
	 * until someone releases it (a virtio queue stays down so). */
	CHECK(!pp_handshake_try_enter(&p.hs));
	pp_handshake_release(&p.hs);
	CHECK(pp_handshake_try_enter(&p.hs));
	CHECK_EQ(p.data, 7);
	pp_handshake_exit(&p.hs);
}

static void *owner_waits(void *arg)
{
	struct pair *p = arg;

	pp_handshake_enter(&p->hs);
	/* The holder's write, seen once inside. */
	if (p->data != 1)
		atomic_store(&p->done, -1);
	else
		atomic_store(&p->done, 1);
	pp_handshake_exit(&p->hs);
	return NULL;
}

/* An owner that enters while the handshake is held waits for the
 * release, and then sees what the holder wrote. */
static void test_owner_waits_for_hold(void)
{
	struct pair p = { .data = 0 };
	pthread_t t;

	setup(&p.hs);
	atomic_init(&p.done, 0);
	pp_handshake_hold(&p.hs);
	REQUIRE(pthread_create(&t, NULL, owner_waits, &p) == 0);
	sleep_ms(BLOCK_MS);
	CHECK_EQ(atomic_load(&p.done), 0);
	p.data = 1;
	pp_handshake_release(&p.hs);
	pthread_join(t, NULL);
	CHECK_EQ(atomic_load(&p.done), 1);
}

/* Holders wait for each other. */
static void test_holders_exclude(void)
{
	struct pair p = { .data = 0 };
	pthread_t t;

	setup(&p.hs);
	atomic_init(&p.done, 0);
	pp_handshake_hold(&p.hs);
	REQUIRE(pthread_create(&t, NULL, hold_then_release, &p) == 0);
	sleep_ms(BLOCK_MS);
	CHECK_EQ(atomic_load(&p.done), 0);
	pp_handshake_release(&p.hs);
	pthread_join(t, NULL);
	CHECK_EQ(atomic_load(&p.done), 1);
	CHECK_EQ(p.data, 42);
	CHECK(pp_handshake_try_enter(&p.hs));
	pp_handshake_exit(&p.hs);
}

/* ---- many at once --------------------------------------------------- */

#define MANY 8

struct many {
	struct pp_handshake_ hs[MANY];
	atomic_int inside, left;
};

static void *sit_in_one(void *arg)
{
	struct many *m = arg;

	pp_handshake_enter(&m->hs[3]);
	atomic_store(&m->inside, 1);
	sleep_ms(BLOCK_MS);
	atomic_store(&m->left, 1);
	pp_handshake_exit(&m->hs[3]);
	return NULL;
}

/* Begin on all, one membarrier() (asymmetric only), then wait on all:
 * the wait ends only after the owner inside one of them has left. */
static void test_hold_many(void)
{
	struct many m;
	bool sync = false;
	pthread_t t;

	for (int i = 0; i < MANY; i++)
		setup(&m.hs[i]);
	atomic_init(&m.inside, 0);
	atomic_init(&m.left, 0);
	REQUIRE(pthread_create(&t, NULL, sit_in_one, &m) == 0);
	while (!atomic_load(&m.inside))
		sleep_ms(1);
	for (int i = 0; i < MANY; i++)
		sync |= pp_handshake_hold_begin(&m.hs[i]);
	CHECK(sync == asym_way);
	if (sync)
		pp_os_membarrier();
	for (int i = 0; i < MANY; i++)
		pp_handshake_hold_wait(&m.hs[i]);
	CHECK_EQ(atomic_load(&m.left), 1);
	for (int i = 0; i < MANY; i++)
		CHECK(!pp_handshake_try_enter(&m.hs[i]));
	for (int i = 0; i < MANY; i++)
		pp_handshake_release(&m.hs[i]);
	for (int i = 0; i < MANY; i++) {
		CHECK(pp_handshake_try_enter(&m.hs[i]));
		pp_handshake_exit(&m.hs[i]);
	}
	pthread_join(t, NULL);
}

/* ---- under load ----------------------------------------------------- */

/* Holds in a run: the owner calls until the holder is done. Enough
 * that a broken handshake overlaps the two within the run on two CPUs,
 * few enough for a machine shared with others (a membarrier() each). */
#define HOLDS 20000

struct load {
	struct pp_handshake_ hs;
	bool try_only;          /* the owner does without when held */
	atomic_int owner_in, holder_in;
	atomic_int overlaps;
	atomic_int holder_done;
	unsigned long counter;  /* plain: the handshake guards it */
	unsigned long owner_calls, refused;
};

/* A read-modify-write that takes a while: a second writer meanwhile
 * loses an update. */
static void slow_add(unsigned long *c, unsigned long n)
{
	unsigned long v = *(volatile unsigned long *)c;

	for (int i = 0; i < 20; i++)
		__asm__ __volatile__("" ::: "memory");
	*(volatile unsigned long *)c = v + n;
}

static void *load_owner(void *arg)
{
	struct load *l = arg;

	while (!atomic_load_explicit(&l->holder_done, memory_order_relaxed)) {
		if (l->try_only) {
			if (!pp_handshake_try_enter(&l->hs)) {
				l->refused++;
				continue;
			}
		} else {
			pp_handshake_enter(&l->hs);
		}
		atomic_store_explicit(&l->owner_in, 1, memory_order_relaxed);
		if (atomic_load_explicit(&l->holder_in, memory_order_relaxed))
			atomic_fetch_add(&l->overlaps, 1);
		slow_add(&l->counter, 1);
		l->owner_calls++;
		atomic_store_explicit(&l->owner_in, 0, memory_order_relaxed);
		pp_handshake_exit(&l->hs);
	}
	return NULL;
}

static void *load_holder(void *arg)
{
	struct load *l = arg;

	for (int i = 0; i < HOLDS; i++) {
		pp_handshake_hold(&l->hs);
		atomic_store_explicit(&l->holder_in, 1, memory_order_relaxed);
		if (atomic_load_explicit(&l->owner_in, memory_order_relaxed))
			atomic_fetch_add(&l->overlaps, 1);
		slow_add(&l->counter, 1000000);
		atomic_store_explicit(&l->holder_in, 0, memory_order_relaxed);
		pp_handshake_release(&l->hs);
	}
	atomic_store(&l->holder_done, 1);
	return NULL;
}

static void under_load(bool try_only)
{
	struct load l = { .try_only = try_only };
	pthread_t owner, holder;

	setup(&l.hs);
	atomic_init(&l.owner_in, 0);
	atomic_init(&l.holder_in, 0);
	atomic_init(&l.overlaps, 0);
	atomic_init(&l.holder_done, 0);
	REQUIRE(pthread_create(&owner, NULL, load_owner, &l) == 0);
	REQUIRE(pthread_create(&holder, NULL, load_holder, &l) == 0);
	pthread_join(owner, NULL);
	pthread_join(holder, NULL);
	CHECK_EQ(atomic_load(&l.overlaps), 0);
	CHECK_EQ(l.counter, l.owner_calls + 1000000ul * HOLDS);
	if (!try_only)
		CHECK_EQ(l.refused, 0);
	printf("     %lu owner calls (%lu refused) beside %d holds\n",
	       l.owner_calls, l.refused, HOLDS);
}

/* The thread cache's owner: waits while held. */
static void test_load_enter(void)
{
	under_load(false);
}

/* The virtio burst: does without while held. */
static void test_load_try_enter(void)
{
	under_load(true);
}

static const struct pp_test_case cases[] = {
	{ "one_thread", test_one_thread },
	{ "hold_waits_for_owner", test_hold_waits_for_owner },
	{ "owner_waits_for_hold", test_owner_waits_for_hold },
	{ "holders_exclude", test_holders_exclude },
	{ "hold_many", test_hold_many },
	{ "load_enter", test_load_enter },
	{ "load_try_enter", test_load_try_enter },
};

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "all";
	int rc;

	RUN_TEST(test_init);
	asym_way = false;
	rc = pp_test_run_cases(cases, sizeof(cases) / sizeof(cases[0]), only,
			       "(lock word)");
	if (rc == 2)
		return rc;
	if (pp_os_membarrier_usable()) {
		pp_test_skip_part("asymmetric",
				  "membarrier(PRIVATE_EXPEDITED) not usable here (%s)",
				  strerror(-pp_os_membarrier_usable()));
		return rc;
	}
	asym_way = true;
	return pp_test_run_cases(cases, sizeof(cases) / sizeof(cases[0]),
				 only, "(asymmetric)");
}
