/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * growth_sample.c - what `pp-bench growth` reads while a side runs: the
 * hugepages held (system-wide from sysfs, as /proc/meminfo's
 * HugePages_Total - HugePages_Free but over every page size, and the
 * process's own hugetlb mappings from smaps_rollup, which neighbours on
 * a shared machine cannot disturb), the zone's growth counters, and the
 * schedule. The sampler runs on the control CPU, never on the traffic
 * thread's.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "growth.h"
#include "timing.h"

#define HUGEPAGES_DIR "/sys/kernel/mm/hugepages"

struct growth_sampler {
	pthread_t th;
	const struct growth_cfg *cfg;
	struct growth_result *res;
	struct growth_live *live;
	growth_poll_fn poll;
	void *ctx;
};

uint64_t growth_tsc(void)
{
	return tsc_begin();
}

int growth_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

/* The thread @tid's schedstat wait and context switches; 0 or -1. */
static int thread_sched(int tid, uint64_t *wait_ns, uint64_t *nvcsw,
			uint64_t *nivcsw)
{
	char path[96], line[160];
	unsigned long long run, wait, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	*wait_ns = wait;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
			*nvcsw = v;
		else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu",
				&v) == 1)
			*nivcsw = v;
	}
	fclose(f);
	return 0;
}

int growth_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static long read_long(const char *dir, const char *name)
{
	char path[512];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), HUGEPAGES_DIR "/%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int64_t growth_hugepages_used(void)
{
	DIR *d = opendir(HUGEPAGES_DIR);
	struct dirent *e;
	int64_t used = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		unsigned long kb;
		long nr, fr;

		if (sscanf(e->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		nr = read_long(e->d_name, "nr_hugepages");
		fr = read_long(e->d_name, "free_hugepages");
		if (nr < 0 || fr < 0)
			continue;
		used += (int64_t)(nr - fr) * (int64_t)kb * 1024;
	}
	closedir(d);
	return used;
}

int64_t growth_hugetlb_mapped(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	int64_t kb = 0, v;
	int seen = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Shared_Hugetlb: %ld kB", &v) == 1 ||
		    sscanf(line, "Private_Hugetlb: %ld kB", &v) == 1) {
			kb += v;
			seen++;
		}
	}
	fclose(f);
	return seen ? kb * 1024 : -1;
}

double growth_rate_at(const struct growth_cfg *cfg, double t, double *end)
{
	double at = 0;
	unsigned int i;

	for (i = 0; i < cfg->nr_phases; i++) {
		at += cfg->phases[i].secs;
		if (t < at) {
			*end = at;
			return cfg->phases[i].pct / 100.0 * cfg->peak_rate;
		}
	}
	*end = cfg->run_s;
	return 0;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void add_events(struct growth_result *res, double t, uint64_t from,
		       uint64_t to, unsigned int kind)
{
	for (; from < to && res->nr_events < GROWTH_MAX_EVENTS; from++) {
		res->events[res->nr_events].t_s = t;
		res->events[res->nr_events].kind = kind;
		res->nr_events++;
	}
}

static void *sampler_main(void *arg)
{
	struct growth_sampler *s = arg;
	const struct growth_cfg *cfg = s->cfg;
	struct growth_result *res = s->res;
	struct growth_zone_read prev = { 0 }, cur = { 0 };
	uint64_t start;
	double next = 0;

	growth_pin(cfg->ctl_cpu);
	if (s->poll)
		s->poll(s->ctx, &prev);
	while (!(start = __atomic_load_n(&s->live->start_tsc,
					 __ATOMIC_ACQUIRE)) &&
	       !__atomic_load_n(&s->live->stop, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	while (!__atomic_load_n(&s->live->stop, __ATOMIC_ACQUIRE)) {
		double t = (double)(tsc_begin() - start) / cfg->tsc_hz;

		if (s->poll && !s->poll(s->ctx, &cur)) {
			add_events(res, t, prev.grows, cur.grows,
				   GROWTH_EV_GROW);
			add_events(res, t, prev.shrinks, cur.shrinks,
				   GROWTH_EV_SHRINK);
			add_events(res, t, prev.grow_failures,
				   cur.grow_failures, GROWTH_EV_FAIL);
			add_events(res, t, prev.drains_cancelled,
				   cur.drains_cancelled, GROWTH_EV_CANCEL);
			prev = cur;
		}
		if (t >= next && res->nr_samples < GROWTH_MAX_SAMPLES) {
			struct growth_sample *sm =
				&res->samples[res->nr_samples++];
			int64_t used = growth_hugepages_used();

			sm->t_s = t;
			sm->held_sys = used < 0 ? -1 :
				       used - (int64_t)res->baseline_sys;
			sm->held_proc = growth_hugetlb_mapped();
			sm->committed = prev.committed;
			sm->free_pages = prev.free_pages;
			sm->isolated_pages = prev.isolated_pages;
			sm->inflight = __atomic_load_n(&s->live->inflight,
						       __ATOMIC_RELAXED);
			sm->lost = __atomic_load_n(&s->live->lost,
						   __ATOMIC_RELAXED);
			thread_sched(__atomic_load_n(&s->live->tid,
						     __ATOMIC_RELAXED),
				     &sm->wait_ns, &sm->nvcsw, &sm->nivcsw);
			res->wait_ns = sm->wait_ns;
			res->nvcsw = sm->nvcsw;
			res->nivcsw = sm->nivcsw;
			next += cfg->sample_ms / 1000.0;
		}
		sleep_ms(1);
	}
	return NULL;
}

struct growth_sampler *growth_sampler_start(const struct growth_cfg *cfg,
					    struct growth_result *res,
					    struct growth_live *live,
					    growth_poll_fn poll, void *ctx)
{
	struct growth_sampler *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	*s = (struct growth_sampler){ .cfg = cfg, .res = res, .live = live,
				      .poll = poll, .ctx = ctx };
	err = pthread_create(&s->th, NULL, sampler_main, s);
	if (err) {
		free(s);
		errno = err;
		return NULL;
	}
	return s;
}

void growth_sampler_stop(struct growth_sampler *s)
{
	if (!s)
		return;
	__atomic_store_n(&s->live->stop, 1, __ATOMIC_RELEASE);
	pthread_join(s->th, NULL);
	free(s);
}
