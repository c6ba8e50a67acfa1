/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devargs.c - device strings: "<driver><n>[,key=value]...", in the style of
 * DPDK's vdev arguments. This file owns the parser and the checks that name
 * the bad part of a string; drivers read values through pp_devargs_*().
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "net_priv.h"

/*
 * Split @devstr into @da. The first token is the port name; the driver is
 * that name without its trailing digits, so "null0" and "null" are both
 * null ports. Returns 0 or -EINVAL with a message.
 */
int net_devargs_parse(const char *devstr, struct pp_devargs *da)
{
	char *tok, *save = NULL;
	size_t i, n;

	memset(da, 0, sizeof(*da));
	da->devstr = devstr;
	if (!devstr || !*devstr) {
		PP_ERR("empty device string: give one like 'null0,size=64' or 'veth0,peer=veth1'");
		return -EINVAL;
	}
	if (strlen(devstr) >= sizeof(da->buf)) {
		PP_ERR("device string '%.40s...' is too long (at most %zu characters)",
		       devstr, sizeof(da->buf) - 1);
		return -EINVAL;
	}
	memcpy(da->buf, devstr, strlen(devstr) + 1);

	/* strtok_r would merge empty tokens; an empty one is an error. */
	tok = strtok_r(da->buf, ",", &save);
	if (!tok || devstr[0] == ',') {
		PP_ERR("device '%s': no port name before the first ','", devstr);
		return -EINVAL;
	}
	n = strlen(tok);
	if (n >= sizeof(da->name)) {
		PP_ERR("device '%s': port name '%s' is too long (at most %zu characters)",
		       devstr, tok, sizeof(da->name) - 1);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)tok[i]) && tok[i] != '_') {
			PP_ERR("device '%s': port name '%s' may hold only letters, digits and '_'",
			       devstr, tok);
			return -EINVAL;
		}
	}
	memcpy(da->name, tok, n + 1);
	while (n && isdigit((unsigned char)tok[n - 1]))
		n--;
	if (!n) {
		PP_ERR("device '%s': port name '%s' has no driver part (write e.g. 'null0')",
		       devstr, tok);
		return -EINVAL;
	}
	memcpy(da->driver, tok, n);
	da->driver[n] = '\0';

	while ((tok = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(tok, '=');
		unsigned int k;

		if (!eq || eq == tok || !eq[1]) {
			PP_ERR("device '%s': '%s' is not key=value", devstr, tok);
			return -EINVAL;
		}
		*eq = '\0';
		for (k = 0; k < da->nr; k++) {
			if (!strcmp(da->key[k], tok)) {
				PP_ERR("device '%s': key '%s' given twice", devstr,
				       tok);
				return -EINVAL;
			}
		}
		if (da->nr == PP_DEVARGS_MAX) {
			PP_ERR("device '%s': more than %d key=value pairs",
			       devstr, PP_DEVARGS_MAX);
			return -EINVAL;
		}
		da->key[da->nr] = tok;
		da->value[da->nr] = eq + 1;
		da->nr++;
	}
	/* strtok_r skips empty fields: ",," or a trailing ',' is a typo. */
	if (strstr(devstr, ",,") || devstr[strlen(devstr) - 1] == ',') {
		PP_ERR("device '%s': empty field between commas", devstr);
		return -EINVAL;
	}
	return 0;
}

/* Every key must be one the driver lists. */
int net_devargs_check_keys(const struct pp_devargs *da,
			   const struct pp_net_driver *drv)
{
	unsigned int k;

	for (k = 0; k < da->nr; k++) {
		const char *const *p;
		bool known = false;

		for (p = drv->keys; p && *p; p++)
			known |= !strcmp(*p, da->key[k]);
		if (!known) {
			PP_ERR("device '%s': unknown key '%s' for driver %s (it takes: %s)",
			       da->devstr, da->key[k], drv->name,
			       drv->help ? drv->help : "no keys");
			return -EINVAL;
		}
	}
	return 0;
}

const char *pp_devargs_get(const struct pp_devargs *da, const char *key)
{
	unsigned int k;

	for (k = 0; k < da->nr; k++)
		if (!strcmp(da->key[k], key))
			return da->value[k];
	return NULL;
}

int pp_devargs_uint(const struct pp_devargs *da, const char *key,
		    unsigned long min, unsigned long max, unsigned long *out)
{
	const char *v = pp_devargs_get(da, key);
	unsigned long x;
	char *end;

	if (!v)
		return 0;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (!isdigit((unsigned char)v[0]) || *end || errno || x < min ||
	    x > max) {
		PP_ERR("device '%s': bad value '%s' for key '%s': expected a number from %lu to %lu",
		       da->devstr, v, key, min, max);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

int pp_devargs_frag(const struct pp_devargs *da, unsigned int headroom,
		    unsigned int min_frame, unsigned int *out)
{
	const unsigned long min = (unsigned long)headroom + min_frame;
	const unsigned long max = PP_PAGE_SIZE;
	const char *v = pp_devargs_get(da, "frag");
	unsigned long x;
	char *end;

	*out = 0;
	if (!v)
		return 0;
	if (!strcmp(v, "auto")) {
		*out = PP_NET_FRAG_AUTO;
		return 0;
	}
	errno = 0;
	x = strtoul(v, &end, 10);
	if (!isdigit((unsigned char)v[0]) || *end || errno || x < min ||
	    x > max) {
		PP_ERR("device '%s': bad value '%s' for key 'frag': give a fragment size from %lu (headroom %u + a %u-byte frame) to %lu bytes (an RX pool page), or 'auto' to size each fragment to its frame",
		       da->devstr, v, min, headroom, min_frame, max);
		return -EINVAL;
	}
	*out = (unsigned int)x;
	return 0;
}
