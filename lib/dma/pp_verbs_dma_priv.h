/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_verbs_dma_priv.h - the verbs (rdma-core) mode of lib/dma beyond its
 * struct pp_dma_mode (pp_dma_mode_priv.h): the calls of the public verbs
 * API that dma.c forwards. verbs.c owns the memory regions (one ibv_reg_mr
 * per arena segment) and the per-arena key table that makes a page's
 * lkey/rkey an O(1) lookup; a mapped arena's priv is its struct
 * pp_verbs_arena.
 *
 * verbs.c is built only when meson finds libibverbs (it then defines
 * PP_HAVE_VERBS for this library); without it verbs_off.c gives the same
 * symbols, which refuse with -EOPNOTSUPP and one message that says how to
 * get the mode.
 */
#ifndef PP_VERBS_DMA_PRIV_H
#define PP_VERBS_DMA_PRIV_H

#include <stddef.h>
#include <stdint.h>

struct ibv_context;
struct pp_verbs_arena;

/* Keys of [@off, @off + @len) of the arena: 0, -ENOENT when @off lies in
 * a part of a growable arena's span that is not committed, or -EINVAL
 * when the range crosses from one registration into another. Data path. */
int pp_verbs_keys(const struct pp_verbs_arena *va, size_t off, size_t len,
		  uint32_t *lkey, uint32_t *rkey);
unsigned int pp_verbs_arena_mrs(const struct pp_verbs_arena *va);

struct ibv_context *pp_verbs_open(const char *name, unsigned int port);

#endif /* PP_VERBS_DMA_PRIV_H */
