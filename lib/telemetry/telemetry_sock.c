/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry_sock.c - the server: the socket where dpdk-telemetry.py looks
 * (<runtime dir>/dpdk/<prefix>/dpdk_telemetry.v2), and one thread that
 * polls it, a wake-up pipe and up to MAX_CLIENTS connections. Each
 * connection gets the greeting, then one reply per request (one
 * SEQPACKET message each). A client that does not read its replies is
 * dropped rather than waited for (replies are sent without blocking).
 *
 * The directories: created 0700 where missing, then lstat()ed: each must
 * be a real directory (not a symlink), owned by us, writable by no one
 * else. The prefix directory is then ours alone, so the socket path in it
 * cannot be swapped. A file at the socket path is replaced only when it
 * is a socket that refuses connections (a dead program's).
 *
 * accept() can fail with the connection still queued (out of descriptors
 * or memory): the listener then stays readable, and polling it again at
 * once would spin. The thread keeps a spare descriptor to accept and
 * close such a connection with an error, as some servers do, so that the
 * client is told instead of left waiting for a greeting, and the listener
 * rests a moment (ACCEPT_REST_MS) before it is polled again.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "pp_log.h"
#include "pp_opts.h"
#include "telemetry_priv.h"

#define SOCKET_NAME "dpdk_telemetry.v2"
#define MAX_CLIENTS 16
/* The listener's rest after a failed accept(): a few tries a second. */
#define ACCEPT_REST_MS 100
/* At most one message a minute while accept() keeps failing. */
#define ACCEPT_LOG_EVERY_S 60

struct server {
	pthread_t thread;
	int listen_fd;
	int wake[2];               /* pipe: stop() writes, the thread polls */
	int spare_fd;              /* /dev/null, given up to refuse a client */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;                 /* the socket file we made, removed by */
	ino_t ino;                 /* stop() only if it is still there */
	/* The thread's own: failed accepts since the last message. */
	unsigned long refused;
	bool logged;
	int64_t logged_at;         /* CLOCK_MONOTONIC, ms */
};

static pthread_mutex_t server_lock = PTHREAD_MUTEX_INITIALIZER;
static struct server *server;  /* under server_lock */

/* ---- the path ---- */

static int check_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) && errno != EEXIST) {
		int err = errno;

		PP_ERR("telemetry: cannot create %s: %s", path, strerror(err));
		return -err;
	}
	if (lstat(path, &st)) {
		int err = errno;

		PP_ERR("telemetry: cannot stat %s: %s", path, strerror(err));
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		PP_ERR("telemetry: %s is not a directory (a symlink or a file): refused",
		       path);
		return -EPERM;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		PP_ERR("telemetry: %s belongs to uid %u or others may write to it (mode %03o): refused",
		       path, (unsigned int)st.st_uid,
		       (unsigned int)(st.st_mode & 0777));
		return -EPERM;
	}
	return 0;
}

/* DPDK's runtime directory rule (EAL and dpdk-telemetry.py agree). */
static const char *runtime_base(const struct pp_telemetry_opts *o)
{
	const char *d = o->runtime_dir;

	if (!d || !*d)
		d = getenv("RUNTIME_DIRECTORY");
	if (!d || !*d)
		d = geteuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");
	if (!d || !*d)
		d = "/tmp";
	return d;
}

static int make_path(const struct pp_telemetry_opts *o, char *path,
		     size_t len)
{
	const char *base = runtime_base(o);
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int n, ret;

	n = snprintf(dir, sizeof(dir), "%s/dpdk", base);
	if (n < 0 || (size_t)n >= sizeof(dir))
		goto too_long;
	ret = check_dir(dir);
	if (ret)
		return ret;
	n = snprintf(dir, sizeof(dir), "%s/dpdk/%s", base, o->prefix);
	if (n < 0 || (size_t)n >= sizeof(dir))
		goto too_long;
	ret = check_dir(dir);
	if (ret)
		return ret;
	n = snprintf(path, len, "%s/%s", dir, SOCKET_NAME);
	if (n < 0 || (size_t)n >= len)
		goto too_long;
	return 0;
too_long:
	PP_ERR("telemetry: the socket path under %s is longer than a Unix socket's %zu bytes: set a shorter runtime_dir",
	       base, len - 1);
	return -ENAMETOOLONG;
}

static int sock_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, ret = 0;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(a.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		ret = -errno;
	close(fd);
	return ret;
}

/* A file at @path: keep away from it unless it is a dead socket. */
static int clear_stale(const char *path)
{
	struct stat st;
	int ret;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		PP_ERR("telemetry: %s exists and is not a socket: refused", path);
		return -EEXIST;
	}
	ret = sock_connect(path);
	if (ret == 0) {
		PP_ERR("telemetry: %s answers: another program uses this prefix",
		       path);
		return -EADDRINUSE;
	}
	if (ret != -ECONNREFUSED) {
		PP_ERR("telemetry: %s: %s: left alone", path, strerror(-ret));
		return ret;
	}
	if (unlink(path) && errno != ENOENT)
		return -errno;
	return 0;
}

static int sock_listen(struct server *s)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, err;

	/* Non-blocking: a connection that went away between poll() and
	 * accept() must not block the thread away from its wake-up pipe. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	memcpy(a.sun_path, s->path, strlen(s->path) + 1);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	/* In our 0700 directory: nobody can put a link there in between. */
	if (chmod(s->path, 0600) || lstat(s->path, &st))
		goto fail_unlink;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	if (listen(fd, MAX_CLIENTS))
		goto fail_unlink;
	s->listen_fd = fd;
	return 0;
fail_unlink:
	err = errno;
	unlink(s->path);
	errno = err;
fail:
	err = errno;
	PP_ERR("telemetry: cannot listen on %s: %s", s->path, strerror(err));
	close(fd);
	return -err;
}

/* ---- the thread ---- */

static bool send_reply(int fd, const char *buf, size_t len)
{
	ssize_t n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);

	return n == (ssize_t)len;
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* accept() failed and the connection may still be queued: say so, at
 * most once a minute, with how many were refused meanwhile. */
static void accept_failed(struct server *s, int err)
{
	int64_t now = now_ms();

	s->refused++;
	if (s->logged && now - s->logged_at < ACCEPT_LOG_EVERY_S * 1000)
		return;
	if (err == EMFILE || err == ENFILE)
		PP_WARN("telemetry: cannot accept a client: %s (%lu refused): raise the descriptor limit (ulimit -n) or close descriptors",
			strerror(err), s->refused);
	else
		PP_WARN("telemetry: cannot accept a client: %s (%lu refused)",
			strerror(err), s->refused);
	s->logged = true;
	s->logged_at = now;
	s->refused = 0;
}

/* The listener polled in error without a client (POLLERR, POLLHUP). */
static int listener_error(const struct server *s)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(s->listen_fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	return err ? err : EIO;
}

/*
 * Out of descriptors: free the spare for a moment, take the queued
 * connection with it, answer with an error and close it, then take the
 * spare back. Another thread may take the freed slot first; the spare is
 * then reopened at the next failure, and until then the listener only
 * rests.
 */
static void refuse_client(struct server *s, char *out)
{
	int fd;

	if (s->spare_fd < 0)
		s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (s->spare_fd < 0)
		return;
	close(s->spare_fd);
	fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd >= 0) {
		size_t len = (size_t)snprintf(out, TELEMETRY_MAX_OUTPUT,
			"{\"error\":\"the server is out of file descriptors\"}");

		send_reply(fd, out, len);
		close(fd);
	}
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/*
 * The listener is readable: take one client. False when
 * accept() failed in a way that leaves the connection queued, or with
 * an error that does not go away by itself: the listener then rests.
 */
static bool accept_client(struct server *s, int *clients, unsigned int *nr,
			  char *out)
{
	int fd = accept4(s->listen_fd, NULL, NULL,
			 SOCK_CLOEXEC | SOCK_NONBLOCK);
	size_t len;

	if (fd < 0) {
		int err = errno;

		switch (err) {
		case EAGAIN:          /* nothing queued after all */
		case EINTR:
		case ECONNABORTED:    /* the client gave up: dequeued */
		case EPROTO:
			return true;
		case EMFILE:
		case ENFILE:
			refuse_client(s, out);
			break;
		default:              /* ENOBUFS, ENOMEM, or a bug */
			break;
		}
		accept_failed(s, err);
		return false;
	}
	if (*nr == MAX_CLIENTS) {
		len = (size_t)snprintf(out, TELEMETRY_MAX_OUTPUT,
			"{\"error\":\"too many connections\"}");
		send_reply(fd, out, len);
		close(fd);
		return true;
	}
	len = telemetry_greeting(out, TELEMETRY_MAX_OUTPUT);
	if (!send_reply(fd, out, len)) {
		close(fd);
		return true;
	}
	clients[(*nr)++] = fd;
	return true;
}

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct pollfd pfd[2 + MAX_CLIENTS];
	int clients[MAX_CLIENTS];
	unsigned int nr = 0;
	int64_t rest_until = 0;    /* the listener is not polled till then */
	char *req = malloc(TELEMETRY_MAX_REQUEST + 1);
	char *out = malloc(TELEMETRY_MAX_OUTPUT);

	if (!req || !out) {
		PP_ERR("telemetry: out of memory: the server stops");
		goto done;
	}
	for (;;) {
		int64_t rest = rest_until ? rest_until - now_ms() : 0;

		if (rest <= 0)
			rest_until = rest = 0;
		pfd[0] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
		/* A negative descriptor is skipped by poll(). */
		pfd[1] = (struct pollfd){ .fd = rest ? -1 : s->listen_fd,
					  .events = POLLIN };
		for (unsigned int i = 0; i < nr; i++)
			pfd[2 + i] = (struct pollfd){ .fd = clients[i],
						      .events = POLLIN };
		if (poll(pfd, 2 + nr, rest ? (int)rest : -1) < 0) {
			if (errno == EINTR)
				continue;
			PP_ERR("telemetry: poll: %s: the server stops",
			       strerror(errno));
			break;
		}
		if (pfd[0].revents)
			break;
		/* Clients first: accepting moves the array. */
		for (unsigned int i = nr; i-- > 0;) {
			short re = pfd[2 + i].revents;
			bool drop = false;

			if (re & POLLIN) {
				ssize_t n = recv(clients[i], req,
						 TELEMETRY_MAX_REQUEST + 1,
						 MSG_TRUNC | MSG_DONTWAIT);
				size_t len;

				if (n < 0 && (errno == EAGAIN || errno == EINTR))
					continue;
				if (n <= 0) {
					drop = true;
				} else {
					/* Too long: the length says so. */
					if (n > TELEMETRY_MAX_REQUEST)
						n = TELEMETRY_MAX_REQUEST + 1;
					len = telemetry_handle(req, (size_t)n, out,
							       TELEMETRY_MAX_OUTPUT);
					drop = !send_reply(clients[i], out, len);
				}
			} else if (re) {
				drop = true;   /* POLLHUP, POLLERR */
			}
			if (drop) {
				close(clients[i]);
				clients[i] = clients[--nr];
			}
		}
		/* Never poll at once a listener that failed: it would spin. */
		if (pfd[1].revents & POLLIN) {
			if (!accept_client(s, clients, &nr, out))
				rest_until = now_ms() + ACCEPT_REST_MS;
		} else if (pfd[1].revents) {
			accept_failed(s, listener_error(s));
			rest_until = now_ms() + ACCEPT_REST_MS;
		}
	}
done:
	for (unsigned int i = 0; i < nr; i++)
		close(clients[i]);
	free(req);
	free(out);
	return NULL;
}

/* ---- start and stop ---- */

static void server_free(struct server *s)
{
	struct stat st;

	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		/* Remove the socket only if it is still the one we made. */
		if (!lstat(s->path, &st) && S_ISSOCK(st.st_mode) &&
		    st.st_dev == s->dev && st.st_ino == s->ino)
			unlink(s->path);
	}
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	free(s);
}

int pp_telemetry_start(const struct pp_telemetry_opts *opts)
{
	struct server *s;
	sigset_t all, old;
	int ret;

	if (pp_opts_valid(opts, sizeof(*opts), sizeof(*opts),
			  "struct pp_telemetry_opts"))
		return -EINVAL;
	if (!telemetry_valid_name(opts->prefix) ||
	    strspn(opts->prefix, ".") == strlen(opts->prefix) ||
	    strchr(opts->prefix, ':')) {
		PP_ERR("telemetry: bad prefix '%s': 1 to %d of letters, digits, '_', '-', '.', not only dots",
		       opts->prefix ? opts->prefix : "(null)",
		       PP_TELEMETRY_NAME_MAX);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->listen_fd = s->wake[0] = s->wake[1] = -1;
	/* The spare (refuse_client()); without one the listener only rests. */
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	pthread_mutex_lock(&server_lock);
	if (server) {
		PP_ERR("telemetry: a server runs already: pp_telemetry_stop() first");
		ret = -EALREADY;
		goto fail;
	}
	ret = make_path(opts, s->path, sizeof(s->path));
	if (ret)
		goto fail;
	ret = clear_stale(s->path);
	if (ret)
		goto fail;
	ret = sock_listen(s);
	if (ret)
		goto fail;
	if (pipe2(s->wake, O_CLOEXEC)) {
		ret = -errno;
		goto fail;
	}
	/* Signals go to the program's threads, not to this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&s->thread, NULL, server_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		PP_ERR("telemetry: cannot start the thread: %s", strerror(-ret));
		goto fail;
	}
	server = s;
	pthread_mutex_unlock(&server_lock);
	PP_INFO("telemetry: listening on %s", s->path);
	return 0;
fail:
	pthread_mutex_unlock(&server_lock);
	server_free(s);
	return ret;
}

int pp_telemetry_socket_path(char *buf, size_t len)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&server_lock);
	if (server)
		ret = (size_t)snprintf(buf, len, "%s", server->path) < len ?
			      0 : -ENAMETOOLONG;
	pthread_mutex_unlock(&server_lock);
	return ret;
}

void pp_telemetry_stop(void)
{
	struct server *s;
	ssize_t n;

	pthread_mutex_lock(&server_lock);
	s = server;
	server = NULL;
	pthread_mutex_unlock(&server_lock);
	if (!s)
		return;
	do
		n = write(s->wake[1], "x", 1);
	while (n < 0 && errno == EINTR);
	pthread_join(s->thread, NULL);
	server_free(s);
}
