/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio_user_priv.h - what the virtio_user driver's files share: the
 * split virtqueue layout (virtio 1.1 section 2.6), the vhost-user
 * messages (QEMU's docs/interop/vhost-user.rst, "Front-end message
 * types"), the per-queue state of the data path, and the port that the
 * open and close (virtio_user.c), the negotiation
 * (virtio_user_negotiate.c) and the reconnect thread
 * (virtio_user_reconnect.c) work on.
 *
 * The layouts are written out here, not taken from <linux/virtio_ring.h>
 * and <linux/vhost_types.h>: the wire format is what matters, and the
 * static_asserts below pin it.
 */
#ifndef VIRTIO_USER_PRIV_H
#define VIRTIO_USER_PRIV_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <pagepool/pp_net_driver.h>

#include "pp_os_handshake.h"

/* ---- split virtqueue (virtio 1.1, 2.6) ------------------------------ */

#define VRING_DESC_F_NEXT 1
#define VRING_DESC_F_WRITE 2
#define VRING_DESC_F_INDIRECT 4
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY 1

struct vring_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct vring_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];
};

struct vring_used_elem {
	uint32_t id;
	uint32_t len;
};

struct vring_used {
	uint16_t flags;
	uint16_t idx;
	struct vring_used_elem ring[];
};

static_assert(sizeof(struct vring_desc) == 16, "virtio 1.1 2.6.5");
static_assert(sizeof(struct vring_used_elem) == 8, "virtio 1.1 2.6.8");

/* Feature bits (virtio 1.1 5.1.3, 6; vhost-user spec). */
#define VIRTIO_NET_F_MRG_RXBUF 15
#define VIRTIO_NET_F_MQ 22
#define VIRTIO_RING_F_INDIRECT_DESC 28
#define VHOST_USER_F_PROTOCOL_FEATURES 30
#define VIRTIO_F_VERSION_1 32
#define VIRTIO_F_IN_ORDER 35

#define VHOST_USER_PROTOCOL_F_MQ 0

/*
 * The virtio-net header in front of every frame (virtio 1.1 5.1.6): with
 * VIRTIO_F_VERSION_1 it always holds num_buffers, 12 bytes, whether or
 * not MRG_RXBUF was negotiated. We offer no offloads: only num_buffers is
 * ever read, and TX writes zeroes.
 */
#define VIRTIO_NET_HDR_LEN 12
#define VIRTIO_NET_HDR_NUM_BUFFERS_OFF 10

/* ---- vhost-user messages -------------------------------------------- */

enum vhost_user_request {
	VHOST_USER_GET_FEATURES = 1,
	VHOST_USER_SET_FEATURES = 2,
	VHOST_USER_SET_OWNER = 3,
	VHOST_USER_SET_MEM_TABLE = 5,
	VHOST_USER_SET_VRING_NUM = 8,
	VHOST_USER_SET_VRING_ADDR = 9,
	VHOST_USER_SET_VRING_BASE = 10,
	VHOST_USER_GET_VRING_BASE = 11,
	VHOST_USER_SET_VRING_KICK = 12,
	VHOST_USER_SET_VRING_CALL = 13,
	VHOST_USER_GET_PROTOCOL_FEATURES = 15,
	VHOST_USER_SET_PROTOCOL_FEATURES = 16,
	VHOST_USER_GET_QUEUE_NUM = 17,
	VHOST_USER_SET_VRING_ENABLE = 18,
	VHOST_USER_REQUEST_MAX = 19,
};

#define VHOST_USER_VERSION 0x1u
#define VHOST_USER_VERSION_MASK 0x3u
#define VHOST_USER_REPLY 0x4u
/* The spec's limit on SET_MEM_TABLE regions (VHOST_MEMORY_BASELINE_NREGIONS). */
#define VHOST_USER_MAX_REGIONS 8
/* SET_VRING_KICK/CALL: no fd travels with the message. */
#define VHOST_USER_VRING_NOFD (1ull << 8)

struct vhost_user_state {
	uint32_t index;
	uint32_t num;
};

struct vhost_user_addr {
	uint32_t index;
	uint32_t flags;
	uint64_t desc;
	uint64_t used;
	uint64_t avail;
	uint64_t log;
};

struct vhost_user_region {
	uint64_t guest_phys_addr;
	uint64_t memory_size;
	uint64_t userspace_addr;
	uint64_t mmap_offset;
};

struct vhost_user_memory {
	uint32_t nregions;
	uint32_t padding;
	struct vhost_user_region regions[VHOST_USER_MAX_REGIONS];
};

#define VHOST_USER_HDR_LEN 12

struct vhost_user_msg {
	uint32_t request;
	uint32_t flags;
	uint32_t size; /* of the payload that follows */
	union {
		uint64_t u64;
		struct vhost_user_state state;
		struct vhost_user_addr addr;
		struct vhost_user_memory mem;
	} payload;
} __attribute__((packed));

static_assert(offsetof(struct vhost_user_msg, payload) == VHOST_USER_HDR_LEN,
	      "vhost-user header is three 32-bit words");
static_assert(sizeof(struct vhost_user_memory) == 8 + 8 * 32,
	      "vhost-user memory region table");

/*
 * vhost_user_reply_parse - check a reply the back-end sent for @request
 * (@len bytes at @buf: header and payload) and take its 64-bit value
 * (GET_FEATURES, GET_PROTOCOL_FEATURES, GET_QUEUE_NUM) or its vring
 * state's num (GET_VRING_BASE) into *@val. Returns 0, or -EPROTO with a
 * message saying what was wrong (version, reply flag, request, size).
 * A pure function: the fuzz target drives it with arbitrary bytes.
 */
int vhost_user_reply_parse(const void *buf, size_t len, uint32_t request,
			   uint64_t *val);

/* The socket side (vhost_user.c). Each returns 0 or -errno, with a
 * message naming @path. @timeout_ms: what each reply and send on the
 * connection may take. @quiet: no message when there is no back-end. */
int vhost_user_connect(const char *path, int timeout_ms, bool quiet,
		       int *fdp);
int vhost_user_set_timeout(int fd, const char *path, int timeout_ms);

/*
 * server=1: the listening socket, kept from open to close, so that the
 * path is the port's while it is open and a back-end reconnects to the
 * same socket. vhost_user_listen() refuses a path that holds anything but
 * a socket no program has bound (a stale one, which it removes), and
 * remembers the file it made; vhost_user_unlisten() closes the socket
 * and removes that file, only if it is still the one at @path.
 */
struct vhost_user_listener {
	int fd;        /* -1: not listening */
	dev_t dev;     /* the socket file made at the path */
	ino_t ino;
};

int vhost_user_listen(const char *path, struct vhost_user_listener *l);
/* Wait up to @wait_ms (0: do not wait) for a back-end and accept it. */
int vhost_user_accept(struct vhost_user_listener *l, const char *path,
		      int wait_ms, int timeout_ms, bool quiet, int *fdp);
void vhost_user_unlisten(struct vhost_user_listener *l, const char *path);
int vhost_user_send(int fd, const char *path, struct vhost_user_msg *msg,
		    const int *fds, unsigned int nr_fds);
int vhost_user_call(int fd, const char *path, uint32_t request,
		    uint64_t *val);
/* The same, all of it (send and reply) by @end, a vhost_user_now_ms()
 * time; -ETIMEDOUT when it is over, without a message: the caller, which
 * gave up on something, says what. */
int vhost_user_call_until(int fd, const char *path, uint32_t request,
			  uint64_t *val, int64_t end);
/* CLOCK_MONOTONIC in milliseconds. */
int64_t vhost_user_now_ms(void);
int vhost_user_set_u64(int fd, const char *path, uint32_t request,
		       uint64_t v);
int vhost_user_set_state(int fd, const char *path, uint32_t request,
			 uint32_t index, uint32_t num);
const char *vhost_user_request_name(uint32_t request);

/* ---- the data path's state ------------------------------------------ */

/*
 * An RX buffer's offset in its page: a cache-line colour
 * (pp_net_buf_color) chosen for a 2 KiB frame, which always fits behind
 * the largest colour and PP_FRAME_HEADROOM in a 4 KiB page.
 */
#define VQ_COLOR_LEN 2048

/*
 * TX of multi-buffer packets (a port whose RX may chain buffers: its MTU
 * needs more than one, or mrg_rxbuf=1): each packet goes out as ONE ring
 * descriptor, VRING_DESC_F_INDIRECT, pointing at the slot's own table of
 * up to PP_FRAME_MAX_SEGS descriptors (in the arena: the back-end reads
 * it through the memory table). One ring descriptor per packet keeps
 * what the single-buffer path relies on: descriptor i in avail slot i,
 * and with IN_ORDER one used entry per slot, taken back by count; a
 * chain of ring descriptors would need a second cursor in that loop.
 * The slot's pages[] entry is its head page with bit 0 set (a chain);
 * segs[] keeps every segment's page, our own copy: the table is memory
 * the device may write, and is never read back. While chains are on the
 * ring (chains > 0) completions go through vq_tx_complete_mb(), which
 * knows the tag; the single-buffer loops' own never meet one.
 */
struct vq_mb {
	struct vring_desc *ind;   /* size x PP_FRAME_MAX_SEGS */
	struct pp_page **segs;    /* size x PP_FRAME_MAX_SEGS */
	uint8_t *nsegs;           /* by slot: segments of its chain */
	struct pp_page *ind_page; /* the tables' block */
	unsigned int ind_order;
	unsigned int chains;      /* chains on the ring */
	bool indirect;            /* VIRTIO_RING_F_INDIRECT_DESC negotiated */
};

/* A chain's head page in vq->pages[] (TX, vq_mb). */
#define VQ_CHAIN_TAG ((uintptr_t)1)

/*
 * One virtqueue as its driver sees it. The rings live in one block of
 * arena pages (the back-end must reach them through the memory table);
 * the rest is ours alone. Descriptor i always sits in avail slot i (mod
 * size), and pages[id] remembers the page behind each one out: an id the
 * back-end returns is checked (in range, and one we gave out) before
 * anything is read from it. With VIRTIO_F_IN_ORDER the back-end uses the
 * descriptors in the order they were made available, so used entry p
 * stands for descriptor p (mod size) whatever id it names: pages are
 * taken back by position, an RX entry's id is only compared with it, and
 * TX used entries are not read at all (the used index is the count).
 */
struct vq {
	/* Hot. */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	struct pp_page **pages;   /* by descriptor id; NULL: not out */
	uint32_t *rx_off;         /* RX: each buffer's offset in its block */
	uint16_t size;            /* power of two */
	uint16_t nr_free;         /* descriptors not out */
	uint16_t avail_idx;       /* next avail slot (ours, then published) */
	uint16_t last_used;       /* next used slot to read */
	uint16_t hdr_len;
	uint16_t headroom;        /* RX: the port's headroom */
	bool mrg_rxbuf;
	bool in_order;            /* VIRTIO_F_IN_ORDER negotiated */
	/* RX: the frame length a buffer's colour is chosen for
	 * (pp_net_buf_color()): VQ_COLOR_LEN, or with mergeable buffers
	 * the whole page after the headroom, which leaves every colour 0:
	 * each buffer then holds as much as a page can, and a 9018-byte
	 * frame always takes three. */
	uint16_t color_len;
	int kickfd;
	/*
	 * A burst and the reconnect thread never work on the ring at once:
	 * each burst enters hs as its owner (pp_handshake_try_enter(): a
	 * plain store and a load where membarrier() works, as the
	 * allocator's thread caches do; else one exchange), and the
	 * reconnect thread holds it from taking the ring back until a new
	 * back-end knows the ring (vq_take_down() to vq_up()): the queue is
	 * down, and a burst that finds it held does nothing.
	 */
	struct pp_handshake_ hs;
	/*
	 * RX with frag=: each buffer is a fragment of frag bytes (0: a
	 * page), and rx_end[id] is where its fragment ends in the block,
	 * against which the back-end's length is checked (the page goes
	 * on past it, into the next fragment). frag is read once a burst.
	 */
	uint32_t frag;
	uintptr_t mem_base;       /* TX: what the memory table covers */
	uint64_t mem_size;
	/* Cold. */
	uint64_t bad_used;        /* used entries refused: id, length, count */
	uint64_t kicks;
	union {
		uint32_t *rx_end;   /* RX with frag= */
		struct vq_mb *mb;   /* TX of multi-buffer packets, or NULL */
	};
	struct pp_page *ring_page; /* the rings' block */
	/* At most 8: the rings of 32768 entries take 832 KiB. */
	uint16_t ring_order;
	uint16_t swept;           /* the reconnect thread's: vq_kick_sweep() */
	int callfd;
} __attribute__((aligned(PP_CACHE_LINE)));

/* Two cache lines, as before fragments: hot, then down to callfd. */
static_assert(sizeof(struct vq) <= 2 * PP_CACHE_LINE, "struct vq grew");

/* Bytes of the three rings of a queue of @size, each part aligned as
 * virtio 1.1 2.6 asks (16, 2 and 4) and the used ring on its own line. */
size_t vq_ring_bytes(unsigned int size);

/* The data path (virtio_user_rxtx.c). */
void vq_layout(struct vq *vq, void *mem, unsigned int size);
unsigned int virtio_user_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
				  unsigned int n);
unsigned int virtio_user_tx_burst(struct pp_txq *txq, struct pp_frame *frames,
				  unsigned int n);
/* Fill an RX queue's ring with buffers from @pool: pages or, with
 * frag=, fragments; returns how many. */
unsigned int vq_rx_fill(struct vq *vq, struct pp_rxq *rxq);
/* Take every page off @vq (the back-end is gone or stopped) and give it
 * back through @alloc, every segment of a TX chain too. */
void vq_reclaim(struct vq *vq, struct pp_allocator *alloc);
/* From another thread than the queue's: wait for a burst in progress,
 * then empty the ring and mark it down (bursts do nothing), or mark it
 * up again. Down and up alternate, from one thread. */
void vq_take_down(struct vq *vq, struct pp_allocator *alloc);
void vq_up(struct vq *vq);
/*
 * From the port's reconnect thread, every VU_KICK_SWEEP_MS: kick @vq when
 * the device asks for kicks and the avail index moved since @last (the
 * value this returned the time before): the publish whose kick the data
 * path may have missed (vq_kick()). Returns the avail index it kicked
 * for, or @last.
 */
uint16_t vq_kick_sweep(struct vq *vq, uint16_t last);

/* ---- the port ------------------------------------------------------- */

/* How long a reply, or a back-end connecting in server mode, may take. */
#define VU_TIMEOUT_MS 5000

struct vu_port {
	char path[108];
	char devstr[256];       /* for messages */
	int sock;               /* -1 while the back-end is away */
	bool server;
	/* server=1: the listening socket, from open to close. */
	struct vhost_user_listener listener;
	bool protocol;          /* PROTOCOL_FEATURES negotiated */
	bool mrg;               /* ask for MRG_RXBUF: mrg_rxbuf=1, or the
				 * MTU needs it (mrg_need) */
	bool mrg_need;          /* the MTU's frames need several RX buffers:
				 * MRG_RXBUF and INDIRECT_DESC required */
	unsigned int rx_room;   /* the data one RX buffer holds, at least */
	bool in_order;          /* in_order=1 (default): ask for IN_ORDER */
	unsigned int frag;      /* frag=: RX fragment size, 0: a page */
	uint64_t features;
	uint8_t mac[6];
	unsigned int nr_qp;
	unsigned int size;
	struct vq *vq;          /* 2 x nr_qp: RX 2q, TX 2q+1 */
	struct pp_port *port;
	struct pp_arena *arena;
	/* The memory table: the arena's committed bytes from its base,
	 * pinned at open (a growable arena stays at that size while the
	 * back-end maps it) and unpinned at close. */
	size_t mem_len;
	bool pinned;
	/* The reconnect thread (vu_watch), stopped through stopfd. */
	pthread_t watcher;
	bool watching;
	int stopfd;             /* -1: none */
};

/*
 * vu_handshake - everything after the connect on @vp->sock (features,
 * the memory table, each virtqueue), at open and after a reconnect;
 * @fill: fill the RX rings first (at open). Returns 0 or -errno, with a
 * message (virtio_user_negotiate.c).
 */
int vu_handshake(struct vu_port *vp, bool fill);

/*
 * The reconnect thread (virtio_user_reconnect.c): started last in the
 * open (0 or -errno, with a message), stopped first in the close and on
 * a failed open (nothing to do if it never started). Between the two,
 * only that thread uses the socket.
 */
int vu_watch_start(struct vu_port *vp);
void vu_watch_stop(struct vu_port *vp);

/* virtio_user_xstats.c: pp_net_driver_ops.xstats and .mac_addr. */
int virtio_user_xstats(struct pp_port *port, struct pp_net_xstat *out,
		       unsigned int n);
int virtio_user_mac_addr(struct pp_port *port, uint8_t mac[6]);

#endif /* VIRTIO_USER_PRIV_H */
