/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread_cache.c - per-thread caches of order-0 pages (the kernel keeps
 * such caches per CPU, its pcp lists; ours are per thread), out of line:
 * creating a thread's cache on first use, returning it when the thread
 * exits, and draining other threads' caches when the zones run dry. The
 * fast path that uses a cache is inline in page_alloc.c.
 *
 * A cache belongs to one (thread, allocator) pair. It is found through
 * the allocator's pthread key (whose destructor returns it at thread
 * exit), with a one-entry thread-local memo in front (tcache_get()). Every
 * cache is also on the allocator's list, so that a starving thread, the
 * invariant walker and pp_allocator_destroy() can reach caches of other
 * threads: they hold a cache with pp_tcache_hold(), which keeps its owner
 * out (the handshake of lib/os, pp_os_handshake.h; page_alloc_priv.h,
 * struct pp_tcache, says how the cache uses it). The statistics
 * walk the list too, but only read (page_check.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "pp_os_fault.h"
#include "pp_os.h"
#include "page_alloc_priv.h"
#include "page_debug_priv.h"

__thread struct pp_tcache_memo_ pp_tcache_memo_
	__attribute__((tls_model("initial-exec")));

/*
 * A cache's handshake takes the lock word where this process has no
 * usable membarrier() (pp_handshake_init()): said once, at the first
 * cache, unless someone turned it off on purpose.
 */
static pthread_once_t lockword_once = PTHREAD_ONCE_INIT;

static void lockword_say(void)
{
	int err = pp_os_membarrier_usable();

	if (err && err != -ECANCELED)
		PP_INFO("allocator: membarrier(PRIVATE_EXPEDITED) unavailable (%s): thread caches take a lock word per call",
			strerror(-err));
}

void pp_tcache_hold(struct pp_tcache *tc)
{
	pp_handshake_hold(&tc->v.hs);
}

void pp_tcache_release(struct pp_tcache *tc)
{
	pp_handshake_release(&tc->v.hs);
}

/* Every cache of @alloc, with one membarrier() for all of them. */
void pp_tcache_hold_all(struct pp_allocator *alloc)
{
	bool sync = false;

	for (struct pp_tcache *tc = alloc->tcache_list; tc; tc = tc->next)
		sync |= pp_handshake_hold_begin(&tc->v.hs);
	if (sync)
		pp_os_membarrier();
	for (struct pp_tcache *tc = alloc->tcache_list; tc; tc = tc->next)
		pp_handshake_hold_wait(&tc->v.hs);
}

void pp_tcache_release_all(struct pp_allocator *alloc)
{
	for (struct pp_tcache *tc = alloc->tcache_list; tc; tc = tc->next)
		pp_tcache_release(tc);
}

static struct pp_tcache *tcache_create(struct pp_allocator *alloc)
{
	size_t head = sizeof(struct pp_tcache) +
		      alloc->nr_zones * sizeof(struct pp_tcache_zone_);
	size_t stack = (size_t)alloc->tcache_size * sizeof(struct pp_page *);
	struct pp_tcache *tc;
	void *mem;

	head = (head + PP_CACHE_LINE - 1) & ~(size_t)(PP_CACHE_LINE - 1);
	if (pp_os_posix_memalign(&mem, PP_CACHE_LINE,
				 head + alloc->nr_zones * stack))
		return NULL;
	tc = mem;
	memset(tc, 0, head);
	if (pp_handshake_init(&tc->v.hs))
		pthread_once(&lockword_once, lockword_say);
	tc->nr_zones = alloc->nr_zones;
	tc->alloc = alloc;
	for (unsigned int i = 0; i < alloc->nr_zones; i++)
		tc->v.z[i].stack = (struct pp_page **)((char *)mem + head +
						     i * stack);
	return tc;
}

struct pp_tcache *pp_tcache_get_slow(struct pp_allocator *alloc)
{
	struct pp_tcache *tc = pthread_getspecific(alloc->key);

	if (!tc) {
		tc = tcache_create(alloc);
		if (!tc)
			return NULL;
		if (pthread_setspecific(alloc->key, tc)) {
			free(tc);
			return NULL;
		}
		pthread_mutex_lock(&alloc->tcache_list_lock);
		tc->next = alloc->tcache_list;
		if (tc->next)
			tc->next->prev = tc;
		alloc->tcache_list = tc;
		pthread_mutex_unlock(&alloc->tcache_list_lock);
	}
	pp_tcache_memo_.id = alloc->id;
	pp_tcache_memo_.tc = tc;
	/* The inline paths serve one zone, without the lock word and without
	 * the debug builds' checks (page_debug_priv.h). */
	pp_tcache_memo_.leaf = pp_handshake_is_asym(&tc->v.hs) &&
			       alloc->nr_zones == 1 && PAGE_HOOKS_NOOP ?
			       &tc->v : NULL;
	return tc;
}

void pp_tcache_drain_locked(struct pp_tcache *tc, bool remote)
{
	struct pp_allocator *alloc = tc->alloc;

	for (unsigned int i = 0; i < tc->nr_zones; i++) {
		struct pp_tcache_zone_ *tcz = &tc->v.z[i];
		struct pp_zone *z = &alloc->zones[i];

		if (!tcz->count)
			continue;
		zone_lock(z);
		pp_zone_put_order0(z, tcz->stack, tcz->count);
		zone_unlock(z);
		zone_count(remote ? &z->remote_drains : &z->thread_cache_drains, 1);
		tcache_set_count(tcz, 0);
	}
}

void pp_tcache_fold_counters(struct pp_tcache *tc)
{
	for (unsigned int i = 0; i < tc->nr_zones; i++) {
		struct pp_tcache_counters_ *from = &tc->v.z[i].c;
		struct pp_tcache_counters_ *to = &tc->alloc->zones[i].retired;

		zone_count(&to->alloc_calls, counter_read(&from->alloc_calls));
		zone_count(&to->bulk_calls, counter_read(&from->bulk_calls));
		zone_count(&to->pages_allocated,
			   counter_read(&from->pages_allocated));
		zone_count(&to->pages_freed, counter_read(&from->pages_freed));
		zone_count(&to->alloc_failed,
			   counter_read(&from->alloc_failed));
	}
}

static void tcache_unlink(struct pp_allocator *alloc, struct pp_tcache *tc)
{
	if (tc->prev)
		tc->prev->next = tc->next;
	else
		alloc->tcache_list = tc->next;
	if (tc->next)
		tc->next->prev = tc->prev;
}

/*
 * The key's destructor: the thread is exiting, give its pages back.
 * If a later destructor of the same thread uses the allocator again, a
 * new cache is made and glibc calls us once more for it.
 */
void pp_tcache_destructor(void *arg)
{
	struct pp_tcache *tc = arg;
	struct pp_allocator *alloc = tc->alloc;

	pthread_mutex_lock(&alloc->tcache_list_lock);
	tcache_unlink(alloc, tc);
	tcache_lock(tc);
	pp_tcache_drain_locked(tc, false);
	pp_tcache_fold_counters(tc);
	tcache_unlock(tc);
	pthread_mutex_unlock(&alloc->tcache_list_lock);
	if (pp_tcache_memo_.tc == tc) {
		pp_tcache_memo_.id = 0;
		pp_tcache_memo_.tc = NULL;
		pp_tcache_memo_.leaf = NULL;
	}
	free(tc);
}

unsigned long pp_tcache_drain_all(struct pp_allocator *alloc)
{
	struct pp_tcache *self = pthread_getspecific(alloc->key);
	unsigned long moved = 0;

	pthread_mutex_lock(&alloc->tcache_list_lock);
	/*
	 * The caller's own cache too: it is outside a call on it here (the
	 * allocation paths drain only after unlocking), and the hold keeps
	 * the other owners out.
	 */
	pp_tcache_hold_all(alloc);
	for (struct pp_tcache *tc = alloc->tcache_list; tc; tc = tc->next) {
		for (unsigned int i = 0; i < tc->nr_zones; i++)
			moved += tc->v.z[i].count;
		pp_tcache_drain_locked(tc, tc != self);
	}
	pp_tcache_release_all(alloc);
	pthread_mutex_unlock(&alloc->tcache_list_lock);
	return moved;
}

void pp_tcache_free_all(struct pp_allocator *alloc)
{
	struct pp_tcache *tc = alloc->tcache_list;

	while (tc) {
		struct pp_tcache *next = tc->next;

		pp_tcache_drain_locked(tc, false);
		free(tc);
		tc = next;
	}
	alloc->tcache_list = NULL;
}
