/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp_umem.c - one UMEM per arena: the whole arena (one contiguous
 * range of 4 KiB frames) registered with the kernel once, shared by every
 * queue and port of the process that uses that arena, by reference count
 * under af_xdp_lock. A page's UMEM address is its address minus the
 * arena base.
 *
 * The kernel takes the UMEM's size once, at registration: a growable
 * arena (doc/growth.md) is pinned for the UMEM's life (pp_arena_pin()),
 * so it neither grows nor gives memory back while the UMEM exists, and
 * the UMEM covers what is committed then, from the base.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_log.h"
#include "af_xdp_ctl_priv.h"

static struct xdp_umem *af_xdp_umems; /* under af_xdp_lock */

void af_xdp_umem_put(struct xdp_umem *um)
{
	struct xdp_umem **pp;
	int err;

	if (--um->refs)
		return;
	err = xsk_umem__delete(um->umem);
	if (err)
		PP_ERR("af_xdp: cannot delete the UMEM of arena %s: %s",
		       pp_arena_name(um->arena), strerror(-err));
	pp_arena_unpin(um->arena);
	for (pp = &af_xdp_umems; *pp; pp = &(*pp)->next) {
		if (*pp == um) {
			*pp = um->next;
			break;
		}
	}
	free(um);
}

/*
 * The UMEM over @arena, registering it on first use (by port @port, whom
 * the pin names). @ring_size sizes the fill and completion rings of every
 * queue that uses it.
 */
struct xdp_umem *af_xdp_umem_get(struct pp_allocator *alloc,
				 struct pp_arena *arena, const char *port,
				 unsigned int ring_size,
				 unsigned int headroom, int *errp)
{
	struct xsk_umem_config cfg = {
		/* Twice the RX ring: the kernel always has buffers while a
		 * full RX ring waits for us. */
		.fill_size = ring_size * 2,
		.comp_size = ring_size,
		.frame_size = PP_PAGE_SIZE,
		/* The kernel puts XDP_PACKET_HEADROOM (256) in front of the
		 * data on its own; frame_headroom is what we want beyond. */
		.frame_headroom = headroom > 256 ? headroom - 256 : 0,
		.flags = 0,
	};
	char who[96];
	struct xdp_umem *um;
	struct pp_page *last;
	size_t len;
	int err;

	for (um = af_xdp_umems; um; um = um->next) {
		if (um->arena == arena) {
			um->refs++;
			return um;
		}
	}
	um = pp_os_calloc(1, sizeof(*um));
	if (!um) {
		PP_ERR("af_xdp: out of memory for the UMEM of arena %s",
		       pp_arena_name(arena));
		*errp = -ENOMEM;
		return NULL;
	}
	um->arena = arena;
	um->base = pp_arena_base(arena);
	snprintf(who, sizeof(who), "the AF_XDP UMEM of port %s", port);
	err = pp_arena_pin(arena, who, &len);
	if (err) {
		free(um);
		*errp = err;
		return NULL;
	}
	um->size = len;
	um->first = pp_virt_to_page(alloc, um->base);
	last = pp_virt_to_page(alloc, um->base + um->size - PP_PAGE_SIZE);
	/* The fast path finds descriptors by index: they must be dense. */
	if (!um->first || last != um->first + (um->size >> PP_PAGE_SHIFT) - 1) {
		PP_ERR("af_xdp: arena %s is not one dense range of page descriptors",
		       pp_arena_name(arena));
		pp_arena_unpin(arena);
		free(um);
		*errp = -EINVAL;
		return NULL;
	}
	err = XDP_FAIL_RC(ENOMEM, xsk_umem__create(&um->umem, um->base,
						   um->size, &um->fill0,
						   &um->comp0, &cfg));
	if (err) {
		char why[256];
		const char *hint = af_xdp_fd_hint(&err, why, sizeof(why));

		PP_ERR("af_xdp: cannot register arena %s (%llu MiB) as a UMEM: %s (%s)",
		       pp_arena_name(arena),
		       (unsigned long long)(um->size >> 20), strerror(-err),
		       hint ? hint : "needs root or a large enough RLIMIT_MEMLOCK");
		pp_arena_unpin(arena);
		free(um);
		*errp = err;
		return NULL;
	}
	um->refs = 1;
	um->next = af_xdp_umems;
	af_xdp_umems = um;
	return um;
}
