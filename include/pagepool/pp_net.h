/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_net.h - ports, queues, frames and XDP-like programs.
 *
 * A port is opened from a device string in the style of DPDK's vdev
 * arguments ("null0,size=64", "veth0,peer=veth1"). It has RX and TX queues.
 * Each RX queue owns one page_pool: every received frame sits in a page of
 * that pool. A frame is the kernel's xdp_buff/xdp_frame reduced to what a
 * userspace path needs: a page, where the buffer starts in it, the headroom
 * in front of the data and the data length. Frames are passed by value in
 * arrays, so frame metadata never lands on a DMA-mapped data page.
 *
 * Two ways to move frames:
 *   - pp_port_rx_burst()/pp_port_tx_burst(): raw bursts, DPDK style; the
 *     caller owns what it received and what a TX burst did not take.
 *   - pp_port_poll(): the NAPI-style loop: receive a burst, run the port's
 *     program over it (one call per burst, like an XDP program run over a
 *     batch), then act on each verdict: DROP recycles the page straight into
 *     the RX queue's pool, TX bounces it out of the same port, REDIRECT
 *     queues it for another port's TX queue (flushed in bulk at the end of
 *     the poll, like the kernel's xdp_do_flush), PASS releases the page
 *     from its pool and hands it to the port's stack consumer, which frees
 *     it through the allocator.
 *
 * Threading: one thread at a time per RX queue, and per TX queue. A thread
 * that polls an RX queue becomes the owner of the queue's pool (the NAPI
 * context); handing a queue to another thread is allowed between polls.
 * Control calls (open, close, set_prog, set_stack) run while no thread
 * polls the port. Statistics can be read from any thread at any time.
 */
#ifndef PAGEPOOL_PP_NET_H
#define PAGEPOOL_PP_NET_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_common.h>
#include <pagepool/pp_dma.h>
#include <pagepool/pp_page.h>
#include <pagepool/pp_page_pool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pp_port;

/*
 * Room in front of the data, as the kernel's XDP_PACKET_HEADROOM: enough
 * for a program to push encapsulation headers without copying.
 */
#define PP_FRAME_HEADROOM 256

/* The largest burst one poll handles at once (the NAPI budget). */
#define PP_NET_BURST 64

/* Redirect targets a program can name (the size of its "devmap"). */
#define PP_PROG_MAX_TARGETS 8

/*
 * struct pp_frame - one packet buffer, 16 bytes, four to a cache line.
 * The data is at page address + offset + headroom and is len bytes long.
 * The buffer ends at the end of the page block (PP_PAGE_SIZE << order),
 * unless the page is split into fragments (pp_page_is_frag()): then the
 * block holds other frames' buffers too, and the frame, which has no room
 * left for its fragment's size, owns only up to the end of the cache line
 * its data ends in (pp_frame_buf_end()). A frame is valid when all of it
 * lies in the block (pp_frame_valid()): drivers hand out only valid
 * frames, drop and count invalid ones on TX, and the pp_frame_* helpers
 * refuse edits that would leave the buffer. A received frame's page
 * belongs to the RX queue's pool (page->pp) until the frame is recycled,
 * sent or passed.
 */
struct pp_frame {
	struct pp_page *page;
	union {
		struct {
			/* buffer start in the block (data_hard_start) */
			uint32_t offset : 31;
			/* the packet goes on in the next frame */
			uint32_t more : 1;
		};
		/*
		 * Both as one word, for drivers' single-buffer loops: RX
		 * builds a frame with a plain store (the bit field's
		 * costs a mask), an offset below 2^31 and .more clear;
		 * TX checks a frame's bounds with it in place of the
		 * offset, which a segment with .more fails as a frame
		 * outside its page does (a block ends below 2^31), and
		 * tells the two apart off the common path. Elsewhere,
		 * use the fields.
		 */
		uint32_t offset_word_;
	};
	uint16_t headroom;    /* bytes between buffer start and data */
	uint16_t len;         /* data length */
};
static_assert(sizeof(struct pp_frame) == 16, "four frames per cache line");

/*
 * Multi-buffer packets. A packet larger than one buffer (a 9000-byte
 * frame in 4 KiB pages) is a run of consecutive frames in a burst, its
 * segments: every one but the last has .more set, as AF_XDP chains
 * descriptors with XDP_PKT_CONTD. The first segment is the packet's
 * head: its headroom is the packet's, and a program edits headers there.
 * A single-buffer packet is one frame with .more clear, so code that
 * never meets a large packet reads frames as before. Build frames with
 * a designated initializer, (struct pp_frame){ .page = ..., ... }, so
 * .more starts clear.
 *
 * The rules every burst follows (pp_port_rx_burst, pp_port_tx_burst, a
 * program's frames, a stack consumer's):
 *   - a burst never ends inside a packet: RX returns whole packets only,
 *     and keeps a packet that does not fit in what is left of @n for the
 *     next call (so ask for PP_FRAME_MAX_SEGS frames at least);
 *   - TX takes a packet whole or not at all: its count never ends inside
 *     a packet, a packet with a segment outside its buffer is taken and
 *     dropped whole (one error), and an unfinished packet at the end of
 *     the burst (its last frame has .more set) is not taken;
 *   - a packet has at most PP_FRAME_MAX_SEGS segments;
 *   - packet counters count packets, byte counters every segment's bytes.
 */
/* The largest offset a frame holds (31 bits; a block is at most 1 GiB).
 * A driver checks a raw offset (pp_frame_bounds_ok()) before storing it. */
#define PP_FRAME_OFFSET_MAX 0x7fffffffu

#define PP_FRAME_MAX_SEGS 18 /* the kernel's MAX_SKB_FRAGS + 1 (xdp_frame) */

/* The largest packet a port carries: a 9000-byte MTU's Ethernet frame
 * with a VLAN tag (9018 bytes) rounded up to a kilobyte. */
#define PP_FRAME_MAX_PKT 9216

/*
 * pp_pkt_segs - the number of frames of the packet that starts at
 * @frames[0], among the @n frames there: up to and including the first
 * with .more clear, or @n when all have it (an unfinished packet: the
 * caller checks frames[ret - 1].more).
 */
static inline unsigned int pp_pkt_segs(const struct pp_frame *frames,
				       unsigned int n)
{
	unsigned int i = 0;

	while (i < n && frames[i].more)
		i++;
	return i < n ? i + 1 : n;
}

/*
 * pp_pkt_len - the bytes of the packet that starts at @frames[0] (the
 * sum of pp_pkt_segs() segments' lengths).
 */
static inline uint32_t pp_pkt_len(const struct pp_frame *frames,
				  unsigned int n)
{
	unsigned int i, segs = pp_pkt_segs(frames, n);
	uint32_t len = 0;

	for (i = 0; i < segs; i++)
		len += frames[i].len;
	return len;
}

/*
 * pp_burst_whole - the frames of @frames[0..@n) that make whole packets:
 * @n, or fewer when the last packet is unfinished (the last frame has
 * .more set). What a TX burst may take.
 */
static inline unsigned int pp_burst_whole(const struct pp_frame *frames,
					  unsigned int n)
{
	/* Back over the unfinished packet's segments, if there is one. */
	while (n && frames[n - 1].more)
		n--;
	return n;
}

/* The end of @page's block: PP_PAGE_SIZE << order, at most 1 GiB. */
static inline uint64_t pp_frame_block_end_(const struct pp_page *page)
{
	return (uint64_t)PP_PAGE_SIZE << page->order;
}

/*
 * pp_range_ok - true when [@off, @off + @len) lies within [0, @size): the
 * check for an index or a span a peer wrote (a ring slot, a descriptor id,
 * a byte count against a buffer). Written so that nothing wraps even for
 * 64-bit values: off + len is never formed (off 2^64 - 1 plus len 2 would
 * pass a summed check as 1). An index is a span of 1: pp_range_ok(id, 1, n).
 */
static inline bool pp_range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/*
 * pp_frame_bounds_ok - true when a buffer at @offset in @page's block,
 * with @headroom bytes in front of @len bytes of data, ends within the
 * block: offset + headroom + len <= PP_PAGE_SIZE << page->order. Data that
 * ends on the block's last byte is inside. In 64 bits
 * (pp_range_ok()), so a driver may check raw descriptor fields before
 * narrowing them into a frame. lib/net, its drivers and the pp_frame_*
 * helpers use this check, or pp_frame_fits() for an edit.
 */
static inline bool pp_frame_bounds_ok(const struct pp_page *page,
				      uint32_t offset, uint32_t headroom,
				      uint32_t len)
{
	return pp_range_ok((uint64_t)offset + headroom, len,
			   pp_frame_block_end_(page));
}

/*
 * pp_frame_bounds_end_ok - pp_frame_bounds_ok() for a buffer that ends at
 * @end (an offset in its block) before the block does: a fragment whose
 * end the driver remembers from when it handed the buffer out (a frame
 * cannot say where its fragment ends, pp_frame_buf_end()). @end is the
 * driver's own, at most the block's end; @len is what a peer wrote, so
 * the data may not run into the next fragment, though it would still
 * fit the page.
 */
static inline bool pp_frame_bounds_end_ok(uint32_t offset, uint32_t headroom,
					  uint32_t len, uint64_t end)
{
	return pp_range_ok((uint64_t)offset + headroom, len, end);
}

/*
 * pp_page_is_frag - @page is split into fragments (pp_page_pool.h
 * "Fragments") that other frames may hold: it is in a pool and its
 * fragment count is not 1. A count of 1 is a whole page, or the last
 * fragment of one whose owner has moved on: its holder is then the only
 * user of the whole block. Only the owner raises the count (when it
 * starts a block, which no fragment holds yet), so a holder that reads 1
 * keeps reading 1, and one that reads more is at worst too careful.
 * (pp_ref_count means nothing outside a pool, hence the pp check.)
 */
static inline bool pp_page_is_frag(const struct pp_page *page)
{
	/* The count first: 1 for most pages, which settles it. */
	return __atomic_load_n(&page->pp_ref_count, __ATOMIC_RELAXED) != 1 &&
	       page->pp;
}

/*
 * pp_frame_buf_end - where @f's buffer ends, as an offset in its block:
 * the block's end for a whole page. For a fragment, the end of the cache
 * line that holds the data's last byte (or, for empty data, its start),
 * and never past the block: fragments are whole cache lines carved from
 * the block's start, so that line is the frame's own, while the frame
 * does not say how far its fragment goes beyond it.
 */
static inline uint64_t pp_frame_buf_end(const struct pp_frame *f)
{
	uint64_t block = pp_frame_block_end_(f->page);
	uint64_t end;

	if (PP_LIKELY(!pp_page_is_frag(f->page)))
		return block;
	end = ((uint64_t)f->offset + f->headroom + f->len + PP_CACHE_LINE - 1) &
	      ~(uint64_t)(PP_CACHE_LINE - 1);
	return end < block ? end : block;
}

/*
 * pp_frame_fits - true when @f with @headroom and @len in place of its own
 * would still lie in its buffer (pp_frame_buf_end()): the check behind
 * every edit helper.
 */
static inline bool pp_frame_fits(const struct pp_frame *f, uint32_t headroom,
				 uint32_t len)
{
	return pp_range_ok((uint64_t)f->offset + headroom, len,
			   pp_frame_buf_end(f));
}

/* pp_frame_valid - @f lies wholly in its page block (pp_frame_bounds_ok). */
static inline bool pp_frame_valid(const struct pp_frame *f)
{
	return pp_frame_bounds_ok(f->page, f->offset, f->headroom, f->len);
}

/* The data's first byte. @f must be valid: this does not check. */
static inline void *pp_frame_data(const struct pp_frame *f)
{
	return (char *)pp_page_address(f->page) + f->offset + f->headroom;
}

/*
 * Bytes the data may grow to at its end: the buffer (pp_frame_buf_end())
 * minus what precedes the data; 0 when the data would start beyond it.
 * (Blocks are at most 1 GiB, order 18, so the room fits in 32 bits.)
 */
static inline uint32_t pp_frame_room(const struct pp_frame *f)
{
	uint64_t end = pp_frame_buf_end(f);

	if (!pp_range_ok((uint64_t)f->offset + f->headroom, 0, end))
		return 0;
	return (uint32_t)(end - f->offset - f->headroom);
}

/*
 * pp_frame_adjust_head - move the data start by @delta bytes (negative:
 * push a header, positive: pull one), as bpf_xdp_adjust_head(); the data
 * end stays. Returns 0, or -1 with the frame unchanged when the headroom
 * or length would go negative or past 65535, or the frame would not lie
 * in its buffer (also when it did not before).
 */
static inline int pp_frame_adjust_head(struct pp_frame *f, int delta)
{
	/* In 64 bits: len - INT_MIN overflows an int. */
	int64_t hr = (int64_t)f->headroom + delta;
	int64_t len = (int64_t)f->len - delta;

	if (hr < 0 || len < 0 || hr > UINT16_MAX || len > UINT16_MAX ||
	    !pp_frame_fits(f, (uint32_t)hr, (uint32_t)len))
		return -1;
	f->headroom = (uint16_t)hr;
	f->len = (uint16_t)len;
	return 0;
}

/*
 * pp_frame_adjust_tail - grow (positive @delta) or shrink the data at its
 * end, as bpf_xdp_adjust_tail(). Returns 0, or -1 with the frame unchanged
 * when the length would go negative or past 65535, or the frame would not
 * lie in its buffer: a whole page's block, or a fragment's cache line
 * (pp_frame_buf_end()), so that a frame never grows into the neighbouring
 * fragment. Grown bytes hold whatever the page held.
 */
static inline int pp_frame_adjust_tail(struct pp_frame *f, int delta)
{
	int64_t len = (int64_t)f->len + delta;

	if (len < 0 || len > UINT16_MAX ||
	    !pp_frame_fits(f, f->headroom, (uint32_t)len))
		return -1;
	f->len = (uint16_t)len;
	return 0;
}

/* Verdicts, numbered as the kernel's XDP actions. */
enum pp_xdp_action {
	PP_XDP_ABORTED = 0, /* program error: dropped and counted as error */
	PP_XDP_DROP = 1,
	PP_XDP_PASS = 2,
	PP_XDP_TX = 3,
	PP_XDP_REDIRECT = 4, /* to target 0; PP_XDP_REDIRECT_TO(i) for others */
};

/*
 * A redirect verdict carries its target's index in the program's table in
 * the high byte (bpf_redirect_map() with a devmap of PP_PROG_MAX_TARGETS).
 */
#define PP_XDP_REDIRECT_TO(idx) \
	((uint16_t)(PP_XDP_REDIRECT | ((unsigned int)(idx) << 8)))

/* What a program learns about where its frames came from (xdp_rxq_info). */
struct pp_prog_ctx {
	struct pp_port *port;
	unsigned int queue;
	void *arg; /* pp_prog.arg */
};

/*
 * A program sets verdicts[i] for each of the @n frames; for a multi-buffer
 * packet, only its first frame's verdict counts, and lib/net applies it to
 * every segment (one verdict per packet, as an XDP program's on an
 * xdp_buff with fragments). It may change the
 * data, and move its head or end within the buffer (pp_frame_adjust_head,
 * pp_frame_adjust_tail), but must not keep, free or recycle the frames:
 * the verdict says what becomes of them. A frame it leaves outside its
 * page block never reaches the stack (PASS: recycled, an RX error) or a
 * wire (TX, REDIRECT: the target's driver drops it, a TX error).
 * It runs on the thread that polls the queue.
 */
typedef void (*pp_prog_fn)(const struct pp_prog_ctx *ctx,
			   struct pp_frame *frames, uint16_t *verdicts,
			   unsigned int n);

struct pp_prog {
	size_t sz;        /* sizeof(struct pp_prog) */
	pp_prog_fn fn;
	void *arg;
	/* Redirect table; target i receives on TX queue (rx queue % its
	 * TX queues). A target may be the port itself. */
	struct pp_port *targets[PP_PROG_MAX_TARGETS];
	unsigned int nr_targets;
};

/*
 * The stack consumer receives PASSed frames. A whole page has left the
 * pool already (pp_pool_release_page): it is a plain allocator page with
 * refcount 1. A fragment (pp_page_is_frag()) cannot leave its pool, as
 * in the kernel, where an skb holding page_pool fragments returns them to
 * their pool when it is freed (skb_mark_for_recycle): its page stays in
 * the pool and the consumer returns it there. The consumer owns the
 * frames and puts them back with pp_frame_put_bulk(), which does the right
 * thing for each, now or later, from any thread. (A consumer that knows
 * its port makes no fragments may still free pages with
 * pp_free_pages_bulk().) It runs on the polling thread. Without a
 * consumer, pp_port_poll frees passed frames at once.
 */
typedef void (*pp_stack_fn)(void *arg, struct pp_port *port,
			    struct pp_frame *frames, unsigned int n);

/* Out of line: what pp_frame_put_bulk() does not do in place. */
PP_API void pp_frame_put_bulk_slow(struct pp_allocator *alloc,
				   const struct pp_frame *frames,
				   unsigned int n);

/*
 * pp_frame_put_bulk - give back @n frames the stack consumer got: pages of no
 * pool (released whole pages) go to @alloc, fragments back to their pool
 * (the last fragment's return recycles the page). Any thread; called from
 * the consumer during a poll, fragments of the polled queue's pool go
 * straight to its cache (the kernel's napi_pp_put_page()), others through
 * their pool's ring (pp_pool_put_pages_bulk()). Inline when no frame is
 * a fragment: one thread-cache operation, as pp_free_pages_bulk().
 */
static inline void pp_frame_put_bulk(struct pp_allocator *alloc,
				     const struct pp_frame *frames,
				     unsigned int n)
{
	struct pp_page *pages[PP_NET_BURST];
	bool pooled = false;
	unsigned int i;

	if (PP_UNLIKELY(n > PP_NET_BURST)) {
		pp_frame_put_bulk_slow(alloc, frames, n);
		return;
	}
	for (i = 0; i < n; i++) {
		pages[i] = frames[i].page;
		pooled |= pp_page_pool(pages[i]) != NULL;
	}
	if (PP_LIKELY(!pooled)) {
		pp_free_pages_bulk(alloc, pages, n);
		return;
	}
	pp_frame_put_bulk_slow(alloc, frames, n);
}

struct pp_port_conf {
	size_t sz;                      /* sizeof(struct pp_port_conf) */
	struct pp_allocator *allocator; /* required */
	struct pp_dma *dma;             /* NULL: pools do not map pages */
	unsigned int nr_rxq;            /* 0: 1 */
	unsigned int nr_txq;            /* 0: as many as RX queues */
	unsigned int ring_size;         /* per-queue ring; 0: 1024 (veth:
					 * 64..65536, a power of two) */
	unsigned int pool_size;         /* each pool's recycle ring; 0: 1024 */
	unsigned int headroom;          /* 0: PP_FRAME_HEADROOM */
	enum pp_pool_refill refill;     /* how RX pools refill */
	int nid;                        /* PP_NUMA_NODE_ANY or a node */
	/* Added in 0.2 (pp_opts: older callers' sz leaves it 0). */
	unsigned int mtu;               /* 0: 1500; at most PP_PORT_MTU_MAX */
};

/*
 * The MTU counts the L3 payload, as the kernel's and DPDK's do: a port
 * carries Ethernet frames of up to mtu + PP_ETH_OVERHEAD bytes (header
 * and one VLAN tag, no FCS). Above what one RX buffer holds, frames come
 * in segments (multi-buffer packets); each driver says in doc/net.md how
 * it gets there, or refuses the MTU at open with what to do.
 */
#define PP_ETH_OVERHEAD 18
#define PP_PORT_MTU_DEFAULT 1500
#define PP_PORT_MTU_MIN 68
#define PP_PORT_MTU_MAX (PP_FRAME_MAX_PKT - PP_ETH_OVERHEAD)

/* The port's MTU (pp_port_conf.mtu, 1500 when not given). */
PP_API unsigned int pp_port_mtu(const struct pp_port *port);

/*
 * pp_port_close - stop and free a port (and a veth port's peer: closing
 * one end deletes the pair). Frames in the port's rings go back to their
 * pools; then each RX pool is destroyed. Returns 0, or -EBUSY when some
 * pool still has pages in flight elsewhere (another port's ring, a stack
 * consumer): the port is gone all the same, and those pools are freed
 * when their last page returns (the pool logs how many were out). The
 * port, its peer and its pools are unregistered from telemetry first
 * (pp_telemetry.h).
 * Context: no thread may poll or send on the port (or its peer).
 */
PP_API int pp_port_close(struct pp_port *port);

PP_API const char *pp_port_name(const struct pp_port *port);

/*
 * pp_port_id - the port's number, DPDK's port_id: the lowest one free
 * when it was opened (a veth peer takes the next), below PP_PORT_ID_MAX,
 * given back at close. Telemetry's /ethdev commands name ports by it.
 */
#define PP_PORT_ID_MAX 1024
PP_API unsigned int pp_port_id(const struct pp_port *port);
PP_API const char *pp_port_driver(const struct pp_port *port);
PP_API unsigned int pp_port_nr_rxq(const struct pp_port *port);
PP_API unsigned int pp_port_nr_txq(const struct pp_port *port);
/* The other end of a veth pair, or NULL. */
PP_API struct pp_port *pp_port_peer(const struct pp_port *port);
PP_API struct pp_allocator *pp_port_allocator(const struct pp_port *port);
/* The pool of RX queue @q, or NULL for a bad index. */
PP_API struct pp_pool *pp_port_rxq_pool(const struct pp_port *port,
					unsigned int q);

/*
 * Data-path calls do not check @q: it must be below the queue count.
 *
 * pp_port_rx_burst - receive up to @n frames from RX queue @q into
 * @frames; returns how many. The caller owns them: it sends, recycles
 * (pp_pool_recycle_direct on this thread) or releases each one. Every
 * frame returned is valid (pp_frame_valid()); one that the device, kernel
 * or peer describes outside its buffer is dropped, its page returned, and
 * counted in the queue's errors. Only whole packets come back: a
 * multi-buffer packet that does not fit in @n waits for the next call.
 * Context: the queue's thread (it becomes the owner of the queue's pool).
 */
PP_API unsigned int pp_port_rx_burst(struct pp_port *port, unsigned int q,
				     struct pp_frame *frames, unsigned int n);

/*
 * pp_port_tx_burst - send up to @n frames on TX queue @q; returns how many
 * the port took (from the front of @frames). The rest stay the caller's.
 * A frame outside its page block (pp_frame_valid() false) is taken but
 * never sent: its page goes back to its pool and it counts in the queue's
 * errors (and packets: it was taken). Whole packets only: a multi-buffer
 * packet is taken with all its segments or not at all, and one with a
 * segment outside its block is taken and dropped whole.
 * Context: one thread at a time per TX queue.
 */
PP_API unsigned int pp_port_tx_burst(struct pp_port *port, unsigned int q,
				     struct pp_frame *frames, unsigned int n);

/*
 * pp_port_poll - one NAPI poll of RX queue @q: receive up to @budget frames
 * (in bursts of PP_NET_BURST), run the program and act on the verdicts,
 * then flush redirected and bounced frames in bulk. Without a program
 * every frame is dropped (recycled). Frames a full TX queue refuses are
 * recycled and counted as that TX queue's drops. @budget counts frames;
 * the first receive asks for PP_FRAME_MAX_SEGS at least, so that a
 * smaller budget still moves a multi-buffer packet (and passes it).
 * Returns the number of frames received.
 * Context: the queue's thread; it also sends on the targets' TX queues
 * with the same index (modulo their count), so give each such TX queue to
 * one polling thread only.
 */
PP_API unsigned int pp_port_poll(struct pp_port *port, unsigned int q,
				 unsigned int budget);

/*
 * pp_port_set_prog - install @prog (copied), or remove it with NULL.
 * Returns 0, or -EINVAL (no fn, too many or NULL targets, bad sz).
 */
PP_API int pp_port_set_prog(struct pp_port *port, const struct pp_prog *prog);

/* pp_port_set_stack - set the PASS consumer (NULL: free at once). */
PP_API void pp_port_set_stack(struct pp_port *port, pp_stack_fn fn, void *arg);

struct pp_rxq_stats {
	uint64_t packets;   /* packets received (a multi-buffer one once) */
	uint64_t bytes;
	uint64_t drops;     /* frames lost before the program: no buffer */
	uint64_t errors;    /* ABORTED or unknown verdicts, frames outside
			     * their page (from the device or the program) */
	uint64_t xdp_drop;  /* verdict counts */
	uint64_t xdp_pass;
	uint64_t xdp_tx;
	uint64_t xdp_redirect;
};

struct pp_txq_stats {
	uint64_t packets;   /* packets the port took */
	uint64_t bytes;
	uint64_t drops;     /* frames refused (queue full) and recycled */
	uint64_t errors;    /* frames not sent: outside their page (taken,
			     * dropped), or not sendable by the driver */
};

/* Returns 0, or -EINVAL for a bad queue index. Any thread. */
PP_API int pp_port_rxq_stats(const struct pp_port *port, unsigned int q,
			     struct pp_rxq_stats *out);
PP_API int pp_port_txq_stats(const struct pp_port *port, unsigned int q,
			     struct pp_txq_stats *out);

/*
 * pp_port_stats_json - the port's per-queue statistics, with each RX
 * pool's statistics, as one JSON object. Returns snprintf's length.
 */
PP_API int pp_port_stats_json(const struct pp_port *port, char *buf,
			      size_t len);

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_NET_H */
