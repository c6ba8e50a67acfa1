/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry_cmd.c - the registry of reported objects and the request
 * handler: parse "/command[,param]", run the command, write the reply
 * {"<command>": <data>}.
 *
 * A request is taken only when it is made of the characters commands and
 * names use: '/' first, then [A-Za-z0-9_/] up to an optional ',' and a
 * parameter of [A-Za-z0-9_.:/-]. Everything the reply echoes passes that
 * check, so it needs no escaping. A well-formed request for an unknown
 * command, or with a missing, unexpected or unknown parameter, gets
 * {"<command>":null} as from DPDK; anything else {"error":"..."}.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pagepool/pp_config.h>
#include <pagepool/pp_net.h>
#include <pagepool/pp_page.h>
#include <pagepool/pp_page_pool.h>

#include "pp_log.h"
#include "pp_pool_json.h"
#include "pp_port_json.h"
#include "pp_strbuf.h"
#include "pp_unregister.h"
#include "telemetry_priv.h"

enum kind { K_ALLOCATOR, K_POOL, K_PORT, NR_KINDS };

static const char *const kind_names[NR_KINDS] = { "allocator", "pool",
						  "port" };

struct entry {
	const void *obj;   /* NULL: free slot */
	enum kind kind;
	char name[PP_TELEMETRY_NAME_MAX + 1];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry reg[TELEMETRY_MAX_OBJECTS];

/* ---- names and the registry ---- */

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
	       c == ':';
}

int telemetry_valid_name(const char *s)
{
	size_t n;

	if (!s)
		return 0;
	n = strnlen(s, PP_TELEMETRY_NAME_MAX + 1);
	if (n == 0 || n > PP_TELEMETRY_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return 0;
	return 1;
}

static int reg_add(enum kind kind, const void *obj, const char *name)
{
	struct entry *slot = NULL;
	int ret = 0;

	if (!obj || !telemetry_valid_name(name)) {
		PP_ERR("telemetry: cannot register %s '%s': a name is 1 to %d of letters, digits, '_', '-', '.', ':'",
		       kind_names[kind], name ? name : "(null)",
		       PP_TELEMETRY_NAME_MAX);
		return -EINVAL;
	}
	/*
	 * Destroying a registered object unregisters it (pp_unregister.h):
	 * the hook is in place before the object can be found.
	 */
	pp_unregister_hook_set(pp_telemetry_unregister);
	pthread_mutex_lock(&reg_lock);
	for (unsigned int i = 0; i < TELEMETRY_MAX_OBJECTS; i++) {
		struct entry *e = &reg[i];

		if (!e->obj) {
			if (!slot)
				slot = e;
			continue;
		}
		if (e->kind == kind &&
		    (e->obj == obj || !strcmp(e->name, name))) {
			ret = -EEXIST;
			break;
		}
	}
	if (!ret && !slot)
		ret = -ENOSPC;
	if (!ret) {
		slot->kind = kind;
		snprintf(slot->name, sizeof(slot->name), "%s", name);
		slot->obj = obj;
	}
	pthread_mutex_unlock(&reg_lock);
	if (ret)
		PP_ERR("telemetry: cannot register %s '%s': %s",
		       kind_names[kind], name,
		       ret == -EEXIST ? "the name or the object is registered already" :
				       "the registry is full");
	return ret;
}

int pp_telemetry_register_allocator(struct pp_allocator *alloc,
				    const char *name)
{
	return reg_add(K_ALLOCATOR, alloc, name);
}

int pp_telemetry_register_pool(struct pp_pool *pool, const char *name)
{
	return reg_add(K_POOL, pool, name);
}

int pp_telemetry_register_port(struct pp_port *port, const char *name)
{
	if (port && !name)
		name = pp_port_name(port);
	return reg_add(K_PORT, port, name);
}

int pp_telemetry_unregister(const void *obj)
{
	int n = 0;

	if (!obj)
		return 0;
	pthread_mutex_lock(&reg_lock);
	for (unsigned int i = 0; i < TELEMETRY_MAX_OBJECTS; i++) {
		if (reg[i].obj == obj) {
			reg[i].obj = NULL;
			n++;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return n;
}

/* Under reg_lock. */
static const struct entry *reg_find(enum kind kind, const char *name)
{
	for (unsigned int i = 0; i < TELEMETRY_MAX_OBJECTS; i++)
		if (reg[i].obj && reg[i].kind == kind &&
		    !strcmp(reg[i].name, name))
			return &reg[i];
	return NULL;
}

/* ---- the commands (replies go into a pp_strbuf) ---- */

struct cmd {
	const char *name;
	const char *help;
	bool param;        /* a parameter is required (else refused) */
	int (*fn)(struct pp_strbuf *o, const char *param);
	bool param_opt;    /* without param: one is taken, not required */
};

static int cmd_list(struct pp_strbuf *o, const char *param);
static int cmd_help(struct pp_strbuf *o, const char *param);
static int cmd_info(struct pp_strbuf *o, const char *param);
static int cmd_allocators(struct pp_strbuf *o, const char *param);
static int cmd_allocator(struct pp_strbuf *o, const char *param);
static int cmd_pools(struct pp_strbuf *o, const char *param);
static int cmd_pool(struct pp_strbuf *o, const char *param);
static int cmd_ports(struct pp_strbuf *o, const char *param);
static int cmd_port(struct pp_strbuf *o, const char *param);
static int cmd_inflight(struct pp_strbuf *o, const char *param);

static const struct cmd cmds[] = {
	{ "/", "Returns list of available commands, Takes no parameters",
	  false, cmd_list },
	{ "/help", "Returns help text for a command. Parameters: string command",
	  true, cmd_help },
	{ "/info", "Returns pagepool's version, the pid and max_output_len. Takes no parameters",
	  false, cmd_info },
	/* DPDK's own help texts, as DPDK 22.11 gives them. */
	{ "/ethdev/list", "Returns list of available ethdev ports. Takes no parameters",
	  false, telemetry_ethdev_list },
	{ "/ethdev/info", "Returns the device info for a port. Parameters: int port_id",
	  true, telemetry_ethdev_info },
	{ "/ethdev/stats", "Returns the common stats for a port. Parameters: int port_id",
	  true, telemetry_ethdev_stats },
	{ "/ethdev/xstats", "Returns the extended stats for a port. Parameters: int port_id",
	  true, telemetry_ethdev_xstats },
	{ "/pagepool/allocators", "Returns the names of the registered allocators. Takes no parameters",
	  false, cmd_allocators },
	{ "/pagepool/allocator", "Returns an allocator's zones: pages managed, free, cached in threads, and counters. Parameters: string name",
	  true, cmd_allocator },
	{ "/pagepool/pools", "Returns the names of the registered page_pools. Takes no parameters",
	  false, cmd_pools },
	{ "/pagepool/pool", "Returns a page_pool's statistics, with the kernel's names. Parameters: string name",
	  true, cmd_pool },
	{ "/pagepool/ports", "Returns the names of the registered ports. Takes no parameters",
	  false, cmd_ports },
	{ "/pagepool/port", "Returns a port's per-queue RX and TX statistics, with each RX queue's pool. Parameters: string name",
	  true, cmd_port },
	{ "/pagepool/inflight", "Returns where the pages of every registered page_pool (and of those destroyed with pages out) are: pages and bytes by holder, an age histogram, the oldest page. Parameters: string name (optional: one pool)",
	  false, cmd_inflight, true },
};
#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct cmd *cmd_find(const char *name)
{
	for (size_t i = 0; i < NR_CMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static int cmd_list(struct pp_strbuf *o, const char *param)
{
	(void)param;
	pp_strbuf_printf(o, "[");
	for (size_t i = 0; i < NR_CMDS; i++)
		pp_strbuf_printf(o, "%s\"%s\"", i ? "," : "", cmds[i].name);
	pp_strbuf_printf(o, "]");
	return 0;
}

static int cmd_help(struct pp_strbuf *o, const char *param)
{
	const struct cmd *c = cmd_find(param);

	if (!c)
		return -EINVAL;
	pp_strbuf_printf(o, "{\"%s\":\"%s\"}", c->name, c->help);
	return 0;
}

static int cmd_info(struct pp_strbuf *o, const char *param)
{
	(void)param;
	pp_strbuf_printf(o, "{\"version\":\"pagepool %s\",\"pid\":%ld,"
		   "\"max_output_len\":%d}", PP_VERSION, (long)getpid(),
		   TELEMETRY_MAX_OUTPUT);
	return 0;
}

/* Under reg_lock. */
static int list_kind(struct pp_strbuf *o, enum kind kind)
{
	bool first = true;

	pp_strbuf_printf(o, "[");
	for (unsigned int i = 0; i < TELEMETRY_MAX_OBJECTS; i++) {
		if (!reg[i].obj || reg[i].kind != kind)
			continue;
		pp_strbuf_printf(o, "%s\"%s\"", first ? "" : ",", reg[i].name);
		first = false;
	}
	pp_strbuf_printf(o, "]");
	return 0;
}

static int cmd_allocators(struct pp_strbuf *o, const char *param)
{
	(void)param;
	return list_kind(o, K_ALLOCATOR);
}

static int cmd_pools(struct pp_strbuf *o, const char *param)
{
	(void)param;
	return list_kind(o, K_POOL);
}

static int cmd_ports(struct pp_strbuf *o, const char *param)
{
	(void)param;
	return list_kind(o, K_PORT);
}

/*
 * The object's JSON from its stats call; the objects are live while
 * registered, and reg_lock is held. A pool's or port's reply carries the
 * name it was asked by, as DPDK's /mempool/info,NAME does: fwd registers
 * null0's first RX pool as "null0-rxq0", while the pool calls itself
 * "null0-rx0", a name no request finds.
 */
static int cmd_allocator(struct pp_strbuf *o, const char *param)
{
	const struct entry *e = reg_find(K_ALLOCATOR, param);
	size_t room;
	char *p;

	if (!e)
		return -ENOENT;
	p = pp_strbuf_tail(o, &room);
	pp_strbuf_advance(o, pp_allocator_stats_json((struct pp_allocator *)e->obj,
					    p, room));
	return 0;
}

static int cmd_pool(struct pp_strbuf *o, const char *param)
{
	const struct entry *e = reg_find(K_POOL, param);
	size_t room;
	char *p;

	if (!e)
		return -ENOENT;
	p = pp_strbuf_tail(o, &room);
	pp_strbuf_advance(o, pp_pool_stats_json_as((struct pp_pool *)e->obj,
						   e->name, p, room));
	return 0;
}

static int cmd_port(struct pp_strbuf *o, const char *param)
{
	const struct entry *e = reg_find(K_PORT, param);
	size_t room;
	char *p;

	if (!e)
		return -ENOENT;
	p = pp_strbuf_tail(o, &room);
	pp_strbuf_advance(o, pp_port_stats_json_as((const struct pp_port *)e->obj,
						   e->name, p, room));
	return 0;
}

/*
 * /pagepool/inflight: every registered pool, then every destroyed one
 * still waiting for pages; with a name, the registered pool of that name,
 * else the destroyed pool of that own name.
 */
static int cmd_inflight(struct pp_strbuf *o, const char *param)
{
	struct telemetry_inflight_total total = { 0 };
	bool first = true;

	if (param && param[0]) {
		const struct entry *e = reg_find(K_POOL, param);

		if (e) {
			telemetry_inflight_pool(o, (struct pp_pool *)e->obj,
						e->name, 0, NULL);
			return 0;
		}
		return telemetry_inflight_detached_one(o, param) ? 0 : -ENOENT;
	}
	pp_strbuf_printf(o, "{\"tsc_hz\":%.0f,\"pools\":[",
			 telemetry_inflight_tsc_hz());
	for (unsigned int i = 0; i < TELEMETRY_MAX_OBJECTS; i++) {
		if (!reg[i].obj || reg[i].kind != K_POOL)
			continue;
		pp_strbuf_printf(o, "%s", first ? "" : ",");
		first = false;
		telemetry_inflight_pool(o, (struct pp_pool *)reg[i].obj,
					reg[i].name, 0, &total);
	}
	telemetry_inflight_detached(o, &first, &total);
	pp_strbuf_printf(o, "],");
	telemetry_inflight_total(o, &total);
	pp_strbuf_printf(o, "}");
	return 0;
}

/* ---- the request ---- */

static bool cmd_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '/';
}

static bool param_char(char c)
{
	return name_char(c) || c == '/';
}

static size_t reply_error(char *out, size_t outlen, const char *why)
{
	int n = snprintf(out, outlen, "{\"error\":\"%s\"}", why);

	return n > 0 && (size_t)n < outlen ? (size_t)n : 0;
}

static size_t reply_null(char *out, size_t outlen, const char *cmd)
{
	int n = snprintf(out, outlen, "{\"%s\":null}", cmd);

	return n > 0 && (size_t)n < outlen ? (size_t)n : 0;
}

size_t telemetry_greeting(char *out, size_t outlen)
{
	struct pp_strbuf o = { out, outlen, 0 };

	cmd_info(&o, NULL);
	if (o.pos >= outlen)
		return reply_error(out, outlen, "reply too long");
	return o.pos;
}

size_t telemetry_handle(const char *req, size_t len, char *out,
			size_t outlen)
{
	char cmd[TELEMETRY_MAX_CMD + 1];
	char param[TELEMETRY_MAX_REQUEST + 1];
	size_t i, nc, np = 0;
	const struct cmd *c;
	bool has_param = false;
	struct pp_strbuf o = { out, outlen, 0 };
	int ret;

	if (!out || outlen < TELEMETRY_MIN_OUTPUT)
		return 0;
	if (!req || len == 0)
		return reply_error(out, outlen, "empty request");
	if (len > TELEMETRY_MAX_REQUEST)
		return reply_error(out, outlen, "request too long");
	if (req[0] != '/')
		return reply_error(out, outlen, "a request starts with '/'");
	for (i = 0; i < len && req[i] != ','; i++) {
		if (!cmd_char(req[i]))
			return reply_error(out, outlen,
					   "bad character in the command");
		if (i >= TELEMETRY_MAX_CMD)
			return reply_error(out, outlen, "command too long");
	}
	nc = i;
	memcpy(cmd, req, nc);
	cmd[nc] = '\0';
	if (i < len) {
		has_param = true;
		for (i++; i < len; i++) {
			if (!param_char(req[i]))
				return reply_error(out, outlen,
						   "bad character in the parameter");
			param[np++] = req[i];
		}
	}
	param[np] = '\0';

	c = cmd_find(cmd);
	if (!c || (c->param && !np) ||
	    (!c->param && !c->param_opt && has_param))
		return reply_null(out, outlen, cmd);

	pp_strbuf_printf(&o, "{\"%s\":", cmd);
	pthread_mutex_lock(&reg_lock);
	ret = c->fn(&o, param);
	pthread_mutex_unlock(&reg_lock);
	pp_strbuf_printf(&o, "}");
	if (ret || o.pos >= outlen)
		return reply_null(out, outlen, cmd);
	return o.pos;
}
