/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_tcache.h - internal: what the allocator's inline fast paths
 * (pp_alloc_page(), pp_free_page(), pp_alloc_pages_bulk_array(),
 * pp_free_pages_bulk() in pp_page.h) see of an allocator and of the
 * calling thread's cache. Included by pp_page.h; never use it directly.
 *
 * Why inline: a call into the shared library and back costs about as
 * much as DPDK's whole inline mempool get and put (pp-bench, "2 library
 * calls"), so the common case runs in the caller, as DPDK's mempool
 * cache and this library's page_pool alloc cache do. The views are the
 * first members of the library's own structures, checked at build time
 * (lib/page/page_alloc.c), and part of its ABI: a change to them is a
 * new soname.
 *
 * The inline paths serve only the case the library marks safe for them:
 * one zone, the asymmetric handshake (pp_handshake.h: membarrier
 * available), no debug checks (debug_level 0, no ASan). Everything else,
 * and any time the cache cannot serve, goes to the library's functions.
 */
#ifndef PAGEPOOL_PP_TCACHE_H
#define PAGEPOOL_PP_TCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include <pagepool/pp_common.h>
#include <pagepool/pp_handshake.h>

struct pp_page;
struct pp_allocator;

/* The head of struct pp_allocator. */
struct pp_allocator_view_ {
	uint64_t id;                    /* unique in the process */
	unsigned int nr_zones;
	unsigned int tcache_size;       /* pages a thread's cache holds */
	const unsigned long *z0_free;   /* zone 0's free pages (relaxed) */
	unsigned long z0_wmark_low;     /* zone 0's bulk watermark */
};

/* A thread cache's statistics per zone, written only by its owner. */
struct pp_tcache_counters_ {
	uint64_t alloc_calls;
	uint64_t bulk_calls;
	uint64_t pages_allocated;
	uint64_t pages_freed;
	uint64_t alloc_failed;
};

/* One zone's part of a thread cache: a stack of order-0 pages. */
struct pp_tcache_zone_ {
	unsigned int count;             /* pages on @stack (see set_count_) */
	struct pp_page **stack;         /* top is stack[count - 1] */
	struct pp_tcache_counters_ c;
};

/* The owner's side of a thread cache and its zones: the last member of
 * the library's struct pp_tcache. */
struct pp_tcache_view_ {
	struct pp_handshake_ hs;        /* owner vs a thread draining it */
	struct pp_tcache_zone_ z[];
};

/*
 * The calling thread's cache of the allocator it used last: @id is that
 * allocator's, @tc the library's cache, @leaf the same cache when the
 * inline paths may use it, else NULL. Initial-exec TLS: one load at a
 * fixed offset from the thread pointer, also in a library that is
 * loaded with dlopen() (16 bytes of the static TLS glibc keeps spare).
 */
struct pp_tcache_memo_ {
	uint64_t id;
	void *tc;
	struct pp_tcache_view_ *leaf;
};

PP_API extern __thread struct pp_tcache_memo_ pp_tcache_memo_
	__attribute__((tls_model("initial-exec")));

static inline struct pp_tcache_view_ *
pp_tcache_leaf_(const struct pp_allocator *alloc)
{
	const struct pp_allocator_view_ *a =
		(const struct pp_allocator_view_ *)(const void *)alloc;

	return pp_tcache_memo_.id == a->id ? pp_tcache_memo_.leaf : NULL;
}

/*
 * The owner enters its cache (pp_handshake_enter_fast_()). False when a
 * drainer holds it: the caller then takes the library's path, which
 * waits.
 */
static inline bool pp_tcache_enter_(struct pp_tcache_view_ *tc)
{
	return pp_handshake_enter_fast_(&tc->hs);
}

/* A drainer that then holds the cache sees the stack as left. */
static inline void pp_tcache_exit_(struct pp_tcache_view_ *tc)
{
	pp_handshake_exit_fast_(&tc->hs);
}

/* Owner-only counters, read by other threads: whole, no RMW. */
static inline void pp_tcache_count_(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/*
 * The stack's count, written by whoever holds the cache (the owner, or a
 * drainer) and read by the statistics, which do not hold it: a relaxed
 * store, so that they read it whole (a plain store on x86).
 */
static inline void pp_tcache_set_count_(struct pp_tcache_zone_ *z,
					unsigned int n)
{
	__atomic_store_n(&z->count, n, __ATOMIC_RELAXED);
}

/* One page off the cache, or NULL: the caller asks the library. */
static inline struct pp_page *pp_tcache_alloc_one_(struct pp_allocator *alloc)
{
	struct pp_tcache_view_ *tc = pp_tcache_leaf_(alloc);
	struct pp_page *page = NULL;

	if (PP_LIKELY(tc != NULL) && PP_LIKELY(pp_tcache_enter_(tc))) {
		unsigned int n = tc->z[0].count;

		if (PP_LIKELY(n != 0)) {
			page = tc->z[0].stack[n - 1];
			pp_tcache_set_count_(&tc->z[0], n - 1);
			pp_tcache_count_(&tc->z[0].c.alloc_calls, 1);
			pp_tcache_count_(&tc->z[0].c.pages_allocated, 1);
		}
		pp_tcache_exit_(tc);
	}
	return page;
}

/* One page onto the cache; false: the caller gives it to the library. */
static inline bool pp_tcache_free_one_(struct pp_allocator *alloc,
				       struct pp_page *page)
{
	const struct pp_allocator_view_ *a =
		(const struct pp_allocator_view_ *)(const void *)alloc;
	struct pp_tcache_view_ *tc = pp_tcache_leaf_(alloc);
	bool done = false;

	if (PP_LIKELY(tc != NULL) && PP_LIKELY(page != NULL) &&
	    PP_LIKELY(pp_tcache_enter_(tc))) {
		unsigned int n = tc->z[0].count;

		if (PP_LIKELY(n < a->tcache_size)) {
			tc->z[0].stack[n] = page;
			pp_tcache_set_count_(&tc->z[0], n + 1);
			pp_tcache_count_(&tc->z[0].c.pages_freed, 1);
			done = true;
		}
		pp_tcache_exit_(tc);
	}
	return done;
}

/*
 * Copy @n page pointers; true if any was NULL. Two at a time in 16-byte
 * vectors, each pointer two 32-bit lanes that are both zero for NULL
 * (a 64-bit compare does not vectorise with plain SSE2). The caller's
 * array and a cache's stack never overlap.
 */
typedef uint32_t pp_lanes4_ __attribute__((vector_size(16)));

#if defined(__clang__)
#define PP_LANES_SWAP_PAIRS_(v) __builtin_shufflevector((v), (v), 1, 0, 3, 2)
#else
#define PP_LANES_SWAP_PAIRS_(v) \
	__builtin_shuffle((v), (pp_lanes4_){ 1, 0, 3, 2 })
#endif

static inline bool pp_tcache_copy_(struct pp_page **__restrict dst,
				   struct pp_page *const *__restrict src,
				   unsigned long n)
{
	pp_lanes4_ nulls = { 0, 0, 0, 0 };
	unsigned long i;
	bool any;

	for (i = 0; i + 2 <= n; i += 2) {
		pp_lanes4_ v, zero;

		__builtin_memcpy(&v, &src[i], sizeof(v));
		__builtin_memcpy(&dst[i], &v, sizeof(v));
		zero = (pp_lanes4_)(v == 0);
		nulls |= zero & PP_LANES_SWAP_PAIRS_(zero);
	}
	any = (nulls[0] | nulls[1] | nulls[2] | nulls[3]) != 0;
	if (i < n) {
		dst[i] = src[i];
		any = any || src[i] == NULL;
	}
	return any;
}

/*
 * @n pages into @array[0..n) from @tc (the caller's pp_tcache_leaf_(),
 * or NULL), whatever @array held, if the cache holds them and zone 0 is
 * above its bulk watermark plus @n (the bulk call's rule); returns @n,
 * or 0: the caller asks the library.
 */
static inline unsigned long
pp_tcache_take_from_(struct pp_allocator *alloc, struct pp_tcache_view_ *tc,
		     int n, struct pp_page **array)
{
	const struct pp_allocator_view_ *a =
		(const struct pp_allocator_view_ *)(const void *)alloc;
	struct pp_tcache_zone_ *z0;
	unsigned long got = 0;

	if (PP_UNLIKELY(tc == NULL || n < 2))
		return 0;
	z0 = &tc->z[0];
	if (PP_UNLIKELY(__atomic_load_n(a->z0_free, __ATOMIC_RELAXED) <
			a->z0_wmark_low + (unsigned long)n) ||
	    PP_UNLIKELY(!pp_tcache_enter_(tc)))
		return 0;
	if (PP_LIKELY(z0->count >= (unsigned int)n)) {
		unsigned int left = z0->count - (unsigned int)n;

		pp_tcache_set_count_(z0, left);
		pp_tcache_copy_(array, &z0->stack[left], (unsigned long)n);
		pp_tcache_count_(&z0->c.bulk_calls, 1);
		pp_tcache_count_(&z0->c.pages_allocated, (uint64_t)n);
		got = (unsigned long)n;
	}
	pp_tcache_exit_(tc);
	return got;
}

/* The same for the calling thread's cache: page_pool's array refill,
 * whose array is scratch space. */
static inline unsigned long pp_tcache_take_(struct pp_allocator *alloc,
					    int n, struct pp_page **array)
{
	return pp_tcache_take_from_(alloc, pp_tcache_leaf_(alloc), n, array);
}

/*
 * The array form's inline case: @n pages into an all-NULL @array, as
 * pp_tcache_take_(); an array with any entry set goes to the library,
 * which fills only the NULL entries.
 */
static inline unsigned long
pp_tcache_alloc_array_(struct pp_allocator *alloc, int n,
		       struct pp_page **array)
{
	struct pp_tcache_view_ *tc = pp_tcache_leaf_(alloc);

	/* No inline cache (several zones, the lock word, debug checks):
	 * the library, before the array is scanned for nothing. */
	if (PP_UNLIKELY(n < 2 || tc == NULL))
		return 0;
	/*
	 * The last entry first, then eight at a time, so that a partly
	 * filled array (the SUNRPC refill's holes) is turned away after a
	 * load or a few.
	 */
	if (array[n - 1] != NULL)
		return 0;
	for (int i = 0; i < n; i += 8) {
		int end = n - i < 8 ? n : i + 8;
		uintptr_t set = 0;

		for (int j = i; j < end; j++)
			set |= (uintptr_t)array[j];
		if (PP_UNLIKELY(set != 0))
			return 0;
	}
	return pp_tcache_take_from_(alloc, tc, n, array);
}

/*
 * @nr pages of @pages onto the cache when it has room for all and none
 * is NULL; false: the caller gives them to the library, which skips the
 * NULL entries (what was copied above the stack's top is free space).
 */
static inline bool pp_tcache_free_array_(struct pp_allocator *alloc,
					 struct pp_page **pages,
					 unsigned long nr)
{
	const struct pp_allocator_view_ *a =
		(const struct pp_allocator_view_ *)(const void *)alloc;
	struct pp_tcache_view_ *tc = pp_tcache_leaf_(alloc);
	bool done = false;

	if (PP_UNLIKELY(tc == NULL) || PP_UNLIKELY(!pp_tcache_enter_(tc)))
		return false;
	if (PP_LIKELY(nr <= a->tcache_size - tc->z[0].count) &&
	    PP_LIKELY(!pp_tcache_copy_(&tc->z[0].stack[tc->z[0].count], pages,
				       nr))) {
		pp_tcache_set_count_(&tc->z[0],
				     tc->z[0].count + (unsigned int)nr);
		pp_tcache_count_(&tc->z[0].c.pages_freed, nr);
		done = true;
	}
	pp_tcache_exit_(tc);
	return done;
}

#endif /* PAGEPOOL_PP_TCACHE_H */
