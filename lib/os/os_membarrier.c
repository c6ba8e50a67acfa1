/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_membarrier.c - membarrier(2) for the allocator's thread caches: one
 * system call makes every running thread of the process execute a full
 * memory barrier, so that a thread's fast path may order a store before a
 * load with a compiler barrier only (an asymmetric Dekker handshake; the
 * rare side pays the system call). PRIVATE_EXPEDITED needs Linux 4.14 and
 * a registration per process; a seccomp policy may refuse either.
 */
#include <errno.h>
#include <stdlib.h>
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
