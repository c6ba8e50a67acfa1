/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_rdma - the verbs DMA backend (lib/dma/verbs.c) against a real RDMA
 * device: soft-RoCE (rdma_rxe) in the QEMU guest that run-guest.sh --rdma
 * boots, named by PP_TEST_RDMA_DEV. One case per run:
 *
 *   api             no device needed: the errors without one (host, unit)
 *   reg_2m          register a 2 MiB arena: one MR per segment, O(1) keys,
 *                   page_pool maps through it, unmapped cleanly
 *   reg_1g          the same for a 1 GiB arena of one 1 GiB page
 *   reg_grow        a growable arena: an MR per segment, added at growth
 *                   (the device receives into it), removed at shrink
 *   oob_recv        a receive buffer outside the registered range: the
 *                   device fails the work request, the buffer is untouched
 *   dereg_inflight  unmap the arena while pool pages are posted: the device
 *                   fails the work requests, the pages are never written,
 *                   and the pool still gets every page back
 *   no_device       a device name that does not exist: ENODEV, and the
 *                   message lists the devices there are
 *   port_down       (the netdev is down) ENETDOWN, the message says why
 *   memlock         without CAP_IPC_LOCK and with a small RLIMIT_MEMLOCK,
 *                   registration fails and the message names the limit
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pp_test.h"

#if PP_TEST_HAVE_VERBS
#include <infiniband/verbs.h>
#endif

/* ---- no device needed ---- */

static void test_api(void)
{
	struct pp_dma_opts o = { .sz = sizeof(o), .mode = PP_IOVA_VERBS };
	struct pp_dma_opts vo = { .sz = sizeof(vo), .mode = PP_IOVA_VA };
	struct pp_dma *dma;
	struct ibv_context *ctx;
	uint32_t lkey;
	bool built = pp_dma_verbs_keys(NULL, NULL, 0, NULL, NULL) != -EOPNOTSUPP;

	printf("verbs backend %s\n", built ? "built" : "not built");

	/* A VERBS domain needs a protection domain, or the build lacks it. */
	pp_test_log_reset();
	errno = 0;
	dma = pp_dma_create(&o);
	CHECK(dma == NULL);
	CHECK_EQ(errno, built ? EINVAL : EOPNOTSUPP);
	CHECK(pp_test_log_has(built ? "opts.verbs_pd" : "install libibverbs-dev"));

	/* Keys of another kind of domain. */
	dma = pp_dma_create(&vo);
	REQUIRE(dma != NULL);
	CHECK_EQ(pp_dma_verbs_keys(dma, &lkey, 4, &lkey, NULL),
		 built ? -EINVAL : -EOPNOTSUPP);
	CHECK_EQ(pp_dma_verbs_arena_mrs(dma, NULL),
		 built ? -EINVAL : -EOPNOTSUPP);
	CHECK_EQ(pp_dma_destroy(dma), 0);

	/* No such device: the message says what to load or which exist. */
	pp_test_log_reset();
	errno = 0;
	ctx = pp_dma_verbs_open("pp-no-such-rdma-dev", 1);
	CHECK(ctx == NULL);
	CHECK_EQ(errno, built ? ENODEV : EOPNOTSUPP);
	if (built)
		CHECK(pp_test_log_has("no RDMA device"));

	/* The first device: where there is none, the message says how to
	 * get one; where there is one, open it or say its port is down. */
	pp_test_log_reset();
	errno = 0;
	ctx = pp_dma_verbs_open(NULL, 1);
#if PP_TEST_HAVE_VERBS
	if (ctx) {
		printf("this machine has an RDMA device with an ACTIVE port\n");
		ibv_close_device(ctx);
	} else if (errno == ENODEV) {
		CHECK(pp_test_log_has("rdma link add"));
	} else {
		CHECK(errno == ENETDOWN || errno == EINVAL);
		CHECK(pp_test_log_has("port"));
	}
#else
	CHECK(ctx == NULL);
	CHECK_EQ(errno, EOPNOTSUPP);
#endif
}

#if PP_TEST_HAVE_VERBS

/* ---- helpers for the device cases ---- */

static const char *dev_name(void)
{
	const char *d = getenv("PP_TEST_RDMA_DEV");

	if (!d || !*d)
		pp_test_skip("PP_TEST_RDMA_DEV is not set: this case runs in the QEMU guest (tests/qemu/run-guest.sh --rdma)");
	return d;
}

static struct ibv_context *open_dev(void)
{
	struct ibv_context *ctx = pp_dma_verbs_open(dev_name(), 1);

	if (!ctx) {
		fprintf(stderr, "pp_dma_verbs_open(%s): %s\n", dev_name(),
			strerror(errno));
		exit(1);
	}
	return ctx;
}

static struct pp_dma *verbs_dma(struct ibv_pd *pd)
{
	struct pp_dma_opts o = { .sz = sizeof(o), .mode = PP_IOVA_VERBS,
				 .verbs_pd = pd };
	struct pp_dma *dma = pp_dma_create(&o);

	REQUIRE(dma != NULL);
	CHECK_EQ(pp_dma_mode(dma), PP_IOVA_VERBS);
	return dma;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Two RC QPs connected to each other on port 1 (loopback). */
struct pair {
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
};

static void qp_to_rts(struct ibv_context *ctx, struct ibv_qp *qp,
		      uint32_t dest)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr a = { 0 };
	union ibv_gid gid;
	int idx = 0, i;

	REQUIRE(ibv_query_port(ctx, 1, &pa) == 0);
	/* The IPv4-mapped GID of the netdev's address (RoCE v2). */
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(ctx, 1, i, &gid) == 0 &&
		    gid.raw[10] == 0xff && gid.raw[11] == 0xff) {
			idx = i;
			break;
		}
	}
	REQUIRE(ibv_query_gid(ctx, 1, idx, &gid) == 0);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	REQUIRE(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					      IBV_QP_PORT |
					      IBV_QP_ACCESS_FLAGS) == 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = (uint8_t)idx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	REQUIRE(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
					      IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					      IBV_QP_RQ_PSN |
					      IBV_QP_MAX_DEST_RD_ATOMIC |
					      IBV_QP_MIN_RNR_TIMER) == 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	/* One retry: the cases here expect the peer to fail requests. */
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 1;
	REQUIRE(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
					      IBV_QP_RETRY_CNT |
					      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
					      IBV_QP_MAX_QP_RD_ATOMIC) == 0);
}

static void pair_create(struct ibv_context *ctx, struct ibv_pd *pd,
			struct pair *p)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 128,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int i;

	for (i = 0; i < 2; i++) {
		p->cq[i] = ibv_create_cq(ctx, 256, NULL, NULL, 0);
		REQUIRE(p->cq[i] != NULL);
		qa.send_cq = qa.recv_cq = p->cq[i];
		p->qp[i] = ibv_create_qp(pd, &qa);
		REQUIRE(p->qp[i] != NULL);
	}
	qp_to_rts(ctx, p->qp[0], p->qp[1]->qp_num);
	qp_to_rts(ctx, p->qp[1], p->qp[0]->qp_num);
}

static void pair_destroy(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		CHECK_EQ(ibv_destroy_qp(p->qp[i]), 0);
		CHECK_EQ(ibv_destroy_cq(p->cq[i]), 0);
	}
}

/* The next completion on @cq within 10 s (retries take a while under
 * TCG); returns false on timeout. */
static bool wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now_s() + 10;

	while (now_s() < end)
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return true;
	return false;
}

static void post_recv(struct ibv_qp *qp, void *addr, uint32_t len,
		      uint32_t lkey, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	REQUIRE(ibv_post_recv(qp, &wr, &bad) == 0);
}

static void post_send(struct ibv_qp *qp, void *addr, uint32_t len,
		      uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	REQUIRE(ibv_post_send(qp, &wr, &bad) == 0);
}

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* ---- registration ---- */

static void check_registration(size_t size, size_t page_size)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_dma *dma;
	struct pp_pool *pool;
	struct pp_page *pages[64];
	uint32_t lk0, rk0, lk, rk;
	uint64_t iova;
	uint8_t *base;
	unsigned int i, n;
	double t;
	int err;

	REQUIRE(pd != NULL);
	arena = pp_test_arena(size, page_size);
	base = pp_arena_base(arena);
	dma = verbs_dma(pd);

	t = now_s();
	err = pp_dma_map_arena(dma, arena);
	t = now_s() - t;
	CHECK_EQ(err, 0);
	printf("registered %zu MiB of %zu KiB pages in %.3f s\n", size >> 20,
	       page_size >> 10, t);
	/* One registration per segment, none per page. */
	CHECK_EQ(pp_dma_verbs_arena_mrs(dma, arena),
		 pp_arena_segment_count(arena));
	CHECK_EQ(pp_dma_map_arena(dma, arena), -EEXIST);

	/* The same keys at both ends; an address past them is unknown. */
	CHECK_EQ(pp_dma_verbs_keys(dma, base, PP_PAGE_SIZE, &lk0, &rk0), 0);
	CHECK_EQ(pp_dma_verbs_keys(dma, base + size - PP_PAGE_SIZE,
				   PP_PAGE_SIZE, &lk, &rk), 0);
	CHECK_EQ(lk, lk0);
	CHECK_EQ(rk, rk0);
	CHECK_EQ(pp_dma_verbs_keys(dma, base + size, 1, &lk, NULL), -ENOENT);
	CHECK_EQ(pp_dma_verbs_keys(dma, base - 1, 1, &lk, NULL), -ENOENT);
	CHECK_EQ(pp_dma_verbs_keys(dma, base + size - 8, 16, &lk, NULL),
		 -EINVAL);
	CHECK_EQ(pp_dma_map_page(dma, base + size / 2, 0, PP_DMA_FROM_DEVICE,
				 &iova), 0);
	CHECK_EQ(iova, (uintptr_t)(base + size / 2));

	/* page_pool maps through it like any backend: IOVA = address. */
	alloc = pp_test_allocator(arena);
	pool = pp_pool_create(&(struct pp_pool_params){
		.sz = sizeof(struct pp_pool_params), .allocator = alloc,
		.dma = dma, .flags = PP_POOL_F_DMA_MAP,
		.nid = PP_NUMA_NODE_ANY, .dma_dir = PP_DMA_FROM_DEVICE });
	REQUIRE(pool != NULL);
	n = pp_pool_alloc_bulk(pool, pages, 64);
	CHECK_EQ(n, 64);
	for (i = 0; i < n; i++) {
		CHECK_EQ(pp_page_dma_addr(pages[i]),
			 (uintptr_t)pp_page_address(pages[i]));
		CHECK_EQ(pp_dma_verbs_keys(dma, pp_page_address(pages[i]),
					   PP_PAGE_SIZE, &lk, NULL), 0);
		CHECK_EQ(lk, lk0);
	}
	for (i = 0; i < n; i++)
		pp_pool_recycle_direct(pool, pages[i]);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);

	CHECK_EQ(pp_dma_destroy(dma), -EBUSY);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_verbs_keys(dma, base, 1, &lk, NULL), -ENOENT);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), -ENOENT);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

static void test_reg_2m(void)
{
	check_registration(PP_PAGE_SIZE_2M, PP_PAGE_SIZE_2M);
}

static void test_reg_1g(void)
{
	long n = pp_hugepages_free(PP_PAGE_SIZE_1G, PP_NUMA_NODE_ANY);

	if (n < 0)
		pp_test_skip(PP_TEST_NO_HUGEPAGE_SIZE " (run-guest.sh --rdma boots a CPU that has them)",
			     PP_PAGE_SIZE_1G >> 10, PP_PAGE_SIZE_1G >> 10);
	if (n < 1)
		pp_test_skip("no free 1 GiB hugepage (boot with hugepagesz=1G hugepages=1; run-guest.sh --rdma does)");
	check_registration(PP_PAGE_SIZE_1G, PP_PAGE_SIZE_1G);
}

/*
 * A growable arena: one registration per committed segment. A growth
 * registers the new segment (a page of it gets its keys, and the device
 * receives into it), a part not committed has no keys (-ENOENT), a
 * block across two segments none either (-EINVAL), and a shrink
 * deregisters the segment again.
 */
static void test_reg_grow(void)
{
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = 2 * PP_PAGE_SIZE_2M,
		.max_size = 8 * PP_PAGE_SIZE_2M,
		.grow_step = 2 * PP_PAGE_SIZE_2M,
		.page_size = PP_PAGE_SIZE_2M, .numa_node = PP_NUMA_NODE_ANY,
		.name = "rdma-grow",
	};
	struct pp_allocator_opts lo = {
		.sz = sizeof(lo), .nr_arenas = 1,
		.flags = PP_ALLOCATOR_F_MANUAL_RESIZE,
	};
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	const size_t step = 2 * PP_PAGE_SIZE_2M;
	struct pp_allocator *alloc;
	struct pp_arena *arena;
	struct pp_dma *dma;
	uint32_t lk0, lk1;
	uint8_t *base, *grown;
	struct ibv_wc wc;
	struct pair p;

	REQUIRE(pd != NULL);
	if (pp_hugepages_free(PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY) < 4)
		pp_test_skip("fewer than 4 free 2 MiB hugepages");
	arena = pp_arena_create(&ao);
	REQUIRE(arena != NULL);
	lo.arenas = &arena;
	alloc = pp_allocator_create(&lo);
	REQUIRE(alloc != NULL);
	base = pp_arena_base(arena);
	grown = base + step;
	dma = verbs_dma(pd);
	CHECK_EQ(pp_dma_map_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_verbs_arena_mrs(dma, arena), 1);
	CHECK_EQ(pp_dma_verbs_keys(dma, base, PP_PAGE_SIZE, &lk0, NULL), 0);
	CHECK_EQ(pp_dma_verbs_keys(dma, grown, PP_PAGE_SIZE, &lk1, NULL),
		 -ENOENT);

	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(pp_dma_verbs_arena_mrs(dma, arena), 2);
	CHECK_EQ(pp_dma_verbs_keys(dma, grown, PP_PAGE_SIZE, &lk1, NULL), 0);
	CHECK(lk1 != lk0);
	CHECK_EQ(pp_dma_verbs_keys(dma, grown - 8, 16, NULL, NULL), -EINVAL);

	/* The device writes into the new segment under its key. */
	pair_create(ctx, pd, &p);
	memset(grown, 0xa5, PP_PAGE_SIZE);
	memset(base, 0x5a, 256);
	post_recv(p.qp[1], grown, PP_PAGE_SIZE, lk1, 9);
	post_send(p.qp[0], base, 256, lk0);
	REQUIRE(wait_wc(p.cq[1], &wc));
	printf("receive into the grown segment: %s\n",
	       ibv_wc_status_str(wc.status));
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 256);
	CHECK(all_bytes(grown, 256, 0x5a));
	CHECK(all_bytes(grown + 256, PP_PAGE_SIZE - 256, 0xa5));
	REQUIRE(wait_wc(p.cq[0], &wc));
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	pair_destroy(&p);

	CHECK_EQ(pp_allocator_shrink(alloc, 0), 1);
	CHECK_EQ(pp_dma_verbs_arena_mrs(dma, arena), 1);
	CHECK_EQ(pp_dma_verbs_keys(dma, grown, PP_PAGE_SIZE, NULL, NULL),
		 -ENOENT);
	CHECK_EQ(pp_dma_verbs_keys(dma, base, PP_PAGE_SIZE, &lk1, NULL), 0);
	CHECK_EQ(lk1, lk0);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_allocator_check(alloc, NULL), 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

/* ---- the device refuses what is not registered ---- */

static void test_oob_recv(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct pp_arena *arena = pp_test_arena(PP_PAGE_SIZE_2M,
					       PP_PAGE_SIZE_2M);
	uint8_t *base = pp_arena_base(arena), *outside;
	struct pp_dma *dma = verbs_dma(pd);
	struct ibv_wc wc;
	struct pair p;
	uint32_t lkey;

	REQUIRE(pd != NULL);
	CHECK_EQ(pp_dma_map_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_verbs_keys(dma, base, PP_PAGE_SIZE, &lkey, NULL), 0);
	outside = aligned_alloc(PP_PAGE_SIZE, PP_PAGE_SIZE);
	REQUIRE(outside != NULL);
	memset(outside, 0xa5, PP_PAGE_SIZE);
	CHECK_EQ(pp_dma_verbs_keys(dma, outside, PP_PAGE_SIZE, NULL, NULL),
		 -ENOENT);
	pair_create(ctx, pd, &p);

	/* The arena's key with an address outside the arena. */
	post_recv(p.qp[1], outside, PP_PAGE_SIZE, lkey, 7);
	memset(base, 0x5a, 256);
	post_send(p.qp[0], base, 256, lkey);
	REQUIRE(wait_wc(p.cq[1], &wc));
	printf("receive outside the registration: %s\n",
	       ibv_wc_status_str(wc.status));
	CHECK_EQ(wc.wr_id, 7);
	CHECK(wc.status != IBV_WC_SUCCESS);
	CHECK(all_bytes(outside, PP_PAGE_SIZE, 0xa5));
	/* The sender learns it too (a NAK), and nothing is left posted. */
	REQUIRE(wait_wc(p.cq[0], &wc));
	printf("the sender's completion: %s\n", ibv_wc_status_str(wc.status));
	CHECK(wc.status != IBV_WC_SUCCESS);
	CHECK(all_bytes(outside, PP_PAGE_SIZE, 0xa5));

	pair_destroy(&p);
	free(outside);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

/*
 * Pool pages posted as receive buffers, then the arena unmapped from the
 * domain (deregistered) while they are still in flight: the device must
 * fail the receive, never write the page, and the pool gets them back.
 */
static void test_dereg_inflight(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct pp_arena *arena = pp_test_arena(4 * PP_PAGE_SIZE_2M,
					       PP_PAGE_SIZE_2M);
	struct pp_allocator *alloc = pp_test_allocator(arena);
	struct pp_dma *dma = verbs_dma(pd);
	struct pp_page *pages[16];
	struct pp_pool *pool;
	uint8_t *sendbuf;
	struct ibv_mr *smr;
	struct ibv_wc wc;
	struct pair p;
	unsigned int i, n, done = 0;
	uint32_t lkey;

	REQUIRE(pd != NULL);
	CHECK_EQ(pp_dma_map_arena(dma, arena), 0);
	pool = pp_pool_create(&(struct pp_pool_params){
		.sz = sizeof(struct pp_pool_params), .allocator = alloc,
		.dma = dma, .flags = PP_POOL_F_DMA_MAP,
		.nid = PP_NUMA_NODE_ANY, .dma_dir = PP_DMA_FROM_DEVICE });
	REQUIRE(pool != NULL);
	/* The sender's buffer lives outside the arena, registered alone. */
	sendbuf = aligned_alloc(PP_PAGE_SIZE, PP_PAGE_SIZE);
	REQUIRE(sendbuf != NULL);
	memset(sendbuf, 0x3c, PP_PAGE_SIZE);
	smr = ibv_reg_mr(pd, sendbuf, PP_PAGE_SIZE, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(smr != NULL);
	pair_create(ctx, pd, &p);

	n = pp_pool_alloc_bulk(pool, pages, 16);
	REQUIRE(n == 16);
	for (i = 0; i < n; i++) {
		memset(pp_page_address(pages[i]), 0xc3, PP_PAGE_SIZE);
		CHECK_EQ(pp_dma_verbs_keys(dma, pp_page_address(pages[i]),
					   PP_PAGE_SIZE, &lkey, NULL), 0);
		post_recv(p.qp[1], pp_page_address(pages[i]), PP_PAGE_SIZE,
			  lkey, i);
	}
	/* Deregistered with 16 pages in flight. */
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_verbs_arena_mrs(dma, arena), -ENOENT);

	post_send(p.qp[0], sendbuf, 512, smr->lkey);
	REQUIRE(wait_wc(p.cq[1], &wc));
	printf("receive into a deregistered page: %s\n",
	       ibv_wc_status_str(wc.status));
	CHECK(wc.status != IBV_WC_SUCCESS);
	done++;
	/* The QP is in error now: the other receives are flushed. */
	while (done < n && wait_wc(p.cq[1], &wc)) {
		CHECK(wc.status != IBV_WC_SUCCESS);
		done++;
	}
	CHECK_EQ(done, n);
	for (i = 0; i < n; i++) {
		CHECK(all_bytes(pp_page_address(pages[i]), PP_PAGE_SIZE, 0xc3));
		pp_pool_recycle_direct(pool, pages[i]);
	}
	pair_destroy(&p);
	CHECK_EQ(ibv_dereg_mr(smr), 0);
	free(sendbuf);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

/* ---- errors ---- */

static void test_no_device(void)
{
	struct ibv_context *ctx;

	pp_test_log_reset();
	errno = 0;
	ctx = pp_dma_verbs_open("pp-no-such-rdma-dev", 1);
	CHECK(ctx == NULL);
	CHECK_EQ(errno, ENODEV);
	/* The message names the devices there are. */
	CHECK(pp_test_log_has(dev_name()));
	errno = 0;
	ctx = pp_dma_verbs_open(dev_name(), 9);
	CHECK(ctx == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(pp_test_log_has("no port 9"));
}

/* Run with the device's netdev down (the guest's test command does it). */
static void test_port_down(void)
{
	struct ibv_context *ctx = NULL;
	double end = now_s() + 10;

	/* The port follows the link within a moment. */
	do {
		if (ctx)
			ibv_close_device(ctx);
		pp_test_log_reset();
		errno = 0;
		ctx = pp_dma_verbs_open(dev_name(), 1);
	} while (ctx && now_s() < end);
	CHECK(ctx == NULL);
	CHECK_EQ(errno, ENETDOWN);
	CHECK(pp_test_log_has("not ACTIVE"));
	if (ctx)
		ibv_close_device(ctx);
}

/* Without CAP_IPC_LOCK, registration is bounded by RLIMIT_MEMLOCK. */
static void test_memlock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	struct rlimit rl = { 64 << 10, 64 << 10 };
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct pp_arena *arena = pp_test_arena(PP_PAGE_SIZE_2M,
					       PP_PAGE_SIZE_2M);
	struct pp_dma *dma = verbs_dma(pd);

	REQUIRE(pd != NULL);
	REQUIRE(syscall(SYS_capget, &h, d) == 0);
	d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &h, d) != 0 || setrlimit(RLIMIT_MEMLOCK, &rl))
		pp_test_skip("cannot drop CAP_IPC_LOCK or lower RLIMIT_MEMLOCK here");
	pp_test_log_reset();
	CHECK_EQ(pp_dma_map_arena(dma, arena), -ENOMEM);
	CHECK(pp_test_log_has("RLIMIT_MEMLOCK"));
	CHECK_EQ(pp_dma_verbs_arena_mrs(dma, arena), -ENOENT);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

#endif /* PP_TEST_HAVE_VERBS */

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "api";

	pp_test_capture_log();
	if (!strcmp(c, "api")) {
		RUN_TEST(test_api);
		return pp_test_result();
	}
#if PP_TEST_HAVE_VERBS
	if (!strcmp(c, "reg_2m"))
		RUN_TEST(test_reg_2m);
	else if (!strcmp(c, "reg_1g"))
		RUN_TEST(test_reg_1g);
	else if (!strcmp(c, "reg_grow"))
		RUN_TEST(test_reg_grow);
	else if (!strcmp(c, "oob_recv"))
		RUN_TEST(test_oob_recv);
	else if (!strcmp(c, "dereg_inflight"))
		RUN_TEST(test_dereg_inflight);
	else if (!strcmp(c, "no_device"))
		RUN_TEST(test_no_device);
	else if (!strcmp(c, "port_down"))
		RUN_TEST(test_port_down);
	else if (!strcmp(c, "memlock"))
		RUN_TEST(test_memlock);
	else {
		fprintf(stderr, "unknown case %s\n", c);
		return 2;
	}
	return pp_test_result();
#else
	pp_test_skip("built without libibverbs: case %s needs it (install libibverbs-dev)",
		     c);
#endif
}
