/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_recycle_ring.h - the page_pool's recycle ring: many producers (any
 * thread that returns pages), one consumer (the pool's owner, and after it
 * the destroyer), and a close that stops the producers for good.
 *
 * Every slot carries a sequence number that says whose turn it is. For
 * position p (a free-running 64-bit index; the slot is p & mask):
 *   seq == p       the slot is free for the producer that reserves p;
 *   seq == p + 1   the producer of p has written it: the consumer's turn;
 *   seq == p + size  the consumer took it: free for position p + size.
 * A producer checks that the slots it wants are free, then reserves them
 * by moving head with one compare-and-swap, writes each and hands it over
 * with a release store of its seq. The consumer walks its slots in order
 * with acquire loads and release stores and no read-modify-write at all,
 * a whole burst at a time. Unlike the rte_ring design (pp_ring.h) there is
 * no producer tail: a producer never waits for an earlier one to publish,
 * and the consumer stops at the first slot not yet written. (Where there
 * is one producer, as on veth's rings, pp_ring.h is the cheaper of the
 * two; it says by how much.)
 *
 * Closing sets the top bit of head with one read-modify-write. A producer's
 * compare-and-swap then fails, and it sees the bit and keeps its pages;
 * every reservation made before the close is below the closed head, so a
 * drain that waits for each slot up to there gets every page that went in.
 * That is what lets the pool drop its per-return guard (page_pool.c).
 *
 * 64-bit positions do not wrap in practice (2^63 pages), so head, tail and
 * seq are compared for equality only.
 */
#ifndef PP_RECYCLE_RING_H
#define PP_RECYCLE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_common.h>

#define PP_RECYCLE_RING_CLOSED (1ULL << 63)

/* Largest ring: slots are indexed by a 64-bit position masked to 32 bits. */
#define PP_RECYCLE_RING_SIZE_MAX (1u << 30)

struct pp_recycle_slot {
	uint64_t seq;
	void *obj;
};

struct pp_recycle_ring {
	uint32_t size; /* slots, a power of two */
	uint32_t mask; /* size - 1 */
	/* Next position to reserve, plus PP_RECYCLE_RING_CLOSED once closed:
	 * every producer's line. */
	uint64_t head __attribute__((aligned(PP_CACHE_LINE)));
	/* Next position to take: the consumer's alone (relaxed atomic stores
	 * so that counting from another thread is no data race). */
	uint64_t tail __attribute__((aligned(PP_CACHE_LINE)));
	struct pp_recycle_slot slots[] __attribute__((aligned(PP_CACHE_LINE)));
};

/*
 * pp_recycle_ring_create - a ring of @size slots (a power of two from 2 to
 * PP_RECYCLE_RING_SIZE_MAX), or NULL with errno EINVAL or ENOMEM. Not 1:
 * with one slot, "written for p" (p + 1) and "free for p + 1" (p + size)
 * are the same sequence number, and a push would overwrite a page the
 * consumer has not taken.
 */
struct pp_recycle_ring *pp_recycle_ring_create(unsigned int size);
void pp_recycle_ring_free(struct pp_recycle_ring *r);

/*
 * How many of the @n slots from @pos on are free for this lap: they are
 * freed in order, so the free ones are a prefix. The acquire loads pair
 * with the consumer's release stores in pp_recycle_ring_pop(): its read of
 * the old pointer happens before our write of the new one.
 */
static inline unsigned int pp_recycle_ring_room_(struct pp_recycle_ring *r,
						 uint64_t pos, unsigned int n)
{
	unsigned int i;

	/* The usual case in one load: the last slot free means all are. */
	if (__atomic_load_n(&r->slots[(pos + n - 1) & r->mask].seq,
			    __ATOMIC_ACQUIRE) == pos + n - 1)
		return n;
	for (i = 0; i < n - 1; i++)
		if (__atomic_load_n(&r->slots[(pos + i) & r->mask].seq,
				    __ATOMIC_ACQUIRE) != pos + i)
			break;
	return i;
}

/*
 * pp_recycle_ring_push - put up to @n (>= 1) pointers into the ring, as
 * many as fit; returns how many. Sets *@closed when the ring is closed (and
 * then returns 0). Any thread.
 *
 * Once the last pointer is handed over the caller may no longer own
 * anything the consumer frees on seeing it: the store of the last seq is
 * this call's last access to the ring.
 */
static inline unsigned int pp_recycle_ring_push(struct pp_recycle_ring *r,
						void *const *objs,
						unsigned int n, bool *closed)
{
	uint64_t pos = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	unsigned int i, k;

	for (;;) {
		if (PP_UNLIKELY(pos & PP_RECYCLE_RING_CLOSED)) {
			*closed = true;
			return 0;
		}
		k = pp_recycle_ring_room_(r, pos, n);
		if (PP_UNLIKELY(!k)) {
			uint64_t seq = __atomic_load_n(
				&r->slots[pos & r->mask].seq,
				__ATOMIC_ACQUIRE);

			/*
			 * Behind @pos: the slot still holds (or is being
			 * given) the pointer of one lap earlier, so the ring
			 * is full. Ahead: other producers took @pos since we
			 * read head, so read it again.
			 */
			if ((int64_t)(seq - pos) < 0)
				return 0;
			pos = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
			continue;
		}
		/*
		 * The only read-modify-write of a push. Relaxed: it publishes
		 * nothing (the seq stores do) and the room check above already
		 * synchronised with the consumer. Succeeding means head was
		 * still @pos, so nobody else reserved these slots, and the
		 * close (an RMW of head) comes after us in head's order.
		 */
		if (__atomic_compare_exchange_n(&r->head, &pos, pos + k, true,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	for (i = 0; i < k; i++) {
		struct pp_recycle_slot *s = &r->slots[(pos + i) & r->mask];

		s->obj = objs[i];
		/* Pairs with the consumer's acquire load of seq. */
		__atomic_store_n(&s->seq, pos + i + 1, __ATOMIC_RELEASE);
	}
	return k;
}

/*
 * Take the slot at @pos if its producer has written it: the pointer, or
 * false. The acquire load pairs with the producer's release store, and the
 * release store frees the slot for the producer one lap on.
 */
static inline bool pp_recycle_ring_take_(struct pp_recycle_ring *r,
					 uint64_t pos, void **obj)
{
	struct pp_recycle_slot *s = &r->slots[pos & r->mask];

	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != pos + 1)
		return false;
	*obj = s->obj;
	__atomic_store_n(&s->seq, pos + r->size, __ATOMIC_RELEASE);
	return true;
}

/*
 * pp_recycle_ring_pop - take up to @n pointers, in order, stopping at the
 * first slot whose producer has not finished writing; returns how many.
 * Consumer only: one thread at a time, ordered by the caller's own
 * synchronisation when the consumer changes threads.
 */
static inline unsigned int pp_recycle_ring_pop(struct pp_recycle_ring *r,
					       void **objs, unsigned int n)
{
	uint64_t pos = r->tail;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!pp_recycle_ring_take_(r, pos + i, &objs[i]))
			break;
	if (i)
		__atomic_store_n(&r->tail, pos + i, __ATOMIC_RELAXED);
	return i;
}

/*
 * pp_recycle_ring_close - stop the producers: every later push finds the
 * ring closed. Consumer only; returns nothing, the pointers stay in until
 * pp_recycle_ring_drain() takes them.
 */
void pp_recycle_ring_close(struct pp_recycle_ring *r);

/*
 * pp_recycle_ring_drain - after the close, take up to @n of the pointers
 * still in, waiting for producers that reserved a slot before the close
 * and are still writing it (a few instructions away); returns how many,
 * 0 once the ring is empty for good. Consumer only.
 */
unsigned int pp_recycle_ring_drain(struct pp_recycle_ring *r, void **objs,
				   unsigned int n);

/*
 * pp_recycle_ring_count - pointers reserved and not yet taken (a snapshot
 * while others run; those being written count as in).
 */
static inline unsigned int
pp_recycle_ring_count(const struct pp_recycle_ring *r)
{
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED) &
			~PP_RECYCLE_RING_CLOSED;
	uint64_t n = head - tail;

	/* Loaded one after the other, the pair can be inconsistent. */
	return n > r->size ? r->size : (unsigned int)n;
}

/* pp_recycle_ring_pushed - pointers ever reserved: the producers' total,
 * which the pool reports as its recycle_ring statistic for free. */
static inline uint64_t pp_recycle_ring_pushed(const struct pp_recycle_ring *r)
{
	return __atomic_load_n(&r->head, __ATOMIC_RELAXED) &
	       ~PP_RECYCLE_RING_CLOSED;
}

#endif /* PP_RECYCLE_RING_H */
