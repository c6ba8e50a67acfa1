/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opts.c - checking and copying options structs by their sz field; the
 * rule is written out in pp_opts.h.
 */
#include <errno.h>
#include <string.h>

#include "pp_log.h"
#include "pp_opts.h"

int pp_opts_valid(const void *opts, size_t min, size_t known,
		  const char *what)
{
	const unsigned char *bytes = opts;
	size_t sz, i;

	if (!opts) {
		PP_ERR("%s is NULL: pass one, with sz = sizeof(%s)", what,
		       what);
		return -EINVAL;
	}
	memcpy(&sz, opts, sizeof(sz));
	if (sz < min) {
		PP_ERR("%s: sz is %zu, below its %zu bytes: set sz = sizeof(%s)",
		       what, sz, min, what);
		return -EINVAL;
	}
	for (i = known; i < sz; i++) {
		if (bytes[i]) {
			PP_ERR("%s: sz is %zu and sets fields past the %zu bytes this pagepool knows: build against this version's headers, or leave the new fields zero",
			       what, sz, known);
			return -EINVAL;
		}
	}
	return 0;
}

int pp_opts_copy(void *dst, const void *opts, size_t min, size_t known,
		 const char *what)
{
	size_t sz;

	if (pp_opts_valid(opts, min, known, what))
		return -EINVAL;
	memcpy(&sz, opts, sizeof(sz));
	if (sz > known)
		sz = known;
	memcpy(dst, opts, sz);
	memset((unsigned char *)dst + sz, 0, known - sz);
	memcpy(dst, &known, sizeof(known));
	return 0;
}
