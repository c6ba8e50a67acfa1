/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd_growth.c - --arena-max, --grow-step, --shrink-delay: a growable
 * arena (doc/growth.md). The arena starts at --arena-mb and the
 * allocator's growth thread (pp-grow) commits --grow-step more each time
 * its free pages run low, up to --arena-max, and gives steps back when
 * they have been idle for --shrink-delay. fwd only watches: it samples
 * the zone's growth record with each per-second line (the committed
 * peak), and reports the counts at the end. The data path is unchanged.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fwd.h"

#define MiB (1024.0 * 1024.0)

static struct {
	struct pp_allocator *alloc;
	size_t start, peak;           /* committed bytes */
	struct pp_zone_growth end;    /* at the end of the run */
	uint64_t grows_at_start;      /* before the workers: --tx-first's */
	unsigned long wmark;          /* --grow-wmark in pages; 0: default */
} g;

/*
 * Ports whose driver registers the arena with the kernel or a peer once,
 * as it is when the port opens: their memory cannot grow under them.
 * The library refuses the growth then (the arena is pinned); fwd refuses
 * the command line before anything is built, saying why.
 */
static const struct {
	const char *prefix, *why;
} fixed_users[] = {
	{ "af_xdp:", "the kernel registers an AF_XDP UMEM once, at its size when the port opens" },
	{ "virtio_user:", "the vhost-user back-end maps the memory table once, when the port opens" },
};

int growth_check_ports(const char *const *dev, unsigned int nr_dev)
{
	for (unsigned int i = 0; i < nr_dev; i++) {
		for (size_t k = 0; k < sizeof(fixed_users) / sizeof(fixed_users[0]); k++) {
			if (strncmp(dev[i], fixed_users[k].prefix,
				    strlen(fixed_users[k].prefix)))
				continue;
			fprintf(stderr, "fwd: --arena-max: --port %s cannot use a growable arena: %s, so the arena must stay fixed: drop --arena-max (and --grow-step, --grow-wmark, --shrink-delay) and size it with --arena-mb\n",
				dev[i], fixed_users[k].why);
			return -1;
		}
	}
	return 0;
}

static void sample(struct pp_zone_growth *z)
{
	memset(z, 0, sizeof(*z));
	z->sz = sizeof(*z);
	if (pp_allocator_zone_growth(g.alloc, 0, z))
		memset(z, 0, sizeof(*z));
	if (z->committed_bytes > g.peak)
		g.peak = z->committed_bytes;
}

void growth_start(struct pp_allocator *alloc, unsigned long wmark)
{
	struct pp_zone_growth z;

	g.alloc = alloc;
	g.wmark = wmark;
	sample(&z);
	if (!z.growable) {
		g.alloc = NULL;
		return;
	}
	g.start = z.committed_bytes;
}

/* How long the forwarding may wait for the growth thread after
 * --tx-first's bursts. */
#define SETTLE_MAX_S 5.0

void growth_settle(void)
{
	struct pp_zone_growth z;
	double end = now_s() + SETTLE_MAX_S;
	unsigned long want;

	if (!g.alloc)
		return;
	for (;;) {
		sample(&z);
		/* The margin: what --grow-wmark asks, at the maximum what
		 * is left to commit. */
		want = g.wmark ? g.wmark : (z.step_bytes >> PP_PAGE_SHIFT) / 2;
		if (z.free_pages >= want || z.committed_bytes >= z.max_bytes ||
		    now_s() > end)
			break;
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (z.free_pages < want && z.committed_bytes < z.max_bytes)
		fprintf(stderr, "fwd: --tx-first: the growth thread did not restore %lu free pages in %.0f s (%lu free, %llu failed grows): forwarding anyway\n",
			want, SETTLE_MAX_S, z.free_pages,
			(unsigned long long)z.grow_failures);
}

/* After --tx-first: the grows it took, so that the report can tell
 * them from those that happened while the frames were forwarded. */
void growth_workers_start(void)
{
	struct pp_zone_growth z;

	if (!g.alloc)
		return;
	sample(&z);
	g.grows_at_start = z.grows;
}

void growth_line(FILE *f)
{
	struct pp_zone_growth z;

	if (!g.alloc)
		return;
	sample(&z);
	if (f)
		fprintf(f, "  committed %.0f MiB", (double)z.committed_bytes / MiB);
}

void growth_end(void)
{
	if (g.alloc)
		sample(&g.end);
}

void growth_report(char *json, size_t len)
{
	const struct pp_zone_growth *z = &g.end;

	if (!g.alloc) {
		snprintf(json, len, "null");
		return;
	}
	fprintf(fwd_out, "growth: committed %.0f MiB at the start, %.0f MiB at the peak, %.0f MiB at the end (min %.0f, max %.0f, step %.0f MiB); grows %llu (%llu while forwarding), shrinks %llu, failed grows %llu%s%s\n",
		(double)g.start / MiB, (double)g.peak / MiB,
		(double)z->committed_bytes / MiB, (double)z->min_bytes / MiB,
		(double)z->max_bytes / MiB, (double)z->step_bytes / MiB,
		(unsigned long long)z->grows,
		(unsigned long long)(z->grows - g.grows_at_start),
		(unsigned long long)z->shrinks,
		(unsigned long long)z->grow_failures,
		z->last_error ? ", the last: " : "",
		z->last_error ? strerror(-z->last_error) : "");
	snprintf(json, len,
		 "{\"committed_mib_start\":%.0f,\"committed_mib_peak\":%.0f,"
		 "\"committed_mib_end\":%.0f,\"min_mib\":%.0f,\"max_mib\":%.0f,"
		 "\"step_mib\":%.0f,\"grows\":%llu,\"grows_forwarding\":%llu,"
		 "\"shrinks\":%llu,\"grow_failures\":%llu,"
		 "\"drains_cancelled\":%llu,\"last_error\":%d}",
		 (double)g.start / MiB, (double)g.peak / MiB,
		 (double)z->committed_bytes / MiB, (double)z->min_bytes / MiB,
		 (double)z->max_bytes / MiB, (double)z->step_bytes / MiB,
		 (unsigned long long)z->grows,
		 (unsigned long long)(z->grows - g.grows_at_start),
		 (unsigned long long)z->shrinks,
		 (unsigned long long)z->grow_failures,
		 (unsigned long long)z->drains_cancelled, z->last_error);
}
