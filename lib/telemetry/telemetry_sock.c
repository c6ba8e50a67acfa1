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
#include <unistd.h>

#include "pp_log.h"
#include "pp_opts.h"
#include "telemetry_priv.h"

#define SOCKET_NAME "dpdk_telemetry.v2"
#define MAX_CLIENTS 16

struct server {
	pthread_t thread;
	int listen_fd;
	int wake[2];               /* pipe: stop() writes, the thread polls */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;                 /* the socket file we made, removed by */
	ino_t ino;                 /* stop() only if it is still there */
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

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
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

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct pollfd pfd[2 + MAX_CLIENTS];
	int clients[MAX_CLIENTS];
	unsigned int nr = 0;
	char *req = malloc(TELEMETRY_MAX_REQUEST + 1);
	char *out = malloc(TELEMETRY_MAX_OUTPUT);

	if (!req || !out) {
		PP_ERR("telemetry: out of memory: the server stops");
		goto done;
	}
	for (;;) {
		pfd[0] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
		for (unsigned int i = 0; i < nr; i++)
			pfd[2 + i] = (struct pollfd){ .fd = clients[i],
						      .events = POLLIN };
		if (poll(pfd, 2 + nr, -1) < 0) {
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
		if (pfd[1].revents & POLLIN) {
			int fd = accept4(s->listen_fd, NULL, NULL,
					 SOCK_CLOEXEC | SOCK_NONBLOCK);
			size_t len;

			if (fd < 0)
				continue;
			if (nr == MAX_CLIENTS) {
				len = (size_t)snprintf(out, TELEMETRY_MAX_OUTPUT,
					"{\"error\":\"too many connections\"}");
				send_reply(fd, out, len);
				close(fd);
				continue;
			}
			len = telemetry_greeting(out, TELEMETRY_MAX_OUTPUT);
			if (!send_reply(fd, out, len)) {
				close(fd);
				continue;
			}
			clients[nr++] = fd;
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
