/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcp.c - per-thread caches of order-0 pages (the kernel's pcp lists),
 * out of line: creating a thread's cache on first use, returning it when
 * the thread exits, and draining other threads' caches when the zones run
 * dry. The fast path that uses a cache is inline in page_alloc.c.
 *
 * A cache belongs to one (thread, allocator) pair. It is found through
 * the allocator's pthread key (whose destructor returns it at thread
 * exit), with a one-entry thread-local memo in front (pcp_get()). Every
 * cache is also on the allocator's list, so that a starving thread, the
 * statistics, the invariant walker and pp_allocator_destroy() can reach
 * caches of other threads: they hold a cache with pp_pcp_hold(), which
 * keeps its owner out (page_alloc_priv.h, struct pp_pcp, says how).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "pp_os_fault.h"
#include "pp_os.h"
#include "page_alloc_priv.h"

__thread struct pcp_memo pp_pcp_memo
	__attribute__((tls_model("initial-exec"), visibility("hidden")));

#if defined(__SANITIZE_THREAD__)
#define PCP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PCP_TSAN 1
#endif
#endif
#ifndef PCP_TSAN
#define PCP_TSAN 0
#endif

/* Whether caches use the asymmetric handshake: decided once per process,
 * since every cache of every allocator must agree with the drainers. */
static pthread_once_t asym_once = PTHREAD_ONCE_INIT;
static bool asym_on;

static void asym_decide(void)
{
	const char *off = getenv("PAGEPOOL_NO_MEMBARRIER");
	int err;

	if (PCP_TSAN || (off && *off && strcmp(off, "0")))
		return;
	err = pp_os_membarrier_register();
	if (err) {
		PP_INFO("allocator: membarrier(PRIVATE_EXPEDITED) unavailable (%s): thread caches take a lock word per call",
			strerror(-err));
		return;
	}
	asym_on = true;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/*
 * Contended only while another thread drains this cache, which holds it
 * for one pass over the cache's stacks. Spin briefly, then yield: the
 * holder may be preempted (more threads than cores), and a pure spin
 * would only burn the time slice it needs to finish.
 */
void pp_pcp_lock_slow(struct pp_pcp *pcp)
{
	for (;;) {
		for (int i = 0; i < 128; i++) {
			if (!__atomic_load_n(&pcp->lock, __ATOMIC_RELAXED) &&
			    !__atomic_exchange_n(&pcp->lock, 1,
						 __ATOMIC_ACQUIRE))
				return;
			cpu_relax();
		}
		sched_yield();
	}
}

/*
 * The owner saw @stop raised: another thread holds the cache. Step out
 * (busy clear, so it can finish), wait for stop to drop, and enter again,
 * as pcp_lock() does. Spin briefly, then yield, as the lock word does.
 */
void pp_pcp_enter_slow(struct pp_pcp *pcp)
{
	for (;;) {
		__atomic_store_n(&pcp->busy, 0, __ATOMIC_RELEASE);
		for (int i = 0; __atomic_load_n(&pcp->stop, __ATOMIC_ACQUIRE);
		     i++) {
			if (i < 128)
				cpu_relax();
			else
				sched_yield();
		}
		__atomic_store_n(&pcp->busy, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&pcp->stop, __ATOMIC_ACQUIRE))
			return;
	}
}

/* Another thread's side: the lock word keeps such threads apart. */
static void hold_begin(struct pp_pcp *pcp)
{
	if (__atomic_exchange_n(&pcp->lock, 1, __ATOMIC_ACQUIRE))
		pp_pcp_lock_slow(pcp);
	if (pcp->asym)
		__atomic_store_n(&pcp->stop, 1, __ATOMIC_RELAXED);
}

/* After the membarrier: the owner is out of any call, and stays out. */
static void hold_wait(struct pp_pcp *pcp)
{
	if (!pcp->asym)
		return;
	for (int i = 0; __atomic_load_n(&pcp->busy, __ATOMIC_ACQUIRE); i++) {
		if (i < 128)
			cpu_relax();
		else
			sched_yield();
	}
}

void pp_pcp_hold(struct pp_pcp *pcp)
{
	hold_begin(pcp);
	if (pcp->asym)
		pp_os_membarrier();
	hold_wait(pcp);
}

void pp_pcp_release(struct pp_pcp *pcp)
{
	if (pcp->asym)
		__atomic_store_n(&pcp->stop, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&pcp->lock, 0, __ATOMIC_RELEASE);
}

/* Every cache of @alloc, with one membarrier() for all of them. */
void pp_pcp_hold_all(struct pp_allocator *alloc)
{
	bool any_asym = false;

	for (struct pp_pcp *pcp = alloc->pcp_list; pcp; pcp = pcp->next) {
		hold_begin(pcp);
		any_asym |= pcp->asym;
	}
	if (any_asym)
		pp_os_membarrier();
	for (struct pp_pcp *pcp = alloc->pcp_list; pcp; pcp = pcp->next)
		hold_wait(pcp);
}

void pp_pcp_release_all(struct pp_allocator *alloc)
{
	for (struct pp_pcp *pcp = alloc->pcp_list; pcp; pcp = pcp->next)
		pp_pcp_release(pcp);
}

static struct pp_pcp *pcp_create(struct pp_allocator *alloc)
{
	size_t head = sizeof(struct pp_pcp) +
		      alloc->nr_zones * sizeof(struct pcp_zone);
	size_t stack = (size_t)alloc->pcp_high * sizeof(struct pp_page *);
	struct pp_pcp *pcp;
	void *mem;

	head = (head + PP_CACHE_LINE - 1) & ~(size_t)(PP_CACHE_LINE - 1);
	if (pp_os_posix_memalign(&mem, PP_CACHE_LINE,
				 head + alloc->nr_zones * stack))
		return NULL;
	pcp = mem;
	memset(pcp, 0, head);
	pthread_once(&asym_once, asym_decide);
	pcp->asym = asym_on;
	pcp->nr_zones = alloc->nr_zones;
	pcp->alloc = alloc;
	for (unsigned int i = 0; i < alloc->nr_zones; i++)
		pcp->z[i].stack = (struct pp_page **)((char *)mem + head +
						      i * stack);
	return pcp;
}

struct pp_pcp *pp_pcp_get_slow(struct pp_allocator *alloc)
{
	struct pp_pcp *pcp = pthread_getspecific(alloc->key);

	if (!pcp) {
		pcp = pcp_create(alloc);
		if (!pcp)
			return NULL;
		if (pthread_setspecific(alloc->key, pcp)) {
			free(pcp);
			return NULL;
		}
		pthread_mutex_lock(&alloc->pcp_list_lock);
		pcp->next = alloc->pcp_list;
		if (pcp->next)
			pcp->next->prev = pcp;
		alloc->pcp_list = pcp;
		pthread_mutex_unlock(&alloc->pcp_list_lock);
	}
	pp_pcp_memo.id = alloc->id;
	pp_pcp_memo.pcp = pcp;
	return pcp;
}

void pp_pcp_drain_locked(struct pp_pcp *pcp, bool remote)
{
	struct pp_allocator *alloc = pcp->alloc;

	for (unsigned int i = 0; i < pcp->nr_zones; i++) {
		struct pcp_zone *pcz = &pcp->z[i];
		struct pp_zone *z = &alloc->zones[i];

		if (!pcz->count)
			continue;
		zone_lock(z);
		pp_zone_put_order0(z, pcz->stack, pcz->count);
		zone_unlock(z);
		zone_count(remote ? &z->remote_drains : &z->pcp_drains, 1);
		pcz->count = 0;
	}
}

void pp_pcp_fold_counters(struct pp_pcp *pcp)
{
	for (unsigned int i = 0; i < pcp->nr_zones; i++) {
		struct pp_counters *from = &pcp->z[i].c;
		struct pp_counters *to = &pcp->alloc->zones[i].retired;

		zone_count(&to->alloc_calls, counter_read(&from->alloc_calls));
		zone_count(&to->bulk_calls, counter_read(&from->bulk_calls));
		zone_count(&to->pages_allocated,
			   counter_read(&from->pages_allocated));
		zone_count(&to->pages_freed, counter_read(&from->pages_freed));
		zone_count(&to->alloc_failed,
			   counter_read(&from->alloc_failed));
	}
}

static void pcp_unlink(struct pp_allocator *alloc, struct pp_pcp *pcp)
{
	if (pcp->prev)
		pcp->prev->next = pcp->next;
	else
		alloc->pcp_list = pcp->next;
	if (pcp->next)
		pcp->next->prev = pcp->prev;
}

/*
 * The key's destructor: the thread is exiting, give its pages back.
 * If a later destructor of the same thread uses the allocator again, a
 * new cache is made and glibc calls us once more for it.
 */
void pp_pcp_destructor(void *arg)
{
	struct pp_pcp *pcp = arg;
	struct pp_allocator *alloc = pcp->alloc;

	pthread_mutex_lock(&alloc->pcp_list_lock);
	pcp_unlink(alloc, pcp);
	pcp_lock(pcp);
	pp_pcp_drain_locked(pcp, false);
	pp_pcp_fold_counters(pcp);
	pcp_unlock(pcp);
	pthread_mutex_unlock(&alloc->pcp_list_lock);
	if (pp_pcp_memo.pcp == pcp) {
		pp_pcp_memo.id = 0;
		pp_pcp_memo.pcp = NULL;
	}
	free(pcp);
}

unsigned long pp_pcp_drain_all(struct pp_allocator *alloc)
{
	struct pp_pcp *self = pthread_getspecific(alloc->key);
	unsigned long moved = 0;

	pthread_mutex_lock(&alloc->pcp_list_lock);
	/*
	 * The caller's own cache too: it is outside a call on it here (the
	 * allocation paths drain only after unlocking), and the hold keeps
	 * the other owners out.
	 */
	pp_pcp_hold_all(alloc);
	for (struct pp_pcp *pcp = alloc->pcp_list; pcp; pcp = pcp->next) {
		for (unsigned int i = 0; i < pcp->nr_zones; i++)
			moved += pcp->z[i].count;
		pp_pcp_drain_locked(pcp, pcp != self);
	}
	pp_pcp_release_all(alloc);
	pthread_mutex_unlock(&alloc->pcp_list_lock);
	return moved;
}

void pp_pcp_free_all(struct pp_allocator *alloc)
{
	struct pp_pcp *pcp = alloc->pcp_list;

	while (pcp) {
		struct pp_pcp *next = pcp->next;

		pp_pcp_drain_locked(pcp, false);
		free(pcp);
		pcp = next;
	}
	alloc->pcp_list = NULL;
}
