/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * arena_priv.h - struct pp_arena, shared by arena.c (creation: page size,
 * node, the messages) and arena_grow.c (a growable arena's slots,
 * listeners and pins). Never installed.
 */
#ifndef PP_ARENA_PRIV_H
#define PP_ARENA_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include "pp_arena_user.h"

#define ARENA_NAME_LEN 64
#define ARENA_WHO_LEN 96

struct pp_arena {
	void *base;
	size_t size;		/* the reserved span */
	size_t page_size;
	int node;		/* PP_NUMA_NODE_ANY when pages are mixed */
	bool lock_pages;	/* 4 KiB pages are mlock()ed per slot */
	/*
	 * Allocators using the arena, or USERS_DEAD once destroy has begun.
	 * The release in pp_arena_put_user() pairs with the acquire in
	 * pp_arena_destroy()'s compare-exchange: an allocator's last
	 * accesses to the arena happen before the arena is unmapped.
	 */
	int users;

	/*
	 * Slots: seg[k] covers [base + k * slot_size, + slot_size); its
	 * addr is NULL while it is not committed. A fixed arena has one.
	 * Changed under @lock; committed_bytes is also read racily.
	 */
	pthread_mutex_t lock;
	size_t slot_size;
	unsigned int nr_slots;
	unsigned int min_slots;
	unsigned int nr_committed;
	size_t committed_bytes;
	struct pp_arena_segment *seg;
	struct pp_arena_listener *listeners;
	unsigned int pins;
	char pinned_by[ARENA_WHO_LEN];	/* the first pin's */

	/* What a slot is built with, kept for growth. */
	int want_node;		/* as asked; PP_NUMA_NODE_ANY */
	unsigned int flags;	/* enum pp_arena_flags */
	char *hugetlbfs_dir;	/* NULL: memfd */
	char name[ARENA_NAME_LEN];
};

/* arena.c: build slot @k (file, pages on the node, mapping, checks). */
int pp_arena_commit_slot(struct pp_arena *arena, unsigned int k);
/* arena.c: the reverse of pp_arena_commit_slot(). */
void pp_arena_uncommit_slot(struct pp_arena *arena, unsigned int k);
const char *pp_arena_size_name(size_t page_size);

#endif /* PP_ARENA_PRIV_H */
