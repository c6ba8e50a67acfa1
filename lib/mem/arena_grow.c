/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * arena_grow.c - a growable arena's life after creation: committing and
 * releasing slots, the listeners that map every committed segment (DMA
 * domains), the pins of consumers that register memory once, and the
 * segment list everyone reads. Building a slot is arena.c's
 * (pp_arena_commit_slot()); this file decides when and tells listeners.
 *
 * Everything here runs under the arena's lock: growth and release are
 * control-path calls (an allocator's growth thread), and a listener's map
 * runs with the lock held so that no segment can be released under it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pp_log.h"
#include "arena_priv.h"

static void arena_lock(const struct pp_arena *arena)
{
	pthread_mutex_lock(&((struct pp_arena *)arena)->lock);
}

static void arena_unlock(const struct pp_arena *arena)
{
	pthread_mutex_unlock(&((struct pp_arena *)arena)->lock);
}

size_t pp_arena_slot_size(const struct pp_arena *arena)
{
	return arena->slot_size;
}

unsigned int pp_arena_slot_count(const struct pp_arena *arena)
{
	return arena->nr_slots;
}

unsigned int pp_arena_min_slots(const struct pp_arena *arena)
{
	return arena->min_slots;
}

unsigned int pp_arena_segment_count(const struct pp_arena *arena)
{
	unsigned int n;

	arena_lock(arena);
	n = arena->nr_committed;
	arena_unlock(arena);
	return n;
}

int pp_arena_segment(const struct pp_arena *arena, unsigned int idx,
		     struct pp_arena_segment *out)
{
	int err = -EINVAL;

	if (!arena || !out)
		return -EINVAL;
	arena_lock(arena);
	for (unsigned int k = 0; k < arena->nr_slots; k++) {
		if (!arena->seg[k].addr)
			continue;
		if (idx-- == 0) {
			*out = arena->seg[k];
			err = 0;
			break;
		}
	}
	arena_unlock(arena);
	return err;
}

/* Unmap @seg from the listeners from @l up to @stop (all: NULL), the
 * newest first: the reverse of the order they mapped it in. */
static void unmap_listeners(struct pp_arena_listener *l,
			    const struct pp_arena_listener *stop,
			    const struct pp_arena_segment *seg)
{
	if (l == stop)
		return;
	unmap_listeners(l->next, stop, seg);
	if (l->unmap)
		l->unmap(l->ctx, seg);
}

static int refuse_pinned(const struct pp_arena *arena, const char *what)
{
	PP_ERR("arena '%s': cannot %s: the arena is fixed at %zu MiB because %s registers it once (the kernel or the peer cannot follow a change): use an arena of its own for that consumer, sized for its peak",
	       arena->name, what, arena->committed_bytes >> 20,
	       arena->pinned_by);
	return -EPERM;
}

int pp_arena_grow(struct pp_arena *arena)
{
	struct pp_arena_listener *l;
	unsigned int k;
	int err;

	arena_lock(arena);
	if (arena->pins) {
		err = refuse_pinned(arena, "grow");
		goto out;
	}
	for (k = 0; k < arena->nr_slots; k++)
		if (!arena->seg[k].addr)
			break;
	if (k == arena->nr_slots) {
		PP_ERR("arena '%s': cannot grow past its max_size of %zu MiB: give it a larger max_size",
		       arena->name, arena->size >> 20);
		err = -ENOSPC;
		goto out;
	}
	err = pp_arena_commit_slot(arena, k);
	if (err == -ENOSPC) {
		/* A shortage, said once here (creation says it its way). */
		PP_ERR("arena '%s': growing by %zu MiB failed: too few free %s hugepages%s: reserve more (pp-hugepages, or /sys/kernel/mm/hugepages)",
		       arena->name, arena->slot_size >> 20,
		       pp_arena_size_name(arena->page_size),
		       arena->want_node >= 0 ? " on its node" : "");
		err = -ENOMEM;
	}
	if (err)
		goto out;
	/* Every listener maps it before anyone hands out a page of it. */
	for (l = arena->listeners; l; l = l->next) {
		err = l->map ? l->map(l->ctx, &arena->seg[k]) : 0;
		if (err) {
			unmap_listeners(arena->listeners, l, &arena->seg[k]);
			pp_arena_uncommit_slot(arena, k);
			goto out;
		}
	}
	err = (int)k;
out:
	arena_unlock(arena);
	return err;
}

int pp_arena_release(struct pp_arena *arena, unsigned int slot)
{
	int err = 0;

	arena_lock(arena);
	if (arena->pins) {
		err = refuse_pinned(arena, "give memory back");
	} else if (slot < arena->min_slots || slot >= arena->nr_slots ||
		   !arena->seg[slot].addr) {
		PP_ERR("arena '%s': slot %u cannot be released: it is %s",
		       arena->name, slot,
		       slot < arena->min_slots ? "part of the minimum" :
						 "not committed");
		err = -EINVAL;
	} else {
		unmap_listeners(arena->listeners, NULL,
				&arena->seg[slot]);
		pp_arena_uncommit_slot(arena, slot);
	}
	arena_unlock(arena);
	return err;
}

int pp_arena_listen(struct pp_arena *arena, struct pp_arena_listener *l)
{
	unsigned int k;
	int err = 0;

	arena_lock(arena);
	for (k = 0; k < arena->nr_slots && !err; k++)
		if (arena->seg[k].addr && l->map)
			err = l->map(l->ctx, &arena->seg[k]);
	if (err) {
		/* Slot k - 1 failed: undo the ones below it. */
		for (k -= 1; k-- > 0;)
			if (arena->seg[k].addr && l->unmap)
				l->unmap(l->ctx, &arena->seg[k]);
		goto out;
	}
	/* At the tail: a slot is mapped in listening order. */
	l->next = NULL;
	if (!arena->listeners) {
		arena->listeners = l;
	} else {
		struct pp_arena_listener *t = arena->listeners;

		while (t->next)
			t = t->next;
		t->next = l;
	}
out:
	arena_unlock(arena);
	return err;
}

void pp_arena_unlisten(struct pp_arena *arena, struct pp_arena_listener *l)
{
	struct pp_arena_listener **p;

	arena_lock(arena);
	for (p = &arena->listeners; *p; p = &(*p)->next) {
		if (*p == l) {
			*p = l->next;
			break;
		}
	}
	for (unsigned int k = arena->nr_slots; k-- > 0;)
		if (arena->seg[k].addr && l->unmap)
			l->unmap(l->ctx, &arena->seg[k]);
	arena_unlock(arena);
}

int pp_arena_pin(struct pp_arena *arena, const char *who, size_t *len)
{
	unsigned int k, top = 0;
	int err = 0;

	arena_lock(arena);
	for (k = 0; k < arena->nr_slots; k++)
		if (arena->seg[k].addr)
			top = k + 1;
	if (arena->nr_committed != top) {
		PP_ERR("arena '%s': %s cannot register it: its memory is not contiguous (%u of the %u slots below the highest committed one were given back); grow it again first, or give the consumer an arena of its own",
		       arena->name, who, top - arena->nr_committed, top);
		err = -EBUSY;
		goto out;
	}
	if (!__atomic_fetch_add(&arena->pins, 1, __ATOMIC_RELAXED))
		snprintf(arena->pinned_by, sizeof(arena->pinned_by), "%s",
			 who);
	*len = (size_t)top * arena->slot_size;
out:
	arena_unlock(arena);
	return err;
}

void pp_arena_unpin(struct pp_arena *arena)
{
	arena_lock(arena);
	if (arena->pins &&
	    __atomic_sub_fetch(&arena->pins, 1, __ATOMIC_RELAXED) == 0)
		arena->pinned_by[0] = '\0';
	arena_unlock(arena);
}

bool pp_arena_pinned(const struct pp_arena *arena)
{
	return __atomic_load_n(&arena->pins, __ATOMIC_RELAXED) != 0;
}

int pp_arena_segment_of(const struct pp_arena *arena, const void *addr,
			struct pp_arena_segment *out)
{
	uintptr_t off = (uintptr_t)addr - (uintptr_t)arena->base;
	unsigned int k;
	int err = -EINVAL;

	if (off >= arena->size)
		return -EINVAL;
	k = (unsigned int)(off / arena->slot_size);
	arena_lock(arena);
	if (k < arena->nr_slots && arena->seg[k].addr) {
		*out = arena->seg[k];
		err = 0;
	}
	arena_unlock(arena);
	return err;
}
