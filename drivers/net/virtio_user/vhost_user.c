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
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
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

int vhost_user_connect(const char *path, bool server, int timeout_ms,
		       bool quiet, int *fdp)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd, lfd, err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		PP_ERR("vhost-user: socket path '%s' is longer than the %zu bytes a unix socket takes: use a shorter path",
		       path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		PP_ERR("vhost-user: socket(): %s", strerror(errno));
		return err;
	}
	if (!server) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			err = -errno;
			if (!quiet)
				PP_ERR("vhost-user: cannot connect to %s: %s (start the back-end first, e.g. testpmd --vdev 'net_vhost0,iface=%s', or open with server=1 and let it connect)",
				       path, strerror(errno), path);
			goto err_close;
		}
		goto connected;
	}
	/* Server: a fresh socket file, one back-end, a bounded wait. */
	lfd = fd;
	unlink(path);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
		err = -errno;
		PP_ERR("vhost-user: cannot listen on %s: %s", path,
		       strerror(errno));
		goto err_close;
	}
	{
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		int r = poll(&p, 1, timeout_ms);

		if (r <= 0) {
			err = r ? -errno : -ETIMEDOUT;
			if (!quiet)
				PP_ERR("vhost-user: no back-end connected to %s within %d ms (start it as a client: testpmd --vdev 'net_vhost0,iface=%s,client=1')",
				       path, timeout_ms, path);
			unlink(path);
			goto err_close;
		}
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	err = -errno;
	close(lfd);
	unlink(path);
	if (fd < 0) {
		PP_ERR("vhost-user: accept on %s: %s", path, strerror(-err));
		return err;
	}
connected:
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		err = -errno;
		PP_ERR("vhost-user: setsockopt on %s: %s", path,
		       strerror(errno));
		goto err_close;
	}
	*fdp = fd;
	return 0;

err_close:
	close(fd);
	return err;
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

/* Read exactly @len bytes, or fail (timeout, closed socket). */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = recv(fd, (char *)buf + got, len - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return got ? (ssize_t)got : r;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Send @request with no payload and read its 64-bit (or state) reply. */
int vhost_user_call(int fd, const char *path, uint32_t request,
		    uint64_t *val)
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
	err = vhost_user_send(fd, path, &msg, NULL, 0);
	if (err)
		return err;
	r = read_full(fd, buf, VHOST_USER_HDR_LEN);
	if (r != VHOST_USER_HDR_LEN) {
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
		r = read_full(fd, buf + len, size);
		if (r != (ssize_t)size) {
			PP_ERR("vhost-user: reply to %s from %s ends early",
			       vhost_user_request_name(request), path);
			return -EPROTO;
		}
		len += size;
	}
	/* A larger size stays unread: the parser refuses it by the header. */
	return vhost_user_reply_parse(buf, len, request, val);
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
