/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp.c - the AF_XDP poll-mode driver: a port over a kernel interface,
 * one XDP socket per queue, every buffer a pagepool page.
 *
 * This file is the control path; it owns:
 *   - the UMEM: one per arena, registered whole (the arena is one
 *     contiguous range of 4 KiB frames), shared by every queue and port
 *     of the process that uses that arena; a page's UMEM address is its
 *     address minus the arena base, and a UMEM address's page descriptor
 *     is the first descriptor plus (address >> 12);
 *   - the XDP program on each interface: ours (af_xdp_prog.bpf.c, loaded
 *     through libxdp), attached by the first port on the interface and
 *     detached by the last, with a lock file that tells a stale program
 *     (its process was killed) from a live one;
 *   - the sockets: one per queue, bound at probe, closed at remove.
 * The rings of each queue (the fill ring fed from the RX queue's
 * page_pool in batches, the RX ring turned into frames, the TX ring, and
 * the completion ring that returns sent pages to their pools) are the
 * data path, in af_xdp_rxtx.c; af_xdp_priv.h is what the two share.
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
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include <pagepool/pp_net_driver.h>

#include "pp_log.h"
#include "af_xdp_priv.h"
#include "drivers.h"
#include "pp_os_fault.h"

/*
 * Fault sites (pp_os_fault_priv.h, -Dfault_injection=true) in front of
 * the control path's calls into the kernel, libxdp and libbpf: when this
 * hit is the one to fail, the call is not made and fails as a whole with
 * @err (-@err for the calls that return -errno, NULL and errno for the
 * ones that return a pointer). What they do inside (sockets, setsockopt,
 * mmap of the rings, BPF loads, bpffs pins) is theirs to undo.
 */
#define XDP_FAIL_RC(err, call)                                              \
	(PP_OS_FAULT(err) ? (errno = (err), -(err)) : (call))
#define XDP_FAIL_PTR(err, call)                                             \
	(PP_OS_FAULT(err) ? (errno = (err), NULL) : (call))

#ifdef PP_AF_XDP_OWN_PROG
#include "af_xdp_prog.h"
/* The program's function name, which is also its name in the kernel. */
#define XDP_PROG_NAME "pp_xsk_redirect"
#define XDP_MAP_NAME "pp_xsks"
#else
/* libxdp's default program (lib/libxdp/xsk_def_xdp_prog.c). */
#define XDP_PROG_NAME "xsk_def_prog"
#endif

/* statfs f_type of bpffs (linux/magic.h BPF_FS_MAGIC). */
#define XDP_BPF_FS_MAGIC 0xcafe4a11
#define XDP_BPF_FS "/sys/fs/bpf"
/* Where the per-interface lock files live (root-only, like /run/xtables). */
#define XDP_LOCK_DIR "/run/pagepool"

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

/* One UMEM: an arena registered with the kernel, shared by refcount. */
struct xdp_umem {
	struct xsk_umem *umem;
	struct pp_arena *arena;
	char *base;
	uint64_t size;
	struct pp_page *first;      /* the descriptor of the page at base */
	/* Rings xsk_umem__create needs; the first socket copies them. */
	struct xsk_ring_prod fill0;
	struct xsk_ring_cons comp0;
	unsigned int refs;
	unsigned int sockets;       /* bound so far; under xdp_lock */
	struct xdp_umem *next;
};

/* One interface: its XDP program and lock, shared by refcount. */
struct xdp_iface {
	int ifindex;
	char name[IF_NAMESIZE];
	int lock_fd;
	struct xdp_program *prog;   /* NULL: libxdp's default, owned by it */
	int map_fd;
	unsigned int refs;
	struct xdp_iface *next;
};

struct xdp_port {
	struct xdp_umem *umem;
	struct xdp_iface *iface;
	enum xsk_bind_mode mode;
	bool zero_copy;
	unsigned int nr_queues;
	struct xdp_queue *q;        /* nr_queues, cache-line aligned */
};

static pthread_mutex_t xdp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xdp_umem *xdp_umems;   /* under xdp_lock */
static struct xdp_iface *xdp_ifaces; /* under xdp_lock */

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

/* ---- setup: bpffs, memlock, lock file, program ----------------------- */

/* libxdp pins its dispatcher state in bpffs; mount it when missing. */
static int xdp_bpffs_ensure(void)
{
	struct statfs st;

	if (!statfs(XDP_BPF_FS, &st) && st.f_type == XDP_BPF_FS_MAGIC)
		return 0;
	if (XDP_FAIL_RC(EPERM,
			mount("bpf", XDP_BPF_FS, "bpf", 0, "mode=0700"))) {
		int err = errno;

		PP_ERR("af_xdp: cannot mount bpffs at %s: %s (mount it: mount -t bpf bpf %s)",
		       XDP_BPF_FS, strerror(err), XDP_BPF_FS);
		return -err;
	}
	PP_INFO("af_xdp: mounted bpffs at %s", XDP_BPF_FS);
	return 0;
}

/*
 * Kernels before 5.11 charge BPF maps and programs to RLIMIT_MEMLOCK, and
 * a UMEM is charged to it without CAP_IPC_LOCK: lift it to the hard limit
 * (root may raise the hard limit too).
 */
static void xdp_memlock_raise(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) && !getrlimit(RLIMIT_MEMLOCK, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_MEMLOCK, &rl);
	}
}

/*
 * The interface lock: held (flock) for as long as this process has the
 * program attached. flock dies with the process, so finding our program
 * attached while we can take the lock means its owner was killed. The
 * last user unlinks the file before it lets go; a taker that locked a
 * file unlinked meanwhile (its inode is no longer the path's) tries again.
 */
static void xdp_lock_path(char *path, size_t len, const char *ifname)
{
	snprintf(path, len, XDP_LOCK_DIR "/af_xdp-%s.lock", ifname);
}

static int xdp_lock_take(const char *ifname)
{
	char path[64 + IF_NAMESIZE];
	unsigned int tries;
	int fd;

	if (XDP_FAIL_RC(EACCES, mkdir(XDP_LOCK_DIR, 0700)) && errno != EEXIST) {
		int err = errno;

		PP_ERR("af_xdp: cannot create %s: %s (run as root)",
		       XDP_LOCK_DIR, strerror(err));
		return -err;
	}
	xdp_lock_path(path, sizeof(path), ifname);
	for (tries = 0; tries < 8; tries++) {
		struct stat a, b;

		fd = XDP_FAIL_RC(EMFILE, open(path, O_RDWR | O_CREAT |
						     O_CLOEXEC, 0600));
		if (fd < 0) {
			int err = errno;

			PP_ERR("af_xdp: cannot open %s: %s (run as root)",
			       path, strerror(err));
			return -err;
		}
		if (XDP_FAIL_RC(ENOLCK, flock(fd, LOCK_EX | LOCK_NB))) {
			int err = errno;

			close(fd);
			if (err == EWOULDBLOCK) {
				PP_ERR("af_xdp: interface %s is in use by another pagepool process (lock %s); stop it first",
				       ifname, path);
				return -EBUSY;
			}
			/* Nobody holds it: do not leave the file. A taker
			 * that opened it meanwhile sees it unlinked. */
			(void)unlink(path);
			PP_ERR("af_xdp: cannot lock %s: %s", path,
			       strerror(err));
			return -err;
		}
		if (!fstat(fd, &a) && !stat(path, &b) && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev)
			return fd;
		close(fd);
	}
	PP_ERR("af_xdp: lock %s keeps changing under us; is another process opening %s in a loop?",
	       path, ifname);
	return -EBUSY;
}

static void xdp_lock_release(int fd, const char *ifname)
{
	char path[64 + IF_NAMESIZE];

	xdp_lock_path(path, sizeof(path), ifname);
	(void)unlink(path);
	close(fd);
}

/*
 * Detach a program of ours left on @ifindex by a process that died
 * without closing its ports (we hold the lock, so nobody else is using
 * it). Returns 0, or -EBUSY when a foreign program is attached.
 */
static int xdp_stale_detach(int ifindex, const char *ifname)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *p;
	enum xdp_attach_mode mode;
	int ret = 0;

	if (!mp || libxdp_get_error(mp))
		return 0; /* nothing attached */
	mode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && !strcmp(xdp_program__name(p), XDP_PROG_NAME)) {
			PP_WARN("af_xdp: detaching a stale %s left on %s by a process that was killed",
				XDP_PROG_NAME, ifname);
			ret = xdp_multiprog__detach(mp);
		} else if (p) {
			PP_ERR("af_xdp: interface %s already has XDP program '%s' attached; detach it (ip link set dev %s xdp off)",
			       ifname, xdp_program__name(p), ifname);
			ret = -EBUSY;
		}
		xdp_multiprog__close(mp);
		return ret;
	}
	for (p = xdp_multiprog__next_prog(NULL, mp); p;
	     p = xdp_multiprog__next_prog(p, mp)) {
		if (strcmp(xdp_program__name(p), XDP_PROG_NAME))
			continue;
		PP_WARN("af_xdp: detaching a stale %s left on %s by a process that was killed",
			XDP_PROG_NAME, ifname);
		ret = xdp_program__detach(p, ifindex, mode, 0);
		break;
	}
	xdp_multiprog__close(mp);
	return ret;
}

#ifdef PP_AF_XDP_OWN_PROG
/* xdp_program__close leaves an object it was given to its owner. */
static void xdp_prog_close(struct xdp_program *prog)
{
	struct bpf_object *obj = xdp_program__bpf_obj(prog);

	xdp_program__close(prog);
	bpf_object__close(obj);
}

/*
 * Detach our program from the interface. Where libxdp attached it on its
 * own (no dispatcher: libxdp's "legacy" mode, which libxdp 1.3.1 chose on
 * Debian 12 with a 6.18 kernel), libbpf takes it off directly, and only
 * while it is still ours (XDP_FLAGS_REPLACE): libxdp's
 * xdp_program__detach first looks the interface up with
 * xdp_multiprog__get_from_ifindex, which in that mode opens the program
 * by id twice and closes it once, one bpf-prog descriptor leaked per
 * port closed (found by the fault sweep). Behind a dispatcher, libxdp
 * detaches it.
 */
static int xdp_prog_detach_one(struct xdp_iface *ifc)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	LIBBPF_OPTS(bpf_xdp_attach_opts, a,
		    .old_prog_fd = xdp_program__fd(ifc->prog));
	uint32_t flags;

	if (!bpf_xdp_query(ifc->ifindex, 0, &q) && q.prog_id &&
	    q.prog_id == xdp_program__id(ifc->prog)) {
		switch (q.attach_mode) {
		case XDP_ATTACHED_DRV:
			flags = XDP_FLAGS_DRV_MODE;
			break;
		case XDP_ATTACHED_SKB:
			flags = XDP_FLAGS_SKB_MODE;
			break;
		case XDP_ATTACHED_HW:
			flags = XDP_FLAGS_HW_MODE;
			break;
		default:
			flags = 0;
			break;
		}
		if (flags)
			return bpf_xdp_detach(ifc->ifindex,
					      flags | XDP_FLAGS_REPLACE, &a);
	}
	return xdp_program__detach(ifc->prog, ifc->ifindex, XDP_MODE_UNSPEC,
				   0);
}

static int xdp_prog_attach(struct xdp_iface *ifc)
{
	DECLARE_LIBBPF_OPTS(bpf_object_open_opts, oopts,
			    .object_name = "pp_af_xdp");
	struct bpf_object *obj;
	int err;

	obj = XDP_FAIL_PTR(ENOMEM, bpf_object__open_mem(af_xdp_prog_obj,
							sizeof(af_xdp_prog_obj),
							&oopts));
	err = (int)libbpf_get_error(obj);
	if (err) {
		PP_ERR("af_xdp: cannot open the embedded XDP program: %s",
		       strerror(-err));
		return err;
	}
	ifc->prog = XDP_FAIL_PTR(ENOMEM,
				 xdp_program__from_bpf_obj(obj, "xdp"));
	err = ifc->prog ? (int)libxdp_get_error(ifc->prog) : -errno;
	if (err) {
		ifc->prog = NULL;
		bpf_object__close(obj);
		PP_ERR("af_xdp: cannot prepare the XDP program: %s",
		       strerror(-err));
		return err;
	}
	err = XDP_FAIL_RC(EPERM, xdp_program__attach(ifc->prog, ifc->ifindex,
						     XDP_MODE_UNSPEC, 0));
	if (err) {
		PP_ERR("af_xdp: cannot attach an XDP program to %s: %s (needs root, a kernel with BPF and XDP sockets, and no other XDP program on the interface)",
		       ifc->name, strerror(-err));
		xdp_prog_close(ifc->prog);
		ifc->prog = NULL;
		return err;
	}
	ifc->map_fd = XDP_FAIL_RC(ENOENT, bpf_object__find_map_fd_by_name(
		xdp_program__bpf_obj(ifc->prog), XDP_MAP_NAME));
	if (ifc->map_fd < 0) {
		PP_ERR("af_xdp: the XDP program has no map %s", XDP_MAP_NAME);
		xdp_prog_detach_one(ifc);
		xdp_prog_close(ifc->prog);
		ifc->prog = NULL;
		return -ENOENT;
	}
	return 0;
}

static void xdp_prog_detach(struct xdp_iface *ifc)
{
	int err;

	if (!ifc->prog)
		return;
	err = xdp_prog_detach_one(ifc);
	if (err)
		PP_ERR("af_xdp: cannot detach the XDP program from %s: %s (ip link set dev %s xdp off)",
		       ifc->name, strerror(-err), ifc->name);
	xdp_prog_close(ifc->prog);
	ifc->prog = NULL;
}
#endif

static void xdp_iface_put(struct xdp_iface *ifc)
{
	struct xdp_iface **pp;

	if (--ifc->refs)
		return;
#ifdef PP_AF_XDP_OWN_PROG
	xdp_prog_detach(ifc);
#endif
	for (pp = &xdp_ifaces; *pp; pp = &(*pp)->next) {
		if (*pp == ifc) {
			*pp = ifc->next;
			break;
		}
	}
	xdp_lock_release(ifc->lock_fd, ifc->name);
	free(ifc);
}

/* The interface's shared state, attaching our program on first use. */
static struct xdp_iface *xdp_iface_get(const char *ifname, int ifindex,
				       int *errp)
{
	struct xdp_iface *ifc;
	int err;

	for (ifc = xdp_ifaces; ifc; ifc = ifc->next) {
		if (ifc->ifindex == ifindex) {
			ifc->refs++;
			return ifc;
		}
	}
	ifc = pp_os_calloc(1, sizeof(*ifc));
	if (!ifc) {
		PP_ERR("af_xdp: out of memory for the state of interface %s",
		       ifname);
		*errp = -ENOMEM;
		return NULL;
	}
	ifc->ifindex = ifindex;
	ifc->map_fd = -1;
	snprintf(ifc->name, sizeof(ifc->name), "%s", ifname);
	ifc->lock_fd = xdp_lock_take(ifname);
	if (ifc->lock_fd < 0) {
		err = ifc->lock_fd;
		goto err_free;
	}
	err = xdp_stale_detach(ifindex, ifname);
	if (err)
		goto err_unlock;
#ifdef PP_AF_XDP_OWN_PROG
	err = xdp_prog_attach(ifc);
	if (err)
		goto err_unlock;
#endif
	ifc->refs = 1;
	ifc->next = xdp_ifaces;
	xdp_ifaces = ifc;
	return ifc;

err_unlock:
	xdp_lock_release(ifc->lock_fd, ifname);
err_free:
	free(ifc);
	*errp = err;
	return NULL;
}

/* ---- UMEM ----------------------------------------------------------- */

static void xdp_umem_put(struct xdp_umem *um)
{
	struct xdp_umem **pp;
	int err;

	if (--um->refs)
		return;
	err = xsk_umem__delete(um->umem);
	if (err)
		PP_ERR("af_xdp: cannot delete the UMEM of arena %s: %s",
		       pp_arena_name(um->arena), strerror(-err));
	for (pp = &xdp_umems; *pp; pp = &(*pp)->next) {
		if (*pp == um) {
			*pp = um->next;
			break;
		}
	}
	free(um);
}

/*
 * The UMEM over @arena, registering it on first use. @ring_size sizes the
 * fill and completion rings of every queue that uses it.
 */
static struct xdp_umem *xdp_umem_get(struct pp_allocator *alloc,
				     struct pp_arena *arena,
				     unsigned int ring_size,
				     unsigned int headroom, int *errp)
{
	struct xsk_umem_config cfg = {
		/* Twice the RX ring: the kernel always has buffers while a
		 * full RX ring waits for us. */
		.fill_size = ring_size * 2,
		.comp_size = ring_size,
		.frame_size = PP_PAGE_SIZE,
		/* The kernel puts XDP_PACKET_HEADROOM (256) in front of the
		 * data on its own; frame_headroom is what we want beyond. */
		.frame_headroom = headroom > 256 ? headroom - 256 : 0,
		.flags = 0,
	};
	struct xdp_umem *um;
	struct pp_page *last;
	int err;

	for (um = xdp_umems; um; um = um->next) {
		if (um->arena == arena) {
			um->refs++;
			return um;
		}
	}
	um = pp_os_calloc(1, sizeof(*um));
	if (!um) {
		PP_ERR("af_xdp: out of memory for the UMEM of arena %s",
		       pp_arena_name(arena));
		*errp = -ENOMEM;
		return NULL;
	}
	um->arena = arena;
	um->base = pp_arena_base(arena);
	um->size = pp_arena_size(arena);
	um->first = pp_virt_to_page(alloc, um->base);
	last = pp_virt_to_page(alloc, um->base + um->size - PP_PAGE_SIZE);
	/* The fast path finds descriptors by index: they must be dense. */
	if (!um->first || last != um->first + (um->size >> PP_PAGE_SHIFT) - 1) {
		PP_ERR("af_xdp: arena %s is not one dense range of page descriptors",
		       pp_arena_name(arena));
		free(um);
		*errp = -EINVAL;
		return NULL;
	}
	err = XDP_FAIL_RC(ENOMEM, xsk_umem__create(&um->umem, um->base,
						   um->size, &um->fill0,
						   &um->comp0, &cfg));
	if (err) {
		PP_ERR("af_xdp: cannot register arena %s (%llu MiB) as a UMEM: %s (needs root or a large enough RLIMIT_MEMLOCK)",
		       pp_arena_name(arena),
		       (unsigned long long)(um->size >> 20), strerror(-err));
		free(um);
		*errp = err;
		return NULL;
	}
	um->refs = 1;
	um->next = xdp_umems;
	xdp_umems = um;
	return um;
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
 * Called under xdp_lock.
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
			      (zc ? XDP_ZEROCOPY : XDP_COPY),
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
	}
	um->sockets++;
	xq->zero_copy = xdp_socket_is_zero_copy(xq->xsk);
	xq->tx_budget = xq->zero_copy ? 0 : xdp_tx_budget_set(xq->xsk, ring_size);
	return 0;
}

/*
 * Bind with retries: EBUSY for up to XDP_BIND_RETRY_MS, since a socket
 * closed a moment ago (by this process too) still holds its queue until
 * the kernel's deferred release has run. Called under xdp_lock.
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
		if (xq->bad_desc || xq->bad_comp)
			PP_WARN("af_xdp: %s queue %u dropped %llu bad RX and %llu bad completion descriptors",
				port->name, xq->qid,
				(unsigned long long)xq->bad_desc,
				(unsigned long long)xq->bad_comp);
	}
	/* Sockets first: only then is the kernel done with the pages. */
	for (q = 0; q < xp->nr_queues; q++)
		if (xp->q[q].tag)
			af_xdp_queue_reclaim(&xp->q[q], port->allocator);
	pthread_mutex_lock(&xdp_lock);
	if (xp->umem)
		xdp_umem_put(xp->umem);
	if (xp->iface)
		xdp_iface_put(xp->iface);
	pthread_mutex_unlock(&xdp_lock);
	free(xp->q);
	free(xp);
}

static void xdp_bind_error(const char *devstr, const char *ifname,
			   unsigned int qid, int err)
{
	const char *hint;

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
	PP_ERR("device '%s': cannot bind an XDP socket to %s queue %u: %s (%s)",
	       devstr, ifname, qid, strerror(-err), hint);
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

/* The arena the port's pools draw from: the allocator must have one. */
static struct pp_arena *xdp_port_arena(struct pp_port *port)
{
	struct pp_page *page;
	struct pp_arena *arena;

	if (pp_allocator_zone_count(port->allocator) != 1) {
		PP_ERR("port %s: af_xdp needs an allocator over exactly one arena (one UMEM per port)",
		       port->name);
		return NULL;
	}
	page = pp_pool_alloc_pages(port->rxq[0].pool);
	if (!page) {
		PP_ERR("port %s: no page in the allocator; give the arena more memory",
		       port->name);
		return NULL;
	}
	arena = pp_page_arena(port->allocator, page);
	pp_pool_recycle_direct(port->rxq[0].pool, page);
	return arena;
}

static int xdp_probe(struct pp_port *port, const struct pp_devargs *da)
{
	unsigned int ring_size = port->conf.ring_size;
	struct xdp_port *xp;
	const char *ifname;
	struct pp_arena *arena;
	enum xsk_bind_mode mode;
	unsigned long qid;
	unsigned int q;
	int ifindex, err = 0;

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
		PP_ERR("device '%s': no interface '%s' here (ip link show)",
		       da->devstr, ifname);
		return -ENODEV;
	}
	if (geteuid() != 0) {
		PP_ERR("device '%s': af_xdp needs root (CAP_NET_ADMIN, CAP_BPF, CAP_SYS_ADMIN): run as root",
		       da->devstr);
		return -EPERM;
	}
	arena = xdp_port_arena(port);
	if (!arena)
		return -EINVAL;

	libxdp_set_print(xdp_libxdp_print);
	libbpf_set_print(xdp_libbpf_print);
	xdp_memlock_raise();
	err = xdp_bpffs_ensure();
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

	pthread_mutex_lock(&xdp_lock);
	xp->iface = xdp_iface_get(ifname, ifindex, &err);
	if (xp->iface)
		xp->umem = xdp_umem_get(port->allocator, arena, ring_size,
					port->conf.headroom, &err);
	pthread_mutex_unlock(&xdp_lock);
	if (!xp->iface || !xp->umem)
		goto err_teardown;

	for (q = 0; q < xp->nr_queues; q++) {
		struct xdp_queue *xq = &xp->q[q];

		xq->qid = (unsigned int)qid + q;
		xq->pool = port->rxq[q].pool;
		xq->base = xp->umem->base;
		xq->first = xp->umem->first;
		xq->umem_size = xp->umem->size;
		pthread_mutex_lock(&xdp_lock);
		if (mode != XSK_BIND_COPY) {
			err = xdp_socket_bind(xp, xq, ring_size, true);
			if (!err && !xq->zero_copy && mode == XSK_BIND_ZC) {
				pthread_mutex_unlock(&xdp_lock);
				PP_ERR("device '%s': %s queue %u joins arena %s's UMEM, which an earlier port bound in copy mode: a UMEM has one mode (open this port on another arena, or use mode=copy)",
				       da->devstr, ifname, xq->qid,
				       pp_arena_name(arena));
				err = -EINVAL;
				goto err_teardown;
			}
			if (err && mode == XSK_BIND_ZC) {
				pthread_mutex_unlock(&xdp_lock);
				PP_ERR("device '%s': %s queue %u has no zero-copy AF_XDP: %s (use mode=copy or mode=auto)",
				       da->devstr, ifname, xq->qid,
				       strerror(-err));
				goto err_teardown;
			}
		}
		if (!xq->xsk)
			err = xdp_socket_bind(xp, xq, ring_size, false);
		pthread_mutex_unlock(&xdp_lock);
		xp->zero_copy |= xq->zero_copy;
		if (!xq->xsk) {
			xdp_bind_error(da->devstr, ifname, xq->qid, err);
			goto err_teardown;
		}
		xq->fd = xsk_socket__fd(xq->xsk);
		/* Aligned to a cache line, so the two low bits are free. */
		xq->tag = (uint64_t)(uintptr_t)xq;
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
	if (xp->zero_copy)
		PP_INFO("port %s: AF_XDP on %s queues %lu..%lu, zero-copy mode",
			port->name, ifname, qid, qid + xp->nr_queues - 1);
	else
		PP_INFO("port %s: AF_XDP on %s queues %lu..%lu, copy mode, TX budget %u frames a call%s",
			port->name, ifname, qid, qid + xp->nr_queues - 1,
			xp->q[0].tx_budget,
			ring_size >= PP_NET_BURST &&
			xp->q[0].tx_budget == XDP_TX_BUDGET_DEFAULT ?
			" (the kernel's: no XDP_MAX_TX_SKB_BUDGET before Linux 6.17)" : "");
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

static const char *const xdp_keys[] = { "iface", "queue", "queues", "mode",
					NULL };

const struct pp_net_driver pp_net_af_xdp_driver = {
	.name = "af_xdp",
	.keys = xdp_keys,
	.help = "af_xdp:IFNAME[,queue=<0..255>][,queues=<RX queues>][,mode=auto|copy|zc]",
	.ops = {
		.probe = xdp_probe,
		.remove = xdp_remove,
		.rx_burst = af_xdp_rx_burst,
		.tx_burst = af_xdp_tx_burst,
	},
};
