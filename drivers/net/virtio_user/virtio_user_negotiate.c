/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio_user_negotiate.c - what a vhost-user back-end is told once the
 * socket is connected, at open and again after each reconnect
 * (vu_handshake()):
 *
 * SET_OWNER, negotiate features (VERSION_1 required; MRG_RXBUF, with
 * INDIRECT_DESC for TX chains, only when the MTU's frames need several
 * RX buffers or with mrg_rxbuf=1: a 1500-byte frame fits a page, so
 * merging buffers gains nothing there, and without it RX need not read
 * the header's num_buffers, a cache line the back-end wrote; both are
 * required when the MTU needs them (vu_check_mtu()); IN_ORDER
 * when offered, unless in_order=0: TX completions are then taken back by
 * count and RX buffers by position; MQ when queues > 1) and protocol
 * features,
 * SET_MEM_TABLE with the arena's memfd segments (their fds in SCM_RIGHTS),
 * then for each of the 2 x queues virtqueues (RX 2q, TX 2q+1): CALL, NUM,
 * BASE, ADDR, KICK, and ENABLE when protocol features were negotiated.
 * A GET_FEATURES at the end is a barrier: its reply means the back-end
 * has handled everything before it. At open, RX rings are filled from
 * the queues' page_pools before the back-end starts.
 *
 * Addresses: the back-end maps each region at its own address and
 * translates ours by the table; we give each region's guest-physical
 * address as its virtual address (what DPDK's virtio-user does), so a
 * descriptor holds a plain pointer and no DMA domain is involved: the
 * IOVA of a page is its address, as in PP_IOVA_VA.
 *
 * The messages go out through vhost_user.c; the port's other parts are
 * virtio_user.c (open, close) and virtio_user_reconnect.c.
 */
#include <errno.h>
#include <string.h>

#include <pagepool/pp_arena.h>
#include <pagepool/pp_net_driver.h>

#include "pp_log.h"
#include "virtio_user_priv.h"

/* ---- memory table --------------------------------------------------- */

/*
 * The arena's segments in its first @len bytes (what the port pinned at
 * open: a growable arena's committed part) as vhost-user regions,
 * neighbours that continue one file merged into one region. Returns the
 * count, or -E2BIG when more than the protocol's eight are left, -EINVAL
 * when the segments do not tile those bytes (TX checks addresses
 * against them).
 */
static int vu_mem_table(struct pp_arena *arena, size_t len,
			struct vhost_user_memory *mem, int *fds,
			const char *devstr)
{
	unsigned int i, nr = pp_arena_segment_count(arena);
	uintptr_t next = (uintptr_t)pp_arena_base(arena);
	uintptr_t end = next + len;
	int k = -1;

	memset(mem, 0, sizeof(*mem));
	for (i = 0; i < nr; i++) {
		struct pp_arena_segment s;
		struct vhost_user_region *r = k >= 0 ? &mem->regions[k] : NULL;

		if (pp_arena_segment(arena, i, &s))
			return -EINVAL;
		if ((uintptr_t)s.addr >= end)
			break;
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
	if (next != end) {
		PP_ERR("device '%s': arena %s's segments do not cover it", devstr,
		       pp_arena_name(arena));
		return -EINVAL;
	}
	mem->nregions = (uint32_t)(k + 1);
	return k + 1;
}

/* ---- virtqueues ----------------------------------------------------- */

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

/*
 * A port whose MTU makes frames larger than one RX buffer needs the
 * back-end to spread them over several (MRG_RXBUF) and to take a chain
 * on TX (INDIRECT_DESC: vq_mb): without either it cannot carry them.
 */
static int vu_check_mtu(struct vu_port *vp, uint64_t feat)
{
	const char *miss;

	if (!vp->mrg_need)
		return 0;
	if (!(feat & (1ull << VIRTIO_NET_F_MRG_RXBUF)))
		miss = "VIRTIO_NET_F_MRG_RXBUF (mergeable RX buffers)";
	else if (!(feat & (1ull << VIRTIO_RING_F_INDIRECT_DESC)))
		miss = "VIRTIO_RING_F_INDIRECT_DESC (how virtio_user sends a packet over several buffers)";
	else
		return 0;
	PP_ERR("device '%s': mtu %u makes frames of up to %u bytes, more than one %u-byte RX buffer holds, and the back-end does not offer %s (features 0x%llx): turn it on in the back-end, or open the port with mtu %u or less",
	       vp->devstr, pp_port_mtu(vp->port),
	       pp_port_mtu(vp->port) + PP_ETH_OVERHEAD, vp->rx_room, miss,
	       (unsigned long long)feat, vp->rx_room - PP_ETH_OVERHEAD);
	return -ENOTSUP;
}

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
	if (mrg) {
		want |= 1ull << VIRTIO_NET_F_MRG_RXBUF |
			1ull << VIRTIO_RING_F_INDIRECT_DESC;
		err = vu_check_mtu(vp, feat);
		if (err)
			return err;
	}
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
int vu_handshake(struct vu_port *vp, bool fill)
{
	struct vhost_user_msg mt = { .request = VHOST_USER_SET_MEM_TABLE };
	struct vhost_user_memory mem;
	int fds[VHOST_USER_MAX_REGIONS];
	uint64_t barrier = 0;
	unsigned int i;
	int err, nr;

	nr = vu_mem_table(vp->arena, vp->mem_len, &mem, fds, vp->devstr);
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
		/* Before the fill: the ring is empty here (open, or taken
		 * down for a reconnect). */
		rx->color_len = (uint16_t)(rx->mrg_rxbuf ?
					   PP_PAGE_SIZE - rx->headroom :
					   VQ_COLOR_LEN);
		rx->in_order = vp->features & (1ull << VIRTIO_F_IN_ORDER);
		vp->vq[2 * i + 1].in_order = rx->in_order;
		if (vp->vq[2 * i + 1].mb)
			vp->vq[2 * i + 1].mb->indirect =
				vp->features &
				(1ull << VIRTIO_RING_F_INDIRECT_DESC);
		if (fill)
			vq_rx_fill(rx, &vp->port->rxq[i]);
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
