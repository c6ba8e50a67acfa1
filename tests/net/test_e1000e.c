/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_e1000e.c - the e1000e driver and the IOMMU, end to end, inside the
 * QEMU guest (run-guest.sh): two 82574 on one QEMU hub, so what one sends
 * the other receives.
 *
 *   test_e1000e link|fwd|dma_block|untrusted|tx_bounds|jumbo|untrusted_chain
 *               |grow [frames]
 *
 * link       probe both ports: reset, MAC address, link up.
 * fwd        send N numbered frames from port 0; port 1 receives them and
 *            forwards each (zero copy, the same page) back to port 0, which
 *            checks every byte; then the pages are all back where they
 *            came from and the hardware counters agree.
 * untrusted  descriptors the device wrote, altered before the driver reads
 *            them (error bits, no EOP, a length above the buffer or below
 *            a header): each frame is dropped and counted, its page reused.
 * dma_block  NIC 1 programmed by hand with RX descriptors aimed at an IOVA
 *            that is not mapped: the frames port 0 sends must not land
 *            anywhere, the IOMMU reports a DMAR fault in the kernel log.
 * tx_bounds  frames port 0 is asked to send that do not fit in their page
 *            (offsets and headrooms where 32-bit sums wrap, one byte past
 *            the end): none reaches the wire, each is counted in the TX
 *            queue's errors, and its page comes home; the frame that ends
 *            on the page's last byte arrives intact.
 * jumbo      MTU 9000 on both ports: N 9000-byte packets, each three page
 *            segments, from port 0; port 1 receives each as a chain of
 *            five 2048-byte descriptors (one multi-buffer packet of five
 *            frames), forwards it whole (five TX descriptors, EOP on the
 *            last) and port 0 checks every byte of every segment; pages
 *            and hardware counters as for fwd.
 * untrusted_chain  MTU 9000, descriptors of a received chain altered
 *            before the driver reads them: an error or a length above the
 *            buffer in the middle, a packet longer than the MTU's frame,
 *            no EOP over 20 descriptors (refused after 19, the rest
 *            dropped up to the next EOP): each refused whole, counted
 *            once, its buffers reused; a chain whose last descriptor is
 *            not done yet waits in the ring and arrives whole once it is.
 * grow       a growable arena grown with both devices attached: the
 *            ports' rings and pools in the new segments only, N frames
 *            forwarded through them intact; shrunk (the IOMMU mappings
 *            undone) and grown again onto new memory, N/4 more.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <time.h>
#include <unistd.h>

#include <pagepool/pagepool.h>
#include <pagepool/pp_net.h>
#include <pagepool/pp_net_driver.h>

#include "../../drivers/bus/pci/pp_pci_priv.h"
#include "../../drivers/net/e1000e/e1000e_priv.h"
#include "pp_test.h"

#define ARENA_SIZE (16u << 20)
#define FRAME_LEN 128
#define ETHERTYPE 0x88b5 /* IEEE local experimental */

struct env {
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_dma *dma;
};

static const char *nic(int i)
{
	const char *v = getenv(i ? "PP_TEST_NIC1" : "PP_TEST_NIC0");

	if (!v || !*v)
		pp_test_skip("no PP_TEST_NIC%d: run inside the QEMU guest (meson test --suite qemu)",
			     i);
	return v;
}

static void env_init(struct env *e)
{
	struct pp_dma_opts o = {
		.sz = sizeof(o),
		.mode = PP_IOVA_VFIO,
		.vfio_pci_addr = nic(0),
	};

	e->arena = pp_hugepages_free(PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY) >= 8 ?
			   pp_test_arena(ARENA_SIZE, PP_PAGE_SIZE_2M) :
			   pp_test_arena(ARENA_SIZE, PP_PAGE_SIZE_4K);
	e->alloc = pp_test_allocator(e->arena);
	e->dma = pp_dma_create(&o);
	REQUIRE(e->dma != NULL);
	REQUIRE(pp_dma_vfio_add_device(e->dma, nic(1)) == 0);
	REQUIRE(pp_dma_map_arena(e->dma, e->arena) == 0);
}

static void env_fini(struct env *e)
{
	CHECK_EQ(pp_dma_unmap_arena(e->dma, e->arena), 0);
	CHECK_EQ(pp_dma_destroy(e->dma), 0);
	CHECK_EQ(pp_allocator_destroy(e->alloc), 0);
	CHECK_EQ(pp_arena_destroy(e->arena), 0);
}

static struct pp_port *port_open_mtu(struct env *e, int i, unsigned int mtu)
{
	struct pp_port_conf conf = {
		.sz = sizeof(conf),
		.allocator = e->alloc,
		.dma = e->dma,
		.nr_rxq = 1,
		.pool_size = 1024,
		.nid = PP_NUMA_NODE_ANY,
		.mtu = mtu,
	};
	char dev[64];
	struct pp_port *p;

	/* Both spellings of the device string. */
	if (i)
		snprintf(dev, sizeof(dev), "e1000e%d,pci=%s", i, nic(i));
	else
		snprintf(dev, sizeof(dev), "e1000e:%s", nic(i));
	p = pp_port_open(dev, &conf);
	if (!p)
		fprintf(stderr, "pp_port_open(%s): %s (%s)\n", dev,
			strerror(errno), pp_test_last_log);
	REQUIRE(p != NULL);
	return p;
}

static struct pp_port *port_open(struct env *e, int i)
{
	return port_open_mtu(e, i, 0);
}

/* The driver's xstat @name (pp_net_driver_ops.xstats, as telemetry's
 * /ethdev/xstats reads it), or UINT64_MAX when it has none. */
static uint64_t xstat(struct pp_port *port, const char *name)
{
	static struct pp_net_xstat x[PP_NET_XSTATS_MAX];
	int n = port->drv->ops.xstats(port, x, PP_NET_XSTATS_MAX);

	for (int i = 0; i < n && i < PP_NET_XSTATS_MAX; i++)
		if (!strcmp(x[i].name, name))
			return x[i].value;
	return UINT64_MAX;
}

/* Pages free in the allocator: buddy lists plus thread caches. */
static unsigned long free_pages(struct pp_allocator *alloc)
{
	struct pp_zone_stats st;
	unsigned long n = 0;
	unsigned int z;

	for (z = 0; z < pp_allocator_zone_count(alloc); z++) {
		REQUIRE(pp_allocator_zone_stats(alloc, z, &st) == 0);
		n += st.free_pages + st.thread_cache_pages;
	}
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_link(void)
{
	struct env e;
	struct pp_port *p0, *p1;

	env_init(&e);
	pp_test_log_reset();
	p0 = port_open(&e, 0);
	CHECK(!pp_test_log_has("no link"));
	p1 = port_open(&e, 1);
	CHECK_EQ(pp_port_close(p0), 0);
	CHECK_EQ(pp_port_close(p1), 0);
	/* A bad device string names what is wrong. */
	{
		struct pp_port_conf conf = {
			.sz = sizeof(conf), .allocator = e.alloc, .nr_rxq = 1,
		};

		pp_test_log_reset();
		CHECK(pp_port_open("e1000e0,pci=0000:00:01.0", &conf) == NULL);
		CHECK(pp_test_log_has("VFIO domain"));
	}
	env_fini(&e);
}

static void frame_fill(uint8_t *d, uint32_t seq)
{
	unsigned int i;

	memset(d, 0xff, 6);                       /* broadcast */
	memcpy(d + 6, "\x02\x00\x00\x00\x00\x01", 6);
	d[12] = ETHERTYPE >> 8;
	d[13] = ETHERTYPE & 0xff;
	memcpy(d + 14, &seq, sizeof(seq));
	for (i = 18; i < FRAME_LEN; i++)
		d[i] = (uint8_t)(seq * 7 + i);
}

static bool frame_ok(const struct pp_frame *f, uint32_t seq)
{
	uint8_t want[FRAME_LEN];

	frame_fill(want, seq);
	return f->len == FRAME_LEN && !memcmp(pp_frame_data(f), want, FRAME_LEN);
}

/* What a run of the forwarding loop saw. */
struct fwd_result {
	uint32_t sent, mid, back, bad, lost;
	/* Pages received outside [lo, hi) (fwd_loop()'s), when asked. */
	uint32_t outside;
};

static bool page_outside(const struct pp_frame *f, uintptr_t lo, uintptr_t hi)
{
	uintptr_t a = (uintptr_t)pp_page_address(f->page);

	return hi && (a < lo || a >= hi);
}

/*
 * @nr numbered frames from @p0's pool; @p1 forwards each (zero copy, the
 * same page) back to @p0, which checks every byte. A received page
 * outside [@lo, @hi) is counted (@hi 0: none asked).
 */
static void fwd_loop(struct env *e, struct pp_port *p0, struct pp_port *p1,
		     unsigned int nr, uintptr_t lo, uintptr_t hi,
		     struct fwd_result *r)
{
	/* Zeroed: out[] is built field by field, and .more must be clear. */
	struct pp_frame out[32] = { 0 }, mid[32], back[32];
	struct pp_pool *pool0 = p0->rxq[0].pool;
	double deadline = now_s() + 60;
	unsigned int i, n, m;

	memset(r, 0, sizeof(*r));
	while (r->back + r->lost < nr && now_s() < deadline) {
		/* Port 0 sends numbered frames from its own pool. */
		for (n = 0; n < 32 && r->sent + n < nr &&
			    r->sent + n - r->back < 512; n++) {
			struct pp_page *pg = pp_pool_alloc_pages(pool0);

			if (!pg)
				break;
			out[n].page = pg;
			out[n].offset = 0;
			out[n].headroom = PP_FRAME_HEADROOM;
			out[n].len = FRAME_LEN;
			frame_fill(pp_frame_data(&out[n]), r->sent + n);
		}
		m = pp_port_tx_burst(p0, 0, out, n);
		for (i = m; i < n; i++)
			pp_pool_recycle_direct(pool0, out[i].page);
		r->sent += m;
		/* Port 1 forwards what it gets, the same pages. */
		n = pp_port_rx_burst(p1, 0, mid, 32);
		for (i = 0; i < n; i++) {
			if (!frame_ok(&mid[i], r->mid++))
				r->bad++;
			r->outside += page_outside(&mid[i], lo, hi);
		}
		m = pp_port_tx_burst(p1, 0, mid, n);
		for (i = m; i < n; i++) {
			struct pp_page *pg = mid[i].page;

			/* TX ring full: not expected at this rate. */
			pp_net_put_pages(e->alloc, NULL, &pg, 1);
			r->lost++;
		}
		/* Port 0 gets them back and checks every byte. */
		n = pp_port_rx_burst(p0, 0, back, 32);
		for (i = 0; i < n; i++) {
			struct pp_page *pg = back[i].page;

			if (!frame_ok(&back[i], r->back++))
				r->bad++;
			r->outside += page_outside(&back[i], lo, hi);
			pp_net_put_pages(e->alloc, NULL, &pg, 1);
		}
	}
	printf("fwd: sent %u, forwarded %u, back %u, bad %u, lost %u\n",
	       r->sent, r->mid, r->back, r->bad, r->lost);
}

static void test_fwd(unsigned int nr)
{
	unsigned long free_before;
	uint64_t rx, tx, missed, crc;
	struct pp_port *p0, *p1;
	struct fwd_result r;
	struct env e;

	env_init(&e);
	free_before = free_pages(e.alloc);
	p0 = port_open(&e, 0);
	p1 = port_open(&e, 1);
	fwd_loop(&e, p0, p1, nr, 0, 0, &r);
	CHECK_EQ(r.lost, 0);
	CHECK_EQ(r.sent, nr);
	CHECK_EQ(r.mid, nr);
	CHECK_EQ(r.back, nr);
	CHECK_EQ(r.bad, 0);
	/* Telemetry's xstats read the clear-on-read registers first; the
	 * counts stay pp_e1000e_stats()'s all the same. */
	CHECK_EQ(xstat(p1, "rx_hw_good_packets"), nr);
	CHECK_EQ(pp_e1000e_stats(p1, &rx, &tx, &missed, &crc), 0);
	CHECK_EQ(xstat(p1, "tx_hw_good_packets"), nr);
	CHECK_EQ(xstat(p1, "rx_missed_packets"), 0);
	printf("port1 hw: rx %llu tx %llu missed %llu crc %llu\n",
	       (unsigned long long)rx, (unsigned long long)tx,
	       (unsigned long long)missed, (unsigned long long)crc);
	CHECK_EQ(rx, nr);
	CHECK_EQ(tx, nr);
	CHECK_EQ(missed, 0);
	CHECK_EQ(crc, 0);
	CHECK_EQ(pp_port_close(p0), 0);
	CHECK_EQ(pp_port_close(p1), 0);
	/* Accounting: every page is back in the allocator. */
	pp_allocator_drain_thread(e.alloc);
	CHECK_EQ(free_pages(e.alloc), free_before);
	env_fini(&e);
}

/*
 * Growth with the devices attached: a growable arena whose minimum is
 * all taken, grown by two steps (each a VFIO_IOMMU_MAP_DMA, the second
 * NIC's group added only after them: type1 replays the segments into
 * its domain), so that both ports' rings and pools, and so every RX
 * write and TX read of the devices, lie in the new segments; the frames
 * forwarded must all arrive intact there. Then shrink (both steps
 * VFIO_IOMMU_UNMAP_DMA'd: growing again maps the same IOVAs, which the
 * kernel would refuse with EEXIST) and the same on the new memory.
 */
#define GROW_MIN (16u << 20)
#define GROW_STEP (8u << 20)

static void grow_env_init(struct env *e)
{
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = GROW_MIN, .max_size = 48u << 20,
		.grow_step = GROW_STEP, .numa_node = PP_NUMA_NODE_ANY,
		.name = "e1000e-grow",
	};
	struct pp_allocator_opts lo = {
		.sz = sizeof(lo), .nr_arenas = 1,
		.flags = PP_ALLOCATOR_F_MANUAL_RESIZE,
	};
	struct pp_dma_opts o = {
		.sz = sizeof(o), .mode = PP_IOVA_VFIO, .vfio_pci_addr = nic(0),
	};

	ao.page_size = pp_hugepages_free(PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY) >=
				       (long)((GROW_MIN + 2 * GROW_STEP) >> 21) ?
			       PP_PAGE_SIZE_2M : PP_PAGE_SIZE_4K;
	e->arena = pp_arena_create(&ao);
	REQUIRE(e->arena != NULL);
	lo.arenas = &e->arena;
	e->alloc = pp_allocator_create(&lo);
	REQUIRE(e->alloc != NULL);
	e->dma = pp_dma_create(&o);
	REQUIRE(e->dma != NULL);
	REQUIRE(pp_dma_map_arena(e->dma, e->arena) == 0);
}

/* Two steps, both ports on them, @nr frames forwarded, ports closed. */
static void grow_fwd(struct env *e, unsigned int nr)
{
	uintptr_t lo = (uintptr_t)pp_arena_base(e->arena) + GROW_MIN;
	struct pp_port *p0, *p1;
	struct fwd_result r;

	CHECK_EQ(pp_allocator_grow(e->alloc, 0), 0);
	CHECK_EQ(pp_allocator_grow(e->alloc, 0), 0);
	CHECK_EQ(pp_arena_committed(e->arena), GROW_MIN + 2 * GROW_STEP);
	/* After the growth, as the lazy join of a second port would. */
	CHECK_EQ(pp_dma_vfio_add_device(e->dma, nic(1)), 0);
	p0 = port_open(e, 0);
	p1 = port_open(e, 1);
	fwd_loop(e, p0, p1, nr, lo, lo + 2 * GROW_STEP, &r);
	printf("grow: %u pages received outside the grown segments\n",
	       r.outside);
	CHECK_EQ(r.lost, 0);
	CHECK_EQ(r.back, nr);
	CHECK_EQ(r.bad, 0);
	CHECK_EQ(r.outside, 0);
	CHECK_EQ(pp_port_close(p0), 0);
	CHECK_EQ(pp_port_close(p1), 0);
}

static void test_grow(unsigned int nr)
{
	struct pp_page **held;
	unsigned int n = 0, max = GROW_MIN / PP_PAGE_SIZE + 1;
	unsigned long allocated = 1;
	struct env e;

	grow_env_init(&e);
	held = calloc(max, sizeof(*held));
	REQUIRE(held != NULL);
	/* The minimum, all held: the ports can only get grown pages. */
	while (n < max && (held[n] = pp_alloc_page(e.alloc)) != NULL)
		n++;
	CHECK_EQ(n, GROW_MIN / PP_PAGE_SIZE);
	grow_fwd(&e, nr);
	pp_allocator_drain_thread(e.alloc);
	CHECK_EQ(pp_allocator_shrink(e.alloc, 0), 2);
	CHECK_EQ(pp_arena_committed(e.arena), GROW_MIN);
	/* The same IOVAs mapped again, onto new hugepages. */
	pp_test_log_reset();
	grow_fwd(&e, nr / 4);
	CHECK(!pp_test_log_has("mapped already"));
	pp_allocator_drain_thread(e.alloc);
	CHECK_EQ(pp_allocator_shrink(e.alloc, 0), 2);
	for (unsigned int i = 0; i < n; i++)
		pp_free_page(e.alloc, held[i]);
	pp_allocator_drain_thread(e.alloc);
	CHECK_EQ(pp_allocator_check(e.alloc, &allocated), 0);
	CHECK_EQ(allocated, 0);
	free(held);
	env_fini(&e);
}

/* Send frame @seq from @p0 and wait until @p1's next RX descriptor is done. */
static struct e1000_rx_desc *send_and_wait(struct pp_port *p0,
					   struct pp_port *p1, uint32_t seq)
{
	struct e1000e_port *ep = p1->priv;
	struct e1000_rx_desc *d = &ep->rx_ring[ep->rx_next];
	struct pp_frame f = { 0 };
	double deadline = now_s() + 5;

	f.page = pp_pool_alloc_pages(p0->rxq[0].pool);
	REQUIRE(f.page != NULL);
	f.offset = 0;
	f.headroom = PP_FRAME_HEADROOM;
	f.len = FRAME_LEN;
	frame_fill(pp_frame_data(&f), seq);
	REQUIRE(pp_port_tx_burst(p0, 0, &f, 1) == 1);
	while (!(__atomic_load_n(&d->status, __ATOMIC_ACQUIRE) &
		 E1000_RXD_STAT_DD) && now_s() < deadline)
		;
	REQUIRE(d->status & E1000_RXD_STAT_DD);
	return d;
}

static void test_untrusted(void)
{
	struct pp_frame f[32] = { 0 };
	struct pp_rxq_stats st;
	struct e1000_rx_desc *d;
	unsigned long free_before;
	struct pp_port *p0, *p1;
	struct env e;
	unsigned int i;

	env_init(&e);
	free_before = free_pages(e.alloc);
	p0 = port_open(&e, 0);
	p1 = port_open(&e, 1);
	for (i = 0; i < 4; i++) {
		d = send_and_wait(p0, p1, i);
		CHECK_EQ(d->length, FRAME_LEN);
		switch (i) {
		case 0:
			d->errors = 0x80; /* RXE, 7.1.4.1 */
			break;
		case 1:
			d->status &= (uint8_t)~E1000_RXD_STAT_EOP;
			break;
		case 2:
			d->length = E1000_RX_BUF_LEN + 1;
			break;
		case 3:
			d->length = 4;
			break;
		}
		CHECK_EQ(pp_port_rx_burst(p1, 0, f, 32), 0);
	}
	CHECK_EQ(pp_port_rxq_stats(p1, 0, &st), 0);
	CHECK_EQ(st.errors, 4);
	CHECK_EQ(st.packets, 0);
	/* An untouched one still comes through. */
	send_and_wait(p0, p1, 99);
	CHECK_EQ(pp_port_rx_burst(p1, 0, f, 32), 1);
	CHECK(frame_ok(&f[0], 99));
	pp_net_put_pages(e.alloc, NULL, &f[0].page, 1);
	CHECK_EQ(pp_port_close(p0), 0);
	CHECK_EQ(pp_port_close(p1), 0);
	pp_allocator_drain_thread(e.alloc);
	CHECK_EQ(free_pages(e.alloc), free_before);
	env_fini(&e);
}

static bool klog_has(const char *a, const char *b)
{
	static char buf[1 << 16];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, a) && strstr(buf, b);
}

static void test_dma_block(void)
{
	struct pp_frame out[16] = { 0 };
	struct e1000_rx_desc *ring;
	struct pp_page *ring_page, *canary[64];
	struct pp_pci_dev *dev;
	volatile uint8_t *regs;
	uint64_t ring_iova, base_iova, bad_iova;
	struct pp_port *p0;
	unsigned int i, n, ms, dirty = 0;
	uint32_t gprc;
	struct env e;

	env_init(&e);
	p0 = port_open(&e, 0);
	/* NIC 1 by hand: reset, then an 8-descriptor ring (128 bytes, the
	 * minimum RDLEN, 10.2.5.6) whose buffers are beyond the arena's
	 * mapping: inside the IOMMU's range, mapped to nothing. */
	dev = pp_pci_open(e.dma, nic(1));
	REQUIRE(dev != NULL && dev->bar_addr[0]);
	regs = dev->bar_addr[0];
	e1000_write(regs, E1000_IMC, 0xffffffff);
	e1000_write(regs, E1000_CTRL, e1000_read(regs, E1000_CTRL) | E1000_CTRL_RST);
	for (ms = 0; ms < 100 && (e1000_read(regs, E1000_CTRL) & E1000_CTRL_RST); ms++)
		usleep(1000);
	e1000_write(regs, E1000_IMC, 0xffffffff);
	REQUIRE(pp_dma_vfio_arena_iova(e.dma, e.arena, &base_iova) == 0);
	bad_iova = base_iova + ARENA_SIZE + (64u << 20);
	ring_page = pp_alloc_page(e.alloc);
	REQUIRE(ring_page != NULL);
	ring = pp_page_address(ring_page);
	memset(ring, 0, PP_PAGE_SIZE);
	REQUIRE(pp_dma_map_page(e.dma, ring, 0, PP_DMA_BIDIRECTIONAL,
				&ring_iova) == 0);
	for (i = 0; i < 8; i++)
		ring[i].addr = bad_iova + i * 2048;
	/* Canaries: arena pages a stray write could hit. */
	for (i = 0; i < 64; i++) {
		canary[i] = pp_alloc_page(e.alloc);
		REQUIRE(canary[i] != NULL);
		memset(pp_page_address(canary[i]), 0xa5, PP_PAGE_SIZE);
	}
	e1000_write(regs, E1000_RFCTL, e1000_read(regs, E1000_RFCTL) & ~E1000_RFCTL_EXSTEN);
	e1000_write(regs, E1000_RDBAL, (uint32_t)ring_iova);
	e1000_write(regs, E1000_RDBAH, (uint32_t)(ring_iova >> 32));
	e1000_write(regs, E1000_RDLEN, 8 * sizeof(*ring));
	e1000_write(regs, E1000_RDH, 0);
	e1000_write(regs, E1000_RDT, 7);
	(void)e1000_read(regs, E1000_GPRC);
	e1000_write(regs, E1000_RCTL, E1000_RCTL_EN | E1000_RCTL_UPE |
				     E1000_RCTL_MPE | E1000_RCTL_BAM |
				     E1000_RCTL_SECRC);
	e1000_write(regs, E1000_CTRL, e1000_read(regs, E1000_CTRL) | E1000_CTRL_SLU);
	for (ms = 0; ms < 5000 && !(e1000_read(regs, E1000_STATUS) & E1000_STATUS_LU); ms += 10)
		usleep(10000);

	for (n = 0; n < 4; n++) {
		out[n].page = pp_pool_alloc_pages(p0->rxq[0].pool);
		REQUIRE(out[n].page != NULL);
		out[n].offset = 0;
		out[n].headroom = PP_FRAME_HEADROOM;
		out[n].len = FRAME_LEN;
		frame_fill(pp_frame_data(&out[n]), n);
	}
	CHECK_EQ(pp_port_tx_burst(p0, 0, out, n), n);
	usleep(300000);
	gprc = e1000_read(regs, E1000_GPRC);
	printf("dma_block: NIC1 counted %u frames, RDH %u, desc0 status 0x%x\n",
	       gprc, e1000_read(regs, E1000_RDH), ring[0].status);
	/* The device did try: it took the frames in. */
	CHECK(gprc > 0);
	for (i = 0; i < 64; i++) {
		const uint8_t *p = pp_page_address(canary[i]);
		unsigned int b;

		for (b = 0; b < PP_PAGE_SIZE; b++)
			dirty += p[b] != 0xa5;
		pp_free_page(e.alloc, canary[i]);
	}
	CHECK_EQ(dirty, 0);
	CHECK(klog_has("DMAR", "fault"));
	if (!klog_has("DMAR", "fault"))
		fprintf(stderr, "no DMAR fault in the kernel log\n");
	e1000_write(regs, E1000_RCTL, 0);
	pp_pci_close(dev);
	pp_free_page(e.alloc, ring_page);
	CHECK_EQ(pp_port_close(p0), 0);
	env_fini(&e);
}

static void test_tx_bounds(void)
{
	static const struct { uint32_t offset; uint16_t headroom, len; } geom[] = {
		{ 0, PP_PAGE_SIZE - FRAME_LEN, FRAME_LEN }, /* last byte: sent */
		{ 0xffffff00u, 0x100, FRAME_LEN },  /* offset + headroom wraps */
		{ 0xfffffff0u, 0, 0x20 },           /* + len wraps */
		{ 0xffffffffu, 0xffff, 0xffff },
		{ 0xffff, 0, FRAME_LEN },           /* offset near 2^16 */
		{ 0, 0xffff, FRAME_LEN },           /* headroom near 2^16 */
		{ 0, PP_PAGE_SIZE - FRAME_LEN, FRAME_LEN + 1 }, /* one past */
		{ 64, PP_PAGE_SIZE - FRAME_LEN, FRAME_LEN },    /* 64 past */
	};
	enum { NR = sizeof(geom) / sizeof(geom[0]) };
	struct pp_frame f[NR] = { 0 }, in[32];
	struct pp_txq_stats ts;
	unsigned long free_before;
	uint64_t rx, tx, missed, crc;
	unsigned int i, n, got = 0, bad = 0;
	struct pp_port *p0, *p1;
	double deadline;
	struct env e;

	env_init(&e);
	free_before = free_pages(e.alloc);
	p0 = port_open(&e, 0);
	p1 = port_open(&e, 1);
	for (i = 0; i < NR; i++) {
		f[i].page = pp_pool_alloc_pages(p0->rxq[0].pool);
		REQUIRE(f[i].page != NULL);
		f[i].offset = geom[i].offset;
		f[i].headroom = geom[i].headroom;
		f[i].len = geom[i].len;
	}
	frame_fill(pp_frame_data(&f[0]), 7);
	/* All taken; only the first may get a descriptor. */
	CHECK_EQ(pp_port_tx_burst(p0, 0, f, NR), NR);
	CHECK_EQ(pp_port_txq_stats(p0, 0, &ts), 0);
	CHECK_EQ(ts.errors, NR - 1);
	/* Whatever reaches port 1 within half a second after the first. */
	deadline = now_s() + 5;
	while (now_s() < deadline) {
		n = pp_port_rx_burst(p1, 0, in, 32);
		for (i = 0; i < n; i++) {
			if (!frame_ok(&in[i], 7))
				bad++;
			pp_net_put_pages(e.alloc, NULL, &in[i].page, 1);
		}
		if (n && !got)
			deadline = now_s() + 0.5;
		got += n;
	}
	printf("tx_bounds: %u frames on the wire, %u not the good one\n", got,
	       bad);
	CHECK_EQ(got, 1);
	CHECK_EQ(bad, 0);
	CHECK_EQ(pp_e1000e_stats(p0, &rx, &tx, &missed, &crc), 0);
	CHECK_EQ(tx, 1);
	/* An empty burst reclaims the sent page. */
	CHECK_EQ(pp_port_tx_burst(p0, 0, f, 0), 0);
	CHECK_EQ(pp_port_close(p0), 0);
	CHECK_EQ(pp_port_close(p1), 0);
	pp_allocator_drain_thread(e.alloc);
	CHECK_EQ(free_pages(e.alloc), free_before);
	env_fini(&e);
}

/* ---- multi-buffer packets (MTU 9000) ---- */

#define JUMBO_LEN 9000
#define JUMBO_DESCS ((JUMBO_LEN + E1000_RX_BUF_LEN - 1) / E1000_RX_BUF_LEN)

/* Byte @j of packet @seq: a broadcast Ethernet header, the number, a
 * pattern. */
static uint8_t jumbo_byte(uint32_t seq, uint32_t j)
{
	static const uint8_t hdr[14] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0x02, 0, 0, 0, 0, 0x01,
					 ETHERTYPE >> 8, ETHERTYPE & 0xff };

	if (j < 14)
		return hdr[j];
	if (j < 18)
		return (uint8_t)(seq >> (8 * (j - 14)));
	return (uint8_t)(seq * 7 + j * 13);
}

/*
 * Packet @seq of @len bytes in pages of @pool, into @f: the head behind
 * PP_FRAME_HEADROOM, then whole pages. Returns the segments, 0 when the
 * pool is out of pages (none kept).
 */
static unsigned int jumbo_build(struct pp_pool *pool, struct pp_frame *f,
				uint32_t seq, uint32_t len)
{
	uint32_t done = 0;
	unsigned int k = 0;

	while (done < len) {
		uint32_t hr = k ? 0 : PP_FRAME_HEADROOM;
		uint32_t take = len - done < PP_PAGE_SIZE - hr ?
					len - done : PP_PAGE_SIZE - hr;
		struct pp_page *pg = pp_pool_alloc_pages(pool);
		uint8_t *d;

		if (!pg) {
			while (k--)
				pp_pool_recycle_direct(pool, f[k].page);
			return 0;
		}
		f[k] = (struct pp_frame){
			.page = pg, .headroom = (uint16_t)hr,
			.len = (uint16_t)take, .more = done + take < len,
		};
		d = pp_frame_data(&f[k]);
		for (uint32_t j = 0; j < take; j++)
			d[j] = jumbo_byte(seq, done + j);
		done += take;
		k++;
	}
	return k;
}

/* The packet at @f (@segs segments) is packet @seq, @len bytes, whole. */
static bool jumbo_ok(const struct pp_frame *f, unsigned int segs, uint32_t seq,
		     uint32_t len)
{
	uint32_t j = 0;

	if (pp_pkt_len(f, segs) != len || f[segs - 1].more)
		return false;
	for (unsigned int i = 0; i < segs; i++) {
		const uint8_t *d = pp_frame_data(&f[i]);

		if (!pp_frame_valid(&f[i]) || f[i].more != (i + 1 < segs))
			return false;
		for (uint32_t b = 0; b < f[i].len; b++, j++)
			if (d[b] != jumbo_byte(seq, j))
				return false;
	}
	return true;
}

static void put_frames(struct env *e, struct pp_frame *f, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		pp_net_put_pages(e->alloc, NULL, &f[i].page, 1);
}

static void test_jumbo(unsigned int nr)
{
	struct pp_frame out[PP_NET_BURST], mid[PP_NET_BURST], back[PP_NET_BURST];
	uint32_t sent = 0, seq_mid = 0, seq_back = 0, bad = 0, lost = 0;
	uint32_t segs_mid = 0;
	uint64_t rx, tx, missed, crc;
	unsigned long free_before;
	struct pp_port *p0, *p1;
	struct pp_pool *pool0;
	double deadline;
	struct env e;
	unsigned int i, n, m, k;

	env_init(&e);
	free_before = free_pages(e.alloc);
	p0 = port_open_mtu(&e, 0, 9000);
	p1 = port_open_mtu(&e, 1, 9000);
	CHECK_EQ(pp_port_mtu(p0), 9000);
	pool0 = p0->rxq[0].pool;
	deadline = now_s() + 120;
	while (seq_back + lost < nr && now_s() < deadline) {
		/* Port 0 sends up to 8 packets, 16 in flight at most (80 of
		 * the 255 RX descriptors a side). */
		for (n = k = 0; k < 8 && sent + k < nr &&
				sent + k - seq_back < 16; k++) {
			unsigned int s = jumbo_build(pool0, &out[n], sent + k,
						     JUMBO_LEN);

			if (!s)
				break;
			n += s;
		}
		m = pp_port_tx_burst(p0, 0, out, n);
		for (i = 0; i < m; i++)
			sent += !out[i].more;
		for (i = m; i < n; i++)
			pp_pool_recycle_direct(pool0, out[i].page);
		/* Port 1 forwards what it gets, the same pages, whole. */
		n = pp_port_rx_burst(p1, 0, mid, PP_NET_BURST);
		for (i = 0; i < n; i += k) {
			k = pp_pkt_segs(&mid[i], n - i);
			segs_mid += k;
			if (k != JUMBO_DESCS ||
			    !jumbo_ok(&mid[i], k, seq_mid, JUMBO_LEN))
				bad++;
			seq_mid++;
		}
		m = pp_port_tx_burst(p1, 0, mid, n);
		for (i = m; i < n; i++)
			lost += !mid[i].more;
		put_frames(&e, mid + m, n - m);
		/* Port 0 gets them back and checks every byte. */
		n = pp_port_rx_burst(p0, 0, back, PP_NET_BURST);
		for (i = 0; i < n; i += k) {
			k = pp_pkt_segs(&back[i], n - i);
			if (!jumbo_ok(&back[i], k, seq_back, JUMBO_LEN))
				bad++;
			seq_back++;
		}
		put_frames(&e, back, n);
	}
	printf("jumbo: sent %u, forwarded %u (%u segments), back %u, bad %u, lost %u\n",
	       sent, seq_mid, segs_mid, seq_back, bad, lost);
	CHECK_EQ(lost, 0);
	CHECK_EQ(sent, nr);
	CHECK_EQ(seq_mid, nr);
	CHECK_EQ(segs_mid, nr * JUMBO_DESCS);
	CHECK_EQ(seq_back, nr);
	CHECK_EQ(bad, 0);
	CHECK_EQ(pp_e1000e_stats(p1, &rx, &tx, &missed, &crc), 0);
	printf("port1 hw: rx %llu tx %llu missed %llu crc %llu\n",
	       (unsigned long long)rx, (unsigned long long)tx,
	       (unsigned long long)missed, (unsigned long long)crc);
	CHECK_EQ(rx, nr);
	CHECK_EQ(tx, nr);
	CHECK_EQ(missed, 0);
	CHECK_EQ(crc, 0);
	CHECK_EQ(pp_port_close(p0), 0);
	CHECK_EQ(pp_port_close(p1), 0);
	pp_allocator_drain_thread(e.alloc);
	CHECK_EQ(free_pages(e.alloc), free_before);
	env_fini(&e);
}

/* Descriptor @k after @p's next one. */
static struct e1000_rx_desc *rx_desc(struct pp_port *p, unsigned int k)
{
	struct e1000e_port *ep = p->priv;

	return &ep->rx_ring[(ep->rx_next + k) & RING_MASK];
}

/*
 * Send packet @seq (@len bytes) from @p0 and wait until @p1's descriptor
 * @last (counted from its next one) is done: the packet's EOP one.
 */
static void send_jumbo_and_wait(struct pp_port *p0, struct pp_port *p1,
				uint32_t seq, uint32_t len, unsigned int last)
{
	struct pp_frame f[PP_FRAME_MAX_SEGS];
	struct e1000_rx_desc *d = rx_desc(p1, last);
	double deadline = now_s() + 5;
	unsigned int n = jumbo_build(p0->rxq[0].pool, f, seq, len);

	REQUIRE(n > 0);
	REQUIRE(pp_port_tx_burst(p0, 0, f, n) == n);
	while (!(__atomic_load_n(&d->status, __ATOMIC_ACQUIRE) &
		 E1000_RXD_STAT_DD) && now_s() < deadline)
		;
	REQUIRE(d->status & E1000_RXD_STAT_DD);
}

static void test_untrusted_chain(void)
{
	struct pp_frame f[PP_NET_BURST];
	struct pp_rxq_stats st;
	unsigned long free_before;
	struct pp_port *p0, *p1;
	struct env e;
	unsigned int i, n, errors = 0;
	uint32_t seq = 0;

	env_init(&e);
	free_before = free_pages(e.alloc);
	p0 = port_open_mtu(&e, 0, 9000);
	p1 = port_open_mtu(&e, 1, 9000);
	/* Refused whole, counted once: an error, a length above the buffer
	 * in the middle of the chain, a packet over the MTU's frame. */
	for (i = 0; i < 3; i++) {
		send_jumbo_and_wait(p0, p1, seq++, JUMBO_LEN, JUMBO_DESCS - 1);
		CHECK(!(rx_desc(p1, 2)->status & E1000_RXD_STAT_EOP));
		if (i == 0)
			rx_desc(p1, 2)->errors = 0x80; /* RXE */
		else if (i == 1)
			rx_desc(p1, 1)->length = E1000_RX_BUF_LEN + 1;
		else
			rx_desc(p1, JUMBO_DESCS - 1)->length = E1000_RX_BUF_LEN;
		CHECK_EQ(pp_port_rx_burst(p1, 0, f, PP_NET_BURST), 0);
		CHECK_EQ(pp_port_rxq_stats(p1, 0, &st), 0);
		CHECK_EQ(st.errors, ++errors);
	}
	/* The last descriptor not done yet: the chain waits in the ring,
	 * uncounted, and comes whole once it is. */
	send_jumbo_and_wait(p0, p1, seq, JUMBO_LEN, JUMBO_DESCS - 1);
	rx_desc(p1, JUMBO_DESCS - 1)->status &= (uint8_t)~E1000_RXD_STAT_DD;
	CHECK_EQ(pp_port_rx_burst(p1, 0, f, PP_NET_BURST), 0);
	/* And a burst too small for it leaves it there too. */
	rx_desc(p1, JUMBO_DESCS - 1)->status |= E1000_RXD_STAT_DD;
	CHECK_EQ(pp_port_rx_burst(p1, 0, f, JUMBO_DESCS - 1), 0);
	n = pp_port_rx_burst(p1, 0, f, PP_NET_BURST);
	CHECK_EQ(n, JUMBO_DESCS);
	CHECK(n && jumbo_ok(f, n, seq, JUMBO_LEN));
	put_frames(&e, f, n);
	seq++;
	/* No EOP over 4 packets' 20 descriptors: refused after 19 (one
	 * error), the 20th and the next packet up to its EOP dropped
	 * uncounted; the packet after that arrives. */
	for (i = 0; i < 4; i++)
		send_jumbo_and_wait(p0, p1, seq++, JUMBO_LEN,
				    (i + 1) * JUMBO_DESCS - 1);
	for (i = 0; i < 4 * JUMBO_DESCS; i++)
		rx_desc(p1, i)->status &= (uint8_t)~E1000_RXD_STAT_EOP;
	CHECK_EQ(pp_port_rx_burst(p1, 0, f, PP_NET_BURST), 0);
	CHECK_EQ(pp_port_rxq_stats(p1, 0, &st), 0);
	CHECK_EQ(st.errors, ++errors);
	send_jumbo_and_wait(p0, p1, seq++, JUMBO_LEN, JUMBO_DESCS);
	CHECK_EQ(pp_port_rx_burst(p1, 0, f, PP_NET_BURST), 0);
	send_jumbo_and_wait(p0, p1, seq, JUMBO_LEN, JUMBO_DESCS - 1);
	n = pp_port_rx_burst(p1, 0, f, PP_NET_BURST);
	CHECK_EQ(n, JUMBO_DESCS);
	CHECK(n && jumbo_ok(f, n, seq, JUMBO_LEN));
	put_frames(&e, f, n);
	CHECK_EQ(pp_port_rxq_stats(p1, 0, &st), 0);
	CHECK_EQ(st.errors, errors);
	CHECK_EQ(st.packets, 2);
	/* The sent pages come home with an empty burst. */
	CHECK_EQ(pp_port_tx_burst(p0, 0, f, 0), 0);
	CHECK_EQ(pp_port_close(p0), 0);
	CHECK_EQ(pp_port_close(p1), 0);
	pp_allocator_drain_thread(e.alloc);
	CHECK_EQ(free_pages(e.alloc), free_before);
	env_fini(&e);
}

int main(int argc, char **argv)
{
	unsigned int frames = argc > 2 ? (unsigned int)atoi(argv[2]) : 20000;

	if (argc < 2) {
		fprintf(stderr, "usage: %s link|fwd|dma_block|untrusted|tx_bounds|jumbo|untrusted_chain|grow [frames]\n",
			argv[0]);
		return 2;
	}
	pp_test_capture_log();
	if (!strcmp(argv[1], "link"))
		RUN_TEST(test_link);
	else if (!strcmp(argv[1], "fwd"))
		test_fwd(frames), printf("%s test_fwd\n", pp_test_failures ? "FAIL" : "ok  ");
	else if (!strcmp(argv[1], "dma_block"))
		RUN_TEST(test_dma_block);
	else if (!strcmp(argv[1], "untrusted"))
		RUN_TEST(test_untrusted);
	else if (!strcmp(argv[1], "tx_bounds"))
		RUN_TEST(test_tx_bounds);
	else if (!strcmp(argv[1], "jumbo"))
		test_jumbo(argc > 2 ? frames : 2000),
			printf("%s test_jumbo\n", pp_test_failures ? "FAIL" : "ok  ");
	else if (!strcmp(argv[1], "untrusted_chain"))
		RUN_TEST(test_untrusted_chain);
	else if (!strcmp(argv[1], "grow"))
		test_grow(argc > 2 ? frames : 5000),
			printf("%s test_grow\n", pp_test_failures ? "FAIL" : "ok  ");
	else
		return 2;
	return pp_test_result();
}
