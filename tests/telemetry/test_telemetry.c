/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_telemetry.c - lib/telemetry from the outside, as dpdk-telemetry.py
 * sees it: a server on a prefix under a temporary runtime directory, a
 * SOCK_SEQPACKET client that checks the greeting, every command on a null
 * port's allocator, pool and port, the replies to bad requests, and that
 * the port's counters move between two queries. Then the socket's
 * security: modes, a stale socket replaced, a live one, a file, a symlink
 * and a shared directory refused. A server at its descriptor limit (a
 * child process with a lowered RLIMIT_NOFILE, every descriptor taken)
 * refuses a client at once and does not spin: its thread is runnable
 * (on a CPU or waiting for one, /proc schedstat) under a tenth of 2 s.
 * An allocator, a pool and a port destroyed while registered, never
 * unregistered, while a client asks for them in a loop: no read after
 * free (ASan), and the replies after each destroy say unknown. Last,
 * clients and a thread that registers and unregisters at once (suite
 * threads: TSan).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pagepool/pp_drivers.h>
#include <pagepool/pp_net_driver.h>
#include <pagepool/pp_telemetry.h>

#include "pp_test.h"

#define REPLY_MAX 65536

static char rundir[64];
static char sockpath[sizeof(((struct sockaddr_un *)0)->sun_path)];

static void set_path(const char *prefix)
{
	snprintf(sockpath, sizeof(sockpath), "%s/dpdk/%s/dpdk_telemetry.v2",
		 rundir, prefix);
}

static int start(const char *prefix)
{
	struct pp_telemetry_opts o = { .sz = sizeof(o), .prefix = prefix,
				       .runtime_dir = rundir };

	set_path(prefix);
	return pp_telemetry_start(&o);
}

/* Connect and read the greeting into @greet (may be NULL). */
static int client(char *greet, size_t len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[REPLY_MAX + 1];
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	REQUIRE(fd >= 0);
	memcpy(a.sun_path, sockpath, sizeof(a.sun_path));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "connect %s: %s\n", sockpath, strerror(errno));
		close(fd);
		return -1;
	}
	n = recv(fd, buf, REPLY_MAX, 0);
	REQUIRE(n > 0);
	buf[n] = '\0';
	if (greet && len) {
		size_t m = (size_t)n < len - 1 ? (size_t)n : len - 1;

		memcpy(greet, buf, m);
		greet[m] = '\0';
	}
	return fd;
}

/* One request of @len bytes, its reply (NUL-terminated) in @out. */
static ssize_t ask_n(int fd, const char *req, size_t len, char *out)
{
	ssize_t n;

	REQUIRE(send(fd, req, len, MSG_NOSIGNAL) == (ssize_t)len);
	n = recv(fd, out, REPLY_MAX, 0);
	REQUIRE(n > 0);
	out[n] = '\0';
	return n;
}

static ssize_t ask(int fd, const char *req, char *out)
{
	return ask_n(fd, req, strlen(req), out);
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The unsigned number after "key": at or after @from. */
static unsigned long long num_after(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(s, pat);
	REQUIRE(p != NULL);
	return strtoull(p + strlen(pat), NULL, 10);
}

static struct net {
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_port *port;
} net;

static void net_open(void)
{
	struct pp_port_conf conf = { .sz = sizeof(conf), .nid = PP_NUMA_NODE_ANY };

	net.arena = pp_test_arena(8 << 20, PP_PAGE_SIZE_4K);
	net.alloc = pp_test_allocator(net.arena);
	conf.allocator = net.alloc;
	net.port = pp_port_open("null0", &conf);
	REQUIRE(net.port != NULL);
}

static void net_close(void)
{
	CHECK_EQ(pp_port_close(net.port), 0);
	pp_allocator_drain_thread(net.alloc);
	CHECK_EQ(pp_allocator_destroy(net.alloc), 0);
	CHECK_EQ(pp_arena_destroy(net.arena), 0);
}

static void test_registry(void)
{
	struct pp_pool *pool = pp_port_rxq_pool(net.port, 0);
	char longname[PP_TELEMETRY_NAME_MAX + 2];

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK_EQ(pp_telemetry_register_allocator(NULL, "x"), -EINVAL);
	CHECK_EQ(pp_telemetry_register_allocator(net.alloc, NULL), -EINVAL);
	CHECK_EQ(pp_telemetry_register_allocator(net.alloc, ""), -EINVAL);
	CHECK_EQ(pp_telemetry_register_allocator(net.alloc, "a\"b"), -EINVAL);
	CHECK_EQ(pp_telemetry_register_allocator(net.alloc, "a/b"), -EINVAL);
	CHECK_EQ(pp_telemetry_register_allocator(net.alloc, longname), -EINVAL);
	longname[PP_TELEMETRY_NAME_MAX] = '\0';
	CHECK_EQ(pp_telemetry_register_allocator(net.alloc, longname), 0);
	CHECK_EQ(pp_telemetry_register_allocator(net.alloc, "main"), -EEXIST);
	CHECK_EQ(pp_telemetry_unregister(net.alloc), 1);
	CHECK_EQ(pp_telemetry_unregister(net.alloc), 0);

	CHECK_EQ(pp_telemetry_register_allocator(net.alloc, "main"), 0);
	CHECK_EQ(pp_telemetry_register_pool(pool, "main"), 0); /* other kind */
	CHECK_EQ(pp_telemetry_register_pool(pool, "rx0"), -EEXIST);
	CHECK_EQ(pp_telemetry_unregister(pool), 1);
	CHECK_EQ(pp_telemetry_register_pool(pool, "null0-rxq0"), 0);
	CHECK_EQ(pp_telemetry_register_port(net.port, NULL), 0); /* "null0" */
	CHECK_EQ(pp_telemetry_register_port(net.port, "other"), -EEXIST);
}

static void test_start_refused(void)
{
	struct pp_telemetry_opts o = { .sz = sizeof(o), .runtime_dir = rundir };
	static const char *const bad[] = { NULL, "", ".", "..", "a/b", "a:1",
					   "a b", "x\"", "../x" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.prefix = bad[i];
		CHECK_EQ(pp_telemetry_start(&o), -EINVAL);
	}
	o.prefix = "ok";
	o.sz = 0;
	CHECK_EQ(pp_telemetry_start(&o), -EINVAL);
	CHECK_EQ(pp_telemetry_start(NULL), -EINVAL);
	pp_telemetry_stop();   /* none runs: nothing to do */
}

/* pp_telemetry_socket_path(): the running server's, none otherwise. */
static void test_socket_path(void)
{
	char path[sizeof(sockpath)], small[8];

	CHECK_EQ(pp_telemetry_socket_path(path, sizeof(path)), -ENOENT);
	REQUIRE(start("pp-path") == 0);
	CHECK_EQ(pp_telemetry_socket_path(path, sizeof(path)), 0);
	CHECK(strcmp(path, sockpath) == 0);
	CHECK_EQ(pp_telemetry_socket_path(small, sizeof(small)),
		 -ENAMETOOLONG);
	pp_telemetry_stop();
	CHECK_EQ(pp_telemetry_socket_path(path, sizeof(path)), -ENOENT);
}

static void test_commands(void)
{
	static char r[REPLY_MAX + 1];
	char greet[256], want[128];
	struct stat st;
	int fd;

	REQUIRE(start("pp-test") == 0);
	CHECK_EQ(start("pp-test2"), -EALREADY);
	set_path("pp-test");
	REQUIRE(lstat(sockpath, &st) == 0);
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK(strrchr(sockpath, '/') != NULL);
	*strrchr(sockpath, '/') = '\0';
	REQUIRE(lstat(sockpath, &st) == 0);
	CHECK_EQ(st.st_mode & 0777, 0700);
	set_path("pp-test");

	fd = client(greet, sizeof(greet));
	REQUIRE(fd >= 0);
	snprintf(want, sizeof(want),
		 "{\"version\":\"pagepool %s\",\"pid\":%ld,\"max_output_len\":%d}",
		 PP_VERSION, (long)getpid(), REPLY_MAX);
	CHECK(!strcmp(greet, want));

	ask(fd, "/", r);
	CHECK(!strcmp(r, "{\"/\":[\"/\",\"/help\",\"/info\","
		      "\"/ethdev/list\",\"/ethdev/info\",\"/ethdev/stats\","
		      "\"/ethdev/xstats\","
		      "\"/pagepool/allocators\",\"/pagepool/allocator\","
		      "\"/pagepool/pools\",\"/pagepool/pool\","
		      "\"/pagepool/ports\",\"/pagepool/port\","
		      "\"/pagepool/inflight\"]}"));
	ask(fd, "/info", r);
	CHECK(starts(r, "{\"/info\":{\"version\":\"pagepool "));
	ask(fd, "/help,/pagepool/port", r);
	CHECK(starts(r, "{\"/help\":{\"/pagepool/port\":\""));
	ask(fd, "/pagepool/allocators", r);
	CHECK(!strcmp(r, "{\"/pagepool/allocators\":[\"main\"]}"));
	ask(fd, "/pagepool/pools", r);
	CHECK(!strcmp(r, "{\"/pagepool/pools\":[\"null0-rxq0\"]}"));
	ask(fd, "/pagepool/ports", r);
	CHECK(!strcmp(r, "{\"/pagepool/ports\":[\"null0\"]}"));
	ask(fd, "/pagepool/allocator,main", r);
	CHECK(starts(r, "{\"/pagepool/allocator\":{\"zones\":[{"));
	CHECK(num_after(r, "managed_pages") == 2048);
	/* A reply names the object as it was asked for, as DPDK's
	 * /mempool/info,NAME does: the registered name, not the pool's own
	 * ("null0-rx0", which no request would find). */
	ask(fd, "/pagepool/pool,null0-rxq0", r);
	CHECK(starts(r, "{\"/pagepool/pool\":{\"name\":\"null0-rxq0\","));
	CHECK(strstr(r, "\"recycle_ring_full\":") != NULL);

	/* The counters move with traffic. */
	unsigned long long before, after;

	pp_pool_set_owner(pp_port_rxq_pool(net.port, 0));
	ask(fd, "/pagepool/port,null0", r);
	CHECK(starts(r, "{\"/pagepool/port\":{\"name\":\"null0\","));
	before = num_after(r, "packets");
	for (int i = 0; i < 10; i++)
		pp_port_poll(net.port, 0, 64);
	ask(fd, "/pagepool/port,null0", r);
	after = num_after(r, "packets");
	CHECK_EQ(after - before, 640);
	CHECK(num_after(r, "alloc_fast") > 0);

	/* Well formed, but unknown or with the wrong parameters: null. */
	static const char *const nulls[][2] = {
		{ "/nope", "/nope" }, { "/pagepool/port,eth9", "/pagepool/port" },
		{ "/pagepool/port", "/pagepool/port" },
		{ "/pagepool/port,", "/pagepool/port" },
		{ "/pagepool/pool,main", "/pagepool/pool" },
		{ "/info,1", "/info" }, { "/,x", "/" }, { "/help", "/help" },
		{ "/help,/nope", "/help" }, { "//", "//" },
	};
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++) {
		snprintf(want, sizeof(want), "{\"%s\":null}", nulls[i][1]);
		ask(fd, nulls[i][0], r);
		if (strcmp(r, want))
			fprintf(stderr, "%s: %s, want %s\n", nulls[i][0], r, want);
		CHECK(!strcmp(r, want));
	}
	/* Malformed: an error, and the connection stays. */
	static const char *const bad[] = {
		"info", " /info", "/info ", "/in\"fo", "/in\\fo", "/info\n",
		"/pagepool/port,a\"b", "/pagepool/port,a b", "\xff", ",",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ask(fd, bad[i], r);
		CHECK(starts(r, "{\"error\":\""));
	}
	ask_n(fd, "/info\0x", 7, r);
	CHECK(starts(r, "{\"error\":\""));
	static char big[4096];
	memset(big, 'a', sizeof(big));
	big[0] = '/';
	ask_n(fd, big, sizeof(big), r);
	CHECK(!strcmp(r, "{\"error\":\"request too long\"}"));
	ask_n(fd, big, 57, r);
	CHECK(!strcmp(r, "{\"error\":\"command too long\"}"));
	ask_n(fd, big, 56, r);
	CHECK(starts(r, "{\"/aaa"));
	ask(fd, "/info", r);
	CHECK(starts(r, "{\"/info\":"));

	/* Unregistered: gone from the lists. */
	CHECK_EQ(pp_telemetry_unregister(net.port), 1);
	ask(fd, "/pagepool/ports", r);
	CHECK(!strcmp(r, "{\"/pagepool/ports\":[]}"));
	ask(fd, "/pagepool/port,null0", r);
	CHECK(!strcmp(r, "{\"/pagepool/port\":null}"));
	/* The same rule for a port registered under a name of its own. */
	CHECK_EQ(pp_telemetry_register_port(net.port, "wan0"), 0);
	ask(fd, "/pagepool/port,wan0", r);
	CHECK(starts(r, "{\"/pagepool/port\":{\"name\":\"wan0\",\"driver\":\"null\","));
	CHECK_EQ(pp_telemetry_unregister(net.port), 1);
	CHECK_EQ(pp_telemetry_register_port(net.port, NULL), 0);

	/* A second client at the same time. */
	int fd2 = client(NULL, 0);
	CHECK(fd2 >= 0);
	ask(fd2, "/pagepool/ports", r);
	CHECK(!strcmp(r, "{\"/pagepool/ports\":[\"null0\"]}"));
	close(fd2);
	close(fd);

	pp_telemetry_stop();
	CHECK(lstat(sockpath, &st) != 0 && errno == ENOENT);
}

/* ---- DPDK's /ethdev commands ---- */

/* The sixteen entries of a q_* array: @v for queue 0, then zeros. */
static void q16(char *buf, size_t len, const char *key, unsigned long long v)
{
	int n = snprintf(buf, len, ",\"%s\":[%llu", key, v);

	for (int i = 1; i < 16; i++)
		n += snprintf(buf + n, len - (size_t)n, ",0");
	snprintf(buf + n, len - (size_t)n, "]");
}

/*
 * The /ethdev/stats reply of a one-queue port, built from
 * pp_port_rxq_stats()/pp_port_txq_stats(): DPDK's keys in DPDK's order,
 * imissed the RX drops, oerrors the TX errors (frames a full queue
 * refused are the caller's in DPDK, not counted), rx_nombuf 0.
 */
static void want_stats(const struct pp_port *port, char *w, size_t len)
{
	struct pp_rxq_stats rs;
	struct pp_txq_stats ts;
	char a[5][128];

	REQUIRE(pp_port_nr_rxq(port) == 1 && pp_port_nr_txq(port) == 1);
	pp_port_rxq_stats(port, 0, &rs);
	pp_port_txq_stats(port, 0, &ts);
	q16(a[0], sizeof(a[0]), "q_ipackets", rs.packets);
	q16(a[1], sizeof(a[1]), "q_opackets", ts.packets);
	q16(a[2], sizeof(a[2]), "q_ibytes", rs.bytes);
	q16(a[3], sizeof(a[3]), "q_obytes", ts.bytes);
	q16(a[4], sizeof(a[4]), "q_errors", rs.drops + rs.errors);
	snprintf(w, len, "{\"/ethdev/stats\":{\"ipackets\":%llu,"
		 "\"opackets\":%llu,\"ibytes\":%llu,\"obytes\":%llu,"
		 "\"imissed\":%llu,\"ierrors\":%llu,\"oerrors\":%llu,"
		 "\"rx_nombuf\":0%s%s%s%s%s}}",
		 (unsigned long long)rs.packets, (unsigned long long)ts.packets,
		 (unsigned long long)rs.bytes, (unsigned long long)ts.bytes,
		 (unsigned long long)rs.drops, (unsigned long long)rs.errors,
		 (unsigned long long)ts.errors, a[0], a[1], a[2], a[3], a[4]);
}

/* DPDK's generic xstats of a one-queue port, the start of its reply. */
static void want_xstats(const struct pp_port *port, char *w, size_t len)
{
	struct pp_rxq_stats rs;
	struct pp_txq_stats ts;

	pp_port_rxq_stats(port, 0, &rs);
	pp_port_txq_stats(port, 0, &ts);
	snprintf(w, len, "{\"/ethdev/xstats\":{\"rx_good_packets\":%llu,"
		 "\"tx_good_packets\":%llu,\"rx_good_bytes\":%llu,"
		 "\"tx_good_bytes\":%llu,\"rx_missed_errors\":%llu,"
		 "\"rx_errors\":%llu,\"tx_errors\":%llu,"
		 "\"rx_mbuf_allocation_errors\":0,\"rx_q0_packets\":%llu,"
		 "\"rx_q0_bytes\":%llu,\"rx_q0_errors\":%llu,"
		 "\"tx_q0_packets\":%llu,\"tx_q0_bytes\":%llu,"
		 "\"tx_full_drops\":%llu,",
		 (unsigned long long)rs.packets, (unsigned long long)ts.packets,
		 (unsigned long long)rs.bytes, (unsigned long long)ts.bytes,
		 (unsigned long long)rs.drops, (unsigned long long)rs.errors,
		 (unsigned long long)ts.errors, (unsigned long long)rs.packets,
		 (unsigned long long)rs.bytes,
		 (unsigned long long)(rs.drops + rs.errors),
		 (unsigned long long)ts.packets, (unsigned long long)ts.bytes,
		 (unsigned long long)ts.drops);
}

static void check_port_replies(int fd, const struct pp_port *port)
{
	static char r[REPLY_MAX + 1], w[4096];
	char req[64];
	unsigned int id = pp_port_id(port);

	snprintf(req, sizeof(req), "/ethdev/stats,%u", id);
	ask(fd, req, r);
	want_stats(port, w, sizeof(w));
	if (strcmp(r, w))
		fprintf(stderr, "%s:\n got  %s\n want %s\n", req, r, w);
	CHECK(!strcmp(r, w));
	snprintf(req, sizeof(req), "/ethdev/xstats,%u", id);
	ask(fd, req, r);
	want_xstats(port, w, sizeof(w));
	if (!starts(r, w))
		fprintf(stderr, "%s:\n got  %s\n want %s...\n", req, r, w);
	CHECK(starts(r, w));
	snprintf(req, sizeof(req), "/ethdev/info,%u", id);
	ask(fd, req, r);
	snprintf(w, sizeof(w), "{\"/ethdev/info\":{\"name\":\"%s\",\"state\":1,"
		 "\"nb_rx_queues\":1,\"nb_tx_queues\":1,\"port_id\":%u,"
		 "\"mtu\":%u,\"rx_mbuf_size_min\":%lu,"
		 "\"mac_addr\":\"00:00:00:00:00:00\",\"promiscuous\":0,"
		 "\"scattered_rx\":0,\"all_multicast\":0,\"dev_started\":1,"
		 "\"lro\":0,\"dev_configured\":1,\"rxq_state\":[1],"
		 "\"txq_state\":[1],\"numa_node\":-1,\"dev_flags\":64,"
		 "\"rx_offloads\":0,\"tx_offloads\":0,\"ethdev_rss_hf\":0}}",
		 pp_port_name(port), id, pp_port_mtu(port),
		 (unsigned long)PP_PAGE_SIZE);
	if (strcmp(r, w))
		fprintf(stderr, "%s:\n got  %s\n want %s\n", req, r, w);
	CHECK(!strcmp(r, w));
}

/*
 * Every open port by number, registered or not (DPDK lists every
 * ethdev): null0 (registered, id 0) and a veth pair that is not (ids 1
 * and 2). Traffic on each, then each command's values against the
 * port's own counters; bad and unknown ids get null; closed ports leave
 * the list.
 */
static void test_ethdev(void)
{
	static char r[REPLY_MAX + 1];
	struct pp_port_conf conf = { .sz = sizeof(conf), .nid = PP_NUMA_NODE_ANY,
				     .allocator = net.alloc, .mtu = 9000 };
	struct pp_frame f[32];
	struct pp_port *v0, *v1, *v2;
	unsigned int got, sent;
	char want[128];
	int fd;

	REQUIRE(start("pp-ethdev") == 0);
	fd = client(NULL, 0);
	REQUIRE(fd >= 0);
	CHECK_EQ(pp_port_id(net.port), 0);
	ask(fd, "/ethdev/list", r);
	CHECK(!strcmp(r, "{\"/ethdev/list\":[0]}"));

	v0 = pp_port_open("veth0,peer=veth1", &(struct pp_port_conf){
		.sz = sizeof(conf), .nid = PP_NUMA_NODE_ANY,
		.allocator = net.alloc });
	REQUIRE(v0 != NULL);
	v1 = pp_port_peer(v0);
	CHECK_EQ(pp_port_id(v0), 1);
	CHECK_EQ(pp_port_id(v1), 2);
	ask(fd, "/ethdev/list", r);
	CHECK(!strcmp(r, "{\"/ethdev/list\":[0,1,2]}"));

	/* null0 receives; its frames go out of veth0 into veth1. */
	pp_pool_set_owner(pp_port_rxq_pool(net.port, 0));
	for (int i = 0; i < 5; i++)
		pp_port_poll(net.port, 0, 64);
	got = pp_port_rx_burst(net.port, 0, f, 32);
	CHECK_EQ(got, 32);
	sent = pp_port_tx_burst(v0, 0, f, got);
	CHECK_EQ(sent, 32);
	CHECK_EQ(pp_port_poll(v1, 0, 64), 32);
	for (int i = 0; i < 3; i++)
		check_port_replies(fd, (struct pp_port *[]){ net.port, v0,
							      v1 }[i]);
	/* The values are the port's counters, not constants. */
	ask(fd, "/ethdev/stats,2", r);
	CHECK(starts(r, "{\"/ethdev/stats\":{\"ipackets\":32,\"opackets\":0,"));
	ask(fd, "/ethdev/stats,1", r);
	CHECK(starts(r, "{\"/ethdev/stats\":{\"ipackets\":0,\"opackets\":32,"));

	/* A port with its own MTU says so; frames longer than a page
	 * behind the headroom come in segments: scattered_rx. */
	v2 = pp_port_open("null5", &conf);
	REQUIRE(v2 != NULL);
	CHECK_EQ(pp_port_id(v2), 3);
	ask(fd, "/ethdev/info,3", r);
	CHECK(strstr(r, "\"name\":\"null5\",") != NULL);
	CHECK(strstr(r, "\"mtu\":9000,") != NULL);
	CHECK(strstr(r, "\"scattered_rx\":1,") != NULL);

	/* Unknown or bad ids, and a parameter where none is taken: null,
	 * as from DPDK. */
	static const char *const nulls[][2] = {
		{ "/ethdev/stats,4", "/ethdev/stats" },
		{ "/ethdev/info,1024", "/ethdev/info" },
		{ "/ethdev/xstats,99999999999", "/ethdev/xstats" },
		{ "/ethdev/stats,x", "/ethdev/stats" },
		{ "/ethdev/stats,-1", "/ethdev/stats" },
		{ "/ethdev/stats,1.0", "/ethdev/stats" },
		{ "/ethdev/stats,", "/ethdev/stats" },
		{ "/ethdev/stats", "/ethdev/stats" },
		{ "/ethdev/info", "/ethdev/info" },
		{ "/ethdev/xstats,veth0", "/ethdev/xstats" },
		{ "/ethdev/list,0", "/ethdev/list" },
	};
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++) {
		snprintf(want, sizeof(want), "{\"%s\":null}", nulls[i][1]);
		ask(fd, nulls[i][0], r);
		if (strcmp(r, want))
			fprintf(stderr, "%s: %s, want %s\n", nulls[i][0], r, want);
		CHECK(!strcmp(r, want));
	}
	ask(fd, "/help,/ethdev/stats", r);
	CHECK(!strcmp(r, "{\"/help\":{\"/ethdev/stats\":\"Returns the common stats for a port. Parameters: int port_id\"}}"));

	/* Closed: gone from the list, their numbers unknown. */
	CHECK_EQ(pp_port_close(v0), 0);
	ask(fd, "/ethdev/list", r);
	CHECK(!strcmp(r, "{\"/ethdev/list\":[0,3]}"));
	ask(fd, "/ethdev/stats,1", r);
	CHECK(!strcmp(r, "{\"/ethdev/stats\":null}"));
	ask(fd, "/ethdev/info,2", r);
	CHECK(!strcmp(r, "{\"/ethdev/info\":null}"));
	CHECK_EQ(pp_port_close(v2), 0);
	ask(fd, "/ethdev/list", r);
	CHECK(!strcmp(r, "{\"/ethdev/list\":[0]}"));
	close(fd);
	pp_telemetry_stop();
}

/* ---- a driver's own counters, and a close while they are read ---- */

/*
 * "cnt": a driver made with the SDK (pp_net_driver.h) whose xstats and
 * mac_addr ops read its private state, which remove() frees and clears
 * and then takes a while (as a device's stop does). Telemetry reads a
 * port only while it is listed, from the end of its probe to the start
 * of pp_port_close(), so a request never finds the state gone: without
 * that rule the ops would dereference NULL (or, under ASan, freed
 * memory) in the window the sleep widens.
 */
struct cnt_priv {
	uint64_t value;
	uint8_t mac[6];
};

static int cnt_probe(struct pp_port *port, const struct pp_devargs *da)
{
	struct cnt_priv *c = calloc(1, sizeof(*c));

	(void)da;
	if (!c)
		return -ENOMEM;
	c->value = 42;
	memcpy(c->mac, "\x02\x00\x00\x00\x00\x2a", 6);
	port->priv = c;
	usleep(500);
	return 0;
}

static void cnt_remove(struct pp_port *port)
{
	free(port->priv);
	port->priv = NULL;
	usleep(500);
}

static unsigned int cnt_rx(struct pp_rxq *rxq, struct pp_frame *f,
			   unsigned int n)
{
	(void)rxq, (void)f, (void)n;
	return 0;
}

static unsigned int cnt_tx(struct pp_txq *txq, struct pp_frame *f,
			   unsigned int n)
{
	(void)txq, (void)f, (void)n;
	return 0;
}

static int cnt_xstats(struct pp_port *port, struct pp_net_xstat *out,
		      unsigned int n)
{
	const struct cnt_priv *c = port->priv;
	static const char *const names[3] = {
		"cnt_value",
		"bad name",            /* not [A-Za-z0-9_]: left out */
		"cnt_value_twice",
	};

	for (unsigned int i = 0; i < 3 && i < n; i++) {
		snprintf(out[i].name, sizeof(out[i].name), "%s", names[i]);
		out[i].value = c->value * (i + 1);
	}
	return 3;
}

static int cnt_mac(struct pp_port *port, uint8_t mac[6])
{
	memcpy(mac, ((const struct cnt_priv *)port->priv)->mac, 6);
	return 0;
}

static const char *const cnt_keys[] = { NULL };
static const struct pp_net_driver cnt_driver = {
	.name = "cnt", .keys = cnt_keys, .help = "",
	.ops = { .probe = cnt_probe, .remove = cnt_remove, .rx_burst = cnt_rx,
		 .tx_burst = cnt_tx, .xstats = cnt_xstats,
		 .mac_addr = cnt_mac },
};
static const struct pp_net_driver *const cnt_table[] = { &cnt_driver, NULL };

static atomic_int cnt_stop;
static atomic_int cnt_seen;   /* replies with the driver's counters */

static void *cnt_reader(void *arg)
{
	static char r[REPLY_MAX + 1];
	int fd = client(NULL, 0);

	(void)arg;
	REQUIRE(fd >= 0);
	while (!atomic_load(&cnt_stop)) {
		ask(fd, "/ethdev/xstats,1", r);
		if (strstr(r, "\"cnt_value\":42,\"cnt_value_twice\":126}}"))
			atomic_fetch_add(&cnt_seen, 1);
		else
			CHECK(!strcmp(r, "{\"/ethdev/xstats\":null}"));
		ask(fd, "/ethdev/info,1", r);
		CHECK(strstr(r, "\"mac_addr\":\"02:00:00:00:00:2A\"") ||
		      !strcmp(r, "{\"/ethdev/info\":null}"));
	}
	close(fd);
	return NULL;
}

static void test_driver_xstats(void)
{
	struct pp_port_conf conf = { .sz = sizeof(conf), .nid = PP_NUMA_NODE_ANY,
				     .allocator = net.alloc };
	static char r[REPLY_MAX + 1];
	struct pp_port *p;
	pthread_t t;
	int fd;

	REQUIRE(start("pp-cnt") == 0);
	p = pp_net_port_open_table(cnt_table, "cnt0", &conf);
	REQUIRE(p != NULL);
	CHECK_EQ(pp_port_id(p), 1);
	fd = client(NULL, 0);
	REQUIRE(fd >= 0);
	/* After DPDK's generic names and pagepool's, the driver's. */
	ask(fd, "/ethdev/xstats,1", r);
	CHECK(strstr(r, "\"rx_xdp_redirect\":0,\"cnt_value\":42,"
		      "\"cnt_value_twice\":126}}") != NULL);
	CHECK(strstr(r, "bad name") == NULL);
	ask(fd, "/ethdev/info,1", r);
	CHECK(strstr(r, "\"mac_addr\":\"02:00:00:00:00:2A\",") != NULL);
	close(fd);
	CHECK_EQ(pp_port_close(p), 0);

	atomic_store(&cnt_stop, 0);
	atomic_store(&cnt_seen, 0);
	REQUIRE(pthread_create(&t, NULL, cnt_reader, NULL) == 0);
	for (int i = 0; i < 200; i++) {
		p = pp_net_port_open_table(cnt_table, "cnt0", &conf);
		REQUIRE(p != NULL);
		usleep(200);
		CHECK_EQ(pp_port_close(p), 0);
	}
	atomic_store(&cnt_stop, 1);
	pthread_join(t, NULL);
	printf("     /ethdev/xstats,1 found the driver's counters %d times\n",
	       atomic_load(&cnt_seen));
	CHECK(atomic_load(&cnt_seen) > 0);
	pp_telemetry_stop();
}

/* A socket file at @path, bound and closed (stale) or listening. */
static int plant_socket(const char *path, bool live)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	REQUIRE(fd >= 0);
	REQUIRE(strlen(path) < sizeof(a.sun_path));
	memcpy(a.sun_path, path, strlen(path) + 1);
	REQUIRE(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	if (live) {
		REQUIRE(listen(fd, 1) == 0);
		return fd;
	}
	close(fd);
	return -1;
}

static void mkdirs(const char *prefix, mode_t mode)
{
	char d[256];

	snprintf(d, sizeof(d), "%s/dpdk", rundir);
	mkdir(d, 0700);
	snprintf(d, sizeof(d), "%s/dpdk/%s", rundir, prefix);
	REQUIRE(mkdir(d, mode) == 0);
	REQUIRE(chmod(d, mode) == 0);
}

static void test_security(void)
{
	char d[256], target[256];
	struct stat st;
	int fd;

	pp_test_capture_log();
	/* A dead program's socket is replaced. */
	mkdirs("stale", 0700);
	set_path("stale");
	plant_socket(sockpath, false);
	CHECK_EQ(start("stale"), 0);
	fd = client(NULL, 0);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	pp_telemetry_stop();

	/* A live one is not. */
	mkdirs("live", 0700);
	set_path("live");
	fd = plant_socket(sockpath, true);
	CHECK_EQ(start("live"), -EADDRINUSE);
	close(fd);
	CHECK(lstat(sockpath, &st) == 0);   /* left alone */

	/* A plain file, a symlink at the path: refused, left alone. */
	mkdirs("file", 0700);
	set_path("file");
	fd = open(sockpath, O_CREAT | O_WRONLY, 0600);
	REQUIRE(fd >= 0);
	close(fd);
	CHECK_EQ(start("file"), -EEXIST);
	CHECK(lstat(sockpath, &st) == 0 && S_ISREG(st.st_mode));

	mkdirs("link", 0700);
	set_path("link");
	snprintf(target, sizeof(target), "%s/target", rundir);
	REQUIRE(symlink(target, sockpath) == 0);
	CHECK_EQ(start("link"), -EEXIST);
	CHECK(lstat(target, &st) != 0);

	/* The prefix directory a symlink, or writable by others. */
	snprintf(d, sizeof(d), "%s/dpdk/dirlink", rundir);
	REQUIRE(mkdir(target, 0700) == 0);
	REQUIRE(symlink(target, d) == 0);
	CHECK_EQ(start("dirlink"), -EPERM);
	mkdirs("shared", 0777);
	CHECK_EQ(start("shared"), -EPERM);
	CHECK(pp_test_log_has("refused"));

	/* Too long for a Unix socket address. */
	struct pp_telemetry_opts o = { .sz = sizeof(o), .prefix = "x",
		.runtime_dir = "/tmp/a-very-long-runtime-directory-name-that-goes-on-and-on-and-on-past-the-limit-of-sun-path-xxxxxxxxxx" };
	CHECK_EQ(pp_telemetry_start(&o), -ENAMETOOLONG);
}

/* ---- the server at the process's descriptor limit ---- */

/* The thread of this process that is not the calling one: the server's. */
static pid_t other_thread(void)
{
	DIR *d = opendir("/proc/self/task");
	pid_t self = (pid_t)syscall(SYS_gettid), tid = -1;
	struct dirent *e;

	REQUIRE(d != NULL);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != self)
			tid = atoi(e->d_name);
	closedir(d);
	return tid;
}

/*
 * A thread's time on a CPU and waiting for one, in ns, from an open
 * /proc/self/task/TID/schedstat (pread: read again from the start, no
 * new descriptor). A thread that never blocks is always one or the
 * other, however loaded the machine; one asleep in poll() is neither.
 */
static bool sched_times(int fd, unsigned long long *run,
			unsigned long long *wait)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return sscanf(buf, "%llu %llu", run, wait) == 2;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

#define FD_LIMIT_WINDOW_S 2.0

/*
 * The child: a server, then every descriptor up to a lowered
 * RLIMIT_NOFILE taken; tells the parent (@ready), which connects and
 * says so (@go); then the server thread's time over the window. Exit
 * status 0 when the thread was runnable under a tenth of it.
 */
static int fd_limit_child(int ready, int go)
{
	unsigned long long run0, wait0, run1, wait1;
	struct rlimit rl;
	char path[64], c;
	double t0, t1, busy;
	int statfd, ok;
	pid_t tid;

	pp_test_capture_log();
	if (start("pp-fdlimit"))
		return 2;
	tid = other_thread();
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	statfd = open(path, O_RDONLY | O_CLOEXEC);
	if (tid < 0 || statfd < 0) {
		pp_telemetry_stop();
		return 77;   /* the parent says so */
	}
	/* Every descriptor below the limit taken: accept() gets EMFILE. */
	REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	rl.rlim_cur = 64;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	while (dup(statfd) >= 0)
		;
	if (errno != EMFILE)
		return 3;
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 4;

	t0 = now_s();
	ok = sched_times(statfd, &run0, &wait0);
	usleep((useconds_t)(FD_LIMIT_WINDOW_S * 1e6));
	ok = ok && sched_times(statfd, &run1, &wait1);
	t1 = now_s();
	if (!ok)
		return 5;
	busy = (double)(run1 - run0 + wait1 - wait0) / 1e9;
	printf("     server thread over %.2f s at the descriptor limit: %.3f s on a CPU, %.3f s runnable\n",
	       t1 - t0, (double)(run1 - run0) / 1e9, busy);
	fflush(stdout);
	pp_telemetry_stop();
	/* Said once, with what to do. */
	CHECK(pp_test_log_has("ulimit -n"));
	return busy < 0.1 * (t1 - t0) ? 0 : 1;
}

/*
 * accept() failing for want of descriptors leaves the connection
 * queued: the server must neither spin on the listener nor leave the
 * client waiting for a greeting that never comes.
 */
static void test_fd_limit(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 3 };
	int ready[2], go[2], st, fd;
	char c, buf[256];
	ssize_t n;
	pid_t pid;

	REQUIRE(pipe(ready) == 0 && pipe(go) == 0);
	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		st = fd_limit_child(ready[1], go[0]);
		fflush(stdout);
		_exit(st ? st : pp_test_failures ? 6 : 0);
	}
	close(ready[1]);
	close(go[0]);
	REQUIRE(read(ready[0], &c, 1) == 1);

	/* The parent is not at the limit: its client connects (queued). */
	set_path("pp-fdlimit");
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	REQUIRE(fd >= 0);
	memcpy(a.sun_path, sockpath, sizeof(a.sun_path));
	CHECK_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	REQUIRE(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
	REQUIRE(write(go[1], "g", 1) == 1);

	/* Told at once: an error, then the end; never a silent wait. */
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		fprintf(stderr, "client at the limit: %s\n", strerror(errno));
	CHECK(n >= 0);
	if (n > 0) {
		buf[n] = '\0';
		CHECK(starts(buf, "{\"error\":\""));
		CHECK_EQ(recv(fd, buf, sizeof(buf), 0), 0);
	}
	close(fd);

	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		pp_test_skip_part("fd limit", "no schedstat for the server thread");
	else
		CHECK_EQ(WEXITSTATUS(st), 0);
	close(ready[0]);
	close(go[1]);
}

/* ---- objects destroyed while registered ---- */

static struct {
	atomic_int stop;
	atomic_int replies;        /* rounds of the three requests */
	atomic_int seen[4];        /* the last round's answer: 1 known, 0 not */
} hammer;

/* null9 is port 1 (null0 is 0): /ethdev/xstats reads it, and its
 * driver's xstats op, by number while it closes. */
static const char *const doomed_req[4] = {
	"/pagepool/allocator,doomed", "/pagepool/pool,doomed",
	"/pagepool/port,null9", "/ethdev/xstats,1",
};

static void *hammer_main(void *arg)
{
	static char r[REPLY_MAX + 1];
	int fd = client(NULL, 0);

	(void)arg;
	REQUIRE(fd >= 0);
	while (!atomic_load(&hammer.stop)) {
		for (int i = 0; i < 4; i++) {
			ask(fd, doomed_req[i], r);
			/* Known: its statistics; unknown: null. */
			atomic_store(&hammer.seen[i], !strstr(r, ":null}"));
		}
		atomic_fetch_add(&hammer.replies, 1);
	}
	close(fd);
	return NULL;
}

/* Let the client finish @n more rounds (their requests meet the next
 * step); false after 10 s without them. */
static bool hammer_rounds(int n)
{
	int want = atomic_load(&hammer.replies) + n;

	for (int i = 0; i < 10000; i++) {
		if (atomic_load(&hammer.replies) >= want)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * DPDK's telemetry cannot reach a destroyed object, and neither may
 * ours: pp_pool_destroy(), pp_port_close() and pp_allocator_destroy()
 * take the object out of the registry before they free it. Nothing here
 * unregisters.
 */
static void test_destroy_registered(void)
{
	struct pp_port_conf conf = { .sz = sizeof(conf),
				     .nid = PP_NUMA_NODE_ANY };
	struct pp_arena *arena = pp_test_arena(8 << 20, PP_PAGE_SIZE_4K);
	struct pp_allocator *alloc = pp_test_allocator(arena);
	struct pp_pool_params pp = { .sz = sizeof(pp), .allocator = alloc,
				     .nid = PP_NUMA_NODE_ANY,
				     .name = "doomed" };
	struct pp_pool *pool = pp_pool_create(&pp);
	struct pp_port *port;
	pthread_t t;

	REQUIRE(pool != NULL);
	conf.allocator = alloc;
	port = pp_port_open("null9", &conf);
	REQUIRE(port != NULL);
	CHECK_EQ(pp_telemetry_register_allocator(alloc, "doomed"), 0);
	CHECK_EQ(pp_telemetry_register_pool(pool, "doomed"), 0);
	CHECK_EQ(pp_telemetry_register_port(port, NULL), 0);
	REQUIRE(start("pp-destroy") == 0);
	atomic_store(&hammer.stop, 0);
	atomic_store(&hammer.replies, 0);
	REQUIRE(pthread_create(&t, NULL, hammer_main, NULL) == 0);

	CHECK_EQ(pp_port_id(port), 1);
	CHECK(hammer_rounds(20));
	for (int i = 0; i < 4; i++)
		CHECK_EQ(atomic_load(&hammer.seen[i]), 1);
	CHECK_EQ(pp_pool_destroy(pool), 0);
	CHECK(hammer_rounds(20));
	CHECK_EQ(atomic_load(&hammer.seen[1]), 0);   /* the pool: unknown */
	CHECK_EQ(atomic_load(&hammer.seen[2]), 1);
	CHECK_EQ(pp_port_close(port), 0);
	CHECK(hammer_rounds(20));
	CHECK_EQ(atomic_load(&hammer.seen[2]), 0);   /* the port */
	CHECK_EQ(atomic_load(&hammer.seen[3]), 0);   /* by number too */
	CHECK_EQ(atomic_load(&hammer.seen[0]), 1);
	pp_allocator_drain_thread(alloc);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK(hammer_rounds(20));
	CHECK_EQ(atomic_load(&hammer.seen[0]), 0);   /* the allocator */

	atomic_store(&hammer.stop, 1);
	pthread_join(t, NULL);
	pp_telemetry_stop();
	CHECK_EQ(pp_arena_destroy(arena), 0);
	/* Nothing left to unregister: destroy did it. */
	CHECK_EQ(pp_telemetry_unregister(pool), 0);
	CHECK_EQ(pp_telemetry_unregister(port), 0);
	CHECK_EQ(pp_telemetry_unregister(alloc), 0);
}

/*
 * A null port @dev of its own on the shared allocator, its pool
 * registered as @pool_name, a server started on @prefix and a client
 * connected to it (*@fd). For the /pagepool/inflight tests.
 */
static struct pp_port *inflight_setup(const char *dev, const char *pool_name,
				      const char *prefix, int *fd)
{
	struct pp_port_conf conf = { .sz = sizeof(conf), .allocator = net.alloc,
				     .nid = PP_NUMA_NODE_ANY };
	struct pp_port *port = pp_port_open(dev, &conf);

	REQUIRE(port != NULL);
	CHECK_EQ(pp_telemetry_register_pool(pp_port_rxq_pool(port, 0),
					    pool_name),
		 0);
	REQUIRE(start(prefix) == 0);
	*fd = client(NULL, 0);
	REQUIRE(*fd >= 0);
	return port;
}

/*
 * /pagepool/inflight: frames an application holds, by holder and age;
 * after their port closes, the destroyed pool with its detach time and
 * the same holder, until the frames come back.
 */
static void test_inflight(void)
{
	static char r[REPLY_MAX + 1];
	struct pp_frame f[3] = { 0 };
	char want[256];
	int fd;
	struct pp_port *port = inflight_setup("null5", "held", "pp-inflight",
					      &fd);

	CHECK_EQ(pp_port_rx_burst(port, 0, f, 3), 3);

	ask(fd, "/pagepool/inflight,held", r);
	snprintf(want, sizeof(want),
		 "{\"/pagepool/inflight\":{\"name\":\"held\",\"state\":\"live\",\"detach_time\":0,\"inflight\":3,\"inflight_mem\":12288,");
	CHECK(starts(r, want));
	snprintf(want, sizeof(want),
		 "\"holders\":[{\"holder\":\"app_rx\",\"port\":\"null5\",\"port_id\":%u,\"port_open\":true,\"queue\":0,\"pages\":3,\"bytes\":12288,\"oldest_ms\":",
		 pp_port_id(port));
	CHECK(strstr(r, want) != NULL);
	CHECK(strstr(r, "\"age\":{\"under_1ms\":") != NULL);
	CHECK(strstr(r, "\"oldest\":{\"holder\":\"app_rx\"") != NULL);
	ask(fd, "/pagepool/inflight,nosuchpool", r);
	CHECK(!strcmp(r, "{\"/pagepool/inflight\":null}"));
	ask(fd, "/pagepool/inflight", r);
	CHECK(starts(r, "{\"/pagepool/inflight\":{\"tsc_hz\":"));
	CHECK(strstr(r, "\"name\":\"held\"") != NULL);
	CHECK(num_after(strstr(r, "\"total\""), "pages") >= 3);

	/* Closed with the frames out: listed by its own name, destroyed. */
	CHECK_EQ(pp_port_close(port), -EBUSY);
	ask(fd, "/pagepool/inflight", r);
	CHECK(strstr(r, "\"name\":\"held\"") == NULL);
	CHECK(strstr(r, "{\"name\":\"null5-rx0\",\"state\":\"destroyed\",\"detach_time\":") != NULL);
	CHECK(num_after(strstr(r, "null5-rx0"), "detach_time") > 1700000000ULL);
	CHECK(strstr(r, "\"port\":\"null5\",\"port_id\":") != NULL);
	CHECK(strstr(r, "\"port_open\":false") != NULL);
	ask(fd, "/pagepool/inflight,null5-rx0", r);
	CHECK(starts(r, "{\"/pagepool/inflight\":{\"name\":\"null5-rx0\",\"state\":\"destroyed\""));

	/* Back: the pool is freed and gone. */
	pp_frame_put_bulk(net.alloc, f, 3);
	ask(fd, "/pagepool/inflight,null5-rx0", r);
	CHECK(!strcmp(r, "{\"/pagepool/inflight\":null}"));
	ask(fd, "/pagepool/inflight", r);
	CHECK(strstr(r, "null5-rx0") == NULL);
	close(fd);
	pp_telemetry_stop();
}

/*
 * The walk races the data path (TSan): a thread receives and returns
 * frames on a port while the server walks its pool's pages.
 */
static atomic_int busy_stop;

static void *busy_port(void *arg)
{
	struct pp_port *port = arg;
	struct pp_pool *pool = pp_port_rxq_pool(port, 0);
	struct pp_frame f[PP_NET_BURST];

	pp_pool_set_owner(pool);
	while (!atomic_load(&busy_stop)) {
		unsigned int n = pp_port_rx_burst(port, 0, f, PP_NET_BURST);

		for (unsigned int i = 0; i < n; i++)
			pp_pool_recycle_direct(pool, f[i].page);
	}
	return NULL;
}

static void test_inflight_busy(void)
{
	static char r[REPLY_MAX + 1];
	pthread_t t;
	int fd;
	struct pp_port *port = inflight_setup("null6", "busy",
					      "pp-inflight-busy", &fd);

	atomic_store(&busy_stop, 0);
	REQUIRE(pthread_create(&t, NULL, busy_port, port) == 0);
	for (int i = 0; i < 50; i++) {
		ask(fd, "/pagepool/inflight,busy", r);
		CHECK(starts(r, "{\"/pagepool/inflight\":{\"name\":\"busy\""));
		/* A burst is out at any moment; the walk is not one
		 * moment, so a page may be seen out of two bursts. The
		 * cache's pages are not in flight. */
		CHECK(num_after(r, "inflight") <= 2 * PP_NET_BURST);
	}
	atomic_store(&busy_stop, 1);
	pthread_join(t, NULL);
	close(fd);
	pp_telemetry_stop();
	pp_pool_set_owner(pp_port_rxq_pool(port, 0));
	CHECK_EQ(pp_port_close(port), 0);
}

/* Clients query while another thread registers and unregisters. */
static atomic_int churn_stop;

static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&churn_stop)) {
		pp_telemetry_unregister(net.port);
		pp_telemetry_register_port(net.port, NULL);
	}
	return NULL;
}

static void *querier(void *arg)
{
	static _Thread_local char r[REPLY_MAX + 1];
	int fd = client(NULL, 0);

	(void)arg;
	REQUIRE(fd >= 0);
	for (int i = 0; i < 200; i++) {
		ask(fd, i & 1 ? "/pagepool/port,null0" : "/pagepool/ports", r);
		CHECK(starts(r, "{\"/pagepool/port"));
		ask(fd, "/pagepool/allocator,main", r);
		CHECK(strstr(r, "zones") != NULL);
		ask(fd, "/ethdev/stats,0", r);
		CHECK(starts(r, "{\"/ethdev/stats\":{\"ipackets\":"));
	}
	close(fd);
	return NULL;
}

static void test_threads(void)
{
	pthread_t t[4];

	REQUIRE(start("pp-threads") == 0);
	atomic_store(&churn_stop, 0);
	REQUIRE(pthread_create(&t[0], NULL, churn, NULL) == 0);
	for (int i = 1; i < 4; i++)
		REQUIRE(pthread_create(&t[i], NULL, querier, NULL) == 0);
	for (int i = 1; i < 4; i++)
		pthread_join(t[i], NULL);
	atomic_store(&churn_stop, 1);
	pthread_join(t[0], NULL);
	pp_telemetry_stop();
	/* Stop and start again, with a client still connected at stop. */
	REQUIRE(start("pp-threads") == 0);
	int fd = client(NULL, 0);
	CHECK(fd >= 0);
	pp_telemetry_stop();
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	snprintf(rundir, sizeof(rundir), "/tmp/pp-telemetry-XXXXXX");
	REQUIRE(mkdtemp(rundir) != NULL);
	net_open();
	RUN_TEST(test_registry);
	RUN_TEST(test_start_refused);
	RUN_TEST(test_socket_path);
	RUN_TEST(test_commands);
	RUN_TEST(test_ethdev);
	RUN_TEST(test_driver_xstats);
	RUN_TEST(test_security);
	RUN_TEST(test_fd_limit);
	RUN_TEST(test_destroy_registered);
	RUN_TEST(test_inflight);
	RUN_TEST(test_inflight_busy);
	RUN_TEST(test_threads);
	pp_telemetry_unregister(net.alloc);
	pp_telemetry_unregister(pp_port_rxq_pool(net.port, 0));
	pp_telemetry_unregister(net.port);
	net_close();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rundir);
		CHECK_EQ(system(cmd), 0);
	}
	return pp_test_result();
}
