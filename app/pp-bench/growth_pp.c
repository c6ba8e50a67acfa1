/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * growth_pp.c - the pagepool sides of `pp-bench growth`: a page_pool on
 * an allocator over one arena of 2 MiB pages, either growable (a small
 * minimum, max_size for the peak; the allocator's pp-grow thread grows
 * and shrinks it) or fixed at that max_size (growth off).
 *
 * Threads: this one (the control CPU) builds the arena and the allocator,
 * so that the pp-grow thread inherits the control CPU; the traffic thread,
 * on its own CPU, owns the page_pool. At the end of the timeline it reads
 * where the idle memory is held (the pool's cache and ring, the thread
 * caches), destroys the pool and drains its cache, and this thread waits
 * for the grow thread to give back what it then can: the difference is
 * what the pool and the caches kept pinned.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <pagepool/pagepool.h>

#include "growth.h"
#include "growth_traffic.h"

struct pp_side {
	const struct growth_cfg *cfg;
	struct growth_result *res;
	struct growth_burst *rec;
	struct growth_live live;
	struct pp_allocator *alloc;
	int err;
	char why[200];
};

static char last_log[200];

static void log_capture(enum pp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level <= PP_LOG_WARN)
		snprintf(last_log, sizeof(last_log), "%s", msg);
}

static unsigned int pool_alloc(void *ctx, void **objs, unsigned int n)
{
	return pp_pool_alloc_bulk(ctx, (struct pp_page **)objs, n);
}

static void pool_free(void *ctx, void **objs, unsigned int n)
{
	pp_pool_recycle_direct_bulk(ctx, (struct pp_page **)objs, n);
}

static void *page_data(void *obj)
{
	return pp_page_address(obj);
}

/* What an idle RX queue does (pp_port_poll()): one load when the
 * allocator gives nothing back. */
static void pool_idle(void *ctx)
{
	pp_pool_trim(ctx);
}

static int zone_read(void *ctx, struct growth_zone_read *out)
{
	struct pp_zone_growth g = { .sz = sizeof(g) };

	if (pp_allocator_zone_growth(ctx, 0, &g))
		return -1;
	out->committed = g.committed_bytes;
	out->free_pages = g.free_pages;
	out->isolated_pages = g.isolated_pages;
	out->grows = g.grows;
	out->shrinks = g.shrinks;
	out->grow_failures = g.grow_failures;
	out->drains_cancelled = g.drains_cancelled;
	out->last_error = g.last_error;
	return 0;
}

static void *traffic_main(void *arg)
{
	struct pp_side *ps = arg;
	struct pp_pool_params params = {
		.sz = sizeof(params),
		.allocator = ps->alloc,
		.nid = PP_NUMA_NODE_ANY,
		.dma_dir = PP_DMA_FROM_DEVICE,
		.name = "pp-bench-growth",
	};
	struct growth_result *res = ps->res;
	struct growth_zone_read z;
	struct pp_zone_stats zs;
	struct pp_pool_stats st;
	struct growth_line line;
	struct pp_pool *pool;

	if (growth_pin(ps->cfg->traffic_cpu)) {
		snprintf(ps->why, sizeof(ps->why), "cannot pin the traffic thread to CPU %d",
			 ps->cfg->traffic_cpu);
		ps->err = -1;
		return NULL;
	}
	pool = pp_pool_create(&params);
	if (!pool || growth_line_init(&line, ps->cfg)) {
		snprintf(ps->why, sizeof(ps->why), "no page_pool: %s",
			 strerror(errno));
		ps->err = -1;
		if (pool)
			pp_pool_destroy(pool);
		return NULL;
	}
	growth_traffic_run(ps->cfg, res, &ps->live, ps->rec, &line, pool,
			   pool_alloc, pool_free, page_data, pool_idle);

	/* Idle now: who holds the memory that stayed. */
	if (!pp_pool_get_stats(pool, &st)) {
		res->end_pool_cache = st.cache_count;
		res->end_pool_ring = st.ring_count;
	}
	if (!pp_allocator_zone_stats(ps->alloc, 0, &zs))
		res->end_tcache = zs.thread_cache_pages;
	if (!zone_read(ps->alloc, &z)) {
		res->end_committed = z.committed;
		res->end_free_pages = z.free_pages;
		res->end_isolated_pages = z.isolated_pages;
	}
	res->end_held_proc = growth_hugetlb_mapped();
	if (pp_pool_destroy(pool))
		snprintf(ps->why, sizeof(ps->why), "pages in flight at the pool's destroy");
	pp_allocator_drain_thread(ps->alloc);
	free(line.slots);
	return NULL;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * After the pool is gone: wait until the committed size has not moved
 * for the shrink delay and a second more (the grow thread gives back one
 * step at a time), at most 20 s.
 */
static void wait_drained(struct pp_side *ps)
{
	const struct growth_cfg *cfg = ps->cfg;
	unsigned int quiet_ms = (cfg->shrink_delay_ms ? cfg->shrink_delay_ms :
							1000) + 1000;
	unsigned int waited = 0, still = 0;
	struct growth_zone_read z;
	uint64_t last = 0;

	while (waited < 20000 && still < quiet_ms) {
		if (zone_read(ps->alloc, &z))
			break;
		if (z.committed == last)
			still += 100;
		else
			still = 0;
		last = z.committed;
		sleep_ms(100);
		waited += 100;
	}
	ps->res->drained_committed = last;
	ps->res->drained_held_proc = growth_hugetlb_mapped();
	ps->res->drained_wait_s = waited / 1000.0;
}

static struct pp_arena *make_arena(const struct growth_cfg *cfg, bool grow)
{
	struct pp_arena_opts ao = {
		.sz = sizeof(ao),
		.page_size = PP_PAGE_SIZE_2M,
		.numa_node = PP_NUMA_NODE_ANY,
		.name = grow ? "growth-grow" : "growth-fixed",
	};

	if (grow) {
		ao.size = cfg->min_bytes;
		ao.max_size = cfg->sized_bytes;
		ao.grow_step = cfg->step_bytes;
	} else {
		ao.size = cfg->sized_bytes;
	}
	return pp_arena_create(&ao);
}

int growth_run_pagepool(const struct growth_cfg *cfg, bool grow,
			struct growth_result *res, struct growth_burst *rec)
{
	static struct pp_side ps;
	struct pp_allocator_opts lo = {
		.sz = sizeof(lo),
		.nr_arenas = 1,
		.grow_wmark = cfg->grow_wmark,
		.shrink_wmark = cfg->shrink_wmark,
		.shrink_delay_ms = cfg->shrink_delay_ms,
	};
	struct growth_sampler *sampler;
	struct growth_zone_read z;
	struct pp_arena *arena;
	pthread_t th;
	int64_t base;

	ps = (struct pp_side){ .cfg = cfg, .res = res, .rec = rec };
	pp_log_set_handler(log_capture, NULL, PP_LOG_WARN);
	growth_pin(cfg->ctl_cpu);
	base = growth_hugepages_used();
	res->baseline_sys = base < 0 ? 0 : (uint64_t)base;
	arena = make_arena(cfg, grow);
	if (!arena) {
		snprintf(res->why, sizeof(res->why), "no arena: %s",
			 last_log[0] ? last_log : strerror(errno));
		return -1;
	}
	lo.arenas = &arena;
	ps.alloc = pp_allocator_create(&lo);
	if (!ps.alloc) {
		snprintf(res->why, sizeof(res->why), "no allocator: %s",
			 last_log[0] ? last_log : strerror(errno));
		pp_arena_destroy(arena);
		return -1;
	}
	if (!zone_read(ps.alloc, &z)) {
		struct pp_zone_growth g = { .sz = sizeof(g) };

		pp_allocator_zone_growth(ps.alloc, 0, &g);
		res->min_bytes = g.min_bytes;
		res->max_bytes = g.max_bytes;
		res->step_bytes = g.step_bytes;
	}
	snprintf(res->setup, sizeof(res->setup),
		 "%s arena of 2 MiB pages: %zu MiB%s; page_pool (cache %u, ring 1024); thread cache 512",
		 grow ? "growable" : "fixed",
		 (grow ? cfg->min_bytes : cfg->sized_bytes) >> 20,
		 grow ? " minimum, grows to max_size" : "", PP_POOL_CACHE_SIZE);
	if (grow) {
		size_t len = strlen(res->setup);

		snprintf(res->setup + len, sizeof(res->setup) - len,
			 " (max %zu MiB, step %llu MiB)", cfg->sized_bytes >> 20,
			 (unsigned long long)res->step_bytes >> 20);
	}
	sampler = growth_sampler_start(cfg, res, &ps.live, zone_read,
				       ps.alloc);
	if (!sampler || pthread_create(&th, NULL, traffic_main, &ps)) {
		snprintf(res->why, sizeof(res->why), "no thread: %s",
			 strerror(errno));
		growth_sampler_stop(sampler);
		pp_allocator_destroy(ps.alloc);
		pp_arena_destroy(arena);
		return -1;
	}
	pthread_join(th, NULL);
	growth_sampler_stop(sampler);
	if (ps.err) {
		snprintf(res->why, sizeof(res->why), "%s", ps.why);
	} else {
		if (!zone_read(ps.alloc, &z)) {
			res->grows = z.grows;
			res->shrinks = z.shrinks;
			res->grow_failures = z.grow_failures;
			res->drains_cancelled = z.drains_cancelled;
			res->last_error = z.last_error;
		}
		wait_drained(&ps);
		res->ran = 1;
	}
	if (pp_allocator_destroy(ps.alloc) == 0)
		pp_arena_destroy(arena);
	return ps.err;
}
