/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp_bench.c - the two ends of the AF_XDP benchmark (scripts/afxdp-bench.sh)
 * and of the forwarder benchmark's AF_XDP row.
 *
 *   xdp_bench send NETNS IFNAME SECONDS [SIZE]
 *       enter NETNS and send SIZE-byte frames (default 64) on IFNAME as
 *       fast as an AF_PACKET socket goes: sendmmsg() of 64 frames, qdisc
 *       bypassed. The same source for every receiver it is compared on.
 *   xdp_bench send-xdp NETNS IFNAME SECONDS [SIZE]
 *       the same frames, about ten times faster: a two-instruction XDP
 *       program that returns XDP_TX, run by the kernel over live frames
 *       (BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18), so
 *       that each frame leaves IFNAME through its ndo_xdp_xmit with no
 *       socket buffer. On a veth pair it lands in the peer's XDP ring
 *       (the peer needs an XDP program, which the receiver attaches).
 *   xdp_bench recv DEVICE rxonly|fwd SECONDS [MTU]
 *       open DEVICE (e.g. af_xdp:veth0) with MTU (default 1500) and poll
 *       queue 0: rxonly drops every frame, fwd swaps the MAC addresses
 *       and sends it back out of the same port (XDP_TX). Prints the
 *       received rate of each second (packets: a multi-buffer packet
 *       counts once) and, last, one JSON line with the median of the
 *       seconds after the first (warm-up), the frames of the whole run,
 *       and how many polls (of up to one 64-frame burst) it made and how
 *       many of them found nothing.
 *
 * SIZE goes up to B_FRAME_MAX (a 9000-byte MTU's largest untagged frame
 * a packet socket sends is 9014 bytes). BPF_PROG_RUN refuses live frames
 * larger than a page, so jumbo frames come from `send`.
 *
 * A tool, not a test: it prints figures and passes no judgement on them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <time.h>
#include <unistd.h>

#include <pagepool/pagepool.h>
#include <pagepool/pp_net.h>

/* Local experimental EtherType (IEEE 802 88B5), as the tests use. */
#define B_ETHERTYPE 0x88b5
#define B_BATCH 64
#define B_MAX_SECONDS 600
#define B_FRAME_MAX 9216

static volatile sig_atomic_t b_stop;

static void b_on_signal(int sig)
{
	(void)sig;
	b_stop = 1;
}

static double b_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int b_enter(const char *ns)
{
	char path[128];
	int nsfd;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 || setns(nsfd, CLONE_NEWNET)) {
		fprintf(stderr, "xdp_bench: cannot enter namespace %s: %s (ip netns add %s; run as root)\n",
			ns, strerror(errno), ns);
		return -1;
	}
	close(nsfd);
	return 0;
}

/* Broadcast destination, a local source, the tests' EtherType. */
static void b_frame_fill(uint8_t *frame)
{
	memset(frame, 0xff, 6);
	memcpy(frame + 6, "\x02\x00\x00\x00\x00\x01", 6);
	frame[12] = B_ETHERTYPE >> 8;
	frame[13] = B_ETHERTYPE & 0xff;
}

static void b_send_report(uint64_t sent, double seconds)
{
	printf("{\"role\": \"send\", \"frames\": %llu, \"seconds\": %.3f, \"pps\": %.0f}\n",
	       (unsigned long long)sent, seconds, (double)sent / seconds);
}

static int b_send(const char *ns, const char *ifname, double seconds,
		  unsigned int size)
{
	static uint8_t frame[B_FRAME_MAX];
	struct mmsghdr msgs[B_BATCH];
	struct iovec iov[B_BATCH];
	struct sockaddr_ll sll = { 0 };
	uint64_t sent = 0;
	double t0, t;
	int one = 1, fd;

	if (size < 14 || size > B_FRAME_MAX) {
		fprintf(stderr, "xdp_bench: frame size %u: from 14 to %u bytes\n",
			size, B_FRAME_MAX);
		return 2;
	}
	if (b_enter(ns))
		return 1;
	/* Protocol 0: this socket sends and never receives. */
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		fprintf(stderr, "xdp_bench: AF_PACKET socket: %s (run as root)\n",
			strerror(errno));
		return 1;
	}
	(void)setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
			 sizeof(one));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, "xdp_bench: no interface %s in %s\n", ifname,
			ns);
		return 1;
	}
	b_frame_fill(frame);
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < B_BATCH; i++) {
		iov[i].iov_base = frame;
		iov[i].iov_len = size;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	signal(SIGINT, b_on_signal);
	signal(SIGTERM, b_on_signal);
	t0 = b_now();
	do {
		int r = sendmmsg(fd, msgs, B_BATCH, 0);

		if (r > 0)
			sent += (uint64_t)r;
		t = b_now();
	} while (!b_stop && t - t0 < seconds);
	b_send_report(sent, t - t0);
	return 0;
}

/*
 * Frames per BPF_PROG_RUN call: each call sets up and tears down its own
 * page pool, which costs tens of milliseconds here, so a call must run
 * many frames; the count is scaled after each call so that one takes
 * about B_XDP_CALL_S, and the time check and a signal are seen that often.
 * The kernel runs the frames 64 at a time (its default batch) and flushes
 * the transmit queue after each batch.
 */
#define B_XDP_REPEAT_FIRST (1u << 16)
#define B_XDP_REPEAT_MAX (1u << 26)
#define B_XDP_CALL_S 0.5

static int b_send_xdp(const char *ns, const char *ifname, double seconds,
		      unsigned int size)
{
	/* r0 = XDP_TX; exit: every frame goes back out of its device. */
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = XDP_TX },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static uint8_t frame[B_FRAME_MAX];
	struct xdp_md ctx = { 0 };
	uint64_t sent = 0;
	double t0, t;
	int fd;

	if (size < 14 || size > B_FRAME_MAX) {
		fprintf(stderr, "xdp_bench: frame size %u: from 14 to %u bytes\n",
			size, B_FRAME_MAX);
		return 2;
	}
	if (b_enter(ns))
		return 1;
	ctx.ingress_ifindex = if_nametoindex(ifname);
	if (!ctx.ingress_ifindex) {
		fprintf(stderr, "xdp_bench: no interface %s in %s\n", ifname, ns);
		return 1;
	}
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "pp_bench_tx", "GPL", prog, 2,
			   NULL);
	if (fd < 0) {
		fprintf(stderr, "xdp_bench: cannot load the XDP sender program: %s (run as root)\n",
			strerror(-fd));
		return 1;
	}
	/* The kernel wants the context to describe the frame it is given. */
	ctx.data_end = size;
	b_frame_fill(frame);
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = frame, .data_size_in = size,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = B_XDP_REPEAT_FIRST,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	signal(SIGINT, b_on_signal);
	signal(SIGTERM, b_on_signal);
	t0 = b_now();
	do {
		double c0 = b_now(), dt;
		int r = bpf_prog_test_run_opts(fd, &opts);

		if (r) {
			fprintf(stderr, "xdp_bench: BPF_PROG_RUN with live frames failed: %s (needs Linux 5.18 and an XDP program on the peer of %s)\n",
				strerror(-r), ifname);
			close(fd);
			return 1;
		}
		sent += opts.repeat;
		t = b_now();
		dt = t - c0;
		if (dt > 0) {
			double next = (double)opts.repeat * B_XDP_CALL_S / dt;

			opts.repeat = next > B_XDP_REPEAT_MAX ? B_XDP_REPEAT_MAX :
				      next < B_BATCH ? B_BATCH :
				      (unsigned int)next;
		}
		/* The last call ends near the deadline, not past it. */
		if (t - t0 + B_XDP_CALL_S > seconds && seconds > t - t0)
			opts.repeat = (unsigned int)((double)opts.repeat *
				      (seconds - (t - t0)) / B_XDP_CALL_S) + 1;
	} while (!b_stop && t - t0 < seconds);
	close(fd);
	b_send_report(sent, t - t0);
	return 0;
}

static void b_drop(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		   uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_DROP;
}

/* testpmd's macswap: the frame goes back where it came from. */
static void b_macswap(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		      uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *d = pp_frame_data(&frames[i]);
		uint8_t tmp[6];

		memcpy(tmp, d, 6);
		memcpy(d, d + 6, 6);
		memcpy(d + 6, tmp, 6);
		verdicts[i] = PP_XDP_TX;
	}
}

/*
 * macswap for multi-buffer packets: only a packet's head has the
 * addresses (a later segment is payload), and its verdict is the one
 * that counts. A separate program, so the single-buffer one stays as
 * it was measured.
 */
static void b_macswap_mb(const struct pp_prog_ctx *ctx,
			 struct pp_frame *frames, uint16_t *verdicts,
			 unsigned int n)
{
	bool head = true;

	(void)ctx;
	for (unsigned int i = 0; i < n; i++) {
		verdicts[i] = PP_XDP_TX;
		if (head) {
			uint8_t *d = pp_frame_data(&frames[i]);
			uint8_t tmp[6];

			memcpy(tmp, d, 6);
			memcpy(d, d + 6, 6);
			memcpy(d + 6, tmp, 6);
		}
		head = !frames[i].more;
	}
}

static int b_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int b_recv(const char *dev, const char *mode, double seconds,
		  unsigned int mtu)
{
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = 64 << 20,
		.page_size = PP_PAGE_SIZE_2M, .numa_node = PP_NUMA_NODE_ANY,
		.name = "xdp_bench",
	};
	struct pp_arena *arena = pp_arena_create(&ao);
	struct pp_allocator *alloc;
	struct pp_port *port;
	struct pp_prog prog = { .sz = sizeof(prog) };
	double per_sec[B_MAX_SECONDS], t0, tick;
	uint64_t last = 0, polls = 0, empty = 0;
	unsigned int secs = 0;

	if (!arena) {
		/* No 2 MiB pages free: 4 KiB pages, slower TLB-wise. */
		ao.page_size = PP_PAGE_SIZE_4K;
		arena = pp_arena_create(&ao);
	}
	if (!arena) {
		fprintf(stderr, "xdp_bench: cannot create a 64 MiB arena: %s\n",
			strerror(errno));
		return 1;
	}
	struct pp_allocator_opts alo = {
		.sz = sizeof(alo), .arenas = &arena, .nr_arenas = 1,
	};
	alloc = pp_allocator_create(&alo);
	/*
	 * Rings as DPDK's net_af_xdp sizes them by default (2048 RX/TX
	 * descriptors, a fill ring twice that), so that both receivers ride
	 * out the same preemptions on a shared machine.
	 */
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = alloc, .nr_rxq = 1,
		.ring_size = 2048, .mtu = mtu,
	};
	port = alloc ? pp_port_open(dev, &conf) : NULL;
	if (!port) {
		fprintf(stderr, "xdp_bench: cannot open %s: %s (see the message above)\n",
			dev, strerror(errno));
		return 1;
	}
	prog.fn = strcmp(mode, "fwd") ? b_drop :
		  mtu > PP_PORT_MTU_DEFAULT ? b_macswap_mb : b_macswap;
	pp_port_set_prog(port, &prog);
	signal(SIGINT, b_on_signal);
	signal(SIGTERM, b_on_signal);
	t0 = tick = b_now();
	while (!b_stop && secs < B_MAX_SECONDS) {
		double t;

		for (int i = 0; i < 64; i++)
			empty += !pp_port_poll(port, 0, PP_NET_BURST);
		polls += 64;
		t = b_now();
		if (t - tick >= 1.0) {
			struct pp_rxq_stats rs;

			pp_port_rxq_stats(port, 0, &rs);
			per_sec[secs++] = (double)(rs.packets - last) /
					  (t - tick);
			last = rs.packets;
			tick = t;
			fprintf(stderr, "%s %s: %.0f pps\n", dev, mode,
				per_sec[secs - 1]);
			if (t - t0 >= seconds)
				break;
		}
	}
	/* All the frames of the run, for the mean burst (the polls count
	 * every one, also before the sender starts and after it stops). */
	struct pp_rxq_stats rs;

	pp_port_rxq_stats(port, 0, &rs);
	pp_port_close(port);
	pp_allocator_destroy(alloc);
	pp_arena_destroy(arena);
	/* The first second is warm-up: the median of the rest. */
	double med = 0;

	if (secs > 1) {
		qsort(per_sec + 1, secs - 1, sizeof(double), b_cmp);
		med = per_sec[1 + (secs - 1) / 2];
	}
	printf("{\"role\": \"recv\", \"device\": \"%s\", \"mode\": \"%s\", \"seconds\": %u, \"pps\": %.0f, \"frames\": %llu, \"polls\": %llu, \"empty_polls\": %llu}\n",
	       dev, mode, secs, med, (unsigned long long)rs.packets,
	       (unsigned long long)polls, (unsigned long long)empty);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "send"))
		return b_send(argv[2], argv[3], atof(argv[4]),
			      argc > 5 ? (unsigned int)atoi(argv[5]) : 64);
	if (argc >= 5 && !strcmp(argv[1], "send-xdp"))
		return b_send_xdp(argv[2], argv[3], atof(argv[4]),
				  argc > 5 ? (unsigned int)atoi(argv[5]) : 64);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "recv"))
		return b_recv(argv[2], argv[3], atof(argv[4]),
			      argc > 5 ? (unsigned int)atoi(argv[5]) : 0);
	fprintf(stderr, "usage: xdp_bench send NETNS IFNAME SECONDS [SIZE]\n"
			"       xdp_bench send-xdp NETNS IFNAME SECONDS [SIZE]\n"
			"       xdp_bench recv DEVICE rxonly|fwd SECONDS [MTU]\n");
	return 2;
}
