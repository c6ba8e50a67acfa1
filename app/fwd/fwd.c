/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd - the forwarder the benchmarks run: receive on the first port,
 * redirect every frame to the second, one thread per queue.
 *
 *   fwd --port DEV --port DEV [--mode redirect|pass] [--queues N]
 *       [--duration S] [--warmup S] [--refill single|list|array]
 *       [--json FILE] [--arena-mb MB] [--cpus LIST]
 *       [--bidir] [--tx-first N] [--tx-len L] [--verify] [--count N]
 *       [--telemetry PREFIX] [--frag SIZE|auto] [--mac-swap] [--mtu M]
 *       [--pcap FILE] [--keep N] [--arena-max MB [--grow-step MB]
 *       [--grow-wmark MB] [--shrink-delay MS]]
 *
 * When the second port is one end of a veth pair, the other end is the
 * receiver and gets its own thread per queue: with --mode pass it hands
 * every frame to the stack (the page leaves its pool and is freed through
 * the allocator), with --mode redirect it drops them back into its pool.
 * When the second port has no peer, --mode pass passes on the first port.
 *
 *   fwd --port null0 --port veth0,peer=veth1 --mode pass   (the seed's
 *       XDP-redirect-into-veth workload)
 *   fwd --port null0 --port null1 --mode redirect          (null -> null)
 *
 * Two ports on one wire (two NICs cabled together, or the two ends of a
 * veth pair given as one --port): --bidir makes each port redirect to the
 * other, one thread per queue polling both (testpmd's io forwarding with
 * one forwarding core), and --tx-first N starts the traffic with N frames
 * per TX queue of each port (testpmd's "start tx_first"). The frames then
 * circulate for ever. --verify checks every frame at every hop (a number
 * and a payload pattern written by the first burst), and at the end drains
 * the wire and accounts for every injected frame: it came back exactly
 * once, or a counter says where it was dropped. Exit status 1 when a frame
 * was corrupted, duplicated or vanished.
 *
 *   fwd --port e1000e:0000:00:02.0 --port e1000e:0000:00:03.0 --bidir \
 *       --tx-first 32 --verify --count 20000
 *
 * One port that is not a veth pair is the loop topology (testpmd's
 * --port-topology=loop): every frame goes back out of the port it came
 * in on, with --mac-swap its Ethernet addresses swapped (testpmd's
 * macswap). --tx-first and --verify work as with two ports:
 *
 *   fwd --port virtio_user:path=/run/vhost0.sock --tx-first 32 --verify
 *
 * Ports of PCI drivers (e1000e) reach their device through VFIO: fwd puts
 * every such device in one PP_IOVA_VFIO domain, maps the arena into it and
 * gives it to those ports (the devices must be bound to vfio-pci, see
 * pp-devbind).
 *
 * --frag SIZE|auto makes the ports' RX buffers fragments of their pools'
 * pages instead of a page each: it adds frag=SIZE to every --port, which
 * null and veth take (a veth end copies each frame it receives into a
 * fragment; auto sizes it to the frame), virtio_user takes as a size (its
 * back-end writes into fragments posted before the frame is known, so
 * not auto) and af_xdp refuses. Passed
 * fragments stay in their pool and the stack returns them there.
 *
 * --telemetry PREFIX serves the allocator's, ports' and pools' statistics
 * while it runs: dpdk-telemetry.py -f PREFIX (doc/telemetry.md).
 *
 * --pcap FILE writes every packet fwd forwards, as it goes out, to a new
 * pcap file (fwd_pcap.c says which packets those are in each topology).
 * --keep N receives N packets on the first port before the run and holds
 * them to the end: an application leaking RX buffers (fwd_keep.c).
 *
 * --arena-max MB makes the arena growable: it starts at --arena-mb and
 * the allocator's growth thread adds --grow-step at a time as the traffic
 * needs pages, up to MB, and gives idle steps back (fwd_growth.c).
 *
 * A line per second, a summary at the end or on SIGINT. The regions marked
 * [doc:...] are quoted by doc/net.md.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fwd.h"
#include "pp_cli.h"

#define MAX_QUEUES 16
#define MAX_THREADS (2 * MAX_QUEUES)

FILE *fwd_out;

/* Set by SIGINT/SIGTERM or the timer; lock-free, so a handler may store. */
static atomic_int stop;

struct worker {
	pthread_t tid;
	struct pp_port *port[2]; /* polled in turn; port[1] only with --bidir */
	unsigned int queue;
	int cpu;
	double cpu_s; /* the thread's CPU time at its end */
	/* The worker's own; read after it joined. */
	uint64_t busy_cycles;    /* over polls that received frames */
	uint64_t busy_frames;
	uint64_t busy_polls;     /* frames per busy poll: the mean burst */
};

/*
 * The time stamp counter (TSC cycles; a clock's nanoseconds elsewhere):
 * what testpmd's --record-core-cycles reads, so that the two tools'
 * cycles per packet compare.
 */
static inline uint64_t cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* What the stack read (per thread), so that the read is real. */
static __thread uint64_t seq_sum;

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t rx_sum(struct pp_port *p, size_t field)
{
	struct pp_rxq_stats s;
	uint64_t sum = 0;

	for (unsigned int q = 0; p && q < pp_port_nr_rxq(p); q++) {
		pp_port_rxq_stats(p, q, &s);
		sum += *(uint64_t *)((char *)&s + field);
	}
	return sum;
}

uint64_t tx_sum(struct pp_port *p, size_t field)
{
	struct pp_txq_stats s;
	uint64_t sum = 0;

	for (unsigned int q = 0; p && q < pp_port_nr_txq(p); q++) {
		pp_port_txq_stats(p, q, &s);
		sum += *(uint64_t *)((char *)&s + field);
	}
	return sum;
}

uint64_t drops(struct pp_port *p)
{
	return RX(p, drops) + RX(p, errors) + TX(p, drops) + TX(p, errors);
}

/*
 * What an exit before the run must give back, in the reverse order of
 * creation, so that a refused --port leaves nothing behind (a sanitizer
 * build would report it as a leak and change the exit status).
 */
static struct {
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_dma *dma;
	struct pp_port *port[2];  /* [1]: a second --port; a veth peer
				   * closes with its first end */
} held;

static int give_back(int status)
{
	pcap_abandon();
	for (int i = 1; i >= 0; i--)
		if (held.port[i])
			pp_port_close(held.port[i]);
	if (held.dma) {
		pp_dma_unmap_arena(held.dma, held.arena);
		pp_dma_destroy(held.dma);
	}
	if (held.alloc)
		pp_allocator_destroy(held.alloc);
	if (held.arena)
		pp_arena_destroy(held.arena);
	return status;
}

/* --telemetry: report the allocator, the ports and their RX pools. */
static int telemetry_start(const char *prefix, struct pp_allocator *alloc,
			   struct pp_port *const ports[3])
{
	struct pp_telemetry_opts o = { .sz = sizeof(o), .prefix = prefix };
	char name[PP_TELEMETRY_NAME_MAX + 1];

	pp_telemetry_register_allocator(alloc, "fwd");
	for (unsigned int i = 0; i < 3; i++) {
		if (!ports[i] || (i && ports[i] == ports[i - 1]))
			continue;
		pp_telemetry_register_port(ports[i], NULL);
		for (unsigned int q = 0; q < pp_port_nr_rxq(ports[i]); q++) {
			snprintf(name, sizeof(name), "%s-rxq%u",
				 pp_port_name(ports[i]), q);
			pp_telemetry_register_pool(pp_port_rxq_pool(ports[i], q),
						   name);
		}
	}
	return pp_telemetry_start(&o);
}

/* Before the ports close: nothing reads them after this. */
static void telemetry_stop(struct pp_allocator *alloc,
			   struct pp_port *const ports[3])
{
	pp_telemetry_stop();
	pp_telemetry_unregister(alloc);
	for (unsigned int i = 0; i < 3; i++) {
		for (unsigned int q = 0; ports[i] && q < pp_port_nr_rxq(ports[i]); q++)
			pp_telemetry_unregister(pp_port_rxq_pool(ports[i], q));
		pp_telemetry_unregister(ports[i]);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fwd --port DEV --port DEV [--mode redirect|pass] [--queues N]\n"
		"           [--duration S] [--warmup S] [--refill single|list|array]\n"
		"           [--json FILE] [--arena-mb MB] [--cpus LIST]\n"
		"           [--bidir] [--tx-first N] [--tx-len L] [--verify] [--count N]\n"
		"           [--telemetry PREFIX] [--frag SIZE|auto] [--mac-swap]\n"
		"           [--mtu M] [--pcap FILE] [--keep N]\n"
		"           [--arena-max MB [--grow-step MB] [--grow-wmark MB]\n"
		"           [--shrink-delay MS]]\n"
		"       fwd --port DEV [...]   (one port: loop topology, frames go back\n"
		"                              out of the same port)\n"
		"       fwd --help | --version\n"
		"  DEV: null0[,size=64] | veth0,peer=veth1[,ring=1024] | af_xdp:IFNAME\n"
		"       | e1000e:0000:00:02.0 (bound to vfio-pci: pp-devbind)\n"
		"       | virtio_user:path=SOCK[,queues=N][,queue_size=N][,server=1]\n"
		"  --port DEV            a port; the first receives, the second sends\n"
		"                        (at most two)\n"
		"  --mode redirect|pass  redirect: each frame goes out of the second\n"
		"                        port; pass: to the stack (default redirect)\n"
		"  --queues N            RX queues per port, a thread each, 1-%d\n"
		"                        (default 1)\n"
		"  --duration S          seconds the rates are measured, after the\n"
		"                        warm-up (default 10)\n"
		"  --warmup S            seconds before the rates count (default 0)\n"
		"  --refill single|list|array\n"
		"                        how the RX pools refill from the allocator\n"
		"                        (default array)\n"
		"  --arena-mb MB         the arena's size (default 32 + 32 per queue); a\n"
		"                        growable one's at the start, never given back\n"
		"  --arena-max MB        a growable arena: it grows as the traffic needs\n"
		"                        pages, up to MB, and gives idle steps back (not\n"
		"                        with af_xdp or virtio_user ports, which register\n"
		"                        the arena once) (default: off, a fixed arena)\n"
		"  --grow-step MB        what each growth adds, rounded up to 2 MiB\n"
		"                        (default 32)\n"
		"  --grow-wmark MB       grow when less than MB is free: more than the\n"
		"                        ports take in a growth's time (default a\n"
		"                        step)\n"
		"  --shrink-delay MS     how long the free memory stays a step above the\n"
		"                        grow watermark before a step is given back\n"
		"                        (default 1000)\n"
		"  --cpus LIST           the CPUs of the worker threads, one each in turn\n"
		"                        (e.g. 2,3 or 1-4; default: the CPUs this\n"
		"                        process may run on, see taskset)\n"
		"  --json FILE           the summary as JSON; '-' is stdout, and the\n"
		"                        per-second lines and the summary then go to\n"
		"                        stderr (default: none)\n"
		"  --bidir               each port forwards to the other (one --port: a\n"
		"                        veth pair's two ends)\n"
		"  --tx-first N          N frames per TX queue start a wire loop, up to\n"
		"                        %u (default 0: none)\n"
		"  --tx-len L            their length, %u-%u bytes (default %u)\n"
		"  --verify              check every frame of the wire loop and account\n"
		"                        for all at the end\n"
		"  --count N             stop once N frames were delivered (default 0:\n"
		"                        run for --duration)\n"
		"  --telemetry PREFIX    serve the statistics while it runs:\n"
		"                        dpdk-telemetry.py -f PREFIX (default: off)\n"
		"  --frag SIZE|auto      RX buffers are SIZE-byte fragments of the RX\n"
		"                        pools' pages (auto: sized to each frame), by\n"
		"                        adding frag= to each port (null and veth take\n"
		"                        it, virtio_user a size only, af_xdp not)\n"
		"                        (default: off, a page per frame)\n"
		"  --mac-swap            swap each frame's Ethernet addresses before it\n"
		"                        goes out\n"
		"  --mtu M               the ports' MTU, %d-%d: frames of up to M + 18\n"
		"                        bytes, over one buffer in segments (default\n"
		"                        1500, or what --tx-len needs)\n"
		"  --pcap FILE           write the packets fwd forwards to FILE, a new\n"
		"                        pcap file (tcpdump -r FILE), whole (snap length\n"
		"                        MTU + 18, multi-buffer packets joined): what\n"
		"                        goes out of the second port (with --bidir out\n"
		"                        of either), or in the loop topology back out of\n"
		"                        the port; not --tx-first's frames. FILE must\n"
		"                        not exist (default: off; needs libpcap)\n"
		"  --keep N              before forwarding, receive N packets on the\n"
		"                        first port (queue 0; after --tx-first) and hold\n"
		"                        them until the ports close: an application\n"
		"                        leaking RX buffers (default 0)\n"
		"  -h, --help            this text\n"
		"  -V, --version         the version, and the commit it was built from\n",
		MAX_QUEUES, LOOP_INJECT_MAX, LOOP_LEN_MIN, LOOP_LEN_MAX,
		LOOP_LEN_DEFAULT, PP_PORT_MTU_MIN, PP_PORT_MTU_MAX);
}

/* [doc:prog] */
/* The programs: one call per burst, one verdict per frame. */
static void prog_redirect(const struct pp_prog_ctx *ctx,
			  struct pp_frame *frames, uint16_t *verdicts,
			  unsigned int n)
{
	(void)ctx;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_REDIRECT_TO(0);
	if (mac_swap)
		frames_mac_swap(frames, n);
}

static void prog_pass(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		      uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_PASS;
}

static void prog_drop(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		      uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = PP_XDP_DROP;
}
/* [/doc:prog] */

/* [doc:stack] */
/*
 * The "stack": it owns passed frames (whole pages have left the pool,
 * fragments stay in theirs), reads the header as a stack would, and frees
 * them: pages through the allocator, fragments back to their pool.
 */
static void stack_consume(void *arg, struct pp_port *port,
			  struct pp_frame *frames, unsigned int n)
{
	uint64_t seq;

	(void)arg;
	for (unsigned int i = 0; i < n; i++) {
		memcpy(&seq, (char *)pp_frame_data(&frames[i]) + PP_NULL_SEQ_OFF,
		       sizeof(seq));
		seq_sum += seq;
	}
	/* Whole pages to the allocator, fragments (--frag) to their pool. */
	pp_frame_put_bulk(pp_port_allocator(port), frames, n);
}
/* [/doc:stack] */

/* [doc:rx-loop] */
static void *poll_thread(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t t0 = cycles();
		unsigned int n = pp_port_poll(w->port[0], w->queue,
					      PP_NET_BURST);

		if (w->port[1])
			n += pp_port_poll(w->port[1], w->queue, PP_NET_BURST);
		/* Busy time only, as testpmd counts it: polls that
		 * brought frames, divided by those frames. */
		if (n) {
			w->busy_cycles += cycles() - t0;
			w->busy_frames += n;
			w->busy_polls++;
		}
	}
	/* What the thread ran, whatever else shared its CPU. */
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	w->cpu_s = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	return NULL;
}
/* [/doc:rx-loop] */

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

/* The ports of one run and what "delivered" means for them. */
struct run {
	struct pp_port *in, *out, *sink;
	bool pass, bidir;
};

/* Frames that reached their end: the sink, the stack, or the wire. The
 * first bursts are not forwarded frames, so --tx-first's are taken off. */
static uint64_t delivered(const struct run *r)
{
	if (r->bidir)
		return TX(r->in, packets) + TX(r->out, packets) - loop.injected;
	if (r->sink)
		return RX(r->sink, packets);
	return r->pass ? RX(r->in, xdp_pass) : TX(r->out, packets);
}

static uint64_t received(const struct run *r)
{
	return RX(r->in, packets) + (r->bidir ? RX(r->out, packets) : 0);
}

/*
 * What one page costs the pool's allocation path in this refill mode: a
 * fresh pool on this thread, emptied 64 pages at a time and refilled from
 * the allocator, the pages leaving as on PASS. Only the allocation is
 * timed (two clock reads per 64 pages).
 */
static double alloc_ns_per_page(struct pp_allocator *alloc,
				enum pp_pool_refill refill)
{
	struct pp_pool_params pp = {
		.sz = sizeof(pp), .allocator = alloc, .nid = PP_NUMA_NODE_ANY,
		.offset = PP_FRAME_HEADROOM, .refill = refill, .name = "probe",
	};
	struct pp_page *pages[PP_POOL_CACHE_REFILL];
	struct pp_pool *pool = pp_pool_create(&pp);
	double t = 0, end = now_s() + 0.05;
	uint64_t n = 0;

	if (!pool)
		return -1;
	while (now_s() < end) {
		double t0 = now_s();
		unsigned int got = pp_pool_alloc_bulk(pool, pages,
						      PP_POOL_CACHE_REFILL);

		t += now_s() - t0;
		n += got;
		for (unsigned int i = 0; i < got; i++)
			pp_pool_release_page(pool, pages[i]);
		pp_free_pages_bulk(alloc, pages, got);
		if (!got)
			break;
	}
	pp_pool_destroy(pool);
	return n ? t * 1e9 / (double)n : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "queues", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "refill", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "arena-mb", required_argument, NULL, 'a' },
		{ "bidir", no_argument, NULL, 'b' },
		{ "tx-first", required_argument, NULL, 't' },
		{ "tx-len", required_argument, NULL, 'l' },
		{ "verify", no_argument, NULL, 'v' },
		{ "count", required_argument, NULL, 'c' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "telemetry", required_argument, NULL, 'T' },
		{ "frag", required_argument, NULL, 'F' },
		{ "mac-swap", no_argument, NULL, 'M' },
		{ "mtu", required_argument, NULL, 'U' },
		{ "pcap", required_argument, NULL, 'P' },
		{ "keep", required_argument, NULL, 'K' },
		{ "arena-max", required_argument, NULL, 'X' },
		{ "grow-step", required_argument, NULL, 'G' },
		{ "shrink-delay", required_argument, NULL, 'S' },
		{ "grow-wmark", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct pp_cli_opts cli = {
		.tool = "fwd",
		.longopts = opts,
		.usage = usage,
	};
	const char *dev[2] = { NULL, NULL }, *json = NULL;
	const char *mode = "redirect", *refill_name = "array";
	const char *telemetry = NULL, *frag = NULL, *pcap = NULL;
	char frag_dev[2][256];
	enum pp_pool_refill refill = PP_REFILL_ARRAY;
	unsigned int queues = 1, nr_dev = 0, nr_w = 0, tx_first = 0, mtu = 0;
	unsigned int keep = 0, shrink_delay = 0;
	double duration = 10, warmup = 0, arena_mb = 0, arena_max = 0;
	double grow_step = 0, grow_wmark = 0;
	unsigned long long count = 0;
	bool bidir = false, verify = false, uses_vfio[2] = { false, false };
	struct worker w[MAX_THREADS];
	const char *cpus = NULL;
	cpu_set_t allowed, cpu_set;
	int c, cpu_list[CPU_SETSIZE], nr_cpus = 0;

	fwd_out = stdout;
	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'p':
			if (nr_dev == 2) {
				fprintf(stderr, "fwd: at most two --port\n");
				usage(stderr);
				exit(2);
			}
			dev[nr_dev++] = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'q':
			queues = (unsigned int)pp_cli_uint("fwd", "--queues", optarg, 1, MAX_QUEUES);
			break;
		case 'd':
			duration = pp_cli_double("fwd", "--duration", optarg, 1e-3, 1e9);
			break;
		case 'w':
			warmup = pp_cli_double("fwd", "--warmup", optarg, 0, 1e9);
			break;
		case 'r':
			refill_name = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'a':
			arena_mb = pp_cli_double("fwd", "--arena-mb", optarg, 0, 1 << 24);
			pp_cli_fits_memory("fwd", "--arena-mb",
					   (unsigned long long)(arena_mb * (1 << 20)));
			break;
		case 'b':
			bidir = true;
			break;
		case 't':
			tx_first = (unsigned int)pp_cli_uint("fwd", "--tx-first", optarg, 0, LOOP_INJECT_MAX);
			break;
		case 'l':
			loop.len = (unsigned int)pp_cli_uint("fwd", "--tx-len", optarg, LOOP_LEN_MIN, LOOP_LEN_MAX);
			break;
		case 'v':
			verify = true;
			break;
		case 'C':
			cpus = optarg;
			break;
		case 'c':
			count = pp_cli_uint("fwd", "--count", optarg, 0, ULLONG_MAX);
			break;
		case 'T':
			telemetry = optarg;
			break;
		case 'F':
			frag = optarg;
			break;
		case 'M':
			mac_swap = true;
			break;
		case 'U':
			mtu = (unsigned int)pp_cli_uint("fwd", "--mtu", optarg, PP_PORT_MTU_MIN, PP_PORT_MTU_MAX);
			break;
		case 'P':
			pcap = optarg;
			break;
		case 'K':
			keep = (unsigned int)pp_cli_uint("fwd", "--keep", optarg, 0, KEEP_MAX);
			break;
		case 'X':
			arena_max = pp_cli_double("fwd", "--arena-max", optarg, 1, 1 << 24);
			pp_cli_fits_memory("fwd", "--arena-max",
					   (unsigned long long)(arena_max * (1 << 20)));
			break;
		case 'G':
			grow_step = pp_cli_double("fwd", "--grow-step", optarg, 2, 1 << 20);
			break;
		case 'W':
			grow_wmark = pp_cli_double("fwd", "--grow-wmark", optarg, 1, 1 << 20);
			break;
		case 'S':
			shrink_delay = (unsigned int)pp_cli_uint("fwd", "--shrink-delay", optarg, 1, 3600 * 1000);
			break;
		}
	}
	pp_cli_no_operands(&cli, argc, argv);
	if (nr_dev < 1) {
		fprintf(stderr, "fwd: give two --port, or one (a veth pair with --bidir, or any other port for the loop topology)\n");
		usage(stderr);
		exit(2);
	}
	/* The worker CPUs: --cpus, within the affinity mask, or the mask. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		fprintf(stderr, "fwd: cannot read the CPU affinity mask: %s\n",
			strerror(errno));
		return 1;
	}
	if (cpus) {
		if (pp_cli_parse_cpus(cpus, &cpu_set) < 1) {
			fprintf(stderr, "fwd: --cpus takes a CPU list such as 2,3 or 1-4, not '%s'\n",
				cpus);
			return 2;
		}
		for (int i = 0; i < CPU_SETSIZE; i++) {
			if (CPU_ISSET(i, &cpu_set) && !CPU_ISSET(i, &allowed)) {
				fprintf(stderr, "fwd: --cpus %s: CPU %d is not one this process may run on (see taskset -p %d)\n",
					cpus, i, (int)getpid());
				return 2;
			}
		}
	} else {
		cpu_set = allowed;
	}
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &cpu_set))
			cpu_list[nr_cpus++] = i;
	if (json && !strcmp(json, "-"))
		fwd_out = stderr;
	if (strcmp(mode, "redirect") && strcmp(mode, "pass")) {
		fprintf(stderr, "fwd: --mode must be redirect or pass, not '%s'\n", mode);
		return 2;
	}
	if (!strcmp(refill_name, "single"))
		refill = PP_REFILL_SINGLE;
	else if (!strcmp(refill_name, "list"))
		refill = PP_REFILL_LIST;
	else if (strcmp(refill_name, "array")) {
		fprintf(stderr, "fwd: --refill must be single, list or array, not '%s'\n",
			refill_name);
		return 2;
	}
	if (bidir && strcmp(mode, "redirect")) {
		fprintf(stderr, "fwd: --bidir forwards each port to the other: use --mode redirect\n");
		return 2;
	}
	if (tx_first > LOOP_INJECT_MAX || loop.len < LOOP_LEN_MIN ||
	    loop.len > LOOP_LEN_MAX) {
		fprintf(stderr, "fwd: --tx-first takes 0..%u frames per queue, --tx-len %u..%u bytes\n",
			LOOP_INJECT_MAX, LOOP_LEN_MIN, LOOP_LEN_MAX);
		return 2;
	}
	/* Without --mtu, the ports carry the loop's frames. */
	if (!mtu)
		mtu = loop.len > PP_PORT_MTU_DEFAULT + 14 ?
			      loop.len - 14 : PP_PORT_MTU_DEFAULT;
	if (loop.len > mtu + PP_ETH_OVERHEAD) {
		fprintf(stderr, "fwd: --tx-len %u does not fit --mtu %u (frames of up to %u bytes): raise --mtu to %u\n",
			loop.len, mtu, mtu + PP_ETH_OVERHEAD,
			loop.len - PP_ETH_OVERHEAD);
		return 2;
	}
	if (verify && (!(bidir || nr_dev == 1) || !tx_first)) {
		fprintf(stderr, "fwd: --verify checks the frames of a wire loop: add --bidir and --tx-first N\n");
		return 2;
	}
	if (keep && verify) {
		fprintf(stderr, "fwd: --keep takes frames out of the wire loop --verify accounts for: give one of them\n");
		return 2;
	}
	if ((grow_step || grow_wmark || shrink_delay) && !arena_max) {
		fprintf(stderr, "fwd: --%s tunes a growable arena: add --arena-max MB\n",
			grow_step ? "grow-step" : grow_wmark ? "grow-wmark" :
			"shrink-delay");
		return 2;
	}
	if (arena_max && arena_mb > arena_max) {
		fprintf(stderr, "fwd: --arena-max %.0f is below --arena-mb %.0f: the arena starts at --arena-mb MiB and grows up to --arena-max MiB\n",
			arena_max, arena_mb);
		return 2;
	}
	if (arena_max && growth_check_ports(dev, nr_dev))
		return 2;
	/* Before the run, not after it. */
	if (json)
		pp_cli_json_writable("fwd", json);

	/* --frag: the drivers check the size, against their own headroom. */
	for (unsigned int i = 0; frag && i < nr_dev; i++) {
		if (strstr(dev[i], ",frag=")) {
			fprintf(stderr, "fwd: --port %s has frag= and --frag is given: give one of them\n",
				dev[i]);
			return 2;
		}
		if ((size_t)snprintf(frag_dev[i], sizeof(frag_dev[i]),
				     "%s,frag=%s", dev[i], frag) >=
		    sizeof(frag_dev[i])) {
			fprintf(stderr, "fwd: --port %s with --frag %s is too long\n",
				dev[i], frag);
			return 2;
		}
		dev[i] = frag_dev[i];
	}

	/* Before the run too; an exit before it removes the file again. */
	if (pcap && pcap_open_file(pcap, mtu + PP_ETH_OVERHEAD))
		return 2;

	/* [doc:setup] */
	/* Memory: one arena, 2 MiB pages if there are any, else 4 KiB. */
	if (!arena_mb)
		arena_mb = 32 + 32 * queues;
	/* --arena-max: reserve that, commit --arena-mb (doc/growth.md);
	 * without --arena-mb it starts at the default or at the max. */
	if (arena_max && arena_max < arena_mb)
		arena_mb = arena_max;
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = (size_t)(arena_mb * (1 << 20)),
		.page_size = PP_PAGE_SIZE_2M, .numa_node = PP_NUMA_NODE_ANY,
		.flags = PP_ARENA_F_ALLOW_4K, .name = "fwd",
		.max_size = (size_t)(arena_max * (1 << 20)),
		.grow_step = (size_t)(grow_step * (1 << 20)),
	};
	struct pp_arena *arena = pp_arena_create(&ao);
	if (!arena) {
		fprintf(stderr, "fwd: cannot create a %.0f MiB arena: %s (the message above says why)\n",
			arena_mb, strerror(errno));
		pp_cli_hugepage_hint("fwd", (unsigned long)arena_mb);
		return give_back(1);
	}
	struct pp_allocator_opts alo = {
		.sz = sizeof(alo), .arenas = &arena, .nr_arenas = 1,
		.shrink_delay_ms = shrink_delay,
		.grow_wmark = (unsigned long)(grow_wmark * (1 << 20)) >> PP_PAGE_SHIFT,
	};
	held.arena = arena;
	struct pp_allocator *alloc = pp_allocator_create(&alo);
	if (!alloc) {
		fprintf(stderr, "fwd: cannot create the allocator: %s\n", strerror(errno));
		return give_back(1);
	}
	held.alloc = alloc;
	growth_start(alloc, alo.grow_wmark);
	loop_wait_growth = pp_arena_growable(arena);
	/* PCI ports (e1000e) DMA through the IOMMU: one domain for all. */
	struct pp_dma *dma = vfio_domain_create(dev, nr_dev, arena, uses_vfio);
	held.dma = dma;

	/* Ports: every RX queue gets a page_pool refilled the asked way. */
	struct pp_port_conf conf = {
		.sz = sizeof(conf), .allocator = alloc, .nr_rxq = queues,
		.refill = refill, .nid = PP_NUMA_NODE_ANY, .mtu = mtu,
	};
	struct pp_port_conf conf_in = conf, conf_out = conf;
	conf_in.dma = uses_vfio[0] ? dma : NULL;
	conf_out.dma = uses_vfio[1] ? dma : NULL;
	struct pp_port *in = pp_port_open(dev[0], &conf_in);
	/* One port without a peer: the loop topology, out is in. */
	bool loop_topo = in && nr_dev == 1 && !pp_port_peer(in);
	struct pp_port *out = !in ? NULL : nr_dev == 2 ?
			      pp_port_open(dev[1], &conf_out) :
			      loop_topo ? in : pp_port_peer(in);
	int open_err = errno;

	held.port[0] = in;
	held.port[1] = nr_dev == 2 ? out : NULL;
	if (in && nr_dev == 1 && !loop_topo && !bidir) {
		fprintf(stderr, "fwd: one --port that is a veth pair: add --bidir, or give a second --port\n");
		return give_back(2);
	}
	if (loop_topo)
		bidir = true;
	if (!in || !out) {
		int err = open_err;

		if (in && nr_dev == 1) {
			fprintf(stderr, "fwd: --bidir with one --port needs a veth pair (veth0,peer=veth1)\n");
			return give_back(2);
		}
		/*
		 * pp_port_open() says EINVAL for a device string the drivers
		 * cannot take (unknown driver, key or value) and ENODEV for
		 * one that names nothing here (no such interface, not the
		 * device the driver drives): the --port is wrong, exit 2.
		 * Anything else is a device that is there but cannot be
		 * opened (no back-end, no privilege, no memory): exit 1.
		 */
		if (err == EINVAL || err == ENODEV) {
			fprintf(stderr, "fwd: --port %s: %s (the message above names the bad part)\n",
				in ? dev[1] : dev[0], strerror(err));
			return give_back(2);
		}
		fprintf(stderr, "fwd: cannot open port '%s': %s (the message above says why)\n",
			in ? dev[1] : dev[0], strerror(err));
		return give_back(1);
	}
	bool pass = !strcmp(mode, "pass");
	/* The loop topology counts its one port once: run.out is NULL. */
	struct run run = {
		.in = in, .out = loop_topo ? NULL : out,
		.sink = bidir ? NULL : pp_port_peer(out),
		.pass = pass, .bidir = bidir,
	};
	struct pp_port *sink = run.sink;

	/* The first port forwards; a veth peer receives, by --mode. With
	 * --bidir the second forwards back to the first. */
	struct pp_prog fwd_prog = {
		.sz = sizeof(fwd_prog),
		.fn = verify ? prog_verify_redirect : prog_redirect,
		.targets = { out }, .nr_targets = 1,
	};
	if (pass && !sink)
		fwd_prog.fn = prog_pass;
	if (pcap && fwd_prog.fn == prog_pass) {
		fprintf(stderr, "fwd: --pcap captures what fwd forwards, and --mode pass without a veth peer forwards nothing (it passes to the stack): use --mode redirect\n");
		return give_back(2);
	}
	/* Only with --pcap: the capture is not in the normal path. */
	if (pcap)
		pcap_capture(&fwd_prog);
	pp_port_set_prog(in, &fwd_prog);
	if (bidir && !loop_topo) {
		fwd_prog.targets[0] = in;
		pp_port_set_prog(out, &fwd_prog);
	}
	if (sink) {
		struct pp_prog sink_prog = {
			.sz = sizeof(sink_prog),
			.fn = pass ? prog_pass : prog_drop,
		};
		pp_port_set_prog(sink, &sink_prog);
	}
	/* [/doc:setup] */

	struct pp_port *const tm_ports[3] = { in, out, sink };
	if (telemetry) {
		char sock[PATH_MAX];
		int err = telemetry_start(telemetry, alloc, tm_ports);

		if (err) {
			fprintf(stderr, "fwd: --telemetry %s: cannot start the server (the message above says why)\n",
				telemetry);
			/* -EINVAL: a prefix it does not take, to correct. */
			return give_back(err == -EINVAL ? 2 : 1);
		}
		/* Where a client finds it, and how to ask. */
		if (!pp_telemetry_socket_path(sock, sizeof(sock)))
			fprintf(fwd_out, "fwd: telemetry at %s (dpdk-telemetry.py -f %s)\n",
				sock, telemetry);
	}

	/* Workers: queue q of the forwarder, then of the receiver; with
	 * --bidir one thread per queue polls both ports. One direction
	 * receives on its input port only: polling the output port too
	 * would take (and drop) whatever that port receives, which for a
	 * null port is a second full-rate source. */
	for (unsigned int q = 0; q < queues; q++) {
		w[nr_w++] = (struct worker){
			.port = { in, run.bidir ? run.out : NULL },
			.queue = q };
		if (sink)
			w[nr_w++] = (struct worker){ .port = { sink }, .queue = q };
	}
	/* The stack runs on the receiving threads. */
	if (pass)
		pp_port_set_stack(sink ? sink : in, stack_consume, NULL);

	/* The first bursts, before any worker owns the pools. */
	if (tx_first) {
		loop_inject(in, tx_first);
		if (run.out)
			loop_inject(out, tx_first);
		if (!loop.injected) {
			fprintf(stderr, "fwd: --tx-first: the ports took no frame (link down? the log above says)\n");
			if (telemetry)
				telemetry_stop(alloc, tm_ports);
			return give_back(1);
		}
	}

	/* Over a growable arena the first bursts may have taken every page:
	 * the forwarding starts once the growth thread restored the margin. */
	if (tx_first)
		growth_settle();

	/* After --tx-first: a veth end receives only what was sent into it. */
	if (keep) {
		unsigned int got = keep_take(in, keep);

		if (got < keep) {
			fprintf(stderr, "fwd: --keep %u: %s received only %u packets (a veth end receives what is sent into it: with --bidir, --tx-first N sends N)\n",
				keep, pp_port_name(in), got);
			keep_release(alloc);
			if (telemetry)
				telemetry_stop(alloc, tm_ports);
			return give_back(1);
		}
		fprintf(stderr, "fwd: --keep: holding %u packets (%u frames) received on %s queue 0 until the ports close\n",
			got, keep_frames(), pp_port_name(in));
	}

	growth_workers_start();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (unsigned int i = 0; i < nr_w; i++) {
		w[i].cpu = cpu_list[i % (unsigned int)nr_cpus];
		if (pthread_create(&w[i].tid, NULL, poll_thread, &w[i])) {
			fprintf(stderr, "fwd: cannot start a thread\n");
			return 1;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	/* [doc:report] */
	/* Rates count from the end of the warm-up (t_m, in_m, out_m). */
	double t0 = now_s(), last_t = t0, t_m = t0;
	uint64_t last_in = 0, last_out = 0, in_m = 0, out_m = 0;
	bool warm = warmup == 0;
	/* PCI ports are named by their driver alone ("e1000e:ADDR" opens
	 * "e1000e"): the device string says which is which. */
	fprintf(fwd_out, "fwd: %s %s %s%s%s, mode %s, refill %s, %u queue(s), %d thread(s)%s\n",
	       uses_vfio[0] ? dev[0] : pp_port_name(in), bidir ? "<->" : "->",
	       uses_vfio[1] ? dev[1] : pp_port_name(out),
	       sink ? " -> " : "", sink ? pp_port_name(sink) : "", mode,
	       refill_name, queues, nr_w, dma ? ", VFIO" : "");
	if (tx_first)
		fprintf(fwd_out, "fwd: tx_first: %u frames of %u bytes\n", loop.injected,
		       loop.len);
	if (pcap)
		fprintf(fwd_out, "fwd: capturing the forwarded packets to %s (EN10MB, snap length %u)\n",
			pcap, mtu + PP_ETH_OVERHEAD);
	while (!atomic_load(&stop) && now_s() - t0 < warmup + duration) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		double t = now_s();
		uint64_t rin = received(&run), rout = delivered(&run);
		growth_line(NULL);
		if (count && rout >= count)
			break;
		if (!warm && t - t0 >= warmup) {
			warm = true;
			t_m = t;
			in_m = rin;
			out_m = rout;
		}
		if (t - last_t < 1.0 && t - t0 < warmup + duration)
			continue;
		fprintf(fwd_out, "[%5.1fs] in %7.2f Mpps  delivered %7.2f Mpps  drops %llu",
		       t - t0, (double)(rin - last_in) / (t - last_t) / 1e6,
		       (double)(rout - last_out) / (t - last_t) / 1e6,
		       (unsigned long long)(drops(in) + drops(run.out) + drops(sink)));
		growth_line(fwd_out);
		fputc('\n', fwd_out);
		fflush(fwd_out);
		last_in = rin;
		last_out = rout;
		last_t = t;
	}
	atomic_store(&stop, 1);
	for (unsigned int i = 0; i < nr_w; i++)
		pthread_join(w[i].tid, NULL);
	double elapsed = now_s() - t_m;
	/* The workers wrote the last packets; the flush is not run time. */
	bool pcap_ok = !pcap_close_file();
	uint64_t busy_cycles = 0, busy_frames = 0, busy_polls = 0;
	for (unsigned int i = 0; i < nr_w; i++) {
		busy_cycles += w[i].busy_cycles;
		busy_frames += w[i].busy_frames;
		busy_polls += w[i].busy_polls;
	}
	double cpf = busy_frames ? (double)busy_cycles / (double)busy_frames : 0;
	/* [/doc:report] */

	/* [doc:summary] */
	uint64_t total = delivered(&run);
	uint64_t rin = received(&run) - in_m;
	uint64_t nr_delivered = total - out_m;
	uint64_t nr_drops = drops(in) + drops(run.out) + drops(sink);
	/*
	 * The receiving threads' CPU time per frame delivered, over the whole
	 * run: on a shared machine, steadier than the rate (a thread that
	 * waits for its CPU costs no CPU time), as long as the receiver is
	 * the bottleneck (drops at the veth ring say it is).
	 */
	double sink_cpu = 0;
	for (unsigned int i = 0; i < nr_w; i++)
		if (sink && w[i].port[0] == sink)
			sink_cpu += w[i].cpu_s;
	char js_sink_cpu[32] = "null";
	if (sink && total)
		snprintf(js_sink_cpu, sizeof(js_sink_cpu), "%.2f",
			 sink_cpu / (double)total * 1e9);
	static char js_in[1 << 16], js_out[1 << 16], js_sink[1 << 16];
	static char js_alloc[1 << 14], js_loop[512], js_growth[512];
	bool loop_ok = true;
	if (verify) {
		loop_drain(run.in, run.out);
		loop_ok = loop_report(js_loop, sizeof(js_loop));
	} else {
		snprintf(js_loop, sizeof(js_loop), "null");
	}
	/* After the drain, which returns the loop's pages: with a short
	 * --shrink-delay the thread gives steps back meanwhile. */
	growth_end();
	pp_port_stats_json(in, js_in, sizeof(js_in));
	pp_port_stats_json(out, js_out, sizeof(js_out));
	if (sink)
		pp_port_stats_json(sink, js_sink, sizeof(js_sink));
	else
		snprintf(js_sink, sizeof(js_sink), "null");
	double ns_page = alloc_ns_per_page(alloc, refill);

	/* With --bidir each port's TX ring holds sent frames of the other
	 * port's pool until the driver reclaims them (e1000e does at the
	 * start of a TX burst): an empty burst hands them back, so that
	 * each pool is whole when its port closes. */
	for (unsigned int q = 0; bidir && q < queues; q++) {
		pp_port_tx_burst(in, q % pp_port_nr_txq(in), NULL, 0);
		if (run.out)
			pp_port_tx_burst(out, q % pp_port_nr_txq(out), NULL, 0);
	}
	if (telemetry)
		telemetry_stop(alloc, tm_ports);
	/* The receiver first: its rings hold pages of the forwarder's pool.
	 * A veth pair given as one --port closes with its first end. */
	if (nr_dev == 2)
		pp_port_close(out);    /* and its veth peer */
	pp_port_close(in);
	/* The IOMMU mappings go when no device can use them any more. */
	if (dma) {
		pp_dma_unmap_arena(dma, arena);
		pp_dma_destroy(dma);
	}
	/* The pages --keep held: after the pools' destroy reported them. */
	keep_release(alloc);
	pp_allocator_drain_thread(alloc);
	unsigned long leaked = 0;
	int check = pp_allocator_check(alloc, &leaked);
	pp_allocator_stats_json(alloc, js_alloc, sizeof(js_alloc));

	fprintf(fwd_out, "summary: %.2f s, in %.2f Mpps, delivered %.2f Mpps (%llu frames), drops %llu, alloc %.2f ns/page (%s), pages leaked %lu%s\n",
	       elapsed, (double)rin / elapsed / 1e6,
	       (double)nr_delivered / elapsed / 1e6,
	       (unsigned long long)nr_delivered, (unsigned long long)nr_drops,
	       ns_page, refill_name, leaked, check ? " (allocator check FAILED)" : "");
	growth_report(js_growth, sizeof(js_growth));
	fprintf(fwd_out, "cycles: %.1f per received frame (busy polls: %llu cycles, %llu frames, %llu polls, %.1f frames a poll)\n",
		cpf, (unsigned long long)busy_cycles,
		(unsigned long long)busy_frames, (unsigned long long)busy_polls,
		busy_polls ? (double)busy_frames / (double)busy_polls : 0.0);
	bool count_ok = !count || total >= count;
	if (!count_ok)
		fprintf(stderr, "fwd: forwarded %llu of the %llu frames asked for in %.0f s: the wire is slow or lost frames (see drops), or raise --duration\n",
			(unsigned long long)total, count, warmup + duration);
	if (json) {
		FILE *f = pp_cli_json_open(json);
		if (!f) {
			fprintf(stderr, "fwd: cannot write %s: %s\n", json, strerror(errno));
			return 1;
		}
		fputc('{', f);
		pp_cli_json_ident(f, "fwd");
		fprintf(f, "\"cpus\":[");
		for (unsigned int i = 0; i < nr_w; i++)
			fprintf(f, "%s%d", i ? "," : "", w[i].cpu);
		fprintf(f, "],");
		fprintf(f, "\"frag\":\"%s\",", frag ? frag : "off");
		fprintf(f, "\"mode\":\"%s\",\"refill\":\"%s\",\"queues\":%u,"
			"\"bidir\":%s,\"vfio\":%s,\"warmup_s\":%.3f,"
			"\"duration_s\":%.3f,\"in_packets\":%llu,\"in_pps\":%.0f,"
			"\"packets\":%llu,\"pps\":%.0f,\"total_packets\":%llu,"
			"\"drops\":%llu,\"loop\":%s,\"busy_cycles\":%llu,"
			"\"busy_frames\":%llu,\"cycles_per_frame\":%.2f,"
			"\"alloc_ns_per_page\":%.3f,\"sink_cpu_ns_per_frame\":%s,"
			"\"leaked_pages\":%lu,"
			"\"allocator_check\":%d,\"growth\":%s,"
			"\"ports\":{\"in\":%s,\"out\":%s,"
			"\"sink\":%s},\"allocator\":%s}\n",
			mode, refill_name, queues, bidir ? "true" : "false",
			dma ? "true" : "false", warmup, elapsed,
			(unsigned long long)rin, (double)rin / elapsed,
			(unsigned long long)nr_delivered,
			(double)nr_delivered / elapsed,
			(unsigned long long)total,
			(unsigned long long)nr_drops, js_loop,
			(unsigned long long)busy_cycles,
			(unsigned long long)busy_frames, cpf, ns_page,
			js_sink_cpu, leaked,
			check, js_growth, js_in, js_out, js_sink, js_alloc);
		if (pp_cli_json_close(f)) {
			fprintf(stderr, "fwd: cannot write %s: %s\n", json, strerror(errno));
			return 1;
		}
	}
	/* [/doc:summary] */
	pp_allocator_destroy(alloc);
	pp_arena_destroy(arena);
	return (leaked || check || !loop_ok || !count_ok || !pcap_ok) ? 1 : 0;
}
