/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_api.c - sequences of allocator and page_pool calls, one opcode
 * byte and its operands at a time, on a 128-page arena of 4 KiB pages:
 *
 *  - pp_alloc_pages() of every order, up to one past the largest;
 *  - the bulk array call with entries already set, NULL holes and a
 *    sentinel at array[nr] that must stay untouched, nr from -2 to past
 *    the arena; the list call appending to a list that holds pages;
 *  - pp_free_pages(), pp_free_pages_bulk() with NULL entries,
 *    pp_page_ref_inc() and pp_put_page();
 *  - up to two pools (order 0-2, any refill mode, tiny or default rings):
 *    alloc, alloc_bulk, recycle_direct, put_page through the ring,
 *    put_pages_bulk, recycle_direct_bulk, release_page, and destroy
 *    with pages still out, which are returned afterwards (the last one
 *    frees the pool);
 *  - fragments of any size from 0 to past the block (pp_pool_alloc_frag()
 *    and pp_pool_alloc()), returned every way a page is, in any order,
 *    and released by mistake (the misuse path returns them).
 *
 * Each fragment is filled with a pattern of its own when it is handed
 * out and checked when it goes back: two fragments handed out over the
 * same bytes, or a page recycled while a fragment of it is out, show.
 * After every call: the pages the target holds are distinct (fragments:
 * their ranges do not overlap), and the
 * allocator's count of allocated pages is exactly what the target holds
 * plus what live pools hold (pp_pool_inflight), from the zone's counters;
 * a check opcode, and the end of the input, count it with
 * pp_allocator_check()'s walk and run pp_pool_check() on live pools. At the end everything is
 * returned, the pools destroyed with 0, and no page is allocated.
 */
#include <errno.h>

#include "fuzz_common.h"

#define ARENA_PAGES 128
#define MAX_HELD 512
#define NR_POOLS 2

/* A page the target holds: a plain block, or a page of pools[pool], or a
 * fragment of one (len bytes at off, filled with the pattern byte). */
struct held {
	struct pp_page *page;
	unsigned int order;
	int pool; /* -1: plain allocator block */
	unsigned int off, len; /* len 0: the whole page */
	uint8_t pattern;
};

struct pool_slot {
	struct pp_pool *pool;
	unsigned int order;
	bool live;          /* not destroyed */
	unsigned int out;   /* pages of it the target holds */
};

struct state {
	struct fuzz_env *env;
	struct held held[MAX_HELD];
	unsigned int nr_held;
	struct pool_slot pools[NR_POOLS];
};

static void hold_frag(struct state *st, struct pp_page *page,
		      unsigned int order, int pool, unsigned int off,
		      unsigned int len)
{
	uint8_t pattern = (uint8_t)(st->nr_held * 37 + off / 64 + 1);

	FUZZ_CHECK(page != NULL);
	FUZZ_CHECK(st->nr_held < MAX_HELD);
	FUZZ_CHECK(pp_page_ref_count(page) == 1);
	for (unsigned int i = 0; i < st->nr_held; i++) {
		const struct held *h = &st->held[i];

		if (h->page != page)
			continue;
		/* Only fragments share a page, and never bytes. */
		FUZZ_CHECK(len && h->len);
		FUZZ_CHECK(off + len <= h->off || h->off + h->len <= off);
	}
	if (pool >= 0) {
		FUZZ_CHECK(pp_page_pool(page) == st->pools[pool].pool);
		st->pools[pool].out++;
	}
	if (len)
		memset((char *)pp_page_address(page) + off, pattern, len);
	st->held[st->nr_held++] =
		(struct held){ page, order, pool, off, len, pattern };
}

static void hold(struct state *st, struct pp_page *page, unsigned int order,
		 int pool)
{
	hold_frag(st, page, order, pool, 0, 0);
}

/* Forget held[i] (the caller has returned it). */
static struct held unhold(struct state *st, unsigned int i)
{
	struct held h = st->held[i];
	const uint8_t *data = (const uint8_t *)pp_page_address(h.page) + h.off;

	/* Nobody wrote into the fragment while the target held it. */
	for (unsigned int k = 0; k < h.len; k++)
		FUZZ_CHECK(data[k] == h.pattern);

	st->held[i] = st->held[--st->nr_held];
	if (h.pool >= 0) {
		struct pool_slot *ps = &st->pools[h.pool];

		/* The last page out of a destroyed pool frees it. */
		if (!--ps->out && !ps->live)
			ps->pool = NULL;
	}
	return h;
}

/* Index of a held order-0 plain page, from @sel, or -1. */
static int pick_plain0(struct state *st, unsigned int sel)
{
	for (unsigned int k = 0; k < st->nr_held; k++) {
		unsigned int i = (sel + k) % st->nr_held;

		if (st->held[i].pool < 0 && !st->held[i].order)
			return (int)i;
	}
	return -1;
}

/* Index of a held page of pool @p, from @sel, or -1. */
static int pick_pool_page(struct state *st, int p, unsigned int sel)
{
	for (unsigned int k = 0; k < st->nr_held; k++) {
		unsigned int i = (sel + k) % st->nr_held;

		if (st->held[i].pool == p)
			return (int)i;
	}
	return -1;
}

/* The allocator's count is what we hold plus what live pools hold. */
static void check_accounting(struct state *st, bool walk)
{
	unsigned long expect = 0;

	for (unsigned int i = 0; i < st->nr_held; i++) {
		const struct held *h = &st->held[i];
		bool counted = false;

		if (h->pool >= 0 && st->pools[h->pool].live)
			continue;
		/* A page of fragments counts once. */
		for (unsigned int k = 0; k < i && h->len; k++)
			counted |= st->held[k].page == h->page;
		if (!counted)
			expect += 1ul << h->order;
	}
	for (int p = 0; p < NR_POOLS; p++) {
		struct pool_slot *ps = &st->pools[p];

		if (ps->pool && ps->live) {
			expect += (unsigned long)pp_pool_inflight(ps->pool)
				  << ps->order;
			if (walk)
				FUZZ_CHECK(pp_pool_check(ps->pool) == 0);
		}
	}
	if (walk) {
		fuzz_check_allocated(st->env, expect);
	} else {
		/* Between calls, the zone's counters (no walk: cheaper). */
		struct pp_zone_stats zs;

		FUZZ_CHECK(pp_allocator_zone_stats(st->env->alloc, 0, &zs) == 0);
		FUZZ_CHECK(zs.managed_pages - zs.free_pages - zs.thread_cache_pages ==
			   expect);
	}
}

static void op_alloc(struct state *st, struct fuzz_in *in)
{
	unsigned int max = pp_allocator_max_order(st->env->alloc);
	unsigned int order = fuzz_u8(in) % (max + 2);
	struct pp_page *page = pp_alloc_pages(st->env->alloc,
					      PP_NUMA_NODE_ANY, order);

	if (order > max)
		FUZZ_CHECK(page == NULL);
	if (page && st->nr_held < MAX_HELD)
		hold(st, page, order, -1);
	else if (page)
		pp_free_pages(st->env->alloc, page, order);
}

static void op_free(struct state *st, struct fuzz_in *in)
{
	unsigned int sel = fuzz_u8(in), how = fuzz_u8(in) % 3;
	struct held h;

	if (!st->nr_held)
		return;
	h = unhold(st, sel % st->nr_held);
	if (h.pool < 0) {
		if (how == 0)
			pp_put_page(st->env->alloc, h.page);
		else
			pp_free_pages(st->env->alloc, h.page, h.order);
		return;
	}
	/*
	 * Returned the ways a driver returns a page: direct, ring, bulk.
	 * (unhold() forgot a destroyed pool whose last page this is; the
	 * page still knows it.)
	 */
	if (how == 0)
		pp_pool_recycle_direct(pp_page_pool(h.page), h.page);
	else if (how == 1)
		pp_pool_put_page(pp_page_pool(h.page), h.page, -1u, false);
	else
		pp_pool_put_pages_bulk(pp_page_pool(h.page), &h.page, 1);
}

/* Holes, pages already there, and a sentinel past the end. */
static void op_bulk_array(struct state *st, struct fuzz_in *in)
{
	static struct pp_page sentinel_page;
	struct pp_page *sentinel = &sentinel_page;
	int nr = (int)(fuzz_u16(in) % (ARENA_PAGES + 40)) - 2;
	uint32_t mask = fuzz_u32(in);
	unsigned int n = nr > 0 ? (unsigned int)nr : 0, set = 0, filled = 0;
	struct pp_page **array = calloc(n + 1, sizeof(*array));
	struct pp_page **before = calloc(n + 1, sizeof(*before));
	unsigned long ret;

	FUZZ_CHECK(array && before);
	for (unsigned int i = 0; i < n; i++) {
		int k;

		if (!(mask >> (i % 32) & 1) || (k = pick_plain0(st, i)) < 0)
			continue;
		array[i] = unhold(st, (unsigned int)k).page;
		set++;
	}
	array[n] = sentinel;
	memcpy(before, array, (n + 1) * sizeof(*array));
	ret = pp_alloc_pages_bulk_array(st->env->alloc, nr, array);
	FUZZ_CHECK(array[n] == sentinel);
	if (nr <= 0) {
		FUZZ_CHECK(ret == 0);
	} else {
		for (unsigned int i = 0; i < n; i++) {
			if (before[i])
				FUZZ_CHECK(array[i] == before[i]);
			filled += array[i] != NULL;
		}
		FUZZ_CHECK(ret == filled);
		FUZZ_CHECK(ret >= set && ret <= n);
	}
	for (unsigned int i = 0; i < n; i++) {
		if (!array[i])
			continue;
		FUZZ_CHECK(array[i]->order == 0);
		if (st->nr_held < MAX_HELD)
			hold(st, array[i], 0, -1);
		else
			pp_free_page(st->env->alloc, array[i]);
	}
	free(before);
	free(array);
}

static void op_bulk_list(struct state *st, struct fuzz_in *in)
{
	int nr = (int)(fuzz_u16(in) % (ARENA_PAGES + 40)) - 2;
	unsigned int pre = fuzz_u8(in) % 8, i;
	struct pp_page *first[8];
	struct pp_page_list list;
	struct pp_page *page;
	unsigned long ret;

	pp_page_list_init(&list);
	for (i = 0; i < pre; i++) {
		int k = pick_plain0(st, i);

		if (k < 0)
			break;
		first[i] = unhold(st, (unsigned int)k).page;
		pp_page_list_add_tail(&list, first[i]);
	}
	pre = i;
	ret = pp_alloc_pages_bulk_list(st->env->alloc, nr, &list);
	if (nr <= 0)
		FUZZ_CHECK(ret == 0);
	FUZZ_CHECK(ret <= (nr > 0 ? (unsigned long)nr : 0));
	FUZZ_CHECK(list.count == pre + ret);
	for (i = 0; (page = pp_page_list_pop(&list)); i++) {
		if (i < pre)
			FUZZ_CHECK(page == first[i]);
		FUZZ_CHECK(page->order == 0);
		if (st->nr_held < MAX_HELD)
			hold(st, page, 0, -1);
		else
			pp_free_page(st->env->alloc, page);
	}
	FUZZ_CHECK(i == pre + ret);
}

static void op_free_bulk(struct state *st, struct fuzz_in *in)
{
	unsigned int n = fuzz_u8(in) % 80, mask = fuzz_u8(in), i;
	struct pp_page *pages[80];

	for (i = 0; i < n; i++) {
		int k = (mask >> (i % 8) & 1) ? -1 : pick_plain0(st, i);

		pages[i] = k < 0 ? NULL : unhold(st, (unsigned int)k).page;
	}
	pp_free_pages_bulk(st->env->alloc, pages, n);
}

static void op_share(struct state *st, struct fuzz_in *in)
{
	unsigned int sel = fuzz_u8(in);
	int k = pick_plain0(st, sel);
	struct pp_page *page;

	if (k < 0)
		return;
	page = st->held[k].page;
	pp_page_ref_inc(page);
	FUZZ_CHECK(pp_page_ref_count(page) == 2);
	pp_put_page(st->env->alloc, page);
	FUZZ_CHECK(pp_page_ref_count(page) == 1);
}

static void op_pool_create(struct state *st, struct fuzz_in *in)
{
	static const unsigned int sizes[] = { 0, 1, 2, 64, 100 };
	int p = fuzz_u8(in) % NR_POOLS;
	struct pool_slot *ps = &st->pools[p];
	uint8_t b = fuzz_u8(in);
	struct pp_pool_params pp = {
		.sz = sizeof(pp),
		.allocator = st->env->alloc,
		.order = b % 3,
		.pool_size = sizes[(b >> 2) % 5],
		.nid = PP_NUMA_NODE_ANY,
		.offset = (b & 0x80) ? 256 : 0,
		.refill = (enum pp_pool_refill)((b >> 5) % 3),
		.name = "fuzz",
	};

	if (ps->pool)
		return;
	ps->pool = pp_pool_create(&pp);
	FUZZ_CHECK(ps->pool != NULL);
	ps->order = pp.order;
	ps->live = true;
	ps->out = 0;
}

static void op_pool_alloc(struct state *st, struct fuzz_in *in)
{
	int p = fuzz_u8(in) % NR_POOLS;
	unsigned int n = fuzz_u8(in) % 70, got, i;
	struct pool_slot *ps = &st->pools[p];
	struct pp_page *pages[70];

	if (!ps->pool || !ps->live)
		return;
	if (n > MAX_HELD - st->nr_held)
		n = MAX_HELD - st->nr_held;
	if (n == 1) {
		pages[0] = pp_pool_alloc_pages(ps->pool);
		got = pages[0] != NULL;
	} else {
		got = pp_pool_alloc_bulk(ps->pool, pages, n);
	}
	FUZZ_CHECK(got <= n);
	for (i = 0; i < got; i++) {
		FUZZ_CHECK(pages[i]->order == ps->order);
		hold(st, pages[i], ps->order, p);
	}
}

/*
 * Several pages of one pool back in one call, from "another thread", or
 * from the owner (this thread) with pp_pool_recycle_direct_bulk().
 */
static void op_pool_put_bulk(struct state *st, struct fuzz_in *in)
{
	int p = fuzz_u8(in) % NR_POOLS;
	unsigned int n = fuzz_u8(in) % 70, i;
	bool direct = fuzz_u8(in) & 1;
	/* Valid until its last page is back, even once destroyed. */
	struct pp_pool *pool = st->pools[p].pool;
	struct pp_page *pages[70];

	for (i = 0; i < n; i++) {
		int k = pick_pool_page(st, p, i);

		if (k < 0)
			break;
		pages[i] = unhold(st, (unsigned int)k).page;
	}
	if (i && direct)
		pp_pool_recycle_direct_bulk(pool, pages, i);
	else if (i)
		pp_pool_put_pages_bulk(pool, pages, i);
}

static void op_pool_release(struct state *st, struct fuzz_in *in)
{
	int p = fuzz_u8(in) % NR_POOLS;
	int k = pick_pool_page(st, p, fuzz_u8(in));
	struct pool_slot *ps = &st->pools[p];
	struct pp_pool *pool = ps->pool;
	struct held h;

	if (k < 0 || !ps->live)
		return;
	h = unhold(st, (unsigned int)k);
	pp_pool_release_page(pool, h.page);
	/* A fragment cannot leave: the misuse is reported, the fragment
	 * returned instead; unless it was the last out, alone in its page,
	 * which leaves as the page. */
	if (h.len && pp_page_pool(h.page))
		return;
	FUZZ_CHECK(pp_page_pool(h.page) == NULL);
	hold(st, h.page, h.order, -1);
}

/* A fragment, of any size from 0 to past the block, either call. */
static void op_pool_frag(struct state *st, struct fuzz_in *in)
{
	int p = fuzz_u8(in) % NR_POOLS;
	struct pool_slot *ps = &st->pools[p];
	unsigned int block = PP_PAGE_SIZE << ps->order;
	unsigned int want = fuzz_u16(in) % (block + 2);
	unsigned int size = want, off = ~0u;
	struct pp_page *page;

	if (!ps->pool || !ps->live || st->nr_held == MAX_HELD)
		return;
	if (want & 1) {
		page = pp_pool_alloc(ps->pool, &off, &size);
		if (want > block) {
			FUZZ_CHECK(page == NULL);
			return;
		}
		if (!page)
			return; /* dry */
		FUZZ_CHECK(size >= want && off + size <= block);
		/* More than half a block: a whole one. */
		if (want > block / 2) {
			FUZZ_CHECK(off == 0 && size == block);
			hold(st, page, ps->order, p);
			return;
		}
	} else {
		page = pp_pool_alloc_frag(ps->pool, &off, size);
		if (!want || want > block) {
			FUZZ_CHECK(page == NULL);
			return;
		}
		if (!page)
			return;
	}
	FUZZ_CHECK(off % PP_CACHE_LINE == 0 && off + want <= block);
	hold_frag(st, page, ps->order, p, off, want);
}

static void op_pool_destroy(struct state *st, struct fuzz_in *in)
{
	int p = fuzz_u8(in) % NR_POOLS;
	struct pool_slot *ps = &st->pools[p];
	int ret;

	if (!ps->pool || !ps->live)
		return;
	ret = pp_pool_destroy(ps->pool);
	FUZZ_CHECK(ret == (ps->out ? -EBUSY : 0));
	ps->live = false;
	if (!ps->out)
		ps->pool = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state st;
	struct fuzz_in in = { data, size };
	unsigned int steps = 0;

	memset(&st, 0, sizeof(st));
	st.env = fuzz_env_get(ARENA_PAGES * PP_PAGE_SIZE);
	while (in.left && steps++ < 256) {
		switch (fuzz_u8(&in) % 14) {
		case 0: op_alloc(&st, &in); break;
		case 1: op_free(&st, &in); break;
		case 2: op_bulk_array(&st, &in); break;
		case 3: op_bulk_list(&st, &in); break;
		case 4: op_free_bulk(&st, &in); break;
		case 5: op_share(&st, &in); break;
		case 6: op_pool_create(&st, &in); break;
		case 7: op_pool_alloc(&st, &in); break;
		case 8: op_free(&st, &in); break;
		case 9: op_pool_put_bulk(&st, &in); break;
		case 10: op_pool_release(&st, &in); break;
		case 11: op_pool_destroy(&st, &in); break;
		case 12: op_pool_frag(&st, &in); break;
		default: check_accounting(&st, true); continue;
		}
		check_accounting(&st, false);
	}

	/* Everything back: pools first destroyed, then their pages return. */
	check_accounting(&st, true);
	for (int p = 0; p < NR_POOLS; p++) {
		struct pool_slot *ps = &st.pools[p];

		if (ps->pool && ps->live) {
			FUZZ_CHECK(pp_pool_destroy(ps->pool) ==
				   (ps->out ? -EBUSY : 0));
			ps->live = false;
			if (!ps->out)
				ps->pool = NULL;
		}
	}
	while (st.nr_held) {
		struct held h = unhold(&st, 0);

		if (h.pool < 0)
			pp_free_pages(st.env->alloc, h.page, h.order);
		else
			pp_pool_put_page(pp_page_pool(h.page), h.page, -1u,
					 false);
	}
	pp_allocator_drain_thread(st.env->alloc);
	fuzz_check_allocated(st.env, 0);
	return 0;
}
