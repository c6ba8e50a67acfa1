/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd_keep.c - --keep N: an application that leaks RX buffers, on
 * purpose. Before the forwarding starts, fwd receives N packets from the
 * first port's RX queue 0 with the raw API (pp_port_rx_burst, no program)
 * and holds them until its ports are closed: their pages stay out of the
 * pool all run, held by "app_rx" of that port and queue (/pagepool/inflight,
 * pp-top), and the pool's destroy reports them. Only then does fwd put
 * them back (pp_frame_put_bulk), so that the allocator balances and the
 * arena can go.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd.h"

/* How long the port may stay quiet before --keep gives up: frames a
 * null port makes up come at once, a veth end's were sent before. */
#define KEEP_QUIET_S 1.0

static struct {
	struct pp_frame *frames;
	unsigned int nr, cap;    /* frames held, room */
	unsigned int packets;
} kept;

/* Room for @n more frames. */
static int keep_room(unsigned int n)
{
	struct pp_frame *f;
	unsigned int cap;

	if (kept.nr + n <= kept.cap)
		return 0;
	cap = kept.cap ? kept.cap * 2 : 256;
	while (cap < kept.nr + n)
		cap *= 2;
	f = realloc(kept.frames, cap * sizeof(*f));
	if (!f)
		return -1;
	kept.frames = f;
	kept.cap = cap;
	return 0;
}

unsigned int keep_take(struct pp_port *p, unsigned int nr)
{
	struct pp_allocator *alloc = pp_port_allocator(p);
	struct pp_frame f[PP_NET_BURST];
	double quiet = now_s();

	while (kept.packets < nr && now_s() - quiet < KEEP_QUIET_S) {
		unsigned int left = nr - kept.packets;
		/* A multi-buffer packet needs room for all its segments. */
		unsigned int ask = left < PP_FRAME_MAX_SEGS ? PP_FRAME_MAX_SEGS :
				   left < PP_NET_BURST ? left : PP_NET_BURST;
		unsigned int got = pp_port_rx_burst(p, 0, f, ask), i = 0;

		if (!got)
			continue;
		quiet = now_s();
		if (keep_room(got)) {
			pp_frame_put_bulk(alloc, f, got);
			fprintf(stderr, "fwd: --keep: no memory for the frames' list\n");
			break;
		}
		/* Whole packets, up to the count asked for; the rest back. */
		for (; i < got && kept.packets < nr; i++) {
			kept.frames[kept.nr++] = f[i];
			kept.packets += !f[i].more;
		}
		if (i < got)
			pp_frame_put_bulk(alloc, f + i, got - i);
	}
	return kept.packets;
}

unsigned int keep_frames(void)
{
	return kept.nr;
}

void keep_release(struct pp_allocator *alloc)
{
	if (kept.nr)
		pp_frame_put_bulk(alloc, kept.frames, kept.nr);
	free(kept.frames);
	kept.frames = NULL;
	kept.nr = kept.cap = kept.packets = 0;
}
