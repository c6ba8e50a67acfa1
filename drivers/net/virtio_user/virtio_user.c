/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio_user.c - the virtio_user poll-mode driver's control path: we are
 * the driver of a virtio-net device whose other side is a vhost-user
 * back-end (DPDK's net_vhost, OVS-DPDK's dpdkvhostuser ports, VPP, Snabb)
 * reached over a unix socket, as DPDK's net_virtio_user and a container's
 * virtio-user port are.
 *
 *   virtio_user:path=/run/x.sock[,queues=N][,queue_size=N][,server=1]
 *       [,mac=02:00:00:00:00:01][,mrg_rxbuf=0|1][,in_order=0|1]
 *       [,frag=<bytes>]
 *
 * Open: connect (or, with server=1, listen and accept one back-end: the
 * socket is made at the path only where nothing is, or a stale socket no
 * program has, and stays until the close, which removes it if it is still
 * the one the port made),
 * SET_OWNER, negotiate features (VERSION_1 required; MRG_RXBUF only with
 * mrg_rxbuf=1: each RX buffer is a page, larger than any frame without
 * GSO, so merging buffers gains nothing, and without it RX need not read
 * the header's num_buffers, a cache line the back-end wrote; IN_ORDER
 * when offered, unless in_order=0: TX completions are then taken back by
 * count and RX buffers by position; MQ when queues > 1) and protocol
 * features,
 * SET_MEM_TABLE with the arena's memfd segments (their fds in SCM_RIGHTS),
 * then for each of the 2 x queues virtqueues (RX 2q, TX 2q+1): CALL, NUM,
 * BASE, ADDR, KICK, and ENABLE when protocol features were negotiated.
 * A GET_FEATURES at the end is a barrier: its reply means the back-end
 * has handled everything before it. RX rings are filled from the queues'
 * page_pools before the back-end starts.
 *
 * Addresses: the back-end maps each region at its own address and
 * translates ours by the table; we give each region's guest-physical
 * address as its virtual address (what DPDK's virtio-user does), so a
 * descriptor holds a plain pointer and no DMA domain is involved: the
 * IOVA of a page is its address, as in PP_IOVA_VA.
 *
 * Reconnect: a thread per port (vu_watch) watches the socket. When the
 * back-end goes away it takes each ring back (waiting for a burst in
 * progress: each burst enters its queue's handshake), returns the ring's
 * pages to their pools, keeps the ring down (held: bursts do nothing), and
 * connects again every 200 ms (or, with server=1, waits for a back-end
 * on the socket); a new back-end gets the whole handshake again and each
 * RX ring refills on its own thread's next burst. While a back-end is
 * there the thread also wakes every VU_KICK_SWEEP_MS to kick the rings
 * whose publish the data path may not have kicked (vq_kick(), which
 * reads the back-end's no-notify flag without a barrier).
 *
 * Close: the thread is stopped, GET_VRING_BASE goes out on each ring (the
 * back-end stops the ring before it answers), all of them within one
 * deadline (VU_CLOSE_MS), then the socket closes, then every page still
 * on a ring goes back to its pool.
 *
 * frag=SIZE: each RX buffer is a SIZE-byte fragment of a pool page
 * (pp_page_pool.h "Fragments") instead of the whole page; the back-end's
 * lengths are checked against the fragment's end (virtio_user_rxtx.c).
 * frag=auto is refused: a buffer is posted before the back-end writes a
 * frame into it, so there is no frame to size it to.
 *
 * Not supported yet: packed virtqueues, frames over one buffer (a page,
 * or a fragment with frag=).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pagepool/pp_arena.h>
#include <pagepool/pp_drivers.h>
#include <pagepool/pp_net_driver.h>

#include "pp_log.h"
#include "drivers.h"
#include "pp_os_fault.h"
#include "virtio_user_priv.h"

#define VU_QUEUE_SIZE_DEFAULT 256   /* DPDK virtio_user's default */
#define VU_QUEUE_SIZE_MIN 64        /* one burst */
#define VU_QUEUE_SIZE_MAX 32768     /* virtio 1.1 2.6: at most 2^15 */
#define VU_QUEUES_MAX 128
/* How long a reply, or a back-end connecting in server mode, may take. */
#define VU_TIMEOUT_MS 5000
/* How long the close waits for the back-end to stop all the rings, in
 * all: one reply timeout each would hold a close 5 s a ring behind a
 * slow back-end (21 minutes at 128 queue pairs). */
#define VU_CLOSE_MS 5000
/* How often the reconnect thread tries again while the back-end is away. */
#define VU_RETRY_MS 200
/* How often it kicks, for a back-end that asks for kicks, the rings whose
 * publish the data path may not have kicked (vq_kick_sweep()). */
#define VU_KICK_SWEEP_MS 10

struct vu_port {
	char path[108];
	char devstr[256];       /* for messages */
	int sock;               /* -1 while the back-end is away */
	bool server;
	/* server=1: the listening socket, from open to close. */
	struct vhost_user_listener listener;
	bool protocol;          /* PROTOCOL_FEATURES negotiated */
	bool mrg;               /* mrg_rxbuf=1 */
	bool in_order;          /* in_order=1 (default): ask for IN_ORDER */
	unsigned int frag;      /* frag=: RX fragment size, 0: a page */
	uint64_t features;
	uint8_t mac[6];
	unsigned int nr_qp;
	unsigned int size;
	struct vq *vq;          /* 2 x nr_qp: RX 2q, TX 2q+1 */
	struct pp_port *port;
	struct pp_arena *arena;
	/* The reconnect thread (vu_watch), stopped through stopfd. */
	pthread_t watcher;
	bool watching;
	int stopfd;
};

/* ---- memory table --------------------------------------------------- */

/*
 * The arena's segments as vhost-user regions, neighbours that continue
 * one file merged into one region. Returns the count, or -E2BIG when more
 * than the protocol's eight are left, -EINVAL when the segments do not
 * tile the arena (TX checks addresses against the arena's span).
 */
static int vu_mem_table(struct pp_arena *arena, struct vhost_user_memory *mem,
			int *fds, const char *devstr)
{
	unsigned int i, nr = pp_arena_segment_count(arena);
	uintptr_t next = (uintptr_t)pp_arena_base(arena);
	int k = -1;

	memset(mem, 0, sizeof(*mem));
	for (i = 0; i < nr; i++) {
		struct pp_arena_segment s;
		struct vhost_user_region *r = k >= 0 ? &mem->regions[k] : NULL;

		if (pp_arena_segment(arena, i, &s))
			return -EINVAL;
		if ((uintptr_t)s.addr != next || s.fd < 0) {
			PP_ERR("device '%s': arena %s is not one range of file-backed segments: virtio_user shares it by file descriptor (create it with pp_arena_create)",
			       devstr, pp_arena_name(arena));
			return -EINVAL;
		}
		next = (uintptr_t)s.addr + s.len;
		if (r && fds[k] == s.fd &&
		    r->userspace_addr + r->memory_size == (uintptr_t)s.addr &&
		    r->mmap_offset + r->memory_size == s.fd_offset) {
			r->memory_size += s.len;
			continue;
		}
		if (++k == VHOST_USER_MAX_REGIONS) {
			PP_ERR("device '%s': arena %s has %u segments that make more than the %d regions vhost-user can share: create a smaller arena, or one with larger pages (fewer segments)",
			       devstr, pp_arena_name(arena), nr,
			       VHOST_USER_MAX_REGIONS);
			return -E2BIG;
		}
		r = &mem->regions[k];
		r->guest_phys_addr = (uintptr_t)s.addr;
		r->userspace_addr = (uintptr_t)s.addr;
		r->memory_size = s.len;
		r->mmap_offset = s.fd_offset;
		fds[k] = s.fd;
	}
	if (next != (uintptr_t)pp_arena_base(arena) + pp_arena_size(arena)) {
		PP_ERR("device '%s': arena %s's segments do not cover it", devstr,
		       pp_arena_name(arena));
		return -EINVAL;
	}
	mem->nregions = (uint32_t)(k + 1);
	return k + 1;
}

/* ---- devargs -------------------------------------------------------- */

static int vu_parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6], i;
	char end;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &end) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static int vu_parse(struct vu_port *vp, struct pp_port *port,
		    const struct pp_devargs *da, bool *mrg)
{
	const char *path = pp_devargs_get(da, "path");
	const char *mac = pp_devargs_get(da, "mac");
	unsigned long queues = port->nr_rxq, size = VU_QUEUE_SIZE_DEFAULT;
	unsigned long server = 0, mrg_rxbuf = 0, in_order = 1;

	if (!path) {
		PP_ERR("device '%s': name the vhost-user socket: 'virtio_user:path=/run/x.sock[,queues=N][,queue_size=N][,server=1]'",
		       da->devstr);
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(vp->path)) {
		PP_ERR("device '%s': socket path '%s' is longer than the %zu bytes a unix socket takes: use a shorter path",
		       da->devstr, path, sizeof(vp->path) - 1);
		return -EINVAL;
	}
	if (pp_devargs_uint(da, "queues", 1, VU_QUEUES_MAX, &queues) ||
	    pp_devargs_uint(da, "queue_size", VU_QUEUE_SIZE_MIN,
			    VU_QUEUE_SIZE_MAX, &size) ||
	    pp_devargs_uint(da, "server", 0, 1, &server) ||
	    pp_devargs_uint(da, "mrg_rxbuf", 0, 1, &mrg_rxbuf) ||
	    pp_devargs_uint(da, "in_order", 0, 1, &in_order))
		return -EINVAL;
	if (size & (size - 1)) {
		PP_ERR("device '%s': queue_size=%lu is not a power of two (virtio 1.1 2.6: split rings are)",
		       da->devstr, size);
		return -EINVAL;
	}
	if (queues != port->nr_rxq || port->nr_txq != port->nr_rxq) {
		PP_ERR("device '%s': queues=%lu but the port was opened with %u RX and %u TX queues; a virtio queue pair is one of each: give the same count to all three",
		       da->devstr, queues, port->nr_rxq, port->nr_txq);
		return -EINVAL;
	}
	if (port->conf.headroom < VIRTIO_NET_HDR_LEN) {
		PP_ERR("device '%s': headroom %u is too small for the %d-byte virtio-net header: leave headroom 0 (default) or give at least %d",
		       da->devstr, port->conf.headroom, VIRTIO_NET_HDR_LEN,
		       VIRTIO_NET_HDR_LEN);
		return -EINVAL;
	}
	/* A fragment holds the headroom (the header in its last bytes)
	 * and at least a minimum frame. */
	if (pp_devargs_get(da, "frag") &&
	    !strcmp(pp_devargs_get(da, "frag"), "auto")) {
		PP_ERR("device '%s': virtio_user takes no frag=auto: RX buffers are posted before the back-end writes a frame into them, so none can be sized to its frame; give frag=<bytes> from %u to %u",
		       da->devstr,
		       (unsigned int)port->conf.headroom + PP_NET_FRAG_MIN_FRAME,
		       (unsigned int)PP_PAGE_SIZE);
		return -EINVAL;
	}
	if (pp_devargs_frag(da, port->conf.headroom, PP_NET_FRAG_MIN_FRAME,
			    &vp->frag))
		return -EINVAL;
	memcpy(vp->mac, "\x02\x00\x00\x00\x00\x01", 6);
	if (mac && vu_parse_mac(mac, vp->mac)) {
		PP_ERR("device '%s': mac=%s is not six hex bytes like 02:00:00:00:00:01",
		       da->devstr, mac);
		return -EINVAL;
	}
	memcpy(vp->path, path, strlen(path) + 1);
	vp->server = server;
	vp->in_order = in_order;
	vp->nr_qp = (unsigned int)queues;
	vp->size = (unsigned int)size;
	*mrg = mrg_rxbuf;
	return 0;
}

/* ---- virtqueues ----------------------------------------------------- */

static unsigned int ring_order(unsigned int size)
{
	size_t bytes = vq_ring_bytes(size);
	unsigned int order = 0;

	while (((size_t)PP_PAGE_SIZE << order) < bytes)
		order++;
	return order;
}

static void vq_free(struct vq *vq, struct pp_allocator *alloc)
{
	if (vq->pages)
		vq_reclaim(vq, alloc);
	if (vq->ring_page)
		pp_free_pages(alloc, vq->ring_page, vq->ring_order);
	if (vq->kickfd >= 0)
		close(vq->kickfd);
	if (vq->callfd >= 0)
		close(vq->callfd);
	free(vq->pages);
	free(vq->rx_off);
	free(vq->rx_end);
	memset(vq, 0, sizeof(*vq));
	vq->kickfd = vq->callfd = -1;
}

static int vq_alloc(struct vq *vq, struct pp_port *port, unsigned int size,
		    uint16_t hdr_len, struct pp_arena *arena, unsigned int frag)
{
	vq->ring_order = (uint16_t)ring_order(size);
	vq->ring_page = pp_alloc_pages(port->allocator, port->conf.nid,
				       vq->ring_order);
	vq->pages = pp_os_calloc(size, sizeof(*vq->pages));
	vq->rx_off = pp_os_calloc(size, sizeof(*vq->rx_off));
	if (frag)
		vq->rx_end = pp_os_calloc(size, sizeof(*vq->rx_end));
	vq->kickfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	vq->callfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!vq->ring_page || !vq->pages || !vq->rx_off ||
	    (frag && !vq->rx_end) || vq->kickfd < 0 || vq->callfd < 0) {
		PP_ERR("port %s: out of memory or file descriptors for a virtqueue of %u entries",
		       port->name, size);
		return -ENOMEM;
	}
	vq_layout(vq, pp_page_address(vq->ring_page), size);
	vq->hdr_len = hdr_len;
	vq->headroom = (uint16_t)port->conf.headroom;
	vq->frag = frag;
	vq->mem_base = (uintptr_t)pp_arena_base(arena);
	vq->mem_size = pp_arena_size(arena);
	return 0;
}

/* Tell the back-end about virtqueue @idx. */
static int vq_setup_msgs(struct vu_port *vp, unsigned int idx)
{
	struct vq *vq = &vp->vq[idx];
	struct vhost_user_msg msg = { .request = VHOST_USER_SET_VRING_ADDR };
	int err;

	err = vhost_user_send(vp->sock, vp->path,
			      &(struct vhost_user_msg){
				      .request = VHOST_USER_SET_VRING_CALL,
				      .size = sizeof(uint64_t),
				      .payload.u64 = idx },
			      &vq->callfd, 1);
	if (!err)
		err = vhost_user_set_state(vp->sock, vp->path,
					   VHOST_USER_SET_VRING_NUM, idx,
					   vp->size);
	if (!err)
		err = vhost_user_set_state(vp->sock, vp->path,
					   VHOST_USER_SET_VRING_BASE, idx, 0);
	if (err)
		return err;
	msg.size = sizeof(msg.payload.addr);
	msg.payload.addr.index = idx;
	msg.payload.addr.desc = (uintptr_t)vq->desc;
	msg.payload.addr.avail = (uintptr_t)vq->avail;
	msg.payload.addr.used = (uintptr_t)vq->used;
	err = vhost_user_send(vp->sock, vp->path, &msg, NULL, 0);
	if (!err)
		err = vhost_user_send(vp->sock, vp->path,
				      &(struct vhost_user_msg){
					      .request = VHOST_USER_SET_VRING_KICK,
					      .size = sizeof(uint64_t),
					      .payload.u64 = idx },
				      &vq->kickfd, 1);
	if (!err && vp->protocol)
		err = vhost_user_set_state(vp->sock, vp->path,
					   VHOST_USER_SET_VRING_ENABLE, idx, 1);
	return err;
}

/* ---- negotiation ---------------------------------------------------- */

static int vu_negotiate(struct vu_port *vp, bool mrg)
{
	const char *devstr = vp->devstr;
	uint64_t feat = 0, want, pfeat = 0, qnum = 1;
	int err;

	/* SET_OWNER has no payload. */
	err = vhost_user_send(vp->sock, vp->path,
			      &(struct vhost_user_msg){
				      .request = VHOST_USER_SET_OWNER },
			      NULL, 0);
	if (!err)
		err = vhost_user_call(vp->sock, vp->path,
				      VHOST_USER_GET_FEATURES, &feat);
	if (err)
		return err;
	if (!(feat & (1ull << VIRTIO_F_VERSION_1))) {
		PP_ERR("device '%s': the back-end does not offer VIRTIO_F_VERSION_1 (features 0x%llx): virtio_user drives virtio 1.x devices only",
		       devstr, (unsigned long long)feat);
		return -ENOTSUP;
	}
	want = 1ull << VIRTIO_F_VERSION_1;
	if (mrg)
		want |= 1ull << VIRTIO_NET_F_MRG_RXBUF;
	if (vp->in_order)
		want |= 1ull << VIRTIO_F_IN_ORDER;
	if (vp->nr_qp > 1)
		want |= 1ull << VIRTIO_NET_F_MQ;
	if (feat & (1ull << VHOST_USER_F_PROTOCOL_FEATURES)) {
		want |= 1ull << VHOST_USER_F_PROTOCOL_FEATURES;
		err = vhost_user_call(vp->sock, vp->path,
				      VHOST_USER_GET_PROTOCOL_FEATURES, &pfeat);
		if (!err)
			err = vhost_user_set_u64(vp->sock, vp->path,
						 VHOST_USER_SET_PROTOCOL_FEATURES,
						 pfeat & (1ull << VHOST_USER_PROTOCOL_F_MQ));
		if (err)
			return err;
		vp->protocol = true;
		if (vp->nr_qp > 1 && (pfeat & (1ull << VHOST_USER_PROTOCOL_F_MQ))) {
			err = vhost_user_call(vp->sock, vp->path,
					      VHOST_USER_GET_QUEUE_NUM, &qnum);
			if (err)
				return err;
		}
	}
	if (vp->nr_qp > 1 && (!(feat & (1ull << VIRTIO_NET_F_MQ)) ||
			      qnum < vp->nr_qp)) {
		PP_ERR("device '%s': queues=%u but the back-end offers %s%llu queue pair(s): give the back-end more queues (testpmd --vdev 'net_vhost0,iface=...,queues=%u') or open fewer",
		       devstr, vp->nr_qp,
		       feat & (1ull << VIRTIO_NET_F_MQ) ? "" : "no multi-queue, ",
		       (unsigned long long)qnum, vp->nr_qp);
		return -EINVAL;
	}
	vp->features = feat & want;
	return vhost_user_set_u64(vp->sock, vp->path, VHOST_USER_SET_FEATURES,
				  vp->features);
}

/*
 * Everything after the connect: features, the memory table, and each
 * virtqueue. @fill: fill the RX rings first (at open, from this thread;
 * after a reconnect the rings' own threads fill them on their next
 * burst). The last GET_FEATURES is a barrier: its reply means the
 * back-end has handled every message before it.
 */
static int vu_handshake(struct vu_port *vp, bool fill)
{
	struct vhost_user_msg mt = { .request = VHOST_USER_SET_MEM_TABLE };
	struct vhost_user_memory mem;
	int fds[VHOST_USER_MAX_REGIONS];
	uint64_t barrier = 0;
	unsigned int i;
	int err, nr;

	nr = vu_mem_table(vp->arena, &mem, fds, vp->devstr);
	if (nr < 0)
		return nr;
	memcpy(&mt.payload.mem, &mem, sizeof(mem));
	mt.size = (uint32_t)(8 + nr * sizeof(struct vhost_user_region));
	err = vu_negotiate(vp, vp->mrg);
	if (!err)
		err = vhost_user_send(vp->sock, vp->path, &mt, fds,
				      (unsigned int)nr);
	if (err)
		return err;
	for (i = 0; i < vp->nr_qp; i++) {
		struct vq *rx = &vp->vq[2 * i];

		rx->mrg_rxbuf = vp->features &
				(1ull << VIRTIO_NET_F_MRG_RXBUF);
		rx->in_order = vp->features & (1ull << VIRTIO_F_IN_ORDER);
		vp->vq[2 * i + 1].in_order = rx->in_order;
		if (fill)
			vq_rx_fill(rx, vp->port->rxq[i].pool);
	}
	for (i = 0; i < 2 * vp->nr_qp; i++) {
		err = vq_setup_msgs(vp, i);
		if (err)
			return err;
	}
	err = vhost_user_call(vp->sock, vp->path, VHOST_USER_GET_FEATURES,
			      &barrier);
	if (!err)
		PP_INFO("port %s: vhost-user %s %s, %u queue pair(s) of %u, features 0x%llx, %d memory region(s), RX buffers %u-byte %s",
			vp->port->name, vp->server ? "server" : "client",
			vp->path, vp->nr_qp, vp->size,
			(unsigned long long)vp->features, nr,
			vp->frag ? vp->frag : (unsigned int)PP_PAGE_SIZE,
			vp->frag ? "fragments" : "pages");
	return err;
}

/* ---- reconnect ------------------------------------------------------ */

/* Wait @ms or until close asks the thread to stop; true: stop. */
static bool vu_wait_stop(struct vu_port *vp, int fd, int ms, short *revents)
{
	struct pollfd p[2] = {
		{ .fd = vp->stopfd, .events = POLLIN },
		{ .fd = fd, .events = POLLIN | POLLRDHUP },
	};

	*revents = 0;
	if (poll(p, fd >= 0 ? 2 : 1, ms) > 0) {
		if (p[0].revents)
			return true;
		*revents = p[1].revents;
	}
	return false;
}

/*
 * The back-end went away (its end of the socket closed, or it sent
 * what nobody asked for): every ring is taken back, emptied and marked
 * down, so bursts do nothing until a back-end is there again.
 */
static void vu_went_away(struct vu_port *vp)
{
	unsigned int i;

	PP_WARN("port %s: the vhost-user back-end on %s went away: its rings are emptied and the port reconnects (%s)",
		vp->port->name, vp->path,
		vp->server ? "waiting for it on the socket" :
			     "connecting again every 200 ms");
	close(vp->sock);
	vp->sock = -1;
	for (i = 0; i < 2 * vp->nr_qp; i++)
		vq_take_down(&vp->vq[i], vp->port->allocator);
}

static int vu_try_reconnect(struct vu_port *vp)
{
	unsigned int i;
	int fd, err;

	if (vp->server)
		err = vhost_user_accept(&vp->listener, vp->path, 0,
					VU_TIMEOUT_MS, true, &fd);
	else
		err = vhost_user_connect(vp->path, VU_TIMEOUT_MS, true, &fd);
	if (err)
		return err;
	vp->sock = fd;
	err = vu_handshake(vp, false);
	if (err) {
		close(vp->sock);
		vp->sock = -1;
		return err;
	}
	for (i = 0; i < 2 * vp->nr_qp; i++)
		vq_up(&vp->vq[i]);
	PP_INFO("port %s: reconnected to the vhost-user back-end on %s",
		vp->port->name, vp->path);
	return 0;
}

/*
 * The reconnect thread: watches the socket while a back-end is there
 * (nothing is due from it between our requests, so anything readable
 * is its end of the socket closing), and while it is away connects again
 * every VU_RETRY_MS, or with server=1 sleeps on the listening socket
 * until a back-end connects (the socket file stays as it is: nothing is
 * removed or made again while the port waits); there a failed attempt
 * waits VU_RETRY_MS before the next, so that an accept() that fails at
 * once (out of descriptors) does not spin. Only this thread uses the
 * socket between open and close.
 */
static void *vu_watch(void *arg)
{
	struct vu_port *vp = arg;
	short ev;

	for (;;) {
		if (vp->sock >= 0) {
			unsigned int i;

			if (vu_wait_stop(vp, vp->sock, VU_KICK_SWEEP_MS, &ev))
				break;
			if (ev) {
				vu_went_away(vp);
				continue;
			}
			for (i = 0; i < 2 * vp->nr_qp; i++)
				vp->vq[i].swept = vq_kick_sweep(&vp->vq[i],
								vp->vq[i].swept);
			continue;
		}
		if (!vp->server && vu_wait_stop(vp, -1, VU_RETRY_MS, &ev))
			break;
		if (vp->server) {
			if (vu_wait_stop(vp, vp->listener.fd, -1, &ev))
				break;
			if (!ev)
				continue;
		}
		if (vu_try_reconnect(vp) && vp->server &&
		    vu_wait_stop(vp, -1, VU_RETRY_MS, &ev))
			break;
	}
	return NULL;
}

static void vu_free(struct vu_port *vp, struct pp_port *port)
{
	unsigned int i;
	uint64_t one = 1;

	if (vp->watching) {
		if (write(vp->stopfd, &one, sizeof(one)) != sizeof(one))
			PP_ERR("port %s: cannot stop the reconnect thread: %s",
			       port->name, strerror(errno));
		pthread_join(vp->watcher, NULL);
		vp->watching = false;
	}
	if (vp->stopfd >= 0)
		close(vp->stopfd);

	if (vp->sock >= 0)
		close(vp->sock);
	vhost_user_unlisten(&vp->listener, vp->path);
	for (i = 0; vp->vq && i < 2 * vp->nr_qp; i++)
		vq_free(&vp->vq[i], port->allocator);
	free(vp->vq);
	free(vp);
}

static int virtio_user_probe(struct pp_port *port, const struct pp_devargs *da)
{
	struct vu_port *vp;
	unsigned int i;
	bool mrg = false;
	int err;

	vp = pp_os_calloc(1, sizeof(*vp));
	if (!vp) {
		PP_ERR("device '%s': out of memory", da->devstr);
		return -ENOMEM;
	}
	vp->sock = -1;
	vp->listener.fd = -1;
	vp->port = port;
	snprintf(vp->devstr, sizeof(vp->devstr), "%s", da->devstr);
	vp->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vp->stopfd < 0) {
		err = -errno;
		PP_ERR("device '%s': eventfd: %s", da->devstr, strerror(errno));
		goto err_free;
	}
	err = vu_parse(vp, port, da, &mrg);
	if (err)
		goto err_free;
	vp->mrg = mrg;
	vp->arena = pp_net_port_arena(port, "one memory table per port");
	if (!vp->arena) {
		err = -EINVAL;
		goto err_free;
	}
	vp->vq = pp_os_calloc(2 * vp->nr_qp, sizeof(*vp->vq));
	if (!vp->vq) {
		PP_ERR("device '%s': out of memory", da->devstr);
		err = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < 2 * vp->nr_qp; i++)
		vp->vq[i].kickfd = vp->vq[i].callfd = -1;
	for (i = 0; i < 2 * vp->nr_qp; i++) {
		/* RX rings (even) take frag=; TX rings send frames. */
		err = vq_alloc(&vp->vq[i], port, vp->size, VIRTIO_NET_HDR_LEN,
			       vp->arena, i % 2 ? 0 : vp->frag);
		if (err)
			goto err_free;
		pp_handshake_init(&vp->vq[i].hs);
	}
	for (i = 0; i < vp->nr_qp; i++) {
		port->rxq[i].priv = &vp->vq[2 * i];
		port->txq[i].priv = &vp->vq[2 * i + 1];
	}

	if (vp->server) {
		err = vhost_user_listen(vp->path, &vp->listener);
		if (!err)
			err = vhost_user_accept(&vp->listener, vp->path,
						VU_TIMEOUT_MS, VU_TIMEOUT_MS,
						false, &vp->sock);
	} else {
		err = vhost_user_connect(vp->path, VU_TIMEOUT_MS, false,
					 &vp->sock);
	}
	if (err)
		goto err_free;
	err = vu_handshake(vp, true);
	if (err)
		goto err_free;
	err = -pthread_create(&vp->watcher, NULL, vu_watch, vp);
	if (err) {
		PP_ERR("device '%s': cannot start the reconnect thread: %s",
		       da->devstr, strerror(-err));
		goto err_free;
	}
	vp->watching = true;
	port->priv = vp;
	return 0;

err_free:
	for (i = 0; i < port->nr_rxq; i++)
		port->rxq[i].priv = NULL;
	for (i = 0; i < port->nr_txq; i++)
		port->txq[i].priv = NULL;
	vu_free(vp, port);
	return err;
}

/*
 * Stop each ring: the back-end answers GET_VRING_BASE once it no longer
 * touches the ring, so its pages may go back to the pools. A back-end
 * that is gone already has stopped too. All the rings share one deadline
 * (VU_CLOSE_MS); after it, or after a failed request, the rest are not
 * asked, and their pages go back with the others, as before a deadline
 * there was: one message says how many.
 */
static void vu_stop_rings(struct vu_port *vp)
{
	int64_t end = vhost_user_now_ms() + VU_CLOSE_MS;
	unsigned int i, n = 2 * vp->nr_qp;
	int err = 0;

	if (vp->sock < 0)
		return;
	for (i = 0; i < n; i++) {
		uint64_t base = i;

		err = vhost_user_call_until(vp->sock, vp->path,
					    VHOST_USER_GET_VRING_BASE, &base,
					    end);
		if (err)
			break;
	}
	if (err == -ETIMEDOUT)
		PP_WARN("port %s: the vhost-user back-end on %s did not stop %u of its %u rings within the close's %d ms: the port closes without waiting for them (is the back-end stuck?)",
			vp->port->name, vp->path, n - i, n, VU_CLOSE_MS);
	else if (err)
		PP_WARN("port %s: %u of its %u rings not stopped by the vhost-user back-end on %s (%s): the port closes without them",
			vp->port->name, n - i, n, vp->path, strerror(-err));
}

static void virtio_user_remove(struct pp_port *port)
{
	struct vu_port *vp = port->priv;

	if (!vp)
		return;
	/* The reconnect thread first: then the socket is this thread's. */
	if (vp->watching) {
		uint64_t one = 1;

		if (write(vp->stopfd, &one, sizeof(one)) == sizeof(one))
			pthread_join(vp->watcher, NULL);
		vp->watching = false;
	}
	vu_stop_rings(vp);
	vu_free(vp, port);
	port->priv = NULL;
}

static const char *const virtio_user_keys[] = {
	"path", "queues", "queue_size", "server", "mac", "mrg_rxbuf",
	"in_order", "frag", NULL,
};

const struct pp_net_driver pp_net_virtio_user_driver = {
	.name = "virtio_user",
	.keys = virtio_user_keys,
	.help = "path=<vhost-user socket>, queues=<1..128>, queue_size=<64..32768, power of two>, server=<0|1>, mac=<xx:xx:xx:xx:xx:xx>, mrg_rxbuf=<0|1> (default 0), in_order=<0|1> (default 1: when offered), frag=<bytes> (RX buffers are fragments of pool pages)",
	.ops = {
		.probe = virtio_user_probe,
		.remove = virtio_user_remove,
		.rx_burst = virtio_user_rx_burst,
		.tx_burst = virtio_user_tx_burst,
	},
};
