/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool_mp_priv.h - what the files of the "pagepool" rte_mempool ops
 * driver share: the pool's state and each file's entry points. Never
 * installed; nothing here leaves the plugin (it is built with hidden
 * visibility, and DPDK finds the ops through the constructor that
 * RTE_MEMPOOL_REGISTER_OPS makes).
 *
 * One concern per file:
 *   pagepool_mp_ops.c          the ops table, alloc and free, the
 *                              one-process guard
 *   pagepool_mp_arena.c        the arena, its DMA domain and the DPDK
 *                              external heap made of it
 *   pagepool_mp_populate.c     slicing chunks into objects, IOVA checks
 *   pagepool_mp_store.c        free objects: the ring, get, put, count
 *   pagepool_mp_magazine.c     pools without a DPDK cache: per-lcore
 *                              magazines in front of the ring, the drain
 *   pagepool_mp_magazine.h     the magazines' fast paths, inline into
 *                              the enqueue and dequeue ops
 *   pagepool_mp_owner_check.c  debug builds: puts of foreign pointers
 */
#ifndef PAGEPOOL_MP_PRIV_H
#define PAGEPOOL_MP_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_log.h>
#include <rte_mempool.h>

#include <pagepool/pagepool.h>

#define PMP_LOG(level, fmt, ...)                                            \
	RTE_LOG(level, MEMPOOL, "pagepool: " fmt "\n", ##__VA_ARGS__)

/*
 * The longest external heap name, with its NUL: DPDK's internal
 * RTE_HEAP_NAME_MAX_LEN (malloc_heap.h), which no public header exports.
 */
#define PMP_HEAP_NAME_LEN 32

struct pagepool_mp_mag;

struct pagepool_mp {
	/* Hot: read by every enqueue and dequeue. */
	struct rte_ring *store;      /* free objects outside the magazines */
	uint32_t mag_cap;            /* objects a magazine holds; 0: none */
	uint32_t mag_direct;         /* bigger requests skip the magazine */
	struct pagepool_mp_mag *mag_of[RTE_MAX_LCORE]; /* NULL: no EAL lcore */

	/* Cold: setup, teardown and the slow paths. */
	uintptr_t base;              /* the arena */
	size_t len;
	size_t page_size;            /* the arena's pages */
	unsigned int page_order;     /* page_size as 4 KiB << order */
	struct pp_arena *arena;
	struct pp_dma *dma;
	void *mags;                  /* one block for all magazines */
	uint32_t nr_arena;           /* objects populated from the arena */
	uint32_t nr_foreign;         /* objects populated from foreign chunks */
	uint32_t teardown_misses;    /* failed gets while DPDK empties the pool */
	uintptr_t populating;        /* the chunk populate slices, or 0 */
	uintptr_t populating_end;
	int app_socket;              /* mp->socket_id while the heap's is lent */
	bool heap_added;             /* the arena is in the external heap */
	char heap_name[PMP_HEAP_NAME_LEN];
};

/*
 * The one-process guard (pagepool_mp_ops.c). pagepool_mp_here is set by
 * the first successful alloc in this process; a process that created no
 * pagepool pool and still reaches an op (a secondary process whose ops
 * index lands here) gets false from pagepool_mp_usable(), which says so
 * once. The data path reads the flag itself and calls the function only
 * when it is clear.
 */
extern bool pagepool_mp_here;
bool pagepool_mp_usable(const char *op);

/* pagepool_mp_arena.c: the arena sized for @mp (and the store, which
 * lives in it), mapped in a DMA domain that matches the EAL's IOVA
 * mode, and added to DPDK as the external heap "pp:<name>", whose
 * socket id is lent to @mp until populate fills the pool. 0 or -errno,
 * said. */
int pagepool_mp_arena_create(struct rte_mempool *mp, struct pagepool_mp *p);
/* Remove the heap; -EBUSY (said) while DPDK memory is reserved from it. */
int pagepool_mp_heap_remove(struct rte_mempool *mp, struct pagepool_mp *p);
/* Remove the heap, unmap and destroy the DMA domain and the arena;
 * -EBUSY and nothing more when the heap cannot go. */
int pagepool_mp_arena_destroy(struct rte_mempool *mp, struct pagepool_mp *p);
/* The IOVA of @addr, inside the arena, or RTE_BAD_IOVA. */
rte_iova_t pagepool_mp_arena_iova(const struct pagepool_mp *p, uintptr_t addr);

/* pagepool_mp_store.c */
ssize_t pagepool_mp_store_bytes(unsigned int size);
int pagepool_mp_store_create(struct rte_mempool *mp, struct pagepool_mp *p,
			     int socket);
void pagepool_mp_store_free(struct pagepool_mp *p);
/* Into the ring itself (the magazines spill and drain through it). */
void pagepool_mp_store_put(struct rte_mempool *mp, struct pagepool_mp *p,
			   void *const *objs, unsigned int n);
/* Free @n objects the way the pool does: its magazines, or the ring. */
void pagepool_mp_put(struct rte_mempool *mp, struct pagepool_mp *p,
		     void *const *objs, unsigned int n);
int pagepool_mp_enqueue(struct rte_mempool *mp, void *const *obj_table,
			unsigned int n);
int pagepool_mp_dequeue(struct rte_mempool *mp, void **obj_table,
			unsigned int n);
unsigned int pagepool_mp_get_count(const struct rte_mempool *mp);

/*
 * pagepool_mp_magazine.c: a pool whose mp->cache_size is 0 gets one
 * magazine per EAL lcore, its one per-lcore cache; any other pool gets
 * none (mag_cap stays 0) and has DPDK's cache instead.
 */
/* Arena bytes of @mp's magazines; 0 when it gets none. */
size_t pagepool_mp_mag_bytes(const struct rte_mempool *mp);
/* The magazines from the pool's heap (socket @socket); 0 or -ENOMEM,
 * said. */
int pagepool_mp_mag_create(struct rte_mempool *mp, struct pagepool_mp *p,
			   int socket);
void pagepool_mp_mag_free(struct pagepool_mp *p);
/* Data path of a pool with magazines: get is all or nothing (0 or
 * -ENOBUFS, @objs untouched), put never fails. */
int pagepool_mp_mag_get(struct rte_mempool *mp, struct pagepool_mp *p,
			void **objs, unsigned int n);
void pagepool_mp_mag_put(struct rte_mempool *mp, struct pagepool_mp *p,
			 void *const *objs, unsigned int n);
unsigned int pagepool_mp_mag_count(const struct pagepool_mp *p);

/* pagepool_mp_populate.c */
int pagepool_mp_populate(struct rte_mempool *mp, unsigned int max_objs,
			 void *vaddr, rte_iova_t iova, size_t len,
			 rte_mempool_populate_obj_cb_t *obj_cb,
			 void *obj_cb_arg);

/* pagepool_mp_owner_check.c: debug builds put through this, which
 * leaves out (and logs) every pointer that is no object of @mp. */
void pagepool_mp_put_checked(struct rte_mempool *mp, void *const *obj_table,
			     unsigned int n);

#endif /* PAGEPOOL_MP_PRIV_H */
