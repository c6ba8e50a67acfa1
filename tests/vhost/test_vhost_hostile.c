/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_vhost_hostile.c - the virtio_user driver against a back-end that
 * lies: a small fake vhost-user back-end (a thread on a unix socket, in
 * this process) that answers the handshake wrongly in one way per case,
 * or answers it rightly and then writes bad entries into the used rings.
 *
 * Every bad reply must fail the open with the errno and the message the
 * case names; every bad used entry (an id out of range, one not out, a
 * repeated one, a length outside the buffer or under the header, a used
 * index that claims more than was posted, a num_buffers of 0 or more than
 * is out, a chain that loops or runs past a buffer) must be refused and
 * counted, never followed; and after every case the allocator must have
 * every page back (no leak, nothing freed twice). Multi-buffer packets
 * (MTU 9000: mergeable RX buffers, indirect TX) go both ways with every
 * byte checked.
 *
 * The fake shares our address space, so the test plays the device's
 * data path itself on the ring addresses the driver sent (SET_VRING_ADDR):
 * in vhost-user they are the front-end's virtual addresses.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pagepool/pp_drivers.h>
#include <pagepool/pp_net_driver.h>

#include "net_test.h"
#include "pp_os.h"
#include "virtio_user_priv.h"

static struct net_env env;

enum fake_mode {
	FAKE_GOOD,
	FAKE_NO_VERSION_1,   /* features without VIRTIO_F_VERSION_1 */
	FAKE_NOT_REPLY,      /* reply without the reply flag */
	FAKE_WRONG_REQUEST,  /* the reply of another request */
	FAKE_HUGE_SIZE,      /* a payload size of 4 GiB */
	FAKE_SHORT_SIZE,     /* 4 payload bytes where 8 are due */
	FAKE_CLOSE,          /* hang up instead of answering */
	FAKE_NO_MQ,          /* one queue pair only */
	FAKE_CLOSE_LATE,     /* hang up at the last step, rings filled */
	FAKE_SLOW_VRING_BASE, /* answers each GET_VRING_BASE after 4 s */
};

struct fake {
	enum fake_mode mode;
	char path[108];
	int lfd;
	pthread_t tid;
	/* What the driver told us (written by the fake's thread, read
	 * after the open returned: the socket orders them). */
	uint64_t desc[4], avail[4], used[4];
	unsigned int nr_fds;
	unsigned int regions;
	unsigned int get_features;
	int conn;            /* the accepted connection, -1 before */
	uint64_t offer;      /* features offered on top of the usual */
	uint64_t hide;       /* the usual features not offered */
	uint64_t acked;      /* what SET_FEATURES said */
	int kickfd[4];       /* SET_VRING_KICK's eventfds, kept (-1: none) */
	uint64_t queue_num;  /* GET_QUEUE_NUM's answer (0: 1) */
	/* As a client of a server=1 port (fake_connect()): the mode of the
	 * socket file when it first saw it, and a flag that ends its wait. */
	mode_t seen_mode;
	int stop;
	/* Called once by fake_connect()'s thread when the socket is first
	 * there, before it connects; status is the hook's to fill. */
	void (*before_connect)(struct fake *f);
	int status;
	unsigned int msgs;   /* messages received */
	bool quit_on_fd;     /* stop at the first file descriptor received */
};

static int reply(int fd, uint32_t req, uint32_t flags, uint32_t size,
		 const void *payload, size_t len)
{
	char buf[64];

	memcpy(buf, &req, 4);
	memcpy(buf + 4, &flags, 4);
	memcpy(buf + 8, &size, 4);
	memcpy(buf + 12, payload, len);
	return send(fd, buf, 12 + len, MSG_NOSIGNAL) == (ssize_t)(12 + len) ?
		       0 : -1;
}

static void answer(struct fake *f, int fd, uint32_t req, uint64_t v)
{
	uint32_t flags = VHOST_USER_VERSION | VHOST_USER_REPLY;

	switch (f->mode) {
	case FAKE_NOT_REPLY:
		reply(fd, req, VHOST_USER_VERSION, 8, &v, 8);
		return;
	case FAKE_WRONG_REQUEST:
		reply(fd, req + 1, flags, 8, &v, 8);
		return;
	case FAKE_HUGE_SIZE:
		reply(fd, req, flags, 0xffffffffu, &v, 8);
		return;
	case FAKE_SHORT_SIZE:
		reply(fd, req, flags, 4, &v, 4);
		return;
	case FAKE_CLOSE:
		shutdown(fd, SHUT_RDWR);
		return;
	case FAKE_CLOSE_LATE:
		if (req == VHOST_USER_GET_FEATURES && ++f->get_features == 2) {
			shutdown(fd, SHUT_RDWR);
			return;
		}
		reply(fd, req, flags, 8, &v, 8);
		return;
	default:
		reply(fd, req, flags, 8, &v, 8);
	}
}

/* Play the back-end on connection @fd until it closes; then close it. */
static void fake_serve(struct fake *f, int fd)
{
	while (fd >= 0) {
		struct vhost_user_msg m;
		char ctl[CMSG_SPACE(sizeof(int) * VHOST_USER_MAX_REGIONS)];
		struct iovec iov = { &m, VHOST_USER_HDR_LEN };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;
		uint64_t v;

		if (recvmsg(fd, &mh, MSG_WAITALL) != VHOST_USER_HDR_LEN)
			break;
		int kept = -1;

		f->msgs++;

		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			int fds[VHOST_USER_MAX_REGIONS];
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			memcpy(fds, CMSG_DATA(c), n * sizeof(int));
			for (size_t i = 0; i < n; i++) {
				if (m.request == VHOST_USER_SET_VRING_KICK &&
				    kept < 0)
					kept = fds[i];
				else
					close(fds[i]);
			}
			f->nr_fds += (unsigned int)n;
		}
		if (m.size > sizeof(m.payload) ||
		    (m.size && recv(fd, &m.payload, m.size, MSG_WAITALL) !=
				       (ssize_t)m.size)) {
			if (kept >= 0)
				close(kept);
			break;
		}
		if (kept >= 0) {
			if (m.payload.u64 < 4 && f->kickfd[m.payload.u64] < 0)
				f->kickfd[m.payload.u64] = kept;
			else
				close(kept);
		}
		switch (m.request) {
		case VHOST_USER_GET_FEATURES:
			v = 1ull << VHOST_USER_F_PROTOCOL_FEATURES |
			    1ull << VIRTIO_NET_F_MRG_RXBUF |
			    1ull << VIRTIO_RING_F_INDIRECT_DESC |
			    1ull << VIRTIO_NET_F_MQ;
			if (f->mode != FAKE_NO_VERSION_1)
				v |= 1ull << VIRTIO_F_VERSION_1;
			if (f->mode == FAKE_NO_MQ)
				v &= ~(1ull << VIRTIO_NET_F_MQ);
			answer(f, fd, m.request, (v | f->offer) & ~f->hide);
			break;
		case VHOST_USER_SET_FEATURES:
			f->acked = m.payload.u64;
			break;
		case VHOST_USER_GET_PROTOCOL_FEATURES:
			answer(f, fd, m.request,
			       1ull << VHOST_USER_PROTOCOL_F_MQ);
			break;
		case VHOST_USER_GET_QUEUE_NUM:
			answer(f, fd, m.request, f->queue_num ? f->queue_num : 1);
			break;
		case VHOST_USER_GET_VRING_BASE:
			if (f->mode == FAKE_SLOW_VRING_BASE) {
				struct pollfd pf = { .fd = fd, .events = POLLRDHUP };

				/* 4 s, or until the port hangs up. */
				if (poll(&pf, 1, 4000))
					break;
			}
			answer(f, fd, m.request, (uint64_t)m.payload.state.index);
			break;
		case VHOST_USER_SET_MEM_TABLE:
			f->regions = m.payload.mem.nregions;
			break;
		case VHOST_USER_SET_VRING_ADDR:
			if (m.payload.addr.index < 4) {
				f->desc[m.payload.addr.index] = m.payload.addr.desc;
				f->avail[m.payload.addr.index] = m.payload.addr.avail;
				f->used[m.payload.addr.index] = m.payload.addr.used;
			}
			break;
		default:
			break;
		}
		if (f->quit_on_fd && f->nr_fds)
			break;
	}
	if (fd >= 0)
		close(fd);
}

static void *fake_thread(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);

	__atomic_store_n(&f->conn, fd, __ATOMIC_RELEASE);
	fake_serve(f, fd);
	return NULL;
}

/* The socket path of every case (one at a time). */
static const char *sock_path(void)
{
	static char path[108];

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/pp-vhost-hostile-%d.sock",
			 (int)getpid());
	return path;
}

/* A fake that also offers @offer (feature bits). */
static void fake_start_offer(struct fake *f, enum fake_mode mode,
			     uint64_t offer)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(f, 0, sizeof(*f));
	f->mode = mode;
	f->offer = offer;
	for (unsigned int i = 0; i < 4; i++)
		f->kickfd[i] = -1;
	f->conn = -1;
	snprintf(f->path, sizeof(f->path), "%s", sock_path());
	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	unlink(f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(f->lfd >= 0);
	REQUIRE(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	REQUIRE(listen(f->lfd, 1) == 0);
	REQUIRE(pthread_create(&f->tid, NULL, fake_thread, f) == 0);
}

static void fake_start(struct fake *f, enum fake_mode mode)
{
	fake_start_offer(f, mode, 0);
}

static void fake_stop(struct fake *f)
{
	/* Wakes an accept() that never got a client, or a fake_connect()
	 * that never found a socket. */
	if (f->lfd >= 0)
		shutdown(f->lfd, SHUT_RDWR);
	__atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
	pthread_join(f->tid, NULL);
	for (unsigned int i = 0; i < 4; i++)
		if (f->kickfd[i] >= 0)
			close(f->kickfd[i]);
	/* A server=1 port's socket is the port's to remove (checked). */
	if (f->lfd >= 0) {
		close(f->lfd);
		unlink(f->path);
	}
}

static struct pp_port *open_on(struct fake *f, const char *extra,
			       struct pp_port_conf *conf)
{
	char dev[200];

	snprintf(dev, sizeof(dev), "virtio_user:path=%s,queue_size=64%s",
		 f->path, extra);
	return pp_port_open(dev, conf);
}

/* ---- the handshake ------------------------------------------------- */

static void bad_handshake(enum fake_mode mode, int err, const char *needle)
{
	struct fake f;
	struct pp_port *p;

	fake_start(&f, mode);
	pp_test_log_reset();
	errno = 0;
	p = open_on(&f, "", &env.conf);
	CHECK(p == NULL);
	CHECK_EQ(errno, err);
	if (!pp_test_log_has(needle)) {
		fprintf(stderr, "mode %d: message lacks '%s'\n", mode, needle);
		pp_test_failures++;
	}
	if (p)
		pp_port_close(p);
	fake_stop(&f);
}

static void test_bad_replies(void)
{
	bad_handshake(FAKE_NO_VERSION_1, ENOTSUP,
		      "does not offer VIRTIO_F_VERSION_1");
	bad_handshake(FAKE_NOT_REPLY, EPROTO, "not a version 1 reply");
	bad_handshake(FAKE_WRONG_REQUEST, EPROTO, "out of step: close the port");
	bad_handshake(FAKE_HUGE_SIZE, EPROTO, "says 4294967295 payload bytes");
	bad_handshake(FAKE_SHORT_SIZE, EPROTO, "it must be 8");
	bad_handshake(FAKE_CLOSE, EPROTO, "the back-end closed the socket");
	/* After the RX rings were filled: their pages go home (the
	 * allocator check at the end finds none out). */
	bad_handshake(FAKE_CLOSE_LATE, EPROTO, "the back-end closed the socket");
}

static void test_no_backend(void)
{
	struct pp_port *p;

	pp_test_log_reset();
	errno = 0;
	p = pp_port_open("virtio_user:path=/nonexistent/vhost.sock",
			 &env.conf);
	CHECK(p == NULL);
	CHECK_EQ(errno, ENOENT);
	CHECK(pp_test_log_has("start the back-end first"));
}

static void test_queues_refused(void)
{
	struct pp_port_conf c = env.conf;
	struct fake f;
	struct pp_port *p;

	c.nr_rxq = c.nr_txq = 2;
	fake_start(&f, FAKE_NO_MQ);
	pp_test_log_reset();
	errno = 0;
	p = open_on(&f, ",queues=2", &c);
	CHECK(p == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(pp_test_log_has("offers no multi-queue"));
	fake_stop(&f);
}

/* ---- the used rings ------------------------------------------------- */

/* The device's side of a ring: the next avail entry it would take. */
struct dev_vq {
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t next_avail;
	uint16_t used_idx;
};

static void dev_vq_init(struct dev_vq *d, const struct fake *f,
			unsigned int idx)
{
	d->desc = (struct vring_desc *)(uintptr_t)f->desc[idx];
	d->avail = (struct vring_avail *)(uintptr_t)f->avail[idx];
	d->used = (struct vring_used *)(uintptr_t)f->used[idx];
	d->next_avail = 0;
	d->used_idx = 0;
}

/* Take the next avail buffer; its id. */
static uint16_t dev_take(struct dev_vq *d)
{
	REQUIRE(d->next_avail != d->avail->idx);
	return d->avail->ring[d->next_avail++ % 64];
}

static void dev_used(struct dev_vq *d, uint32_t id, uint32_t len)
{
	d->used->ring[d->used_idx % 64].id = id;
	d->used->ring[d->used_idx % 64].len = len;
	d->used_idx++;
}

static void dev_publish(struct dev_vq *d, uint16_t idx)
{
	__atomic_store_n(&d->used->idx, idx, __ATOMIC_RELEASE);
}

/* Write a frame of @len bytes (num_buffers @nb) into RX buffer @id. */
static void dev_write(struct dev_vq *d, uint16_t id, uint32_t len,
		      uint16_t nb)
{
	uint8_t *b = (uint8_t *)(uintptr_t)d->desc[id].addr;

	REQUIRE(d->desc[id].len >= VIRTIO_NET_HDR_LEN + len);
	memset(b, 0, VIRTIO_NET_HDR_LEN);
	memcpy(b + VIRTIO_NET_HDR_NUM_BUFFERS_OFF, &nb, 2);
	for (uint32_t i = 0; i < len; i++)
		b[VIRTIO_NET_HDR_LEN + i] = (uint8_t)(i + id);
}

static uint64_t rx_errors(struct pp_port *p)
{
	struct pp_rxq_stats s;

	pp_port_rxq_stats(p, 0, &s);
	return s.errors;
}

static void test_rx_used_lies(void)
{
	struct fake f;
	struct pp_port *p;
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct dev_vq d;
	uint16_t ids[8];
	unsigned int got, i;

	fake_start(&f, FAKE_GOOD);
	/* Mergeable buffers on: the frame over three buffers below. */
	p = open_on(&f, ",mrg_rxbuf=1", &env.conf);
	REQUIRE(p != NULL);
	CHECK_EQ(f.regions, 1);
	CHECK(f.nr_fds >= 1 + 4);   /* the memory, a kick and a call each */
	dev_vq_init(&d, &f, 0);
	CHECK_EQ(d.avail->idx, 64);  /* the ring was filled at open */
	CHECK(d.avail->flags & VRING_AVAIL_F_NO_INTERRUPT);

	/* Two good frames; then an id past the ring, the first id again
	 * (no longer out), a length past the buffer, one under the header,
	 * one of 2^32 - 1. Only the two good ones come out. */
	for (i = 0; i < 5; i++)
		ids[i] = dev_take(&d);
	dev_write(&d, ids[0], 60, 1);
	dev_write(&d, ids[1], 1514, 1);
	dev_used(&d, ids[0], VIRTIO_NET_HDR_LEN + 60);
	dev_used(&d, ids[1], VIRTIO_NET_HDR_LEN + 1514);
	dev_used(&d, 64 + 3, 100);
	dev_used(&d, ids[0], 100);
	dev_used(&d, ids[2], d.desc[ids[2]].len + 1);
	dev_used(&d, ids[3], 5);
	dev_used(&d, ids[4], 0xffffffffu);
	dev_publish(&d, d.used_idx);
	got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
	CHECK_EQ(got, 2);
	if (got == 2) {
		CHECK_EQ(fr[0].len, 60);
		CHECK_EQ(fr[1].len, 1514);
		CHECK_EQ(((uint8_t *)pp_frame_data(&fr[1]))[1513],
			 (uint8_t)(1513 + ids[1]));
		CHECK(pp_frame_valid(&fr[1]));
	}
	CHECK_EQ(rx_errors(p), 5);
	for (i = 0; i < got; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(p, 0), fr[i].page);

	/* A frame over three buffers (MRG_RXBUF): one packet of three
	 * segments, then the next frame. */
	for (i = 0; i < 4; i++)
		ids[i] = dev_take(&d);
	dev_write(&d, ids[0], 100, 3);
	dev_write(&d, ids[3], 64, 1);
	for (i = 0; i < 4; i++)
		dev_used(&d, ids[i], (i == 0 ? VIRTIO_NET_HDR_LEN : 0) +
					     (i == 3 ? 64 + VIRTIO_NET_HDR_LEN : 100));
	dev_publish(&d, d.used_idx);
	got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
	CHECK_EQ(got, 4);
	if (got == 4) {
		CHECK(fr[0].more && fr[1].more && !fr[2].more && !fr[3].more);
		CHECK_EQ(pp_pkt_len(fr, got), 300);
		CHECK_EQ(fr[3].len, 64);
	}
	CHECK_EQ(rx_errors(p), 5);
	for (i = 0; i < got; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(p, 0), fr[i].page);

	/* A used index 60,000 ahead: no more than what is out is read,
	 * and every entry is still checked (stale ones are refused). */
	dev_publish(&d, (uint16_t)(d.used_idx + 60000));
	got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
	for (i = 0; i < got; i++) {
		CHECK(pp_frame_valid(&fr[i]));
		pp_pool_recycle_direct(pp_port_rxq_pool(p, 0), fr[i].page);
	}
	CHECK(rx_errors(p) > 6);
	net_check_pools(p);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
}

static void test_tx_used_lies(void)
{
	struct fake f;
	struct pp_port *p;
	struct pp_frame fr[8] = { 0 };
	struct pp_pool *pool;
	struct dev_vq d;
	uint16_t ids[8];
	unsigned int i, sent;

	fake_start(&f, FAKE_GOOD);
	p = open_on(&f, "", &env.conf);
	REQUIRE(p != NULL);
	pool = pp_port_rxq_pool(p, 0);
	dev_vq_init(&d, &f, 1);
	for (i = 0; i < 8; i++) {
		fr[i].page = pp_pool_alloc_pages(pool);
		REQUIRE(fr[i].page != NULL);
		fr[i].offset = 0;
		fr[i].headroom = PP_FRAME_HEADROOM;
		fr[i].len = 64;
	}
	/* A frame without room for the header is taken and dropped. */
	fr[7].headroom = 4;
	sent = pp_port_tx_burst(p, 0, fr, 8);
	CHECK_EQ(sent, 8);
	CHECK_EQ(d.avail->idx, 7);
	for (i = 0; i < 7; i++) {
		ids[i] = dev_take(&d);
		CHECK_EQ(d.desc[ids[i]].len, VIRTIO_NET_HDR_LEN + 64);
	}
	/* Completions: an id past the ring, an id never sent, one id
	 * twice; then the rest. Every page goes home exactly once. */
	dev_used(&d, 1000, 0);
	dev_used(&d, ids[0], 0);
	dev_used(&d, ids[0], 0);
	dev_used(&d, 63, 0);   /* never handed out: the stack gives 0.. */
	for (i = 1; i < 7; i++)
		dev_used(&d, ids[i], 0);
	dev_publish(&d, d.used_idx);
	pp_port_tx_burst(p, 0, NULL, 0);
	pp_pool_set_owner(pool);
	CHECK_EQ(pp_pool_check(pool), 0);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
}

/*
 * A device that completes out of order: slot 0's descriptor still out
 * after a lap blocks the ring (nothing is posted over it, however many
 * others are free), until the device returns it.
 */
static void test_tx_out_of_order(void)
{
	struct fake f;
	struct pp_port *p;
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct pp_pool *pool;
	struct dev_vq d;
	unsigned int i, lap, sent;

	fake_start(&f, FAKE_GOOD);
	p = open_on(&f, "", &env.conf);
	REQUIRE(p != NULL);
	pool = pp_port_rxq_pool(p, 0);
	dev_vq_init(&d, &f, 1);
	for (lap = 0; lap < 2; lap++) {
		for (i = 0; i < 32; i++) {
			fr[i].page = pp_pool_alloc_pages(pool);
			REQUIRE(fr[i].page != NULL);
			fr[i].offset = 0;
			fr[i].headroom = PP_FRAME_HEADROOM;
			fr[i].len = 64;
		}
		CHECK_EQ(pp_port_tx_burst(p, 0, fr, 32), 32);
	}
	for (i = 0; i < 64; i++)
		(void)dev_take(&d);
	for (i = 1; i < 64; i++)   /* all but descriptor 0 */
		dev_used(&d, i, 0);
	dev_publish(&d, d.used_idx);
	for (i = 0; i < 8; i++) {
		fr[i].page = pp_pool_alloc_pages(pool);
		REQUIRE(fr[i].page != NULL);
		fr[i].offset = 0;
		fr[i].headroom = PP_FRAME_HEADROOM;
		fr[i].len = 64;
	}
	sent = pp_port_tx_burst(p, 0, fr, 8);
	CHECK_EQ(sent, 0);
	CHECK_EQ(d.avail->idx, 64);
	dev_used(&d, 0, 0);
	dev_publish(&d, d.used_idx);
	sent = pp_port_tx_burst(p, 0, fr, 8);
	CHECK_EQ(sent, 8);
	CHECK_EQ(d.avail->idx, 72);
	for (i = sent; i < 8; i++)
		pp_pool_recycle_direct(pool, fr[i].page);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
}

/* ---- VIRTIO_F_IN_ORDER ------------------------------------------------ */

#define IN_ORDER (1ull << VIRTIO_F_IN_ORDER)

static uint64_t bad_used(struct pp_port *p, bool tx)
{
	struct vq *vq = tx ? p->txq[0].priv : p->rxq[0].priv;

	return vq->bad_used;
}

/*
 * Negotiated when offered, unless in_order=0; never asked for when not
 * offered (the fake's other cases offer none, and run the general path).
 */
static void test_in_order_negotiated(void)
{
	struct fake f;
	struct pp_port *p;

	fake_start_offer(&f, FAKE_GOOD, IN_ORDER);
	p = open_on(&f, "", &env.conf);
	REQUIRE(p != NULL);
	CHECK(f.acked & IN_ORDER);
	CHECK(((struct vq *)p->rxq[0].priv)->in_order);
	CHECK(((struct vq *)p->txq[0].priv)->in_order);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);

	fake_start_offer(&f, FAKE_GOOD, IN_ORDER);
	p = open_on(&f, ",in_order=0", &env.conf);
	REQUIRE(p != NULL);
	CHECK(!(f.acked & IN_ORDER));
	CHECK(!((struct vq *)p->txq[0].priv)->in_order);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);

	fake_start(&f, FAKE_GOOD);
	p = open_on(&f, "", &env.conf);
	REQUIRE(p != NULL);
	CHECK(!(f.acked & IN_ORDER));
	CHECK(!((struct vq *)p->rxq[0].priv)->in_order);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
}

/*
 * RX in order: used entry p must name descriptor p. An entry that names
 * another id (even one that is out), one with a length past its buffer or
 * under the header is refused and counted, and its buffer (the one at
 * that position) goes back to the pool: the entries after it still come
 * through, and no page is lost or returned twice.
 */
static void test_rx_in_order_lies(void)
{
	struct fake f;
	struct pp_port *p;
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct dev_vq d;
	uint16_t ids[8];
	unsigned int got, i;

	fake_start_offer(&f, FAKE_GOOD, IN_ORDER);
	p = open_on(&f, "", &env.conf);
	REQUIRE(p != NULL);
	REQUIRE(f.acked & IN_ORDER);
	dev_vq_init(&d, &f, 0);
	CHECK_EQ(d.avail->idx, 64);
	for (i = 0; i < 6; i++)
		ids[i] = dev_take(&d);
	/* In-order slots: the i-th buffer is descriptor i. */
	CHECK_EQ(ids[0], 0);
	CHECK_EQ(ids[5], 5);
	dev_write(&d, ids[0], 60, 1);
	dev_write(&d, ids[1], 61, 1);
	dev_write(&d, ids[5], 65, 1);
	dev_used(&d, ids[0], VIRTIO_NET_HDR_LEN + 60);
	dev_used(&d, ids[2], VIRTIO_NET_HDR_LEN + 61); /* id out of order */
	dev_used(&d, ids[2], d.desc[ids[2]].len + 1);  /* past the buffer */
	dev_used(&d, ids[3], 5);                       /* under the header */
	dev_used(&d, 64 + 4, 100);                     /* past the ring */
	dev_used(&d, ids[5], VIRTIO_NET_HDR_LEN + 65);
	dev_publish(&d, d.used_idx);
	got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
	CHECK_EQ(got, 2);
	if (got == 2) {
		CHECK_EQ(fr[0].len, 60);
		CHECK_EQ(fr[1].len, 65);
		CHECK_EQ(((uint8_t *)pp_frame_data(&fr[1]))[64],
			 (uint8_t)(64 + ids[5]));
		CHECK(pp_frame_valid(&fr[1]));
	}
	CHECK_EQ(rx_errors(p), 4);
	CHECK_EQ(bad_used(p, false), 4);
	for (i = 0; i < got; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(p, 0), fr[i].page);
	/* The ring was refilled by position: the next six are 6..11. */
	CHECK_EQ(dev_take(&d), 6);

	/* A used index 60,000 ahead: cut to what is out, each entry still
	 * checked (the stale ones name the wrong descriptor). */
	dev_publish(&d, (uint16_t)(d.used_idx + 60000));
	got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
	for (i = 0; i < got; i++) {
		CHECK(pp_frame_valid(&fr[i]));
		pp_pool_recycle_direct(pp_port_rxq_pool(p, 0), fr[i].page);
	}
	CHECK(bad_used(p, false) > 5);
	net_check_pools(p);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
}

static void tx_frames(struct pp_pool *pool, struct pp_frame *fr,
		      unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		fr[i].page = pp_pool_alloc_pages(pool);
		REQUIRE(fr[i].page != NULL);
		fr[i].offset = 0;
		fr[i].headroom = PP_FRAME_HEADROOM;
		fr[i].len = 64;
	}
}

/*
 * TX in order: completions are taken back by count, no used entry is
 * read. A device may write only the last used entry of a batch (virtio
 * 1.1 2.6.9): accepted. A batch whose entries name other descriptors
 * changes nothing: the pages go back by position, each once. A used
 * index past what is out is cut and counted. The ring never blocks.
 */
static void test_tx_in_order(void)
{
	struct fake f;
	struct pp_port *p;
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct pp_pool *pool;
	struct dev_vq d;
	unsigned int i, lap;

	fake_start_offer(&f, FAKE_GOOD, IN_ORDER);
	p = open_on(&f, "", &env.conf);
	REQUIRE(p != NULL);
	REQUIRE(f.acked & IN_ORDER);
	pool = pp_port_rxq_pool(p, 0);
	dev_vq_init(&d, &f, 1);

	/* Eight out; a batch of five written as its last entry only. */
	tx_frames(pool, fr, 8);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 8), 8);
	CHECK_EQ(d.avail->idx, 8);
	for (i = 0; i < 8; i++)
		CHECK_EQ(dev_take(&d), i);
	d.used->ring[4].id = 4;
	d.used_idx = 5;
	dev_publish(&d, d.used_idx);
	pp_port_tx_burst(p, 0, NULL, 0);
	CHECK_EQ(bad_used(p, true), 0);
	CHECK_EQ(((struct vq *)p->txq[0].priv)->nr_free, 64 - 3);

	/* The last three, named 0, 0 and 1000: by position all the same. */
	dev_used(&d, 0, 0);
	dev_used(&d, 0, 0);
	dev_used(&d, 1000, 0);
	dev_publish(&d, d.used_idx);
	pp_port_tx_burst(p, 0, NULL, 0);
	CHECK_EQ(bad_used(p, true), 0);
	CHECK_EQ(((struct vq *)p->txq[0].priv)->nr_free, 64);

	/* A used index claiming 1000 more than the 4 out: cut, counted. */
	tx_frames(pool, fr, 4);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 4), 4);
	for (i = 0; i < 4; i++)
		(void)dev_take(&d);
	dev_publish(&d, (uint16_t)(d.used_idx + 1000));
	pp_port_tx_burst(p, 0, NULL, 0);
	CHECK_EQ(bad_used(p, true), 1);
	CHECK_EQ(((struct vq *)p->txq[0].priv)->nr_free, 64);
	d.used_idx = (uint16_t)(d.used_idx + 4);
	dev_publish(&d, d.used_idx);  /* where the driver now is */

	/* Laps past the ring's size, completing as they go: never blocks,
	 * every page back at the end. */
	for (lap = 0; lap < 6; lap++) {
		tx_frames(pool, fr, 32);
		CHECK_EQ(pp_port_tx_burst(p, 0, fr, 32), 32);
		for (i = 0; i < 32; i++) {
			uint16_t id = dev_take(&d);

			CHECK_EQ(id, (uint16_t)(d.used_idx & 63));
			dev_used(&d, id, 0);
		}
		dev_publish(&d, d.used_idx);
	}
	pp_port_tx_burst(p, 0, NULL, 0);
	CHECK_EQ(bad_used(p, true), 1);
	CHECK_EQ(((struct vq *)p->txq[0].priv)->nr_free, 64);
	pp_pool_set_owner(pool);
	CHECK_EQ(pp_pool_check(pool), 0);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
}

/* ---- frag= ------------------------------------------------------------ */

/* Every page is back with the allocator: no port open, nothing leaked. */
static void all_pages_home(void)
{
	unsigned long allocated = 1;

	pp_allocator_drain_thread(env.alloc);
	CHECK_EQ(pp_allocator_check(env.alloc, &allocated), 0);
	CHECK_EQ(allocated, 0);
}

/*
 * frag=2048: RX buffers are 2 KiB fragments, two to a page, each
 * descriptor covering the header and what its fragment holds after the
 * headroom. The back-end's length is checked against the fragment's end:
 * a length that would still fit the page (it runs into the next
 * fragment, which the page check alone would let through) is refused and
 * counted, its buffer recycled; nothing leaks. Both RX paths: by id, and
 * in order.
 */
static void rx_frag(bool in_order)
{
	struct fake f;
	struct pp_port *p;
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct dev_vq d;
	struct vq *vq;
	uint16_t ids[8];
	unsigned int got, i, hr;
	uint32_t room;

	fake_start_offer(&f, FAKE_GOOD, in_order ? IN_ORDER : 0);
	p = open_on(&f, ",frag=2048", &env.conf);
	REQUIRE(p != NULL);
	vq = p->rxq[0].priv;
	CHECK_EQ(vq->in_order, in_order);
	CHECK_EQ(vq->frag, 2048);
	hr = vq->headroom;
	room = 2048 - hr + VIRTIO_NET_HDR_LEN;
	dev_vq_init(&d, &f, 0);
	CHECK_EQ(d.avail->idx, 64);
	for (i = 0; i < 6; i++) {
		ids[i] = dev_take(&d);
		CHECK_EQ(d.desc[ids[i]].len, room);
		CHECK_EQ(d.desc[ids[i]].addr,
			 (uint64_t)(uintptr_t)pp_page_address(vq->pages[ids[i]]) +
				 vq->rx_off[ids[i]] + hr - VIRTIO_NET_HDR_LEN);
		CHECK_EQ(vq->rx_end[ids[i]], vq->rx_off[ids[i]] + 2048);
	}
	/* Two to a page, the first at the block's start. */
	CHECK(vq->pages[ids[0]] == vq->pages[ids[1]]);
	CHECK_EQ(vq->rx_off[ids[0]], 0);
	CHECK_EQ(vq->rx_off[ids[1]], 2048);
	CHECK(vq->pages[ids[2]] == vq->pages[ids[3]]);
	CHECK_EQ(vq->rx_off[ids[2]], 0);
	/* Lengths that fit the page but not the fragment at its start: the
	 * page's own bounds would pass them. */
	CHECK(pp_frame_bounds_ok(vq->pages[ids[2]], 0, hr, room + 1 -
				 VIRTIO_NET_HDR_LEN));
	CHECK(pp_frame_bounds_ok(vq->pages[ids[4]], 0, hr, 3000));

	dev_write(&d, ids[0], 60, 1);
	dev_write(&d, ids[1], 1514, 1);
	dev_write(&d, ids[5], room - VIRTIO_NET_HDR_LEN, 1);
	dev_used(&d, ids[0], VIRTIO_NET_HDR_LEN + 60);
	dev_used(&d, ids[1], VIRTIO_NET_HDR_LEN + 1514);
	dev_used(&d, ids[2], room + 1);                  /* a byte over */
	dev_used(&d, ids[3], VIRTIO_NET_HDR_LEN + 64);   /* good, 2nd half */
	dev_used(&d, ids[4], VIRTIO_NET_HDR_LEN + 3000); /* fits the page */
	dev_used(&d, ids[5], room);                      /* to the last byte */
	dev_write(&d, ids[3], 64, 1);
	dev_publish(&d, d.used_idx);
	got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
	CHECK_EQ(got, 4);
	if (got == 4) {
		CHECK_EQ(fr[0].len, 60);
		CHECK_EQ(fr[1].len, 1514);
		CHECK_EQ(fr[1].offset, 2048);
		CHECK_EQ(fr[2].len, 64);
		CHECK_EQ(fr[3].len, room - VIRTIO_NET_HDR_LEN);
		CHECK_EQ(((uint8_t *)pp_frame_data(&fr[1]))[1513],
			 (uint8_t)(1513 + ids[1]));
		for (i = 0; i < got; i++)
			CHECK(pp_frame_valid(&fr[i]));
		/* Both halves of one page out: a split page, and each
		 * frame's buffer ends within its own fragment. */
		CHECK(fr[0].page == fr[1].page);
		for (i = 0; i < 2; i++) {
			CHECK(pp_page_is_frag(fr[i].page));
			CHECK(pp_frame_buf_end(&fr[i]) <= fr[i].offset + 2048u);
		}
	}
	CHECK_EQ(rx_errors(p), 2);
	CHECK_EQ(bad_used(p, false), 2);
	for (i = 0; i < got; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(p, 0), fr[i].page);
	net_check_pools(p);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	all_pages_home();
}

static void test_rx_frag(void)
{
	rx_frag(false);
}

static void test_rx_frag_in_order(void)
{
	rx_frag(true);
}

/* Bad frag= values: refused at open with a message that says what to
 * give; nothing is left behind. */
static void test_frag_devarg(void)
{
	static const struct {
		const char *extra, *needle;
	} cases[] = {
		{ ",frag=auto", "virtio_user takes no frag=auto" },
		{ ",frag=100", "for key 'frag': give a fragment size from 320" },
		{ ",frag=8192", "for key 'frag': give a fragment size from" },
		{ ",frag=2k", "for key 'frag': give a fragment size from" },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake f;
		struct pp_port *p;

		fake_start(&f, FAKE_GOOD);
		pp_test_log_reset();
		errno = 0;
		p = open_on(&f, cases[i].extra, &env.conf);
		CHECK(p == NULL);
		CHECK_EQ(errno, EINVAL);
		if (!pp_test_log_has(cases[i].needle)) {
			fprintf(stderr, "%s: message lacks '%s'\n",
				cases[i].extra, cases[i].needle);
			pp_test_failures++;
		}
		if (p)
			pp_port_close(p);
		fake_stop(&f);
	}
	all_pages_home();
}

/* ---- multi-buffer packets (MRG_RXBUF, indirect TX) ---------------------- */

#define MRG (1ull << VIRTIO_NET_F_MRG_RXBUF)
#define INDIRECT (1ull << VIRTIO_RING_F_INDIRECT_DESC)

/* A port with MTU @mtu on fake @f (IN_ORDER offered when @in_order). */
static struct pp_port *open_mtu(struct fake *f, unsigned int mtu,
				bool in_order, uint64_t hide, const char *extra)
{
	struct pp_port_conf c = env.conf;

	fake_start_offer(f, FAKE_GOOD, in_order ? IN_ORDER : 0);
	f->hide = hide;
	c.mtu = mtu;
	return open_on(f, extra, &c);
}

/* The test pattern's byte @i of packet @seed. */
static uint8_t pat(uint32_t i, uint32_t seed)
{
	return (uint8_t)(i * 7 + seed + (i >> 8));
}

/*
 * The device's side of MRG_RXBUF: @len bytes of @data behind a header
 * over as many avail buffers as it takes, each filled to its length (as
 * DPDK's vhost does); the used entries added, not published. Returns
 * num_buffers.
 */
static unsigned int dev_rx_mrg(struct dev_vq *d, const uint8_t *data,
			       uint32_t len)
{
	uint16_t ids[PP_FRAME_MAX_SEGS + 8];
	uint32_t cap = 0, done = 0, total = VIRTIO_NET_HDR_LEN + len;
	uint8_t hdr[VIRTIO_NET_HDR_LEN] = { 0 };
	unsigned int nb = 0, k;
	uint16_t n16;

	while (cap < total) {
		REQUIRE(nb < sizeof(ids) / sizeof(ids[0]));
		ids[nb] = dev_take(d);
		cap += d->desc[ids[nb]].len;
		nb++;
	}
	n16 = (uint16_t)nb;
	memcpy(hdr + VIRTIO_NET_HDR_NUM_BUFFERS_OFF, &n16, 2);
	for (k = 0; k < nb; k++) {
		uint8_t *b = (uint8_t *)(uintptr_t)d->desc[ids[k]].addr;
		uint32_t room = d->desc[ids[k]].len, w = 0;

		while (w < room && done < total) {
			b[w++] = done < VIRTIO_NET_HDR_LEN ?
					 hdr[done] : data[done - VIRTIO_NET_HDR_LEN];
			done++;
		}
		dev_used(d, ids[k], w);
	}
	return nb;
}

/* Whether the packet at @fr (@n frames) is @len bytes of pat(, @seed),
 * every byte, its segments valid and chained with .more. */
static bool pkt_is(const struct pp_frame *fr, unsigned int n, uint32_t len,
		   uint32_t seed)
{
	unsigned int segs = pp_pkt_segs(fr, n), k;
	uint32_t at = 0;

	if (segs > PP_FRAME_MAX_SEGS || fr[segs - 1].more ||
	    pp_pkt_len(fr, n) != len)
		return false;
	for (k = 0; k < segs; k++) {
		const uint8_t *b = pp_frame_data(&fr[k]);

		if (!pp_frame_valid(&fr[k]) || !fr[k].len)
			return false;
		for (uint32_t i = 0; i < fr[k].len; i++, at++)
			if (b[i] != pat(at, seed))
				return false;
	}
	return true;
}

static void recycle(struct pp_port *p, struct pp_frame *fr, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		pp_pool_recycle_direct(pp_port_rxq_pool(p, 0), fr[i].page);
}

/*
 * The MTU decides: at 1500 (a frame fits a page) neither MRG_RXBUF nor
 * INDIRECT_DESC is asked for; at 9000 both are, and without either from
 * the back-end, or with mrg_rxbuf=0, the open is refused with what to
 * do. frag=1024 makes 1500 too large for one buffer.
 */
static void test_mrg_mtu(void)
{
	static const struct {
		unsigned int mtu;
		uint64_t hide;
		const char *extra, *needle;
		int err;
	} bad[] = {
		{ 9000, 0, ",mrg_rxbuf=0", "mrg_rxbuf=0 forbids spreading them over several: drop mrg_rxbuf=0, or open the port with mtu 2862 or less", EINVAL },
		{ 9000, MRG, "", "does not offer VIRTIO_NET_F_MRG_RXBUF (mergeable RX buffers)", ENOTSUP },
		{ 9000, INDIRECT, "", "does not offer VIRTIO_RING_F_INDIRECT_DESC", ENOTSUP },
		{ 1500, MRG, ",frag=1024", "open the port with mtu 750 or less", ENOTSUP },
	};
	struct fake f;
	struct pp_port *p;

	p = open_mtu(&f, 1500, true, 0, "");
	REQUIRE(p != NULL);
	CHECK(!(f.acked & (MRG | INDIRECT)));
	CHECK(((struct vq *)p->txq[0].priv)->mb == NULL);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);

	p = open_mtu(&f, 9000, true, 0, "");
	REQUIRE(p != NULL);
	CHECK((f.acked & (MRG | INDIRECT)) == (MRG | INDIRECT));
	CHECK(((struct vq *)p->rxq[0].priv)->mrg_rxbuf);
	CHECK(((struct vq *)p->txq[0].priv)->mb->indirect);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);

	/* The largest MTU a page holds without merging: 2862. */
	p = open_mtu(&f, 2862, true, MRG, "");
	REQUIRE(p != NULL);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pp_test_log_reset();
		errno = 0;
		p = open_mtu(&f, bad[i].mtu, true, bad[i].hide, bad[i].extra);
		CHECK(p == NULL);
		CHECK_EQ(errno, bad[i].err);
		if (!pp_test_log_has(bad[i].needle)) {
			fprintf(stderr, "case %u: message lacks '%s'\n", i,
				bad[i].needle);
			pp_test_failures++;
		}
		if (p)
			pp_port_close(p);
		fake_stop(&f);
	}
	all_pages_home();
}

/*
 * RX of chains over mergeable buffers: a 9000-byte packet comes out as
 * one run of segments with every byte in place; a chain whose later
 * buffers are not in the used ring yet waits (whole packets only), as
 * does one that does not fit in what is left of n; single-buffer
 * packets around them come through.
 */
static void rx_mrg_chains(bool in_order)
{
	static uint8_t data[9000];
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct fake f;
	struct pp_port *p;
	struct dev_vq d;
	unsigned int got, nb, i;
	uint16_t hold;

	p = open_mtu(&f, 9000, in_order, 0, "");
	REQUIRE(p != NULL);
	dev_vq_init(&d, &f, 0);
	for (i = 0; i < sizeof(data); i++)
		data[i] = pat(i, 1);

	/* Mergeable buffers take no colour: each is the page after the
	 * headroom, the header in its last bytes. */
	for (i = 0; i < 64; i++)
		CHECK_EQ(d.desc[i].len, PP_PAGE_SIZE - PP_FRAME_HEADROOM +
						VIRTIO_NET_HDR_LEN);
	/* A 60-byte packet, then 9000 bytes: three buffers. */
	CHECK_EQ(dev_rx_mrg(&d, data, 60), 1);
	nb = dev_rx_mrg(&d, data, 9000);
	CHECK_EQ(nb, 3);
	dev_publish(&d, d.used_idx);
	got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
	CHECK_EQ(got, 1 + nb);
	CHECK(pkt_is(fr, got, 60, 1));
	CHECK(pkt_is(fr + 1, got - 1, 9000, 1));
	recycle(p, fr, got);

	/* The chain's last buffer not published yet: only the packet
	 * before it comes out; then the chain, whole. */
	CHECK_EQ(dev_rx_mrg(&d, data, 100), 1);
	nb = dev_rx_mrg(&d, data, 9000);
	hold = d.used_idx;
	dev_publish(&d, (uint16_t)(hold - 1));
	got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
	CHECK_EQ(got, 1);
	CHECK(pkt_is(fr, got, 100, 1));
	recycle(p, fr, got);
	CHECK_EQ(pp_port_rx_burst(p, 0, fr, PP_NET_BURST), 0);
	dev_publish(&d, hold);
	/* Room for fewer segments than it has: it waits for a larger n. */
	CHECK_EQ(pp_port_rx_burst(p, 0, fr, nb - 1), 0);
	got = pp_port_rx_burst(p, 0, fr, nb);
	CHECK_EQ(got, nb);
	CHECK(pkt_is(fr, got, 9000, 1));
	recycle(p, fr, got);
	CHECK_EQ(rx_errors(p), 0);

	/* Many laps of the 64-entry ring, one packet of each size from 60
	 * to 9018 bytes in 997-byte steps, read two bursts at a time. */
	for (unsigned int lap = 0; lap < 30; lap++) {
		uint32_t len = 60 + (lap * 997) % 8959;

		for (i = 0; i < len; i++)
			data[i] = pat(i, lap);
		nb = dev_rx_mrg(&d, data, len);
		dev_publish(&d, d.used_idx);
		got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
		CHECK_EQ(got, nb);
		CHECK(pkt_is(fr, got, len, lap));
		recycle(p, fr, got);
	}
	CHECK_EQ(rx_errors(p), 0);
	CHECK_EQ(bad_used(p, false), 0);
	net_check_pools(p);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	all_pages_home();
}

static void test_rx_mrg_chains(void)
{
	rx_mrg_chains(false);
}

static void test_rx_mrg_chains_in_order(void)
{
	rx_mrg_chains(true);
}

/* The head of a chain of @nb at buffer @id: a header that says @nb, and
 * @len data bytes (used length header + len). */
static void dev_head(struct dev_vq *d, uint16_t id, uint16_t nb, uint32_t len)
{
	dev_write(d, id, len, nb);
	dev_used(d, id, VIRTIO_NET_HDR_LEN + len);
}

/*
 * A hostile back-end's num_buffers and chains: each bad packet is
 * refused (one error), never followed, every buffer it held back in the
 * pool; and a good packet right after it still comes through, so the
 * ring stays in step. @in_order: entries are checked by position.
 */
static void rx_mrg_lies(bool in_order)
{
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	static uint8_t data[100];
	struct fake f;
	struct pp_port *p;
	struct dev_vq d;
	uint64_t errs = 0, lies = 0;
	unsigned int got, i, c;
	uint16_t id[24];

	p = open_mtu(&f, 9000, in_order, 0, "");
	REQUIRE(p != NULL);
	dev_vq_init(&d, &f, 0);
	for (i = 0; i < sizeof(data); i++)
		data[i] = pat(i, 9);
	for (c = 0; c < 17; c++) {
		unsigned int want_err = 1, want_lie = 1, k;

		switch (c) {
		case 0: /* num_buffers 0 */
			dev_head(&d, dev_take(&d), 0, 100);
			break;
		case 1: /* num_buffers 2^16 - 1: past the ring */
			dev_head(&d, dev_take(&d), 0xffff, 100);
			break;
		case 2: /* 65: one more than the ring (and than is out) */
			dev_head(&d, dev_take(&d), 65, 100);
			break;
		case 3: /* a head's length of 2^32 - 1 */
			dev_write(&d, id[0] = dev_take(&d), 100, 1);
			dev_used(&d, id[0], 0xffffffffu);
			break;
		case 4: /* a head's length of 2^16 + header: past the page */
			dev_write(&d, id[0] = dev_take(&d), 100, 1);
			dev_used(&d, id[0], 65536 + VIRTIO_NET_HDR_LEN);
			break;
		case 5: /* a later buffer past its end */
		case 6: /* a later buffer of 0 bytes */
		case 7: /* a later buffer of 2^32 - 1 bytes */
		case 8: /* a later buffer of 2^16 bytes */
			for (k = 0; k < 3; k++)
				id[k] = dev_take(&d);
			dev_head(&d, id[0], 3, 100);
			dev_used(&d, id[1], c == 5 ? d.desc[id[1]].len + 1 :
					    c == 6 ? 0 :
					    c == 7 ? 0xffffffffu : 65536);
			dev_used(&d, id[2], 10);
			break;
		case 9: /* a loop: the chain names its head again */
		case 10: /* an id past the ring: 2^16 + 1 */
		case 11: /* an id of 2^32 - 1 */
			for (k = 0; k < 3; k++)
				id[k] = dev_take(&d);
			dev_head(&d, id[0], 3, 100);
			dev_used(&d, c == 9 ? id[0] : c == 10 ? 65537 :
							 0xffffffffu, 10);
			dev_used(&d, id[2], 10);
			break;
		case 12: /* a later buffer that names the one after it */
			for (k = 0; k < 3; k++)
				id[k] = dev_take(&d);
			dev_head(&d, id[0], 3, 100);
			dev_used(&d, id[2], 10);
			dev_used(&d, id[2], 10);
			break;
		case 13: /* 20 buffers: more segments than a packet has */
			for (k = 0; k < 20; k++)
				id[k] = dev_take(&d);
			dev_head(&d, id[0], 20, 100);
			for (k = 1; k < 20; k++)
				dev_used(&d, id[k], 100);
			want_lie = 0;
			break;
		case 14: /* 18 buffers: the most a packet has, taken */
			for (k = 0; k < 18; k++)
				id[k] = dev_take(&d);
			dev_head(&d, id[0], 18, 100);
			for (k = 1; k < 18; k++)
				dev_used(&d, id[k], 100);
			want_err = want_lie = 0;
			break;
		case 15: { /* one more than the buffers out: a lie */
			struct vq *vq = p->rxq[0].priv;

			/* One packet first, so that fewer than the ring are
			 * out (no refill for one buffer): the lie is then
			 * within the ring. */
			CHECK_EQ(dev_rx_mrg(&d, data, 100), 1);
			dev_publish(&d, d.used_idx);
			got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
			CHECK_EQ(got, 1);
			recycle(p, fr, got);
			CHECK(vq->size - vq->nr_free < 64);
			printf("     num_buffers %u with %u out\n",
			       vq->size - vq->nr_free + 1,
			       vq->size - vq->nr_free);
			dev_head(&d, dev_take(&d),
				 (uint16_t)(vq->size - vq->nr_free + 1), 100);
			break;
		}
		case 16: /* num_buffers 2, the head the last entry there */
			dev_head(&d, dev_take(&d), 2, 100);
			want_err = want_lie = 0;
			break;
		}
		/* By id, the buffer a lying entry named in place of
		 * id[1] is still out: the device fills it next, as the
		 * good packet (by position, the lie took it back). */
		if (!in_order && c >= 9 && c <= 12) {
			dev_write(&d, id[1], 0, 1);
			memcpy((uint8_t *)(uintptr_t)d.desc[id[1]].addr +
				       VIRTIO_NET_HDR_LEN, data, 100);
			dev_used(&d, id[1], VIRTIO_NET_HDR_LEN + 100);
		} else if (c != 16) {
			CHECK_EQ(dev_rx_mrg(&d, data, 100), 1);
		}
		dev_publish(&d, d.used_idx);
		got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
		errs += want_err;
		lies += want_lie;
		if (c == 14) {
			CHECK_EQ(got, 19);
			CHECK_EQ(pp_pkt_segs(fr, got), 18);
			CHECK_EQ(pp_pkt_len(fr, got), 100 + 17 * 100);
			CHECK(pkt_is(fr + 18, 1, 100, 9));
		} else if (c == 16) {
			/* Its second buffer never comes: it waits, taking
			 * nothing, however often asked. */
			CHECK_EQ(got, 0);
			CHECK_EQ(pp_port_rx_burst(p, 0, fr, PP_NET_BURST), 0);
		} else {
			CHECK_EQ(got, 1);
			CHECK(pkt_is(fr, got, 100, 9));
		}
		if (rx_errors(p) != errs || bad_used(p, false) != lies) {
			fprintf(stderr, "case %u: errors %llu (want %llu), bad_used %llu (want %llu)\n",
				c, (unsigned long long)rx_errors(p),
				(unsigned long long)errs,
				(unsigned long long)bad_used(p, false),
				(unsigned long long)lies);
			pp_test_failures++;
		}
		recycle(p, fr, got);
	}
	net_check_pools(p);
	/* The waiting head goes back at the close. */
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	all_pages_home();
}

static void test_rx_mrg_lies(void)
{
	rx_mrg_lies(false);
}

static void test_rx_mrg_lies_in_order(void)
{
	rx_mrg_lies(true);
}

/*
 * One packet of @len bytes (pat(, @seed)) in @segs frames from @pool:
 * the head behind PP_FRAME_HEADROOM, the others from their page's start.
 */
static void tx_pkt(struct pp_pool *pool, struct pp_frame *fr,
		   unsigned int segs, uint32_t len, uint32_t seed)
{
	uint32_t at = 0;

	for (unsigned int k = 0; k < segs; k++) {
		struct pp_page *page = pp_pool_alloc_pages(pool);
		uint32_t l = len / segs + (k < len % segs);
		uint8_t *b;

		REQUIRE(page != NULL);
		fr[k] = (struct pp_frame){
			.page = page, .offset = 0,
			.headroom = k ? 0 : PP_FRAME_HEADROOM,
			.len = (uint16_t)l, .more = k + 1 < segs,
		};
		b = pp_frame_data(&fr[k]);
		for (uint32_t i = 0; i < l; i++)
			b[i] = pat(at + i, seed);
		at += l;
	}
}

/*
 * The device's side of TX: the packet behind avail entry @id, one
 * descriptor or an indirect table (its entries in *@ndesc), the data
 * after the header copied to @buf. Returns the data's length; 0 when the
 * chain is not as the driver must write it (flags, next, the header).
 */
static uint32_t dev_tx_read(struct dev_vq *d, uint16_t id, uint8_t *buf,
			    size_t cap, unsigned int *ndesc)
{
	const struct vring_desc *t = &d->desc[id];
	uint32_t skip = VIRTIO_NET_HDR_LEN, got = 0;
	unsigned int n = 1, k;

	if (t->flags & VRING_DESC_F_INDIRECT) {
		if (t->len % sizeof(*t) || t->flags != VRING_DESC_F_INDIRECT)
			return 0;
		n = t->len / sizeof(*t);
		t = (const struct vring_desc *)(uintptr_t)t->addr;
	}
	*ndesc = n;
	for (k = 0; k < n; k++) {
		const uint8_t *b = (const uint8_t *)(uintptr_t)t[k].addr;
		uint32_t l = t[k].len;

		if ((k + 1 < n) != !!(t[k].flags & VRING_DESC_F_NEXT) ||
		    (k + 1 < n && t[k].next != k + 1) ||
		    (t[k].flags & VRING_DESC_F_WRITE))
			return 0;
		if (!k) {
			static const uint8_t zero[VIRTIO_NET_HDR_LEN];

			if (l < skip || memcmp(b, zero, skip))
				return 0;
			b += skip;
			l -= skip;
		}
		if (got + l > cap)
			return 0;
		memcpy(buf + got, b, l);
		got += l;
	}
	return got;
}

static uint64_t tx_errors(struct pp_port *p)
{
	struct pp_txq_stats s;

	pp_port_txq_stats(p, 0, &s);
	return s.errors;
}

static bool buf_is(const uint8_t *b, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (b[i] != pat(i, seed))
			return false;
	return true;
}

/*
 * TX of multi-buffer packets: each goes out as one indirect descriptor
 * (the header and the head's data, then each segment), singles around
 * them as before; every segment goes home on completion, in order or
 * by id (in reverse here). A packet that cannot go whole is dropped
 * whole (one error), an unfinished one at the end is not taken, and a
 * full ring takes none of a packet.
 */
static void tx_chains(bool in_order)
{
	static uint8_t buf[PP_FRAME_MAX_PKT];
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct fake f;
	struct pp_port *p;
	struct pp_pool *pool;
	struct dev_vq d;
	unsigned int nd = 0, i;
	uint16_t ids[64];
	struct vq *vq;

	p = open_mtu(&f, 9000, in_order, 0, "");
	REQUIRE(p != NULL);
	pool = pp_port_rxq_pool(p, 0);
	vq = p->txq[0].priv;
	dev_vq_init(&d, &f, 1);

	tx_pkt(pool, fr, 1, 64, 1);
	tx_pkt(pool, fr + 1, 3, 9000, 2);
	tx_pkt(pool, fr + 4, 1, 100, 3);
	tx_pkt(pool, fr + 5, 2, 5000, 4);
	tx_pkt(pool, fr + 7, 18, 9018, 5);   /* the most segments */
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 25), 25);
	CHECK_EQ(d.avail->idx, 5);
	for (i = 0; i < 5; i++) {
		static const uint32_t len[] = { 64, 9000, 100, 5000, 9018 };
		static const unsigned int segs[] = { 1, 3, 1, 2, 18 };

		ids[i] = dev_take(&d);
		CHECK_EQ(dev_tx_read(&d, ids[i], buf, sizeof(buf), &nd),
			 len[i]);
		CHECK_EQ(nd, segs[i]);
		CHECK(buf_is(buf, len[i], i + 1));
	}
	CHECK_EQ(tx_errors(p), 0);
	/* Completions: by id in reverse; in order by count. */
	for (i = 5; i-- > 0;)
		dev_used(&d, in_order ? ids[4 - i] : ids[i], 0);
	dev_publish(&d, d.used_idx);
	pp_port_tx_burst(p, 0, NULL, 0);
	CHECK_EQ(vq->nr_free, 64);
	CHECK_EQ(bad_used(p, true), 0);

	/* Dropped whole, one error each, nothing posted: a segment of 0
	 * bytes, one outside its page, a head without room for the
	 * header, 19 segments. */
	tx_pkt(pool, fr, 3, 3000, 6);
	fr[1].len = 0;
	tx_pkt(pool, fr + 3, 2, 3000, 6);
	fr[4].offset = 4000;
	tx_pkt(pool, fr + 5, 2, 3000, 6);
	fr[5].headroom = 4;
	tx_pkt(pool, fr + 7, 19, 9000, 6);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 26), 26);
	CHECK_EQ(tx_errors(p), 4);
	CHECK_EQ(d.avail->idx, 5);

	/* An unfinished packet at the end is not taken; the single
	 * before it is. */
	tx_pkt(pool, fr, 1, 64, 7);
	tx_pkt(pool, fr + 1, 3, 3000, 7);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 3), 1);
	for (i = 1; i < 4; i++)
		pp_pool_recycle_direct(pool, fr[i].page);
	ids[0] = dev_take(&d);

	/* A full ring: 62 more singles leave one slot; of two chains the
	 * first takes it, the second stays the caller's. */
	for (unsigned int b = 0; b < 62; b += 31) {
		tx_pkt(pool, fr, 1, 60, 8);
		for (i = 1; i < 31; i++)
			tx_pkt(pool, fr + i, 1, 60, 8);
		CHECK_EQ(pp_port_tx_burst(p, 0, fr, 31), 31);
	}
	CHECK_EQ(vq->nr_free, 1);
	tx_pkt(pool, fr, 3, 9000, 9);
	tx_pkt(pool, fr + 3, 3, 9000, 9);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 6), 3);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr + 3, 3), 0);
	for (i = 3; i < 6; i++)
		pp_pool_recycle_direct(pool, fr[i].page);
	CHECK_EQ(d.avail->idx, 5 + 1 + 62 + 1);
	/* All 64 back (by id: in the order taken). */
	for (i = 0; i < 63; i++)
		dev_used(&d, dev_take(&d), 0);
	dev_used(&d, ids[0], 0);
	dev_publish(&d, d.used_idx);
	pp_port_tx_burst(p, 0, NULL, 0);
	CHECK_EQ(vq->nr_free, 64);
	pp_pool_set_owner(pool);
	CHECK_EQ(pp_pool_check(pool), 0);

	/* A chain still on the ring at the close goes home whole. */
	tx_pkt(pool, fr, 4, 9000, 10);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 4), 4);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	all_pages_home();
}

static void test_tx_chains(void)
{
	tx_chains(false);
}

static void test_tx_chains_in_order(void)
{
	tx_chains(true);
}

/* At an MTU one buffer holds, TX has no indirect tables: a packet over
 * several buffers is taken and dropped whole, one error. */
static void test_tx_chain_small_mtu(void)
{
	struct pp_frame fr[4] = { 0 };
	struct fake f;
	struct pp_port *p;
	struct pp_pool *pool;
	struct dev_vq d;

	p = open_mtu(&f, 1500, true, 0, "");
	REQUIRE(p != NULL);
	pool = pp_port_rxq_pool(p, 0);
	dev_vq_init(&d, &f, 1);
	tx_pkt(pool, fr, 2, 1400, 1);
	tx_pkt(pool, fr + 2, 1, 64, 1);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 3), 3);
	CHECK_EQ(tx_errors(p), 1);
	CHECK_EQ(d.avail->idx, 1);
	dev_used(&d, dev_take(&d), 0);
	dev_publish(&d, d.used_idx);
	pp_port_tx_burst(p, 0, NULL, 0);
	pp_pool_set_owner(pool);
	CHECK_EQ(pp_pool_check(pool), 0);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	all_pages_home();
}

/*
 * A round trip at MTU 9000: packets of 60 to 9018 bytes go out on TX as
 * chains, the device (this test) copies each into the RX ring's
 * mergeable buffers as a vhost back-end does, and each comes back as one
 * packet with every byte in place; 300 of them, laps of both rings. Every
 * page is back at the end.
 */
static void round_trip(bool in_order, const char *extra)
{
	static uint8_t buf[PP_FRAME_MAX_PKT];
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct fake f;
	struct pp_port *p;
	struct pp_pool *pool;
	struct dev_vq tx, rx;
	unsigned int n, nd = 0, got, nb;
	uint64_t bytes = 0;

	p = open_mtu(&f, 9000, in_order, 0, extra);
	REQUIRE(p != NULL);
	pool = pp_port_rxq_pool(p, 0);
	dev_vq_init(&rx, &f, 0);
	dev_vq_init(&tx, &f, 1);
	for (n = 0; n < 300; n++) {
		uint32_t len = n % 3 == 0 ? 9000 : n % 3 == 1 ? 9018 :
			       60 + (n * 331) % 8958;
		unsigned int segs = len <= 3000 ? 1 : (len + 2999) / 3000;
		uint16_t id;

		tx_pkt(pool, fr, segs, len, n);
		CHECK_EQ(pp_port_tx_burst(p, 0, fr, segs), segs);
		id = dev_take(&tx);
		CHECK_EQ(dev_tx_read(&tx, id, buf, sizeof(buf), &nd), len);
		CHECK_EQ(nd, segs);
		dev_used(&tx, id, 0);
		dev_publish(&tx, tx.used_idx);
		nb = dev_rx_mrg(&rx, buf, len);
		dev_publish(&rx, rx.used_idx);
		got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
		CHECK_EQ(got, nb);
		if (!pkt_is(fr, got, len, n)) {
			fprintf(stderr, "packet %u (%u bytes) came back changed\n",
				n, len);
			pp_test_failures++;
		}
		bytes += pp_pkt_len(fr, got);
		recycle(p, fr, got);
	}
	pp_port_tx_burst(p, 0, NULL, 0);
	printf("     %u packets, %llu bytes round trip, every byte checked\n",
	       n, (unsigned long long)bytes);
	CHECK_EQ(rx_errors(p), 0);
	CHECK_EQ(tx_errors(p), 0);
	CHECK_EQ(((struct vq *)p->txq[0].priv)->nr_free, 64);
	net_check_pools(p);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	all_pages_home();
}

/*
 * MTU 9000 and a back-end that hangs up with a TX chain on the ring (not
 * completed) and an RX chain half in the used ring: the port takes both
 * back whole, reconnects, and a 9000-byte round trip works on the new
 * back-end. Every page is home after the close.
 */
static void test_reconnect_chains(void)
{
	static uint8_t data[9000];
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct fake f;
	struct pp_port *p;
	struct dev_vq d;
	unsigned int i, got;
	uint16_t hold;

	p = open_mtu(&f, 9000, true, 0, "");
	REQUIRE(p != NULL);
	for (i = 0; i < sizeof(data); i++)
		data[i] = pat(i, 3);
	tx_pkt(pp_port_rxq_pool(p, 0), fr, 3, 9000, 3);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 3), 3);
	CHECK_EQ(((struct vq *)p->txq[0].priv)->mb->chains, 1);
	dev_vq_init(&d, &f, 0);
	(void)dev_rx_mrg(&d, data, 9000);
	hold = d.used_idx;
	dev_publish(&d, (uint16_t)(hold - 1));
	CHECK_EQ(pp_port_rx_burst(p, 0, fr, PP_NET_BURST), 0);
	shutdown(__atomic_load_n(&f.conn, __ATOMIC_ACQUIRE), SHUT_RDWR);
	pthread_join(f.tid, NULL);
	for (i = 0; i < 300 && __atomic_load_n(&d.avail->idx,
					       __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	CHECK_EQ(d.avail->idx, 0);
	CHECK_EQ(((struct vq *)p->txq[0].priv)->mb->chains, 0);
	memset(f.desc, 0, sizeof(f.desc));
	f.conn = -1;
	REQUIRE(pthread_create(&f.tid, NULL, fake_thread, &f) == 0);
	for (i = 0; i < 300 && !f.desc[0]; i++)
		usleep(10000);
	REQUIRE(f.desc[0] != 0);
	for (i = 0; i < 300; i++) {
		CHECK_EQ(pp_port_rx_burst(p, 0, fr, PP_NET_BURST), 0);
		if (__atomic_load_n(&d.avail->idx, __ATOMIC_ACQUIRE) == 64)
			break;
		usleep(10000);
	}
	dev_vq_init(&d, &f, 0);
	CHECK_EQ(d.avail->idx, 64);
	(void)dev_rx_mrg(&d, data, 9000);
	dev_publish(&d, d.used_idx);
	got = pp_port_rx_burst(p, 0, fr, PP_NET_BURST);
	CHECK(got >= 3);
	CHECK(pkt_is(fr, got, 9000, 3));
	recycle(p, fr, got);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	all_pages_home();
}

static void test_round_trip_9000(void)
{
	round_trip(false, "");
}

static void test_round_trip_9000_in_order(void)
{
	round_trip(true, "");
}

/* RX into 1 KiB fragments: 9018 bytes over 12 of them. */
static void test_round_trip_9000_frag(void)
{
	round_trip(true, ",frag=1024");
	round_trip(false, ",frag=1024");
}

/* The kicks the eventfd of @fd holds (read, so reset); 0 when none. */
static uint64_t kicks_read(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/*
 * Kicks: none while the device says it polls (VRING_USED_F_NO_NOTIFY);
 * when it clears the flag just as we publish (so that the data path,
 * which reads the flag without a barrier, did not kick), the port's
 * reconnect thread kicks within VU_KICK_SWEEP_MS; and with the flag
 * clear, each publish kicks.
 */
static void test_kicks(void)
{
	struct fake f;
	struct pp_port *p;
	struct pp_frame fr[8] = { 0 };
	struct pp_pool *pool;
	struct dev_vq d;
	uint64_t k = 0;
	int i;

	fake_start_offer(&f, FAKE_GOOD, IN_ORDER);
	p = open_on(&f, "", &env.conf);
	REQUIRE(p != NULL);
	REQUIRE(f.kickfd[1] >= 0);
	pool = pp_port_rxq_pool(p, 0);
	dev_vq_init(&d, &f, 1);
	__atomic_store_n(&d.used->flags, VRING_USED_F_NO_NOTIFY,
			 __ATOMIC_RELEASE);
	usleep(30000);         /* a sweep or two, on nothing new */
	(void)kicks_read(f.kickfd[1]);
	tx_frames(pool, fr, 4);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 4), 4);
	usleep(30000);
	CHECK_EQ(kicks_read(f.kickfd[1]), 0);
	/* The device goes to sleep without having seen the publish. */
	__atomic_store_n(&d.used->flags, 0, __ATOMIC_RELEASE);
	for (i = 0; i < 100 && !k; i++) {
		usleep(5000);
		k = kicks_read(f.kickfd[1]);
	}
	CHECK(k >= 1);
	/* Nothing new: no more sweep kicks. */
	usleep(30000);
	CHECK_EQ(kicks_read(f.kickfd[1]), 0);
	/* The flag clear: the publish itself kicks. */
	tx_frames(pool, fr, 4);
	CHECK_EQ(pp_port_tx_burst(p, 0, fr, 4), 4);
	CHECK(kicks_read(f.kickfd[1]) >= 1);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
}

/*
 * The back-end hangs up while the port is open, and a new one answers on
 * the same socket: the port takes its rings back (bursts do nothing
 * meanwhile), reconnects by itself, and the RX ring fills again on the
 * next burst. No page is lost on the way.
 */
static void reconnect(bool exchange, const char *extra)
{
	struct fake f;
	struct pp_port *p;
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct dev_vq d;
	int i;

	fake_start(&f, FAKE_GOOD);
	p = open_on(&f, extra, &env.conf);
	REQUIRE(p != NULL);
	/* The queues' handshake with the reconnect thread: membarrier()
	 * where the kernel has it, else (or forced here, before the reconnect
	 * thread has any reason to look) an exchange per burst. */
	CHECK(pp_handshake_is_asym(&((struct vq *)p->rxq[0].priv)->hs) ==
	      (pp_os_membarrier_usable() == 0));
	if (exchange) {
		pp_handshake_init_lockword(&((struct vq *)p->rxq[0].priv)->hs);
		pp_handshake_init_lockword(&((struct vq *)p->txq[0].priv)->hs);
	}
	dev_vq_init(&d, &f, 0);
	CHECK_EQ(d.avail->idx, 64);
	/* Hang up; the fake's thread sees the end and leaves. */
	shutdown(__atomic_load_n(&f.conn, __ATOMIC_ACQUIRE), SHUT_RDWR);
	pthread_join(f.tid, NULL);
	/* The port notices: its ring is emptied (avail index back to 0). */
	for (i = 0; i < 300 && __atomic_load_n(&d.avail->idx,
					       __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	CHECK_EQ(d.avail->idx, 0);
	CHECK_EQ(pp_port_rx_burst(p, 0, fr, PP_NET_BURST), 0);
	/* A new back-end on the same socket. */
	memset(f.desc, 0, sizeof(f.desc));
	f.conn = -1;
	REQUIRE(pthread_create(&f.tid, NULL, fake_thread, &f) == 0);
	for (i = 0; i < 300 && !f.desc[0]; i++)
		usleep(10000);
	REQUIRE(f.desc[0] != 0);
	/* The ring fills on the next burst once the port is up again. */
	for (i = 0; i < 300; i++) {
		CHECK_EQ(pp_port_rx_burst(p, 0, fr, PP_NET_BURST), 0);
		if (__atomic_load_n(&d.avail->idx, __ATOMIC_ACQUIRE) == 64)
			break;
		usleep(10000);
	}
	CHECK_EQ(d.avail->idx, 64);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	all_pages_home();
}

static void test_reconnect(void)
{
	reconnect(false, "");
}

static void test_reconnect_exchange(void)
{
	reconnect(true, "");
}

/* With fragments out on the RX ring when the back-end goes: each goes
 * back to its pool from the reconnect thread, the ring refills with
 * fragments, and every page is home after the close. */
static void test_reconnect_frag(void)
{
	reconnect(false, ",frag=2048");
	reconnect(true, ",frag=1024");
}

/* ---- server=1: the socket file ---------------------------------------- */

/*
 * A fake back-end that is the client of a server=1 port: its thread waits
 * for a socket at the path (up to 10 s, or until fake_stop()), notes the
 * mode it had when it connected, and plays the back-end.
 */
static void *fake_client_thread(void *arg)
{
	struct fake *f = arg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool hooked = false;
	struct stat st;
	int fd = -1;

	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	for (int i = 0; i < 5000 && !__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE);
	     i++, usleep(2000)) {
		if (lstat(f->path, &st) || !S_ISSOCK(st.st_mode))
			continue;
		if (f->before_connect && !hooked) {
			hooked = true;
			f->before_connect(f);
			if (lstat(f->path, &st))
				continue;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			f->seen_mode = st.st_mode;
			break;
		}
		close(fd);
		fd = -1;
	}
	__atomic_store_n(&f->conn, fd, __ATOMIC_RELEASE);
	fake_serve(f, fd);
	return NULL;
}

static void fake_connect_at(struct fake *f, const char *path,
			    enum fake_mode mode,
			    void (*before_connect)(struct fake *f))
{
	memset(f, 0, sizeof(*f));
	f->mode = mode;
	f->lfd = -1;
	f->conn = -1;
	for (unsigned int i = 0; i < 4; i++)
		f->kickfd[i] = -1;
	f->before_connect = before_connect;
	snprintf(f->path, sizeof(f->path), "%s", path);
	REQUIRE(pthread_create(&f->tid, NULL, fake_client_thread, f) == 0);
}

static void fake_connect(struct fake *f, enum fake_mode mode,
			 void (*before_connect)(struct fake *f))
{
	fake_connect_at(f, sock_path(), mode, before_connect);
}

static struct pp_port *server_open_at(const char *path, const char *extra)
{
	char dev[256];

	snprintf(dev, sizeof(dev),
		 "virtio_user:path=%s,queue_size=64,server=1%s", path, extra);
	return pp_port_open(dev, &env.conf);
}

static struct pp_port *server_open(const char *extra)
{
	return server_open_at(sock_path(), extra);
}

/* Whether a program has a socket bound at @path (a datagram connect():
 * EPROTOTYPE from a stream socket, ECONNREFUSED from a file nobody has
 * bound), without connecting to it. */
static bool socket_bound(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool bound;

	memcpy(sa.sun_path, path, strlen(path) + 1);
	bound = !connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
		errno == EPROTOTYPE;
	close(fd);
	return bound;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	REQUIRE(fp != NULL);
	fputs(text, fp);
	REQUIRE(fclose(fp) == 0);
}

/* Whether @path is a regular file holding @text. */
static bool file_holds(const char *path, const char *text)
{
	char buf[64] = "";
	struct stat st;
	FILE *fp;
	size_t n;

	if (lstat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	fp = fopen(path, "r");
	if (!fp)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return !strcmp(buf, text);
}

/*
 * Something that is not a socket at a server=1 port's path (a mistyped
 * path, as root): the open is refused at once with a message that names
 * what is there, and nothing is removed. A symbolic link too, even to a
 * socket: neither it nor what it points to is touched.
 */
static void test_server_not_a_socket(void)
{
	const char *path = sock_path();
	char target[128];
	struct pp_port *p;
	struct stat st;

	unlink(path);
	write_file(path, "keep me\n");
	pp_test_log_reset();
	errno = 0;
	p = server_open("");
	CHECK(p == NULL);
	CHECK_EQ(errno, EEXIST);
	CHECK(pp_test_log_has("exists and is a regular file"));
	CHECK(pp_test_log_has(path));
	CHECK(file_holds(path, "keep me\n"));
	if (p)
		pp_port_close(p);
	unlink(path);

	snprintf(target, sizeof(target), "%s.target", path);
	write_file(target, "and me\n");
	REQUIRE(symlink(target, path) == 0);
	pp_test_log_reset();
	errno = 0;
	p = server_open("");
	CHECK(p == NULL);
	CHECK_EQ(errno, EEXIST);
	CHECK(pp_test_log_has("exists and is a symbolic link"));
	CHECK(!lstat(path, &st) && S_ISLNK(st.st_mode));
	CHECK(file_holds(target, "and me\n"));
	if (p)
		pp_port_close(p);
	unlink(path);
	unlink(target);
	all_pages_home();
}

/*
 * A second program given the same path must not take the first one's
 * socket: another program's listening socket (it sees no connection from
 * the check, and its clients still reach it), and a server=1 port's own
 * (its back-end stays, the socket file stays). The port's socket is there
 * while it is open, and gone after the close.
 */
static void test_server_live_socket(void)
{
	const char *path = sock_path();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat before, after;
	struct pp_port *p, *q;
	struct fake f;
	int lfd, c, fd;

	memcpy(sa.sun_path, path, strlen(path) + 1);
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	REQUIRE(lfd >= 0);
	REQUIRE(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	REQUIRE(listen(lfd, 4) == 0);
	REQUIRE(lstat(path, &before) == 0);
	pp_test_log_reset();
	errno = 0;
	p = server_open("");
	CHECK(p == NULL);
	CHECK_EQ(errno, EADDRINUSE);
	CHECK(pp_test_log_has("is the socket of a running program"));
	CHECK(!lstat(path, &after) && after.st_ino == before.st_ino);
	/* The check connected to nothing: no connection waits. */
	CHECK(accept(lfd, NULL, NULL) < 0 && errno == EAGAIN);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(connect(c, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	fd = accept(lfd, NULL, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	close(c);
	close(lfd);
	unlink(path);
	if (p)
		pp_port_close(p);

	fake_connect(&f, FAKE_GOOD, NULL);
	p = server_open("");
	REQUIRE(p != NULL);
	CHECK(!lstat(path, &before) && S_ISSOCK(before.st_mode));
	CHECK(socket_bound(path));
	pp_test_log_reset();
	errno = 0;
	q = server_open("");
	CHECK(q == NULL);
	CHECK_EQ(errno, EADDRINUSE);
	CHECK(pp_test_log_has("is the socket of a running program"));
	CHECK(!lstat(path, &after) && after.st_ino == before.st_ino &&
	      after.st_ctim.tv_nsec == before.st_ctim.tv_nsec);
	if (q)
		pp_port_close(q);
	/* The first port still has its back-end: a burst works. */
	{
		struct dev_vq d;

		dev_vq_init(&d, &f, 0);
		CHECK_EQ(d.avail->idx, 64);
	}
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	CHECK(lstat(path, &after) && errno == ENOENT);
	unlink(path);
	all_pages_home();
}

/*
 * A stale socket (a file left by a program that is gone: nothing bound
 * to it) is the one thing a server=1 port replaces. The port's own socket
 * is then at the path while the port is open, and removed at its close.
 */
static void test_server_stale_socket(void)
{
	const char *path = sock_path();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pp_port *p;
	struct stat st;
	struct fake f;
	int fd;

	memcpy(sa.sun_path, path, strlen(path) + 1);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	close(fd);
	REQUIRE(!lstat(path, &st) && S_ISSOCK(st.st_mode));
	REQUIRE(!socket_bound(path));
	fake_connect(&f, FAKE_GOOD, NULL);
	p = server_open("");
	REQUIRE(p != NULL);
	CHECK(!lstat(path, &st) && S_ISSOCK(st.st_mode));
	CHECK(socket_bound(path));
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	CHECK(lstat(path, &st) && errno == ENOENT);
	unlink(path);
	all_pages_home();
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The back-end (fake @f) of a server=1 port hangs up; returns when the
 * port has emptied its RX ring (@d: the device's side of it). */
static void hang_up(struct fake *f, struct dev_vq *d)
{
	dev_vq_init(d, f, 0);
	CHECK_EQ(d->avail->idx, 64);
	shutdown(__atomic_load_n(&f->conn, __ATOMIC_ACQUIRE), SHUT_RDWR);
	pthread_join(f->tid, NULL);
	for (int i = 0; i < 300 && __atomic_load_n(&d->avail->idx,
						   __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	CHECK_EQ(d->avail->idx, 0);
}

/*
 * server=1 and a back-end that hangs up: the port waits for the next one
 * on the same socket (the same file all along: no delete and re-create
 * while it waits), which connects, and the port comes back up.
 */
static void test_server_reconnect(void)
{
	const char *path = sock_path();
	struct pp_frame fr[PP_NET_BURST] = { 0 };
	struct stat before, after;
	struct pp_port *p;
	struct dev_vq d;
	struct fake f;
	int i;

	unlink(path);
	fake_connect(&f, FAKE_GOOD, NULL);
	p = server_open("");
	REQUIRE(p != NULL);
	CHECK(lstat(path, &before) == 0);
	hang_up(&f, &d);
	/* Over two of the reconnect thread's 200 ms periods. */
	for (i = 0; i < 10; i++) {
		usleep(50000);
		CHECK(!lstat(path, &after) && same_file(&after, &before));
	}
	memset(f.desc, 0, sizeof(f.desc));
	f.conn = -1;
	REQUIRE(pthread_create(&f.tid, NULL, fake_client_thread, &f) == 0);
	for (i = 0; i < 300 && !f.desc[0]; i++)
		usleep(10000);
	CHECK(f.desc[0] != 0);
	for (i = 0; f.desc[0] && i < 300; i++) {
		CHECK_EQ(pp_port_rx_burst(p, 0, fr, PP_NET_BURST), 0);
		if (__atomic_load_n(&d.avail->idx, __ATOMIC_ACQUIRE) == 64)
			break;
		usleep(10000);
	}
	CHECK_EQ(d.avail->idx, 64);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	CHECK(lstat(path, &after) && errno == ENOENT);
	unlink(path);
	all_pages_home();
}

/*
 * Someone puts a file at the path of an open server=1 port (in place of
 * its socket): the port leaves it alone while it waits for a back-end,
 * and at its close.
 */
static void test_server_path_replaced(void)
{
	const char *path = sock_path();
	struct pp_port *p;
	struct dev_vq d;
	struct fake f;

	unlink(path);
	fake_connect(&f, FAKE_GOOD, NULL);
	p = server_open("");
	REQUIRE(p != NULL);
	hang_up(&f, &d);
	unlink(path);
	write_file(path, "not yours\n");
	usleep(500000);
	CHECK(file_holds(path, "not yours\n"));
	/* A fake that waits for a socket there (none comes) until stopped. */
	f.conn = -1;
	REQUIRE(pthread_create(&f.tid, NULL, fake_client_thread, &f) == 0);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	CHECK(file_holds(path, "not yours\n"));
	unlink(path);
	all_pages_home();
}

/*
 * A path of 100 bytes, whose directory is 93: the port's private
 * directory beside it (where the socket is made before it is linked into
 * place) has a longer name than a unix socket takes, and is reached
 * through its descriptor instead. Nothing is left beside the socket.
 */
static void test_server_long_path(void)
{
	char dir[128], path[sizeof(dir) + 8];
	struct pp_port *p;
	struct dirent *de;
	struct stat st;
	struct fake f;
	DIR *d;
	int n;

	n = snprintf(dir, sizeof(dir), "/tmp/pp-vhost-hostile-%d-", (int)getpid());
	memset(dir + n, 'd', 93 - (size_t)n);
	dir[93] = '\0';
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	REQUIRE(strlen(path) == 100);
	REQUIRE(mkdir(dir, 0755) == 0 || errno == EEXIST);
	fake_connect_at(&f, path, FAKE_GOOD, NULL);
	p = server_open_at(path, "");
	CHECK(p != NULL);
	CHECK(!lstat(path, &st) && S_ISSOCK(st.st_mode) &&
	      (st.st_mode & 07777) == 0600);
	d = opendir(dir);
	REQUIRE(d != NULL);
	n = 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			CHECK(!strcmp(de->d_name, "s.sock"));
			n++;
		}
	closedir(d);
	CHECK_EQ(n, 1);
	if (p)
		CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	CHECK(lstat(path, &st) && errno == ENOENT);
	unlink(path);
	CHECK(rmdir(dir) == 0);
	all_pages_home();
}

/* ---- server=1: who may connect ---------------------------------------- */

/* The uid and gid of 'nobody' (65534 where it has no entry). */
static void nobody(uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam("nobody");

	*uid = pw ? pw->pw_uid : 65534;
	*gid = pw ? pw->pw_gid : 65534;
}

/*
 * A child process that turns into 'nobody', connects to the path and
 * plays the back-end until it receives a file descriptor. Its exit status:
 * 10: connect() refused with EACCES; 11: refused otherwise; 0: connected
 * and the port hung up before sending anything; 1: messages but no file
 * descriptor; 2: a file descriptor (the arena's memory, the first one
 * sent). Returns it, or -1 if the child did not exit.
 */
static int nobody_client(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int status, fd;
	uid_t uid;
	gid_t gid;
	pid_t pid;

	nobody(&uid, &gid);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct fake c;

		alarm(10);
		if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
			_exit(12);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(errno == EACCES ? 10 : 11);
		memset(&c, 0, sizeof(c));
		for (unsigned int i = 0; i < 4; i++)
			c.kickfd[i] = -1;
		c.quit_on_fd = true;
		fake_serve(&c, fd);
		_exit(c.nr_fds ? 2 : c.msgs ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Before the fake connects: 'nobody' tries, as the socket is. */
static void nobody_tries(struct fake *f)
{
	f->status = nobody_client(f->path);
}

/* Before the fake connects: 'nobody' tries through a socket someone
 * made world-writable (the mode no longer keeps it out). */
static void nobody_tries_0666(struct fake *f)
{
	CHECK(chmod(f->path, 0666) == 0);
	f->status = nobody_client(f->path);
}

/*
 * Under umask 000 (containers, some service managers) a server=1 port's
 * socket is still 0600, so another user cannot connect to it: the
 * back-end that connects receives the arena's memory file, every pool
 * and port on the arena.
 */
static void test_server_umask(void)
{
	const char *path = sock_path();
	struct pp_port *p;
	struct stat st;
	struct fake f;
	mode_t old;
	bool root = geteuid() == 0;

	unlink(path);
	fake_connect(&f, FAKE_GOOD, root ? nobody_tries : NULL);
	old = umask(0);
	p = server_open("");
	umask(old);
	CHECK(p != NULL);
	CHECK(!lstat(path, &st) && (st.st_mode & 07777) == 0600);
	if (p)
		CHECK_EQ(pp_port_close(p), 0);
	/* The fake's thread is done with the hook and the mode now. */
	fake_stop(&f);
	CHECK_EQ(f.seen_mode & 07777, 0600);
	if (root)
		CHECK_EQ(f.status, 10);
	else
		pp_test_skip_part("nobody", "not root: cannot become another user");
	unlink(path);
	all_pages_home();
}

/*
 * A back-end run by another user than root or ours is refused when it
 * connects (SO_PEERCRED), before anything is sent to it, even through a
 * socket whose mode would let it in; the port goes on waiting and takes
 * the next back-end, ours.
 */
static void test_server_peer_uid(void)
{
	const char *path = sock_path();
	struct pp_port *p;
	struct fake f;
	char who[32];
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0) {
		pp_test_skip_part("peer uid", "not root: cannot become another user");
		return;
	}
	unlink(path);
	fake_connect(&f, FAKE_GOOD, nobody_tries_0666);
	pp_test_log_reset();
	p = server_open("");
	CHECK(p != NULL);
	nobody(&uid, &gid);
	snprintf(who, sizeof(who), "run by uid %u", (unsigned int)uid);
	CHECK(pp_test_log_has("refused a back-end on"));
	CHECK(pp_test_log_has(who));
	if (p)
		CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	CHECK_EQ(f.status, 0);
	unlink(path);
	all_pages_home();
}

/* ---- close ------------------------------------------------------------ */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * A slow back-end, which answers each GET_VRING_BASE after 4 s, within
 * the 5 s a reply may take: the close waits one deadline for all the
 * rings together (5 s), not up to 5 s for each (32 s here for the 8 rings
 * of 4 queue pairs; 21 minutes at 128), says how many rings it left, and
 * every page still goes home.
 */
static void test_close_deadline(void)
{
	struct pp_port_conf c = env.conf;
	struct pp_port *p;
	struct fake f;
	double t;

	c.nr_rxq = c.nr_txq = 4;
	fake_start(&f, FAKE_SLOW_VRING_BASE);
	f.queue_num = 4;
	p = open_on(&f, ",queues=4", &c);
	REQUIRE(p != NULL);
	pp_test_log_reset();
	t = now_s();
	CHECK_EQ(pp_port_close(p), 0);
	t = now_s() - t;
	printf("     close with a back-end that takes 4 s a ring: %.2f s\n", t);
	CHECK(t < 2 * 5.0);
	CHECK(pp_test_log_has("7 of its 8 rings"));
	fake_stop(&f);
	all_pages_home();
}

/*
 * A growable arena shared as the memory table: the table covers every
 * segment committed at open (a region each: each has its own file), and
 * while the port is open the arena is pinned: asking it to grow is
 * refused with a message that names the port; closed, it grows again.
 */
static void test_growable_arena_pinned(void)
{
	struct pp_arena_opts ao = {
		.sz = sizeof(ao), .size = 8 << 20, .max_size = 24 << 20,
		.grow_step = 4 << 20, .page_size = PP_PAGE_SIZE_4K,
		.numa_node = PP_NUMA_NODE_ANY, .name = "vu-grow",
	};
	struct pp_allocator_opts lo = {
		.sz = sizeof(lo), .nr_arenas = 1,
		.flags = PP_ALLOCATOR_F_MANUAL_RESIZE,
	};
	struct pp_port_conf c = env.conf;
	struct pp_arena *arena = pp_arena_create(&ao);
	struct pp_allocator *alloc;
	unsigned long allocated = 1;
	unsigned int segs;
	struct pp_port *p;
	struct fake f;
	char want[200];

	REQUIRE(arena != NULL);
	lo.arenas = &arena;
	alloc = pp_allocator_create(&lo);
	REQUIRE(alloc != NULL);
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	segs = pp_arena_segment_count(arena);
	CHECK(segs >= 2);
	c.allocator = alloc;
	fake_start(&f, FAKE_GOOD);
	p = open_on(&f, "", &c);
	REQUIRE(p != NULL);
	CHECK_EQ(f.regions, segs);

	pp_test_log_reset();
	CHECK_EQ(pp_allocator_grow(alloc, 0), -EPERM);
	snprintf(want, sizeof(want),
		 "arena 'vu-grow': cannot grow: the arena is fixed at 12 MiB because the vhost-user memory table of port %s registers it once",
		 pp_port_name(p));
	CHECK(pp_test_log_has(want));
	CHECK_EQ(pp_arena_committed(arena), 12u << 20);
	CHECK_EQ(pp_port_close(p), 0);
	fake_stop(&f);
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(pp_arena_committed(arena), 16u << 20);
	pp_allocator_drain_thread(alloc);
	CHECK_EQ(pp_allocator_check(alloc, &allocated), 0);
	CHECK_EQ(allocated, 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

int main(void)
{
	pp_test_capture_log();
	net_env_init(&env, 16 << 20);
	RUN_TEST(test_no_backend);
	RUN_TEST(test_bad_replies);
	RUN_TEST(test_queues_refused);
	RUN_TEST(test_rx_used_lies);
	RUN_TEST(test_tx_used_lies);
	RUN_TEST(test_tx_out_of_order);
	RUN_TEST(test_in_order_negotiated);
	RUN_TEST(test_rx_in_order_lies);
	RUN_TEST(test_tx_in_order);
	RUN_TEST(test_kicks);
	RUN_TEST(test_reconnect);
	RUN_TEST(test_reconnect_exchange);
	RUN_TEST(test_rx_frag);
	RUN_TEST(test_rx_frag_in_order);
	RUN_TEST(test_frag_devarg);
	RUN_TEST(test_mrg_mtu);
	RUN_TEST(test_rx_mrg_chains);
	RUN_TEST(test_rx_mrg_chains_in_order);
	RUN_TEST(test_rx_mrg_lies);
	RUN_TEST(test_rx_mrg_lies_in_order);
	RUN_TEST(test_tx_chains);
	RUN_TEST(test_tx_chains_in_order);
	RUN_TEST(test_tx_chain_small_mtu);
	RUN_TEST(test_round_trip_9000);
	RUN_TEST(test_round_trip_9000_in_order);
	RUN_TEST(test_round_trip_9000_frag);
	RUN_TEST(test_reconnect_chains);
	RUN_TEST(test_reconnect_frag);
	RUN_TEST(test_server_not_a_socket);
	RUN_TEST(test_server_live_socket);
	RUN_TEST(test_server_stale_socket);
	RUN_TEST(test_server_reconnect);
	RUN_TEST(test_server_path_replaced);
	RUN_TEST(test_server_long_path);
	RUN_TEST(test_server_umask);
	RUN_TEST(test_server_peer_uid);
	RUN_TEST(test_close_deadline);
	RUN_TEST(test_growable_arena_pinned);
	net_env_fini(&env);
	return pp_test_result();
}
