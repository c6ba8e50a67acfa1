/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_af_xdp.c - the af_xdp driver on a real veth pair whose far end is in
 * a throwaway network namespace.
 *
 * A forked child enters the namespace (setns) and sends numbered frames
 * with a checksum through an AF_PACKET raw socket; the driver receives
 * them on the near end, a program swaps the MAC addresses and bounces them
 * (XDP_TX on the same port), and the child checks that every frame comes
 * back intact and in order. Then: accounting balances, nothing of ours is
 * left on the interface, a SIGKILLed owner's program is detached by the
 * next open, a SIGTERMed one detaches its own, and the error paths say
 * what is wrong (out of file descriptors among them: the limit, not
 * root), and a growable arena used as a UMEM refuses to grow, naming the
 * port. Names carry the pid, and an atexit/signal handler deletes the
 * namespace and link on every way out.
 *
 * Needs root, iproute2, veth and XDP sockets; skips with the reason
 * otherwise.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include <pagepool/pagepool.h>
#include <pagepool/pp_net.h>

#include "pp_test.h"

/* Local experimental EtherType (IEEE 802 88B5) marks the test's frames. */
#define T_ETHERTYPE 0x88b5
#define T_MAGIC 0x70707864u /* "ppxd" */
#define T_FRAMES 20000
/*
 * Frames in flight at once: well below veth's 256-entry XDP ring (the
 * peer's transmit lands there before our NAPI runs the program; a full
 * ring drops) and the 1024-entry XSK RX ring.
 */
#define T_WINDOW 64
/* Queues on each end of the pair. */
#define T_QUEUES 2
/*
 * The largest frame the round trips send: an untagged Ethernet frame at
 * a 9000-byte MTU (a packet socket sends MTU + 14 bytes, + 4 only for a
 * VLAN-tagged frame), and a buffer for it.
 */
#define T_JUMBO_MTU 9000
#define T_JUMBO_LEN (T_JUMBO_MTU + 14)
#define T_BUF_LEN 9216
/* Consecutive frames the sender puts on one queue before the next. */
#define T_BLOCK 16

struct t_hdr {
	uint8_t dst[6];
	uint8_t src[6];
	uint16_t type;
	uint32_t magic;
	uint32_t seq;
	uint32_t len;
	uint32_t sum;
} __attribute__((packed));

static char t_ns[32], t_near[IF_NAMESIZE], t_far[IF_NAMESIZE];
static bool t_created;
/* What a round trip sends: how many frames, and up to how long. */
static unsigned int t_nframes = T_FRAMES;
static size_t t_max_len = 1514;

/*
 * Run a shell command. PP_TEST_IP, when set, names the iproute2 binary
 * that a leading "ip " means: a busybox shell (the QEMU guest's) runs its
 * own ip applet for a bare "ip", whatever PATH says, and that one has no
 * netns or veth.
 */
static int sh(const char *fmt, ...)
{
	const char *ip = getenv("PP_TEST_IP");
	char cmd[512];
	size_t off = 0;
	va_list ap;

	if (ip && *ip && !strncmp(fmt, "ip ", 3)) {
		off = (size_t)snprintf(cmd, sizeof(cmd), "%s", ip);
		fmt += 2;
	}
	REQUIRE(off < sizeof(cmd));
	va_start(ap, fmt);
	vsnprintf(cmd + off, sizeof(cmd) - off, fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* Delete the namespace (which takes the far end, and so the pair). */
static void t_cleanup(void)
{
	if (!t_created)
		return;
	t_created = false;
	sh("ip link del %s >/dev/null 2>&1", t_near);
	sh("ip netns del %s >/dev/null 2>&1", t_ns);
}

static void t_on_signal(int sig)
{
	t_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The pair: near end here (@queues RX/TX queues), far end in the ns. */
static void t_setup(unsigned int queues)
{
	snprintf(t_ns, sizeof(t_ns), "ppxdp%d", (int)getpid());
	snprintf(t_near, sizeof(t_near), "ppx%da", (int)getpid() % 1000000);
	snprintf(t_far, sizeof(t_far), "ppx%db", (int)getpid() % 1000000);
	if (sh("ip netns add %s", t_ns))
		pp_test_skip("cannot create a network namespace (ip netns add): needs iproute2 and root");
	t_created = true;
	if (sh("ip link add %s numtxqueues %u numrxqueues %u type veth peer name %s numtxqueues %u numrxqueues %u netns %s",
	       t_near, queues, queues, t_far, queues, queues, t_ns))
		pp_test_skip("cannot create a veth pair (kernel without veth?)");
	/*
	 * Quiet links: no IPv6 autoconfiguration chatter (router
	 * solicitations, MLD) on either end, which the frame counts would
	 * see. Written to /proc/sys, not through sysctl: a minimal Debian
	 * has no procps. A kernel without IPv6 has no such file, and no
	 * chatter.
	 */
	if (!access("/proc/sys/net/ipv6", F_OK)) {
		REQUIRE(!sh("echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6",
			    t_near));
		REQUIRE(!sh("ip netns exec %s sh -c 'echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6'",
			    t_ns, t_far));
	}
	REQUIRE(!sh("ip link set %s up", t_near));
	REQUIRE(!sh("ip -n %s link set %s up", t_ns, t_far));
}

static uint32_t t_sum(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a, 32 bit */

	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

/*
 * The length of frame @seq: 60..t_max_len. Above 1514, one frame in four
 * is at an edge of the UMEM frames a multi-buffer packet is cut into
 * (3840 bytes behind the 256-byte headroom: one byte less, exactly, one
 * more, for one, two and three frames) or the largest.
 */
static size_t t_frame_len(uint32_t seq)
{
	static const size_t edges[] = { 3839, 3840, 3841, 7679, 7680, 7681,
					T_JUMBO_LEN };

	if (t_max_len > 1514 && seq % 4 == 0) {
		size_t e = edges[(seq / 4) % (sizeof(edges) / sizeof(edges[0]))];

		return e < t_max_len ? e : t_max_len;
	}
	return 60 + (seq * 37) % (t_max_len - 60 + 1);
}

/* Frame @seq: t_frame_len() bytes, payload a function of seq, summed. */
static size_t t_frame(uint8_t *buf, uint32_t seq, const uint8_t *src)
{
	struct t_hdr *h = (struct t_hdr *)buf;
	size_t len = t_frame_len(seq);
	size_t i;

	memset(h->dst, 0xff, 6);
	memcpy(h->src, src, 6);
	h->type = htons(T_ETHERTYPE);
	h->magic = T_MAGIC;
	h->seq = seq;
	h->len = (uint32_t)len;
	for (i = sizeof(*h); i < len; i++)
		buf[i] = (uint8_t)(seq * 7 + i);
	h->sum = 0;
	h->sum = t_sum(buf + 12, len - 12);
	return len;
}

/* Check a frame that came back; returns its seq or -1. */
static long t_verify(uint8_t *buf, size_t len, const uint8_t *mac)
{
	struct t_hdr *h = (struct t_hdr *)buf;
	uint32_t sum;

	if (len < sizeof(*h) || h->magic != T_MAGIC || h->len != len)
		return -1;
	/* The bouncer swapped the addresses: it came back to us. */
	if (memcmp(h->dst, mac, 6))
		return -1;
	sum = h->sum;
	h->sum = 0;
	if (t_sum(buf + 12, len - 12) != sum)
		return -1;
	return h->seq;
}

/*
 * Which near-end RX queue a frame arrives on is the far end's TX queue
 * (veth_xmit). Through the qdisc the kernel picks that queue by flow
 * hash, whose seed is random at each boot: every frame of the test's one
 * flow lands on one queue, queue 0 on some machines and queue 1 on
 * others, so a port bound to queue 0 saw all or nothing. A packet socket
 * that bypasses the qdisc (PACKET_QDISC_BYPASS) gets queue "sending CPU
 * mod TX queues" instead (packet_pick_tx_queue, net/packet/af_packet.c),
 * so the sender steers each frame by moving itself to a CPU.
 *
 * Frame seq goes to queue first + (seq / T_BLOCK) % nq.
 */
struct t_steer {
	unsigned int first, nq;
	unsigned int window;  /* frames in flight: T_WINDOW or half a ring */
	int cpu[T_QUEUES];  /* a CPU whose number mod T_QUEUES is the queue */
};

static unsigned int t_queue_of(const struct t_steer *st, uint32_t seq)
{
	return st->first + (seq / T_BLOCK) % st->nq;
}

/* The next frame after @seq that goes to the same queue. */
static uint32_t t_next_on_queue(const struct t_steer *st, uint32_t seq)
{
	return (seq + 1) % T_BLOCK ? seq + 1 : seq + 1 + (st->nq - 1) * T_BLOCK;
}

/* Find a CPU for each queue; false when this process may not run on one. */
static bool t_steer_init(struct t_steer *st, unsigned int first,
			 unsigned int nq, unsigned int ring_size)
{
	cpu_set_t set;

	st->first = first;
	st->nq = nq;
	/* A ring holds at most its size: more in flight would be dropped
	 * by the kernel for want of buffers, rightly. */
	st->window = ring_size && ring_size / 2 < T_WINDOW ? ring_size / 2 :
							     T_WINDOW;
	REQUIRE(first + nq <= T_QUEUES);
	REQUIRE(!sched_getaffinity(0, sizeof(set), &set));
	for (unsigned int q = first; q < first + nq; q++) {
		st->cpu[q] = -1;
		for (int c = 0; c < CPU_SETSIZE && st->cpu[q] < 0; c++)
			if (CPU_ISSET(c, &set) && (unsigned int)c % T_QUEUES == q)
				st->cpu[q] = c;
		if (st->cpu[q] < 0) {
			printf("     SKIP: no CPU here is %u mod %u, so no frame can be steered to veth queue %u\n",
			       q, T_QUEUES, q);
			return false;
		}
	}
	return true;
}

static void t_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	REQUIRE(!sched_setaffinity(0, sizeof(set), &set));
}

/*
 * In a child: enter the namespace and open a packet socket for the
 * test's EtherType bound to the far end, the qdisc bypassed (so the
 * sending CPU picks the veth queue, t_pin()). Returns the socket and
 * the far end's MAC in @mac, or -1 after saying which step failed.
 */
static int t_far_socket(uint8_t mac[6])
{
	char path[64];
	struct sockaddr_ll sll = { 0 };
	struct ifreq ifr = { 0 };
	int nsfd, fd, one = 1;

	snprintf(path, sizeof(path), "/var/run/netns/%s", t_ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 || setns(nsfd, CLONE_NEWNET)) {
		perror("sender: setns");
		return -1;
	}
	fd = socket(AF_PACKET, SOCK_RAW, htons(T_ETHERTYPE));
	if (fd < 0) {
		perror("sender: socket");
		return -1;
	}
	if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
		       sizeof(one))) {
		perror("sender: PACKET_QDISC_BYPASS");
		return -1;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t_far);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		perror("sender: SIOCGIFHWADDR");
		return -1;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(T_ETHERTYPE);
	sll.sll_ifindex = (int)if_nametoindex(t_far);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("sender: bind");
		return -1;
	}
	return fd;
}

/*
 * The sender, in the namespace: @n frames, at most a window in flight,
 * each one expected back exactly once and intact, and in order among the
 * frames of its queue (queues are polled one after the other, so frames
 * of different queues may come back interleaved). Exit 0 when all came
 * back.
 */
static int t_sender(unsigned int n, const struct t_steer *st)
{
	static uint8_t buf[T_BUF_LEN];
	uint8_t mac[6];
	uint32_t expect[T_QUEUES];
	unsigned int sent = 0, back = 0, bad = 0, idle = 0, on = ~0u;
	int fd, one = 1, rcvbuf = 8 << 20;

	for (unsigned int q = st->first; q < st->first + st->nq; q++)
		expect[q] = (q - st->first) * T_BLOCK;
	fd = t_far_socket(mac);
	if (fd < 0)
		return 2;
	/*
	 * Our own transmissions would be queued to this socket too, and a
	 * window of them plus the replies overflows the default receive
	 * buffer: ignore them, and make room for the replies.
	 */
	(void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
			 sizeof(one));
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
			 sizeof(rcvbuf));
	while (back < n && idle < 3000) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		while (sent < n && sent - back < st->window) {
			size_t len = t_frame(buf, sent, mac);
			unsigned int q = t_queue_of(st, sent);

			if (q != on) {
				t_pin(st->cpu[q]);
				on = q;
			}
			if (send(fd, buf, len, 0) != (ssize_t)len) {
				perror("sender: send");
				return 2;
			}
			sent++;
		}
		if (poll(&pfd, 1, 1) <= 0) {
			idle++;
			continue;
		}
		for (;;) {
			struct sockaddr_ll from;
			socklen_t fl = sizeof(from);
			ssize_t r = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
					     (struct sockaddr *)&from, &fl);
			unsigned int q;
			long seq;

			if (r < 0)
				break;
			/* Our own transmissions show up here too. */
			if (from.sll_pkttype == PACKET_OUTGOING)
				continue;
			seq = t_verify(buf, (size_t)r, mac);
			if (seq < 0 || seq >= (long)sent) {
				if (bad++ < 5)
					fprintf(stderr, "sender: a frame that is not one of ours came back (%zd bytes, seq %ld)\n",
						r, seq);
				continue;
			}
			q = t_queue_of(st, (uint32_t)seq);
			if ((uint32_t)seq != expect[q]) {
				fprintf(stderr, "sender: expected frame %u back on queue %u, got %ld (%zd bytes)\n",
					expect[q], q, seq, r);
				return 1;
			}
			expect[q] = t_next_on_queue(st, (uint32_t)seq);
			back++;
			idle = 0;
		}
	}
	/* stderr: the child leaves with _exit(), which flushes no stdio. */
	fprintf(stderr, "sender: %u sent, %u back intact, %u bad\n", sent,
		back, bad);
	return back == n && !bad ? 0 : 1;
}

/*
 * Every message of INFO and above since the last t_log_reset(), for the
 * facts a port reports when it opens (pp_test.h keeps only the last
 * warning); warnings still go to pp_test.h's capture too.
 */
static char t_log[8192];
static size_t t_log_len;

static void t_log_fn(enum pp_log_level level, const char *msg, void *ctx)
{
	if (level <= PP_LOG_WARN)
		pp_test_log_fn(level, msg, ctx);
	pthread_mutex_lock(&pp_test_log_lock);
	t_log_len += (size_t)snprintf(t_log + t_log_len,
				      sizeof(t_log) - t_log_len, "%s\n", msg);
	if (t_log_len >= sizeof(t_log))
		t_log_len = sizeof(t_log) - 1;
	pthread_mutex_unlock(&pp_test_log_lock);
}

static void t_log_reset(void)
{
	pp_test_log_reset();
	pthread_mutex_lock(&pp_test_log_lock);
	t_log[0] = '\0';
	t_log_len = 0;
	pthread_mutex_unlock(&pp_test_log_lock);
}

static bool t_log_has(const char *needle)
{
	return strstr(t_log, needle) != NULL;
}

/* Packets of more than one segment the bouncer saw. */
static unsigned long t_bounced_mb;

/*
 * The bouncer: our frames go back with the addresses swapped. Only a
 * packet's head has headers (and a verdict that counts): a later
 * segment is payload, whatever its bytes look like.
 */
static void t_bounce(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		     uint16_t *verdicts, unsigned int n)
{
	unsigned long *count = ctx->arg;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct t_hdr *h = pp_frame_data(&frames[i]);
		uint8_t tmp[6];

		if (i && frames[i - 1].more) {
			verdicts[i] = PP_XDP_DROP; /* not read */
			continue;
		}
		t_bounced_mb += frames[i].more;
		if (frames[i].len < sizeof(*h) ||
		    h->type != htons(T_ETHERTYPE)) {
			verdicts[i] = PP_XDP_DROP;
			continue;
		}
		memcpy(tmp, h->dst, 6);
		memcpy(h->dst, h->src, 6);
		memcpy(h->src, tmp, 6);
		verdicts[i] = PP_XDP_TX;
		(*count)++;
	}
}

/* The XDP program id on @ifname, 0 when none. */
static unsigned int t_xdp_prog_id(const char *ifname)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int ifindex = (int)if_nametoindex(ifname);

	if (!ifindex || bpf_xdp_query(ifindex, 0, &q))
		return 0;
	return q.prog_id;
}

struct t_env {
	struct pp_arena *arena;
	struct pp_allocator *alloc;
};

static struct t_env t_env_create(void)
{
	struct t_env e;

	/* 16 MiB of 4 KiB pages: two queues' fill rings and then some. */
	e.arena = pp_test_arena(16 << 20, PP_PAGE_SIZE_4K);
	e.alloc = pp_test_allocator(e.arena);
	return e;
}

static void t_env_destroy(struct t_env *e)
{
	unsigned long allocated = 1;

	CHECK_EQ(pp_allocator_check(e->alloc, &allocated), 0);
	CHECK_EQ(allocated, 0);
	CHECK_EQ(pp_allocator_destroy(e->alloc), 0);
	CHECK_EQ(pp_arena_destroy(e->arena), 0);
}

static struct pp_port *t_open_ring(struct t_env *e, const char *extra,
				   unsigned int queues, unsigned int ring_size)
{
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = e->alloc, .nr_rxq = queues,
		.ring_size = ring_size,
	};
	char dev[128];

	snprintf(dev, sizeof(dev), "af_xdp:%s%s", t_near, extra);
	return pp_port_open(dev, &conf);
}

static struct pp_port *t_open(struct t_env *e, const char *extra,
			      unsigned int queues)
{
	return t_open_ring(e, extra, queues, 0);
}

/* Poll every queue of @ports until @child exits; returns its status. */
static int t_run_until_exit(struct pp_port **ports, unsigned int nr,
			    pid_t child)
{
	int status = -1;

	for (;;) {
		pid_t r = waitpid(child, &status, WNOHANG);

		if (r == child)
			return status;
		for (unsigned int p = 0; p < nr; p++)
			for (unsigned int q = 0; q < pp_port_nr_rxq(ports[p]); q++)
				pp_port_poll(ports[p], q, PP_NET_BURST);
	}
}

/*
 * Run the sender against @ports (the bouncer set on each) and check that
 * every frame went out and came back through the queue it was steered
 * to: port p's queue q is veth queue @first_queue[p] + q.
 */
static void t_bounce_through(struct pp_port **ports, unsigned int nr,
			     const unsigned int *first_queue,
			     const struct t_steer *st)
{
	unsigned long bounced = 0;
	struct pp_prog prog = { .sz = sizeof(prog), .fn = t_bounce,
				.arg = &bounced };
	pid_t child;
	int status;

	for (unsigned int p = 0; p < nr; p++)
		REQUIRE(!pp_port_set_prog(ports[p], &prog));
	fflush(NULL);
	child = fork();
	REQUIRE(child >= 0);
	if (!child)
		_exit(t_sender(t_nframes, st));
	status = t_run_until_exit(ports, nr, child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(bounced, t_nframes);
	for (unsigned int p = 0; p < nr; p++) {
		for (unsigned int q = 0; q < pp_port_nr_rxq(ports[p]); q++) {
			unsigned int vq = first_queue[p] + q;
			struct pp_rxq_stats rs;
			struct pp_txq_stats ts;
			uint64_t want = 0;

			for (uint32_t seq = 0; seq < t_nframes; seq++)
				want += t_queue_of(st, seq) == vq;
			CHECK_EQ(pp_port_rxq_stats(ports[p], q, &rs), 0);
			CHECK_EQ(pp_port_txq_stats(ports[p], q, &ts), 0);
			CHECK_EQ(rs.errors, 0);
			CHECK_EQ(rs.xdp_tx, want);
			CHECK_EQ(ts.packets, want);
			CHECK_EQ(pp_pool_check(pp_port_rxq_pool(ports[p], q)), 0);
		}
	}
}

/* Linux @major.@minor or later (uname), for features probed at open. */
static bool t_kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	REQUIRE(!uname(&u));
	if (sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

static void t_roundtrip(unsigned int queues, const char *extra,
			unsigned int ring_size)
{
	struct t_env e = t_env_create();
	const unsigned int first = 0;
	struct pp_port *port;
	struct t_steer st;

	if (!t_steer_init(&st, 0, queues, ring_size))
		return;
	t_log_reset();
	port = t_open_ring(&e, extra, queues, ring_size);
	REQUIRE(port != NULL);
	CHECK(!strcmp(pp_port_name(port), t_near));
	CHECK(t_xdp_prog_id(t_near) != 0);
	/*
	 * veth has no zero-copy, and no queue may pass for zero-copy
	 * (a second socket on a UMEM gets the UMEM's mode). Copy mode: a
	 * whole burst per sendto() where the kernel takes
	 * XDP_MAX_TX_SKB_BUDGET (6.17) and the ring holds a burst, the
	 * kernel's 32 otherwise, and the port says which and why.
	 */
	CHECK(t_log_has(", copy mode, "));
	if (ring_size && ring_size < PP_NET_BURST)
		CHECK(t_log_has("TX budget 32 frames a call\n"));
	else if (t_kernel_at_least(6, 17))
		CHECK(t_log_has("TX budget 64 frames a call\n"));
	else
		CHECK(t_log_has("TX budget 32 frames a call (the kernel's: no XDP_MAX_TX_SKB_BUDGET"));
	CHECK_EQ(t_log_has("has 2 RX queues but this port binds 1"),
		 queues < T_QUEUES);
	t_bounce_through(&port, 1, &first, &st);
	CHECK_EQ(pp_port_close(port), 0);
	CHECK_EQ(t_xdp_prog_id(t_near), 0);
	t_env_destroy(&e);
}

static void test_roundtrip(void)
{
	t_roundtrip(1, "", 0);
}

/* Two sockets on one UMEM: one port, two queues, frames on both. */
static void test_roundtrip_two_queues(void)
{
	t_roundtrip(2, ",queues=2,mode=auto", 0);
}

/*
 * Rings smaller than a burst: the fill ring is topped up in smaller
 * batches and TX reserves what fits (it used to wait for room for a
 * whole burst that a 32-entry ring never has, and the fill ring was
 * never filled at all: the port received nothing).
 */
static void test_small_rings(void)
{
	t_roundtrip(1, ",mode=copy", 32);
}

/*
 * A second port on the same arena shares the first one's UMEM, whose
 * fill rings were sized for the first port's smaller rings: it must
 * still receive (its fill level used to underflow: it never refilled).
 */
static void test_shared_umem_larger_ring(void)
{
	struct t_env e = t_env_create();
	struct pp_port *ports[2];
	const unsigned int first[2] = { 0, 1 };
	struct t_steer st;

	if (!t_steer_init(&st, 1, 1, 256))
		return;
	ports[0] = t_open_ring(&e, ",queue=0,mode=copy", 1, 256);
	ports[1] = t_open_ring(&e, ",queue=1,mode=copy", 1, 2048);
	REQUIRE(ports[0] && ports[1]);
	t_bounce_through(ports, 2, first, &st);
	CHECK_EQ(pp_port_close(ports[1]), 0);
	CHECK_EQ(pp_port_close(ports[0]), 0);
	t_env_destroy(&e);
}

/*
 * In the namespace, pinned to @cpu (so every frame lands on that veth
 * queue): send @n of the test's frames and leave. Exit 0 when all went.
 */
static int t_blast(unsigned int n, int cpu)
{
	static uint8_t buf[T_BUF_LEN];
	uint8_t mac[6];
	int fd = t_far_socket(mac);

	if (fd < 0)
		return 2;
	t_pin(cpu);
	for (unsigned int i = 0; i < n; i++) {
		size_t len = t_frame(buf, i, mac);

		if (send(fd, buf, len, 0) != (ssize_t)len)
			return 1;
	}
	return 0;
}

static void t_blast_wait(unsigned int n, int cpu)
{
	int status = -1;
	pid_t child;

	fflush(NULL);
	child = fork();
	REQUIRE(child >= 0);
	if (!child)
		_exit(t_blast(n, cpu));
	REQUIRE(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * The kernel's XDP_STATISTICS of this process's one XDP socket, found
 * among its descriptors by its domain (the port does not publish it).
 */
static void t_xsk_stats(struct xdp_statistics *out)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned int found = 0;

	REQUIRE(d != NULL);
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name), domain = 0;
		socklen_t len = sizeof(domain);

		if (fd <= 2 || fd == dirfd(d) ||
		    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) ||
		    domain != AF_XDP)
			continue;
		len = sizeof(*out);
		memset(out, 0, sizeof(*out));
		REQUIRE(!getsockopt(fd, SOL_XDP, XDP_STATISTICS, out, &len));
		found++;
	}
	closedir(d);
	REQUIRE(found == 1);
}

/* Pages of @pool out of its cache and ring (the kernel's, here). */
static uint64_t t_pages_out(struct pp_pool *pool)
{
	struct pp_pool_stats ps;

	REQUIRE(!pp_pool_get_stats(pool, &ps));
	return ps.inflight;
}

/*
 * Receive up to @max frames in bursts of @burst, checking each and
 * freeing it, and after every burst that the kernel holds no more pages
 * for RX than the ring has slots; returns how many came.
 */
static unsigned int t_take(struct pp_port *port, unsigned int burst,
			   unsigned int max, unsigned int ring)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct pp_pool *pool = pp_port_rxq_pool(port, 0);
	struct pp_frame f[PP_NET_BURST];
	unsigned int got = 0, n, empty = 0;

	while (got < max && empty < 3) {
		n = pp_port_rx_burst(port, 0, f, burst);
		for (unsigned int i = 0; i < n; i++)
			CHECK(t_verify(pp_frame_data(&f[i]), f[i].len,
				       bcast) >= 0);
		pp_frame_put_bulk(pp_port_allocator(port), f, n);
		CHECK(t_pages_out(pool) <= ring);
		got += n;
		empty = n ? 0 : empty + 1;
	}
	return got;
}

/*
 * The kernel holds at most one RX ring's worth of pages for a queue:
 * fill ring and RX ring together. A receiver that falls behind (the RX
 * ring full) gets its refills only as it takes frames, so the kernel
 * drops what it has no room for before copying it (fill ring empty),
 * instead of copying it into a second ring's worth of fill pages and
 * then dropping it for want of an RX slot. Frames arrive while the port
 * is not polled; the pool's pages in flight are counted after every
 * burst; and exactly the frames the bound allows are received, intact.
 */
static void test_rx_held_bound(void)
{
	const unsigned int ring = 256, burst = 16;
	struct t_env e = t_env_create();
	struct xdp_statistics xs;
	struct pp_port *port;
	struct pp_pool *pool;
	struct t_steer st;
	unsigned int got;

	if (!t_steer_init(&st, 0, 1, ring))
		return;
	port = t_open_ring(&e, ",mode=copy", 1, ring);
	REQUIRE(port != NULL);
	pool = pp_port_rxq_pool(port, 0);
	CHECK_EQ(t_pages_out(pool), ring);
	/* A ring and a half: the RX ring fills, the rest is dropped. */
	t_blast_wait(ring + ring / 2, st.cpu[0]);
	CHECK_EQ(t_pages_out(pool), ring);
	/* A quarter of the ring taken: one refill batch (64) goes back. */
	got = t_take(port, burst, ring / 4, ring);
	CHECK_EQ(got, ring / 4);
	/* Only that batch can take new frames now. */
	t_blast_wait(ring, st.cpu[0]);
	got = t_take(port, burst, 4 * ring, ring);
	CHECK_EQ(got, ring);
	CHECK_EQ(t_pages_out(pool), ring);
	/* Every frame the kernel had no room for was dropped before its
	 * copy, for want of a fill buffer, never for want of an RX slot:
	 * (ring / 2) + (ring - ring / 4) of them. */
	t_xsk_stats(&xs);
	CHECK_EQ(xs.rx_ring_full, 0);
	CHECK_EQ(xs.rx_fill_ring_empty_descs, ring / 2 + ring - ring / 4);
	CHECK_EQ(pp_pool_check(pool), 0);
	CHECK_EQ(pp_port_close(port), 0);
	t_env_destroy(&e);
}

/*
 * Close a queue and open it again at once, in each mode: the kernel
 * frees the old socket's hold on the queue a moment after close, and
 * the open waits for that instead of failing with EBUSY.
 */
static void test_reopen(void)
{
	static const char *const modes[] = { ",mode=copy", ",mode=auto" };
	struct t_env e = t_env_create();

	for (unsigned int m = 0; m < 2; m++) {
		for (int i = 0; i < 5; i++) {
			struct pp_port *port = t_open(&e, modes[m], 1);

			CHECK(port != NULL);
			if (!port) {
				fprintf(stderr, "reopen %s, cycle %d: %s\n",
					modes[m], i, pp_test_last_log);
				continue;
			}
			CHECK_EQ(pp_port_close(port), 0);
		}
	}
	t_env_destroy(&e);
}

/* Two ports on one interface and one arena share the UMEM and program. */
static void test_two_ports_share(void)
{
	struct t_env e = t_env_create();
	struct pp_port *a = t_open(&e, ",queue=0,mode=copy", 1);
	struct pp_port *b = t_open(&e, ",queue=1,mode=copy", 1);
	unsigned int id;

	REQUIRE(a && b);
	id = t_xdp_prog_id(t_near);
	CHECK(id != 0);
	CHECK_EQ(pp_port_close(a), 0);
	/* The program stays while the other port uses it. */
	CHECK_EQ(t_xdp_prog_id(t_near), id);
	CHECK_EQ(pp_port_close(b), 0);
	CHECK_EQ(t_xdp_prog_id(t_near), 0);
	t_env_destroy(&e);
}

/*
 * The kernel registers a UMEM once: a growable arena used as one is
 * pinned while the UMEM exists, and asking it to grow is refused with
 * a message that names the port; once the port is closed it grows.
 */
static void test_umem_growth_refused(void)
{
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = 16 << 20, .max_size = 32 << 20,
		.grow_step = 8 << 20, .page_size = PP_PAGE_SIZE_4K,
		.numa_node = PP_NUMA_NODE_ANY, .name = "umem-grow",
	};
	struct pp_allocator_opts lo = {
		.sz = sizeof(lo), .nr_arenas = 1,
		.flags = PP_ALLOCATOR_F_MANUAL_RESIZE,
	};
	struct pp_zone_growth g = { .sz = sizeof(g) };
	struct t_env e;
	struct pp_port *port;
	char want[160];

	e.arena = pp_arena_create(&ao);
	REQUIRE(e.arena != NULL);
	lo.arenas = &e.arena;
	e.alloc = pp_allocator_create(&lo);
	REQUIRE(e.alloc != NULL);
	port = t_open(&e, ",mode=copy", 1);
	REQUIRE(port != NULL);
	CHECK_EQ(pp_allocator_zone_growth(e.alloc, 0, &g), 0);
	CHECK(g.pinned);

	t_log_reset();
	CHECK_EQ(pp_allocator_grow(e.alloc, 0), -EPERM);
	snprintf(want, sizeof(want),
		 "arena 'umem-grow': cannot grow: the arena is fixed at 16 MiB because the AF_XDP UMEM of port %s registers it once",
		 pp_port_name(port));
	CHECK(t_log_has(want));
	if (!t_log_has(want))
		fprintf(stderr, "want: %s\ngot: %s\n", want, pp_test_last_log);
	CHECK_EQ(pp_arena_committed(e.arena), 16u << 20);
	CHECK_EQ(pp_allocator_zone_growth(e.alloc, 0, &g), 0);
	CHECK_EQ(g.committed_bytes, 16u << 20);
	CHECK_EQ(g.last_error, -EPERM);

	CHECK_EQ(pp_port_close(port), 0);
	CHECK_EQ(pp_allocator_zone_growth(e.alloc, 0, &g), 0);
	CHECK(!g.pinned);
	CHECK_EQ(pp_allocator_grow(e.alloc, 0), 0);
	CHECK_EQ(pp_arena_committed(e.arena), 24u << 20);
	t_env_destroy(&e);
}

static void test_errors(void)
{
	struct t_env e = t_env_create();
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = e.alloc,
	};
	char dev[128];

	pp_test_log_reset();
	errno = 0;
	CHECK(pp_port_open("af_xdp:ppx_no_such_if", &conf) == NULL);
	CHECK_EQ(errno, ENODEV);
	CHECK(pp_test_log_has("no interface"));

	snprintf(dev, sizeof(dev), "af_xdp:%s,mode=fast", t_near);
	errno = 0;
	CHECK(pp_port_open(dev, &conf) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(pp_test_log_has("bad mode"));

	snprintf(dev, sizeof(dev), "af_xdp:%s,queues=3", t_near);
	errno = 0;
	CHECK(pp_port_open(dev, &conf) == NULL);
	CHECK_EQ(errno, EINVAL);

	/* veth has no zero-copy: mode=zc must fail, and say what to do. */
	snprintf(dev, sizeof(dev), "af_xdp:%s,mode=zc", t_near);
	errno = 0;
	CHECK(pp_port_open(dev, &conf) == NULL);
	CHECK(errno != 0);
	CHECK(pp_test_log_has("mode=copy"));
	/* A failed open leaves nothing attached. */
	CHECK_EQ(t_xdp_prog_id(t_near), 0);

	/* Buffers are whole UMEM frames: frag= is refused, with why. */
	snprintf(dev, sizeof(dev), "af_xdp:%s,frag=2048", t_near);
	pp_test_log_reset();
	errno = 0;
	CHECK(pp_port_open(dev, &conf) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(pp_test_log_has("af_xdp takes no frag="));
	CHECK_EQ(t_xdp_prog_id(t_near), 0);

	/* A queue the interface does not have (it has two). */
	snprintf(dev, sizeof(dev), "af_xdp:%s,queue=7", t_near);
	errno = 0;
	CHECK(pp_port_open(dev, &conf) == NULL);
	CHECK(errno != 0);
	CHECK_EQ(t_xdp_prog_id(t_near), 0);
	t_env_destroy(&e);
}

/*
 * Out of file descriptors: a child whose RLIMIT_NOFILE leaves room for
 * @room more opens a port of T_QUEUES queues. Returns 0 when the open
 * succeeded, 1 when it failed and said the process is out of
 * descriptors and named ulimit -n, 2 when it failed and said something
 * else (printed), 3 when the child could not be set up.
 */
static int t_fd_limit_child(unsigned int room)
{
	struct t_env e = t_env_create();
	struct pp_port *port;
	struct rlimit rl;
	struct dirent *de;
	int top = -1;
	DIR *d;

	/*
	 * The limit is on descriptor numbers, not on how many are open: up
	 * to the highest one open, fill every free number, then let @room
	 * more be opened.
	 */
	d = opendir("/proc/self/fd");
	if (!d)
		return 3;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) > top)
			top = atoi(de->d_name);
	closedir(d);
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 3;
	rl.rlim_cur = (rlim_t)top + 1;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 3;
	while (open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0)
		;
	if (errno != EMFILE)
		return 3;
	rl.rlim_cur = (rlim_t)top + 1 + room;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 3;
	t_log_reset();
	port = t_open(&e, "", T_QUEUES);
	if (port) {
		pp_port_close(port);
		return 0;
	}
	if (t_log_has("out of file descriptors") && t_log_has("ulimit -n"))
		return 1;
	fprintf(stderr, "room for %u more descriptors: the open failed without naming the descriptor limit:\n%s",
		room, t_log);
	return 2;
}

/*
 * With room for 0, 1, 2... more descriptors, the open fails wherever the
 * limit bites first: the interface's lock file, the XDP program's map
 * and program, the UMEM's socket, each queue's socket. Each time the
 * message must say the process is out of descriptors and name ulimit
 * -n (it used to blame root or BPF), and nothing may stay attached. Ends
 * at the first room the open succeeds with.
 */
static void test_fd_limit(void)
{
	unsigned int room, failed = 0;

	for (room = 0; room < 256; room++) {
		int status, rc;
		pid_t child;

		fflush(NULL);
		child = fork();
		REQUIRE(child >= 0);
		if (!child) {
			/* Not ours to clean: only the parent deletes the pair. */
			t_created = false;
			_exit(t_fd_limit_child(room));
		}
		REQUIRE(waitpid(child, &status, 0) == child);
		REQUIRE(WIFEXITED(status));
		rc = WEXITSTATUS(status);
		REQUIRE(rc != 3);
		CHECK_EQ(t_xdp_prog_id(t_near), 0);
		if (rc == 0)
			break;
		failed++;
		CHECK_EQ(rc, 1);
	}
	printf("  the open failed at %u descriptor limits, then passed with room for %u\n",
	       failed, room);
	CHECK(failed >= 3);
	CHECK(room < 256);
}

/*
 * The child opens a port and waits: killed with SIGKILL it cannot clean
 * up, with SIGTERM its handler makes the loop close the port (the
 * forwarder's way).
 */
static volatile sig_atomic_t t_stop;

static void t_on_term(int sig)
{
	(void)sig;
	t_stop = 1;
}

static int t_owner(int ready_fd)
{
	struct t_env e = t_env_create();
	struct pp_port *port;

	signal(SIGTERM, t_on_term);
	port = t_open(&e, "", 1);
	if (!port)
		return 2;
	if (write(ready_fd, "r", 1) != 1)
		return 2;
	while (!t_stop)
		pp_port_poll(port, 0, PP_NET_BURST);
	pp_port_close(port);
	return t_xdp_prog_id(t_near) == 0 ? 0 : 1;
}

static pid_t t_spawn_owner(void)
{
	int p[2];
	char c;
	pid_t child;

	REQUIRE(!pipe(p));
	fflush(NULL);
	child = fork();
	REQUIRE(child >= 0);
	if (!child) {
		close(p[0]);
		/* Not ours to clean: only the parent deletes the pair. */
		t_created = false;
		_exit(t_owner(p[1]));
	}
	close(p[1]);
	REQUIRE(read(p[0], &c, 1) == 1);
	close(p[0]);
	return child;
}

static void test_sigterm_detaches(void)
{
	pid_t child = t_spawn_owner();
	int status;

	CHECK(t_xdp_prog_id(t_near) != 0);
	kill(child, SIGTERM);
	REQUIRE(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(t_xdp_prog_id(t_near), 0);
}

static void test_sigkill_stale_detached(void)
{
	pid_t child = t_spawn_owner();
	struct t_env e;
	struct pp_port *port;
	unsigned int stale;
	int status;

	kill(child, SIGKILL);
	REQUIRE(waitpid(child, &status, 0) == child);
	/* Killed hard: its program is still there... */
	stale = t_xdp_prog_id(t_near);
	CHECK(stale != 0);
	/* ...until the next open, which recognises it and replaces it. */
	e = t_env_create();
	t_log_reset();
	port = t_open(&e, "", 1);
	REQUIRE(port != NULL);
	CHECK(t_log_has("stale"));
	CHECK(t_xdp_prog_id(t_near) != 0);
	CHECK(t_xdp_prog_id(t_near) != stale);
	CHECK_EQ(pp_port_close(port), 0);
	CHECK_EQ(t_xdp_prog_id(t_near), 0);
	t_env_destroy(&e);
}

/*
 * The forwarder on an af_xdp port, stopped with SIGINT: its handler ends
 * the loop and it closes its ports, so nothing stays attached.
 */
static const char *t_fwd_path;

static void test_fwd_sigint_detaches(void)
{
	char dev[64], line[256];
	pid_t child;
	int status, out[2];
	FILE *f;

	if (!t_fwd_path) {
		printf("     SKIP test_fwd_sigint_detaches: no forwarder path given\n");
		return;
	}
	snprintf(dev, sizeof(dev), "af_xdp:%s", t_near);
	REQUIRE(!pipe(out));
	fflush(NULL);
	child = fork();
	REQUIRE(child >= 0);
	if (!child) {
		t_created = false;
		dup2(out[1], STDOUT_FILENO);
		close(out[0]);
		execl(t_fwd_path, t_fwd_path, "--port", dev, "--port", "null0",
		      "--mode", "redirect", "--duration", "60", "--arena-mb",
		      "16", (char *)NULL);
		_exit(127);
	}
	/*
	 * Its first line comes after it has opened the ports and set its
	 * signal handlers: then stop it.
	 */
	close(out[1]);
	f = fdopen(out[0], "r");
	REQUIRE(f != NULL);
	CHECK(fgets(line, sizeof(line), f) != NULL);
	CHECK(!strncmp(line, "fwd:", 4));
	CHECK(t_xdp_prog_id(t_near) != 0);
	kill(child, SIGINT);
	REQUIRE(waitpid(child, &status, 0) == child);
	fclose(f);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(t_xdp_prog_id(t_near), 0);
}

/*
 * TX frames that do not fit in their 4 KiB UMEM frame: offsets and
 * headrooms where 32-bit sums wrap (offset 0xfffffff0 + len 0x20 made a
 * descriptor 4 GiB past the UMEM), 16-bit fields at their limits, one byte
 * past the page end. Each is taken, dropped and counted in the TX queue's
 * errors; only the frame that ends on the page's last byte leaves the
 * interface, and every page comes home.
 */
static unsigned long t_tx_packets(const char *ifname)
{
	char path[128];
	unsigned long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_packets",
		 ifname);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%lu", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

static void test_tx_bounds(void)
{
	static const struct { uint32_t offset; uint16_t headroom, len; } geom[] = {
		{ 0, PP_PAGE_SIZE - 64, 64 },       /* last byte: sent */
		{ 0xffffff00u, 0x100, 64 },         /* offset + headroom wraps */
		{ 0xfffffff0u, 0, 0x20 },           /* + len wraps */
		{ 0xffffffffu, 0xffff, 0xffff },
		{ 0xffff, 0, 64 },                  /* offset near 2^16 */
		{ 0, 0xffff, 1 },                   /* headroom near 2^16 */
		{ 0, PP_PAGE_SIZE - 64, 65 },       /* one byte past the end */
	};
	enum { NR = sizeof(geom) / sizeof(geom[0]) };
	struct t_env e = t_env_create();
	struct pp_frame f[NR] = { 0 };
	struct pp_txq_stats ts;
	struct pp_port *port;
	unsigned long before;
	struct pp_pool *pool;
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	unsigned int i;

	port = t_open(&e, ",mode=copy", 1);
	REQUIRE(port != NULL);
	pool = pp_port_rxq_pool(port, 0);
	for (i = 0; i < NR; i++) {
		f[i].page = pp_pool_alloc_pages(pool);
		REQUIRE(f[i].page != NULL);
		f[i].offset = geom[i].offset;
		f[i].headroom = geom[i].headroom;
		f[i].len = geom[i].len;
	}
	t_frame(pp_frame_data(&f[0]), 0, (const uint8_t *)"\x02\0\0\0\0\x01");
	before = t_tx_packets(t_near);
	CHECK_EQ(pp_port_tx_burst(port, 0, f, NR), NR);
	CHECK_EQ(pp_port_txq_stats(port, 0, &ts), 0);
	CHECK_EQ(ts.errors, NR - 1);
	/* Empty bursts kick the kernel and reap completions. */
	for (i = 0; i < 100 && t_tx_packets(t_near) == before; i++) {
		pp_port_tx_burst(port, 0, f, 0);
		nanosleep(&pause, NULL);
	}
	nanosleep(&pause, NULL);
	pp_port_tx_burst(port, 0, f, 0);
	CHECK_EQ(t_tx_packets(t_near) - before, 1);
	CHECK_EQ(pp_pool_check(pool), 0);
	CHECK_EQ(pp_port_close(port), 0);
	t_env_destroy(&e);
}

/*
 * Fragments of another pool's page (null with frag=, in the same arena,
 * so they have UMEM addresses): a page's TX tag names one holder, so TX
 * takes them, sends none and counts each as an error, and every fragment
 * goes home (the pools balance, nothing is left with the kernel).
 */
static void test_tx_frag(void)
{
	struct t_env e = t_env_create();
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = e.alloc,
	};
	struct pp_port *port, *src;
	struct pp_frame f[8] = { 0 };
	struct pp_txq_stats ts;
	unsigned long before;
	unsigned int i;

	port = t_open(&e, ",mode=copy", 1);
	REQUIRE(port != NULL);
	src = pp_port_open("null0,frag=1024", &conf);
	REQUIRE(src != NULL);
	REQUIRE(pp_port_rx_burst(src, 0, f, 8) == 8);
	for (i = 0; i < 8; i++)
		CHECK(pp_page_is_frag(f[i].page));
	before = t_tx_packets(t_near);
	CHECK_EQ(pp_port_tx_burst(port, 0, f, 8), 8);
	CHECK_EQ(pp_port_txq_stats(port, 0, &ts), 0);
	CHECK_EQ(ts.errors, 8);
	pp_port_tx_burst(port, 0, f, 0);
	CHECK_EQ(t_tx_packets(t_near) - before, 0);
	CHECK_EQ(pp_pool_check(pp_port_rxq_pool(port, 0)), 0);
	CHECK_EQ(pp_port_close(src), 0);
	CHECK_EQ(pp_port_close(port), 0);
	t_env_destroy(&e);
}

/* ---- multi-buffer: MTU 9000 ------------------------------------------ */

/*
 * Both ends of the pair: the kernel forwards a frame over veth only up to
 * the receiving end's MTU, in both directions.
 */
static void t_mtu_set(unsigned int mtu)
{
	REQUIRE(!sh("ip link set %s mtu %u", t_near, mtu));
	REQUIRE(!sh("ip -n %s link set %s mtu %u", t_ns, t_far, mtu));
}

static struct pp_port *t_open_mtu(struct t_env *e, const char *extra,
				  unsigned int mtu)
{
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = e->alloc, .nr_rxq = 1,
		.mtu = mtu,
	};
	char dev[128];

	snprintf(dev, sizeof(dev), "af_xdp:%s%s", t_near, extra);
	return pp_port_open(dev, &conf);
}

/* AF_XDP multi-buffer (XDP_USE_SG) came with Linux 6.6. */
static bool t_kernel_has_sg(void)
{
	return t_kernel_at_least(6, 6);
}

/*
 * The largest MTU whose frames fit one UMEM frame (4096 bytes less the
 * 256-byte headroom, less 18 bytes of Ethernet header and VLAN tag) opens
 * single-buffer everywhere. One more needs multi-buffer: on Linux 6.6 and
 * later the port binds with it, and before, the open is refused and says
 * what to do (the QEMU guest runs Debian 12's 6.1: netns_guest).
 */
static void test_mtu_threshold(void)
{
	struct t_env e = t_env_create();
	struct pp_port *port;

	t_log_reset();
	port = t_open_mtu(&e, ",mode=copy", 3822);
	REQUIRE(port != NULL);
	CHECK(t_log_has(", copy mode, "));
	CHECK(!t_log_has(", multi-buffer"));
	CHECK_EQ(pp_port_mtu(port), 3822);
	CHECK_EQ(pp_port_close(port), 0);

	t_log_reset();
	errno = 0;
	port = t_open_mtu(&e, ",mode=copy", 3823);
	if (t_kernel_has_sg()) {
		REQUIRE(port != NULL);
		CHECK(t_log_has(", multi-buffer"));
		CHECK_EQ(pp_port_close(port), 0);
	} else {
		CHECK(port == NULL);
		CHECK_EQ(errno, EOPNOTSUPP);
		CHECK(t_log_has("this kernel has no AF_XDP multi-buffer"));
		CHECK(t_log_has("run Linux 6.6 or later, or open the port with an MTU of at most 3822"));
		if (port)
			pp_port_close(port);
	}
	/* A refused open leaves nothing attached. */
	CHECK_EQ(t_xdp_prog_id(t_near), 0);
	t_env_destroy(&e);
}

/*
 * MTU 9000 before Linux 6.6: refused at open, with the message that says
 * what to do, and nothing left behind. On a kernel with multi-buffer,
 * the round trip below covers it.
 */
static void test_mtu9000_refused(void)
{
	struct t_env e = t_env_create();
	struct pp_port *port;

	if (t_kernel_has_sg()) {
		printf("     SKIP: this kernel has AF_XDP multi-buffer: test_mtu9000_roundtrip runs instead (the QEMU guest's 6.1 runs this one: netns_guest)\n");
		t_env_destroy(&e);
		return;
	}
	t_log_reset();
	errno = 0;
	port = t_open_mtu(&e, "", T_JUMBO_MTU);
	CHECK(port == NULL);
	CHECK_EQ(errno, EOPNOTSUPP);
	CHECK(t_log_has("MTU 9000 needs frames of up to 9018 bytes, more than one UMEM frame holds (3840 bytes behind the 256-byte headroom), and this kernel has no AF_XDP multi-buffer (XDP_USE_SG, Linux 6.6): run Linux 6.6 or later, or open the port with an MTU of at most 3822"));
	if (port)
		pp_port_close(port);
	CHECK_EQ(t_xdp_prog_id(t_near), 0);
	t_env_destroy(&e);
}

/*
 * MTU 9000 over the veth pair, both ends at 9000: frames of 60 to 9014
 * bytes (at every edge of one, two and three UMEM frames) go out of the
 * far end's packet socket, arrive as chains of descriptors, are bounced
 * whole (one verdict a packet) and go back as chains; the sender checks
 * every byte of every frame, in order, and the pools and the allocator
 * balance. veth takes the XDP program with the peer at MTU 9000 only
 * because it is frags-aware ("Peer MTU is too large to set XDP"
 * otherwise).
 */
static void test_mtu9000_roundtrip(void)
{
	struct t_env e;
	const unsigned int first = 0;
	struct pp_port *port;
	struct t_steer st;

	if (!t_kernel_has_sg()) {
		printf("     SKIP: no AF_XDP multi-buffer before Linux 6.6 (test_mtu9000_refused covers this kernel)\n");
		return;
	}
	if (!t_steer_init(&st, 0, 1, 0))
		return;
	e = t_env_create();
	t_mtu_set(T_JUMBO_MTU);
	t_log_reset();
	port = t_open_mtu(&e, "", T_JUMBO_MTU);
	REQUIRE(port != NULL);
	CHECK(t_log_has(", copy mode, "));
	CHECK(t_log_has(", multi-buffer"));
	CHECK(!t_log_has("MTU 1500, below"));
	t_nframes = 4000;
	t_max_len = T_JUMBO_LEN;
	t_bounced_mb = 0;
	t_bounce_through(&port, 1, &first, &st);
	/* Chains did go through: every frame above 3840 bytes is one. */
	CHECK(t_bounced_mb > t_nframes / 4);
	t_nframes = T_FRAMES;
	t_max_len = 1514;
	CHECK_EQ(pp_port_close(port), 0);
	CHECK_EQ(t_xdp_prog_id(t_near), 0);
	t_env_destroy(&e);
	t_mtu_set(1500);
}

/*
 * A UMEM has one mode, its first socket's: a port that needs
 * multi-buffer cannot join an arena's UMEM bound without it (refused,
 * saying so), while a small-MTU port that joins a multi-buffer UMEM runs
 * the multi-buffer bursts (the kernel chains for it too).
 */
static void test_mtu_umem_mode(void)
{
	struct t_env e = t_env_create();
	struct pp_port *a, *b;

	if (!t_kernel_has_sg()) {
		printf("     SKIP: no AF_XDP multi-buffer before Linux 6.6\n");
		t_env_destroy(&e);
		return;
	}
	t_mtu_set(T_JUMBO_MTU);
	a = t_open_mtu(&e, ",queue=0,mode=copy", 1500);
	REQUIRE(a != NULL);
	t_log_reset();
	errno = 0;
	b = t_open_mtu(&e, ",queue=1,mode=copy", T_JUMBO_MTU);
	CHECK(b == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(t_log_has("a UMEM has one mode; open this port on another arena, or open the large-MTU port first"));
	if (b)
		pp_port_close(b);
	CHECK_EQ(pp_port_close(a), 0);

	b = t_open_mtu(&e, ",queue=1,mode=copy", T_JUMBO_MTU);
	REQUIRE(b != NULL);
	t_log_reset();
	a = t_open_mtu(&e, ",queue=0,mode=copy", 1500);
	REQUIRE(a != NULL);
	CHECK(t_log_has(", multi-buffer"));
	CHECK_EQ(pp_port_close(a), 0);
	CHECK_EQ(pp_port_close(b), 0);
	t_env_destroy(&e);
	t_mtu_set(1500);
}

/*
 * Multi-buffer TX against the real kernel: a packet of 19 segments (one
 * more than any packet may have), one with a segment past its page, a
 * fragment of another pool in a chain: each taken and dropped whole,
 * one error each, nothing sent; an unfinished packet at the end of the
 * burst is not taken; a whole 9014-byte packet in three segments leaves
 * the interface as one frame. Every page comes home.
 */
static void test_mtu9000_tx(void)
{
	enum { NR = 19 + 3 + 3 + 3 + 2 };
	struct t_env e;
	struct pp_frame f[NR];
	struct pp_txq_stats ts;
	struct pp_port *port;
	struct pp_pool *pool;
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	unsigned long before;
	unsigned int i, k = 0, taken;
	uint8_t frame[T_JUMBO_LEN];
	size_t len, off;

	if (!t_kernel_has_sg()) {
		printf("     SKIP: no AF_XDP multi-buffer before Linux 6.6\n");
		return;
	}
	e = t_env_create();
	t_mtu_set(T_JUMBO_MTU);
	port = t_open_mtu(&e, ",mode=copy", T_JUMBO_MTU);
	REQUIRE(port != NULL);
	pool = pp_port_rxq_pool(port, 0);
	/* 19 segments of 64 bytes. */
	for (i = 0; i < 19; i++, k++) {
		f[k] = (struct pp_frame){ .page = pp_pool_alloc_pages(pool),
					  .headroom = 256, .len = 64,
					  .more = i < 18 };
		REQUIRE(f[k].page != NULL);
	}
	/* Three segments, the middle one a byte past its page. */
	for (i = 0; i < 3; i++, k++) {
		f[k] = (struct pp_frame){ .page = pp_pool_alloc_pages(pool),
					  .headroom = 256,
					  .len = i == 1 ? PP_PAGE_SIZE - 255 : 100,
					  .more = i < 2 };
		REQUIRE(f[k].page != NULL);
	}
	/* Three segments, the last one empty. */
	for (i = 0; i < 3; i++, k++) {
		f[k] = (struct pp_frame){ .page = pp_pool_alloc_pages(pool),
					  .headroom = 256,
					  .len = i == 2 ? 0 : 100,
					  .more = i < 2 };
		REQUIRE(f[k].page != NULL);
	}
	/* A whole 9014-byte frame in three segments. */
	t_max_len = T_JUMBO_LEN;
	len = t_frame(frame, 24, (const uint8_t *)"\x02\0\0\0\0\x01");
	t_max_len = 1514;
	REQUIRE(len == T_JUMBO_LEN);
	for (i = 0, off = 0; i < 3; i++, k++) {
		size_t seg = i < 2 ? 3840 : len - 2 * 3840;

		f[k] = (struct pp_frame){ .page = pp_pool_alloc_pages(pool),
					  .headroom = 256, .len = (uint16_t)seg,
					  .more = i < 2 };
		REQUIRE(f[k].page != NULL);
		memcpy(pp_frame_data(&f[k]), frame + off, seg);
		off += seg;
	}
	/* Unfinished: two segments, the last with .more. */
	for (i = 0; i < 2; i++, k++) {
		f[k] = (struct pp_frame){ .page = pp_pool_alloc_pages(pool),
					  .headroom = 256, .len = 100,
					  .more = 1 };
		REQUIRE(f[k].page != NULL);
	}
	REQUIRE(k == NR);
	before = t_tx_packets(t_near);
	taken = pp_port_tx_burst(port, 0, f, NR);
	CHECK_EQ(taken, NR - 2);
	CHECK_EQ(pp_port_txq_stats(port, 0, &ts), 0);
	CHECK_EQ(ts.errors, 3);
	CHECK_EQ(ts.packets, 4);
	for (i = 0; i < 100 && t_tx_packets(t_near) == before; i++) {
		pp_port_tx_burst(port, 0, f, 0);
		nanosleep(&pause, NULL);
	}
	nanosleep(&pause, NULL);
	pp_port_tx_burst(port, 0, f, 0);
	CHECK_EQ(t_tx_packets(t_near) - before, 1);
	/* What was not taken is still ours. */
	for (i = NR - 2; i < NR; i++)
		pp_pool_recycle_direct(pool, f[i].page);
	CHECK_EQ(pp_pool_check(pool), 0);
	CHECK_EQ(pp_port_close(port), 0);
	t_env_destroy(&e);
	t_mtu_set(1500);
}

/*
 * PP_TEST_ONLY=name[,name...] runs only the tests named (by substring),
 * for working on one of them; unset, all run.
 */
#define T_RUN(fn)                                                          \
	do {                                                               \
		const char *only_ = getenv("PP_TEST_ONLY");                \
		if (!only_ || strstr(only_, #fn))                          \
			RUN_TEST(fn);                                      \
	} while (0)

int main(int argc, char **argv)
{
	struct pp_port *probe;
	struct t_env e;

	if (argc > 1)
		t_fwd_path = argv[1];
	if (geteuid() != 0)
		pp_test_skip("af_xdp needs root (network namespaces, XDP programs)");
	atexit(t_cleanup);
	signal(SIGINT, t_on_signal);
	signal(SIGTERM, t_on_signal);
	signal(SIGHUP, t_on_signal);
	signal(SIGPIPE, t_on_signal);
	pp_test_capture_log();
	pp_log_set_handler(t_log_fn, NULL, PP_LOG_INFO);
	t_setup(T_QUEUES);

	/* Is the driver built, and does this kernel take XDP sockets? */
	e = t_env_create();
	probe = t_open(&e, "", 1);
	if (!probe && pp_test_log_has("unknown driver"))
		pp_test_skip("the af_xdp driver is not built (libxdp-dev, libbpf-dev)");
	if (!probe)
		pp_test_skip("no AF_XDP here: %s", pp_test_last_log);
	CHECK_EQ(pp_port_close(probe), 0);
	t_env_destroy(&e);

	T_RUN(test_roundtrip);
	T_RUN(test_roundtrip_two_queues);
	T_RUN(test_small_rings);
	T_RUN(test_shared_umem_larger_ring);
	T_RUN(test_rx_held_bound);
	T_RUN(test_reopen);
	T_RUN(test_two_ports_share);
	T_RUN(test_errors);
	T_RUN(test_umem_growth_refused);
	T_RUN(test_fd_limit);
	T_RUN(test_sigterm_detaches);
	T_RUN(test_sigkill_stale_detached);
	T_RUN(test_fwd_sigint_detaches);
	T_RUN(test_tx_bounds);
	T_RUN(test_tx_frag);
	T_RUN(test_mtu_threshold);
	T_RUN(test_mtu9000_refused);
	T_RUN(test_mtu9000_roundtrip);
	T_RUN(test_mtu_umem_mode);
	T_RUN(test_mtu9000_tx);

	/* Teardown leaves no namespace and no link. */
	t_cleanup();
	CHECK(sh("ip netns list | grep -qw %s", t_ns) != 0);
	CHECK(sh("ip link show %s >/dev/null 2>&1", t_near) != 0);
	return pp_test_result();
}
