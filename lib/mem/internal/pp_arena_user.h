/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_arena_user.h - what the layers above lib/mem may know about an arena
 * beyond pp_arena.h: the user count that makes pp_arena_destroy() refuse
 * (-EBUSY) while an allocator is built on the arena, and a growable
 * arena's slots, listeners and pins (doc/growth.md).
 *
 * Lock order: the allocator's growth lock, then the arena's lock (every
 * call below takes it), then whatever a listener takes (a DMA domain's
 * lock). A listener never calls back into the arena.
 */
#ifndef PP_INTERNAL_ARENA_USER_H
#define PP_INTERNAL_ARENA_USER_H

#include <stdbool.h>
#include <stddef.h>

#include <pagepool/pp_arena.h>

/* Shared between the component libraries but not exported. */
#ifndef PP_HIDDEN
#define PP_HIDDEN __attribute__((visibility("hidden")))
#endif

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

/*
 * Slots: the arena's span cut into pp_arena_slot_count() slots of
 * pp_arena_slot_size() bytes, slot k at base + k * slot size, each
 * committed (one segment: its own file, mapped, populated, on the node,
 * mapped by every listener) or not (PROT_NONE). A fixed arena has one
 * slot, its whole size, always committed. Slots below
 * pp_arena_min_slots() are committed at creation and never released.
 */
PP_HIDDEN size_t pp_arena_slot_size(const struct pp_arena *arena);
PP_HIDDEN unsigned int pp_arena_slot_count(const struct pp_arena *arena);
PP_HIDDEN unsigned int pp_arena_min_slots(const struct pp_arena *arena);

/*
 * pp_arena_grow - commit the lowest uncommitted slot: create its file,
 * take its pages on the arena's node, map, populate and check them, then
 * map it in every listener, in the order they listen. Returns the slot
 * index, or -errno after one message, with nothing left committed or
 * mapped: -ENOSPC (the arena is at max_size), -EPERM (a consumer pinned
 * the arena, the message names it), -ENOMEM (hugepages short, the
 * message says what to reserve), a listener's error, a kernel call's.
 * Context: a control thread; never the data path (it faults memory in).
 */
PP_HIDDEN int pp_arena_grow(struct pp_arena *arena);

/*
 * pp_arena_release - give slot @slot back: unmap it in every listener
 * (the reverse order), replace it with PROT_NONE and close its file, so
 * its hugepages return to the kernel's free pool. The caller guarantees
 * that nothing uses a byte of it. Returns 0, -EINVAL (not committed, or
 * below the minimum) or -EPERM (pinned).
 */
PP_HIDDEN int pp_arena_release(struct pp_arena *arena, unsigned int slot);

/*
 * A listener: told of every segment that is committed (map) or released
 * (unmap) while it listens. map returns 0 or -errno after its message;
 * when it fails the segment is not committed (listeners mapped before it
 * are unmapped). Called with the arena's lock held.
 */
struct pp_arena_listener {
	int (*map)(void *ctx, const struct pp_arena_segment *seg);
	void (*unmap)(void *ctx, const struct pp_arena_segment *seg);
	void *ctx;
	struct pp_arena_listener *next; /* the arena's */
};

/*
 * pp_arena_listen - call @l->map for every committed segment, in address
 * order, and add @l. Returns 0, or the first error of @l->map (the
 * segments it mapped are unmapped; @l is not added).
 */
PP_HIDDEN int pp_arena_listen(struct pp_arena *arena,
			      struct pp_arena_listener *l);
/* pp_arena_unlisten - remove @l, then call @l->unmap for every committed
 * segment, in reverse address order. */
PP_HIDDEN void pp_arena_unlisten(struct pp_arena *arena,
				 struct pp_arena_listener *l);

/* Pins (pp_arena_pin()) are public: pp_arena.h. */

/*
 * pp_arena_segment_of - the committed segment that holds @addr, found by
 * its slot under one hold of the arena's lock (an index into
 * pp_arena_segment() can shift while another slot is committed or
 * released). Returns 0, or -EINVAL when @addr lies outside the span or in
 * a slot that is not committed. The caller keeps the segment from going
 * (it holds an allocated page of it, or a pin). Not for listeners.
 */
PP_HIDDEN int pp_arena_segment_of(const struct pp_arena *arena,
				  const void *addr,
				  struct pp_arena_segment *out);

#endif /* PP_INTERNAL_ARENA_USER_H */
