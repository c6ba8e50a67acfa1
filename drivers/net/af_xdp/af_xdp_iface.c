/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp_iface.c - the af_xdp driver's hold on a kernel interface: bpffs
 * and the memlock limit that libxdp needs, a lock file per interface that
 * tells a stale XDP program (its process was killed) from a live one, and
 * our XDP program (af_xdp_prog.bpf.c), attached by the first port on the
 * interface and detached by the last. Registry under af_xdp_lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pp_log.h"
#include "af_xdp_ctl_priv.h"

#ifdef PP_AF_XDP_OWN_PROG
#include "af_xdp_prog.h"
#endif

static struct xdp_iface *af_xdp_ifaces; /* under af_xdp_lock */

/* libxdp pins its dispatcher state in bpffs; mount it when missing. */
int af_xdp_bpffs_ensure(void)
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
void af_xdp_memlock_raise(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) && !getrlimit(RLIMIT_MEMLOCK, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_MEMLOCK, &rl);
	}
}

/*
 * Descriptors an open may still need after the step that failed: libxdp's
 * object, maps, program and link while it attaches (about a dozen), then a
 * socket a queue. With fewer than this free, a failure is the limit's.
 */
#define AF_XDP_FD_SLACK 16

/*
 * The errno is not always the test: libxdp reports a socket() that failed
 * with EMFILE inside xsk_socket__create_shared() (glibc's if_nametoindex)
 * as ENOENT (libxdp 1.3.1), and attaching on Linux 6.1 near the limit
 * fails with EINVAL or EBADF (a descriptor it could not get, passed on).
 * So where the errno is something else, count the descriptors that can be
 * had now, up to AF_XDP_FD_SLACK: the failed call has let go of what it
 * took, and near the limit there are fewer than the open needs.
 */
const char *af_xdp_fd_hint(int *err, char *buf, size_t len)
{
	int fds[AF_XDP_FD_SLACK], fd_errno = 0;
	unsigned int n, i;
	char limit[48];
	struct rlimit rl;

	if (*err != -EMFILE && *err != -ENFILE) {
		for (n = 0; n < AF_XDP_FD_SLACK; n++) {
			fds[n] = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
			if (fds[n] < 0) {
				fd_errno = errno;
				break;
			}
		}
		for (i = 0; i < n; i++)
			close(fds[i]);
		if (fd_errno != EMFILE && fd_errno != ENFILE)
			return NULL;
		*err = -fd_errno;
	}
	if (*err == -ENFILE) {
		snprintf(buf, len, "the system is out of file descriptors: its limit, fs.file-max, is reached: close files elsewhere or raise /proc/sys/fs/file-max");
		return buf;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		limit[0] = '\0';
	else
		snprintf(limit, sizeof(limit), ", at its limit of %llu",
			 (unsigned long long)rl.rlim_cur);
	snprintf(buf, len, "this process is out of file descriptors%s: raise the limit (RLIMIT_NOFILE) with ulimit -n, or LimitNOFILE= for a service; an af_xdp port takes one a queue and a few more while it opens",
		 limit);
	return buf;
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
			int err = -errno;
			char why[256];
			const char *hint = af_xdp_fd_hint(&err, why, sizeof(why));

			PP_ERR("af_xdp: cannot open %s: %s (%s)", path,
			       strerror(-err), hint ? hint : "run as root");
			return err;
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

static int xdp_prog_attach(struct xdp_iface *ifc, bool frags)
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
	/*
	 * Frags-aware where the kernel has AF_XDP multi-buffer: the program
	 * looks at no packet data, so fragments change nothing for it, and
	 * without the flag a driver keeps the MTU to what one page holds
	 * (veth: "Peer MTU is too large to set XDP") or drops what does not
	 * fit. Not before 6.6: there a packet larger than a UMEM frame
	 * cannot reach a socket anyway, and the program stays as it was.
	 */
	if (frags) {
		err = xdp_program__set_xdp_frags_support(ifc->prog, true);
		if (err)
			PP_WARN("af_xdp: cannot mark the XDP program frags-aware: %s (packets above a page will not reach it)",
				strerror(-err));
	}
	err = XDP_FAIL_RC(EPERM, xdp_program__attach(ifc->prog, ifc->ifindex,
						     XDP_MODE_UNSPEC, 0));
	if (err) {
		char why[256];
		const char *hint = af_xdp_fd_hint(&err, why, sizeof(why));

		PP_ERR("af_xdp: cannot attach an XDP program to %s: %s (%s)",
		       ifc->name, strerror(-err), hint ? hint :
		       "needs root, a kernel with BPF and XDP sockets, and no other XDP program on the interface");
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

void af_xdp_iface_put(struct xdp_iface *ifc)
{
	struct xdp_iface **pp;

	if (--ifc->refs)
		return;
#ifdef PP_AF_XDP_OWN_PROG
	xdp_prog_detach(ifc);
#endif
	for (pp = &af_xdp_ifaces; *pp; pp = &(*pp)->next) {
		if (*pp == ifc) {
			*pp = ifc->next;
			break;
		}
	}
	xdp_lock_release(ifc->lock_fd, ifc->name);
	free(ifc);
}

/* The interface's shared state, attaching our program on first use. */
struct xdp_iface *af_xdp_iface_get(const char *ifname, int ifindex,
				   bool frags, int *errp)
{
	struct xdp_iface *ifc;
	int err;

	for (ifc = af_xdp_ifaces; ifc; ifc = ifc->next) {
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
	err = xdp_prog_attach(ifc, frags);
	if (err)
		goto err_unlock;
#else
	(void)frags; /* libxdp's default program: its own choice */
#endif
	ifc->refs = 1;
	ifc->next = af_xdp_ifaces;
	af_xdp_ifaces = ifc;
	return ifc;

err_unlock:
	xdp_lock_release(ifc->lock_fd, ifname);
err_free:
	free(ifc);
	*errp = err;
	return NULL;
}
