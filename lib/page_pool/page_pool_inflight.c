/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_pool_inflight.c - where a pool's pages are: the walk behind
 * /pagepool/inflight, the leak report of a destroy with pages out, and
 * the list of such destroyed pools until their last page is back
 * (pp_pool_inflight.h; the holder word: pp_where.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "page_pool_priv.h"
#include "pp_holders.h"
#include "pp_log.h"
#include "pp_page_walk.h"
#include "pp_pool_inflight.h"
#include "pp_strbuf.h"

const char *pp_pool_name_(const struct pp_pool *pool)
{
	return pool->name;
}

/* ---- the walk ---- */

static unsigned int age_bucket(double s)
{
	if (s < 1e-3)
		return PP_AGE_UNDER_1MS;
	if (s < 1.0)
		return PP_AGE_UNDER_1S;
	if (s < 60.0)
		return PP_AGE_UNDER_1MIN;
	return PP_AGE_OLDER;
}

/* The entry of @code, made if new; the last one when they are all used. */
static struct pp_inflight_holder *holder_of(struct pp_inflight *in,
					    uint32_t code)
{
	unsigned int i;

	for (i = 0; i < in->nr_holders; i++)
		if (in->holder[i].code == code)
			return &in->holder[i];
	if (in->nr_holders == PP_INFLIGHT_HOLDERS)
		return &in->holder[PP_INFLIGHT_HOLDERS - 1];
	in->holder[i] = (struct pp_inflight_holder){ .code = code };
	in->nr_holders++;
	return &in->holder[i];
}

/* One page in flight at @code, stamped at coarse time @t (0: none). */
static void count_page(struct pp_inflight *in, uint32_t code, uint32_t t)
{
	struct pp_inflight_holder *h = holder_of(in, code);
	double age;

	h->pages++;
	in->pages++;
	if (!t) {
		in->age[PP_AGE_UNKNOWN]++;
		return;
	}
	/* Unsigned: right across the clock's wrap. A stamp a moment
	 * newer than our clock reading (another core) is age 0. */
	age = (int32_t)(in->now - t) < 0 ? 0.0 :
					   (double)(uint32_t)(in->now - t) / in->hz;
	in->age[age_bucket(age)]++;
	if (!h->aged || age > h->oldest_s) {
		h->aged = true;
		h->oldest_s = age;
	}
	if (!in->have_oldest || age > in->oldest_s) {
		in->have_oldest = true;
		in->oldest_s = age;
		in->oldest_code = code;
	}
}

/*
 * The pages that drivers' rings hold unstamped (pp_holders.h), as keys
 * sorted for a binary search: a ring's own holder beats what the page's
 * word says (for a veth ring, the application's or stack's last stamp).
 */
struct ring_key {
	uintptr_t page;
	uint32_t code;
};

struct ring_keys {
	struct ring_key *k;
	size_t n, cap;
};

static void ring_key_add(const struct pp_page *page, uint32_t code, void *arg)
{
	struct ring_keys *rk = arg;

	if (rk->n == rk->cap) {
		size_t cap = rk->cap ? 2 * rk->cap : 256;
		struct ring_key *k = realloc(rk->k, cap * sizeof(*k));

		if (!k)
			return; /* the report is only less precise */
		rk->k = k;
		rk->cap = cap;
	}
	rk->k[rk->n++] = (struct ring_key){ (uintptr_t)page, code };
}

static int ring_key_cmp(const void *a, const void *b)
{
	uintptr_t x = ((const struct ring_key *)a)->page;
	uintptr_t y = ((const struct ring_key *)b)->page;

	return x < y ? -1 : x > y;
}

static const struct ring_key *ring_key_find(const struct ring_keys *rk,
					    const struct pp_page *page)
{
	struct ring_key key = { (uintptr_t)page, 0 };

	return rk->n ? bsearch(&key, rk->k, rk->n, sizeof(key), ring_key_cmp) :
		       NULL;
}

/* One page of the pool: counted by its ring, else by its word. */
static void walk_page(struct pp_inflight *out, const struct ring_keys *rk,
		      const struct pp_page *page)
{
	const struct ring_key *in_ring = ring_key_find(rk, page);
	uint64_t w = pp_page_where(page);

	if (in_ring) {
		count_page(out, in_ring->code, 0);
		return;
	}
	switch (PP_HOLDER_KIND(PP_WHERE_HOLDER(w))) {
	case PP_HOLDER_NONE:    /* being released right now */
		break;
	case PP_HOLDER_POOL:
		out->pool_marked++;
		break;
	default:
		count_page(out, PP_WHERE_HOLDER(w), PP_WHERE_TIME(w));
	}
}

void pp_pool_inflight_walk(struct pp_pool *pool, struct pp_inflight *out)
{
	struct pp_allocator *alloc = pool->allocator;
	struct ring_keys rk = { 0 };
	struct pp_pool_stats st;
	unsigned int z, nr_zones = pp_allocator_zone_count(alloc);

	memset(out, 0, sizeof(*out));
	out->block_bytes = (uint64_t)PP_PAGE_SIZE << pool->order;
	out->hz = pp_where_hz();
	pp_ring_pages(ring_key_add, &rk);
	if (rk.n)
		qsort(rk.k, rk.n, sizeof(*rk.k), ring_key_cmp);
	out->now = pp_where_now();
	pp_pool_get_stats(pool, &st);
	out->in_pool = st.cache_count + st.ring_count;
	for (z = 0; z < nr_zones; z++) {
		struct pp_page *pages;
		unsigned long i, nr;

		if (pp_allocator_zone_pages(alloc, z, &pages, &nr))
			continue;
		for (i = 0; i < nr; i++)
			if (__atomic_load_n(&pages[i].pp, __ATOMIC_RELAXED) ==
			    pool)
				walk_page(out, &rk, &pages[i]);
	}
	free(rk.k);
}

void pp_pool_inflight_finish(struct pp_inflight *in)
{
	uint64_t app = in->pool_marked > in->in_pool ?
			       in->pool_marked - in->in_pool : 0;

	if (!app)
		return;
	holder_of(in, PP_HOLDER(PP_HOLDER_APP, 0, 0))->pages += app;
	in->pages += app;
	in->age[PP_AGE_UNKNOWN] += app;
}

/* ---- pools destroyed with pages out ---- */

static pthread_mutex_t detached_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pp_pool *detached;

void pool_detach(struct pp_pool *pool)
{
	pool->detach_time = (int64_t)time(NULL);
	pthread_mutex_lock(&detached_lock);
	pool->detached_next = detached;
	detached = pool;
	pool->detached = true;
	pthread_mutex_unlock(&detached_lock);
}

void pool_detached_forget(struct pp_pool *pool)
{
	struct pp_pool **p;

	pthread_mutex_lock(&detached_lock);
	for (p = &detached; *p; p = &(*p)->detached_next)
		if (*p == pool) {
			*p = pool->detached_next;
			break;
		}
	pthread_mutex_unlock(&detached_lock);
}

int pp_pool_detached_each(int (*fn)(struct pp_pool *pool, int64_t detach_time,
				    void *arg),
			  void *arg)
{
	int ret = 0;

	pthread_mutex_lock(&detached_lock);
	for (struct pp_pool *p = detached; p && !ret; p = p->detached_next)
		ret = fn(p, p->detach_time, arg);
	pthread_mutex_unlock(&detached_lock);
	return ret;
}

/* ---- the leak report ---- */

void pool_leak_report(struct pp_pool *pool, char *buf, size_t len)
{
	struct pp_inflight in;
	char who[128];
	struct pp_strbuf b = { .buf = buf, .len = len };

	pp_pool_inflight_walk(pool, &in);
	pp_pool_inflight_finish(&in);
	buf[0] = '\0';
	for (unsigned int i = 0; i < in.nr_holders; i++) {
		const struct pp_inflight_holder *h = &in.holder[i];

		pp_holder_describe(h->code, who, sizeof(who));
		pp_strbuf_printf(&b, "%s%llu pages (%llu bytes) %s", i ? "; " : "",
				 (unsigned long long)h->pages,
				 (unsigned long long)(h->pages * in.block_bytes),
				 who);
		if (h->aged)
			pp_strbuf_printf(&b, ", the oldest for %.3f s",
					 h->oldest_s);
		else
			pp_strbuf_printf(&b, ", for how long not recorded");
	}
}
