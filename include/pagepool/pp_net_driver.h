/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_net_driver.h - the driver SDK: what a poll-mode driver implements and
 * the port internals it may touch. Applications include pagepool.h only.
 *
 * A driver is a struct pp_net_driver: a name, the device-string keys it
 * takes, and ops. pp_port_open() (pp_drivers.h) finds it in the built-in
 * table (drivers/net/drivers.c); pp_net_port_open_table() takes a caller's
 * table, so a driver can live outside this tree without any constructor
 * magic.
 * lib/net parses the device string, checks keys against the driver's list,
 * allocates the port and its queues and creates each RX queue's page_pool;
 * the driver's probe() then parses its values and sets up its private
 * state. The data path is two functions over frame arrays.
 */
#ifndef PAGEPOOL_PP_NET_DRIVER_H
#define PAGEPOOL_PP_NET_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pagepool/pp_net.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PP_DEVARGS_MAX 16
#define PP_PORT_NAME_MAX 32

/* A parsed device string: "null0,size=64" -> name "null0", driver "null",
 * one key "size" with value "64". Strings point into a private copy. */
struct pp_devargs {
	const char *devstr;   /* the whole string, for messages */
	char name[PP_PORT_NAME_MAX];
	char driver[PP_PORT_NAME_MAX];
	unsigned int nr;
	const char *key[PP_DEVARGS_MAX];
	const char *value[PP_DEVARGS_MAX];
	char buf[256];
};

/*
 * pp_devargs_get - the value of @key, or NULL when absent.
 * pp_devargs_uint - parse @key as a decimal in [@min, @max] into *@out
 * (left alone when absent). Returns 0, or -EINVAL with a message naming
 * the key, the bad value and the accepted range.
 */
PP_API const char *pp_devargs_get(const struct pp_devargs *da, const char *key);
PP_API int pp_devargs_uint(const struct pp_devargs *da, const char *key,
			   unsigned long min, unsigned long max,
			   unsigned long *out);

/*
 * frag=<bytes>|auto, the key of drivers whose RX buffers may be fragments
 * of the RX pool's pages (pp_page_pool.h "Fragments"). PP_NET_FRAG_AUTO:
 * each buffer sized to its frame. PP_NET_FRAG_MIN_FRAME: the smallest
 * frame a fixed-size fragment must hold behind the headroom, one cache
 * line (a minimum Ethernet frame, 60 bytes, rounded up).
 */
#define PP_NET_FRAG_AUTO UINT32_MAX
#define PP_NET_FRAG_MIN_FRAME 64

/*
 * pp_devargs_frag - parse frag= into *@out: 0 when absent, PP_NET_FRAG_AUTO
 * for "auto", else a size from @headroom + @min_frame to PP_PAGE_SIZE (an
 * RX pool's block). Returns 0, or -EINVAL with a message that gives the
 * accepted range.
 */
PP_API int pp_devargs_frag(const struct pp_devargs *da, unsigned int headroom,
			   unsigned int min_frame, unsigned int *out);

struct pp_rxq {
	/* Hot: the polling thread's. */
	struct pp_port *port;
	struct pp_pool *pool;
	void *priv;                     /* the driver's per-queue state */
	unsigned int idx;
	unsigned int empty_polls;       /* pp_port_rx_burst()'s, see there */
	const void *owner;              /* thread that owns the pool */
	struct pp_rxq_stats stats;      /* owner writes, anyone reads */
} __attribute__((aligned(PP_CACHE_LINE)));

struct pp_txq {
	struct pp_port *port;
	void *priv;
	unsigned int idx;
	/*
	 * The pool whose owner thread is sending right now (set by
	 * pp_port_poll while it flushes), or NULL: a driver that frees sent
	 * frames recycles pages of this pool directly and returns others
	 * through their pool's ring (the kernel's napi_direct rule).
	 */
	struct pp_pool *napi_pool;
	struct pp_txq_stats stats;
} __attribute__((aligned(PP_CACHE_LINE)));

/* One driver counter for pp_net_driver_ops.xstats: DPDK's xstat, a
 * name of at most 63 bytes ([a-z0-9_], as DPDK's drivers name theirs)
 * and its value. */
#define PP_NET_XSTAT_NAME_MAX 64
struct pp_net_xstat {
	char name[PP_NET_XSTAT_NAME_MAX];
	uint64_t value;
};

/* The most driver counters telemetry asks a port for. */
#define PP_NET_XSTATS_MAX 256

/*
 * pp_net_xstat_put - an xstats op's step: counter number *@i is @name
 * and @v, written when it fits in @out's @n; *@i counts it either way,
 * so that the op returns how many there are.
 */
static inline void pp_net_xstat_put(struct pp_net_xstat *out, unsigned int n,
				    unsigned int *i, const char *name,
				    uint64_t v)
{
	if (*i < n) {
		snprintf(out[*i].name, sizeof(out[*i].name), "%s", name);
		out[*i].value = v;
	}
	(*i)++;
}

struct pp_net_driver_ops {
	/* Parse the devargs, set port->priv and each queue's priv. 0 or
	 * -errno, with a message naming the bad part. */
	int (*probe)(struct pp_port *port, const struct pp_devargs *da);
	/* Return every frame the driver still holds to its pool, free priv. */
	void (*remove)(struct pp_port *port);
	unsigned int (*rx_burst)(struct pp_rxq *rxq, struct pp_frame *frames,
				 unsigned int n);
	unsigned int (*tx_burst)(struct pp_txq *txq, struct pp_frame *frames,
				 unsigned int n);
	/*
	 * Optional, appended (a driver's designated initializer that
	 * does not name them leaves them NULL; a driver compiled against
	 * the header before them must be rebuilt, its struct is shorter):
	 * the driver's own counters, DPDK's driver
	 * xstats, for telemetry's /ethdev/xstats. Write up to @n of them
	 * into @out and return how many there are (more than @n: the
	 * caller's array was short). Called from any thread, with the
	 * port open and probed (the port table's lock keeps it so): read
	 * counters with relaxed loads, take no lock the data path takes.
	 */
	int (*xstats)(struct pp_port *port, struct pp_net_xstat *out,
		      unsigned int n);
	/* Optional: the port's MAC address into @mac, 0; or -ENODATA when
	 * it has none. Same context as xstats. */
	int (*mac_addr)(struct pp_port *port, uint8_t mac[6]);
	/*
	 * Optional: call @fn for each page the driver's rings hold that it
	 * did not stamp (pp_where.h), with the holder code to count it
	 * under: for a ring another thread consumes, where a store per
	 * frame into the page's descriptor would move its cache line
	 * between the cores (veth). Called from any thread while the data
	 * path runs, with the port alive: read the rings racily, and only
	 * memory that stays valid; the pointers are used as keys, never
	 * dereferenced.
	 */
	void (*ring_pages)(struct pp_port *port,
			   void (*fn)(const struct pp_page *page,
				      uint32_t code, void *arg),
			   void *arg);
};

struct pp_net_driver {
	const char *name;
	const char *const *keys;   /* NULL-terminated accepted keys */
	const char *help;          /* one line: "size=<60..3840>" */
	struct pp_net_driver_ops ops;
};

struct pp_port {
	unsigned int (*rx_burst)(struct pp_rxq *rxq, struct pp_frame *frames,
				 unsigned int n);
	unsigned int (*tx_burst)(struct pp_txq *txq, struct pp_frame *frames,
				 unsigned int n);
	struct pp_rxq *rxq;
	struct pp_txq *txq;
	unsigned int nr_rxq;
	unsigned int nr_txq;
	struct pp_allocator *allocator;
	struct pp_port_conf conf;
	const struct pp_net_driver *drv;
	void *priv;                 /* the driver's */
	struct pp_port *peer;       /* veth: the other end */
	bool peer_owned;            /* created by the peer's open, closed with it */
	unsigned int id;            /* pp_port_id() */
	struct pp_prog prog;        /* fn == NULL: drop everything */
	pp_stack_fn stack_fn;
	void *stack_arg;
	char name[PP_PORT_NAME_MAX];
};

/*
 * The stamps a driver writes into pages it keeps (pp_page_set_where()):
 * posted in @rxq's RX ring (its refill), and in @txq's TX ring until it
 * completes them (a driver that frees what it sends at once has none to
 * write: the pool's own stamp follows). Read once per burst.
 */
static inline uint64_t pp_net_rx_ring_stamp(const struct pp_rxq *rxq)
{
	return pp_where_stamp(
		PP_HOLDER(PP_HOLDER_RX_RING, rxq->port->id, rxq->idx));
}

static inline uint64_t pp_net_tx_ring_stamp(const struct pp_txq *txq)
{
	return pp_where_stamp(
		PP_HOLDER(PP_HOLDER_TX_RING, txq->port->id, txq->idx));
}

/*
 * pp_net_port_open_table - pp_port_open() over a caller's driver table
 * (NULL-terminated). Same returns and errors.
 */
PP_API struct pp_port *
pp_net_port_open_table(const struct pp_net_driver *const *table,
		       const char *devstr, const struct pp_port_conf *conf);

/*
 * pp_net_port_create - for drivers that create a second port from their
 * probe (veth's peer): a port named @name of @drv with @conf and its RX
 * pools; @da is passed to probe. NULL with errno as pp_port_open().
 */
PP_API struct pp_port *pp_net_port_create(const struct pp_net_driver *drv,
					  const struct pp_devargs *da,
					  const struct pp_port_conf *conf);

/* Free a port made by pp_net_port_create() without calling remove();
 * returns as pp_port_close(). */
PP_API int pp_net_port_free(struct pp_port *port);

/*
 * pp_net_port_arena - the one arena @port's pools draw from, for a driver
 * that hands the whole arena to its device (@why: what it makes of it,
 * for the message). NULL after an error message when the allocator has
 * more than one arena, or no page to tell which. Context: the probe.
 */
PP_API struct pp_arena *pp_net_port_arena(struct pp_port *port,
					  const char *why);

/*
 * pp_net_put_pages - give pages back to their pools from a driver:
 * pages of @napi_pool (may be NULL) are recycled directly, pages of other
 * pools go through the pool's ring in one bulk call per run of pages of
 * one pool, and pages of no pool are freed to @alloc.
 */
PP_API void pp_net_put_pages(struct pp_allocator *alloc,
			     struct pp_pool *napi_pool,
			     struct pp_page **pages, unsigned int n);

/*
 * pp_net_buf_color - where a driver starts the buffer in an order-0 page:
 * one of 16 cache lines, chosen by the page's address. Every page's data
 * would otherwise start at the same offset 4 KiB apart, all in the same
 * few L1/L2 sets, and a burst of 64 frames would evict itself (DPDK pads
 * its mbufs to 2176 bytes for the same reason). Returns 0 when the frame
 * would not fit behind the colour.
 */
#define PP_NET_COLORS 16

static inline uint32_t pp_net_buf_color(const struct pp_page *page,
					uint32_t headroom, uint32_t len)
{
	uint32_t c = (uint32_t)(((uintptr_t)pp_page_address(page) >>
				 PP_PAGE_SHIFT) % PP_NET_COLORS) *
		     PP_CACHE_LINE;

	return c + headroom + len <= PP_PAGE_SIZE ? c : 0;
}

/* Statistics counters: written by one thread, read by any (relaxed). */
static inline void pp_net_stat_add(uint64_t *ctr, uint64_t v)
{
	__atomic_store_n(ctr, __atomic_load_n(ctr, __ATOMIC_RELAXED) + v,
			 __ATOMIC_RELAXED);
}

/*
 * pp_net_tx_drop - frames a TX burst takes but will not send (outside
 * their page, or pages the device cannot address): their pages go back to
 * their pools and they count in the TX queue's errors.
 */
static inline void pp_net_tx_drop(struct pp_txq *txq, struct pp_page **pages,
				  unsigned int n)
{
	pp_net_put_pages(txq->port->allocator, txq->napi_pool, pages, n);
	pp_net_stat_add(&txq->stats.errors, n);
}

/*
 * pp_net_tx_drop_pkt - a multi-buffer packet of @segs frames at @f that
 * a TX burst takes but will not send (a segment outside its page, more
 * segments than a packet may have): every segment's page goes home, and
 * the packet is one error.
 */
static inline void pp_net_tx_drop_pkt(struct pp_txq *txq,
				      const struct pp_frame *f,
				      unsigned int segs)
{
	struct pp_page *pages[PP_NET_BURST];
	unsigned int j, k = 0;

	for (j = 0; j < segs; j++) {
		pages[k++] = f[j].page;
		if (k == PP_NET_BURST || j + 1 == segs) {
			pp_net_put_pages(txq->port->allocator, txq->napi_pool,
					 pages, k);
			k = 0;
		}
	}
	pp_net_stat_add(&txq->stats.errors, 1);
}

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_NET_DRIVER_H */
