/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_verbs_dma_priv.h - the verbs (rdma-core) backend of lib/dma, as dma.c
 * calls it. dma.c keeps the arena table; verbs.c owns the memory regions
 * (one ibv_reg_mr per arena segment) and the per-arena key table that
 * makes a page's lkey/rkey an O(1) lookup.
 *
 * verbs.c is built only when meson finds libibverbs (it then defines
 * PP_HAVE_VERBS for this library); without it the inline stubs below
 * refuse with -EOPNOTSUPP and one message that says how to get it.
 */
#ifndef PP_VERBS_DMA_PRIV_H
#define PP_VERBS_DMA_PRIV_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_dma.h>

#include "pp_log.h"

struct pp_verbs;
struct pp_verbs_arena;

#if PP_HAVE_VERBS

/* NULL with errno EINVAL (no protection domain) or ENOMEM. */
struct pp_verbs *pp_verbs_create(const struct pp_dma_opts *opts);
void pp_verbs_destroy(struct pp_verbs *v);

/* Register every segment of @arena; 0 or -errno (nothing stays
 * registered on failure). */
int pp_verbs_map_arena(struct pp_verbs *v, struct pp_arena *arena,
		       struct pp_verbs_arena **out);
/* Deregister all of them, pages in flight or not; 0 or the first error. */
int pp_verbs_unmap_arena(struct pp_verbs_arena *va);

/* Keys of [@off, @off + @len) of the arena: 0, or -EINVAL when the range
 * crosses from one registration into another. Data path. */
int pp_verbs_keys(const struct pp_verbs_arena *va, size_t off, size_t len,
		  uint32_t *lkey, uint32_t *rkey);
unsigned int pp_verbs_arena_mrs(const struct pp_verbs_arena *va);

struct ibv_context *pp_verbs_open(const char *name, unsigned int port);

#else /* !PP_HAVE_VERBS */

#define PP_VERBS_MISSING_ \
	"dma: this pagepool was built without the verbs mode (-Dverbs=disabled, or no libibverbs at build time): install libibverbs-dev (rdma-core) and rebuild with -Dverbs=enabled to use IOVA mode verbs"

static inline struct pp_verbs *pp_verbs_create(const struct pp_dma_opts *opts)
{
	(void)opts;
	PP_ERR(PP_VERBS_MISSING_);
	errno = EOPNOTSUPP;
	return NULL;
}

static inline void pp_verbs_destroy(struct pp_verbs *v)
{
	(void)v;
}

static inline int pp_verbs_map_arena(struct pp_verbs *v,
				     struct pp_arena *arena,
				     struct pp_verbs_arena **out)
{
	(void)v, (void)arena, (void)out;
	return -EOPNOTSUPP;
}

static inline int pp_verbs_unmap_arena(struct pp_verbs_arena *va)
{
	(void)va;
	return 0;
}

static inline int pp_verbs_keys(const struct pp_verbs_arena *va, size_t off,
				size_t len, uint32_t *lkey, uint32_t *rkey)
{
	(void)va, (void)off, (void)len, (void)lkey, (void)rkey;
	return -EOPNOTSUPP;
}

static inline unsigned int pp_verbs_arena_mrs(const struct pp_verbs_arena *va)
{
	(void)va;
	return 0;
}

static inline struct ibv_context *pp_verbs_open(const char *name,
						unsigned int port)
{
	(void)name, (void)port;
	PP_ERR(PP_VERBS_MISSING_);
	errno = EOPNOTSUPP;
	return NULL;
}

#endif /* PP_HAVE_VERBS */

#endif /* PP_VERBS_DMA_PRIV_H */
