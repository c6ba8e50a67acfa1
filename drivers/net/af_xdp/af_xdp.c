/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp.c - the AF_XDP poll-mode driver: a port over a kernel interface,
 * one XDP socket per queue, every buffer a pagepool page.
 *
 * The driver in four files, one concern each:
 *   - af_xdp_umem.c: the UMEM, one per arena, registered whole (the arena
 *     is one contiguous range of 4 KiB frames) and shared by every queue
 *     and port of the process that uses that arena; a page's UMEM address
 *     is its address minus the arena base, and a UMEM address's page
 *     descriptor is the first descriptor plus (address >> 12);
 *   - af_xdp_iface.c: the XDP program on each interface, ours
 *     (af_xdp_prog.bpf.c, loaded through libxdp), attached by the first
 *     port on the interface and detached by the last, with a lock file
 *     that tells a stale program (its process was killed) from a live one;
 *   - this file: the sockets, one per queue, bound at probe and closed at
 *     remove, and the device string;
 *   - af_xdp_rxtx.c: the rings of each queue (the fill ring fed from the
 *     RX queue's page_pool in batches, the RX ring turned into frames, the
 *     TX ring, and the completion ring that returns sent pages to their
 *     pools), the data path.
 * af_xdp_ctl_priv.h is what the control-path files share, af_xdp_priv.h
 * what the control and data paths share.
 *
 * Why no DMA domain: the "mapping" of a page is the UMEM registration of
 * its whole arena, done once; the address the kernel wants is one
 * subtraction. A PP_IOVA_OPS domain whose page_map returned addr - base
 * would store that same number in page->dma_addr for nothing, and would
 * make every user configure the domain. The port's conf.dma is ignored.
 *
 * Ownership of a page while the kernel has it: page->private_data holds a
 * tag naming the queue and the ring (fill or TX). Descriptors coming back
 * are checked against it, and at close, once the socket is gone, the
 * pages the kernel still held are found by their tags and returned to
 * their pools (af_xdp_queue_reclaim).
 *
 * Every RX buffer is a whole page, one UMEM frame: the kernel fills UMEM
 * frames from the fill ring and hands them back whole, and a page's tag
 * says which ring holds it, one owner at a time. So there is no frag=
 * here (xdp_probe says so), and TX refuses a fragment of another pool's
 * page (a counted TX error): its page's other fragments may be anywhere,
 * and a tag cannot name two holders.
 *
 * Keys: queue=<first queue>, queues=<count> (must match the port's RX
 * queues), mode=auto|copy|zc.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include <pagepool/pp_net_driver.h>

#include "pp_log.h"
#include "af_xdp_ctl_priv.h"
#include "af_xdp_priv.h"
#include "drivers.h"
/*
 * Largest ring: 64 Ki descriptors per ring (DPDK's AF_XDP driver and
 * libxdp's samples stay far below). It also keeps the fill ring, twice
 * the RX ring, inside 32 bits.
 */
#define XDP_RING_MAX (1u << 16)
/*
 * How long a bind retries EBUSY: the kernel releases a closed socket's
 * hold on its queue from a workqueue (xp_release_deferred), so a queue
 * closed a moment ago reads busy for a few milliseconds, in every mode.
 */
#define XDP_BIND_RETRY_MS 1000
enum xsk_bind_mode {
	XSK_BIND_AUTO,
	XSK_BIND_COPY,
	XSK_BIND_ZC,
};
struct xdp_port {
	struct xdp_umem *umem;
	struct xdp_iface *iface;
	enum xsk_bind_mode mode;
	bool zero_copy;
	bool sg;                    /* the MTU needs XDP_USE_SG */
	unsigned int nr_queues;
	struct xdp_queue *q;        /* nr_queues, cache-line aligned */
};
pthread_mutex_t af_xdp_lock = PTHREAD_MUTEX_INITIALIZER;
/* ---- helpers -------------------------------------------------------- */

/*
 * Copy mode: how many frames one sendto() may send (Linux 6.17,
 * include/uapi/linux/if_xdp.h; the kernel's default is 32, and it accepts
 * 32 up to the TX ring's size). A whole burst per call halves the system
 * calls of a 64-frame burst and lets the receiving side's backlog run over
 * twice as many frames at a time. Older kernels refuse the option
 * (ENOPROTOOPT) and keep 32: xdp_kick_tx_ring() (af_xdp_rxtx.c) kicks
 * again.
 */
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif
/* TX_BATCH_SIZE in net/xdp/xsk.c: what a sendto() sends without it. */
#define XDP_TX_BUDGET_DEFAULT 32

static int xdp_libxdp_print(enum libxdp_print_level level, const char *fmt,
			    va_list ap)
{
	char msg[256];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	/*
	 * libxdp warns about its own fallbacks (no dispatcher, so a single
	 * program): not the operator's business; our callers report real
	 * failures themselves.
	 */
	(void)level;
	PP_DEBUG_LOG("libxdp: %s", msg);
	return 0;
}

static int xdp_libbpf_print(enum libbpf_print_level level, const char *fmt,
			    va_list ap)
{
	char msg[256];
	size_t n;

	(void)level;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	PP_DEBUG_LOG("libbpf: %s", msg);
	return 0;
}


/* ---- multi-buffer ---------------------------------------------------- */

/*
 * Packet bytes one UMEM frame holds: the 4 KiB frame less the kernel's
 * XDP_PACKET_HEADROOM and the UMEM's frame_headroom, which together are
 * the port's headroom, 256 at least (af_xdp_umem_get()). A port whose
 * frames (MTU + PP_ETH_OVERHEAD) are larger needs multi-buffer.
 */
#define XDP_KERNEL_HEADROOM 256

static unsigned int xdp_frame_room(const struct pp_port *port)
{
	unsigned int hr = port->conf.headroom > XDP_KERNEL_HEADROOM ?
				  port->conf.headroom : XDP_KERNEL_HEADROOM;

	return (unsigned int)PP_PAGE_SIZE - hr;
}

/*
 * Whether this kernel has AF_XDP multi-buffer (XDP_USE_SG, Linux 6.6),
 * asked without taking any queue: a fresh socket is bound with that flag
 * alone to interface index 0. xsk_bind() refuses flags it does not know
 * (EINVAL) before it looks the interface up, so a kernel that knows the
 * flag answers ENODEV (there is no interface 0) and one that does not,
 * EINVAL. Returns 1, 0, or -errno when there is no telling (no XDP
 * sockets, no descriptor left: the steps that follow say which).
 */
static int xdp_kernel_has_sg(void)
{
	struct sockaddr_xdp sxdp = {
		.sxdp_family = AF_XDP, .sxdp_flags = XDP_USE_SG,
	};
	int fd, err;

	fd = XDP_FAIL_RC(EMFILE, socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0));
	if (fd < 0)
		return -errno;
	err = bind(fd, (struct sockaddr *)&sxdp, sizeof(sxdp)) ? errno : 0;
	close(fd);
	if (err == ENODEV)
		return 1;
	if (err == EINVAL)
		return 0;
	return -(err ? err : EINVAL);
}

/* One generic netlink request with one attribute; the reply in @buf. */
static int xdp_genl_ask(int fd, uint16_t family, uint8_t cmd, uint16_t attr,
			const void *val, uint16_t len, char *buf, size_t size)
{
	struct {
		struct nlmsghdr nh;
		struct genlmsghdr gh;
		char attrs[32];
	} req;
	struct nlattr *na = (struct nlattr *)req.attrs;
	const struct nlmsghdr *nh = (const struct nlmsghdr *)buf;
	ssize_t n;

	if ((size_t)NLA_HDRLEN + len > sizeof(req.attrs))
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_type = family;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.gh.cmd = cmd;
	req.gh.version = 1;
	na->nla_type = attr;
	na->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)na + NLA_HDRLEN, val, len);
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(na->nla_len);
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, size, 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(nh, (size_t)n) || nh->nlmsg_type == NLMSG_ERROR)
		return -EIO;
	return (int)n;
}

/* Attribute @type of the generic netlink reply in @buf (@n bytes). */
static const struct nlattr *xdp_genl_attr(const char *buf, int n,
					  uint16_t type)
{
	const struct nlmsghdr *nh = (const struct nlmsghdr *)buf;
	const char *end = buf + ((int)nh->nlmsg_len < n ? (int)nh->nlmsg_len : n);
	const char *p = (const char *)NLMSG_DATA(nh) + GENL_HDRLEN;

	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *na = (const struct nlattr *)p;

		if (na->nla_len < NLA_HDRLEN || na->nla_len > end - p)
			break;
		if ((na->nla_type & NLA_TYPE_MASK) == type)
			return na;
		p += NLA_ALIGN(na->nla_len);
	}
	return NULL;
}

/* The netdev family (include/uapi/linux/netdev.h, Linux 6.6). */
#define XDP_NETDEV_CMD_DEV_GET 1
#define XDP_NETDEV_A_DEV_IFINDEX 1
#define XDP_NETDEV_A_DEV_XDP_ZC_MAX_SEGS 4

/*
 * The device's xdp_zc_max_segs: the longest chain a zero-copy socket may
 * send on it (the kernel refuses a longer one and never completes it),
 * read from the netdev netlink family; 0 when it cannot be read.
 */
static unsigned int xdp_zc_max_segs(int ifindex)
{
	char buf[1024];
	const struct nlattr *na;
	uint32_t idx = (uint32_t)ifindex, segs = 0;
	uint16_t family;
	int fd, n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return 0;
	n = xdp_genl_ask(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
			 CTRL_ATTR_FAMILY_NAME, "netdev", sizeof("netdev"), buf,
			 sizeof(buf));
	na = n > 0 ? xdp_genl_attr(buf, n, CTRL_ATTR_FAMILY_ID) : NULL;
	if (na && na->nla_len >= NLA_HDRLEN + sizeof(family)) {
		memcpy(&family, (const char *)na + NLA_HDRLEN, sizeof(family));
		n = xdp_genl_ask(fd, family, XDP_NETDEV_CMD_DEV_GET,
				 XDP_NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx),
				 buf, sizeof(buf));
		na = n > 0 ? xdp_genl_attr(buf, n,
					   XDP_NETDEV_A_DEV_XDP_ZC_MAX_SEGS) :
			     NULL;
		if (na && na->nla_len >= NLA_HDRLEN + sizeof(segs))
			memcpy(&segs, (const char *)na + NLA_HDRLEN,
			       sizeof(segs));
	}
	close(fd);
	return segs;
}

/* The interface's MTU (SIOCGIFMTU); 0 when unknown. */
static unsigned int xdp_iface_mtu(const char *ifname)
{
	struct ifreq ifr;
	int fd, err;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	err = ioctl(fd, SIOCGIFMTU, &ifr);
	close(fd);
	return err ? 0 : (unsigned int)ifr.ifr_mtu;
}

/*
 * Whether the port's MTU can be had here, before anything is set up:
 * frames above one UMEM frame need AF_XDP multi-buffer. Sets xp->sg.
 * Returns 0, or -EOPNOTSUPP after a message that says what to do.
 * *@kernel_sg: whether the kernel has multi-buffer (for the program).
 */
static int xdp_mtu_check(struct pp_port *port, struct xdp_port *xp,
			 const char *devstr, const char *ifname,
			 bool *kernel_sg)
{
	unsigned int mtu = pp_port_mtu(port), room = xdp_frame_room(port);
	unsigned int have = xdp_iface_mtu(ifname);
	int sg = xdp_kernel_has_sg();

	*kernel_sg = sg > 0;
	xp->sg = mtu + PP_ETH_OVERHEAD > room;
	if (xp->sg && sg <= 0) {
		char why[256];
		int err = sg;
		const char *hint = sg < 0 ? af_xdp_fd_hint(&err, why,
							   sizeof(why)) : NULL;

		if (hint) {
			PP_ERR("device '%s': cannot tell whether this kernel has AF_XDP multi-buffer: %s (%s)",
			       devstr, strerror(-err), hint);
			return err;
		}
		PP_ERR("device '%s': MTU %u needs frames of up to %u bytes, more than one UMEM frame holds (%u bytes behind the %u-byte headroom), and this kernel has no AF_XDP multi-buffer (XDP_USE_SG, Linux 6.6): run Linux 6.6 or later, or open the port with an MTU of at most %u",
		       devstr, mtu, mtu + PP_ETH_OVERHEAD, room,
		       (unsigned int)PP_PAGE_SIZE - room, room - PP_ETH_OVERHEAD);
		return -EOPNOTSUPP;
	}
	/* Not an error: the operator may raise it after the open. */
	if (have && have < mtu)
		PP_WARN("af_xdp: %s has MTU %u, below the port's %u: the kernel drops larger frames both ways; raise it (ip link set dev %s mtu %u, and the peer's too on a veth pair)",
			ifname, have, mtu, ifname, mtu);
	return 0;
}

/*
 * The bursts a port runs. A UMEM bound with XDP_USE_SG gets chains for
 * every packet larger than a frame, whatever this port's MTU, so it is
 * the UMEM's flag that picks the multi-buffer bursts, and each queue
 * learns how long a chain it may send.
 */
static int xdp_bursts_set(struct pp_port *port, struct xdp_port *xp,
			  const char *devstr, int ifindex)
{
	unsigned int q, zc_segs = 0;

	if (!xp->umem->sg)
		return 0;
	if (xp->zero_copy) {
		zc_segs = xdp_zc_max_segs(ifindex);
		if (!zc_segs) {
			PP_ERR("device '%s': zero-copy multi-buffer, but the device's xdp_zc_max_segs (netlink family netdev) cannot be read, and a chain longer than it would never complete: use mode=copy",
			       devstr);
			return -EOPNOTSUPP;
		}
	}
	for (q = 0; q < xp->nr_queues; q++) {
		struct xdp_queue *xq = &xp->q[q];

		/* Copy mode: the kernel builds an skb, MAX_SKB_FRAGS + 1
		 * (PP_FRAME_MAX_SEGS at the least configuration). */
		xq->tx_max_segs = xq->zero_copy && zc_segs < PP_FRAME_MAX_SEGS ?
					  zc_segs : PP_FRAME_MAX_SEGS;
	}
	port->rx_burst = af_xdp_rx_burst_mb;
	port->tx_burst = af_xdp_tx_burst_mb;
	return 0;
}

/* ---- sockets -------------------------------------------------------- */

/*
 * What the kernel made of a bind. A socket that joins a shared UMEM on
 * another queue gets the UMEM's mode, whatever it asked for (the kernel's
 * xp_assign_dev_shared), so the flags asked for prove nothing: a copy
 * socket taken for zero-copy would be kicked once a burst and leave up to
 * a budget of frames unsent in its TX ring.
 */
static bool xdp_socket_is_zero_copy(struct xsk_socket *xsk)
{
	struct xdp_options opts = { 0 };
	socklen_t len = sizeof(opts);

	if (XDP_FAIL_RC(ENOMEM, getsockopt(xsk_socket__fd(xsk), SOL_XDP,
					   XDP_OPTIONS, &opts, &len)))
		return false;
	return opts.flags & XDP_OPTIONS_ZEROCOPY;
}

/*
 * Copy mode: ask for a burst per sendto() where the TX ring holds one.
 * Returns the budget in force: PP_NET_BURST, or the kernel's 32 (older
 * kernels refuse the option with ENOPROTOOPT; a smaller ring keeps the
 * default, which the kernel clamps to what the ring has).
 */
static unsigned int xdp_tx_budget_set(struct xsk_socket *xsk,
				      unsigned int ring_size)
{
	unsigned int budget = PP_NET_BURST;

	if (ring_size < budget)
		return XDP_TX_BUDGET_DEFAULT;
	if (XDP_FAIL_RC(ENOMEM, setsockopt(xsk_socket__fd(xsk), SOL_XDP,
					   XDP_MAX_TX_SKB_BUDGET, &budget,
					   sizeof(budget)))) {
		PP_DEBUG_LOG("af_xdp: no TX budget option: %s", strerror(errno));
		return XDP_TX_BUDGET_DEFAULT;
	}
	return budget;
}

/*
 * Bind the queue's socket. The UMEM's first socket takes the fill and
 * completion rings xsk_umem__create made: it is given those very rings
 * (libxdp unmaps rings it was given when a bind fails, unless they are
 * the UMEM's own, and we retry in copy mode after a zero-copy bind
 * fails), and copies them into the queue afterwards.
 * Called under af_xdp_lock.
 */
static int xdp_socket_create(struct xdp_port *xp, struct xdp_queue *xq,
			     unsigned int ring_size, bool zc)
{
	struct xdp_umem *um = xp->umem;
	bool first = um->sockets == 0;
	int err;
	struct xsk_socket_config cfg = {
		.rx_size = ring_size,
		.tx_size = ring_size,
		.libxdp_flags = 0,
		.xdp_flags = 0,
		.bind_flags = XDP_USE_NEED_WAKEUP |
			      (zc ? XDP_ZEROCOPY : XDP_COPY) |
			      (xp->sg ? XDP_USE_SG : 0),
	};

#ifdef PP_AF_XDP_OWN_PROG
	cfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
#endif
	err = xsk_socket__create_shared(&xq->xsk, xp->iface->name, xq->qid,
					um->umem, &xq->rx, &xq->tx,
					first ? &um->fill0 : &xq->fill,
					first ? &um->comp0 : &xq->comp, &cfg);
	if (err)
		return err;
	if (first) {
		xq->fill = um->fill0;
		xq->comp = um->comp0;
		/* libxdp passes the flags for a UMEM's first socket only;
		 * the others join with XDP_SHARED_UMEM and inherit them. */
		um->sg = xp->sg;
	}
	um->sockets++;
	xq->zero_copy = xdp_socket_is_zero_copy(xq->xsk);
	xq->tx_budget = xq->zero_copy ? 0 : xdp_tx_budget_set(xq->xsk, ring_size);
	return 0;
}

/*
 * Bind with retries: EBUSY for up to XDP_BIND_RETRY_MS, since a socket
 * closed a moment ago (by this process too) still holds its queue until
 * the kernel's deferred release has run. Called under af_xdp_lock.
 */
static int xdp_socket_bind(struct xdp_port *xp, struct xdp_queue *xq,
			   unsigned int ring_size, bool zc)
{
	unsigned int ms;
	int err;

	/*
	 * Fault sites, two (a zero-copy bind that fails is retried in copy
	 * mode), and outside the retries, whose number is up to the kernel.
	 */
	err = zc ? PP_OS_FAULT(ENOMEM) :
		   PP_OS_FAULT(ENOMEM);
	if (err)
		return -err;
	for (ms = 0;; ms += 10) {
		err = xdp_socket_create(xp, xq, ring_size, zc);
		if (err != -EBUSY || ms >= XDP_BIND_RETRY_MS)
			return err;
		usleep(10000);
	}
}

static void xdp_port_teardown(struct pp_port *port, struct xdp_port *xp)
{
	unsigned int q;

	for (q = 0; q < xp->nr_queues; q++) {
		struct xdp_queue *xq = &xp->q[q];

		if (!xq->xsk)
			continue;
		if (q < port->nr_txq)
			af_xdp_queue_drain_tx(xq, &port->txq[q]);
		xsk_socket__delete(xq->xsk);
		xq->xsk = NULL;
		if (xq->bad_desc || xq->bad_comp || xq->bad_chain)
			PP_WARN("af_xdp: %s queue %u dropped %llu bad RX and %llu bad completion descriptors, and refused %llu RX descriptor chains",
				port->name, xq->qid,
				(unsigned long long)xq->bad_desc,
				(unsigned long long)xq->bad_comp,
				(unsigned long long)xq->bad_chain);
	}
	/* Sockets first: only then is the kernel done with the pages. */
	for (q = 0; q < xp->nr_queues; q++)
		if (xp->q[q].tag)
			af_xdp_queue_reclaim(&xp->q[q], port->allocator);
	pthread_mutex_lock(&af_xdp_lock);
	if (xp->umem)
		af_xdp_umem_put(xp->umem);
	if (xp->iface)
		af_xdp_iface_put(xp->iface);
	pthread_mutex_unlock(&af_xdp_lock);
	free(xp->q);
	free(xp);
}

static int xdp_bind_error(const char *devstr, const char *ifname,
			  unsigned int qid, int err)
{
	char why[256];
	const char *hint = af_xdp_fd_hint(&err, why, sizeof(why));

	if (!hint) {
		switch (err) {
		case -EBUSY:
			hint = "another AF_XDP socket holds it: another process, or another port of this one; a socket closed less than a second ago would have been waited for";
			break;
		case -EINVAL:
			hint = "is the queue index below the interface's channel count? (ethtool -l)";
			break;
		case -EAFNOSUPPORT:
			hint = "this kernel has no XDP sockets";
			break;
		default:
			hint = "needs root and a kernel with XDP sockets";
			break;
		}
	}
	PP_ERR("device '%s': cannot bind an XDP socket to %s queue %u: %s (%s)",
	       devstr, ifname, qid, strerror(-err), hint);
	return err;
}

/* The interface's RX queue count (ethtool channels); 0 when unknown. */
static unsigned int xdp_iface_rx_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;
	int fd, err;

	fd = XDP_FAIL_RC(EMFILE,
			 socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	if (fd < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ch;
	err = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return err ? 0 : ch.rx_count + ch.combined_count;
}

/*
 * The XDP program passes frames that arrive on a queue without a socket
 * to the kernel stack, and which queue a frame arrives on is the
 * interface's choice (RSS; on a veth, the peer's TX queue, picked by a
 * flow hash seeded at boot). A port bound to fewer queues than the
 * interface has then misses part of its traffic, with no error anywhere:
 * say so when it opens.
 */
static void xdp_unbound_queues_warn(const char *ifname, unsigned long qid,
				    unsigned int nr_queues)
{
	unsigned int have = xdp_iface_rx_queues(ifname);

	if (have <= nr_queues)
		return;
	PP_WARN("af_xdp: %s has %u RX queues but this port binds %u (queue %lu..%lu): frames the interface steers to the others go to the kernel stack, not to pagepool; bind them all (queues=%u) or give the interface fewer queues (ethtool -L %s)",
		ifname, have, nr_queues, qid, qid + nr_queues - 1, have,
		ifname);
}

/* ---- probe and remove ----------------------------------------------- */

static int xdp_parse(struct pp_port *port, const struct pp_devargs *da,
		     const char **ifname, unsigned long *qid,
		     enum xsk_bind_mode *mode)
{
	unsigned long queues = port->nr_rxq;
	const char *m;

	*ifname = pp_devargs_get(da, "iface");
	if (!*ifname || !**ifname) {
		PP_ERR("device '%s': name the interface: 'af_xdp:IFNAME[,queue=Q][,queues=N][,mode=auto|copy|zc]'",
		       da->devstr);
		return -EINVAL;
	}
	if (strlen(*ifname) >= IF_NAMESIZE) {
		PP_ERR("device '%s': interface name '%s' is too long (at most %d characters)",
		       da->devstr, *ifname, IF_NAMESIZE - 1);
		return -EINVAL;
	}
	*qid = 0;
	if (pp_devargs_uint(da, "queue", 0, 255, qid) ||
	    pp_devargs_uint(da, "queues", 1, 256, &queues))
		return -EINVAL;
	if (queues != port->nr_rxq) {
		PP_ERR("device '%s': queues=%lu but the port was opened with %u RX queues; give the same count to both",
		       da->devstr, queues, port->nr_rxq);
		return -EINVAL;
	}
	if (*qid + queues > 256) {
		PP_ERR("device '%s': queues %lu..%lu are past the program's 256 slots",
		       da->devstr, *qid, *qid + queues - 1);
		return -EINVAL;
	}
	if (port->nr_txq > port->nr_rxq) {
		PP_ERR("device '%s': %u TX queues but %u RX queues: af_xdp sends on the RX queues' sockets, open at most as many TX queues",
		       da->devstr, port->nr_txq, port->nr_rxq);
		return -EINVAL;
	}
	m = pp_devargs_get(da, "mode");
	if (!m || !strcmp(m, "auto")) {
		*mode = XSK_BIND_AUTO;
	} else if (!strcmp(m, "copy")) {
		*mode = XSK_BIND_COPY;
	} else if (!strcmp(m, "zc")) {
		*mode = XSK_BIND_ZC;
	} else {
		PP_ERR("device '%s': bad mode '%s': expected auto, copy or zc",
		       da->devstr, m);
		return -EINVAL;
	}
	return 0;
}

static int xdp_probe(struct pp_port *port, const struct pp_devargs *da)
{
	char why[256];
	unsigned int ring_size = port->conf.ring_size;
	struct xdp_port *xp;
	const char *ifname;
	struct pp_arena *arena;
	enum xsk_bind_mode mode;
	unsigned long qid;
	unsigned int q;
	bool kernel_sg = false;
	int ifindex, err = 0;

	/* A key of null and veth, listed here only to say why not. */
	if (pp_devargs_get(da, "frag")) {
		PP_ERR("device '%s': af_xdp takes no frag=: its RX buffers are whole UMEM frames, a page per frame (remove frag=; null and veth ports take it)",
		       da->devstr);
		return -EINVAL;
	}
	err = xdp_parse(port, da, &ifname, &qid, &mode);
	if (err)
		return err;
	if ((ring_size & (ring_size - 1)) || ring_size > XDP_RING_MAX) {
		PP_ERR("device '%s': ring_size %u: AF_XDP rings take a power of two from 1 to %u entries",
		       da->devstr, ring_size, XDP_RING_MAX);
		return -EINVAL;
	}
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex) {
		/* It asks the kernel through a socket of its own. */
		err = -errno;
		if (af_xdp_fd_hint(&err, why, sizeof(why))) {
			PP_ERR("device '%s': cannot look up interface '%s': %s (%s)",
			       da->devstr, ifname, strerror(-err), why);
			return err;
		}
		PP_ERR("device '%s': no interface '%s' here (ip link show)",
		       da->devstr, ifname);
		return -ENODEV;
	}
	if (geteuid() != 0) {
		PP_ERR("device '%s': af_xdp needs root (CAP_NET_ADMIN, CAP_BPF, CAP_SYS_ADMIN): run as root",
		       da->devstr);
		return -EPERM;
	}
	arena = pp_net_port_arena(port, "one UMEM per port");
	if (!arena)
		return -EINVAL;

	libxdp_set_print(xdp_libxdp_print);
	libbpf_set_print(xdp_libbpf_print);
	af_xdp_memlock_raise();
	err = af_xdp_bpffs_ensure();
	if (err)
		return err;

	xp = pp_os_calloc(1, sizeof(*xp));
	if (!xp) {
		PP_ERR("device '%s': out of memory for the af_xdp port",
		       da->devstr);
		return -ENOMEM;
	}
	xp->mode = mode;
	xp->nr_queues = port->nr_rxq;
	xp->q = pp_os_aligned_alloc(PP_CACHE_LINE, xp->nr_queues * sizeof(*xp->q));
	if (!xp->q) {
		PP_ERR("device '%s': out of memory for %u af_xdp queues",
		       da->devstr, xp->nr_queues);
		free(xp);
		return -ENOMEM;
	}
	memset(xp->q, 0, xp->nr_queues * sizeof(*xp->q));
	err = xdp_mtu_check(port, xp, da->devstr, ifname, &kernel_sg);
	if (err)
		goto err_teardown;

	pthread_mutex_lock(&af_xdp_lock);
	xp->iface = af_xdp_iface_get(ifname, ifindex, kernel_sg, &err);
	if (xp->iface)
		/* The port takes the interface's name once open. */
		xp->umem = af_xdp_umem_get(port->allocator, arena, ifname,
					   ring_size, port->conf.headroom,
					   &err);
	/*
	 * A UMEM bound already keeps its first socket's choice: a port
	 * that needs multi-buffer cannot join one bound without it.
	 */
	if (xp->umem && xp->sg && xp->umem->sockets && !xp->umem->sg) {
		PP_ERR("device '%s': MTU %u needs multi-buffer, but arena %s's UMEM was bound without it by an earlier port (MTU of at most %u): a UMEM has one mode; open this port on another arena, or open the large-MTU port first",
		       da->devstr, pp_port_mtu(port), pp_arena_name(arena),
		       xdp_frame_room(port) - PP_ETH_OVERHEAD);
		err = -EINVAL;
	}
	pthread_mutex_unlock(&af_xdp_lock);
	if (!xp->iface || !xp->umem || err)
		goto err_teardown;

	for (q = 0; q < xp->nr_queues; q++) {
		struct xdp_queue *xq = &xp->q[q];

		xq->qid = (unsigned int)qid + q;
		xq->pool = port->rxq[q].pool;
		xq->base = xp->umem->base;
		xq->first = xp->umem->first;
		xq->umem_size = xp->umem->size;
		pthread_mutex_lock(&af_xdp_lock);
		if (mode != XSK_BIND_COPY) {
			err = xdp_socket_bind(xp, xq, ring_size, true);
			if (!err && !xq->zero_copy && mode == XSK_BIND_ZC) {
				pthread_mutex_unlock(&af_xdp_lock);
				PP_ERR("device '%s': %s queue %u joins arena %s's UMEM, which an earlier port bound in copy mode: a UMEM has one mode (open this port on another arena, or use mode=copy)",
				       da->devstr, ifname, xq->qid,
				       pp_arena_name(arena));
				err = -EINVAL;
				goto err_teardown;
			}
			if (err && mode == XSK_BIND_ZC) {
				pthread_mutex_unlock(&af_xdp_lock);
				if (af_xdp_fd_hint(&err, why, sizeof(why)))
					err = xdp_bind_error(da->devstr, ifname,
							     xq->qid, err);
				else
					PP_ERR("device '%s': %s queue %u has no zero-copy AF_XDP%s: %s (use mode=copy or mode=auto%s)",
					       da->devstr, ifname, xq->qid,
					       xp->sg ? " with multi-buffer" : "",
					       strerror(-err),
					       xp->sg ? ", or an MTU that fits one UMEM frame" : "");
				goto err_teardown;
			}
		}
		if (!xq->xsk)
			err = xdp_socket_bind(xp, xq, ring_size, false);
		pthread_mutex_unlock(&af_xdp_lock);
		xp->zero_copy |= xq->zero_copy;
		if (!xq->xsk) {
			err = xdp_bind_error(da->devstr, ifname, xq->qid, err);
			goto err_teardown;
		}
		xq->fd = xsk_socket__fd(xq->xsk);
		/* Aligned to a cache line, so the two low bits are free. */
		xq->tag = (uint64_t)(uintptr_t)xq;
		xq->rx_holder = PP_HOLDER(PP_HOLDER_RX_RING, port->id, q);
		xq->tx_holder = PP_HOLDER(PP_HOLDER_TX_RING, port->id, q);
#ifdef PP_AF_XDP_OWN_PROG
		err = XDP_FAIL_RC(ENOMEM, xsk_socket__update_xskmap(
					xq->xsk, xp->iface->map_fd));
		if (err) {
			PP_ERR("device '%s': cannot add the socket of queue %u to the XDP program's map: %s",
			       da->devstr, xq->qid, strerror(-err));
			goto err_teardown;
		}
#endif
		port->rxq[q].priv = xq;
		if (q < port->nr_txq)
			port->txq[q].priv = xq;
		af_xdp_fill_level_set(xq, ring_size);
		/* Hand the kernel buffers before the first frame comes. */
		af_xdp_fill_refill(xq, xq->pool,
				xq->fill.size / xq->fill_batch);
	}
	err = xdp_bursts_set(port, xp, da->devstr, ifindex);
	if (err)
		goto err_teardown;
	if (xp->zero_copy)
		PP_INFO("port %s: AF_XDP on %s queues %lu..%lu, zero-copy mode%s",
			port->name, ifname, qid, qid + xp->nr_queues - 1,
			xp->umem->sg ? ", multi-buffer" : "");
	else
		PP_INFO("port %s: AF_XDP on %s queues %lu..%lu, copy mode, TX budget %u frames a call%s%s",
			port->name, ifname, qid, qid + xp->nr_queues - 1,
			xp->q[0].tx_budget,
			ring_size >= PP_NET_BURST &&
			xp->q[0].tx_budget == XDP_TX_BUDGET_DEFAULT ?
			" (the kernel's: no XDP_MAX_TX_SKB_BUDGET before Linux 6.17)" : "",
			xp->umem->sg ? ", multi-buffer" : "");
	if (xp->umem->sg)
		PP_DEBUG_LOG("af_xdp: %s: multi-buffer, TX chains of up to %u descriptors",
			     ifname, xp->q[0].tx_max_segs);
	xdp_unbound_queues_warn(ifname, qid, xp->nr_queues);
	/* The port is named after the interface, as the kernel names it. */
	snprintf(port->name, sizeof(port->name), "%s", ifname);
	port->priv = xp;
	return 0;

err_teardown:
	for (q = 0; q < port->nr_rxq; q++)
		port->rxq[q].priv = NULL;
	for (q = 0; q < port->nr_txq; q++)
		port->txq[q].priv = NULL;
	xdp_port_teardown(port, xp);
	return err ? err : -EINVAL;
}

static void xdp_remove(struct pp_port *port)
{
	struct xdp_port *xp = port->priv;

	if (!xp)
		return;
	xdp_port_teardown(port, xp);
	port->priv = NULL;
}

/* Telemetry's (any thread, the port listed: xp and its sockets live). */
static int xdp_xstats(struct pp_port *port, struct pp_net_xstat *out,
		      unsigned int n)
{
	const struct xdp_port *xp = port->priv;

	return af_xdp_xstats(xp->q, xp->nr_queues, out, n);
}

static int xdp_mac_addr(struct pp_port *port, uint8_t mac[6])
{
	const struct xdp_port *xp = port->priv;

	return af_xdp_mac_addr(xp->iface->name, mac);
}

static const char *const xdp_keys[] = { "iface", "queue", "queues", "mode",
					"frag", NULL };

const struct pp_net_driver pp_net_af_xdp_driver = {
	.name = "af_xdp",
	.keys = xdp_keys,
	.help = "af_xdp:IFNAME[,queue=<0..255>][,queues=<RX queues>][,mode=auto|copy|zc]",
	.ops = {
		.probe = xdp_probe,
		.remove = xdp_remove,
		.rx_burst = af_xdp_rx_burst,
		.tx_burst = af_xdp_tx_burst,
		.xstats = xdp_xstats,
		.mac_addr = xdp_mac_addr,
	},
};
