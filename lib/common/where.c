/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * where.c - the coarse clock of pages' holder stamps (pp_where.h): the
 * per-thread copies the data path reads, and its rate for the reports.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include <pagepool/pp_where.h>

#include "pp_holders.h"

__thread uint32_t pp_where_clock_ __attribute__((tls_model("initial-exec")));
__thread uint32_t pp_where_ticks_ __attribute__((tls_model("initial-exec")));

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t pp_where_now_slow_(void)
{
	return (uint32_t)(mono_ns() >> PP_WHERE_TSC_SHIFT);
}

static pthread_once_t hz_once = PTHREAD_ONCE_INIT;
static double hz;

/* The TSC's rate over 20 ms of CLOCK_MONOTONIC, in clock units. */
static void hz_measure(void)
{
#if defined(__x86_64__) || defined(__i386__)
	struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	uint64_t t0 = mono_ns(), c0 = __builtin_ia32_rdtsc(), t1, c1;

	nanosleep(&pause, NULL);
	t1 = mono_ns();
	c1 = __builtin_ia32_rdtsc();
	hz = (double)(c1 - c0) * 1e9 / (double)(t1 - t0) /
	     (double)(1u << PP_WHERE_TSC_SHIFT);
#else
	hz = 1e9 / (double)(1u << PP_WHERE_TSC_SHIFT);
#endif
}

double pp_where_hz(void)
{
	pthread_once(&hz_once, hz_measure);
	return hz;
}

const char *pp_holder_kind_name(enum pp_holder_kind kind)
{
	static const char *const names[PP_HOLDER_NR_KINDS] = {
		[PP_HOLDER_NONE] = "none",
		[PP_HOLDER_POOL] = "pool",
		[PP_HOLDER_APP] = "app",
		[PP_HOLDER_RX_RING] = "rx_ring",
		[PP_HOLDER_APP_RX] = "app_rx",
		[PP_HOLDER_TX_RING] = "tx_ring",
		[PP_HOLDER_STACK] = "stack",
	};

	return (unsigned int)kind < PP_HOLDER_NR_KINDS ? names[kind] : "none";
}

/* ---- what the ports tell (pp_holders.h) ---- */

static pp_port_name_fn port_name_hook;

void pp_port_name_hook_set(pp_port_name_fn fn)
{
	__atomic_store_n(&port_name_hook, fn, __ATOMIC_RELEASE);
}

void pp_holder_port_name(unsigned int id, char *buf, size_t len, bool *open)
{
	pp_port_name_fn fn = __atomic_load_n(&port_name_hook,
					     __ATOMIC_ACQUIRE);

	if (!fn || fn(id, buf, len, open)) {
		snprintf(buf, len, "#%u", id);
		*open = false;
	}
}

void pp_holder_describe(uint32_t code, char *buf, size_t len)
{
	enum pp_holder_kind kind = PP_HOLDER_KIND(code);
	char port[64];
	bool open;

	if (kind == PP_HOLDER_APP) {
		snprintf(buf, len,
			 "app (taken from the pool, no holder recorded)");
		return;
	}
	if (kind == PP_HOLDER_POOL || kind == PP_HOLDER_NONE) {
		snprintf(buf, len, "%s", pp_holder_kind_name(kind));
		return;
	}
	pp_holder_port_name(PP_HOLDER_PORT(code), port, sizeof(port), &open);
	snprintf(buf, len, "%s of port %s%s, queue %u",
		 pp_holder_kind_name(kind), port, open ? "" : " (closed)",
		 PP_HOLDER_QUEUE(code));
}

static pp_ring_pages_fn ring_pages_hook;

void pp_ring_pages_hook_set(pp_ring_pages_fn fn)
{
	__atomic_store_n(&ring_pages_hook, fn, __ATOMIC_RELEASE);
}

void pp_ring_pages(pp_ring_page_fn fn, void *arg)
{
	pp_ring_pages_fn hook = __atomic_load_n(&ring_pages_hook,
						__ATOMIC_ACQUIRE);

	if (hook)
		hook(fn, arg);
}
