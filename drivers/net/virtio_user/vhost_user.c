/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost_user.c - the front-end side of the vhost-user protocol: the unix
 * socket (client or server), messages with file descriptors in
 * SCM_RIGHTS, and the check of every reply the back-end sends.
 *
 * The back-end is another process we do not trust: a reply is read in
 * two steps (header, then at most the payload size we expect), and is
 * refused unless its version, reply flag, request and size are exactly
 * what the request asks for. The socket has a receive timeout, so a
 * back-end that never answers costs a bounded wait and a message, not a
 * hung open.
 *
 * server=1 takes nothing that is not its own (DPDK's virtio_user does
 * the same): the socket is made only where nothing is, or where a socket
 * no program has bound lies (a killed program's), which is the one thing
 * ever removed before it; it stays open from open to close, so the path
 * is the port's while it is open and a back-end reconnects to it; and the
 * close removes it only if it is still the file the port made. The socket
 * is 0600 whatever the umask, and a back-end that connects as another
 * user than root or ours is refused before anything is sent to it: it
 * would be sent the arena's memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "pp_log.h"
#include "virtio_user_priv.h"

static const char *const names[VHOST_USER_REQUEST_MAX] = {
	[VHOST_USER_GET_FEATURES] = "GET_FEATURES",
	[VHOST_USER_SET_FEATURES] = "SET_FEATURES",
	[VHOST_USER_SET_OWNER] = "SET_OWNER",
	[VHOST_USER_SET_MEM_TABLE] = "SET_MEM_TABLE",
	[VHOST_USER_SET_VRING_NUM] = "SET_VRING_NUM",
	[VHOST_USER_SET_VRING_ADDR] = "SET_VRING_ADDR",
	[VHOST_USER_SET_VRING_BASE] = "SET_VRING_BASE",
	[VHOST_USER_GET_VRING_BASE] = "GET_VRING_BASE",
	[VHOST_USER_SET_VRING_KICK] = "SET_VRING_KICK",
	[VHOST_USER_SET_VRING_CALL] = "SET_VRING_CALL",
	[VHOST_USER_GET_PROTOCOL_FEATURES] = "GET_PROTOCOL_FEATURES",
	[VHOST_USER_SET_PROTOCOL_FEATURES] = "SET_PROTOCOL_FEATURES",
	[VHOST_USER_GET_QUEUE_NUM] = "GET_QUEUE_NUM",
	[VHOST_USER_SET_VRING_ENABLE] = "SET_VRING_ENABLE",
};

const char *vhost_user_request_name(uint32_t request)
{
	if (request < VHOST_USER_REQUEST_MAX && names[request])
		return names[request];
	return "unknown request";
}

/* The payload a reply to @request carries, or 0 for none we ask for. */
static uint32_t reply_size(uint32_t request)
{
	switch (request) {
	case VHOST_USER_GET_FEATURES:
	case VHOST_USER_GET_PROTOCOL_FEATURES:
	case VHOST_USER_GET_QUEUE_NUM:
		return sizeof(uint64_t);
	case VHOST_USER_GET_VRING_BASE:
		return sizeof(struct vhost_user_state);
	default:
		return 0;
	}
}

int vhost_user_reply_parse(const void *buf, size_t len, uint32_t request,
			   uint64_t *val)
{
	struct vhost_user_msg msg;
	uint32_t want = reply_size(request);

	if (!want) {
		PP_ERR("vhost-user: %s has no reply to parse",
		       vhost_user_request_name(request));
		return -EPROTO;
	}
	if (len < VHOST_USER_HDR_LEN) {
		PP_ERR("vhost-user: reply to %s is %zu bytes, shorter than the 12-byte header: the back-end closed the socket or speaks another protocol",
		       vhost_user_request_name(request), len);
		return -EPROTO;
	}
	memset(&msg, 0, sizeof(msg));
	memcpy(&msg, buf, len < sizeof(msg) ? len : sizeof(msg));
	if ((msg.flags & VHOST_USER_VERSION_MASK) != VHOST_USER_VERSION ||
	    !(msg.flags & VHOST_USER_REPLY)) {
		PP_ERR("vhost-user: reply to %s has flags 0x%x: not a version 1 reply (is the socket a vhost-user back-end?)",
		       vhost_user_request_name(request), msg.flags);
		return -EPROTO;
	}
	if (msg.request != request) {
		PP_ERR("vhost-user: asked %s, the back-end answered request %u (%s): out of step: close the port and open it again (restart the back-end if it repeats)",
		       vhost_user_request_name(request), msg.request,
		       vhost_user_request_name(msg.request));
		return -EPROTO;
	}
	if (msg.size != want || len != VHOST_USER_HDR_LEN + (size_t)want) {
		PP_ERR("vhost-user: reply to %s says %u payload bytes and brings %zu; it must be %u",
		       vhost_user_request_name(request), msg.size,
		       len - VHOST_USER_HDR_LEN, want);
		return -EPROTO;
	}
	*val = request == VHOST_USER_GET_VRING_BASE ? msg.payload.state.num :
						      msg.payload.u64;
	return 0;
}

/* Each reply may take @timeout_ms, and each send (SO_RCVTIMEO, SO_SNDTIMEO). */
int vhost_user_set_timeout(int fd, const char *path, int timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

	/* A zero timeval would be no timeout at all. */
	if (timeout_ms <= 0)
		tv = (struct timeval){ 0, 1000 };
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		int err = -errno;

		PP_ERR("vhost-user: setsockopt on %s: %s", path, strerror(-err));
		return err;
	}
	return 0;
}

static int sun_path(struct sockaddr_un *sa, const char *path)
{
	if (strlen(path) >= sizeof(sa->sun_path)) {
		PP_ERR("vhost-user: socket path '%s' is longer than the %zu bytes a unix socket takes: use a shorter path",
		       path, sizeof(sa->sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

int vhost_user_connect(const char *path, int timeout_ms, bool quiet, int *fdp)
{
	struct sockaddr_un sa;
	int fd, err;

	err = sun_path(&sa, path);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		PP_ERR("vhost-user: socket(): %s", strerror(errno));
		return err;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		if (!quiet)
			PP_ERR("vhost-user: cannot connect to %s: %s (start the back-end first, e.g. testpmd --vdev 'net_vhost0,iface=%s', or open with server=1 and let it connect)",
			       path, strerror(errno), path);
		close(fd);
		return err;
	}
	err = vhost_user_set_timeout(fd, path, timeout_ms);
	if (err) {
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}

/* ---- server=1: the socket file ---------------------------------------- */

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	default:
		return "a file";
	}
}

/*
 * Whether a program has a socket bound at @path: 0 when none has (the
 * file of a program that is gone), -EADDRINUSE when one has, another
 * -errno when it cannot be told. A datagram connect() asks: the kernel
 * answers ECONNREFUSED when no socket is bound to the file, EPROTOTYPE
 * (or success) when one is, and connects nothing: a stream connect()
 * would queue a connection that a live server=1 port, or back-end, then
 * accepts and takes for its peer.
 */
static int probe_bound(const char *path)
{
	struct sockaddr_un sa;
	int fd, err;

	err = sun_path(&sa, path);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = -EADDRINUSE;
	else
		err = errno == ECONNREFUSED ? 0 :
		      errno == EPROTOTYPE ? -EADDRINUSE : -errno;
	close(fd);
	return err;
}

/*
 * Before a server binds: the path must be free, or hold a socket no
 * program has bound (left by a port or back-end that was killed): that,
 * and nothing else, is removed. Anything else at the path (a regular
 * file, a link, a live program's socket) is refused and left as it is.
 */
static int clear_path(const char *path)
{
	struct stat st, now;
	int err;

	if (lstat(path, &st))
		return 0;   /* ENOENT, or bind() says what is wrong */
	if (!S_ISSOCK(st.st_mode)) {
		PP_ERR("vhost-user: %s exists and is %s, not a socket: refused, nothing removed (server=1 creates its socket there: give a free path, or remove what is there if it is yours to remove)",
		       path, file_kind(st.st_mode));
		return -EEXIST;
	}
	err = probe_bound(path);
	if (err == -EADDRINUSE) {
		PP_ERR("vhost-user: %s is the socket of a running program (another server=1 port or a back-end): refused, nothing removed (give each server=1 port a path of its own)",
		       path);
		return err;
	}
	if (err) {
		PP_ERR("vhost-user: %s is a socket, and whether a program uses it cannot be told (%s): refused, nothing removed",
		       path, strerror(-err));
		return err;
	}
	/* Still the file just probed: a socket nobody has. */
	if (lstat(path, &now) || now.st_dev != st.st_dev ||
	    now.st_ino != st.st_ino || !S_ISSOCK(now.st_mode)) {
		PP_ERR("vhost-user: %s changed while it was checked: refused, nothing removed",
		       path);
		return -EEXIST;
	}
	if (unlink(path) && errno != ENOENT) {
		err = -errno;
		PP_ERR("vhost-user: cannot remove the stale socket %s: %s",
		       path, strerror(-err));
		return err;
	}
	PP_INFO("vhost-user: removed the stale socket %s (no program had it)",
		path);
	return 0;
}

/*
 * The socket is bound in a directory of our own (0700) beside the path,
 * made 0600 there, where no one else can reach it, and linked into place
 * once it listens: whatever the umask, no other user ever finds it open
 * (a chmod() at the path after bind() could follow a link someone put
 * there; a socket's fchmod() changes the socket, not its file), and
 * link() replaces nothing that appeared at the path since the check.
 */
int vhost_user_listen(const char *path, struct vhost_user_listener *l)
{
	const char *slash = strrchr(path, '/');
	struct sockaddr_un sa, tmp;
	char dir[PATH_MAX];
	struct stat st;
	int fd = -1, dfd = -1, err;
	size_t n;

	l->fd = -1;
	err = sun_path(&sa, path);
	if (!err)
		err = clear_path(path);
	if (err)
		return err;
	n = (size_t)snprintf(dir, sizeof(dir), "%.*s.pp-vu-XXXXXX",
			     slash ? (int)(slash - path + 1) : 0, path);
	if (n >= sizeof(dir) || !mkdtemp(dir)) {
		err = n >= sizeof(dir) ? -ENAMETOOLONG : -errno;
		PP_ERR("vhost-user: cannot listen on %s: cannot make a private directory beside it: %s",
		       path, strerror(-err));
		return err;
	}
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		goto fail;
	/* A long path: the same directory through its descriptor. */
	memset(&tmp, 0, sizeof(tmp));
	tmp.sun_family = AF_UNIX;
	if ((size_t)snprintf(tmp.sun_path, sizeof(tmp.sun_path), "%s/s", dir) >=
	    sizeof(tmp.sun_path))
		snprintf(tmp.sun_path, sizeof(tmp.sun_path), "/proc/self/fd/%d/s",
			 dfd);
	/* Non-blocking: a connection gone between poll() and accept()
	 * must not block the accept. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&tmp, sizeof(tmp)) ||
	    fchmodat(dfd, "s", 0600, 0) ||
	    fstatat(dfd, "s", &st, AT_SYMLINK_NOFOLLOW) || listen(fd, 1) ||
	    linkat(dfd, "s", AT_FDCWD, path, 0))
		goto fail;
	unlinkat(dfd, "s", 0);
	close(dfd);
	rmdir(dir);
	l->fd = fd;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	return 0;

fail:
	err = -errno;
	if (err == -EEXIST)
		PP_ERR("vhost-user: cannot listen on %s: something was put there while the port made its socket: refused, nothing removed",
		       path);
	else
		PP_ERR("vhost-user: cannot listen on %s: %s", path,
		       strerror(-err));
	if (fd >= 0)
		close(fd);
	if (dfd >= 0) {
		unlinkat(dfd, "s", 0);
		close(dfd);
	}
	rmdir(dir);
	return err;
}

void vhost_user_unlisten(struct vhost_user_listener *l, const char *path)
{
	struct stat st;

	if (l->fd < 0)
		return;
	close(l->fd);
	l->fd = -1;
	/* Only the socket this port made: not what someone put there since. */
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode) && st.st_dev == l->dev &&
	    st.st_ino == l->ino)
		unlink(path);
}

int64_t vhost_user_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * The back-end is sent the arena's memory file: every pool and port on
 * the arena, to read and write. Only root and this process's own user
 * may be it. The socket's mode (0600) keeps others out already; this is
 * for a socket whose mode was loosened, or a file system that ignores
 * modes.
 */
static int peer_allowed(int fd, const char *path)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len)) {
		int err = -errno;

		PP_ERR("vhost-user: cannot tell who connected to %s (SO_PEERCRED: %s): refused",
		       path, strerror(-err));
		return err;
	}
	if (cr.uid == 0 || cr.uid == geteuid())
		return 0;
	PP_ERR("vhost-user: refused a back-end on %s run by uid %u (pid %d): a back-end maps the whole arena, so only root and uid %u may connect (run the back-end as one of them)",
	       path, (unsigned int)cr.uid, (int)cr.pid, (unsigned int)geteuid());
	return -EACCES;
}

/*
 * A back-end that is refused, or gone before it was accepted, does not
 * end the wait: the next one may connect until @wait_ms is over, so that
 * another user connecting first cannot make the open fail.
 */
int vhost_user_accept(struct vhost_user_listener *l, const char *path,
		      int wait_ms, int timeout_ms, bool quiet, int *fdp)
{
	struct pollfd p = { .fd = l->fd, .events = POLLIN };
	int64_t end = vhost_user_now_ms() + wait_ms;
	int fd, r, err;

	for (;;) {
		int64_t left = end - vhost_user_now_ms();

		r = poll(&p, 1, left > 0 ? (int)left : 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r ? -errno : -ETIMEDOUT;
			if (!quiet)
				PP_ERR("vhost-user: no back-end connected to %s within %d ms (start it as a client: testpmd --vdev 'net_vhost0,iface=%s,client=1')",
				       path, wait_ms, path);
			return err;
		}
		/* An error on the listening socket itself: accept() would
		 * fail at once, and this loop spin on it. */
		if (!(p.revents & POLLIN)) {
			PP_ERR("vhost-user: the listening socket %s reports an error (poll events 0x%x)",
			       path, (unsigned int)p.revents);
			return -EIO;
		}
		fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR ||
			    errno == ECONNABORTED)
				continue;
			err = -errno;
			PP_ERR("vhost-user: accept on %s: %s", path,
			       strerror(-err));
			return err;
		}
		err = peer_allowed(fd, path);
		if (!err)
			err = vhost_user_set_timeout(fd, path, timeout_ms);
		if (!err) {
			*fdp = fd;
			return 0;
		}
		close(fd);
		if (err != -EACCES)
			return err;
	}
}

int vhost_user_send(int fd, const char *path, struct vhost_user_msg *msg,
		    const int *fds, unsigned int nr_fds)
{
	char ctl[CMSG_SPACE(sizeof(int) * VHOST_USER_MAX_REGIONS)];
	struct iovec iov = {
		.iov_base = msg,
		.iov_len = VHOST_USER_HDR_LEN + msg->size,
	};
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	msg->flags = VHOST_USER_VERSION;
	if (nr_fds) {
		struct cmsghdr *c;

		memset(ctl, 0, sizeof(ctl));
		mh.msg_control = ctl;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nr_fds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nr_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nr_fds);
	}
	do {
		r = sendmsg(fd, &mh, MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	if (r != (ssize_t)iov.iov_len) {
		int err = r < 0 ? -errno : -EIO;

		PP_ERR("vhost-user: sending %s to %s failed: %s (the back-end closed the socket?)",
		       vhost_user_request_name(msg->request), path,
		       strerror(-err));
		return err;
	}
	return 0;
}

/*
 * Read exactly @len bytes, or fail: -1 with errno (EAGAIN: the socket's
 * timeout, or @end passed), or what was read before the back-end closed
 * the socket. @end: a vhost_user_now_ms() time, or 0 for none; it bounds
 * the whole read, where the socket's timeout bounds each recv() (a
 * back-end sending a byte at a time would get it again for each).
 */
static ssize_t read_full(int fd, void *buf, size_t len, int64_t end)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r;

		if (end) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int64_t left = end - vhost_user_now_ms();
			int pr = left > 0 ? poll(&p, 1, (int)left) : 0;

			if (pr < 0 && errno == EINTR)
				continue;
			if (pr == 0) {
				errno = EAGAIN;
				return -1;
			}
		}
		r = recv(fd, (char *)buf + got, len - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return (ssize_t)got;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int vhost_user_call_until(int fd, const char *path, uint32_t request,
			  uint64_t *val, int64_t end)
{
	struct vhost_user_msg msg = { .request = request };
	char buf[sizeof(msg)] = { 0 };
	uint32_t size;
	ssize_t r;
	size_t len;
	int err;

	if (request == VHOST_USER_GET_VRING_BASE) {
		msg.size = sizeof(msg.payload.state);
		msg.payload.state.index = (uint32_t)*val;
	}
	/* The send may take no more than what is left either. */
	if (end) {
		int64_t left = end - vhost_user_now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		err = vhost_user_set_timeout(fd, path, (int)left);
		if (err)
			return err;
	}
	err = vhost_user_send(fd, path, &msg, NULL, 0);
	if (err)
		return err;
	r = read_full(fd, buf, VHOST_USER_HDR_LEN, end);
	if (r != VHOST_USER_HDR_LEN) {
		if (r < 0 && errno == EAGAIN && end)
			return -ETIMEDOUT;   /* the caller says it, once */
		PP_ERR("vhost-user: no reply to %s from %s: %s",
		       vhost_user_request_name(request), path,
		       r < 0 ? (errno == EAGAIN ? "timed out (is the back-end stuck?)" :
				strerror(errno)) :
			       "the back-end closed the socket");
		return r < 0 && errno == EAGAIN ? -ETIMEDOUT : -EPROTO;
	}
	memcpy(&size, buf + 8, sizeof(size));
	len = VHOST_USER_HDR_LEN;
	/* Read no more than the payload we expect; a larger size is
	 * refused by the parser before anything else is read. */
	if (size && size <= sizeof(msg.payload)) {
		r = read_full(fd, buf + len, size, end);
		if (r != (ssize_t)size) {
			if (r < 0 && errno == EAGAIN && end)
				return -ETIMEDOUT;
			PP_ERR("vhost-user: reply to %s from %s ends early",
			       vhost_user_request_name(request), path);
			return -EPROTO;
		}
		len += size;
	}
	/* A larger size stays unread: the parser refuses it by the header. */
	return vhost_user_reply_parse(buf, len, request, val);
}

/* Send @request with no payload and read its 64-bit (or state) reply. */
int vhost_user_call(int fd, const char *path, uint32_t request,
		    uint64_t *val)
{
	return vhost_user_call_until(fd, path, request, val, 0);
}

int vhost_user_set_u64(int fd, const char *path, uint32_t request, uint64_t v)
{
	struct vhost_user_msg msg = {
		.request = request,
		.size = sizeof(uint64_t),
		.payload.u64 = v,
	};

	return vhost_user_send(fd, path, &msg, NULL, 0);
}

int vhost_user_set_state(int fd, const char *path, uint32_t request,
			 uint32_t index, uint32_t num)
{
	struct vhost_user_msg msg = {
		.request = request,
		.size = sizeof(struct vhost_user_state),
		.payload.state = { .index = index, .num = num },
	};

	return vhost_user_send(fd, path, &msg, NULL, 0);
}
