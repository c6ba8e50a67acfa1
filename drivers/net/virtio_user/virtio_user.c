/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio_user.c - the virtio_user poll-mode driver's port: we are the
 * driver of a virtio-net device whose other side is a vhost-user
 * back-end (DPDK's net_vhost, OVS-DPDK's dpdkvhostuser ports, VPP, Snabb)
 * reached over a unix socket, as DPDK's net_virtio_user and a container's
 * virtio-user port are. This file is the port's open and close; the
 * driver's other files:
 *
 *   virtio_user_negotiate.c  what the back-end is told once connected
 *   virtio_user_reconnect.c  the thread that watches the back-end and
 *                            connects again when it goes away
 *   virtio_user_rxtx.c       the data path: split virtqueues
 *   vhost_user.c             the socket, its messages and replies
 *
 *   virtio_user:path=/run/x.sock[,queues=N][,queue_size=N][,server=1]
 *       [,mac=02:00:00:00:00:01][,mrg_rxbuf=0|1][,in_order=0|1]
 *       [,frag=<bytes>]
 *
 * Open: connect (or, with server=1, listen and accept one back-end: the
 * socket is made at the path only where nothing is, or a stale socket no
 * program has, and stays until the close, which removes it if it is still
 * the one the port made), run the vhost-user handshake with the RX rings
 * filled first, and start the reconnect thread.
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
 * Multi-buffer packets (pp_net.h): when the port's MTU makes frames
 * larger than one RX buffer holds (vu_rx_room()), VIRTIO_NET_F_MRG_RXBUF
 * is negotiated (mrg_rxbuf=1 asks for it at any MTU; mrg_rxbuf=0 with
 * such an MTU is refused) and the back-end must offer it; a received
 * packet over several buffers comes out as a run of frames. TX sends a
 * multi-buffer packet as one indirect descriptor
 * (VIRTIO_RING_F_INDIRECT_DESC, required as well): virtio_user_priv.h,
 * struct vq_mb.
 *
 * Not supported yet: packed virtqueues.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
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
/* How long the close waits for the back-end to stop all the rings, in
 * all: one reply timeout each would hold a close 5 s a ring behind a
 * slow back-end (21 minutes at 128 queue pairs). */
#define VU_CLOSE_MS 5000

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

/*
 * The data one RX buffer holds at least: a page after the largest
 * colour a buffer may get (pp_net_buf_color(), chosen for a
 * VQ_COLOR_LEN frame) and the headroom, or with frag= the fragment after
 * the headroom. The header shares the headroom, not the data.
 */
static unsigned int vu_rx_room(const struct pp_port *port, unsigned int frag)
{
	unsigned int hr = port->conf.headroom;
	unsigned int color = (PP_NET_COLORS - 1) * PP_CACHE_LINE;

	if (frag)
		return frag - hr;
	while (color && color + hr + VQ_COLOR_LEN > PP_PAGE_SIZE)
		color -= PP_CACHE_LINE;
	return (unsigned int)PP_PAGE_SIZE - color - hr;
}

/*
 * Mergeable RX buffers from the MTU: needed when the port's largest
 * frame (MTU + PP_ETH_OVERHEAD) is more than one buffer holds; then
 * asked for unless mrg_rxbuf=0 says no, which is refused. @mrg_rxbuf: 0,
 * 1, or 2 when not given.
 */
static int vu_parse_mtu(struct vu_port *vp, struct pp_port *port,
			const struct pp_devargs *da, unsigned long mrg_rxbuf,
			bool *mrg)
{
	unsigned int mtu = pp_port_mtu(port);
	unsigned int frame = mtu + PP_ETH_OVERHEAD;

	vp->rx_room = vu_rx_room(port, vp->frag);
	vp->mrg_need = frame > vp->rx_room;
	if (vp->mrg_need && mrg_rxbuf == 0) {
		PP_ERR("device '%s': mtu %u makes frames of up to %u bytes, more than one RX buffer holds (%u bytes), and mrg_rxbuf=0 forbids spreading them over several: drop mrg_rxbuf=0, or open the port with mtu %u or less",
		       da->devstr, mtu, frame, vp->rx_room,
		       vp->rx_room - PP_ETH_OVERHEAD);
		return -EINVAL;
	}
	*mrg = mrg_rxbuf == 1 || vp->mrg_need;
	return 0;
}

static int vu_parse(struct vu_port *vp, struct pp_port *port,
		    const struct pp_devargs *da, bool *mrg)
{
	const char *path = pp_devargs_get(da, "path");
	const char *mac = pp_devargs_get(da, "mac");
	unsigned long queues = port->nr_rxq, size = VU_QUEUE_SIZE_DEFAULT;
	unsigned long server = 0, mrg_rxbuf = 2, in_order = 1;

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
	return vu_parse_mtu(vp, port, da, mrg_rxbuf, mrg);
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

static void vq_mb_free(struct vq_mb *mb, struct pp_allocator *alloc)
{
	if (!mb)
		return;
	if (mb->ind_page)
		pp_free_pages(alloc, mb->ind_page, mb->ind_order);
	free(mb->segs);
	free(mb->nsegs);
	free(mb);
}

/* TX of multi-buffer packets (struct vq_mb): the indirect tables in the
 * arena, and our record of each slot's segments. */
static int vq_mb_alloc(struct vq *vq, struct pp_port *port, unsigned int size)
{
	size_t bytes = (size_t)size * PP_FRAME_MAX_SEGS *
		       sizeof(struct vring_desc);
	struct vq_mb *mb = pp_os_calloc(1, sizeof(*mb));

	vq->mb = mb;
	if (!mb) {
		PP_ERR("port %s: out of memory", port->name);
		return -ENOMEM;
	}
	while (((size_t)PP_PAGE_SIZE << mb->ind_order) < bytes)
		mb->ind_order++;
	mb->ind_page = pp_alloc_pages(port->allocator, port->conf.nid,
				      mb->ind_order);
	mb->segs = pp_os_calloc((size_t)size * PP_FRAME_MAX_SEGS,
				sizeof(*mb->segs));
	mb->nsegs = pp_os_calloc(size, sizeof(*mb->nsegs));
	if (!mb->ind_page || !mb->segs || !mb->nsegs) {
		PP_ERR("port %s: out of memory for the TX indirect tables of a %u-entry ring (%zu bytes of the arena, %zu of the heap): give a smaller queue_size or a larger arena",
		       port->name, size, bytes,
		       bytes / sizeof(struct vring_desc) * sizeof(void *));
		return -ENOMEM;
	}
	mb->ind = pp_page_address(mb->ind_page);
	return 0;
}

static void vq_free(struct vq *vq, struct pp_allocator *alloc, bool tx)
{
	if (vq->pages)
		vq_reclaim(vq, alloc);
	if (tx)
		vq_mb_free(vq->mb, alloc);
	else
		free(vq->rx_end);
	if (vq->ring_page)
		pp_free_pages(alloc, vq->ring_page, vq->ring_order);
	if (vq->kickfd >= 0)
		close(vq->kickfd);
	if (vq->callfd >= 0)
		close(vq->callfd);
	free(vq->pages);
	free(vq->rx_off);
	memset(vq, 0, sizeof(*vq));
	vq->kickfd = vq->callfd = -1;
}

static int vq_alloc(struct vq *vq, struct pp_port *port, unsigned int size,
		    uint16_t hdr_len, const struct vu_port *vp, unsigned int frag)
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
	vq->color_len = VQ_COLOR_LEN;
	vq->frag = frag;
	vq->mem_base = (uintptr_t)pp_arena_base(vp->arena);
	vq->mem_size = vp->mem_len;
	return 0;
}

static void vu_free(struct vu_port *vp, struct pp_port *port)
{
	unsigned int i;

	vu_watch_stop(vp);
	if (vp->sock >= 0)
		close(vp->sock);
	vhost_user_unlisten(&vp->listener, vp->path);
	for (i = 0; vp->vq && i < 2 * vp->nr_qp; i++)
		vq_free(&vp->vq[i], port->allocator, i % 2);
	free(vp->vq);
	if (vp->pinned)
		pp_arena_unpin(vp->arena);
	free(vp);
}

static int virtio_user_probe(struct pp_port *port, const struct pp_devargs *da)
{
	char who[96];
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
	vp->stopfd = -1;
	vp->listener.fd = -1;
	vp->port = port;
	snprintf(vp->devstr, sizeof(vp->devstr), "%s", da->devstr);
	err = vu_parse(vp, port, da, &mrg);
	if (err)
		goto err_free;
	vp->mrg = mrg;
	vp->arena = pp_net_port_arena(port, "one memory table per port");
	if (!vp->arena) {
		err = -EINVAL;
		goto err_free;
	}
	/* Before any page is taken: every page lies in what is pinned. */
	snprintf(who, sizeof(who), "the vhost-user memory table of port %s",
		 port->name);
	err = pp_arena_pin(vp->arena, who, &vp->mem_len);
	if (err)
		goto err_free;
	vp->pinned = true;
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
			       vp, i % 2 ? 0 : vp->frag);
		/* A port whose RX may chain buffers sends chains too. */
		if (!err && i % 2 && vp->mrg)
			err = vq_mb_alloc(&vp->vq[i], port, vp->size);
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
	err = vu_watch_start(vp);
	if (err)
		goto err_free;
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
	vu_watch_stop(vp);
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
	.help = "path=<vhost-user socket>, queues=<1..128>, queue_size=<64..32768, power of two>, server=<0|1>, mac=<xx:xx:xx:xx:xx:xx>, mrg_rxbuf=<0|1> (default: 1 when the MTU's frames need several RX buffers), in_order=<0|1> (default 1: when offered), frag=<bytes> (RX buffers are fragments of pool pages)",
	.ops = {
		.probe = virtio_user_probe,
		.remove = virtio_user_remove,
		.rx_burst = virtio_user_rx_burst,
		.tx_burst = virtio_user_tx_burst,
		.xstats = virtio_user_xstats,
		.mac_addr = virtio_user_mac_addr,
	},
};
