/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mempool.c - the "pagepool" rte_mempool ops driver, loaded the way
 * an application loads it (EAL -d <plugin>), under pktmbuf pools.
 *
 * usage: test_mempool <path of librte_mempool_pagepool.so> [EAL args]
 *
 * DPDK defines in_use_count as size - avail_count, so "avail + in_use ==
 * size" holds by construction; what the checks below pin is the content:
 * avail_count equals the size minus the objects this test holds, and the
 * driver's own count plus the lcore caches equals avail_count.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_memzone.h>

#include <pagepool/pp_config.h>

#include "pp_test.h"

#define OPS "pagepool"
/* EAL heap in MiB: pool headers and per-lcore caches only; the objects
 * live in the driver's own arena. */
#define EAL_MB 32

static unsigned int worker = RTE_MAX_LCORE;

static struct rte_mempool *make_pool(const char *name, unsigned int n,
				     unsigned int cache)
{
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create_by_ops(name, n, cache, 0,
					    RTE_MBUF_DEFAULT_BUF_SIZE,
					    (int)rte_socket_id(), OPS);
	if (!mp)
		fprintf(stderr, "pool %s: %s\n", name, rte_strerror(rte_errno));
	return mp;
}

/* Objects sitting in lcore caches: free, but not in the driver. */
static unsigned int cached(const struct rte_mempool *mp)
{
	unsigned int n = 0;

	if (mp->cache_size)
		for (unsigned int i = 0; i < RTE_MAX_LCORE; i++)
			n += mp->local_cache[i].len;
	return n;
}

/* The driver's own get_count (DPDK does not export its wrapper). */
static unsigned int driver_count(const struct rte_mempool *mp)
{
	return rte_mempool_get_ops(mp->ops_index)->get_count(mp);
}

/* The quiescent-point invariant, with @held objects out. */
#define CHECK_COUNTS(mp, held)                                             \
	do {                                                               \
		CHECK_EQ(rte_mempool_avail_count(mp), (mp)->size - (held)); \
		CHECK_EQ(rte_mempool_in_use_count(mp), (held));            \
		CHECK_EQ(driver_count(mp) + cached(mp),                    \
			 rte_mempool_avail_count(mp));                     \
	} while (0)

static void test_ops_and_layout(void)
{
	struct rte_mempool *mp = make_pool("pp_layout", 511, 0);
	struct rte_mbuf *m[8];

	REQUIRE(mp);
	CHECK(strcmp(rte_mempool_get_ops(mp->ops_index)->name, OPS) == 0);
	CHECK_EQ(mp->populated_size, 511);
	CHECK_COUNTS(mp, 0);
	REQUIRE(rte_pktmbuf_alloc_bulk(mp, m, 8) == 0);
	for (int i = 0; i < 8; i++) {
		uintptr_t hdr = (uintptr_t)m[i] - mp->header_size;

		/* Cache-line aligned, packed at DPDK's stride, and
		 * never across a 2 MiB hugepage. */
		CHECK_EQ(hdr & 63, 0);
		CHECK_EQ(hdr >> 21, ((uintptr_t)m[i] + mp->elt_size +
				     mp->trailer_size - 1) >> 21);
		/* The IOVA the driver gave matches what the EAL computes
		 * for that address (pagemap in PA mode, the VA in VA mode). */
		CHECK_EQ(rte_mempool_virt2iova(m[i]), rte_mem_virt2iova(m[i]));
		CHECK_EQ(m[i]->buf_iova, rte_mempool_virt2iova(m[i]) +
					 sizeof(struct rte_mbuf));
		CHECK(m[i]->pool == mp);
		for (int j = 0; j < i; j++)
			CHECK(m[i] != m[j]);
	}
	CHECK_COUNTS(mp, 8);
	rte_pktmbuf_free_bulk(m, 8);
	CHECK_COUNTS(mp, 0);
	rte_mempool_free(mp);
}

static void single_and_bulk(unsigned int cache)
{
	struct rte_mempool *mp = make_pool("pp_bulk", 1023, cache);
	static void *objs[1023];
	struct rte_mbuf *m;

	REQUIRE(mp);
	m = rte_pktmbuf_alloc(mp);
	REQUIRE(m);
	CHECK_COUNTS(mp, 1);
	rte_pktmbuf_free(m);
	CHECK_COUNTS(mp, 0);

	for (unsigned int bulk = 1; bulk <= 128; bulk *= 2) {
		REQUIRE(rte_mempool_get_bulk(mp, objs, bulk) == 0);
		CHECK_COUNTS(mp, bulk);
		rte_mempool_put_bulk(mp, objs, bulk);
		CHECK_COUNTS(mp, 0);
	}
	/* The whole pool in one call, then back. */
	CHECK_EQ(rte_mempool_get_bulk(mp, objs, 1023), 0);
	CHECK_COUNTS(mp, 1023);
	rte_mempool_put_bulk(mp, objs, 1023);
	CHECK_COUNTS(mp, 0);
	rte_mempool_free(mp);
}

static void test_single_and_bulk(void)
{
	single_and_bulk(0);
	single_and_bulk(32);
}

static int worker_take_and_return(void *arg)
{
	struct rte_mempool *mp = arg;
	void *objs[100];

	/* In bulks of 10, put back from this lcore: with no DPDK cache
	 * they go into this lcore's magazine, and stay there. */
	for (int i = 0; i < 100; i += 10)
		if (rte_mempool_get_bulk(mp, objs + i, 10) != 0)
			return -1;
	for (int i = 0; i < 100; i += 10)
		rte_mempool_put_bulk(mp, objs + i, 10);
	return 0;
}

/* More than the free count: fails, takes nothing, loses nothing. */
static void test_overask(void)
{
	struct rte_mempool *mp = make_pool("pp_overask", 255, 0);
	static void *a[255], *b[255];

	REQUIRE(mp);
	REQUIRE(rte_mempool_get_bulk(mp, a, 200) == 0);
	CHECK(rte_mempool_get_bulk(mp, b, 100) < 0);
	CHECK_COUNTS(mp, 200);
	CHECK_EQ(rte_mempool_get_bulk(mp, b, 55), 0);
	CHECK_COUNTS(mp, 255);
	CHECK(rte_mempool_get_bulk(mp, b + 55, 1) < 0);
	rte_mempool_put_bulk(mp, b, 55);
	rte_mempool_put_bulk(mp, a, 200);
	CHECK_COUNTS(mp, 0);

	/*
	 * Objects the other lcore took and put back sit in its magazine:
	 * a get of the whole pool from this lcore must still succeed (the
	 * drain), and a get of one more must fail with the pool intact.
	 */
	if (worker != RTE_MAX_LCORE) {
		REQUIRE(rte_eal_remote_launch(worker_take_and_return, mp,
					      worker) == 0);
		CHECK_EQ(rte_eal_wait_lcore(worker), 0);
		CHECK_COUNTS(mp, 0);
		CHECK_EQ(rte_mempool_get_bulk(mp, a, 255), 0);
		CHECK(rte_mempool_get_bulk(mp, b, 1) < 0);
		CHECK_COUNTS(mp, 255);
		rte_mempool_put_bulk(mp, a, 255);
		CHECK_COUNTS(mp, 0);
	}
	rte_mempool_free(mp);
}

/*
 * A pool without a DPDK cache gets the driver's magazines. Objects that
 * another lcore put back are stranded in its magazine (100 puts of 10
 * fit in a magazine of 255, 1023 / (2 lcores x 2), so none spill);
 * this lcore's single gets, each through its own magazine, must still
 * reach all of them: the one that finds magazine and store empty
 * drains the other lcore's magazine. Run again by the suite with
 * PAGEPOOL_NO_MEMBARRIER=1, the handshake's lock-word way.
 */
static void test_drain(void)
{
	struct rte_mempool *mp;
	static void *objs[1023];
	void *extra;

	if (worker == RTE_MAX_LCORE) {
		printf("note: one lcore only; test_drain checks nothing\n");
		return;
	}
	mp = make_pool("pp_drain", 1023, 0);
	REQUIRE(mp);
	REQUIRE(rte_eal_remote_launch(worker_take_and_return, mp,
				      worker) == 0);
	CHECK_EQ(rte_eal_wait_lcore(worker), 0);
	CHECK_COUNTS(mp, 0);
	for (unsigned int i = 0; i < 1023; i++)
		if (rte_mempool_get(mp, &objs[i]) != 0) {
			fprintf(stderr, "get %u of 1023 failed: the other lcore's magazine was not drained\n",
				i);
			CHECK(false);
			rte_mempool_put_bulk(mp, objs, i);
			rte_mempool_free(mp);
			return;
		}
	CHECK(rte_mempool_get(mp, &extra) < 0);
	CHECK_COUNTS(mp, 1023);
	for (unsigned int i = 0; i < 1023; i++)
		rte_mempool_put(mp, objs[i]);
	CHECK_COUNTS(mp, 0);
	/* The drained magazine's owner enters it again after the
	 * release. */
	REQUIRE(rte_eal_remote_launch(worker_take_and_return, mp,
				      worker) == 0);
	CHECK_EQ(rte_eal_wait_lcore(worker), 0);
	CHECK_COUNTS(mp, 0);
	rte_mempool_free(mp);
}

/* ---- several lcores ---- */

struct churn {
	struct rte_mempool *mp;
	unsigned long iters;
	atomic_ulong errors;
};

/*
 * Each object carries an owner flag in its data room: a get that finds
 * it set means two lcores hold the same object.
 */
static int churn_lcore(void *arg)
{
	struct churn *c = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ rte_lcore_id();
	void *objs[64];

	for (unsigned long it = 0; it < c->iters; it++) {
		unsigned int n;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = 1 + (unsigned int)(x % 64);
		if (rte_mempool_get_bulk(c->mp, objs, n) != 0)
			continue; /* the other lcore holds enough: fine */
		for (unsigned int i = 0; i < n; i++) {
			atomic_uchar *flag = (atomic_uchar *)
				rte_pktmbuf_mtod((struct rte_mbuf *)objs[i],
						 char *);

			if (atomic_exchange(flag, 1) != 0)
				atomic_fetch_add(&c->errors, 1);
		}
		for (unsigned int i = 0; i < n; i++) {
			atomic_uchar *flag = (atomic_uchar *)
				rte_pktmbuf_mtod((struct rte_mbuf *)objs[i],
						 char *);

			atomic_store(flag, 0);
		}
		rte_mempool_put_bulk(c->mp, objs, n);
	}
	return 0;
}

static void lcores(unsigned int cache)
{
	/* Small, so that both lcores run the pool dry now and then. */
	struct rte_mempool *mp = make_pool("pp_lcores", 127, cache);
	struct churn c = { .mp = mp, .iters = 200000 };
	static void *objs[127];

	REQUIRE(mp);
	REQUIRE(rte_mempool_get_bulk(mp, objs, 127) == 0);
	for (int i = 0; i < 127; i++)
		*rte_pktmbuf_mtod((struct rte_mbuf *)objs[i], char *) = 0;
	rte_mempool_put_bulk(mp, objs, 127);

	REQUIRE(rte_eal_remote_launch(churn_lcore, &c, worker) == 0);
	churn_lcore(&c);
	CHECK_EQ(rte_eal_wait_lcore(worker), 0);
	if (atomic_load(&c.errors))
		fprintf(stderr, "cache %u: %lu objects held twice\n", cache,
			atomic_load(&c.errors));
	CHECK_EQ(atomic_load(&c.errors), 0);
	CHECK_COUNTS(mp, 0);
	rte_mempool_free(mp);
}

static void test_lcores(void)
{
	if (worker == RTE_MAX_LCORE) {
		printf("note: one lcore only; test_lcores checks nothing\n");
		return;
	}
	lcores(0);
	lcores(16);
}

/* True when the captured log @f has a line containing @what. */
static bool log_has(FILE *f, const char *what)
{
	char line[1024];
	bool found = false;

	fflush(f);
	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, what))
			found = true;
	return found;
}

/* ---- memory: chunks, objects and IOVAs agree ---- */

struct mem_walk {
	struct rte_mempool *mp;
	int heap_socket;
	unsigned int chunks, objs, bad, crossing;
	uint64_t offsets;       /* bit i: an element starts i lines into a page */
	const struct rte_mempool_memhdr *chunk[64];
};

static void chunk_check(struct rte_mempool *mp, void *arg,
			struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	struct mem_walk *w = arg;
	const struct rte_memseg_list *msl = rte_mem_virt2memseg_list(memhdr->addr);

	(void)mp;
	(void)idx;
	/* Every chunk is memory of the pool's external heap, that is, of
	 * its pagepool arena, and its IOVA is the EAL's for that memory. */
	if (!msl || !msl->external || msl->socket_id != w->heap_socket)
		w->bad++;
	if (memhdr->iova != RTE_BAD_IOVA &&
	    memhdr->iova != rte_mem_virt2iova(memhdr->addr))
		w->bad++;
	if (w->chunks < RTE_DIM(w->chunk))
		w->chunk[w->chunks] = memhdr;
	w->chunks++;
}

/*
 * The address a device must use for @addr, computed without the driver:
 * the physical address from pagemap when the EAL runs with IOVA as PA,
 * the virtual address when IOVA is VA. pagepool's DMA layer (pp_dma, VA
 * or PA domain) gives exactly these.
 */
static uint64_t dma_addr_expected(const void *addr)
{
	if (rte_eal_iova_mode() == RTE_IOVA_PA)
		return rte_mem_virt2phy(addr);
	return (uintptr_t)addr;
}

static void obj_check(struct rte_mempool *mp, void *arg, void *obj,
		      unsigned int idx)
{
	struct mem_walk *w = arg;
	struct rte_mempool_objhdr *hdr = rte_mempool_get_header(obj);
	uintptr_t start = (uintptr_t)hdr;
	uintptr_t end = (uintptr_t)obj + mp->elt_size + mp->trailer_size;
	struct rte_mbuf *m = obj;
	unsigned int in = 0;

	(void)idx;
	w->objs++;
	/* Inside exactly one chunk, at that chunk's IOVA + offset. */
	for (unsigned int i = 0; i < w->chunks && i < RTE_DIM(w->chunk); i++) {
		const struct rte_mempool_memhdr *c = w->chunk[i];

		if (start < (uintptr_t)c->addr ||
		    end > (uintptr_t)c->addr + c->len)
			continue;
		in++;
		if (c->iova != RTE_BAD_IOVA &&
		    c->iova + ((uintptr_t)obj - (uintptr_t)c->addr) !=
			    rte_mempool_virt2iova(obj))
			w->bad++;
	}
	if (in != 1)
		w->bad++;
	/* Never across a 2 MiB hugepage, unless the pool lets objects
	 * be IOVA-discontiguous (DPDK's own slicing rule). */
	if ((start >> 21) != ((end - 1) >> 21)) {
		if (!(mp->flags & RTE_MEMPOOL_F_NO_IOVA_CONTIG))
			w->bad++;
		w->crossing++;
		/* The IOVA of an object that spans two hugepages is only
		 * given when the two are IOVA-contiguous. */
		if (rte_mempool_virt2iova(obj) == RTE_BAD_IOVA) {
			uintptr_t next = (end - 1) & ~(uintptr_t)0x1fffff;

			if (dma_addr_expected((void *)next) ==
			    dma_addr_expected((void *)start) + (next - start))
				w->bad++;
			return;
		}
	}
	w->offsets |= 1ULL << (((uintptr_t)obj & 4095) >> 6);
	/* The header's IOVA, the EAL's view of the memory, and the
	 * address computed from scratch all agree... */
	if (rte_mempool_virt2iova(obj) != rte_mem_virt2iova(obj) ||
	    rte_mempool_virt2iova(obj) != dma_addr_expected(obj))
		w->bad++;
	/* ...and so does the buffer address of the mbuf. */
	if (m->buf_iova != dma_addr_expected(m->buf_addr) ||
	    m->buf_iova != rte_mempool_virt2iova(obj) +
				   sizeof(struct rte_mbuf) +
				   rte_pktmbuf_priv_size(mp))
		w->bad++;
}

static void memory_check(unsigned int n, unsigned int cache, unsigned int flags)
{
	struct mem_walk w = { 0 };
	struct rte_mempool *mp;
	int socket = (int)rte_socket_id();

	if (!flags) {
		mp = make_pool("pp_mem", n, cache);
	} else {
		/* rte_pktmbuf_pool_create() takes no mempool flags: the
		 * same steps by hand. */
		mp = rte_mempool_create_empty("pp_mem", n,
					      sizeof(struct rte_mbuf) +
						      RTE_MBUF_DEFAULT_BUF_SIZE,
					      cache,
					      sizeof(struct rte_pktmbuf_pool_private),
					      socket, flags);
		REQUIRE(mp);
		REQUIRE(rte_mempool_set_ops_byname(mp, OPS, NULL) == 0);
		rte_pktmbuf_pool_init(mp, NULL);
		REQUIRE(rte_mempool_populate_default(mp) == (int)n);
		rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	}
	REQUIRE(mp);
	w.mp = mp;
	w.heap_socket = rte_malloc_heap_get_socket("pp:pp_mem");
	CHECK(w.heap_socket >= RTE_MAX_NUMA_NODES);
	/* The pool lends the heap's socket id only while it is populated. */
	CHECK_EQ(mp->socket_id, socket);
	CHECK_EQ(rte_mempool_mem_iter(mp, chunk_check, &w), mp->nb_mem_chunks);
	CHECK(w.chunks >= 1 && w.chunks <= RTE_DIM(w.chunk));
	CHECK_EQ(rte_mempool_obj_iter(mp, obj_check, &w), n);
	CHECK_EQ(w.objs, n);
	CHECK_EQ(w.bad, 0);
	/* Coloured: DPDK's stride is an odd number of cache lines, so
	 * consecutive objects start at distinct offsets in a 4 KiB page,
	 * all 64 once there are 64 (objects whose IOVA is unknown are not
	 * counted; they are at most one per hugepage boundary). With
	 * NO_SPREAD DPDK leaves the stride unpadded (test_no_spread). */
	if (!(flags & RTE_MEMPOOL_F_NO_SPREAD)) {
		CHECK_EQ((mp->header_size + mp->elt_size + mp->trailer_size) /
				 64 % 2,
			 1);
		CHECK((unsigned int)__builtin_popcountll(w.offsets) +
			      w.crossing >=
		      (n < 64 ? n : 64));
		if (n >= 128)
			CHECK_EQ(__builtin_popcountll(w.offsets), 64);
	}
	CHECK_COUNTS(mp, 0);
	rte_mempool_free(mp);
	/* The heap went with the pool: its name can be had again. */
	CHECK(rte_malloc_heap_get_socket("pp:pp_mem") < 0);
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a;
	uintptr_t y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

/*
 * Take every object of @mp, in bulks of @bulk (the last one shorter),
 * check that none is handed out twice, that the pool is then empty, that
 * each is writable, and that @in_chunk of them lie in [lo, lo + len);
 * then put them all back.
 */
static void take_all_check(struct rte_mempool *mp, unsigned int bulk,
			   const char *lo, size_t len, unsigned int in_chunk)
{
	unsigned int n = mp->size, got = 0, inside = 0;
	void **objs = calloc(n, sizeof(*objs)), *extra;

	REQUIRE(objs);
	while (got < n) {
		unsigned int c = n - got < bulk ? n - got : bulk;

		if (rte_mempool_get_bulk(mp, objs + got, c) != 0)
			break;
		got += c;
	}
	CHECK_EQ(got, n);
	CHECK(rte_mempool_get(mp, &extra) != 0);
	qsort(objs, got, sizeof(*objs), ptr_cmp);
	for (unsigned int i = 0; i < got; i++) {
		CHECK(i == 0 || objs[i] != objs[i - 1]);
		if ((const char *)objs[i] >= lo &&
		    (const char *)objs[i] < lo + len)
			inside++;
		memset(objs[i], 0x5a, mp->elt_size);
	}
	CHECK_EQ(inside, in_chunk);
	CHECK_COUNTS(mp, got);
	for (unsigned int i = 0; i < got; i += bulk)
		rte_mempool_put_bulk(mp, objs + i,
				     got - i < bulk ? got - i : bulk);
	CHECK_COUNTS(mp, 0);
	free(objs);
}

/* Free @mp and check that it left nothing behind. */
static void free_clean(struct rte_mempool *mp, const char *heap)
{
	FILE *log = tmpfile();

	REQUIRE(log);
	rte_openlog_stream(log);
	rte_mempool_free(mp);
	rte_openlog_stream(stderr);
	CHECK(!log_has(log, "still in use"));
	fclose(log);
	CHECK(rte_malloc_heap_get_socket(heap) < 0);
}

/* A chunk's free callback, as DPDK's own for memzone chunks. */
static void mz_chunk_free(struct rte_mempool_memhdr *memhdr, void *mz)
{
	(void)memhdr;
	rte_memzone_free(mz);
}

/*
 * Memory from outside the arena, which the mempool ops contract allows:
 * anonymous memory as rte_mempool_populate_anon() maps it, and the
 * caller's own chunk with no IOVA, next to an arena chunk in one pool.
 * Every object is usable, whichever store it sits in.
 */
static void foreign_memory_check(void)
{
	const size_t chunk_len = 16 * 4096;
	int socket = (int)rte_socket_id();
	struct rte_mempool *mp;
	char *chunk;
	int k;

	/* Anonymous memory only, no cache: every get and put reaches the
	 * driver. */
	mp = rte_mempool_create_empty("pp_anon", 63, 2048, 0, 0, socket, 0);
	REQUIRE(mp);
	REQUIRE(rte_mempool_set_ops_byname(mp, OPS, NULL) == 0);
	CHECK_EQ(rte_mempool_populate_anon(mp), 63);
	/* Full: the application's socket id is back. */
	CHECK_EQ(mp->socket_id, socket);
	CHECK_EQ(rte_mempool_populate_anon(mp), 0);
	take_all_check(mp, 1, NULL, 0, 0);
	take_all_check(mp, 63, NULL, 0, 0);
	free_clean(mp, "pp:pp_anon");

	/*
	 * A caller's chunk (RTE_BAD_IOVA) first, then arena memory, with a
	 * cache; bulks that span both stores. rte_mempool_populate_default()
	 * refuses a pool that has a chunk, so the arena chunk is reserved
	 * here the way it reserves one: a memzone on the pool's heap.
	 */
	chunk = aligned_alloc(4096, chunk_len);
	REQUIRE(chunk);
	mp = rte_mempool_create_empty("pp_mixed", 300, 2048, 16, 0, socket, 0);
	REQUIRE(mp);
	REQUIRE(rte_mempool_set_ops_byname(mp, OPS, NULL) == 0);
	k = rte_mempool_populate_iova(mp, chunk, RTE_BAD_IOVA, chunk_len,
				      NULL, NULL);
	CHECK(k > 0 && k < 300);
	{
		const struct rte_memzone *mz;

		mz = rte_memzone_reserve_aligned("pp_mixed_arena",
						 (size_t)(300 - k) * 4096,
						 rte_malloc_heap_get_socket("pp:pp_mixed"),
						 0, 4096);
		REQUIRE(mz);
		CHECK_EQ(rte_mempool_populate_iova(mp, mz->addr, RTE_BAD_IOVA,
						   mz->len, mz_chunk_free,
						   (void *)(uintptr_t)mz),
			 300 - k);
	}
	CHECK_EQ(mp->populated_size, 300);
	CHECK_EQ(mp->socket_id, socket);
	CHECK_COUNTS(mp, 0);
	take_all_check(mp, 1, chunk, chunk_len, (unsigned int)k);
	take_all_check(mp, 7, chunk, chunk_len, (unsigned int)k);
	take_all_check(mp, 300, chunk, chunk_len, (unsigned int)k);
	free_clean(mp, "pp:pp_mixed");
	free(chunk);
}

static void test_memory(void)
{
	printf("note: IOVA mode %s\n",
	       rte_eal_iova_mode() == RTE_IOVA_PA ? "PA" : "VA");
	memory_check(1, 0, 0);
	/* 885 default mbufs of 2,368 bytes fit one 2 MiB page: a few
	 * more, so that objects skip to the next hugepage. */
	memory_check(900, 0, 0);
	memory_check(1023, 32, 0);
	/* More objects than fit in one 2 MiB page: chunks cut at hugepage
	 * boundaries in PA mode. */
	memory_check(2000, 0, 0);
	/* Objects need not be IOVA-contiguous: DPDK gives no chunk IOVA,
	 * the objects still get pagepool's. */
	memory_check(511, 0, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	foreign_memory_check();
}

/* ---- density and colours ---- */

/* The colour of an element: its cache line in its 4 KiB page, the bits
 * that pick an L1 set (64 sets of a 32 KiB 8-way L1). */
static void colour_of(struct rte_mempool *mp, void *arg, void *obj,
		      unsigned int idx)
{
	uint64_t *colours = arg;

	(void)mp;
	(void)idx;
	*colours |= 1ULL << (((uintptr_t)obj & 4095) >> 6);
}

/* rte_mempool_dump()'s "avg bytes/object": the pool's memory chunks
 * over its objects. */
static double dump_bytes_per_object(struct rte_mempool *mp)
{
	FILE *f = tmpfile();
	char line[256];
	double v = -1;

	REQUIRE(f);
	rte_mempool_dump(f, mp);
	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " avg bytes/object=%lf", &v) == 1)
			break;
	fclose(f);
	return v;
}

static struct rte_mempool *plain_pool(const char *name, const char *ops,
				      unsigned int n, unsigned int elt,
				      unsigned int flags)
{
	struct rte_mempool *mp;

	mp = rte_mempool_create_empty(name, n, elt, 0, 0,
				      (int)rte_socket_id(), flags);
	REQUIRE(mp);
	REQUIRE(rte_mempool_set_ops_byname(mp, ops, NULL) == 0);
	REQUIRE(rte_mempool_populate_default(mp) == (int)n);
	return mp;
}

static size_t gcd_u(size_t a, size_t b)
{
	while (b) {
		size_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Consecutive objects in populate's order: how many lie exactly one
 * stride after the one before, how many start a 2 MiB hugepage instead
 * (no object spans one; a new chunk in PA mode starts one too), and how
 * many are anywhere else. */
struct stride_walk {
	uintptr_t prev;
	size_t stride;
	unsigned int at_stride, at_hugepage, other;
};

static void stride_of(struct rte_mempool *mp, void *arg, void *obj,
		      unsigned int idx)
{
	struct stride_walk *w = arg;
	/* The object's slot: its header area (header_size, with the
	 * objhdr at its end), element and trailer. */
	uintptr_t slot = (uintptr_t)obj - mp->header_size;

	if (!idx)
		;
	else if ((uintptr_t)obj - w->prev == w->stride)
		w->at_stride++;
	else if (!(slot & 0x1fffff))
		w->at_hugepage++;
	else
		w->other++;
	w->prev = (uintptr_t)obj;
}

/*
 * Objects are packed as DPDK packs them: rte_mempool_dump() reads the
 * same bytes per object for pagepool as for ring_mp_mc, within a few
 * percent of the object (header, element, trailer); and the objects
 * start at all 64 cache colours. Elements of 2,112 bytes (the issue's
 * case: 4,096 bytes each with a page per object) and default mbufs.
 */
static void test_density_and_colours(void)
{
	static const unsigned int elts[] = {
		2112, sizeof(struct rte_mbuf) + RTE_MBUF_DEFAULT_BUF_SIZE, 64,
		9000,
	};

	for (unsigned int i = 0; i < RTE_DIM(elts); i++) {
		struct rte_mempool *pp, *ring;
		struct stride_walk w = { 0 };
		uint64_t colours = 0;
		double bpo, ring_bpo;
		size_t total;

		pp = plain_pool("pp_dense", OPS, 1024, elts[i], 0);
		ring = plain_pool("pp_dense_ring", "ring_mp_mc", 1024, elts[i],
				  0);
		total = pp->header_size + pp->elt_size + pp->trailer_size;
		bpo = dump_bytes_per_object(pp);
		ring_bpo = dump_bytes_per_object(ring);
		printf("note: element %u: object %zu bytes, avg bytes/object %.1f (ring_mp_mc %.1f)\n",
		       elts[i], total, bpo, ring_bpo);
		CHECK(bpo >= (double)total);
		CHECK(bpo <= (double)total * 1.03);
		CHECK(bpo <= ring_bpo * 1.01);
		CHECK_EQ(rte_mempool_obj_iter(pp, colour_of, &colours), 1024);
		CHECK_EQ(__builtin_popcountll(colours), 64);
		/* One after the other at DPDK's stride, but at a hugepage
		 * that the next object would span. */
		w.stride = total;
		CHECK_EQ(rte_mempool_obj_iter(pp, stride_of, &w), 1024);
		CHECK_EQ(w.other, 0);
		CHECK(w.at_hugepage <= 1023 * total / (2u << 20) + 1);
		rte_mempool_free(ring);
		rte_mempool_free(pp);
	}
}

/*
 * RTE_MEMPOOL_F_NO_SPREAD: DPDK leaves the stride unpadded (a whole
 * number of cache lines, even or odd), and the driver slices at that
 * stride as DPDK's own pools do: objects one stride apart within a
 * chunk, the same bytes per object as ring_mp_mc with the same flag,
 * colours 64 / gcd(lines, 64) at least (fewer than 64 where the stride
 * is an even number of lines), and the walk of memory_check() (chunks,
 * IOVAs, hugepage boundaries) holds.
 */
static void test_no_spread(void)
{
	static const unsigned int elts[] = {
		2112, sizeof(struct rte_mbuf) + RTE_MBUF_DEFAULT_BUF_SIZE, 64,
	};

	for (unsigned int i = 0; i < RTE_DIM(elts); i++) {
		struct rte_mempool *pp, *ring;
		uint64_t colours = 0, ring_colours = 0;
		struct stride_walk w = { 0 };
		size_t total;

		pp = plain_pool("pp_nospread", OPS, 1024, elts[i],
				RTE_MEMPOOL_F_NO_SPREAD);
		ring = plain_pool("pp_nospread_ring", "ring_mp_mc", 1024,
				  elts[i], RTE_MEMPOOL_F_NO_SPREAD);
		total = pp->header_size + pp->elt_size + pp->trailer_size;
		CHECK_EQ(total, ring->header_size + ring->elt_size +
					ring->trailer_size);
		CHECK_EQ(total % 64, 0);
		w.stride = total;
		CHECK_EQ(rte_mempool_obj_iter(pp, stride_of, &w), 1024);
		CHECK_EQ(w.at_stride + w.at_hugepage, 1023);
		CHECK_EQ(w.other, 0);
		CHECK(w.at_hugepage <= 1023 * total / (2u << 20) + 1);
		CHECK(dump_bytes_per_object(pp) <=
		      dump_bytes_per_object(ring) * 1.01);
		CHECK_EQ(rte_mempool_obj_iter(pp, colour_of, &colours), 1024);
		CHECK_EQ(rte_mempool_obj_iter(ring, colour_of, &ring_colours),
			 1024);
		printf("note: element %u NO_SPREAD: stride %zu bytes, %d colours (ring_mp_mc %d), of 1023 steps %u one stride, %u to a hugepage\n",
		       elts[i], total, __builtin_popcountll(colours),
		       __builtin_popcountll(ring_colours), w.at_stride,
		       w.at_hugepage);
		/* One chunk sliced at a stride of L lines starts objects at
		 * 64 / gcd(L, 64) colours; a chunk that starts at another
		 * line parity (the ring pool's memzone) may add more. */
		CHECK(__builtin_popcountll(colours) >=
		      64 / (int)gcd_u(total / 64, 64));
		rte_mempool_free(ring);
		rte_mempool_free(pp);
	}
	memory_check(900, 0, RTE_MEMPOOL_F_NO_SPREAD);
}

/*
 * Debug builds: a put of a pointer that is no object of the pool (here,
 * an object of another pool) is logged and left out, with and without
 * an lcore cache in front (a put of one; a bulk with good objects).
 */
static void test_put_foreign_pointer(void)
{
#if PP_DEBUG >= 1
	struct rte_mempool *mp = make_pool("pp_own", 63, 0);
	struct rte_mempool *other = make_pool("pp_other", 63, 0);
	FILE *log = tmpfile();
	void *objs[4], *stray;

	REQUIRE(mp && other && log);
	REQUIRE(rte_mempool_get(other, &stray) == 0);
	REQUIRE(rte_mempool_get_bulk(mp, objs, 3) == 0);
	objs[3] = stray;
	rte_openlog_stream(log);
	rte_mempool_put(mp, stray);
	rte_mempool_put_bulk(mp, objs, 4);
	rte_openlog_stream(stderr);
	CHECK(log_has(log, "which does not own it"));
	CHECK_COUNTS(mp, 0);
	CHECK_COUNTS(other, 1);
	rte_mempool_put(other, stray);
	CHECK_COUNTS(other, 0);
	fclose(log);
	rte_mempool_free(other);
	rte_mempool_free(mp);
#else
	printf("note: debug_level 0 build: the driver does not check puts\n");
#endif
}

/* A count from the 2 MiB hugepage directory in sysfs, or -1. */
static long hugepages_2m(const char *what)
{
	char path[96];
	FILE *f;
	long n = -1;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-2048kB/%s",
		 what);
	f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static long free_2m_hugepages(void)
{
	return hugepages_2m("free_hugepages");
}

/* ---- no 2 MiB hugepage free: 4 KiB pages ---- */

struct fallback_walk {
	struct rte_mempool *mp;
	unsigned int across; /* objects over a 4 KiB page boundary */
	unsigned int bad_iova;
};

static void fallback_obj(struct rte_mempool *mp, void *arg, void *obj,
			 unsigned int idx)
{
	struct fallback_walk *w = arg;
	uintptr_t hdr = (uintptr_t)obj - mp->header_size;
	uintptr_t end = (uintptr_t)obj + mp->elt_size + mp->trailer_size;

	(void)idx;
	if (hdr >> 12 != (end - 1) >> 12)
		w->across++;
	if (rte_mempool_virt2iova(obj) != rte_mem_virt2iova(obj))
		w->bad_iova++;
}

/*
 * With no 2 MiB hugepage free, the driver's arena falls back to 4 KiB
 * pages for objects that fit one: the pool is whole, every object lies
 * in one 4 KiB page with the IOVA the EAL computes for it, and all of it
 * can be taken and given back. Objects larger than 4 KiB are refused
 * with a message that says what to free. Takes every free 2 MiB hugepage
 * for a moment (the suite runs alone).
 */
static void test_4k_fallback(void)
{
	static void *held[8192];
	const size_t hp = 2u << 20;
	struct fallback_walk w = { 0 };
	struct rte_mempool *mp;
	static void *objs[1024];
	unsigned int nr = 0;
	FILE *log;

	if (access("/proc/sys/vm/nr_overcommit_hugepages", R_OK) == 0) {
		FILE *f = fopen("/proc/sys/vm/nr_overcommit_hugepages", "r");
		long over = -1;

		if (f) {
			if (fscanf(f, "%ld", &over) != 1)
				over = -1;
			fclose(f);
		}
		if (over != 0) {
			printf("note: 4 KiB fallback not checked: surplus 2 MiB hugepages are allowed (nr_overcommit_hugepages %ld), so none can be used up\n",
			       over);
			return;
		}
	}
	/* Private hugetlb mappings reserve their page at mmap: taking them
	 * one at a time until the kernel refuses leaves none free. */
	while (nr < RTE_DIM(held)) {
		void *p = mmap(NULL, hp, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1,
			       0);

		if (p == MAP_FAILED)
			break;
		held[nr++] = p;
	}
	/* Reserved pages count as free until they are touched. */
	printf("note: holding %u 2 MiB hugepages, %ld free and not reserved\n",
	       nr, free_2m_hugepages() - hugepages_2m("resv_hugepages"));
	CHECK_EQ(free_2m_hugepages() - hugepages_2m("resv_hugepages"), 0);

	mp = rte_mempool_create_empty("pp_4k", 1024, 2112, 0, 0,
				      (int)rte_socket_id(), 0);
	REQUIRE(mp);
	REQUIRE(rte_mempool_set_ops_byname(mp, OPS, NULL) == 0);
	CHECK_EQ(rte_mempool_populate_default(mp), 1024);
	CHECK_EQ(mp->populated_size, 1024);
	CHECK_EQ(rte_mempool_obj_iter(mp, fallback_obj, &w), 1024);
	CHECK_EQ(w.across, 0);
	CHECK_EQ(w.bad_iova, 0);
	CHECK_EQ(rte_mempool_get_bulk(mp, objs, 1024), 0);
	CHECK_COUNTS(mp, 1024);
	rte_mempool_put_bulk(mp, objs, 1024);
	CHECK_COUNTS(mp, 0);
	rte_mempool_free(mp);

	/* 9,000-byte elements do not fit a 4 KiB page: refused, said. */
	log = tmpfile();
	REQUIRE(log);
	mp = rte_mempool_create_empty("pp_4k_big", 64, 9000, 0, 0,
				      (int)rte_socket_id(), 0);
	REQUIRE(mp);
	REQUIRE(rte_mempool_set_ops_byname(mp, OPS, NULL) == 0);
	rte_openlog_stream(log);
	CHECK(rte_mempool_populate_default(mp) < 0);
	rte_openlog_stream(stderr);
	CHECK(log_has(log, "no 2 MiB hugepages for objects of"));
	CHECK(log_has(log, "which do not fit 4 KiB pages; it needs"));
	CHECK(log_has(log, "pp-hugepages -r SIZE reserves"));
	fclose(log);
	rte_mempool_free(mp);

	while (nr)
		munmap(held[--nr], hp);
}

/* ---- free with objects out ---- */

static void test_free_in_use(void)
{
	struct rte_mempool *mp = make_pool("pp_inuse", 63, 0);
	FILE *log = tmpfile();
	struct rte_mbuf *m[3];
	size_t elt;

	REQUIRE(mp && log);
	elt = mp->elt_size;
	REQUIRE(rte_pktmbuf_alloc_bulk(mp, m, 3) == 0);
	rte_openlog_stream(log);
	rte_mempool_free(mp);
	rte_openlog_stream(stderr);
	CHECK(log_has(log, "3 of 63 objects still in use"));
	/*
	 * The objects stay valid memory: no crash on touching them. (DPDK
	 * zeroes a memzone when it frees it, so what they held is gone:
	 * write through the object pointers, not the mbuf fields.)
	 */
	for (int i = 0; i < 3; i++)
		memset(m[i], 0xab, elt);
	fclose(log);

	/* And a pool freed with everything back says nothing. */
	mp = make_pool("pp_clean", 63, 8);
	log = tmpfile();
	REQUIRE(mp && log);
	REQUIRE(rte_pktmbuf_alloc_bulk(mp, m, 3) == 0);
	rte_pktmbuf_free_bulk(m, 3);
	rte_openlog_stream(log);
	rte_mempool_free(mp);
	rte_openlog_stream(stderr);
	CHECK(!log_has(log, "still in use"));
	fclose(log);
}


/* ---- setup ---- */

/*
 * DPDK loads a plugin only from a path whose directories are not
 * world-writable (a checkout under /tmp fails that). Copy it into a
 * private directory under /run; returns the copy's path or NULL.
 */
static char plugin_dir[64], plugin_copy[128];

static const char *private_plugin(const char *path)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	snprintf(plugin_dir, sizeof(plugin_dir), "/run/pagepool-dpdk-XXXXXX");
	if (!mkdtemp(plugin_dir))
		return NULL;
	snprintf(plugin_copy, sizeof(plugin_copy), "%s/plugin.so", plugin_dir);
	in = open(path, O_RDONLY);
	out = open(plugin_copy, O_WRONLY | O_CREAT | O_EXCL, 0600);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return in >= 0 && out >= 0 ? plugin_copy : NULL;
}

static void private_plugin_remove(void)
{
	unlink(plugin_copy);
	rmdir(plugin_dir);
}

int main(int argc, char **argv)
{
	char lcores_arg[16], mem[16], limit[32];
	char *eal[20];
	int n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s <librte_mempool_pagepool.so> [EAL args]\n", argv[0]);
		return 2;
	}
	if (access(argv[1], R_OK) != 0)
		pp_test_skip("the plugin %s is not built", argv[1]);
	if (geteuid() != 0)
		pp_test_skip("the EAL with hugepages needs root");
	/* EAL heap plus the largest arena (1023 pages) and slack. */
	if (free_2m_hugepages() < EAL_MB / 2 + 8)
		pp_test_skip("fewer than %d free 2 MiB hugepages (echo 64 > /proc/sys/vm/nr_hugepages)",
			     EAL_MB / 2 + 8);

	snprintf(lcores_arg, sizeof(lcores_arg), "%s",
		 sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? "0,1" : "0");
	snprintf(mem, sizeof(mem), "%d", EAL_MB);
	snprintf(limit, sizeof(limit), "--socket-limit=%d", EAL_MB);
	eal[n++] = argv[0];
	eal[n++] = "--no-pci";
	eal[n++] = "--no-telemetry";
	eal[n++] = "--in-memory";
	eal[n++] = "--log-level=notice";
	eal[n++] = "-l";
	eal[n++] = lcores_arg;
	eal[n++] = "-m";
	eal[n++] = mem;
	eal[n++] = limit;
	eal[n++] = "-d";
	eal[n++] = (char *)private_plugin(argv[1]);
	REQUIRE(eal[n - 1] != NULL);
	/* Extra EAL arguments, such as --iova-mode=va. */
	for (int i = 2; i < argc && n < (int)RTE_DIM(eal) - 1; i++)
		eal[n++] = argv[i];
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		private_plugin_remove();
		pp_test_skip("EAL init failed: %s", rte_strerror(rte_errno));
	}
	private_plugin_remove();
	worker = rte_get_next_lcore(-1, 1, 0);
	if (worker >= RTE_MAX_LCORE)
		worker = RTE_MAX_LCORE;

	RUN_TEST(test_ops_and_layout);
	RUN_TEST(test_memory);
	RUN_TEST(test_density_and_colours);
	RUN_TEST(test_no_spread);
	RUN_TEST(test_single_and_bulk);
	RUN_TEST(test_overask);
	RUN_TEST(test_drain);
	RUN_TEST(test_lcores);
	RUN_TEST(test_put_foreign_pointer);
	RUN_TEST(test_free_in_use);
	RUN_TEST(test_4k_fallback);
	rte_eal_cleanup();
	return pp_test_result();
}
