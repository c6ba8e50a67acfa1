/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio_user_reconnect.c - the port's reconnect thread (vu_watch), from
 * the end of the open to the start of the close.
 *
 * It watches the socket. When the back-end goes away it takes each ring
 * back (waiting for a burst in progress: each burst enters its queue's
 * handshake, vq_take_down()), returns the ring's pages to their pools,
 * keeps the ring down (held: bursts do nothing), and connects again
 * every VU_RETRY_MS (or, with server=1, waits for a back-end on the
 * socket); a new back-end gets the whole vhost-user handshake again
 * (virtio_user_negotiate.c) and each RX ring refills on its own thread's
 * next burst. While a back-end is there the thread also wakes every
 * VU_KICK_SWEEP_MS to kick the rings whose publish the data path may
 * not have kicked (vq_kick(), which reads the back-end's no-notify flag
 * without a barrier).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <pagepool/pp_net_driver.h>

#include "pp_log.h"
#include "virtio_user_priv.h"

/* How often the thread tries again while the back-end is away (the
 * went-away message says it). */
#define VU_RETRY_MS 200
/* How often it kicks, for a back-end that asks for kicks, the rings whose
 * publish the data path may not have kicked (vq_kick_sweep()). */
#define VU_KICK_SWEEP_MS 10

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
 * what nobody asked for): every ring is taken back, emptied and kept
 * down (held by this thread until vu_try_reconnect() brings it up), so
 * bursts do nothing until a back-end is there again.
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

int vu_watch_start(struct vu_port *vp)
{
	int err;

	vp->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vp->stopfd < 0) {
		err = -errno;
		PP_ERR("device '%s': eventfd: %s", vp->devstr, strerror(errno));
		return err;
	}
	err = -pthread_create(&vp->watcher, NULL, vu_watch, vp);
	if (err) {
		PP_ERR("device '%s': cannot start the reconnect thread: %s",
		       vp->devstr, strerror(-err));
		close(vp->stopfd);
		vp->stopfd = -1;
		return err;
	}
	vp->watching = true;
	return 0;
}

void vu_watch_stop(struct vu_port *vp)
{
	uint64_t one = 1;

	if (vp->watching) {
		if (write(vp->stopfd, &one, sizeof(one)) != sizeof(one))
			PP_ERR("port %s: cannot stop the reconnect thread: %s",
			       vp->port->name, strerror(errno));
		pthread_join(vp->watcher, NULL);
		vp->watching = false;
	}
	if (vp->stopfd >= 0)
		close(vp->stopfd);
	vp->stopfd = -1;
}
