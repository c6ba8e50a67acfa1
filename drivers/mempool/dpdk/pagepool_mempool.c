/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mempool.c - the "pagepool" rte_mempool ops driver: any DPDK
 * application loads it with -d and selects it with
 * --mbuf-pool-ops-name=pagepool (or rte_mempool_set_ops_byname()).
 *
 * The object model (doc/dpdk-mempool.md has the long form): every mempool
 * object occupies one 4 KiB page of a pagepool arena, at a cache-line
 * colour offset inside it. A free object is a free page of the pool's
 * own pagepool allocator, and that allocator's thread caches are the
 * driver's per-lcore caches: enqueue converts objects to pages and calls
 * pp_free_pages_bulk(), dequeue calls pp_alloc_pages_bulk_array() and
 * converts the pages back, with no cache of the driver's own in between.
 * Object pointer and page descriptor convert with a shift and a mask,
 * because an arena's descriptors are one dense array (pp_page.h) and
 * this pool's arena has one zone. The caches are sized from the pool
 * (cache_sizes_for()); a thread that finds the pool dry drains every
 * other thread's cache in the allocator's single-page path, so a get
 * fails only when no free object is left anywhere.
 *
 * The pool owns: one arena (2 MiB pages, 4 KiB as a fallback), one
 * allocator over it, one DMA domain that gives each page its IOVA, and a
 * DPDK external malloc heap made of the arena, with those IOVAs. DPDK's
 * rte_mempool_populate_default() reserves the pool's memzone from that
 * heap, so DPDK's own bookkeeping (memory chunks, memsegs, VFIO mappings)
 * describes the very pages the objects live in. Arena pages that hold no
 * object stay allocated to the driver, so that the allocator's free
 * count is exactly the pool's.
 *
 * Foreign memory. The mempool ops contract lets any caller populate the
 * pool with any memory: rte_mempool_populate_anon() (anonymous mmap),
 * rte_mempool_populate_iova() / _virt() with the caller's chunk, with a
 * real IOVA or RTE_BAD_IOVA. Such a chunk is not arena memory, so its
 * objects cannot be pages of the allocator. populate slices it with
 * DPDK's own helper (rte_mempool_op_populate_helper(), as ring_mp_mc
 * does) and those objects, when free, sit in a second store: a ring of
 * object pointers that holds every object of the pool (created at the
 * first foreign chunk). A put sorts objects by address (inside the arena
 * or not); a get takes what the allocator has and the rest from the
 * ring. A pool populated from the arena alone has no ring and pays one
 * NULL test per call. Rejected: refusing foreign chunks (what the driver
 * did; DPDK's own mempool_autotest populates with anonymous memory) and
 * copying the chunk's objects into arena pages (their addresses are the
 * caller's).
 *
 * State is process-local (malloc, pointers into this process's mappings):
 * secondary processes are not supported, and every op says so and fails.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <pagepool/pagepool.h>

/* The fault seam's heap wrappers (libc's calls unless the plugin is built
 * with -Dfault_injection=true): each allocation below is a site. */
#include "pp_os_fault.h"

#define PAGEPOOL_OPS_NAME "pagepool"

/*
 * Pages per bulk call of enqueue and dequeue, in a scratch array on the
 * stack (8 KiB): DPDK's biggest cache refill, a full cache (512) plus a
 * request up to the same size, which it serves through the cache, so
 * that every call a mempool cache makes is one allocator call. Only an
 * application that gets or puts more in one call (with no cache) takes
 * several, or for a get, a scratch array on the heap.
 */
#define SCRATCH_MAX (2 * RTE_MEMPOOL_CACHE_MAX_SIZE)

/*
 * The scratch array of a get or put of up to SMALL_MAX objects (a burst):
 * 512 bytes of stack. Not SCRATCH_MAX for all: a frame of 8 KiB puts the
 * array just over 8 KiB below the caller's, where its burst array
 * usually is (testpmd's), so that loads from one and stores to the other
 * are a multiple of 4 KiB apart plus a little, which the CPU's
 * store-forwarding check (on the low 12 address bits) takes for a
 * dependency.
 */
#define SMALL_MAX 64

/* Pages per bulk free when the whole arena goes back at teardown. */
#define CHUNK 64

/*
 * Sizing of the allocator's thread caches (cache_sizes_for()). A cache
 * holds the pool's size over twice the EAL's lcores, so that the caches
 * of all lcores together hold at most half the pool and lcores rarely
 * have to drain each other; at most TCACHE_MAX, twice DPDK's largest
 * cache flush (1.5 x RTE_MEMPOOL_CACHE_MAX_SIZE = 768, rounded up to a
 * power of two), so that a flush lands in the cache without a trip to
 * the zone; and at least TCACHE_MIN, since a smaller cache only turns
 * calls into zone-lock round trips (the allocator has no cache-less
 * mode: 0 means its default, 512).
 */
#define TCACHE_MAX 2048
#define TCACHE_MIN 16
/* The allocator's default batch, the kernel's pcp batch. */
#define TCACHE_BATCH 64

#define PMP_LOG(level, fmt, ...)                                            \
	RTE_LOG(level, MEMPOOL, "pagepool: " fmt "\n", ##__VA_ARGS__)

/*
 * The longest external heap name, with its NUL: DPDK's internal
 * RTE_HEAP_NAME_MAX_LEN (malloc_heap.h), which no public header exports.
 */
#define HEAP_NAME_LEN 32

/*
 * Entries of the colour table (see obj_offset()): a power of two, so the
 * lookup is a mask, and four times the 64 sets of a 32 KiB 8-way L1, so
 * that the wrap-around of a colour count that does not divide it leaves
 * the colours at most one apart in use.
 */
#define COLOUR_SLOTS 256

struct pagepool_mp {
	/* Hot: read by every enqueue and dequeue. */
	uintptr_t base;              /* arena base: page i at base + i*4K */
	struct pp_page *first;       /* descriptor of page 0 */
	struct pp_allocator *alloc;
	struct rte_ring *foreign;    /* free foreign objects; NULL: none yet */
	uint32_t nr_pages;           /* pages in the arena */
	uint32_t nr_colours;         /* see obj_offset() */
	/* Object offset in page i: obj_off[i % COLOUR_SLOTS]; read by
	 * every dequeue, for each page it turns into an object. */
	uint16_t obj_off[COLOUR_SLOTS];

	/* Cold: setup and teardown. */
	struct pp_arena *arena;
	struct pp_dma *dma;
	uint32_t nr_given;           /* pages populated as objects */
	uint32_t nr_foreign;         /* objects populated from foreign chunks */
	uint32_t teardown_misses;    /* failed gets while DPDK empties the pool */
	int app_socket;              /* mp->socket_id while the heap's is lent */
	bool heap_added;             /* the arena is in the external heap */
	char heap_name[HEAP_NAME_LEN];
};

/*
 * Set by the first successful alloc in this process. A secondary process
 * never gets here through alloc (it is refused), so the flag is its
 * warning that mp->pool_data points into another process's heap.
 */
static bool pools_here;

static bool ops_usable(const char *op)
{
	static bool said;

	if (PP_LIKELY(pools_here))
		return true;
	if (!said) {
		said = true;
		PMP_LOG(ERR, "%s on a pool this process did not create: pagepool pools work only in the process that created them (no multi-process support); use ring_mp_mc across processes",
			op);
	}
	return false;
}

/*
 * Where in page @idx the object (the element, after its header) starts.
 * Every object at the same page offset would put every mbuf in the same
 * few L1 sets (4 KiB apart alias in a 32 KiB 8-way cache), so objects
 * are coloured: page i's object starts (i mod colours) cache lines in,
 * with as many colours as the slack behind the object allows, up to the
 * 64 sets (28 for default mbufs). The forwarder's frames are coloured
 * the same way (pp_net_buf_color()). The count is rarely a power of two,
 * so the offsets come from a small table instead of a division.
 */
static inline uintptr_t obj_offset(const struct pagepool_mp *p, uintptr_t idx)
{
	return p->obj_off[idx & (COLOUR_SLOTS - 1)];
}

/* Fill the colour table for objects of @obj_total bytes with a header of
 * @hdr bytes. */
static void colours_init(struct pagepool_mp *p, size_t obj_total, size_t hdr)
{
	size_t lines = ((PP_PAGE_SIZE - obj_total) >> RTE_CACHE_LINE_SIZE_LOG2) + 1;

	p->nr_colours = lines < 64 ? (uint32_t)lines : 64;
	for (unsigned int i = 0; i < COLOUR_SLOTS; i++)
		p->obj_off[i] = (uint16_t)(((i % p->nr_colours)
					    << RTE_CACHE_LINE_SIZE_LOG2) + hdr);
}

static inline void *page_to_obj(const struct pagepool_mp *p,
				const struct pp_page *page)
{
	uintptr_t idx = (uintptr_t)(page - p->first);

	return (void *)(p->base + (idx << PP_PAGE_SHIFT) + obj_offset(p, idx));
}

static inline struct pp_page *obj_to_page(const struct pagepool_mp *p,
					  const void *obj)
{
	return p->first + (((uintptr_t)obj - p->base) >> PP_PAGE_SHIFT);
}

/* Is @obj in the arena (a page of the allocator) rather than foreign? */
static inline bool obj_in_arena(const struct pagepool_mp *p, const void *obj)
{
	return (uintptr_t)obj - p->base < (uintptr_t)p->nr_pages << PP_PAGE_SHIFT;
}

/* Debug builds: is @obj an object of this pool (right page, right offset)? */
static bool obj_valid(const struct pagepool_mp *p, const void *obj)
{
	uintptr_t off = (uintptr_t)obj - p->base;

	return off < (uintptr_t)p->nr_pages << PP_PAGE_SHIFT &&
	       (off & (PP_PAGE_SIZE - 1)) ==
		       obj_offset(p, off >> PP_PAGE_SHIFT);
}

/*
 * Foreign objects into their ring. Cannot fail for a correct caller: the
 * ring has room for every object the pool has (foreign_ring_create()),
 * so only objects put twice can find it full; those are dropped, said.
 */
static void foreign_put(struct rte_mempool *mp, struct pagepool_mp *p,
			void *const *objs, unsigned int n)
{
	unsigned int done = rte_ring_mp_enqueue_burst(p->foreign, objs, n, NULL);

	if (PP_UNLIKELY(done < n))
		PMP_LOG(ERR, "pool '%s': %u objects put while every object was already free; dropped: an object was put back twice",
			mp->name, n - done);
}

/*
 * Free @n objects: arena objects' pages into the allocator (the calling
 * thread's cache takes them), foreign objects into the ring. Only pools
 * with foreign objects and debug builds get here: the others convert
 * without looking at each pointer.
 */
static __attribute__((noinline)) void
objs_sort_free(struct rte_mempool *mp, struct pagepool_mp *p,
	       void *const *obj_table, struct pp_page **pages, unsigned int n)
{
	void *foreign[SCRATCH_MAX];
	unsigned int nf = 0;

	for (unsigned int i = 0; i < n; i++) {
		pages[i] = NULL;
		if (p->foreign && !obj_in_arena(p, obj_table[i])) {
			foreign[nf++] = obj_table[i];
			continue;
		}
		if (PP_DEBUG && PP_UNLIKELY(!obj_valid(p, obj_table[i]))) {
			PMP_LOG(ERR, "put of %p into pool '%s', which does not own it; ignored: put objects back into the pool they came from",
				obj_table[i], mp->name);
			continue;
		}
		pages[i] = obj_to_page(p, obj_table[i]);
	}
	/* The NULL entries (foreign objects, rejects) are skipped. */
	pp_free_pages_bulk(p->alloc, pages, n);
	if (nf)
		foreign_put(mp, p, foreign, nf);
}

/*
 * Put @n objects, in bulk frees of up to @max pages through @pages.
 * Inlined into the two scratch sizes below.
 */
static inline void objs_put(struct rte_mempool *mp, struct pagepool_mp *p,
			    void *const *obj_table, unsigned int n,
			    struct pp_page **pages, unsigned int max)
{
	while (n) {
		unsigned int c = n < max ? n : max;

		if (PP_UNLIKELY(PP_DEBUG || p->foreign)) {
			objs_sort_free(mp, p, obj_table, pages, c);
		} else {
			for (unsigned int i = 0; i < c; i++)
				pages[i] = obj_to_page(p, obj_table[i]);
			pp_free_pages_bulk(p->alloc, pages, c);
		}
		obj_table += c;
		n -= c;
	}
}

/* A burst: a scratch array of SMALL_MAX (see there). */
static __attribute__((noinline)) void
enqueue_small(struct rte_mempool *mp, void *const *obj_table, unsigned int n)
{
	struct pp_page *pages[SMALL_MAX];

	objs_put(mp, mp->pool_data, obj_table, n, pages, SMALL_MAX);
}

/* A mempool cache's flush, or more: SCRATCH_MAX at a time. */
static __attribute__((noinline)) void
enqueue_big(struct rte_mempool *mp, void *const *obj_table, unsigned int n)
{
	struct pp_page *pages[SCRATCH_MAX];

	objs_put(mp, mp->pool_data, obj_table, n, pages, SCRATCH_MAX);
}

/*
 * enqueue: never fails. The objects become pages, a subtraction and a
 * shift each, and go to the allocator in bulk frees; the calling
 * thread's cache takes them and, when full, gives a batch to the zone.
 * A put of one (rte_pktmbuf_free() without a mempool cache) is the
 * single-page free, and this function stays small enough for it to save
 * no register: the scratch arrays and loops are in the callees.
 */
static int pagepool_enqueue(struct rte_mempool *mp, void *const *obj_table,
			    unsigned int n)
{
	const struct pagepool_mp *p;

	if (PP_UNLIKELY(!ops_usable("enqueue")))
		return -ENOTSUP;
	p = mp->pool_data;
	if (n != 1 || PP_DEBUG || p->foreign != NULL) {
		if (n <= SMALL_MAX)
			enqueue_small(mp, obj_table, n);
		else
			enqueue_big(mp, obj_table, n);
		return 0;
	}
	pp_free_page(p->alloc, obj_to_page(p, obj_table[0]));
	return 0;
}

/*
 * Fill @pages[0..n) completely, or return fewer. The bulk call returns
 * what the thread cache and one zone refill give; called again it fills
 * only the NULL entries, and once a single page is missing (or the zone
 * is below its watermark) it takes the single-page path, which drains
 * every thread's cache before it gives up. So the loop stops short only
 * when no free page is left anywhere.
 */
static unsigned int take_pages(struct pp_allocator *alloc,
			       struct pp_page **pages, unsigned int n)
{
	unsigned long got, prev;

	memset(pages, 0, n * sizeof(*pages));
	got = pp_alloc_pages_bulk_array(alloc, (int)n, pages);
	while (PP_UNLIKELY(got < n)) {
		prev = got;
		got = pp_alloc_pages_bulk_array(alloc, (int)n, pages);
		if (got == prev)
			break;
	}
	return (unsigned int)got;
}

/* Move the non-NULL entries of @pages[0..n) to the front; returns how
 * many there are. */
static unsigned int pages_compact(struct pp_page **pages, unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++)
		if (pages[i])
			pages[k++] = pages[i];
	return k;
}

/*
 * rte_mempool_free() first empties the pool with one-object dequeues, one
 * per object it populated, and only then calls the free op; the objects
 * the application still holds show up as failed dequeues. The pool has
 * left DPDK's list of pools by then, which is how a miss is told from an
 * ordinary empty pool. Cold path: a failed get only.
 */
static void count_teardown_miss(struct rte_mempool *mp, struct pagepool_mp *p,
				unsigned int n)
{
	if (n == 1 && rte_mempool_lookup(mp->name) != mp)
		p->teardown_misses++;
}

/*
 * @n objects into @obj_table from @pages[0..n), which the allocator
 * filled. Written only now, on success (see pagepool_dequeue()).
 */
static inline void pages_to_objs(const struct pagepool_mp *p,
				 struct pp_page *const *pages,
				 void **obj_table, unsigned int n)
{
	/*
	 * page_to_obj() with the pool's fields in registers: DPDK builds
	 * with -fno-strict-aliasing, so each store to @obj_table could
	 * change *p as far as the compiler knows, and it would load them
	 * again for every object.
	 */
	const uintptr_t base = p->base;
	const struct pp_page *first = p->first;
	const uint16_t *obj_off = p->obj_off;

	for (unsigned int i = 0; i < n; i++) {
		uintptr_t idx = (uintptr_t)(pages[i] - first);

		obj_table[i] = (void *)(base + (idx << PP_PAGE_SHIFT) +
					obj_off[idx & (COLOUR_SLOTS - 1)]);
	}
}

/*
 * A pool with foreign objects: what the allocator has, the rest from the
 * ring, all or nothing. The ring's part goes straight to the tail of
 * @obj_table (a failed ring dequeue writes nothing), the pages' after
 * it succeeded.
 */
static __attribute__((noinline)) int
dequeue_mixed(struct pagepool_mp *p, void **obj_table,
	      struct pp_page **pages, unsigned int n)
{
	unsigned int got;

	take_pages(p->alloc, pages, n);
	got = pages_compact(pages, n);
	if (got < n && rte_ring_mc_dequeue_bulk(p->foreign, obj_table + got,
						n - got, NULL) == 0) {
		pp_free_pages_bulk(p->alloc, pages, got);
		return -ENOBUFS;
	}
	pages_to_objs(p, pages, obj_table, got);
	return 0;
}

/*
 * dequeue: all or nothing, as rte_mempool_ops_dequeue_bulk() requires:
 * when fewer than @n objects can be had anywhere (the allocator's zone
 * and every thread's cache, and in a pool with foreign objects the
 * ring), nothing is taken and the call returns -ENOBUFS (the ring
 * driver's code; rte_mempool_get_bulk() turns it into -ENOENT). A failed
 * call leaves @obj_table untouched: rte_mempool_do_generic_get() refills
 * its cache in place and, when that fails, counts the old entries as
 * still there. So the pages gather in a scratch array and become objects
 * in @obj_table only once all are there: on the stack up to SCRATCH_MAX,
 * on the heap above that (only for applications that get more than that
 * in one call).
 */
static inline int objs_get(struct rte_mempool *mp, struct pagepool_mp *p,
			   void **obj_table, unsigned int n,
			   struct pp_page **pages)
{
	unsigned int got;
	int ret = 0;

	if (PP_UNLIKELY(p->foreign != NULL)) {
		ret = dequeue_mixed(p, obj_table, pages, n);
	} else {
		got = take_pages(p->alloc, pages, n);
		if (PP_LIKELY(got == n)) {
			pages_to_objs(p, pages, obj_table, n);
		} else {
			/* NULL entries are skipped by the bulk free. */
			pp_free_pages_bulk(p->alloc, pages, n);
			ret = -ENOBUFS;
		}
	}
	if (PP_UNLIKELY(ret))
		count_teardown_miss(mp, p, n);
	return ret;
}

/* A burst: a scratch array of SMALL_MAX (see there). */
static __attribute__((noinline)) int
dequeue_small(struct rte_mempool *mp, void **obj_table, unsigned int n)
{
	struct pp_page *pages[SMALL_MAX];

	return objs_get(mp, mp->pool_data, obj_table, n, pages);
}

/* A mempool cache's refill, or more. */
static __attribute__((noinline)) int
dequeue_big(struct rte_mempool *mp, void **obj_table, unsigned int n)
{
	struct pp_page *stack[SCRATCH_MAX], **pages = stack;
	int ret;

	if (PP_UNLIKELY(n > SCRATCH_MAX)) {
		/* DPDK's get reports the error itself. */
		pages = pp_os_malloc(n * sizeof(*pages));
		if (!pages)
			return -ENOMEM;
	}
	ret = objs_get(mp, mp->pool_data, obj_table, n, pages);
	if (PP_UNLIKELY(pages != stack))
		free(pages);
	return ret;
}

/*
 * A get of one object (rte_pktmbuf_alloc() without a mempool cache): the
 * single-page call, which the bulk call would end in anyway; it too
 * drains every thread's cache before it fails.
 */
static int pagepool_dequeue(struct rte_mempool *mp, void **obj_table,
			    unsigned int n)
{
	struct pagepool_mp *p;
	struct pp_page *page;

	if (PP_UNLIKELY(!ops_usable("dequeue")))
		return -ENOTSUP;
	p = mp->pool_data;
	if (n != 1 || p->foreign != NULL) {
		if (n <= SMALL_MAX)
			return dequeue_small(mp, obj_table, n);
		return dequeue_big(mp, obj_table, n);
	}
	page = pp_alloc_page(p->alloc);
	if (PP_UNLIKELY(!page)) {
		count_teardown_miss(mp, p, 1);
		return -ENOBUFS;
	}
	obj_table[0] = page_to_obj(p, page);
	return 0;
}

/*
 * Exact when no other thread is inside enqueue or dequeue: the zone's
 * free pages plus every thread cache, each read under its lock, plus
 * the foreign ring. Arena pages without an object stay allocated to the
 * driver and so are not counted.
 */
static unsigned int pagepool_get_count(const struct rte_mempool *mp)
{
	const struct pagepool_mp *p;
	struct pp_zone_stats s;
	unsigned long n = 0;

	if (!ops_usable("get_count"))
		return 0;
	p = mp->pool_data;
	for (unsigned int z = 0; z < pp_allocator_zone_count(p->alloc); z++)
		if (pp_allocator_zone_stats(p->alloc, z, &s) == 0)
			n += s.free_pages + s.thread_cache_pages;
	if (p->foreign)
		n += rte_ring_count(p->foreign);
	return (unsigned int)n;
}

/*
 * The IOVA domain that matches the EAL's: physical addresses when the EAL
 * runs with IOVA as PA, the virtual address otherwise. These are the
 * IOVAs the heap's memsegs carry, so under VFIO the EAL maps each arena
 * page into its container at exactly the address the objects report
 * (it maps every external heap segment when the segment is added).
 */
static enum pp_iova_mode dma_mode_for_eal(void)
{
	return rte_eal_iova_mode() == RTE_IOVA_PA ? PP_IOVA_PA : PP_IOVA_VA;
}

/* Give every page of the arena back to the allocator, by index. */
static void pages_release_all(struct pagepool_mp *p)
{
	struct pp_page *pages[CHUNK];

	for (uint32_t i = 0; i < p->nr_pages; i += CHUNK) {
		uint32_t c = p->nr_pages - i < CHUNK ? p->nr_pages - i : CHUNK;

		for (uint32_t j = 0; j < c; j++)
			pages[j] = p->first + i + j;
		pp_free_pages_bulk(p->alloc, pages, c);
	}
}

/*
 * Take every page of the arena out of the allocator: a page becomes a
 * free object only when populate puts an object on it. Fails, with every
 * page given back, when the arena is short or its descriptors are not
 * the one dense array the conversions assume.
 */
static int pages_take_all(struct rte_mempool *mp, struct pagepool_mp *p)
{
	struct pp_page **taken = pp_os_malloc(p->nr_pages * sizeof(*taken));
	uint32_t n = 0;
	int err = 0;

	if (!taken) {
		PMP_LOG(ERR, "pool '%s': out of memory for the list of its %u pages",
			mp->name, p->nr_pages);
		return -ENOMEM;
	}
	while (n < p->nr_pages) {
		struct pp_page *page = pp_alloc_page(p->alloc);

		if (!page) {
			PMP_LOG(ERR, "pool '%s': the arena gave %u of its %u pages",
				mp->name, n, p->nr_pages);
			err = -ENOMEM;
			break;
		}
		taken[n++] = page;
		if (obj_to_page(p, pp_page_address(page)) != page) {
			PMP_LOG(ERR, "pool '%s': page descriptors are not one dense array; this pagepool is not the one the driver was built for",
				mp->name);
			err = -EINVAL;
			break;
		}
	}
	if (err)
		pp_free_pages_bulk(p->alloc, taken, n);
	free(taken);
	return err;
}

/*
 * Make the arena a DPDK external malloc heap named after the pool, each
 * arena page with the IOVA pagepool's DMA domain gives it, and lend the
 * heap's socket id to the pool: rte_mempool_populate_default() reserves
 * the objects' memzone on mp->socket_id. populate hands the
 * application's socket id back once the pool is full.
 */
static int heap_add(struct rte_mempool *mp, struct pagepool_mp *p)
{
	size_t pg = pp_arena_page_size(p->arena);
	size_t len = pp_arena_size(p->arena);
	unsigned int n = (unsigned int)(len / pg), order = 0;
	rte_iova_t *iovas;
	int socket, err = 0;

	while ((PP_PAGE_SIZE << order) < pg)
		order++;
	iovas = pp_os_malloc(n * sizeof(*iovas));
	if (!iovas) {
		PMP_LOG(ERR, "pool '%s': out of memory for the IOVAs of %u arena pages",
			mp->name, n);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < n && !err; i++) {
		uint64_t iova;

		err = pp_dma_map_page(p->dma, (char *)p->base + i * pg, order,
				      PP_DMA_BIDIRECTIONAL, &iova);
		iovas[i] = iova;
	}
	if (err) {
		PMP_LOG(ERR, "pool '%s': no IOVA for an arena page (%s)",
			mp->name, strerror(-err));
		goto out_free;
	}
	/* Mempool names are at most 28 characters: this fits the 32. */
	snprintf(p->heap_name, sizeof(p->heap_name), "pp:%s", mp->name);
	if (rte_malloc_heap_create(p->heap_name) != 0) {
		err = -rte_errno;
		PMP_LOG(ERR, "pool '%s': cannot create external heap '%s' (%s); DPDK allows %d heaps in all: free other pools",
			mp->name, p->heap_name, rte_strerror(rte_errno),
			RTE_MAX_HEAPS);
		goto out_free;
	}
	if (rte_malloc_heap_memory_add(p->heap_name, (void *)p->base, len,
				       iovas, n, pg) != 0) {
		err = -rte_errno;
		PMP_LOG(ERR, "pool '%s': cannot add the arena to heap '%s' (%s); check RLIMIT_MEMLOCK and the VFIO DMA entry limit when devices use VFIO",
			mp->name, p->heap_name, rte_strerror(rte_errno));
		rte_malloc_heap_destroy(p->heap_name);
		goto out_free;
	}
	socket = rte_malloc_heap_get_socket(p->heap_name);
	p->heap_added = true;
	p->app_socket = mp->socket_id;
	mp->socket_id = socket;
out_free:
	free(iovas);
	return err;
}

/* Undo heap_add; fails (and leaves it) while DPDK memory is allocated
 * from it. */
static int heap_remove(struct rte_mempool *mp, struct pagepool_mp *p)
{
	if (!p->heap_added)
		return 0;
	mp->socket_id = p->app_socket;
	if (rte_malloc_heap_memory_remove(p->heap_name, (void *)p->base,
					  pp_arena_size(p->arena)) != 0 ||
	    rte_malloc_heap_destroy(p->heap_name) != 0) {
		PMP_LOG(ERR, "pool '%s': heap '%s' still has memory reserved from it (%s); the arena stays mapped: free what was rte_malloc'd on the heap's socket first",
			mp->name, p->heap_name, rte_strerror(rte_errno));
		return -EBUSY;
	}
	p->heap_added = false;
	return 0;
}

/*
 * Every page of the arena is allocated now (pages without objects,
 * objects DPDK took out while emptying the pool, objects left in lcore
 * caches): give them all back, then take the heap, allocator, DMA domain
 * and arena down.
 */
static void pagepool_teardown(struct rte_mempool *mp, struct pagepool_mp *p)
{
	if (heap_remove(mp, p) < 0)
		return;
	pages_release_all(p);
	if (pp_allocator_destroy(p->alloc) < 0) {
		/* Pages still out: keep everything mapped (see free). */
		PMP_LOG(ERR, "allocator still has pages out at teardown; the arena stays mapped");
		return;
	}
	pp_dma_unmap_arena(p->dma, p->arena);
	pp_dma_destroy(p->dma);
	pp_arena_destroy(p->arena);
	free(p->foreign);
	free(p);
}

/*
 * The allocator's thread caches for a pool of @pool_size objects (see
 * TCACHE_MAX): the caches are the pool's per-lcore caches, so they are
 * sized as such. The batch, what a refill takes beyond the request and a
 * full cache gives back, is the allocator's default unless the cache is
 * too small for it; then half the cache, so that a refill or a drain
 * leaves room either way.
 */
static void cache_sizes_for(struct pp_allocator_opts *lo,
			    unsigned int pool_size)
{
	unsigned int lcores = rte_lcore_count(), size;

	size = pool_size / (2 * (lcores ? lcores : 1));
	if (size > TCACHE_MAX)
		size = TCACHE_MAX;
	if (size < TCACHE_MIN)
		size = TCACHE_MIN;
	lo->thread_cache_size = size;
	lo->thread_cache_batch = size / 2 < TCACHE_BATCH ? size / 2 :
							   TCACHE_BATCH;
}

/*
 * Arena pages beyond the objects': the malloc element header DPDK puts
 * in front of the memzone and the alignment of the memzone to a page
 * (calc_mem_size asks for 4 KiB alignment) take at most one page each.
 */
#define HEAP_SLACK_PAGES 2

/*
 * alloc: build the arena, allocator and DMA domain for mp->size objects,
 * take every page out of the allocator, and turn the arena into the
 * external heap the pool's memzone will come from.
 */
static int pagepool_alloc(struct rte_mempool *mp)
{
	size_t obj_total = (size_t)mp->header_size + mp->elt_size +
			   mp->trailer_size;
	struct pp_arena_opts ao = { .sz = sizeof(ao) };
	struct pp_allocator_opts lo = { .sz = sizeof(lo) };
	struct pp_dma_opts dopts = { .sz = sizeof(dopts) };
	struct pagepool_mp *p;
	int err;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		PMP_LOG(ERR, "pool '%s': pagepool pools can be created only in a primary process (no multi-process support); use ring_mp_mc",
			mp->name);
		return -ENOTSUP;
	}
	if (obj_total > PP_PAGE_SIZE) {
		PMP_LOG(ERR, "pool '%s': an object takes %zu bytes with its header and trailer, more than the %lu-byte page pagepool gives each object; use a smaller element (data room) or ring_mp_mc",
			mp->name, obj_total, PP_PAGE_SIZE);
		return -EINVAL;
	}
	dopts.mode = dma_mode_for_eal();

	p = pp_os_calloc(1, sizeof(*p));
	if (!p) {
		PMP_LOG(ERR, "pool '%s': out of memory for the driver's state",
			mp->name);
		return -ENOMEM;
	}
	colours_init(p, obj_total, mp->header_size);

	/*
	 * 2 MiB pages: the smallest hugepage, so the arena wastes at most
	 * 2 MiB past the objects; 1 GiB pages are few and shared. 4 KiB
	 * pages are a correct fallback, because an object never crosses a
	 * 4 KiB page and so each one is IOVA-contiguous in PA mode too.
	 */
	ao.size = ((size_t)mp->size + HEAP_SLACK_PAGES) << PP_PAGE_SHIFT;
	ao.page_size = PP_PAGE_SIZE_2M;
	ao.numa_node = mp->socket_id == SOCKET_ID_ANY ? PP_NUMA_NODE_ANY :
							mp->socket_id;
	ao.flags = PP_ARENA_F_ALLOW_4K;
	ao.name = mp->name;
	p->arena = pp_arena_create(&ao);
	if (!p->arena) {
		err = -errno;
		PMP_LOG(ERR, "pool '%s': no arena for %u objects (%s); free 2 MiB hugepages (/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages) or make the pool smaller",
			mp->name, mp->size, strerror(errno));
		goto err_free_state;
	}

	/* One zone; a low watermark of 1 so that bulk calls stay on the
	 * fast path until the pool is nearly empty; thread caches sized
	 * as the pool's per-lcore caches. */
	lo.arenas = &p->arena;
	lo.nr_arenas = 1;
	lo.wmark_low = 1;
	cache_sizes_for(&lo, mp->size);
	p->alloc = pp_allocator_create(&lo);
	if (!p->alloc) {
		err = -errno;
		goto err_destroy_arena;
	}

	p->dma = pp_dma_create(&dopts);
	if (!p->dma) {
		err = -errno;
		goto err_destroy_alloc;
	}
	err = pp_dma_map_arena(p->dma, p->arena);
	if (err) {
		PMP_LOG(ERR, "pool '%s': cannot give the arena IOVAs (%s)",
			mp->name, strerror(-err));
		goto err_destroy_dma;
	}

	p->base = (uintptr_t)pp_arena_base(p->arena);
	p->nr_pages = (uint32_t)(pp_arena_size(p->arena) >> PP_PAGE_SHIFT);
	p->first = pp_virt_to_page(p->alloc, (void *)p->base);
	if (!p->first) {
		err = -ENOMEM;
		goto err_unmap;
	}
	err = pages_take_all(mp, p);
	if (err)
		goto err_unmap;
	err = heap_add(mp, p);
	if (err)
		goto err_release_pages;
	mp->pool_data = p;
	pools_here = true;
	return 0;

err_release_pages:
	pages_release_all(p);
err_unmap:
	pp_dma_unmap_arena(p->dma, p->arena);
err_destroy_dma:
	pp_dma_destroy(p->dma);
err_destroy_alloc:
	pp_allocator_destroy(p->alloc);
err_destroy_arena:
	pp_arena_destroy(p->arena);
err_free_state:
	free(p);
	return err;
}

/*
 * free: rte_mempool_free() calls it after emptying the pool and freeing
 * its memzones, and cannot hear an error. The dequeues that failed while
 * it emptied the pool are the objects outside the driver: those in lcore
 * caches (DPDK does not flush them) and those the application still
 * holds. For the latter, say how many and keep the arena mapped
 * (leaked), so that they stay valid memory; the application's bug must
 * not become a crash.
 */
static void pagepool_free(struct rte_mempool *mp)
{
	struct pagepool_mp *p = mp->pool_data;
	unsigned long cached = 0, out;

	if (!p || !ops_usable("free"))
		return;
	if (mp->cache_size)
		for (unsigned int i = 0; i < RTE_MAX_LCORE; i++)
			cached += mp->local_cache[i].len;
	out = p->teardown_misses > cached ? p->teardown_misses - cached : 0;
	if (out) {
		PMP_LOG(ERR, "pool '%s' freed with %lu of %u objects still in use; its arena stays mapped (leaked) so they remain valid: return every object before rte_mempool_free()",
			mp->name, out, p->nr_given + p->nr_foreign);
		/* DPDK zeroed the memzone when it freed it; the heap goes,
		 * so that its name is free again and devices lose their
		 * VFIO mappings of it, but the memory stays. */
		heap_remove(mp, p);
		mp->pool_data = NULL;
		return;
	}
	pagepool_teardown(mp, p);
	mp->pool_data = NULL;
}

/*
 * calc_mem_size: one 4 KiB page per object, page-aligned, so that every
 * object sits on a page of its own whatever the chunk boundaries
 * (@pg_shift is at least 12 on every page size DPDK uses, so an object
 * never crosses one). A chunk of a single page already holds an object.
 * The same size serves foreign chunks (rte_mempool_populate_anon() maps
 * what this returns): DPDK's slicing packs objects of at most 4 KiB at
 * least one to a page.
 */
static ssize_t pagepool_calc_mem_size(const struct rte_mempool *mp,
				      uint32_t obj_num, uint32_t pg_shift,
				      size_t *min_chunk_size, size_t *align)
{
	(void)mp;
	(void)pg_shift;
	*min_chunk_size = PP_PAGE_SIZE;
	*align = PP_PAGE_SIZE;
	return (ssize_t)obj_num << PP_PAGE_SHIFT;
}

/*
 * The ring for foreign objects, made at the first foreign chunk. It holds
 * mp->size objects, every object the pool can have, so that putting a
 * foreign object never fails. Process memory, like the rest of the
 * state: rte_ring_init() on malloc'd memory registers no name.
 */
static int foreign_ring_create(struct rte_mempool *mp, struct pagepool_mp *p)
{
	/* RING_F_EXACT_SZ: slots for the next power of two above size. */
	ssize_t sz = rte_ring_get_memsize_elem(sizeof(void *),
					       rte_align32pow2(mp->size + 1));
	struct rte_ring *r;
	int err;

	if (sz < 0)
		return (int)sz;
	r = pp_os_aligned_alloc(RTE_CACHE_LINE_SIZE,
				RTE_ALIGN_CEIL((size_t)sz,
					       RTE_CACHE_LINE_SIZE));
	if (!r) {
		PMP_LOG(ERR, "pool '%s': out of memory for the ring of foreign objects (%zd bytes)",
			mp->name, sz);
		return -ENOMEM;
	}
	err = rte_ring_init(r, mp->name, mp->size, RING_F_EXACT_SZ);
	if (err) {
		free(r);
		return err;
	}
	p->foreign = r;
	return 0;
}

/*
 * populate with a chunk that is not arena memory (see "Foreign memory"
 * at the top): DPDK's default slicing, which calls @obj_cb and then
 * enqueues each object, and so puts it in the ring.
 */
static int populate_foreign(struct rte_mempool *mp, struct pagepool_mp *p,
			    unsigned int max_objs, void *vaddr,
			    rte_iova_t iova, size_t len,
			    rte_mempool_populate_obj_cb_t *obj_cb,
			    void *obj_cb_arg)
{
	int n, err;

	if (!p->foreign) {
		err = foreign_ring_create(mp, p);
		if (err) {
			PMP_LOG(ERR, "pool '%s': no ring for objects in foreign memory (%s)",
				mp->name, strerror(-err));
			return err;
		}
	}
	n = rte_mempool_op_populate_helper(mp, 0, max_objs, vaddr, iova, len,
					   obj_cb, obj_cb_arg);
	if (n > 0)
		p->nr_foreign += (uint32_t)n;
	/* obj_cb counted the objects in populated_size: see populate. */
	if (mp->populated_size >= mp->size)
		mp->socket_id = p->app_socket;
	return n;
}

/*
 * populate: an object on every whole 4 KiB page of the chunk, at its
 * colour offset, with the IOVA from the pool's DMA domain, when the
 * chunk is arena memory: the memzone DPDK reserved from the pool's heap,
 * whole or (when it is not IOVA-contiguous) cut at page boundaries.
 * Any other chunk goes to populate_foreign(). When
 * DPDK knows the chunk's IOVA it must agree with pagepool's; a mismatch
 * would hand devices two addresses for one buffer, and is refused.
 * @obj_cb (DPDK's) writes the object header; the populate op itself then
 * makes the object free (DPDK's own helper enqueues it), here by freeing
 * its page into the allocator.
 */
static int pagepool_populate(struct rte_mempool *mp, unsigned int max_objs,
			     void *vaddr, rte_iova_t iova, size_t len,
			     rte_mempool_populate_obj_cb_t *obj_cb,
			     void *obj_cb_arg)
{
	struct pagepool_mp *p = mp->pool_data;
	uintptr_t start = (uintptr_t)vaddr - (p ? p->base : 0);
	uintptr_t first, end;
	unsigned int n = 0;

	if (!p || !ops_usable("populate"))
		return -ENOTSUP;
	if (start >= (uintptr_t)p->nr_pages << PP_PAGE_SHIFT)
		return populate_foreign(mp, p, max_objs, vaddr, iova, len,
					obj_cb, obj_cb_arg);
	if (len > ((uintptr_t)p->nr_pages << PP_PAGE_SHIFT) - start) {
		/* Starts in the arena and runs past its end: no caller
		 * DPDK has makes such a chunk from one allocation. */
		PMP_LOG(ERR, "pool '%s': populate with a chunk that runs past the end of its arena (%p, %zu bytes)",
			mp->name, vaddr, len);
		return -EINVAL;
	}
	first = RTE_ALIGN_CEIL(start, PP_PAGE_SIZE) >> PP_PAGE_SHIFT;
	end = (start + len) >> PP_PAGE_SHIFT;
	for (uintptr_t idx = first; idx < end && n < max_objs; idx++) {
		struct pp_page *page = p->first + idx;
		void *obj = page_to_obj(p, page);
		uintptr_t in_page = (uintptr_t)obj - (uintptr_t)pp_page_address(page);
		uint64_t page_iova;
		int err;

		err = pp_dma_map_page(p->dma, pp_page_address(page), 0,
				      PP_DMA_BIDIRECTIONAL, &page_iova);
		if (!err && iova != RTE_BAD_IOVA &&
		    iova + ((uintptr_t)obj - (uintptr_t)vaddr) !=
			    page_iova + in_page)
			err = -EFAULT;
		if (err) {
			PMP_LOG(ERR, "pool '%s': arena page %lu has no IOVA, or not the one DPDK has (%s); report this as a pagepool bug",
				mp->name, (unsigned long)idx, strerror(-err));
			return n ? (int)n : err;
		}
		p->nr_given++;
		n++;
		obj_cb(mp, obj_cb_arg, obj, page_iova + in_page);
		/* The object is free: its page goes to the allocator. */
		pp_free_page(p->alloc, page);
	}
	/* Full: the application's socket id back (see heap_add). */
	if (mp->populated_size >= mp->size)
		mp->socket_id = p->app_socket;
	return (int)n;
}

static const struct rte_mempool_ops pagepool_ops = {
	.name = PAGEPOOL_OPS_NAME,
	.alloc = pagepool_alloc,
	.free = pagepool_free,
	.enqueue = pagepool_enqueue,
	.dequeue = pagepool_dequeue,
	.get_count = pagepool_get_count,
	.calc_mem_size = pagepool_calc_mem_size,
	.populate = pagepool_populate,
};

RTE_MEMPOOL_REGISTER_OPS(pagepool_ops);
