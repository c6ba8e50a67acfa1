/* SPDX-License-Identifier: BSD-3-Clause */
/* pagepool.h - everything an application needs, in layer order. */
#ifndef PAGEPOOL_PAGEPOOL_H
#define PAGEPOOL_PAGEPOOL_H

#include <pagepool/pp_common.h>
#include <pagepool/pp_config.h>
#include <pagepool/pp_arena.h>
#include <pagepool/pp_page.h>
#include <pagepool/pp_vmalloc.h>
#include <pagepool/pp_dma.h>
#include <pagepool/pp_page_pool.h>

#endif /* PAGEPOOL_PAGEPOOL_H */
