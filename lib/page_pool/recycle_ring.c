/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recycle_ring.c - the cold half of the page_pool's recycle ring: making
 * it, closing it and draining it. The push and pop are inline in
 * pp_recycle_ring.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "pp_os_fault.h"
#include "pp_recycle_ring.h"

struct pp_recycle_ring *pp_recycle_ring_create(unsigned int size)
{
	struct pp_recycle_ring *r;
	unsigned int i;
	size_t bytes;

	if (size < 2 || size > PP_RECYCLE_RING_SIZE_MAX ||
	    (size & (size - 1))) {
		errno = EINVAL;
		return NULL;
	}
	bytes = sizeof(*r) + (size_t)size * sizeof(r->slots[0]);
	/* aligned_alloc wants a multiple of the alignment. */
	bytes = (bytes + PP_CACHE_LINE - 1) & ~(size_t)(PP_CACHE_LINE - 1);
	r = pp_os_aligned_alloc(PP_CACHE_LINE, bytes);
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->size = size;
	r->mask = size - 1;
	r->head = 0;
	r->tail = 0;
	/* Slot i is free for position i. */
	for (i = 0; i < size; i++) {
		r->slots[i].seq = i;
		r->slots[i].obj = NULL;
	}
	return r;
}

void pp_recycle_ring_free(struct pp_recycle_ring *r)
{
	free(r);
}

void pp_recycle_ring_close(struct pp_recycle_ring *r)
{
	/*
	 * An RMW, so that it is ordered against every producer's reserving
	 * compare-and-swap in head's modification order: a producer either
	 * reserved before (and its slot is below the closed head, which the
	 * drain waits for) or sees the bit. Relaxed would do for that; the
	 * page data is handed over by the seq stores.
	 */
	__atomic_fetch_or(&r->head, PP_RECYCLE_RING_CLOSED, __ATOMIC_ACQ_REL);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

unsigned int pp_recycle_ring_drain(struct pp_recycle_ring *r, void **objs,
				   unsigned int n)
{
	/* Closed: head no longer moves, so one load gives the end. */
	uint64_t end = __atomic_load_n(&r->head, __ATOMIC_RELAXED) &
		       ~PP_RECYCLE_RING_CLOSED;
	uint64_t pos = r->tail;
	unsigned int i;

	for (i = 0; i < n && pos + i != end; i++)
		/* Reserved before the close: its producer is writing it. */
		while (!pp_recycle_ring_take_(r, pos + i, &objs[i]))
			cpu_relax();
	if (i)
		__atomic_store_n(&r->tail, pos + i, __ATOMIC_RELAXED);
	return i;
}
