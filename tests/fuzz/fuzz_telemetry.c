/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_telemetry.c - lib/telemetry's request parser and dispatcher, on
 * the socket's side of it (telemetry_handle(): bytes in, one reply out),
 * with an allocator, a null port and its pool registered:
 *
 *  - every reply is one JSON object (checked by a strict parser here)
 *    with one key, NUL-terminated inside the buffer, whatever the buffer's
 *    size (the smallest the handler takes up to the server's);
 *  - the key is "error" exactly when the request is malformed by the
 *    rule this file writes again (a '/', [A-Za-z0-9_/] up to 56 bytes, an
 *    optional ',' and [A-Za-z0-9_.:/-]); otherwise it is the command.
 *
 * Input: byte 0 is a set of flags (bit 0: the port receives a burst
 * first, so that counters move; bit 1: the port is unregistered for this
 * input; bits 2-3: the reply buffer's size), the rest requests separated
 * by '\n' (any other byte, NUL included, is part of a request).
 */
#include <ctype.h>
#include <stdbool.h>

#include <pagepool/pp_drivers.h>

#include "fuzz_common.h"
#include "telemetry/telemetry_priv.h" /* lib/telemetry: the handler */

#define FUZZ_ARENA_BYTES (512u << 10)
#define MAX_REQUESTS 16

/* ---- a strict JSON parser: returns the end of a value, or NULL ---- */

static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;   /* the end, or a control character */
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return NULL;
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *json_number(const char *p)
{
	const char *start;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (isdigit((unsigned char)*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		start = ++p;
		while (isdigit((unsigned char)*p))
			p++;
		if (p == start)
			return NULL;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		start = p;
		while (isdigit((unsigned char)*p))
			p++;
		if (p == start)
			return NULL;
	}
	return p;
}

static const char *json_members(const char *p, int depth, char close,
				bool keys)
{
	p = json_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (keys) {
			p = json_string(p);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = json_value(p, depth + 1);
		if (!p)
			return NULL;
		p = json_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p, int depth)
{
	if (depth > 16)
		return NULL;
	p = json_ws(p);
	switch (*p) {
	case '{':
		return json_members(p, depth, '}', true);
	case '[':
		return json_members(p, depth, ']', false);
	case '"':
		return json_string(p);
	case 't':
		return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f':
		return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n':
		return strncmp(p, "null", 4) ? NULL : p + 4;
	default:
		return json_number(p);
	}
}

/* ---- the request rule, written again ---- */

static bool well_formed(const char *r, size_t len, size_t *cmd_len)
{
	size_t i;

	if (len == 0 || len > TELEMETRY_MAX_REQUEST || r[0] != '/')
		return false;
	for (i = 0; i < len && r[i] != ','; i++)
		if (i >= TELEMETRY_MAX_CMD ||
		    !(isalnum((unsigned char)r[i]) || r[i] == '_' || r[i] == '/'))
			return false;
	*cmd_len = i;
	for (i++; i < len; i++)
		if (!(isalnum((unsigned char)r[i]) || strchr("_.:/-", r[i])) ||
		    !r[i])
			return false;
	return true;
}

static void check_reply(const char *req, size_t len, const char *out,
			size_t n, size_t outlen)
{
	const char *key, *end;
	size_t cmd_len = 0;
	bool ok = well_formed(req, len, &cmd_len);

	FUZZ_CHECK(n > 0 && n < outlen);
	FUZZ_CHECK(out[n] == '\0' && strlen(out) == n);
	end = json_value(out, 0);
	FUZZ_CHECK(end != NULL && *json_ws(end) == '\0');
	/* One key: {"key":value} */
	FUZZ_CHECK(out[0] == '{' && out[1] == '"');
	key = out + 2;
	end = json_value(strchr(key, ':') + 1, 0);
	FUZZ_CHECK(end != NULL && *end == '}' && end[1] == '\0');
	if (!ok) {
		FUZZ_CHECK(!strncmp(out, "{\"error\":\"", 10));
		return;
	}
	FUZZ_CHECK(!strncmp(key, req, cmd_len) && key[cmd_len] == '"');
}

/* ---- the target ---- */

static struct pp_port *port;

static void setup(void)
{
	struct fuzz_env *env = fuzz_env_get(FUZZ_ARENA_BYTES);
	struct pp_port_conf conf = { .sz = sizeof(conf), .allocator = env->alloc,
				     .nid = PP_NUMA_NODE_ANY };

	port = pp_port_open("null0,size=64", &conf);
	FUZZ_CHECK(port != NULL);
	pp_pool_set_owner(pp_port_rxq_pool(port, 0));
	FUZZ_CHECK(pp_telemetry_register_allocator(env->alloc, "fuzz") == 0);
	FUZZ_CHECK(pp_telemetry_register_pool(pp_port_rxq_pool(port, 0),
					      "null0-rxq0") == 0);
	FUZZ_CHECK(pp_telemetry_register_port(port, NULL) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t sizes[] = { TELEMETRY_MIN_OUTPUT, 512, 4096,
					TELEMETRY_MAX_OUTPUT };
	struct fuzz_in in = { data, size };
	uint8_t flags;
	size_t outlen;
	char *out;

	if (!port)
		setup();
	flags = fuzz_u8(&in);
	outlen = sizes[(flags >> 2) & 3];
	out = malloc(outlen);   /* exactly: ASan sees a byte past it */
	FUZZ_CHECK(out != NULL);
	if (flags & 1)
		pp_port_poll(port, 0, 64);
	if (flags & 2)
		FUZZ_CHECK(pp_telemetry_unregister(port) == 1);

	for (int r = 0; r < MAX_REQUESTS && in.left; r++) {
		const char *req = (const char *)in.p;
		const uint8_t *nl = memchr(in.p, '\n', in.left);
		size_t len = nl ? (size_t)(nl - in.p) : in.left;
		char *copy = malloc(len ? len : 1);   /* exact, not terminated */
		size_t n;

		FUZZ_CHECK(copy != NULL);
		memcpy(copy, req, len);
		n = telemetry_handle(copy, len, out, outlen);
		check_reply(copy, len, out, n, outlen);
		free(copy);
		in.p += len + (nl ? 1 : 0);
		in.left -= len + (nl ? 1 : 0);
	}

	if (flags & 2)
		FUZZ_CHECK(pp_telemetry_register_port(port, NULL) == 0);
	free(out);
	return 0;
}
