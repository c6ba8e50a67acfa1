/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd.h - what the forwarder's files share: the clock, port
 * counters, the wire loop (fwd_loop.c) and ports behind VFIO (fwd_vfio.c).
 */
#ifndef FWD_H
#define FWD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pagepool.h>
#include <pagepool/pp_net.h>

double now_s(void);
/* Where the human-readable lines go: stdout, or stderr under --json -. */
extern FILE *fwd_out;

/* Sum of one counter over a port's RX or TX queues (0 for no port). */
uint64_t rx_sum(struct pp_port *p, size_t field);
uint64_t tx_sum(struct pp_port *p, size_t field);
#define RX(p, f) rx_sum(p, offsetof(struct pp_rxq_stats, f))
#define TX(p, f) tx_sum(p, offsetof(struct pp_txq_stats, f))
/* Every frame a port refused or lost, RX and TX. */
uint64_t drops(struct pp_port *p);

/* The wire loop: frame lengths --tx-len takes, frames per TX queue
 * --tx-first takes (more than any ring holds, so it fills one at most). */
#define LOOP_LEN_MIN 60          /* Ethernet's minimum without the FCS */
#define LOOP_LEN_MAX 9018        /* a 9000-byte MTU's, with a VLAN tag:
				  * over one page, in segments */
#define LOOP_LEN_DEFAULT 64      /* testpmd's tx_first frames */
#define LOOP_INJECT_MAX 4096

/*
 * The wire loop's books. Written by the main thread only: before the
 * workers start (len, injected: pthread_create orders those writes before
 * every worker's reads) and in the drain, which runs after they joined.
 */
struct loop_books {
	unsigned int len;    /* --tx-len: a packet's bytes, all segments */
	uint32_t injected;   /* frames the first bursts sent, numbered 0.. */
	uint8_t *seen;       /* drain: one bit per frame number */
	uint64_t drained;    /* drain: intact frames, each number once */
	uint64_t damaged;    /* drain: frames that failed the check */
	uint64_t dups;       /* drain: a number seen twice */
	uint64_t bad_fwd;    /* damaged in flight: the forwarders' DROPs */
	uint64_t dropped;    /* refused by a queue or driver (port counters) */
};
extern struct loop_books loop;

/* --mac-swap: the forwarding programs swap each frame's Ethernet
 * addresses (testpmd's macswap), the loop topology's usual companion. */
extern bool mac_swap;
void frames_mac_swap(struct pp_frame *frames, unsigned int n);

/* --arena-max: the first bursts wait for the growth thread when a pool
 * runs dry, instead of stopping there. */
extern bool loop_wait_growth;

/* testpmd's tx_first: @nr numbered frames on each TX queue of @p. */
unsigned int loop_inject(struct pp_port *p, unsigned int nr);
/* --verify's program: forward intact frames, drop damaged ones. */
void prog_verify_redirect(const struct pp_prog_ctx *ctx,
			  struct pp_frame *frames, uint16_t *verdicts,
			  unsigned int n);
/* After the workers stopped: take every frame off the wire of @a and @b
 * (@b NULL: the loop topology's one port). */
void loop_drain(struct pp_port *a, struct pp_port *b);
/* Print the verdict line and write it as JSON; whether every frame came
 * back intact exactly once or was counted as dropped. */
bool loop_report(char *json, size_t len);

/* --pcap FILE (fwd_pcap.c): create FILE (never over an existing one) for
 * packets of up to @snaplen bytes; 0, or -1 after saying why. */
int pcap_open_file(const char *path, unsigned int snaplen);
/* Make @prog (a forwarding program) also write what it redirects. */
void pcap_capture(struct pp_prog *prog);
/* After the workers joined: flush, close, print the count; -1 when the
 * file could not be written whole. */
int pcap_close_file(void);
/* An exit before the run: close and remove the (empty) file. */
void pcap_abandon(void);

/* --keep N (fwd_keep.c): at most this many. */
#define KEEP_MAX (1u << 20)
/* --keep N (fwd_keep.c): receive @nr packets from RX queue 0 of @p and
 * hold them; returns how many came (fewer when the port went quiet). */
unsigned int keep_take(struct pp_port *p, unsigned int nr);
/* The frames (buffers) they take. */
unsigned int keep_frames(void);
/* After the ports closed: give them back. */
void keep_release(struct pp_allocator *alloc);

/* --arena-max, --grow-step, --shrink-delay (fwd_growth.c). */
/* -1 after saying why when a port's driver needs a fixed arena. */
int growth_check_ports(const char *const *dev, unsigned int nr_dev);
/* Start watching @alloc's zone 0 (nothing to watch when it is fixed);
 * @wmark: the allocator's grow_wmark (pages; 0: its default). */
void growth_start(struct pp_allocator *alloc, unsigned long wmark);
/* After --tx-first: wait (a few seconds at most) until the growth thread
 * has restored the free margin the bursts took. */
void growth_settle(void);
/* Before the workers start: what --tx-first's bursts grew. */
void growth_workers_start(void);
/* The per-second line's tail: the committed size; @f NULL: only sample
 * it (the peak). */
void growth_line(FILE *f);
/* At the end of the run, before the ports close. */
void growth_end(void);
/* The summary's growth line, and its JSON ("null" for a fixed arena). */
void growth_report(char *json, size_t len);

/* One PP_IOVA_VFIO domain for every port of a VFIO driver among @dev
 * (uses[i] says which), with @arena mapped; NULL when there is none.
 * Exits with a message on failure. */
struct pp_dma *vfio_domain_create(const char *const *dev, unsigned int nr_dev,
				  struct pp_arena *arena, bool *uses);

#endif /* FWD_H */
