/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unregister.c - the hook through which a layer above (lib/telemetry)
 * forgets objects that lower layers free: pp_unregister.h says why.
 */
#include <stddef.h>

#include "pp_unregister.h"

static pp_unregister_fn unregister_hook;

void pp_unregister_hook_set(pp_unregister_fn fn)
{
	__atomic_store_n(&unregister_hook, fn, __ATOMIC_RELEASE);
}

void pp_unregister_obj(const void *obj)
{
	pp_unregister_fn fn = __atomic_load_n(&unregister_hook,
					      __ATOMIC_ACQUIRE);

	if (fn && obj)
		fn(obj);
}
