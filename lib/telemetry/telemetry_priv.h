/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry_priv.h - the request handler (telemetry_cmd.c), which knows
 * nothing of sockets, for the server (telemetry_sock.c) and the fuzz
 * target.
 */
#ifndef PP_TELEMETRY_PRIV_H
#define PP_TELEMETRY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_telemetry.h>

/* The longest request taken (DPDK reads 1024 bytes), and a command. */
#define TELEMETRY_MAX_REQUEST 1024
#define TELEMETRY_MAX_CMD 56
/* The longest reply, announced in the greeting as max_output_len. */
#define TELEMETRY_MAX_OUTPUT 65536
/* A reply buffer must hold at least the error replies. */
#define TELEMETRY_MIN_OUTPUT 128
/* Objects of all kinds together. */
#define TELEMETRY_MAX_OBJECTS 256

/*
 * telemetry_handle - answer one request of @len bytes (any bytes: it need
 * not be NUL-terminated) into @out, @outlen >= TELEMETRY_MIN_OUTPUT.
 * The reply is one JSON object, NUL-terminated; returns its length.
 * Takes the registry's lock while it reads the objects.
 */
size_t telemetry_handle(const char *req, size_t len, char *out,
			size_t outlen);

/* telemetry_greeting - the object sent on connect (also /info's). */
size_t telemetry_greeting(char *out, size_t outlen);

/*
 * DPDK's /ethdev commands (telemetry_ethdev.c), for telemetry_cmd.c's
 * table: each writes its data into @o and returns 0, or -errno for a
 * bad or unknown port id (the reply is then {"<cmd>":null}).
 */
struct pp_strbuf;
int telemetry_ethdev_list(struct pp_strbuf *o, const char *param);
int telemetry_ethdev_info(struct pp_strbuf *o, const char *param);
int telemetry_ethdev_stats(struct pp_strbuf *o, const char *param);
int telemetry_ethdev_xstats(struct pp_strbuf *o, const char *param);

/* telemetry_valid_name - a prefix or registered name: 1 or 0. */
int telemetry_valid_name(const char *s);

/*
 * telemetry_inflight.c: the pieces of /pagepool/inflight's reply. A pool
 * object (destroyed: @detach_time non-zero) added to @total (may be
 * NULL); the detached pools', each after a ',' unless *@first; one
 * detached pool by its own name (false when there is none); the totals;
 * the TSC's rate the ages are measured with.
 */
struct pp_pool;
struct pp_strbuf;

struct telemetry_inflight_total {
	uint64_t pages;
	uint64_t bytes;
};

void telemetry_inflight_pool(struct pp_strbuf *o, struct pp_pool *pool,
			     const char *name, int64_t detach_time,
			     struct telemetry_inflight_total *total);
void telemetry_inflight_detached(struct pp_strbuf *o, bool *first,
				 struct telemetry_inflight_total *total);
bool telemetry_inflight_detached_one(struct pp_strbuf *o, const char *name);
void telemetry_inflight_total(struct pp_strbuf *o,
			      const struct telemetry_inflight_total *total);
double telemetry_inflight_tsc_hz(void);

#endif /* PP_TELEMETRY_PRIV_H */
