/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd_loop.c - the forwarder's wire loop (--tx-first, --verify): numbered
 * frames injected once, forwarded for ever between two ports, checked at
 * every hop, and accounted for one by one when the run ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fwd.h"

/*
 * Wire-loop frames (--tx-first): a broadcast Ethernet header with EtherType
 * 0x88b5 (IEEE local experimental, as the null driver's frames), a magic
 * word, the frame's number, then a pattern computed from the number up to
 * the last byte, so that any damaged, truncated or swapped byte shows.
 */
#define LOOP_ETHERTYPE 0x88b5
#define LOOP_MAGIC 0x77667070u   /* "ppfw" in memory order */
#define LOOP_MAGIC_OFF 14
#define LOOP_ID_OFF 18
#define LOOP_HDR_LEN 22
/* The drain ends when the books balance, or after this long without a
 * frame (a TCG guest delivers a queued frame within milliseconds), or
 * after the hard limit. */
#define LOOP_QUIET_S 0.5
#define LOOP_DRAIN_MAX_S 10.0
/* --tx-first over a growable arena: how long a dry pool waits for the
 * growth thread before the injection stops short. */
#define LOOP_GROW_WAIT_S 2.0

struct loop_books loop = { .len = LOOP_LEN_DEFAULT };
bool mac_swap;
bool loop_wait_growth;

void frames_mac_swap(struct pp_frame *frames, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *d = pp_frame_data(&frames[i]), t[6];

		/* The addresses are in a packet's first segment. */
		if (frames[i].len < 12 || (i && frames[i - 1].more))
			continue;
		memcpy(t, d, 6);
		memcpy(d, d + 6, 6);
		memcpy(d + 6, t, 6);
	}
}

/* Byte @i of loop frame @id (the header's bytes aside). */
static inline uint8_t loop_byte(uint32_t id, unsigned int i)
{
	return (uint8_t)(id * 131u + i);
}

static void loop_hdr_fill(uint8_t *d, uint32_t id)
{
	const uint32_t magic = LOOP_MAGIC;

	memset(d, 0xff, 6);
	memcpy(d + 6, "\x02\x00\x00\x00\x00\x01", 6);
	d[12] = LOOP_ETHERTYPE >> 8;
	d[13] = LOOP_ETHERTYPE & 0xff;
	memcpy(d + LOOP_MAGIC_OFF, &magic, sizeof(magic));
	memcpy(d + LOOP_ID_OFF, &id, sizeof(id));
}

/* Whether @d (@len bytes, the head of a frame) has an intact header; the
 * frame's number in *@id. */
static bool loop_hdr_ok(const uint8_t *d, unsigned int len, uint32_t *id)
{
	uint32_t magic, n;

	if (len < LOOP_HDR_LEN)
		return false;
	memcpy(&magic, d + LOOP_MAGIC_OFF, sizeof(magic));
	memcpy(&n, d + LOOP_ID_OFF, sizeof(n));
	if (magic != LOOP_MAGIC || n >= loop.injected ||
	    d[12] != (LOOP_ETHERTYPE >> 8) || d[13] != (LOOP_ETHERTYPE & 0xff))
		return false;
	*id = n;
	return true;
}

/*
 * Whether the packet at @f (@segs segments) is an intact loop frame: its
 * length, its header in the first segment, and every later byte, counted
 * across segments; its number in *@id.
 */
static bool loop_pkt_ok(const struct pp_frame *f, unsigned int segs,
			uint32_t *id)
{
	unsigned int pos = 0;

	if (PP_LIKELY(segs == 1)) {
		const uint8_t *d = pp_frame_data(f);

		if (f->len != loop.len || !loop_hdr_ok(d, f->len, id))
			return false;
		for (unsigned int i = LOOP_HDR_LEN; i < f->len; i++)
			if (d[i] != loop_byte(*id, i))
				return false;
		return true;
	}
	if (pp_pkt_len(f, segs) != loop.len ||
	    !loop_hdr_ok(pp_frame_data(f), f->len, id))
		return false;
	for (unsigned int s = 0; s < segs; s++) {
		const uint8_t *d = pp_frame_data(&f[s]);

		for (unsigned int i = 0; i < f[s].len; i++, pos++)
			if (pos >= LOOP_HDR_LEN && d[i] != loop_byte(*id, pos))
				return false;
	}
	return true;
}

/* The pages a loop frame takes: the head's behind the headroom, then
 * whole ones. */
static unsigned int loop_segs(void)
{
	unsigned int head = (unsigned int)PP_PAGE_SIZE - PP_FRAME_HEADROOM;

	if (loop.len <= head)
		return 1;
	return 1 + (loop.len - head + (unsigned int)PP_PAGE_SIZE - 1) /
			   (unsigned int)PP_PAGE_SIZE;
}

/*
 * A page of @pool for the first bursts. Over a growable arena a dry pool
 * is the growth thread's cue, not the end of the injection: it waits (a
 * millisecond at a time, the thread's poll) until a step is committed.
 */
static struct pp_page *loop_page(struct pp_pool *pool)
{
	struct pp_page *page = pp_pool_alloc_pages(pool);
	double end;

	if (page || !loop_wait_growth)
		return page;
	end = now_s() + LOOP_GROW_WAIT_S;
	while (!page && now_s() < end) {
		struct timespec ts = { 0, 1000 * 1000 };

		nanosleep(&ts, NULL);
		page = pp_pool_alloc_pages(pool);
	}
	return page;
}

/*
 * Build loop frame @id in @f from @pool's pages: one page, or as many
 * segments as loop.len takes (the head behind PP_FRAME_HEADROOM, each
 * further page whole). Returns the segments, 0 when the pool ran dry
 * (then it gave back what it took).
 */
static unsigned int loop_pkt_build(struct pp_pool *pool, struct pp_frame *f,
				   uint32_t id)
{
	unsigned int left = loop.len, pos = 0, s;

	for (s = 0; left; s++) {
		unsigned int hr = s ? 0 : PP_FRAME_HEADROOM;
		unsigned int room = (unsigned int)PP_PAGE_SIZE - hr;
		unsigned int len = left < room ? left : room;
		struct pp_page *page = loop_page(pool);
		uint8_t *d;

		if (!page) {
			while (s--)
				pp_pool_recycle_direct(pool, f[s].page);
			return 0;
		}
		f[s] = (struct pp_frame){
			.page = page, .offset = 0, .headroom = (uint16_t)hr,
			.len = (uint16_t)len, .more = left > len,
		};
		d = pp_frame_data(&f[s]);
		for (unsigned int i = 0; i < len; i++, pos++)
			d[i] = loop_byte(id, pos);
		if (!s)
			loop_hdr_fill(d, id);
		left -= len;
	}
	return s;
}

/*
 * testpmd's tx_first: @nr numbered frames on each TX queue of @p, pages
 * from the RX pool of the same index (this thread owns the pools until the
 * workers poll). Returns how many the port took.
 */
unsigned int loop_inject(struct pp_port *p, unsigned int nr)
{
	struct pp_frame f[PP_NET_BURST];
	unsigned int q, total = 0;

	for (q = 0; q < pp_port_nr_txq(p); q++) {
		struct pp_pool *pool = pp_port_rxq_pool(p, q % pp_port_nr_rxq(p));
		unsigned int left = nr, n, pkts, i, sent;

		while (left) {
			/* Whole packets: as many as the burst holds. */
			for (n = 0, pkts = 0; pkts < left; pkts++) {
				unsigned int segs;

				if (n + loop_segs() > PP_NET_BURST)
					break;
				segs = loop_pkt_build(pool, &f[n],
						      loop.injected + pkts);
				if (!segs)
					break;
				n += segs;
			}
			sent = n ? pp_port_tx_burst(p, q, f, n) : 0;
			for (i = sent; i < n; i++)
				pp_pool_recycle_direct(pool, f[i].page);
			/* TX takes whole packets: count the ones it took. */
			for (i = 0, pkts = 0; i < sent; i++)
				pkts += !f[i].more;
			loop.injected += pkts;
			total += pkts;
			left -= pkts;
			if (!sent || sent < n)
				break;
		}
	}
	return total;
}

/* --verify: forward intact frames, drop (and so count) damaged ones. */
void prog_verify_redirect(const struct pp_prog_ctx *ctx,
			  struct pp_frame *frames, uint16_t *verdicts,
			  unsigned int n)
{
	unsigned int i, segs;
	uint32_t id;

	(void)ctx;
	/* One verdict per packet, at its first segment. */
	for (i = 0; i < n; i += segs) {
		segs = pp_pkt_segs(&frames[i], n - i);
		verdicts[i] = loop_pkt_ok(&frames[i], segs, &id) ?
				      PP_XDP_REDIRECT_TO(0) : PP_XDP_DROP;
	}
	if (mac_swap)
		frames_mac_swap(frames, n);
}

/* The drain (main thread only): tick off each number, drop every frame. */
static void prog_drain(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		       uint16_t *verdicts, unsigned int n)
{
	unsigned int i, segs;
	uint32_t id;

	(void)ctx;
	for (i = 0; i < n; i += segs) {
		segs = pp_pkt_segs(&frames[i], n - i);
		verdicts[i] = PP_XDP_DROP;
		if (!loop_pkt_ok(&frames[i], segs, &id)) {
			loop.damaged++;
		} else if (loop.seen[id / 8] & (1u << (id % 8))) {
			loop.dups++;
		} else {
			loop.seen[id / 8] |= (uint8_t)(1u << (id % 8));
			loop.drained++;
		}
	}
}

/*
 * After the workers stopped: receive on every queue of both ports until
 * each injected frame is back or counted (the books balance), or the wire
 * stays quiet. Every frame ends in one of: drained (intact, its number
 * seen once), damaged (in flight: a forwarder's DROP; or in the drain),
 * dropped (a port counter: a full queue, a bad descriptor), or nowhere.
 */
void loop_drain(struct pp_port *a, struct pp_port *b)
{
	struct pp_prog drain = { .sz = sizeof(drain), .fn = prog_drain };
	struct pp_port *p[2] = { a, b };
	unsigned int nr_p = b ? 2 : 1;
	double quiet = now_s(), end = quiet + LOOP_DRAIN_MAX_S;

	loop.bad_fwd = RX(a, xdp_drop) + RX(b, xdp_drop);
	loop.seen = calloc(loop.injected / 8 + 1, 1);
	if (!loop.seen) {
		fprintf(stderr, "fwd: no memory for the drain's bitmap\n");
		exit(1);
	}
	pp_port_set_prog(a, &drain);
	if (b)
		pp_port_set_prog(b, &drain);
	for (;;) {
		unsigned int got = 0;

		for (unsigned int i = 0; i < nr_p; i++)
			for (unsigned int q = 0; q < pp_port_nr_rxq(p[i]); q++)
				got += pp_port_poll(p[i], q, PP_NET_BURST);
		loop.dropped = drops(a) + drops(b);
		if (loop.drained + loop.damaged + loop.bad_fwd + loop.dropped >=
		    loop.injected)
			break;
		double t = now_s();
		if (got)
			quiet = t;
		else if (t - quiet > LOOP_QUIET_S || t > end)
			break;
	}
	free(loop.seen);
	loop.seen = NULL;
}

bool loop_report(char *json, size_t len)
{
	uint64_t damaged = loop.bad_fwd + loop.damaged;
	int64_t missing = (int64_t)loop.injected -
			  (int64_t)(loop.drained + damaged + loop.dropped);
	bool ok = !damaged && !loop.dups && !missing;

	fprintf(fwd_out, "verify: injected %u, back intact %llu, damaged %llu, duplicated %llu, dropped %llu (counted by the ports), missing %lld: %s\n",
	       loop.injected, (unsigned long long)loop.drained,
	       (unsigned long long)damaged, (unsigned long long)loop.dups,
	       (unsigned long long)loop.dropped, (long long)missing,
	       ok ? "OK" : "FAILED");
	snprintf(json, len,
		 "{\"injected\":%u,\"intact\":%llu,\"damaged\":%llu,"
		 "\"duplicated\":%llu,\"dropped\":%llu,\"missing\":%lld,"
		 "\"ok\":%s}",
		 loop.injected, (unsigned long long)loop.drained,
		 (unsigned long long)damaged, (unsigned long long)loop.dups,
		 (unsigned long long)loop.dropped, (long long)missing,
		 ok ? "true" : "false");
	return ok;
}
