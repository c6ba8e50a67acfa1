/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry_inflight.c - /pagepool/inflight: where every page of the
 * registered pools is, and of the pools destroyed while pages were out
 * (doc/telemetry.md, "Who holds my buffers"). The walk reads the pages'
 * holder words with relaxed loads (pp_pool_inflight.h): it never stops
 * the data path.
 */
#include <string.h>

#include <pagepool/pp_net_driver.h>
#include <pagepool/pp_where.h>

#include "pp_holders.h"
#include "pp_pool_inflight.h"
#include "pp_strbuf.h"
#include "telemetry_priv.h"

static void holder_json(struct pp_strbuf *o, uint32_t code)
{
	enum pp_holder_kind kind = PP_HOLDER_KIND(code);
	char port[PP_PORT_NAME_MAX + 8];
	bool open;

	pp_strbuf_printf(o, "\"holder\":\"%s\"", pp_holder_kind_name(kind));
	if (kind == PP_HOLDER_APP || kind == PP_HOLDER_POOL ||
	    kind == PP_HOLDER_NONE)
		return;
	pp_holder_port_name(PP_HOLDER_PORT(code), port, sizeof(port), &open);
	pp_strbuf_printf(o, ",\"port\":");
	pp_strbuf_json_string(o, port);
	pp_strbuf_printf(o, ",\"port_id\":%u,\"port_open\":%s,\"queue\":%u",
			 PP_HOLDER_PORT(code), open ? "true" : "false",
			 PP_HOLDER_QUEUE(code));
}

static void ms_json(struct pp_strbuf *o, const char *key, bool known,
		    double s)
{
	if (known)
		pp_strbuf_printf(o, ",\"%s\":%.3f", key, s * 1e3);
	else
		pp_strbuf_printf(o, ",\"%s\":null", key);
}

void telemetry_inflight_pool(struct pp_strbuf *o, struct pp_pool *pool,
			     const char *name, int64_t detach_time,
			     struct telemetry_inflight_total *total)
{
	static const char *const ages[PP_AGE_NR] = {
		"under_1ms", "under_1s", "under_1min", "older", "unknown",
	};
	struct pp_inflight in;

	pp_pool_inflight_walk(pool, &in);
	pp_pool_inflight_finish(&in);
	if (total) {
		total->pages += in.pages;
		total->bytes += in.pages * in.block_bytes;
	}
	pp_strbuf_printf(o, "{\"name\":");
	pp_strbuf_json_string(o, name);
	pp_strbuf_printf(o, ",\"state\":\"%s\",\"detach_time\":%lld,"
			    "\"inflight\":%llu,\"inflight_mem\":%llu,"
			    "\"in_pool\":%llu,\"holders\":[",
			 detach_time ? "destroyed" : "live",
			 (long long)detach_time, (unsigned long long)in.pages,
			 (unsigned long long)(in.pages * in.block_bytes),
			 (unsigned long long)in.in_pool);
	for (unsigned int i = 0; i < in.nr_holders; i++) {
		const struct pp_inflight_holder *h = &in.holder[i];

		pp_strbuf_printf(o, "%s{", i ? "," : "");
		holder_json(o, h->code);
		pp_strbuf_printf(o, ",\"pages\":%llu,\"bytes\":%llu",
				 (unsigned long long)h->pages,
				 (unsigned long long)(h->pages * in.block_bytes));
		ms_json(o, "oldest_ms", h->aged, h->oldest_s);
		pp_strbuf_printf(o, "}");
	}
	pp_strbuf_printf(o, "],\"age\":{");
	for (unsigned int a = 0; a < PP_AGE_NR; a++)
		pp_strbuf_printf(o, "%s\"%s\":%llu", a ? "," : "", ages[a],
				 (unsigned long long)in.age[a]);
	pp_strbuf_printf(o, "},\"oldest\":");
	if (in.have_oldest) {
		pp_strbuf_printf(o, "{");
		holder_json(o, in.oldest_code);
		ms_json(o, "age_ms", true, in.oldest_s);
		pp_strbuf_printf(o, "}");
	} else {
		pp_strbuf_printf(o, "null");
	}
	pp_strbuf_printf(o, "}");
}

struct detached_arg {
	struct pp_strbuf *o;
	const char *only;        /* one pool's name, or NULL for all */
	bool *first;
	struct telemetry_inflight_total *total;
	bool found;
};

static int detached_one(struct pp_pool *pool, int64_t detach_time, void *arg)
{
	struct detached_arg *a = arg;
	const char *name = pp_pool_name_(pool);

	if (a->only && strcmp(a->only, name))
		return 0;
	if (!a->only)
		pp_strbuf_printf(a->o, "%s", *a->first ? "" : ",");
	*a->first = false;
	telemetry_inflight_pool(a->o, pool, name, detach_time, a->total);
	a->found = true;
	return a->only != NULL; /* one is enough */
}

void telemetry_inflight_detached(struct pp_strbuf *o, bool *first,
				 struct telemetry_inflight_total *total)
{
	struct detached_arg a = { .o = o, .first = first, .total = total };

	pp_pool_detached_each(detached_one, &a);
}

bool telemetry_inflight_detached_one(struct pp_strbuf *o, const char *name)
{
	bool first = true;
	struct detached_arg a = { .o = o, .only = name, .first = &first };

	pp_pool_detached_each(detached_one, &a);
	return a.found;
}

void telemetry_inflight_total(struct pp_strbuf *o,
			      const struct telemetry_inflight_total *total)
{
	pp_strbuf_printf(o, "\"total\":{\"pages\":%llu,\"bytes\":%llu}",
			 (unsigned long long)total->pages,
			 (unsigned long long)total->bytes);
}

double telemetry_inflight_tsc_hz(void)
{
	return pp_where_hz() * (double)(1u << PP_WHERE_TSC_SHIFT);
}
