/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_arena_user.h - what the layers above lib/mem may know about an arena
 * beyond pp_arena.h: the user count that makes pp_arena_destroy() refuse
 * (-EBUSY) while an allocator is built on the arena.
 */
#ifndef PP_INTERNAL_ARENA_USER_H
#define PP_INTERNAL_ARENA_USER_H

#include <pagepool/pp_arena.h>

/*
 * pp_arena_get_user - count one more user of @arena (an allocator takes
 * one per arena in pp_allocator_create()). Returns 0, -EINVAL for NULL, or
 * -ENODEV when the arena is being destroyed (the caller raced destroy:
 * its own bug, reported rather than ignored).
 * Context: any thread.
 */
int pp_arena_get_user(struct pp_arena *arena);

/*
 * pp_arena_put_user - drop a user taken with pp_arena_get_user(); once
 * the last is dropped pp_arena_destroy() may succeed.
 * Context: any thread.
 */
void pp_arena_put_user(struct pp_arena *arena);

#endif /* PP_INTERNAL_ARENA_USER_H */
