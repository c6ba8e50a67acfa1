/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd_pcap.c - --pcap FILE: write the frames fwd forwards to a pcap file
 * (libpcap's format, link type EN10MB), for tcpdump -r or Wireshark.
 *
 * What is captured: every packet a forwarding program gives the verdict
 * REDIRECT, as it leaves the program (after --mac-swap), so what the
 * output port is handed to send: with two ports what goes out of the
 * second, with --bidir what goes out of either, in the loop topology what
 * goes back out of the one port. A packet the TX queue then refuses is in
 * the file and in the drops. --tx-first's frames are not forwarded ones
 * (as in the "delivered" count), nor what the wire-loop drain takes at
 * the end, nor what a veth peer receives. A multi-buffer packet is one
 * record, its segments joined.
 *
 * Off the normal path: fwd installs the capturing program only with
 * --pcap; it runs the forwarding program, then writes the burst's
 * redirected packets under a lock (the queues' threads share the file).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "fwd.h"

#ifdef FWD_HAVE_PCAP
#include <pcap/pcap.h>

#define FWD_PCAP_STDIO_BUF (1u << 20)

static struct {
	const char *path;
	pcap_t *pcap;            /* a dead handle: the file's link type */
	pcap_dumper_t *dumper;
	pp_prog_fn inner;        /* the forwarding program */
	unsigned int snaplen;
	pthread_mutex_t lock;
	uint64_t packets, bytes; /* under the lock */
	uint8_t join[PP_FRAME_MAX_PKT]; /* a multi-buffer packet, joined */
} cap = { .lock = PTHREAD_MUTEX_INITIALIZER };

int pcap_open_file(const char *path, unsigned int snaplen)
{
	FILE *f;
	int fd;

	/*
	 * O_EXCL: fwd writes only a file it created, never over one that
	 * is there (a symbolic link included, dangling or not), so a
	 * capture cannot clobber another file by a typo or a race.
	 */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		struct stat st;

		if (errno == EEXIST)
			fprintf(stderr, "fwd: --pcap %s: %s, and fwd does not write over one: remove it or give another name\n",
				path, !lstat(path, &st) && S_ISLNK(st.st_mode) ?
				"a symbolic link is there" : "the file exists");
		else
			fprintf(stderr, "fwd: --pcap %s: cannot create it: %s (give a path in a directory that exists and that fwd may write)\n",
				path, strerror(errno));
		return -1;
	}
	f = fdopen(fd, "wb");
	/* A megabyte between writes, not stdio's block: a write(2) every
	 * few thousand small packets instead of every fifty. */
	if (f)
		setvbuf(f, NULL, _IOFBF, FWD_PCAP_STDIO_BUF);
	cap.pcap = f ? pcap_open_dead(DLT_EN10MB, (int)snaplen) : NULL;
	cap.dumper = cap.pcap ? pcap_dump_fopen(cap.pcap, f) : NULL;
	if (!cap.dumper) {
		fprintf(stderr, "fwd: --pcap %s: cannot start the file: %s\n",
			path, cap.pcap ? pcap_geterr(cap.pcap) : strerror(errno));
		if (f)
			fclose(f);
		else
			close(fd);
		if (cap.pcap)
			pcap_close(cap.pcap);
		cap.pcap = NULL;
		unlink(path);
		return -1;
	}
	cap.path = path;
	cap.snaplen = snaplen;
	return 0;
}

/* One packet of @segs frames: a record of its whole length, at most
 * the snap length of it (the MTU's frame: all of it). */
static void capture_pkt(const struct pp_frame *f, unsigned int segs,
			const struct timeval *ts)
{
	struct pcap_pkthdr h = { .ts = *ts };
	const uint8_t *data = pp_frame_data(f);
	unsigned int len = f->len;

	if (segs > 1) {
		len = 0;
		for (unsigned int s = 0; s < segs; s++) {
			unsigned int l = f[s].len;

			if (len + l > sizeof(cap.join))
				l = (unsigned int)sizeof(cap.join) - len;
			memcpy(cap.join + len, pp_frame_data(&f[s]), l);
			len += l;
		}
		data = cap.join;
	}
	h.len = len;
	h.caplen = len < cap.snaplen ? len : cap.snaplen;
	pcap_dump((u_char *)cap.dumper, &h, data);
	cap.packets++;
	cap.bytes += len;
}

/* The capturing program: the forwarding one, then its redirected
 * packets to the file. One clock read per burst. */
static void prog_capture(const struct pp_prog_ctx *ctx,
			 struct pp_frame *frames, uint16_t *verdicts,
			 unsigned int n)
{
	struct timeval ts;
	unsigned int i, segs;

	cap.inner(ctx, frames, verdicts, n);
	gettimeofday(&ts, NULL);
	pthread_mutex_lock(&cap.lock);
	for (i = 0; i < n; i += segs) {
		segs = pp_pkt_segs(&frames[i], n - i);
		if ((verdicts[i] & 0xff) == PP_XDP_REDIRECT)
			capture_pkt(&frames[i], segs, &ts);
	}
	pthread_mutex_unlock(&cap.lock);
}

void pcap_capture(struct pp_prog *prog)
{
	cap.inner = prog->fn;
	prog->fn = prog_capture;
}

int pcap_close_file(void)
{
	int err;

	if (!cap.dumper)
		return 0;
	/* The workers have joined: nothing writes any more. */
	err = pcap_dump_flush(cap.dumper) || ferror(pcap_dump_file(cap.dumper));
	pcap_dump_close(cap.dumper);
	pcap_close(cap.pcap);
	cap.dumper = NULL;
	cap.pcap = NULL;
	if (err) {
		fprintf(stderr, "fwd: --pcap %s: writing it failed (a full file system?): the file is incomplete\n",
			cap.path);
		return -1;
	}
	fprintf(fwd_out, "pcap: %llu packets, %llu bytes written to %s\n",
		(unsigned long long)cap.packets,
		(unsigned long long)cap.bytes, cap.path);
	return 0;
}

void pcap_abandon(void)
{
	if (!cap.dumper)
		return;
	pcap_dump_close(cap.dumper);
	pcap_close(cap.pcap);
	cap.dumper = NULL;
	cap.pcap = NULL;
	/* Ours: created by pcap_open_file(), nothing in it yet. */
	unlink(cap.path);
}

#else /* !FWD_HAVE_PCAP */

int pcap_open_file(const char *path, unsigned int snaplen)
{
	(void)snaplen;
	fprintf(stderr, "fwd: --pcap %s: this fwd was built without libpcap: install libpcap-dev (apt-get install libpcap-dev) and rebuild (meson setup --reconfigure BUILD_DIR; ninja -C BUILD_DIR)\n",
		path);
	return -1;
}

void pcap_capture(struct pp_prog *prog)
{
	(void)prog;
}

int pcap_close_file(void)
{
	return 0;
}

void pcap_abandon(void)
{
}

#endif /* FWD_HAVE_PCAP */
