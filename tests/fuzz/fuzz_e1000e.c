/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_e1000e.c - the e1000e data path (drivers/net/e1000e/e1000e_rxtx.c)
 * against a simulated 82574 that lies: the input is a program for a
 * hostile device that writes any field of any RX or TX descriptor.
 *
 * The device, in plain memory:
 * - registers: a zeroed block this target owns stands in for BAR0, so the
 *   driver's RDT/TDT writes land there and the device reads them back;
 * - DMA: an OPS domain (pp_dma.h) over the target's arena whose rule is
 *   IOVA = SIM_IOVA_BASE + (address - arena base). The IOVA is never the
 *   virtual address, so a driver that handed the device a pointer instead
 *   of an IOVA would be caught; the device turns every IOVA it is given
 *   back into memory by that rule, in 64 bits, and refuses one outside
 *   what the domain mapped. A second domain over the same arena, with
 *   IOVAs from OTHER_IOVA_BASE, backs a second pool (another port's, as in
 *   a forwarder): its pages' IOVAs mean nothing to this device;
 * - rings: the driver's own ring pages, found through RDBA/TDBA as the
 *   hardware finds them.
 *
 * The port is a real lib/net port (pp_net_port_create() with a driver
 * table entry of this file's whose probe and remove do the ring part of
 * the real ones through e1000e_rings_init() and e1000e_rings_release(),
 * and whose bursts are the driver's): that costs one pool per input, as
 * any port open does, and gives the real RX pool, queue statistics and
 * close path instead of fakes that could drift from lib/net.
 *
 * Device steps, chosen by the input:
 * - RX honest: frames of 14 to 2048 bytes written into the buffers of
 *   [RDH, RDT), each with a pattern, then length, errors 0 and DD|EOP;
 * - RX lie: any field of any descriptor (relative to the driver's next one
 *   or anywhere, the ones beyond RDT included): addr, length (0, 13, 14,
 *   1522, 2048, 2049, 0xffff, any), csum, status with or without DD and
 *   EOP, DD alone or cleared, errors, special;
 * - rx_burst of up to 64;
 * - tx_burst of up to 48 frames: frames the application got from RX, fresh
 *   pages of the RX pool, of the other domain's pool and of the allocator
 *   (no pool), each with its geometry
 *   or the input's (offsets and lengths past the page included);
 * - TX device: reads descriptors [TDH, TDT) and checks each one in 64 bits
 *   (the address and length lie inside the frame's page and inside mapped
 *   memory, the bytes are the frame's), setting DD where RS asks;
 * - TX lie: status (DD set or cleared, anything) or the other write-back
 *   bytes of any TX descriptor, RS or not, sent or not.
 *
 * Invariants, after every step: each frame rx_burst hands out is valid
 * (pp_frame_valid) with 14 <= len <= 2048, lies in the buffer the driver
 * gave that descriptor, and came from a descriptor with DD; the driver
 * takes exactly the run of DD descriptors from where it stands (up to the
 * burst) and counts as errors exactly those whose length, EOP or errors
 * make them bad, which only a lie can produce; a frame the device wrote
 * honestly arrives with its length and bytes, and with no lie at all every
 * frame arrives, in order; a refilled descriptor has status 0 and a buffer
 * of 2048 bytes in one page; RDT only moves to the slot before the next
 * one; tx_burst takes what the rules say, counts exactly the frames
 * outside their page as errors and describes each other one exactly; no
 * page is in two places (RX ring, TX ring, application) and every page
 * allocated is one of those, a ring page, or in the pool. At the end, the
 * application's pages go back, the port closes as remove does (its pool
 * with nothing in flight), and no page is left allocated.
 */
#include <errno.h>

#include <pagepool/pp_net.h>
#include <pagepool/pp_net_driver.h>

#include "e1000e/e1000e_priv.h"
#include "fuzz_common.h"

#define ARENA_PAGES 1024
#define SIM_IOVA_BASE 0x10000000000ull   /* 1 TiB: never a user address */
#define OTHER_IOVA_BASE 0x20000000000ull /* 2 TiB: the other domain's */
#define REGS_SIZE 0x6000                 /* past RAH0 (0x5404) */
#define APP_MAX 96
#define TX_MAX 48
#define STEPS_MAX 96
#define ETH_HLEN 14

/* The DMA domains, made once per process over the target's arena. */
static struct {
	struct pp_dma *dma;     /* the device's */
	struct pp_dma *other;   /* another device's */
	uintptr_t base;   /* the arena's address; IOVA SIM_IOVA_BASE */
	uint64_t size;    /* bytes mapped (segment_map), from base */
} dom;

static int dom_segment_map(void *ctx, const struct pp_arena_segment *seg)
{
	uintptr_t end = (uintptr_t)seg->addr + seg->len;

	(void)ctx;
	FUZZ_CHECK((uintptr_t)seg->addr >= dom.base);
	if (end - dom.base > dom.size)
		dom.size = end - dom.base;
	return 0;
}

static int dom_page_map(void *ctx, void *addr, size_t len,
			enum pp_dma_dir dir, uint64_t *iova)
{
	uintptr_t va = (uintptr_t)addr;

	(void)dir;
	if (va < dom.base || va - dom.base > dom.size ||
	    len > dom.size - (va - dom.base))
		return -ENOENT;
	/* ctx is the domain's IOVA base. */
	*iova = (uint64_t)(uintptr_t)ctx + (va - dom.base);
	return 0;
}

static const struct pp_dma_ops dom_ops = {
	.sz = sizeof(dom_ops),
	.name = "sim82574",
	.segment_map = dom_segment_map,
	.page_map = dom_page_map,
};

/*
 * The device's view: [@iova, @iova + @len) in memory the domain mapped, or
 * NULL. All in 64 bits: no sum may wrap into the mapping.
 */
static uint8_t *dev_mem(uint64_t iova, uint64_t len)
{
	uint64_t off;

	if (iova < SIM_IOVA_BASE)
		return NULL;
	off = iova - SIM_IOVA_BASE;
	if (off > dom.size || len > dom.size - off)
		return NULL;
	return (uint8_t *)(dom.base + off);
}

static uint64_t iova_of(const void *va)
{
	return SIM_IOVA_BASE + ((uintptr_t)va - dom.base);
}

enum slot_state {
	SLOT_EMPTY,    /* refilled; the device has not written it */
	SLOT_HONEST,   /* the device wrote a frame and told the truth */
	SLOT_LIED,     /* length, status or errors written by a lie */
};

struct rx_slot {
	struct pp_page *page;
	uint8_t *buf;          /* where the driver said to write */
	uint64_t iova;
	enum slot_state state;
	uint16_t len;
	uint32_t seed;
	uint32_t pos;          /* its bytes' place in the packet (chains) */
	bool last;             /* the packet's last descriptor (EOP) */
};

struct tx_slot {
	struct pp_page *page;  /* NULL: reclaimed, or never filled */
	uint8_t *data;
	uint16_t len;
	uint32_t seed;
	uint16_t rs;           /* the burst's last descriptor */
};

struct sim {
	struct fuzz_env *env;
	uint32_t *regs;
	struct pp_port *port;
	struct e1000e_port *ep;
	struct pp_pool *pool;
	struct pp_pool *other_pool;      /* pages mapped in dom.other */
	struct e1000_rx_desc *rx_ring;   /* through RDBA */
	struct e1000_tx_desc *tx_ring;   /* through TDBA */
	uint16_t headroom;
	struct rx_slot rx[RING_SIZE];
	unsigned int rx_next;            /* where the driver looks next */
	unsigned int rdh;
	/* Multi-buffer mode (MTU 9000 or the largest): chains of RX
	 * descriptors, multi-buffer TX packets. */
	bool mb;
	uint32_t max_pkt;                /* MTU + 18 */
	bool rx_discard;                 /* the driver's, by the rules */
	/* The packet the honest device is writing, descriptor by
	 * descriptor (a chain may stop half written, for want of room). */
	bool dev_active;
	uint32_t dev_len, dev_pos, dev_seed;
	struct tx_slot tx[RING_SIZE];
	unsigned int tx_clean, tx_tail;  /* the driver's, by the rules */
	unsigned int tdh;
	struct pp_frame app[APP_MAX];    /* frames the application holds */
	uint32_t app_seed[APP_MAX];      /* pattern of each, 0: none */
	unsigned int nr_app;
	bool lied;
	uint32_t next_seed;
	unsigned long honest_sent, honest_recv;
};

static uint32_t regs_block[REGS_SIZE / 4];

static uint32_t reg(struct sim *s, uint32_t r)
{
	return s->regs[r / 4];
}

static void reg_set(struct sim *s, uint32_t r, uint32_t v)
{
	s->regs[r / 4] = v;
}

/* The bytes of a frame with pattern @seed: any function of both will do. */
static uint8_t pattern(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

static void fill_at(uint8_t *p, uint32_t len, uint32_t seed, uint32_t pos)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = pattern(seed, pos + i);
}

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	fill_at(p, len, seed, 0);
}

/* @len bytes at @p are bytes @pos.. of pattern @seed. */
static bool same_at(const uint8_t *p, uint32_t len, uint32_t seed,
		    uint32_t pos)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != pattern(seed, pos + i))
			return false;
	return true;
}

static bool same(const uint8_t *p, uint32_t len, uint32_t seed)
{
	return same_at(p, len, seed, 0);
}

/* ---- the port: a table entry of this file, the driver's data path ---- */

static int sim_probe(struct pp_port *port, const struct pp_devargs *da);
static void sim_remove(struct pp_port *port);

static const char *const sim_keys[] = { NULL };
static const struct pp_net_driver sim_driver = {
	.name = "e1000e_sim",
	.keys = sim_keys,
	.help = "the e1000e data path on a simulated 82574",
	.ops = {
		.probe = sim_probe,
		.remove = sim_remove,
		.rx_burst = e1000e_rx_burst,
		.tx_burst = e1000e_tx_burst,
	},
};

/* Probe's ring part and the registers it programs for it. */
static int sim_probe(struct pp_port *port, const struct pp_devargs *da)
{
	struct e1000e_port *ep = calloc(1, sizeof(*ep));
	uint64_t rx_iova, tx_iova;
	int err;

	if (!ep)
		return -ENOMEM;
	port->priv = ep;
	ep->dma = port->conf.dma;
	ep->headroom = (uint16_t)port->conf.headroom;
	ep->regs = (volatile uint8_t *)regs_block;
	pp_pool_set_owner(port->rxq[0].pool);
	err = e1000e_rings_init(port, ep, da->name, &rx_iova, &tx_iova);
	if (err) {
		sim_remove(port);
		return err;
	}
	e1000_write(ep->regs, E1000_RDBAL, (uint32_t)rx_iova);
	e1000_write(ep->regs, E1000_RDBAH, (uint32_t)(rx_iova >> 32));
	e1000_write(ep->regs, E1000_RDLEN, PP_PAGE_SIZE);
	e1000_write(ep->regs, E1000_RDH, 0);
	e1000_write(ep->regs, E1000_RDT, RING_SIZE - 1);
	e1000_write(ep->regs, E1000_TDBAL, (uint32_t)tx_iova);
	e1000_write(ep->regs, E1000_TDBAH, (uint32_t)(tx_iova >> 32));
	e1000_write(ep->regs, E1000_TDLEN, PP_PAGE_SIZE);
	e1000_write(ep->regs, E1000_TDH, 0);
	e1000_write(ep->regs, E1000_TDT, 0);
	port->rxq[0].priv = ep;
	port->txq[0].priv = ep;
	return 0;
}

static void sim_remove(struct pp_port *port)
{
	struct e1000e_port *ep = port->priv;

	if (!ep)
		return;
	e1000e_rings_release(port, ep);
	free(ep);
	port->priv = NULL;
}

/* ---- what the device is told ---- */

/* RX slot @i was (re)filled: check and record its buffer. */
static void rx_learn(struct sim *s, unsigned int i)
{
	const struct e1000_rx_desc *d = &s->rx_ring[i];
	struct rx_slot *r = &s->rx[i];
	uint8_t *buf = dev_mem(d->addr, E1000_RX_BUF_LEN), *start;
	struct pp_page *page;

	FUZZ_CHECK(d->status == 0);
	FUZZ_CHECK(buf != NULL);
	page = pp_virt_to_page(s->env->alloc, buf);
	FUZZ_CHECK(page != NULL && page->order == 0);
	FUZZ_CHECK(pp_page_pool(page) == s->pool);
	start = pp_page_address(page);
	/* The headroom before the buffer, all 2048 bytes in the page. */
	FUZZ_CHECK(buf >= start + s->headroom);
	FUZZ_CHECK(buf + E1000_RX_BUF_LEN <= start + PP_PAGE_SIZE);
	r->page = page;
	r->buf = buf;
	r->iova = d->addr;
	r->state = SLOT_EMPTY;
}

/* TX slot @t holds frame @f with pattern @seed; last of its burst @rs;
 * @eop: the packet's last segment (EOP), else a chain's. */
static void tx_learn(struct sim *s, unsigned int t, const struct pp_frame *f,
		     uint32_t seed, unsigned int rs, bool eop)
{
	const struct e1000_tx_desc *d = &s->tx_ring[t];
	uint8_t want = (eop ? E1000_TXD_CMD_EOP : 0) | E1000_TXD_CMD_IFCS;

	if (t == rs)
		want |= E1000_TXD_CMD_RS;
	FUZZ_CHECK(d->addr == iova_of(pp_frame_data(f)));
	FUZZ_CHECK(d->length == f->len);
	FUZZ_CHECK(d->cmd == want);
	FUZZ_CHECK(d->status == 0);
	s->tx[t].page = f->page;
	s->tx[t].data = pp_frame_data(f);
	s->tx[t].len = f->len;
	s->tx[t].seed = seed;
	s->tx[t].rs = (uint16_t)rs;
}

/* ---- accounting ---- */

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static void count_page(struct sim *s, struct pp_page *page,
		       unsigned long *out, unsigned long *other_out,
		       unsigned int *plain)
{
	struct pp_pool *pool = pp_page_pool(page);

	if (pool == s->pool)
		(*out)++;
	else if (pool == s->other_pool)
		(*other_out)++;
	else
		(*plain)++;
	FUZZ_CHECK(!pool || pool == s->pool || pool == s->other_pool);
}

/*
 * No page is in two places, the model agrees with the driver, and every
 * allocated page is accounted for.
 */
static void check_pages(struct sim *s)
{
	static uintptr_t all[2 * RING_SIZE + APP_MAX];
	unsigned int n = 0, i, plain = 2;
	struct pp_pool_stats ps, os;
	struct pp_zone_stats zs;
	unsigned long out = 0, other_out = 0;

	for (i = 0; i < RING_SIZE; i++) {
		FUZZ_CHECK(s->ep->rx_page[i] == s->rx[i].page);
		all[n++] = (uintptr_t)s->rx[i].page;
		out++;
	}
	for (i = 0; i < RING_SIZE; i++) {
		FUZZ_CHECK(s->ep->tx_page[i] == s->tx[i].page);
		if (!s->tx[i].page)
			continue;
		all[n++] = (uintptr_t)s->tx[i].page;
		count_page(s, s->tx[i].page, &out, &other_out, &plain);
	}
	for (i = 0; i < s->nr_app; i++) {
		all[n++] = (uintptr_t)s->app[i].page;
		count_page(s, s->app[i].page, &out, &other_out, &plain);
	}
	qsort(all, n, sizeof(all[0]), cmp_ptr);
	for (i = 1; i < n; i++)
		FUZZ_CHECK(all[i] != all[i - 1]);
	FUZZ_CHECK(pp_pool_get_stats(s->pool, &ps) == 0);
	FUZZ_CHECK(ps.inflight == out);
	FUZZ_CHECK(pp_pool_get_stats(s->other_pool, &os) == 0);
	FUZZ_CHECK(os.inflight == other_out);
	FUZZ_CHECK(pp_allocator_zone_stats(s->env->alloc, 0, &zs) == 0);
	FUZZ_CHECK(zs.managed_pages - zs.free_pages - zs.thread_cache_pages ==
		   pp_pool_inflight(s->pool) + pp_pool_inflight(s->other_pool) +
			   plain);
}

static void app_drop(struct sim *s, const struct pp_frame *f)
{
	struct pp_pool *pool = pp_page_pool(f->page);

	if (pool)
		pp_pool_recycle_direct(pool, f->page);
	else
		pp_free_page(s->env->alloc, f->page);
}

static void app_keep(struct sim *s, const struct pp_frame *f, uint32_t seed)
{
	if (s->nr_app == APP_MAX) {
		app_drop(s, f);
		return;
	}
	s->app_seed[s->nr_app] = seed;
	s->app[s->nr_app++] = *f;
}

/* ---- RX ---- */

static uint16_t pick_len(struct fuzz_in *in)
{
	static const uint16_t lens[] = { 14, 15, 60, 64, 1500, 1514, 1518,
					 1522, 2047, 2048 };
	uint8_t k = fuzz_u8(in);

	if (k < 160)
		return lens[k % (sizeof(lens) / sizeof(lens[0]))];
	return (uint16_t)(ETH_HLEN + fuzz_u16(in) % (E1000_RX_BUF_LEN -
						      ETH_HLEN + 1));
}

/* A packet length for the multi-buffer device: up to the MTU's frame. */
static uint32_t pick_len_mb(struct sim *s, struct fuzz_in *in)
{
	static const uint16_t lens[] = { 14, 60, 1514, 2047, 2048, 2049,
					 4096, 4097, 6144, 9000, 9018, 9216 };
	uint8_t k = fuzz_u8(in);
	uint32_t len;

	if (k < 160)
		len = lens[k % (sizeof(lens) / sizeof(lens[0]))];
	else
		len = ETH_HLEN + fuzz_u16(in) % (s->max_pkt - ETH_HLEN + 1);
	return len < s->max_pkt ? len : s->max_pkt;
}

/*
 * The device writes the next descriptor of the packet it is receiving
 * (at RDH, which the caller checked is the device's): a whole buffer, or
 * what is left, with EOP on the packet's last.
 */
static void rx_write_desc(struct sim *s)
{
	struct e1000_rx_desc *d = &s->rx_ring[s->rdh];
	struct rx_slot *r = &s->rx[s->rdh];
	uint32_t left = s->dev_len - s->dev_pos;
	uint16_t len = (uint16_t)(left < E1000_RX_BUF_LEN ? left :
						      E1000_RX_BUF_LEN);
	uint8_t *buf = dev_mem(r->iova, len);
	bool last = len == left;

	/* Where the driver said, whatever a lie wrote over addr. */
	FUZZ_CHECK(buf == r->buf);
	fill_at(buf, len, s->dev_seed, s->dev_pos);
	d->length = len;
	d->csum = 0;
	d->errors = 0;
	d->special = 0;
	__atomic_store_n(&d->status,
			 E1000_RXD_STAT_DD | (last ? E1000_RXD_STAT_EOP : 0),
			 __ATOMIC_RELEASE);
	r->state = SLOT_HONEST;
	r->len = len;
	r->seed = s->dev_seed;
	r->pos = s->dev_pos;
	r->last = last;
	s->dev_pos += len;
	if (last) {
		s->dev_active = false;
		s->honest_sent++;
	}
	s->rdh = (s->rdh + 1) & RING_MASK;
	reg_set(s, E1000_RDH, s->rdh);
}

/* The device receives into up to @n descriptors of [RDH, RDT), honestly:
 * frames of one buffer, or with chains, packets of several. */
static void rx_honest(struct sim *s, struct fuzz_in *in)
{
	unsigned int n = fuzz_u8(in) % 80;

	while (n-- && s->rdh != reg(s, E1000_RDT)) {
		if (!s->dev_active) {
			s->dev_len = s->mb ? pick_len_mb(s, in) : pick_len(in);
			s->dev_pos = 0;
			s->dev_seed = ++s->next_seed;
			s->dev_active = true;
		}
		rx_write_desc(s);
	}
}

static uint16_t lie_len(struct fuzz_in *in)
{
	static const uint16_t lens[] = { 0, 1, 13, 14, 60, 1522, 2048, 2049,
					 4096, 0xffff };
	uint8_t k = fuzz_u8(in);

	return k < 200 ? lens[k % (sizeof(lens) / sizeof(lens[0]))]
		       : fuzz_u16(in);
}

static void rx_lie(struct sim *s, struct fuzz_in *in)
{
	uint8_t how = fuzz_u8(in), where = fuzz_u8(in);
	unsigned int i = how & 0x80 ? where : (s->rx_next + where % 8);
	struct e1000_rx_desc *d = &s->rx_ring[i & RING_MASK];
	struct rx_slot *r = &s->rx[i & RING_MASK];
	bool verdict = true;   /* the write can change what the driver sees */

	switch ((how & 0x0f) % 10) {
	case 0:
		if (fuzz_u8(in) & 1) {
			/* Two reads, in this order: one expression would
			 * leave the order to the compiler. */
			uint64_t lo = fuzz_u32(in);

			d->addr = (uint64_t)fuzz_u32(in) << 32 | lo;
		} else {
			d->addr ^= (uint64_t)1 << (fuzz_u8(in) % 64);
		}
		verdict = false;
		break;
	case 1:
		d->length = lie_len(in);
		break;
	case 2:
		d->csum = fuzz_u16(in);
		verdict = false;
		break;
	case 3:
		d->status = fuzz_u8(in);
		break;
	case 4:
		d->status |= E1000_RXD_STAT_DD;
		break;
	case 5:
		d->status &= (uint8_t)~E1000_RXD_STAT_DD;
		break;
	case 6:
		d->errors = fuzz_u8(in);
		break;
	case 7:
		d->special = fuzz_u16(in);
		verdict = false;
		break;
	default:
		/* A whole completion: length, errors and status. */
		d->length = lie_len(in);
		d->errors = how & 0x40 ? fuzz_u8(in) : 0;
		d->status = E1000_RXD_STAT_DD |
			    (how & 0x20 ? 0 : E1000_RXD_STAT_EOP);
		break;
	}
	if (verdict) {
		r->state = SLOT_LIED;
		s->lied = true;
	}
}

/* ---- RX with chains: the driver's rules, written again ---- */

/* The most descriptors one call takes (the driver's RX_CHAIN_DESCS). */
#define CHAIN_DESCS (PP_NET_BURST + PP_FRAME_MAX_SEGS + 1)

static bool rx_done(const struct sim *s, unsigned int i)
{
	return s->rx_ring[i & RING_MASK].status & E1000_RXD_STAT_DD;
}

/* Done descriptors from @i up to the first with EOP (*@eop), at most
 * @limit. */
static unsigned int chain_len(const struct sim *s, unsigned int i,
			      unsigned int limit, bool *eop)
{
	unsigned int c;

	*eop = false;
	for (c = 0; c < limit && rx_done(s, i + c); c++) {
		if (s->rx_ring[(i + c) & RING_MASK].status &
		    E1000_RXD_STAT_EOP) {
			*eop = true;
			return c + 1;
		}
	}
	return c;
}

/* A chain to hand out: no errors, each length in its buffer, the packet
 * from an Ethernet header to the MTU's frame. */
static bool chain_ok(const struct sim *s, unsigned int i, unsigned int c)
{
	uint32_t total = 0;

	for (unsigned int j = 0; j < c; j++) {
		const struct e1000_rx_desc *d = &s->rx_ring[(i + j) & RING_MASK];

		if (d->errors || d->length > E1000_RX_BUF_LEN)
			return false;
		total += d->length;
	}
	return total >= ETH_HLEN && total <= s->max_pkt;
}

enum chain_fate { CHAIN_TAKEN, CHAIN_REFUSED, CHAIN_DISCARDED };

/*
 * rx_burst with chains: what the driver must take (packets whole, those
 * that fit in n; chains without EOP wait; refused ones counted once, the
 * rest of an over-long chain dropped uncounted), then what it gave.
 */
static void rx_burst_mb(struct sim *s, struct fuzz_in *in)
{
	unsigned int n = fuzz_u8(in) % (PP_NET_BURST + 8);
	unsigned int cap = n < PP_NET_BURST ? n : PP_NET_BURST;
	unsigned int rdt = reg(s, E1000_RDT), i = s->rx_next, ready, used = 0;
	unsigned int k = 0, bad = 0, got, g = 0, npk = 0, p, j;
	struct pp_frame f[PP_NET_BURST + 8] = { 0 };
	struct { unsigned int c; enum chain_fate fate; } pk[CHAIN_DESCS];
	uint16_t len[CHAIN_DESCS];
	struct pp_rxq_stats before, after;
	bool discard = s->rx_discard, eop;

	for (ready = 0; ready < CHAIN_DESCS && rx_done(s, i + ready); ready++)
		len[ready] = s->rx_ring[(i + ready) & RING_MASK].length;
	while (used < ready) {
		unsigned int limit = ready - used < PP_FRAME_MAX_SEGS + 1 ?
					     ready - used : PP_FRAME_MAX_SEGS + 1;
		unsigned int c = chain_len(s, i, limit, &eop);
		enum chain_fate fate;

		if (!c || (!eop && c < PP_FRAME_MAX_SEGS + 1))
			break;
		if (!eop) {
			fate = discard ? CHAIN_DISCARDED : CHAIN_REFUSED;
			bad += !discard;
			discard = true;
		} else if (discard) {
			fate = CHAIN_DISCARDED;
			discard = false;
		} else if (!chain_ok(s, i, c)) {
			fate = CHAIN_REFUSED;
			bad++;
		} else if (k + c > cap) {
			break;
		} else {
			fate = CHAIN_TAKEN;
			k += c;
		}
		pk[npk].c = c;
		pk[npk++].fate = fate;
		used += c;
		i += c;
	}
	FUZZ_CHECK(pp_port_rxq_stats(s->port, 0, &before) == 0);
	got = pp_port_rx_burst(s->port, 0, f, n);
	FUZZ_CHECK(pp_port_rxq_stats(s->port, 0, &after) == 0);
	FUZZ_CHECK(after.errors - before.errors == bad);
	FUZZ_CHECK(got == k);
	FUZZ_CHECK(s->ep->rx_discard == discard);

	i = s->rx_next;
	used = 0;
	for (p = 0; p < npk; p++) {
		unsigned int c = pk[p].c;
		bool honest = true;

		for (j = 0; j < c; j++) {
			struct rx_slot *r = &s->rx[(i + j) & RING_MASK];

			/* Only a lie makes a descriptor done out of turn. */
			FUZZ_CHECK(r->state != SLOT_EMPTY);
			honest &= r->state == SLOT_HONEST;
		}
		/* Only a lie gets a chain refused: not always one in the
		 * chain itself (EOP set on the descriptor before an honest
		 * packet's last one leaves that one a chain of its own, too
		 * short). */
		if (pk[p].fate == CHAIN_REFUSED)
			FUZZ_CHECK(s->lied);
		if (pk[p].fate == CHAIN_TAKEN) {
			const struct rx_slot *r0 = &s->rx[i & RING_MASK];
			const struct rx_slot *rl = &s->rx[(i + c - 1) & RING_MASK];

			for (j = 0; j < c; j++) {
				struct rx_slot *r = &s->rx[(i + j) & RING_MASK];
				struct pp_frame *fr = &f[g++];

				FUZZ_CHECK(fr->page == r->page);
				FUZZ_CHECK(pp_frame_valid(fr));
				FUZZ_CHECK(fr->len == len[used + j]);
				FUZZ_CHECK(fr->more == (j + 1 < c));
				FUZZ_CHECK(fr->headroom == (j ? 0 : s->headroom));
				FUZZ_CHECK((uint8_t *)pp_frame_data(fr) == r->buf);
				if (r->state == SLOT_HONEST) {
					FUZZ_CHECK(fr->len == r->len);
					FUZZ_CHECK(same_at(r->buf, r->len, r->seed,
							   r->pos));
				}
				/* A TX of it checks its bytes from 0. */
				app_keep(s, fr,
					 r->state == SLOT_HONEST && !r->pos ?
						 r->seed : 0);
			}
			/* One honest packet, whole: it arrived. */
			if (honest && !r0->pos && rl->last && r0->seed == rl->seed)
				s->honest_recv++;
		}
		for (j = 0; j < c; j++)
			rx_learn(s, (i + j) & RING_MASK);
		used += c;
		i += c;
	}
	FUZZ_CHECK(g == got);
	s->rx_next = i & RING_MASK;
	s->rx_discard = discard;
	/* RDT stays, or becomes the slot before the next one. */
	FUZZ_CHECK(reg(s, E1000_RDT) == rdt ||
		   reg(s, E1000_RDT) == ((s->rx_next - 1) & RING_MASK));
}

static void rx_burst(struct sim *s, struct fuzz_in *in)
{
	unsigned int n, expect = 0;
	unsigned int bad = 0, got, g = 0, k, i, rdt = reg(s, E1000_RDT);
	bool good[PP_NET_BURST];
	uint16_t len[PP_NET_BURST];
	struct pp_frame f[PP_NET_BURST + 8] = { 0 };
	struct pp_rxq_stats before, after;

	if (s->mb) {
		rx_burst_mb(s, in);
		return;
	}
	n = fuzz_u8(in) % (PP_NET_BURST + 8);
	/* The run of DD from where the driver stands, judged as the
	 * driver must judge it. */
	for (k = 0; k < n && k < PP_NET_BURST; k++) {
		const struct e1000_rx_desc *d =
			&s->rx_ring[(s->rx_next + k) & RING_MASK];

		if (!(d->status & E1000_RXD_STAT_DD))
			break;
		len[k] = d->length;
		good[k] = !d->errors && (d->status & E1000_RXD_STAT_EOP) &&
			  d->length >= ETH_HLEN &&
			  d->length <= E1000_RX_BUF_LEN;
		bad += !good[k];
		expect++;
	}
	FUZZ_CHECK(pp_port_rxq_stats(s->port, 0, &before) == 0);
	got = pp_port_rx_burst(s->port, 0, f, n);
	FUZZ_CHECK(pp_port_rxq_stats(s->port, 0, &after) == 0);
	FUZZ_CHECK(after.errors - before.errors == bad);
	FUZZ_CHECK(got == expect - bad);

	for (k = 0; k < expect; k++) {
		struct rx_slot *r;

		i = (s->rx_next + k) & RING_MASK;
		r = &s->rx[i];

		/* Only a lie makes a descriptor bad or done out of turn. */
		FUZZ_CHECK(r->state != SLOT_EMPTY);
		if (!good[k]) {
			FUZZ_CHECK(r->state == SLOT_LIED);
		} else {
			struct pp_frame *fr = &f[g++];

			FUZZ_CHECK(fr->page == r->page);
			FUZZ_CHECK(pp_frame_valid(fr));
			FUZZ_CHECK(fr->len >= ETH_HLEN &&
				   fr->len <= E1000_RX_BUF_LEN);
			FUZZ_CHECK(fr->len == len[k]);
			FUZZ_CHECK((uint8_t *)pp_frame_data(fr) == r->buf);
			if (r->state == SLOT_HONEST) {
				FUZZ_CHECK(fr->len == r->len);
				FUZZ_CHECK(same(r->buf, r->len, r->seed));
				s->honest_recv++;
			}
			app_keep(s, fr, r->state == SLOT_HONEST ? r->seed : 0);
		}
		rx_learn(s, i);
	}
	FUZZ_CHECK(g == got);
	s->rx_next = (s->rx_next + expect) & RING_MASK;
	/* RDT stays, or becomes the slot before the next one. */
	FUZZ_CHECK(reg(s, E1000_RDT) == rdt ||
		   reg(s, E1000_RDT) == ((s->rx_next - 1) & RING_MASK));
}

/* ---- TX ---- */

static uint32_t pick_u32(struct fuzz_in *in, uint8_t kind)
{
	uint32_t raw = fuzz_u32(in);

	switch (kind & 3) {
	case 0: return raw & 0xfff;
	case 1: return (uint32_t)(PP_PAGE_SIZE - (raw & 0x7ff));
	case 2: return 0x10000u - (raw & 0x1ff);
	default: return 0u - (raw & 0xffff);
	}
}

static uint16_t pick_u16(struct fuzz_in *in, uint8_t kind)
{
	uint16_t raw = fuzz_u16(in);

	switch (kind & 3) {
	case 0: return (uint16_t)(raw & 0x7ff);
	case 1: return (uint16_t)(raw & 0xff);
	case 2: return (uint16_t)(PP_PAGE_SIZE - (raw & 0xff));
	default: return (uint16_t)(0xffff - (raw & 0x1ff));
	}
}

/* The next TX frame: an application frame, a page of either pool or a
 * plain one. */
static bool tx_frame(struct sim *s, struct fuzz_in *in, struct pp_frame *f,
		     uint32_t *seed)
{
	uint8_t src = fuzz_u8(in);

	*seed = 0;
	if (src % 4 == 0) {
		unsigned int k;

		if (!s->nr_app)
			return false;
		k = fuzz_u8(in) % s->nr_app;
		*f = s->app[k];
		*seed = s->app_seed[k];
		s->nr_app--;
		s->app[k] = s->app[s->nr_app];
		s->app_seed[k] = s->app_seed[s->nr_app];
	} else {
		struct pp_page *page =
			src % 4 == 1 ? pp_pool_alloc_pages(s->pool) :
			src % 4 == 2 ? pp_alloc_page(s->env->alloc) :
				       pp_pool_alloc_pages(s->other_pool);

		if (!page)
			return false;
		f->page = page;
		f->offset = 0;
		f->headroom = s->headroom;
		f->len = (uint16_t)(60 + fuzz_u8(in) * 4);
	}
	/* With multi-buffer, bit 6 makes the frame a segment with more to
	 * come: a packet is a run of those and one without. */
	f->more = s->mb && (src & 0x40);
	if (src & 0x80) {
		uint8_t kinds = fuzz_u8(in);

		f->offset = pick_u32(in, kinds);
		f->headroom = pick_u16(in, (uint8_t)(kinds >> 2));
		f->len = pick_u16(in, (uint8_t)(kinds >> 4));
		*seed = 0;
	}
	if (pp_frame_valid(f) && !*seed) {
		*seed = ++s->next_seed;
		fill(pp_frame_data(f), f->len, *seed);
	}
	return true;
}

static void tx_burst(struct sim *s, struct fuzz_in *in)
{
	unsigned int n = fuzz_u8(in) % (TX_MAX + 1), nr = 0, i, j, t, clean;
	unsigned int taken, want_taken, bad = 0, first, segs;
	struct pp_frame f[TX_MAX] = { 0 };
	uint32_t seed[TX_MAX];
	bool dropped[TX_MAX] = { false };
	struct pp_txq_stats before, after;

	while (nr < n && tx_frame(s, in, &f[nr], &seed[nr]))
		nr++;
	/* What tx_clean reclaims: whole bursts whose RS descriptor has DD. */
	clean = s->tx_clean;
	while (clean != s->tx_tail &&
	       (s->tx_ring[s->tx[clean].rs].status & E1000_TXD_STAT_DD)) {
		unsigned int rs = s->tx[clean].rs;

		do {
			s->tx[clean].page = NULL;
			clean = (clean + 1) & RING_MASK;
		} while (clean != ((rs + 1) & RING_MASK));
	}
	s->tx_clean = clean;
	/*
	 * What it takes: bad frames dropped, good ones while there is room;
	 * a multi-buffer packet whole (all its descriptors free) or not at
	 * all, not when the burst ends inside it, dropped whole (one error)
	 * with more than PP_FRAME_MAX_SEGS segments or one outside its page.
	 */
	t = s->tx_tail;
	for (want_taken = 0; want_taken < nr; want_taken += segs) {
		bool ok = true;

		segs = pp_pkt_segs(&f[want_taken], nr - want_taken);
		if (f[want_taken + segs - 1].more)
			break;
		for (j = 0; j < segs; j++)
			ok &= pp_frame_valid(&f[want_taken + j]);
		if (!ok || segs > PP_FRAME_MAX_SEGS) {
			for (j = 0; j < segs; j++)
				dropped[want_taken + j] = true;
			bad++;
			continue;
		}
		if (segs > ((s->tx_clean - t - 1) & RING_MASK))
			break;
		t = (t + segs) & RING_MASK;
	}
	FUZZ_CHECK(pp_port_txq_stats(s->port, 0, &before) == 0);
	taken = pp_port_tx_burst(s->port, 0, f, nr);
	FUZZ_CHECK(pp_port_txq_stats(s->port, 0, &after) == 0);
	FUZZ_CHECK(taken == want_taken);
	FUZZ_CHECK(after.errors - before.errors == bad);
	FUZZ_CHECK(s->ep->tx_clean == s->tx_clean);
	first = s->tx_tail;
	for (i = 0; i < taken; i++) {
		if (dropped[i])
			continue;
		tx_learn(s, s->tx_tail, &f[i], seed[i], (t - 1) & RING_MASK,
			 !f[i].more);
		s->tx_tail = (s->tx_tail + 1) & RING_MASK;
	}
	FUZZ_CHECK(s->tx_tail == t);
	if (first != t)
		FUZZ_CHECK(reg(s, E1000_TDT) == t);
	/* The rest is still the application's. */
	for (i = taken; i < nr; i++)
		app_keep(s, &f[i], pp_frame_valid(&f[i]) ? seed[i] : 0);
}

/* The device sends up to @n descriptors of [TDH, TDT). */
static void tx_device(struct sim *s, struct fuzz_in *in)
{
	unsigned int n = fuzz_u8(in), tdt = reg(s, E1000_TDT) & RING_MASK;

	while (n-- && s->tdh != tdt) {
		struct e1000_tx_desc *d = &s->tx_ring[s->tdh];
		struct tx_slot *x = &s->tx[s->tdh];
		uint8_t *p = dev_mem(d->addr, d->length);

		/* Every read the driver asks for is in mapped memory. */
		FUZZ_CHECK(p != NULL);
		if (x->page) {
			uint8_t *start = pp_page_address(x->page);
			uint64_t end = (uint64_t)(uintptr_t)start + PP_PAGE_SIZE;

			/* And in the frame's page, in 64 bits. */
			FUZZ_CHECK((uint64_t)(uintptr_t)p >= (uintptr_t)start);
			FUZZ_CHECK((uint64_t)(uintptr_t)p + d->length <= end);
			FUZZ_CHECK(p == x->data && d->length == x->len);
			FUZZ_CHECK(same(p, d->length, x->seed));
		}
		if (d->cmd & E1000_TXD_CMD_RS)
			__atomic_store_n(&d->status, d->status | E1000_TXD_STAT_DD,
					 __ATOMIC_RELEASE);
		s->tdh = (s->tdh + 1) & RING_MASK;
		reg_set(s, E1000_TDH, s->tdh);
	}
}

static void tx_lie(struct sim *s, struct fuzz_in *in)
{
	uint8_t how = fuzz_u8(in), where = fuzz_u8(in);
	unsigned int i = how & 0x80 ? where : s->tx_clean + where % 16;
	struct e1000_tx_desc *d = &s->tx_ring[i & RING_MASK];

	switch ((how & 0x0f) % 5) {
	case 0:
		d->status |= E1000_TXD_STAT_DD;
		break;
	case 1:
		d->status &= (uint8_t)~E1000_TXD_STAT_DD;
		break;
	case 2:
		d->status = fuzz_u8(in);
		break;
	case 3:
		d->css = fuzz_u8(in);
		break;
	default:
		d->special = fuzz_u16(in);
		break;
	}
	s->lied = true;
}

/* ---- one input ---- */

/* Another port's RX pool, its pages mapped in the other domain. */
static struct pp_pool *other_pool_create(struct sim *s)
{
	struct pp_pool_params pp = {
		.sz = sizeof(pp),
		.allocator = s->env->alloc,
		.dma = dom.other,
		.flags = PP_POOL_F_DMA_MAP,
		.pool_size = 64,
		.nid = PP_NUMA_NODE_ANY,
		.dma_dir = PP_DMA_BIDIRECTIONAL,
		.name = "other",
	};
	struct pp_pool *pool = pp_pool_create(&pp);

	FUZZ_CHECK(pool != NULL);
	return pool;
}

static void sim_open(struct sim *s, struct fuzz_in *in)
{
	static const unsigned int headrooms[] = { 0, 64, 128, 192, 1024,
						  PP_PAGE_SIZE - E1000_RX_BUF_LEN };
	/* The first byte: the headroom, and in its top bits the MTU (bit
	 * 7: multi-buffer, MTU 9000, or with bit 6 the largest). */
	uint8_t mode = fuzz_u8(in);
	struct pp_port_conf conf = {
		.sz = sizeof(conf),
		.allocator = s->env->alloc,
		.dma = dom.dma,
		.pool_size = 64,
		.nid = PP_NUMA_NODE_ANY,
		.headroom = headrooms[mode % 6],
		.nr_rxq = 1,
		.nr_txq = 1,
		.mtu = !(mode & 0x80) ? 0 : mode & 0x40 ? PP_PORT_MTU_MAX : 9000,
	};
	struct pp_devargs da = { .devstr = "e1000e_sim0", .name = "e1000e_sim0",
				 .driver = "e1000e_sim" };
	uint64_t rdba, tdba;
	unsigned int i;

	memset(regs_block, 0, sizeof(regs_block));
	s->regs = regs_block;
	s->port = pp_net_port_create(&sim_driver, &da, &conf);
	FUZZ_CHECK(s->port != NULL);
	s->ep = s->port->priv;
	s->pool = pp_port_rxq_pool(s->port, 0);
	s->other_pool = other_pool_create(s);
	s->headroom = s->ep->headroom;
	s->max_pkt = pp_port_mtu(s->port) + PP_ETH_OVERHEAD;
	s->mb = s->max_pkt > E1000_RX_BUF_LEN;
	FUZZ_CHECK(s->ep->rx_chain == s->mb);
	rdba = (uint64_t)reg(s, E1000_RDBAH) << 32 | reg(s, E1000_RDBAL);
	tdba = (uint64_t)reg(s, E1000_TDBAH) << 32 | reg(s, E1000_TDBAL);
	s->rx_ring = (void *)dev_mem(rdba, reg(s, E1000_RDLEN));
	s->tx_ring = (void *)dev_mem(tdba, reg(s, E1000_TDLEN));
	FUZZ_CHECK(s->rx_ring && s->tx_ring);
	FUZZ_CHECK(reg(s, E1000_RDLEN) == RING_SIZE * sizeof(*s->rx_ring));
	for (i = 0; i < RING_SIZE; i++)
		rx_learn(s, i);
	check_pages(s);
}

static void sim_close(struct sim *s)
{
	unsigned int i;

	if (!s->lied) {
		/* Nothing lied: every frame written arrives, every frame
		 * sent comes back once the device has sent it. */
		struct fuzz_in none = { NULL, 0 };
		unsigned int rounds = 0;

		/* The device finishes the packet it is writing, as room
		 * comes (the driver gives descriptors back as it takes the
		 * packets before it). */
		for (;;) {
			while (s->dev_active && s->rdh != reg(s, E1000_RDT))
				rx_write_desc(s);
			if (s->rx_next == s->rdh && !s->dev_active)
				break;
			FUZZ_CHECK(++rounds < 4 * RING_SIZE);
			rx_burst(s, &(struct fuzz_in){ (const uint8_t *)"\x40", 1 });
		}
		FUZZ_CHECK(s->honest_recv == s->honest_sent);
		tx_device(s, &(struct fuzz_in){ (const uint8_t *)"\xff", 1 });
		tx_burst(s, &none);
		FUZZ_CHECK(s->tx_clean == s->tx_tail);
		check_pages(s);
	}
	for (i = 0; i < s->nr_app; i++)
		app_drop(s, &s->app[i]);
	s->nr_app = 0;
	FUZZ_CHECK(pp_port_close(s->port) == 0);
	FUZZ_CHECK(pp_pool_destroy(s->other_pool) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_env *env = fuzz_env_get(ARENA_PAGES * PP_PAGE_SIZE);
	struct fuzz_in in = { data, size };
	static struct sim s;
	unsigned int steps = 0;

	if (!dom.dma) {
		struct pp_dma_opts o = {
			.sz = sizeof(o),
			.mode = PP_IOVA_OPS,
			.ops = &dom_ops,
			.ops_ctx = (void *)(uintptr_t)SIM_IOVA_BASE,
		};

		dom.base = (uintptr_t)pp_arena_base(env->arena);
		dom.dma = pp_dma_create(&o);
		o.ops_ctx = (void *)(uintptr_t)OTHER_IOVA_BASE;
		dom.other = pp_dma_create(&o);
		FUZZ_CHECK(dom.dma != NULL && dom.other != NULL);
		FUZZ_CHECK(pp_dma_map_arena(dom.dma, env->arena) == 0);
		FUZZ_CHECK(pp_dma_map_arena(dom.other, env->arena) == 0);
		FUZZ_CHECK(dom.size == pp_arena_size(env->arena));
	}
	memset(&s, 0, sizeof(s));
	s.env = env;
	sim_open(&s, &in);
	while (in.left && steps++ < STEPS_MAX) {
		switch (fuzz_u8(&in) % 6) {
		case 0: rx_honest(&s, &in); break;
		case 1: rx_lie(&s, &in); break;
		case 2: rx_burst(&s, &in); break;
		case 3: tx_burst(&s, &in); break;
		case 4: tx_device(&s, &in); break;
		default: tx_lie(&s, &in); break;
		}
		check_pages(&s);
	}
	sim_close(&s);
	pp_allocator_drain_thread(env->alloc);
	fuzz_check_allocated(env, 0);
	return 0;
}
