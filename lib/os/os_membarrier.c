/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_membarrier.c - membarrier(2), the holder's side of the owner/holder
 * handshake (os_handshake.c; the allocator's thread caches and the
 * virtio_user queues use it): one
 * system call makes every running thread of the process execute a full
 * memory barrier, so that a thread's fast path may order a store before a
 * load with a compiler barrier only (an asymmetric Dekker handshake; the
 * rare side pays the system call). PRIVATE_EXPEDITED needs Linux 4.14 and
 * a registration per process; a seccomp policy may refuse either.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/membarrier.h>

#include "pp_os_fault.h"
#include "pp_os.h"

int pp_os_membarrier_register(void)
{
	PP_OS_FAIL_HERE(ENOSYS);
	if (syscall(__NR_membarrier,
		    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) < 0)
		return -errno;
	return 0;
}

void pp_os_membarrier(void)
{
	/*
	 * Registration belongs to the address space, and a forked child gets
	 * a new one without it: there the command fails with EPERM, and the
	 * child registers (once) and asks again.
	 */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) &&
	    errno == EPERM &&
	    !syscall(__NR_membarrier,
		     MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0))
		(void)syscall(__NR_membarrier,
			      MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
}

/* ThreadSanitizer does not know membarrier: it would report the plain
 * side of every handshake as a race. */
#if defined(__SANITIZE_THREAD__)
#define OS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OS_TSAN 1
#endif
#endif
#ifndef OS_TSAN
#define OS_TSAN 0
#endif

static pthread_once_t usable_once = PTHREAD_ONCE_INIT;
static int usable_err;

static void usable_decide(void)
{
	const char *off = getenv("PAGEPOOL_NO_MEMBARRIER");

	if (OS_TSAN || (off && *off && strcmp(off, "0"))) {
		usable_err = -ECANCELED;
		return;
	}
	usable_err = pp_os_membarrier_register();
}

int pp_os_membarrier_usable(void)
{
	pthread_once(&usable_once, usable_decide);
	return usable_err;
}
