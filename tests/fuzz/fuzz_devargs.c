/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_devargs.c - device strings from the input, three ways:
 *
 *  1. net_devargs_parse(): what it accepts is well formed (a port name of
 *     letters, digits and '_' with a driver part, distinct non-empty keys
 *     without '=' or ',', non-empty values without ','), and it round-trips:
 *     printing the result as "name,key=value,..." gives the input back, and
 *     parsing that gives the same lists.
 *  2. pp_devargs_uint() on every key with a range from the input: a value
 *     it accepts is a decimal inside the range; net_devargs_check_keys()
 *     against null's and veth's key lists passes exactly when every key
 *     is in the list.
 *  3. pp_port_open() on the string, alone or behind a null or veth prefix,
 *     over a small 4 KiB-page arena (never for af_xdp, e1000e or
 *     virtio_user, which would open a real interface, device or socket): it succeeds only where the string
 *     (after the "DRIVER:IFNAME" rewrite to "DRIVER,iface=IFNAME") parses,
 *     fails with EINVAL or ENOMEM and a message otherwise; an open port
 *     moves a few frames, closes with 0, and no page stays allocated.
 *
 * Input: byte 0 picks the prefix, bytes 1-8 the range, the rest is the
 * string (up to its first NUL).
 */
#include <ctype.h>
#include <errno.h>

#include <pagepool/pp_net_driver.h>

#include "drivers.h"      /* drivers/net: the built-in drivers' entries */
#include "fuzz_common.h"
#include "net/net_priv.h" /* lib/net: the parser and the key check */

/* 128 pages: enough for a veth pair's two pools' first refills. */
#define FUZZ_ARENA_BYTES (512u << 10)

static const char *const prefixes[] = {
	"", "null0,", "veth0,peer=veth1,", "null:", "veth:", "null",
	"veth0,peer=", "null0,size=",
};
#define NR_PREFIXES (sizeof(prefixes) / sizeof(prefixes[0]))

/* "name,key=value,...": the parser's inverse. Returns snprintf's length. */
static int devargs_print(const struct pp_devargs *da, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s", da->name);

	for (unsigned int k = 0; k < da->nr && n >= 0 && (size_t)n < len; k++)
		n += snprintf(buf + n, len - (size_t)n, ",%s=%s", da->key[k],
			      da->value[k]);
	return n;
}

static void check_well_formed(const struct pp_devargs *da)
{
	size_t n = strlen(da->name), d = strlen(da->driver);

	FUZZ_CHECK(n > 0 && n < sizeof(da->name));
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(isalnum((unsigned char)da->name[i]) ||
			   da->name[i] == '_');
	/* The driver is the name less its trailing digits, and not empty. */
	FUZZ_CHECK(d > 0 && d <= n && !strncmp(da->name, da->driver, d));
	for (size_t i = d; i < n; i++)
		FUZZ_CHECK(isdigit((unsigned char)da->name[i]));
	FUZZ_CHECK(!isdigit((unsigned char)da->driver[d - 1]));
	FUZZ_CHECK(da->nr <= PP_DEVARGS_MAX);
	for (unsigned int k = 0; k < da->nr; k++) {
		FUZZ_CHECK(da->key[k][0] && da->value[k][0]);
		FUZZ_CHECK(!strpbrk(da->key[k], ",="));
		FUZZ_CHECK(!strchr(da->value[k], ','));
		for (unsigned int j = 0; j < k; j++)
			FUZZ_CHECK(strcmp(da->key[j], da->key[k]));
		FUZZ_CHECK(pp_devargs_get(da, da->key[k]) == da->value[k]);
	}
}

static void check_round_trip(const char *s, const struct pp_devargs *da)
{
	struct pp_devargs again;
	char printed[512];
	int n = devargs_print(da, printed, sizeof(printed));

	FUZZ_CHECK(n >= 0 && (size_t)n < sizeof(printed));
	FUZZ_CHECK(!strcmp(printed, s));
	FUZZ_CHECK(net_devargs_parse(printed, &again) == 0);
	FUZZ_CHECK(!strcmp(again.name, da->name));
	FUZZ_CHECK(!strcmp(again.driver, da->driver));
	FUZZ_CHECK(again.nr == da->nr);
	for (unsigned int k = 0; k < da->nr; k++) {
		FUZZ_CHECK(!strcmp(again.key[k], da->key[k]));
		FUZZ_CHECK(!strcmp(again.value[k], da->value[k]));
	}
}

static void check_uint(const struct pp_devargs *da, unsigned long min,
		       unsigned long max)
{
	for (unsigned int k = 0; k < da->nr; k++) {
		unsigned long out = 0x5a5a5a5a;
		const char *v = da->value[k];
		unsigned long log_before = fuzz_log_count;

		if (pp_devargs_uint(da, da->key[k], min, max, &out)) {
			/* Refused: said so, and left out alone. */
			FUZZ_CHECK(fuzz_log_count > log_before);
			FUZZ_CHECK(out == 0x5a5a5a5a);
			continue;
		}
		FUZZ_CHECK(out >= min && out <= max);
		for (const char *c = v; *c; c++)
			FUZZ_CHECK(isdigit((unsigned char)*c));
		FUZZ_CHECK(strtoul(v, NULL, 10) == out);
	}
}

/* net_devargs_check_keys() passes exactly when every key is the driver's. */
static void check_keys(const struct pp_devargs *da,
		       const struct pp_net_driver *drv)
{
	unsigned long log_before = fuzz_log_count;
	bool all_known = true;

	for (unsigned int k = 0; k < da->nr; k++) {
		bool known = false;

		for (const char *const *p = drv->keys; p && *p; p++)
			known |= !strcmp(*p, da->key[k]);
		all_known &= known;
	}
	FUZZ_CHECK((net_devargs_check_keys(da, drv) == 0) == all_known);
	FUZZ_CHECK(all_known || fuzz_log_count > log_before);
}

/* What pp_port_open() parses: the "DRIVER:IFNAME" form rewritten. */
static const char *rewrite(const char *s, char *buf, size_t len)
{
	const char *colon = strchr(s, ':'), *comma = strchr(s, ',');
	int n;

	if (!colon || (comma && comma < colon))
		return s;
	n = snprintf(buf, len, "%.*s,iface=%s", (int)(colon - s), s, colon + 1);
	return n > 0 && (size_t)n < len ? buf : s;
}

/* A few frames through an open port and back to their pools. */
static void exercise(struct pp_port *p)
{
	struct pp_port *out = pp_port_peer(p) ? pp_port_peer(p) : p;
	struct pp_frame f[8] = { 0 };
	unsigned int got, sent, q;

	got = pp_port_rx_burst(p, 0, f, 8);
	for (q = 0; q < got; q++)
		FUZZ_CHECK(pp_frame_valid(&f[q]));
	sent = got ? pp_port_tx_burst(p, 0, f, got) : 0;
	FUZZ_CHECK(sent <= got);
	for (q = sent; q < got; q++)
		pp_pool_recycle_direct(pp_page_pool(f[q].page), f[q].page);
	got = pp_port_rx_burst(out, 0, f, 8);
	for (q = 0; q < got; q++) {
		FUZZ_CHECK(pp_frame_valid(&f[q]));
		pp_pool_recycle_direct(pp_page_pool(f[q].page), f[q].page);
	}
}

static void open_port(struct fuzz_env *env, const char *s)
{
	struct pp_port_conf conf = {
		.sz = sizeof(conf),
		.allocator = env->alloc,
		.ring_size = 64,
		.pool_size = 64,
		.nid = PP_NUMA_NODE_ANY,
	};
	char buf[256];
	const char *parsed = rewrite(s, buf, sizeof(buf));
	struct pp_devargs da;
	int parse_ok = net_devargs_parse(parsed, &da) == 0;
	unsigned long log_before = fuzz_log_count;
	struct pp_port *p;

	/*
	 * af_xdp and e1000e would reach for a real interface or PCI device,
	 * virtio_user for a socket (or listen on one for seconds): strings
	 * for them are only parsed above.
	 */
	if (parse_ok && (!strcmp(da.driver, "af_xdp") ||
			 !strcmp(da.driver, "e1000e") ||
			 !strcmp(da.driver, "virtio_user")))
		return;
	errno = 0;
	p = pp_port_open(s, &conf);
	if (!p) {
		FUZZ_CHECK(errno == EINVAL || errno == ENOMEM);
		FUZZ_CHECK(fuzz_log_count > log_before);
	} else {
		/* Nothing opens that the parser refused. */
		FUZZ_CHECK(parse_ok);
		FUZZ_CHECK(!strcmp(pp_port_name(p), da.name));
		FUZZ_CHECK(!strcmp(pp_port_driver(p), da.driver));
		exercise(p);
		FUZZ_CHECK(pp_port_close(p) == 0);
	}
	pp_allocator_drain_thread(env->alloc);
	fuzz_check_allocated(env, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_env *env = fuzz_env_get(FUZZ_ARENA_BYTES);
	struct fuzz_in in = { data, size };
	const char *prefix = prefixes[fuzz_u8(&in) % NR_PREFIXES];
	unsigned long min = fuzz_u32(&in), max = fuzz_u32(&in);
	char s[600], full[700];
	struct pp_devargs da;
	size_t n;

	/* Long enough to pass the parser's 255-character limit. */
	n = in.left < sizeof(s) - 1 ? in.left : sizeof(s) - 1;
	memcpy(s, in.p, n);
	s[n] = '\0';

	if (net_devargs_parse(s, &da) == 0) {
		check_well_formed(&da);
		check_round_trip(s, &da);
		check_uint(&da, min, max);
		check_keys(&da, &pp_net_null_driver);
		check_keys(&da, &pp_net_veth_driver);
	}
	snprintf(full, sizeof(full), "%s%s", prefix, s);
	open_port(env, full);
	return 0;
}
