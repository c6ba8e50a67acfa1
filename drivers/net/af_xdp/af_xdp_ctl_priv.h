/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp_ctl_priv.h - what the af_xdp driver's control-path files share:
 * the interface registry (af_xdp_iface.c: bpffs, the lock file, the XDP
 * program), the UMEM registry (af_xdp_umem.c), the lock over both, and
 * the fault sites in front of the calls into the kernel, libxdp and
 * libbpf. Sockets, probe and remove are af_xdp.c's; the rings are
 * af_xdp_rxtx.c's (af_xdp_priv.h).
 */
#ifndef PP_AF_XDP_CTL_PRIV_H
#define PP_AF_XDP_CTL_PRIV_H

#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include <pagepool/pp_net_driver.h>

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

/* One UMEM: an arena registered with the kernel, shared by refcount. */
struct xdp_umem {
	struct xsk_umem *umem;
	struct pp_arena *arena;
	char *base;
	uint64_t size;              /* the arena's committed bytes, pinned */
	struct pp_page *first;      /* the descriptor of the page at base */
	/* Rings xsk_umem__create needs; the first socket copies them. */
	struct xsk_ring_prod fill0;
	struct xsk_ring_cons comp0;
	unsigned int refs;
	unsigned int sockets;       /* bound so far; under af_xdp_lock */
	/*
	 * Bound with XDP_USE_SG (multi-buffer): the kernel keeps the first
	 * socket's choice for the UMEM and every socket that joins it
	 * (xs->sg is the UMEM's flag), so it is the UMEM's, set by its
	 * first bind. Under af_xdp_lock.
	 */
	bool sg;
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

/* Over both registries and each UMEM's socket count. */
extern pthread_mutex_t af_xdp_lock;

/* bpffs at /sys/fs/bpf, mounted when missing (libxdp pins state there). */
int af_xdp_bpffs_ensure(void);
/* RLIMIT_MEMLOCK lifted for kernels before 5.11 (BPF maps, the UMEM). */
void af_xdp_memlock_raise(void);

/*
 * When a control-path call failed with *@err (-errno): whether the
 * process (EMFILE) or the system (ENFILE) is out of file descriptors, and
 * then what to do, in @buf (returned), with *@err made -EMFILE or
 * -ENFILE; NULL for any other failure. A port takes one descriptor a
 * queue and, at open, a lock file, the XDP program's, the UMEM's socket
 * and a few passing ones: a failure there is the descriptor limit, not
 * root or BPF, whatever errno libxdp made of it.
 */
const char *af_xdp_fd_hint(int *err, char *buf, size_t len);

/*
 * The interface's shared state: made by its first port (lock file taken,
 * our program attached), referenced by the others. NULL with *@errp set
 * after a message. Under af_xdp_lock; _put drops a reference, and the
 * last one detaches the program and removes the lock file. @frags: the
 * kernel has AF_XDP multi-buffer, so the program is loaded frags-aware
 * (BPF_F_XDP_HAS_FRAGS), which is what lets a driver (veth among them)
 * take an MTU above a page and hand it packets in fragments.
 */
struct xdp_iface *af_xdp_iface_get(const char *ifname, int ifindex,
				   bool frags, int *errp);
void af_xdp_iface_put(struct xdp_iface *ifc);

/*
 * The UMEM over @arena, registered whole by its first user, port @port
 * (its interface's name, which the port takes once open); the arena is
 * pinned until the last put (a growable arena stays at the size it has
 * then). @ring_size sizes the fill and completion rings of
 * every queue that uses it. NULL with *@errp set after a message. Under
 * af_xdp_lock, as _put.
 */
struct xdp_umem *af_xdp_umem_get(struct pp_allocator *alloc,
				 struct pp_arena *arena, const char *port,
				 unsigned int ring_size,
				 unsigned int headroom, int *errp);
void af_xdp_umem_put(struct xdp_umem *um);

/*
 * af_xdp_xstats.c: the counters of the @nr queues at @q, kernel's and
 * driver's (pp_net_driver_ops.xstats' contract), and @ifname's MAC
 * (0, or -ENODATA / -errno).
 */
struct xdp_queue;
int af_xdp_xstats(const struct xdp_queue *q, unsigned int nr,
		  struct pp_net_xstat *out, unsigned int n);
int af_xdp_mac_addr(const char *ifname, uint8_t mac[6]);

#endif /* PP_AF_XDP_CTL_PRIV_H */
