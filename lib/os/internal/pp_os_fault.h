/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_os_fault.h - the fault-injection seam: one check that every
 * kernel call in lib/os and every heap allocation in the library passes
 * through, so a test can make the N-th of them fail with the errno the
 * real call would give.
 *
 * Built in only with -Dfault_injection=true (PP_FAULT_INJECTION). In every
 * other build PP_OS_FAULT() is the constant 0 and the allocation wrappers
 * are the libc calls, so release code pays nothing.
 *
 * What is not a site: calls that undo something (munmap, munlock, close,
 * the restoring set_mempolicy, VFIO unmap and unset-container). Failing
 * them would only make cleanup impossible; no caller can do anything
 * about such a failure but leak.
 */
#ifndef PP_INTERNAL_OS_FAULT_H
#define PP_INTERNAL_OS_FAULT_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#define PP_OS_STR_(x) #x
#define PP_OS_STR(x) PP_OS_STR_(x)
/* A site is named by where it is: "lib/mem/arena.c:593". */
#define PP_OS_SITE __FILE__ ":" PP_OS_STR(__LINE__)

/*
 * pp_os_fault_hit - count one hit of @site; returns @err when this hit is
 * the one the test asked to fail, else 0. @site must be a string literal
 * (its address identifies the site). Any thread.
 */
int pp_os_fault_hit(const char *site, int err);

#ifdef PP_FAULT_INJECTION
#define PP_OS_FAULT(err) pp_os_fault_hit(PP_OS_SITE, (err))
#else
#define PP_OS_FAULT(err) 0
#endif

/*
 * PP_OS_FAIL_HERE - at the top of a lib/os call that returns -errno: when
 * this hit is the one to fail, set errno to @err and return -@err, as the
 * kernel call would have. @err is the errno the kernel gives for that
 * call when a resource runs out or is refused.
 */
#define PP_OS_FAIL_HERE(err)                                                \
	do {                                                                \
		int fault_err_ = PP_OS_FAULT(err);                          \
		if (fault_err_) {                                           \
			errno = fault_err_;                                 \
			return -fault_err_;                                 \
		}                                                           \
	} while (0)

/*
 * The library's heap calls. Each is a macro so the site is the caller's
 * line; a failure is what libc gives: NULL (or the return of
 * posix_memalign) with ENOMEM.
 */
/* True, with errno ENOMEM, when this heap call is the one to fail. */
static inline bool pp_os_heap_fails(const char *site)
{
	(void)site;
#ifdef PP_FAULT_INJECTION
	if (pp_os_fault_hit(site, ENOMEM)) {
		errno = ENOMEM;
		return true;
	}
#endif
	return false;
}

static inline void *pp_os_malloc_at(const char *site, size_t len)
{
	return pp_os_heap_fails(site) ? NULL : malloc(len);
}

static inline void *pp_os_calloc_at(const char *site, size_t n, size_t len)
{
	return pp_os_heap_fails(site) ? NULL : calloc(n, len);
}

static inline void *pp_os_aligned_alloc_at(const char *site, size_t align,
					   size_t len)
{
	return pp_os_heap_fails(site) ? NULL : aligned_alloc(align, len);
}

static inline int pp_os_posix_memalign_at(const char *site, void **p,
					  size_t align, size_t len)
{
	return pp_os_heap_fails(site) ? ENOMEM : posix_memalign(p, align, len);
}

#define pp_os_malloc(len) pp_os_malloc_at(PP_OS_SITE, (len))
#define pp_os_calloc(n, len) pp_os_calloc_at(PP_OS_SITE, (n), (len))
#define pp_os_aligned_alloc(align, len)                                     \
	pp_os_aligned_alloc_at(PP_OS_SITE, (align), (len))
#define pp_os_posix_memalign(p, align, len)                                 \
	pp_os_posix_memalign_at(PP_OS_SITE, (p), (align), (len))

/*
 * pp_ring_create() is an inline (lib/common/internal/pp_ring.h) that
 * calls aligned_alloc() itself; the drivers' rings are made through this.
 */
#define pp_os_ring_create(size, flags)                                      \
	(PP_OS_FAULT(ENOMEM) ? (errno = ENOMEM, (struct pp_ring *)NULL) :   \
			       pp_ring_create((size), (flags)))

/* ---- for the test that drives the seam (tests/fault) ---- */

/* Whether this build has the seam (-Dfault_injection=true). */
bool pp_os_fault_enabled(void);

/*
 * pp_os_fault_arm - fail the @nth hit from now (1: the next one); 0
 * disarms. Resets the hit counter and the list of sites seen.
 */
void pp_os_fault_arm(unsigned long nth);

/*
 * pp_os_fault_trace - call @fn with each hit's site (NULL: stop), so a
 * test can see which site each hit is. Before arming; not thread-safe.
 */
void pp_os_fault_trace(void (*fn)(const char *site));

/* Hits since the last pp_os_fault_arm(). */
unsigned long pp_os_fault_hits(void);

/* Distinct sites hit since the last pp_os_fault_arm(). */
unsigned int pp_os_fault_sites(void);

/* The site failed since the last arm, or NULL; its errno into *@err. */
const char *pp_os_fault_fired(int *err);

#endif /* PP_INTERNAL_OS_FAULT_H */
