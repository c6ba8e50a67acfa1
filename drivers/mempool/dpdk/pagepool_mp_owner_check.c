/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mp_owner_check.c - debug builds (debug_level 1): every put
 * comes here, and a pointer that is not an object of the pool is logged
 * and left out, so that a put into the wrong pool shows where it happens
 * instead of as a corrupt pool later. A walk of the pool's chunk list per
 * object, so only in debug builds (pagepool_mp_store.c decides).
 */
#include <rte_common.h>

#include "pagepool_mp_priv.h"

/*
 * Is @obj an object of @mp, that is, inside one of its memory chunks, or
 * the one populate is slicing (DPDK lists a chunk only after populate
 * returns, and populate puts each object)?
 */
static bool obj_owned(const struct rte_mempool *mp, const void *obj)
{
	const struct pagepool_mp *p = mp->pool_data;
	const struct rte_mempool_memhdr *c;
	uintptr_t start = (uintptr_t)obj - mp->header_size;
	uintptr_t end = (uintptr_t)obj + mp->elt_size + mp->trailer_size;

	if (start >= p->populating && end <= p->populating_end)
		return true;
	STAILQ_FOREACH(c, &mp->mem_list, next)
		if (start >= (uintptr_t)c->addr &&
		    end <= (uintptr_t)c->addr + c->len)
			return true;
	return false;
}

void pagepool_mp_put_checked(struct rte_mempool *mp, void *const *obj_table,
			     unsigned int n)
{
	void *ok[64]; /* a stack-sized batch; any size works */

	while (n) {
		unsigned int c = n < RTE_DIM(ok) ? n : RTE_DIM(ok), k = 0;

		for (unsigned int i = 0; i < c; i++) {
			if (obj_owned(mp, obj_table[i])) {
				ok[k++] = obj_table[i];
				continue;
			}
			PMP_LOG(ERR, "put of %p into pool '%s', which does not own it; ignored: put objects back into the pool they came from",
				obj_table[i], mp->name);
		}
		if (k)
			pagepool_mp_put(mp, mp->pool_data, ok, k);
		obj_table += c;
		n -= c;
	}
}
