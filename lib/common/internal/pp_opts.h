/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_opts.h - the one rule for options structs that carry their own
 * size in a first field `size_t sz` (doc/api.md, "Options structs"):
 *
 *   - sz below the struct's first published size is refused: the caller
 *     did not set it (0) or set it to something else;
 *   - sz above what this version knows is accepted when every byte this
 *     version does not know is zero: a program built against newer headers
 *     that uses no new field runs on an older library;
 *   - sz between the two (a program built against older headers, once a
 *     struct has grown) reads the missing fields as zero: a caller then
 *     works on a copy (pp_opts_copy()), never on the short struct.
 *
 * Each refusal logs a message that names the struct and what to write.
 */
#ifndef PP_INTERNAL_OPTS_H
#define PP_INTERNAL_OPTS_H

#include <stddef.h>

/*
 * pp_opts_valid - check @opts (may be NULL: refused) against the rule.
 * @min: its first published size; @known: sizeof it in this version;
 * @what: its name in messages ("struct pp_arena_opts").
 * Returns 0 or -EINVAL after a message. With @min < @known the caller
 * must not read @opts past its sz: use pp_opts_copy().
 */
int pp_opts_valid(const void *opts, size_t min, size_t known,
		  const char *what);

/*
 * pp_opts_copy - pp_opts_valid(), then copy @opts into @dst (@known
 * bytes): the fields a short struct lacks are zero, and dst's sz is
 * @known.
 */
int pp_opts_copy(void *dst, const void *opts, size_t min, size_t known,
		 const char *what);

#endif /* PP_INTERNAL_OPTS_H */
