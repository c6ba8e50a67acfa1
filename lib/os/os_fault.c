/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_fault.c - the fault-injection seam's counter (pp_os_fault.h).
 * Present in every build so the test links everywhere; only a
 * -Dfault_injection=true build calls pp_os_fault_hit() from the sites.
 *
 * The counter is atomic, so sites on other threads count too; which hit
 * fails is then up to the scheduler, which is why the sweep's workload
 * is single-threaded.
 */
#include <stdatomic.h>

#include "pp_os_fault.h"

/* 512 is well above the sites the sweep reaches (about 60); a site past
 * the table still counts and can still fail, it is only not counted as
 * distinct. */
#define FAULT_MAX_SITES 512

static atomic_ulong fault_nth;
static atomic_ulong fault_hits;
static const char *_Atomic fault_fired;
static atomic_int fault_fired_err;
static const char *fault_seen[FAULT_MAX_SITES];
static atomic_uint fault_nr_seen;
static void (*fault_tracer)(const char *site);

/* Remember @site once. Racy between threads: at worst a site is listed
 * twice, which only inflates a count the sweep prints. */
static void note_site(const char *site)
{
	unsigned int n = atomic_load_explicit(&fault_nr_seen,
					      memory_order_acquire);

	for (unsigned int i = 0; i < n && i < FAULT_MAX_SITES; i++)
		if (fault_seen[i] == site)
			return;
	n = atomic_fetch_add_explicit(&fault_nr_seen, 1,
				      memory_order_acq_rel);
	if (n < FAULT_MAX_SITES)
		fault_seen[n] = site;
}

int pp_os_fault_hit(const char *site, int err)
{
	unsigned long hit = atomic_fetch_add_explicit(&fault_hits, 1,
						      memory_order_relaxed) + 1;

	note_site(site);
	if (fault_tracer)
		fault_tracer(site);
	if (hit != atomic_load_explicit(&fault_nth, memory_order_relaxed))
		return 0;
	atomic_store_explicit(&fault_fired_err, err, memory_order_relaxed);
	atomic_store_explicit(&fault_fired, site, memory_order_relaxed);
	return err;
}

void pp_os_fault_trace(void (*fn)(const char *site))
{
	fault_tracer = fn;
}

bool pp_os_fault_enabled(void)
{
#ifdef PP_FAULT_INJECTION
	return true;
#else
	return false;
#endif
}

void pp_os_fault_arm(unsigned long nth)
{
	atomic_store(&fault_hits, 0);
	atomic_store(&fault_nr_seen, 0);
	atomic_store(&fault_fired, NULL);
	atomic_store(&fault_nth, nth);
}

unsigned long pp_os_fault_hits(void)
{
	return atomic_load(&fault_hits);
}

unsigned int pp_os_fault_sites(void)
{
	unsigned int n = atomic_load(&fault_nr_seen);

	return n < FAULT_MAX_SITES ? n : FAULT_MAX_SITES;
}

const char *pp_os_fault_fired(int *err)
{
	*err = atomic_load(&fault_fired_err);
	return atomic_load(&fault_fired);
}
