/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_echo - RDMA receive buffers from a page_pool: a client queue pair
 * sends numbered messages to a server queue pair on the same device
 * (loopback, two RC QPs), the server echoes each one back from the very
 * page it landed in, and the client checks every byte.
 *
 *   rdma_echo [--dev NAME] [--port N] [--gid-index N] [--count N]
 *             [--time S] [--size BYTES] [--window N] [--depth N]
 *             [--naive] [--arena-mb MB] [--quiet] [--json FILE]
 *
 * Both QPs post their receive buffers from their own page_pool, whose
 * pages are mapped through a PP_IOVA_VERBS domain: the arena was
 * registered once (one ibv_reg_mr per segment) and a page's lkey is a
 * lookup. Receive queues are refilled in bulk, REFILL buffers with one
 * pp_pool_alloc_bulk() and one ibv_post_recv() chain, whenever that many
 * have completed; a completed buffer goes back to its pool.
 *
 * --naive is the baseline: the same pages (from pools without a DMA
 * domain), but each buffer is registered with ibv_reg_mr when it is posted
 * and deregistered when its work completes: one registration per buffer
 * use, three per echoed message.
 *
 * A line per second with the message rate; at the end a summary, a JSON
 * line and the accounting: every message sent came back once and intact,
 * every posted buffer completed or was flushed, and both pools were
 * destroyed with no page in flight. Exit status 0 when all of that holds,
 * 1 when it does not or the machine cannot run it (no RDMA device, a port
 * that is down, no memory: the message says why), 2 for a bad argument
 * (an option, or a --dev, --port or --gid-index the device lacks).
 * --json FILE writes the summary as one JSON document to FILE ('-':
 * stdout, and the human lines then go to stderr).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "pp_cli.h"

#include <pagepool/pagepool.h>

/* NAPI-style budget: a refill is one page_pool refill (64 pages). */
#define REFILL PP_POOL_CACHE_REFILL
/* Completions taken per ibv_poll_cq call. */
#define POLL_BATCH 32

struct opts {
	const char *dev;
	unsigned int port;
	int gid_index;      /* -1: pick an IPv4-mapped GID, else index 0 */
	unsigned long count; /* 0: run for --time */
	double time_s;
	unsigned int size;
	unsigned int window; /* client messages in flight */
	unsigned int depth;  /* receive buffers posted per QP */
	unsigned int arena_mb;
	bool naive;
	bool quiet;
	const char *json;    /* --json FILE, or NULL */
};

/* One side: a queue pair, its completion queues, its pool. */
struct end {
	const char *name;
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct pp_pool *pool;
	unsigned int rq_posted;
	unsigned int sq_posted;
	unsigned long posted, completed; /* receive buffers, for accounting */
	unsigned long flushed;
};

struct echo {
	struct opts o;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_dma *dma;          /* NULL in --naive */
	uintptr_t base;
	struct ibv_mr **naive_mr;    /* --naive: the MR of each page */
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
	struct end cli, srv;
	unsigned long sent, echoed, received, bad, regs;
	unsigned long next_rx_seq;
	unsigned int inflight;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* What the machine lacks or refused (no device, no memory, a failed
 * verb): exit 1. A bad argument exits 2 (parse(), bad_device()). */
static void __attribute__((noreturn)) die(const char *msg, int err)
{
	fprintf(stderr, "rdma_echo: %s%s%s\n", msg, err ? ": " : "",
		err ? strerror(err) : "");
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- buffers: a page's keys, or its own MR in --naive ---- */

static size_t page_idx(struct echo *e, void *addr)
{
	return ((uintptr_t)addr - e->base) >> PP_PAGE_SHIFT;
}

/* The lkey of a page about to be posted; registers it in --naive. */
static uint32_t buf_lkey(struct echo *e, struct pp_page *page)
{
	void *addr = pp_page_address(page);
	struct ibv_mr *mr;
	uint32_t lkey;

	if (!e->o.naive) {
		if (pp_dma_verbs_keys(e->dma, addr, PP_PAGE_SIZE, &lkey, NULL))
			die("a pool page lies outside the registered arena", 0);
		return lkey;
	}
	mr = ibv_reg_mr(e->pd, addr, PP_PAGE_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr of one page failed (raise RLIMIT_MEMLOCK)",
		    errno);
	e->naive_mr[page_idx(e, addr)] = mr;
	e->regs++;
	return mr->lkey;
}

/* The page's work is done: deregister it in --naive, recycle it. */
static void buf_done(struct echo *e, struct pp_pool *pool,
		     struct pp_page *page)
{
	if (e->o.naive) {
		size_t i = page_idx(e, pp_page_address(page));

		if (ibv_dereg_mr(e->naive_mr[i]))
			die("ibv_dereg_mr failed", errno);
		e->naive_mr[i] = NULL;
	}
	pp_pool_recycle_direct(pool, page);
}

/* ---- payload: a sequence number, then a pattern derived from it ---- */

static void payload_fill(uint8_t *p, unsigned int len, uint64_t seq)
{
	unsigned int i;

	memcpy(p, &seq, sizeof(seq));
	for (i = sizeof(seq); i < len; i++)
		p[i] = (uint8_t)(seq * 131 + i);
}

static bool payload_ok(const uint8_t *p, unsigned int len, uint64_t seq)
{
	uint64_t got;
	unsigned int i;

	memcpy(&got, p, sizeof(got));
	if (got != seq)
		return false;
	for (i = sizeof(seq); i < len; i++)
		if (p[i] != (uint8_t)(seq * 131 + i))
			return false;
	return true;
}

/* ---- receive queues: bulk refill from the pool ---- */

static void rq_refill(struct echo *e, struct end *d)
{
	struct ibv_recv_wr wr[REFILL], *bad;
	struct ibv_sge sge[REFILL];
	struct pp_page *pages[REFILL];
	unsigned int i, n;
	int err;

	while (e->o.depth - d->rq_posted >= REFILL) {
		n = pp_pool_alloc_bulk(d->pool, pages, REFILL);
		if (!n)
			die("the page pool ran dry: raise --arena-mb", 0);
		for (i = 0; i < n; i++) {
			sge[i].addr = (uintptr_t)pp_page_address(pages[i]);
			sge[i].length = PP_PAGE_SIZE;
			sge[i].lkey = buf_lkey(e, pages[i]);
			wr[i].wr_id = (uintptr_t)pages[i];
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		}
		err = ibv_post_recv(d->qp, wr, &bad);
		if (err)
			die("ibv_post_recv failed", err);
		d->rq_posted += n;
		d->posted += n;
	}
}

static void post_send(struct end *d, struct pp_page *page, unsigned int len,
		      uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)pp_page_address(page),
		.length = len,
		.lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)page,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	err = ibv_post_send(d->qp, &wr, &bad);
	if (err)
		die("ibv_post_send failed", err);
	d->sq_posted++;
}

/* ---- the two sides ---- */

static void client_send(struct echo *e)
{
	struct pp_page *page;

	while (e->inflight < e->o.window && !stop &&
	       (!e->o.count || e->sent < e->o.count)) {
		page = pp_pool_alloc_pages(e->cli.pool);
		if (!page)
			die("the page pool ran dry: raise --arena-mb", 0);
		payload_fill(pp_page_address(page), e->o.size, e->sent);
		post_send(&e->cli, page, e->o.size, buf_lkey(e, page));
		e->sent++;
		e->inflight++;
	}
}

static void wc_check(const struct ibv_wc *wc, const char *what)
{
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "rdma_echo: %s completed with %s (vendor error 0x%x)\n",
			what, ibv_wc_status_str(wc->status), wc->vendor_err);
		exit(1);
	}
}

/* Server: each received message is checked and sent back from its page. */
static unsigned int server_poll(struct echo *e)
{
	struct ibv_wc wc[POLL_BATCH];
	struct pp_page *page;
	int i, n;
	unsigned int done = 0;

	n = ibv_poll_cq(e->srv.rcq, POLL_BATCH, wc);
	for (i = 0; i < n; i++) {
		wc_check(&wc[i], "a server receive");
		page = (struct pp_page *)(uintptr_t)wc[i].wr_id;
		e->srv.rq_posted--;
		e->srv.completed++;
		if (wc[i].byte_len != e->o.size ||
		    !payload_ok(pp_page_address(page), wc[i].byte_len,
				e->echoed)) {
			e->bad++;
		}
		/* The echo reuses the receive's registration. */
		post_send(&e->srv, page, wc[i].byte_len,
			  e->o.naive ?
			  e->naive_mr[page_idx(e, pp_page_address(page))]->lkey :
			  buf_lkey(e, page));
		e->echoed++;
	}
	done += (unsigned int)(n > 0 ? n : 0);
	n = ibv_poll_cq(e->srv.scq, POLL_BATCH, wc);
	for (i = 0; i < n; i++) {
		wc_check(&wc[i], "a server echo");
		e->srv.sq_posted--;
		buf_done(e, e->srv.pool,
			 (struct pp_page *)(uintptr_t)wc[i].wr_id);
	}
	rq_refill(e, &e->srv);
	return done;
}

/* Client: echoes arrive in order (RC); each is checked and recycled. */
static void client_poll(struct echo *e)
{
	struct ibv_wc wc[POLL_BATCH];
	struct pp_page *page;
	int i, n;

	n = ibv_poll_cq(e->cli.rcq, POLL_BATCH, wc);
	for (i = 0; i < n; i++) {
		wc_check(&wc[i], "a client receive");
		page = (struct pp_page *)(uintptr_t)wc[i].wr_id;
		e->cli.rq_posted--;
		e->cli.completed++;
		if (wc[i].byte_len != e->o.size ||
		    !payload_ok(pp_page_address(page), wc[i].byte_len,
				e->next_rx_seq))
			e->bad++;
		e->next_rx_seq++;
		e->received++;
		e->inflight--;
		buf_done(e, e->cli.pool, page);
	}
	n = ibv_poll_cq(e->cli.scq, POLL_BATCH, wc);
	for (i = 0; i < n; i++) {
		wc_check(&wc[i], "a client send");
		e->cli.sq_posted--;
		buf_done(e, e->cli.pool,
			 (struct pp_page *)(uintptr_t)wc[i].wr_id);
	}
	rq_refill(e, &e->cli);
}

/* ---- setup ---- */

/*
 * pp_dma_verbs_open() failed with @err. A --port the device does not
 * have (EINVAL), or a --dev that names none of the devices there are
 * (ENODEV while there are some), is a bad argument: exit 2. No device
 * at all, or a port that is down, is the machine's: exit 1.
 */
static void __attribute__((noreturn)) bad_device(const struct opts *o, int err)
{
	int n = 0;

	if (err == ENODEV && o->dev) {
		struct ibv_device **list = ibv_get_device_list(&n);

		if (list)
			ibv_free_device_list(list);
	}
	if (err == EINVAL) {
		fprintf(stderr, "rdma_echo: --port %u: the device has no such port (the message above says which it has)\n",
			o->port);
		exit(2);
	}
	if (n > 0) {
		fprintf(stderr, "rdma_echo: --dev %s: no such RDMA device (the message above lists those there are)\n",
			o->dev);
		exit(2);
	}
	die("no usable RDMA device", err);
}

/* Prefer an IPv4-mapped GID (RoCE v2 over the netdev's IPv4 address). */
static int pick_gid(struct echo *e, const struct ibv_port_attr *pa)
{
	static const uint8_t v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	union ibv_gid gid;
	int i, first = -1;

	if (e->o.gid_index >= 0) {
		if (ibv_query_gid(e->ctx, (uint8_t)e->o.port, e->o.gid_index,
				  &e->gid)) {
			/* An index the port's table does not have. */
			fprintf(stderr, "rdma_echo: --gid-index %d: the port has no such GID (%s); leave it out to pick one\n",
				e->o.gid_index, strerror(errno));
			exit(2);
		}
		return e->o.gid_index;
	}
	for (i = 0; i < pa->gid_tbl_len; i++) {
		if (ibv_query_gid(e->ctx, (uint8_t)e->o.port, i, &gid))
			continue;
		if (!gid.global.subnet_prefix && !gid.global.interface_id)
			continue;
		if (first < 0) {
			first = i;
			e->gid = gid;
		}
		if (!memcmp(gid.raw, v4_prefix, sizeof(v4_prefix))) {
			e->gid = gid;
			return i;
		}
	}
	if (first < 0)
		die("the port has no GID: give its netdev an IP address", 0);
	return first;
}

static void end_create(struct echo *e, struct end *d, const char *name)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct pp_pool_params pp = {
		.sz = sizeof(pp),
		.allocator = e->alloc,
		.dma = e->dma,
		.flags = e->dma ? PP_POOL_F_DMA_MAP : 0,
		.nid = PP_NUMA_NODE_ANY,
		.dma_dir = PP_DMA_BIDIRECTIONAL,
		.name = name,
	};
	unsigned int sq = 2 * e->o.window;

	d->name = name;
	d->scq = ibv_create_cq(e->ctx, (int)sq, NULL, NULL, 0);
	d->rcq = ibv_create_cq(e->ctx, (int)e->o.depth, NULL, NULL, 0);
	if (!d->scq || !d->rcq)
		die("ibv_create_cq failed", errno);
	qa.send_cq = d->scq;
	qa.recv_cq = d->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = sq;
	qa.cap.max_recv_wr = e->o.depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	d->qp = ibv_create_qp(e->pd, &qa);
	if (!d->qp)
		die("ibv_create_qp failed", errno);
	d->pool = pp_pool_create(&pp);
	if (!d->pool)
		die("pp_pool_create failed", errno);
}

/* RESET -> INIT -> RTR -> RTS, connected to @peer on the same port. */
static void qp_connect(struct echo *e, struct end *d, struct end *peer)
{
	struct ibv_qp_attr a = { 0 };
	int err;

	a.qp_state = IBV_QPS_INIT;
	a.port_num = (uint8_t)e->o.port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	err = ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		die("ibv_modify_qp to INIT failed", err);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = e->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	/* 12 encodes 0.64 ms, the usual RNR NAK delay. */
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = e->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)e->gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = (uint8_t)e->o.port;
	err = ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_AV |
				       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER);
	if (err)
		die("ibv_modify_qp to RTR failed", err);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	/* 14: 4.096 us * 2^14 = 67 ms local ACK timeout; 7 retries, and
	 * rnr_retry 7 means retry for ever. */
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	err = ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		die("ibv_modify_qp to RTS failed", err);
}

/*
 * Let the last sends complete (their ACKs may trail the echoes), then move
 * the QP to ERROR and take back every receive buffer still posted.
 */
static void end_drain(struct echo *e, struct end *d)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[POLL_BATCH];
	double deadline = now_s() + 5;
	int i, n;

	while ((e->cli.sq_posted || e->srv.sq_posted) && now_s() < deadline) {
		server_poll(e);
		client_poll(e);
	}
	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE))
		die("ibv_modify_qp to ERROR failed", errno);
	while (d->rq_posted && now_s() < deadline) {
		n = ibv_poll_cq(d->rcq, POLL_BATCH, wc);
		for (i = 0; i < n; i++) {
			/* Only flushes are expected here. */
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				e->bad++;
			d->rq_posted--;
			d->flushed++;
			buf_done(e, d->pool,
				 (struct pp_page *)(uintptr_t)wc[i].wr_id);
		}
	}
}

/* What a run does without options. */
static const struct opts defaults = {
	.port = 1, .gid_index = -1, .time_s = 5, .size = 256, .window = 64,
	.depth = 256, .arena_mb = 16,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdma_echo [OPTION]...\n"
		"       rdma_echo -h|--help | -V|--version\n"
		"  Echoes messages between two RC queue pairs of one RDMA device\n"
		"  (e.g. soft-RoCE), receive buffers from a page_pool.\n"
		"  --dev NAME      the RDMA device (default: the first one)\n"
		"  --port N        its port (default %u)\n"
		"  --gid-index N   the GID (default %d: an IPv4-mapped one, else the\n"
		"                  first)\n"
		"  --count N       messages to echo (default 0: run for --time)\n"
		"  --time S        seconds to run without --count (default %g)\n"
		"  --size BYTES    message size, 8 to a page (default %u)\n"
		"  --window N      client messages in flight (default %u)\n"
		"  --depth N       receive buffers posted per queue pair (default %u)\n"
		"  --arena-mb MB   the arena's size (default %u)\n"
		"  --naive         register each buffer when it is posted instead\n"
		"  --quiet         no line per second\n"
		"  --json FILE     the summary as JSON ('-': stdout, and the other\n"
		"                  lines go to stderr)\n"
		"  -h, --help      this text\n"
		"  -V, --version   the version, and the commit it was built from\n",
		defaults.port, defaults.gid_index, defaults.time_s, defaults.size,
		defaults.window, defaults.depth, defaults.arena_mb);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "count", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "window", required_argument, NULL, 'w' },
		{ "depth", required_argument, NULL, 'D' },
		{ "arena-mb", required_argument, NULL, 'a' },
		{ "naive", no_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct pp_cli_opts cli = {
		.tool = "rdma_echo",
		.longopts = lo,
		.usage = usage,
	};
	const char *me = cli.tool;
	int c;

	*o = defaults;
	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'p': o->port = (unsigned int)pp_cli_uint(me, "--port", optarg, 1, 255); break;
		case 'g': o->gid_index = (int)pp_cli_int(me, "--gid-index", optarg, -1, 65535); break;
		case 'n': o->count = (unsigned long)pp_cli_uint(me, "--count", optarg, 0, ULONG_MAX); break;
		case 't': o->time_s = pp_cli_double(me, "--time", optarg, 0, 1e9); break;
		case 's': o->size = (unsigned int)pp_cli_uint(me, "--size", optarg, sizeof(uint64_t), PP_PAGE_SIZE); break;
		case 'w': o->window = (unsigned int)pp_cli_uint(me, "--window", optarg, 1, 1u << 20); break;
		case 'D': o->depth = (unsigned int)pp_cli_uint(me, "--depth", optarg, REFILL, 1u << 20); break;
		case 'a':
			o->arena_mb = (unsigned int)pp_cli_uint(me, "--arena-mb", optarg, 1, 1u << 20);
			pp_cli_fits_memory(me, "--arena-mb", (unsigned long long)o->arena_mb << 20);
			break;
		case 'N': o->naive = true; break;
		case 'q': o->quiet = true; break;
		case 'j': o->json = optarg; break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (o->size < sizeof(uint64_t) || o->size > PP_PAGE_SIZE) {
		fprintf(stderr, "rdma_echo: --size must be 8..%lu bytes (one page)\n",
			(unsigned long)PP_PAGE_SIZE);
		exit(2);
	}
	if (!o->window || o->window > o->depth || o->depth < REFILL) {
		fprintf(stderr, "rdma_echo: need 0 < --window <= --depth and --depth >= %u\n",
			REFILL);
		exit(2);
	}
	if (o->json)
		pp_cli_json_writable(me, o->json);
}

static void setup(struct echo *e)
{
	struct pp_arena_opts ao = {
		.sz = sizeof(ao),
		.size = (size_t)e->o.arena_mb << 20,
		.page_size = PP_PAGE_SIZE_2M,
		.numa_node = PP_NUMA_NODE_ANY,
		.flags = PP_ARENA_F_ALLOW_4K,
		.name = "rdma_echo",
	};
	struct pp_allocator_opts lo = { .sz = sizeof(lo), .nr_arenas = 1 };
	struct pp_dma_opts dopts = { .sz = sizeof(dopts),
				     .mode = PP_IOVA_VERBS };
	struct ibv_port_attr pa;
	int err;

	/* The library's message says what is missing (device, port). */
	e->ctx = pp_dma_verbs_open(e->o.dev, e->o.port);
	if (!e->ctx)
		bad_device(&e->o, errno);
	if (ibv_query_port(e->ctx, (uint8_t)e->o.port, &pa))
		die("ibv_query_port failed", errno);
	e->mtu = pa.active_mtu;
	e->gid_index = pick_gid(e, &pa);
	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		die("ibv_alloc_pd failed", errno);

	e->arena = pp_arena_create(&ao);
	if (!e->arena) {
		err = errno;
		pp_cli_hugepage_hint("rdma_echo", e->o.arena_mb);
		die("pp_arena_create failed (the message above says why)", err);
	}
	e->base = (uintptr_t)pp_arena_base(e->arena);
	lo.arenas = &e->arena;
	e->alloc = pp_allocator_create(&lo);
	if (!e->alloc)
		die("pp_allocator_create failed", errno);
	if (e->o.naive) {
		e->naive_mr = calloc(pp_arena_size(e->arena) >> PP_PAGE_SHIFT,
				     sizeof(*e->naive_mr));
		if (!e->naive_mr)
			die("out of memory", ENOMEM);
	} else {
		dopts.verbs_pd = e->pd;
		e->dma = pp_dma_create(&dopts);
		if (!e->dma)
			die("pp_dma_create(verbs) failed", errno);
		err = pp_dma_map_arena(e->dma, e->arena);
		if (err)
			die("registering the arena failed", -err);
	}
	end_create(e, &e->cli, "echo-client");
	end_create(e, &e->srv, "echo-server");
	qp_connect(e, &e->cli, &e->srv);
	qp_connect(e, &e->srv, &e->cli);
	rq_refill(e, &e->srv);
	rq_refill(e, &e->cli);
}

/* Tear down in order and check that every page came home. */
static bool teardown(struct echo *e)
{
	bool ok = true;
	int err;

	end_drain(e, &e->cli);
	end_drain(e, &e->srv);
	if (e->cli.rq_posted || e->srv.rq_posted) {
		fprintf(stderr, "rdma_echo: %u + %u posted buffers never completed\n",
			e->cli.rq_posted, e->srv.rq_posted);
		ok = false;
	}
	ibv_destroy_qp(e->cli.qp);
	ibv_destroy_qp(e->srv.qp);
	ibv_destroy_cq(e->cli.scq);
	ibv_destroy_cq(e->cli.rcq);
	ibv_destroy_cq(e->srv.scq);
	ibv_destroy_cq(e->srv.rcq);
	/* 0 only when no page of the pool is in flight. */
	if (pp_pool_destroy(e->cli.pool) || pp_pool_destroy(e->srv.pool)) {
		fprintf(stderr, "rdma_echo: a pool still had pages in flight at the end\n");
		return false; /* the arena cannot go either */
	}
	if (e->dma) {
		err = pp_dma_unmap_arena(e->dma, e->arena);
		if (err || pp_dma_destroy(e->dma))
			ok = false;
	}
	if (pp_allocator_destroy(e->alloc) || pp_arena_destroy(e->arena))
		ok = false;
	free(e->naive_mr);
	ibv_dealloc_pd(e->pd);
	ibv_close_device(e->ctx);
	return ok;
}

int main(int argc, char **argv)
{
	struct echo e = { 0 };
	double t0, t_last, t, elapsed;
	unsigned long last = 0;
	bool ok;
	FILE *out = stdout, *json = NULL;

	parse(argc, argv, &e.o);
	if (e.o.json && !strcmp(e.o.json, "-"))
		out = stderr;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setup(&e);

	t0 = t_last = now_s();
	for (;;) {
		client_send(&e);
		server_poll(&e);
		client_poll(&e);
		t = now_s();
		if (!e.o.count && t - t0 >= e.o.time_s)
			stop = 1;
		if (e.bad)
			break;
		if (!e.inflight &&
		    (stop || (e.o.count && e.received >= e.o.count)))
			break;
		if (t - t_last >= 1.0) {
			if (!e.o.quiet)
				fprintf(out, "%.0fs %s %.0f msgs/s\n", t - t0,
				       e.o.naive ? "naive" : "pool",
				       (double)(e.received - last) /
					       (t - t_last));
			fflush(out);
			last = e.received;
			t_last = t;
		}
	}
	elapsed = now_s() - t0;
	ok = !e.bad && e.sent == e.received && e.echoed == e.sent;
	ok = teardown(&e) && ok;
	ok = ok && e.cli.posted == e.cli.completed + e.cli.flushed &&
	     e.srv.posted == e.srv.completed + e.srv.flushed;

	fprintf(out, "%s: sent %lu, echoed %lu, received %lu, corrupt %lu, %.0f msgs/s over %.2f s, %lu registrations\n",
	       e.o.naive ? "naive" : "pool", e.sent, e.echoed, e.received,
	       e.bad, (double)e.received / elapsed, elapsed, e.regs);
	fprintf(out, "accounting: client posted %lu = completed %lu + flushed %lu; server posted %lu = completed %lu + flushed %lu; pools empty: %s\n",
	       e.cli.posted, e.cli.completed, e.cli.flushed, e.srv.posted,
	       e.srv.completed, e.srv.flushed, ok ? "yes" : "NO");
	/* Without --json, the summary's JSON line on stdout, as always. */
	if (e.o.json) {
		json = pp_cli_json_open(e.o.json);
		if (!json) {
			fprintf(stderr, "rdma_echo: cannot write %s: %s\n",
				e.o.json, strerror(errno));
			return 1;
		}
		fputc('{', json);
		pp_cli_json_ident(json, "rdma_echo");
	} else {
		json = stdout;
		fputc('{', json);
	}
	fprintf(json, "\"mode\": \"%s\", \"size\": %u, \"messages\": %lu, \"seconds\": %.3f, \"msgs_per_s\": %.0f, \"registrations\": %lu, \"ok\": %s}\n",
	       e.o.naive ? "naive" : "pool", e.o.size, e.received, elapsed,
	       (double)e.received / elapsed, e.regs, ok ? "true" : "false");
	if (json != stdout && pp_cli_json_close(json)) {
		fprintf(stderr, "rdma_echo: cannot write %s\n", e.o.json);
		ok = false;
	}
	if (!ok)
		fprintf(stderr, "rdma_echo: FAILED: a message was lost or corrupted, or a buffer was not accounted for\n");
	return ok ? 0 : 1;
}
