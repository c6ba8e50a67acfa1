/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_pool_stats.c - reading a pool from the outside: statistics with the
 * kernel's names, their JSON form, pages in flight, and the invariant
 * walker that tests run after every case.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "pp_os_fault.h"
#include "pp_pool_json.h"
#include "page_pool_priv.h"
#include "pp_strbuf.h"

/* Relaxed loads throughout: the figures are a snapshot and order nothing. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

uint64_t pp_pool_inflight(struct pp_pool *pool)
{
	uint64_t count = LOAD(pool->state) & PP_POOL_COUNT_MASK;
	uint64_t held_back = LOAD(pool->owner_released);

	/* Two loads while others run: clamp. */
	return count > held_back ? count - held_back : 0;
}

int pp_pool_get_stats(struct pp_pool *pool, struct pp_pool_stats *out)
{
	const struct pp_pool_alloc_cache *c = &pool->alloc;
	uint64_t held, stored;

	memset(out, 0, sizeof(*out));
	out->alloc.fast = LOAD(c->alloc_stats.fast);
	out->alloc.slow = LOAD(c->alloc_stats.slow);
	out->alloc.slow_high_order = LOAD(c->alloc_stats.slow_high_order);
	out->alloc.empty = LOAD(c->alloc_stats.empty);
	out->alloc.refill = LOAD(c->alloc_stats.refill);
	out->alloc.waive = LOAD(c->alloc_stats.waive);
	out->recycle.cached = LOAD(c->recycle_cached);
	out->recycle.cache_full = LOAD(c->recycle_cache_full);
#if PP_STATS
	/* Every reservation of the ring's head is a page put into it. */
	out->recycle.ring = pp_recycle_ring_pushed(pool->ring);
#endif
	out->recycle.ring_full = LOAD(pool->xstats.ring_full);
	out->recycle.released_refcnt = LOAD(pool->xstats.released_refcnt);
	/*
	 * Released pages are the held ones minus the count, as the kernel
	 * derives its in-flight figure the other way round: the count first,
	 * so that a page adopted in between cannot make it negative.
	 */
	held = pp_pool_inflight(pool);
	out->hold = LOAD(pool->hold);
#if PP_STATS
	out->release = out->hold > held ? out->hold - held : 0;
#endif
	out->map_failed = LOAD(pool->map_failed);
	out->cache_count = LOAD(c->count);
	out->ring_count = pp_recycle_ring_count(pool->ring);
	/* From the live count, which exists even without PP_STATS. */
	stored = out->cache_count + out->ring_count;
	out->inflight = held > stored ? held - stored : 0;
	out->frag_alloc = LOAD(pool->alloc.frag.alloc);
	out->frag_pages = LOAD(pool->alloc.frag.pages);
	return 0;
}

int pp_pool_stats_json(struct pp_pool *pool, char *buf, size_t len)
{
	return pp_pool_stats_json_as(pool, pool->name, buf, len);
}

int pp_pool_stats_json_as(struct pp_pool *pool, const char *name, char *buf,
			  size_t len)
{
	struct pp_strbuf b = { .buf = buf, .len = len };
	struct pp_pool_stats s;

	pp_pool_get_stats(pool, &s);
	pp_strbuf_printf(&b, "{\"name\":");
	/* The name is the caller's string: escaped as JSON needs. */
	pp_strbuf_json_string(&b, name);
	pp_strbuf_printf(&b,
		     ",\"alloc_fast\":%llu,\"alloc_slow\":%llu"
		     ",\"alloc_slow_high_order\":%llu,\"alloc_empty\":%llu"
		     ",\"alloc_refill\":%llu,\"alloc_waive\":%llu"
		     ",\"recycle_cached\":%llu,\"recycle_cache_full\":%llu"
		     ",\"recycle_ring\":%llu,\"recycle_ring_full\":%llu"
		     ",\"recycle_released_refcnt\":%llu"
		     ",\"hold\":%llu,\"release\":%llu,\"map_failed\":%llu"
		     ",\"cache_count\":%llu,\"ring_count\":%llu"
		     ",\"inflight\":%llu,\"frag_alloc\":%llu"
		     ",\"frag_pages\":%llu}",
		     (unsigned long long)s.alloc.fast,
		     (unsigned long long)s.alloc.slow,
		     (unsigned long long)s.alloc.slow_high_order,
		     (unsigned long long)s.alloc.empty,
		     (unsigned long long)s.alloc.refill,
		     (unsigned long long)s.alloc.waive,
		     (unsigned long long)s.recycle.cached,
		     (unsigned long long)s.recycle.cache_full,
		     (unsigned long long)s.recycle.ring,
		     (unsigned long long)s.recycle.ring_full,
		     (unsigned long long)s.recycle.released_refcnt,
		     (unsigned long long)s.hold,
		     (unsigned long long)s.release,
		     (unsigned long long)s.map_failed,
		     (unsigned long long)s.cache_count,
		     (unsigned long long)s.ring_count,
		     (unsigned long long)s.inflight,
		     (unsigned long long)s.frag_alloc,
		     (unsigned long long)s.frag_pages);
	return (int)b.pos;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a;
	uintptr_t y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

static int check_page(struct pp_pool *pool, struct pp_page *page,
		      const char *where)
{
	uint64_t magic = (pool->flags & PP_POOL_F_DMA_MAP) ?
		PP_POOL_MAGIC_MAPPED : PP_POOL_MAGIC;

	if (!page) {
		PP_ERR("pool %s check: NULL page in the %s", pool->name, where);
		return -EFAULT;
	}
	if (page->pp != pool) {
		PP_ERR("pool %s check: page %p in the %s belongs to pool %p",
		       pool->name, pp_page_address(page), where,
		       (void *)page->pp);
		return -EFAULT;
	}
	if (pp_page_ref_count(page) != 1) {
		PP_ERR("pool %s check: page %p in the %s has refcount %u, expected 1",
		       pool->name, pp_page_address(page), where,
		       pp_page_ref_count(page));
		return -EFAULT;
	}
	/* A stored page is whole: its last fragment came back. */
	if (LOAD(page->pp_ref_count) != 1) {
		PP_ERR("pool %s check: page %p in the %s has %lld fragment users, expected 1 (a whole page)",
		       pool->name, pp_page_address(page), where,
		       (long long)LOAD(page->pp_ref_count));
		return -EFAULT;
	}
	if (page->pp_magic != magic) {
		PP_ERR("pool %s check: page %p in the %s has signature 0x%llx, expected 0x%llx (%s)",
		       pool->name, pp_page_address(page), where,
		       (unsigned long long)page->pp_magic,
		       (unsigned long long)magic,
		       magic == PP_POOL_MAGIC_MAPPED ? "mapped" : "unmapped");
		return -EFAULT;
	}
	return 0;
}

int pp_pool_check(struct pp_pool *pool)
{
	const struct pp_pool_alloc_cache *c = &pool->alloc;
	struct pp_recycle_ring *r = pool->ring;
	uint64_t tail, head, held, nr_ring;
	unsigned int nr, i;
	struct pp_page **all;
	int err = 0;

	/* The owner's gathered fragment returns first: pages they complete
	 * are recycled, so that the counts below are settled. */
	if (!(LOAD(pool->state) & PP_POOL_DESTROYING))
		pool_frag_flush(pool);
	tail = LOAD(r->tail);
	head = LOAD(r->head) & ~PP_RECYCLE_RING_CLOSED;
	held = pp_pool_inflight(pool);
	nr_ring = head - tail;

	if (LOAD(pool->state) & PP_POOL_DESTROYING) {
		PP_ERR("pool %s check: called after pp_pool_destroy()", pool->name);
		return -EFAULT;
	}
	if (c->count > PP_POOL_CACHE_SIZE || nr_ring > r->size) {
		PP_ERR("pool %s check: cache count %u or ring count %llu out of range",
		       pool->name, c->count, (unsigned long long)nr_ring);
		return -EFAULT;
	}
	if ((uint64_t)c->count + nr_ring > held) {
		PP_ERR("pool %s check: cache %u + ring %llu pages exceed the %llu held minus released",
		       pool->name, c->count, (unsigned long long)nr_ring,
		       (unsigned long long)held);
		return -EFAULT;
	}

	nr = c->count + (unsigned int)nr_ring;
	all = pp_os_malloc(((size_t)nr + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < c->count && !err; i++) {
		all[i] = c->cache[i];
		err = check_page(pool, all[i], "alloc cache");
	}
	for (i = 0; i < nr_ring && !err; i++) {
		const struct pp_recycle_slot *s =
			&r->slots[(tail + i) & r->mask];

		/* With no returner running, every reserved slot is written. */
		if (LOAD(s->seq) != tail + i + 1) {
			PP_ERR("pool %s check: ring slot %llu is reserved but not written (seq %llu)",
			       pool->name, (unsigned long long)(tail + i),
			       (unsigned long long)LOAD(s->seq));
			err = -EFAULT;
			break;
		}
		all[c->count + i] = s->obj;
		err = check_page(pool, all[c->count + i], "recycle ring");
	}
	if (!err) {
		/* A page stored twice would be handed out twice. */
		qsort(all, nr, sizeof(*all), cmp_ptr);
		for (i = 1; i < nr; i++) {
			if (all[i] == all[i - 1]) {
				PP_ERR("pool %s check: page %p is stored twice",
				       pool->name, pp_page_address(all[i]));
				err = -EFAULT;
				break;
			}
		}
	}
	free(all);
	return err;
}
