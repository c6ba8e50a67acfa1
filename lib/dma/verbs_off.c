/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_off.c - IOVA mode verbs in a build without libibverbs (-Dverbs=
 * disabled, or none found): a domain of that mode and pp_dma_verbs_open()
 * are refused with EOPNOTSUPP and one message that says how to get the
 * mode. Built instead of verbs.c; no arena is ever mapped, so the other
 * calls are never reached with an arena of this mode.
 */
#include <errno.h>
#include <stddef.h>

#include "pp_log.h"
#include "pp_dma_mode_priv.h"
#include "pp_verbs_dma_priv.h"

#define VERBS_MISSING \
	"dma: this pagepool was built without the verbs mode (-Dverbs=disabled, or no libibverbs at build time): install libibverbs-dev (rdma-core) and rebuild with -Dverbs=enabled to use IOVA mode verbs"

static int verbs_off_create(const struct pp_dma_opts *opts, void **priv)
{
	(void)opts, (void)priv;
	PP_ERR(VERBS_MISSING);
	return -EOPNOTSUPP;
}

const struct pp_dma_mode pp_dma_mode_verbs = {
	.name = "verbs",
	.xlate = PP_DMA_XLATE_HOOK,
	.create = verbs_off_create,
};

int pp_verbs_keys(const struct pp_verbs_arena *va, size_t off, size_t len,
		  uint32_t *lkey, uint32_t *rkey)
{
	(void)va, (void)off, (void)len, (void)lkey, (void)rkey;
	return -EOPNOTSUPP;
}

unsigned int pp_verbs_arena_mrs(const struct pp_verbs_arena *va)
{
	(void)va;
	return 0;
}

struct ibv_context *pp_verbs_open(const char *name, unsigned int port)
{
	(void)name, (void)port;
	PP_ERR(VERBS_MISSING);
	errno = EOPNOTSUPP;
	return NULL;
}
