/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs.c - IOVA mode verbs (pp_dma_mode_verbs): arena memory registered
 * with ibv_reg_mr for RDMA devices driven through rdma-core (mlx5-class
 * NICs, soft-RoCE).
 *
 * A verbs device addresses memory by virtual address plus a key: the lkey
 * for the local device's work requests, the rkey for a peer's RDMA reads and
 * writes. Registration pins the pages and builds the device's translation,
 * which costs a system call and work proportional to the size, so it is done
 * once per arena segment (doc/design.md decision 5) and never per page or per
 * message: a segment is one hugepage-backed mapping, registered whole.
 *
 * The O(1) lookup: each arena gets a table of MR pointers over its whole
 * span (a growable arena's reserved range) with one entry per "unit", the
 * largest power of two that divides every segment's offset and length
 * inside the arena (a fixed arena's size for its single segment, a
 * growable arena's step). A page's keys are then
 * table[(addr - base) >> unit_shift]; NULL there is a unit not committed
 * (-ENOENT). A block whose two ends fall in different registrations is
 * refused: no single SGE can describe it. A growable arena's segment is
 * registered when the arena commits it and deregistered when it gives it
 * back (its pages are all free by then).
 *
 * Deregistration happens in pp_dma_unmap_arena(), whatever is still posted
 * to the device: work requests that name a deregistered key complete with
 * an error status (the device checks the key), they never write into the
 * memory afterwards. The protection domain is the caller's and outlives
 * the domain.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <infiniband/verbs.h>

#include "pp_log.h"
#include "pp_dma_mode_priv.h"
#include "pp_verbs_dma_priv.h"
#include "pp_os_fault.h"

/*
 * Default access: the local device writes received data (LOCAL_WRITE),
 * and a peer may RDMA-write and -read the pages (the echo and a zero-copy
 * protocol need both). opts.verbs_access narrows it.
 */
#define VERBS_DEFAULT_ACCESS                                             \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |               \
	 IBV_ACCESS_REMOTE_READ)

struct pp_verbs {
	struct ibv_pd *pd;
	int access;
};

struct pp_verbs_arena {
	struct pp_verbs *v;
	const char *name;
	unsigned int nr_mrs;     /* registered now */
	unsigned int unit_shift;
	size_t nr_units;
	/* nr_units entries over the arena's whole span: each segment's MR
	 * on the units it covers, NULL where nothing is committed. */
	struct ibv_mr **unit_mr;
};

static struct pp_verbs *verbs_create(const struct pp_dma_opts *opts)
{
	struct pp_verbs *v;

	if (!opts->verbs_pd) {
		PP_ERR("dma: IOVA mode verbs needs opts.verbs_pd: pass a protection domain from ibv_alloc_pd() (pp_dma_verbs_open() opens a device)");
		errno = EINVAL;
		return NULL;
	}
	v = pp_os_calloc(1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	v->pd = opts->verbs_pd;
	v->access = opts->verbs_access ? (int)opts->verbs_access :
					 VERBS_DEFAULT_ACCESS;
	return v;
}

static void verbs_destroy(struct pp_verbs *v)
{
	free(v);
}

static const char *device_name(const struct pp_verbs *v)
{
	return v->pd->context && v->pd->context->device ?
		       ibv_get_device_name(v->pd->context->device) :
		       "(unknown device)";
}

/* One line that says what to raise or check for a refused ibv_reg_mr. */
static void report_reg_error(const struct pp_verbs *v, const char *arena,
			     size_t off, const struct pp_arena_segment *seg,
			     int err)
{
	struct rlimit rl;

	if (err == ENOMEM && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY) {
		PP_ERR("dma: arena %s: registering the segment at offset %zu KiB (%zu KiB) with %s needs that much pinned memory and RLIMIT_MEMLOCK is %llu KiB: raise it (ulimit -l, or LimitMEMLOCK= in a systemd unit) or grant CAP_IPC_LOCK",
		       arena, off >> 10, seg->len >> 10, device_name(v),
		       (unsigned long long)(rl.rlim_cur >> 10));
	} else if (err == ENOMEM) {
		PP_ERR("dma: arena %s: %s refused to register the segment at offset %zu KiB (%zu KiB): out of memory for its translation tables: register a smaller arena or raise the device's MR limits",
		       arena, device_name(v), off >> 10, seg->len >> 10);
	} else if (err == EPERM || err == EACCES) {
		PP_ERR("dma: arena %s: %s refused to register the segment at offset %zu KiB (%s): check opts.verbs_access against the device's capabilities and the permissions of /dev/infiniband/uverbs*",
		       arena, device_name(v), off >> 10, strerror(err));
	} else {
		PP_ERR("dma: arena %s: %s refused to register the segment at %p, %zu KiB (%s): the device cannot register this memory",
		       arena, device_name(v), seg->addr, seg->len >> 10,
		       strerror(err));
	}
}

/* The key table for the whole span; the segments register one by one. */
static int verbs_map_arena(struct pp_verbs *v, const struct pp_dma_arena *a,
			   struct pp_verbs_arena **out)
{
	struct pp_verbs_arena *va;

	va = pp_os_calloc(1, sizeof(*va));
	if (!va)
		return -ENOMEM;
	va->v = v;
	va->name = a->name;
	va->unit_shift = a->seg_shift;
	va->nr_units = a->size >> va->unit_shift;
	va->unit_mr = pp_os_calloc(va->nr_units, sizeof(*va->unit_mr));
	if (!va->unit_mr) {
		free(va);
		return -ENOMEM;
	}
	*out = va;
	return 0;
}

/* Every segment is deregistered by now. */
static void verbs_unmap_arena(struct pp_verbs_arena *va)
{
	if (!va)
		return;
	free(va->unit_mr);
	free(va);
}

/* One ibv_reg_mr for the segment, its units pointed at the MR. */
static int verbs_map_segment(struct pp_verbs_arena *va, size_t off,
			     const struct pp_arena_segment *seg)
{
	struct pp_verbs *v = va->v;
	struct ibv_mr *mr;
	size_t u;
	int err;

	errno = 0;
	/* A fault site (pp_os_fault_priv.h): the registration refused, as
	 * RLIMIT_MEMLOCK or the device's limits do. */
	mr = PP_OS_FAULT(ENOMEM) ? (errno = ENOMEM, (struct ibv_mr *)NULL) :
				   ibv_reg_mr(v->pd, seg->addr, seg->len,
					      v->access);
	if (!mr) {
		err = errno ? errno : EINVAL;
		report_reg_error(v, va->name, off, seg, err);
		return -err;
	}
	/* Relaxed: the data path asks only for pages the allocator hands
	 * out after the segment is committed. */
	for (u = off >> va->unit_shift; u < (off + seg->len) >> va->unit_shift;
	     u++)
		__atomic_store_n(&va->unit_mr[u], mr, __ATOMIC_RELAXED);
	va->nr_mrs++;
	PP_INFO("dma: arena %s: segment at offset %zu KiB (%zu KiB) registered with %s (lkey 0x%x)",
		va->name, off >> 10, seg->len >> 10, device_name(v), mr->lkey);
	return 0;
}

/* Returns 0 or the -errno of ibv_dereg_mr (reported). */
static int verbs_unmap_segment(struct pp_verbs_arena *va, size_t off,
			       const struct pp_arena_segment *seg)
{
	struct ibv_mr *mr = va->unit_mr[off >> va->unit_shift];
	size_t u;
	int err;

	if (!mr)
		return 0;
	for (u = off >> va->unit_shift; u < (off + seg->len) >> va->unit_shift;
	     u++)
		__atomic_store_n(&va->unit_mr[u], NULL, __ATOMIC_RELAXED);
	va->nr_mrs--;
	err = ibv_dereg_mr(mr);
	if (!err)
		return 0;
	/* The kernel keeps an MR that memory windows are bound to; the
	 * pages stay pinned until the protection domain goes. */
	PP_ERR("dma: arena %s: %s refused to deregister the segment at offset %zu KiB (%s): unbind its memory windows first; the pages stay pinned until the protection domain is freed",
	       va->name, device_name(va->v), off >> 10, strerror(err));
	return -err;
}

int pp_verbs_keys(const struct pp_verbs_arena *va, size_t off, size_t len,
		  uint32_t *lkey, uint32_t *rkey)
{
	struct ibv_mr *mr = __atomic_load_n(&va->unit_mr[off >> va->unit_shift],
					    __ATOMIC_RELAXED);

	/* A unit of a growable arena's span that is not committed. */
	if (PP_UNLIKELY(!mr))
		return -ENOENT;
	if (PP_UNLIKELY(len > 1 &&
			__atomic_load_n(&va->unit_mr[(off + len - 1) >>
						     va->unit_shift],
					__ATOMIC_RELAXED) != mr))
		return -EINVAL;
	if (lkey)
		*lkey = mr->lkey;
	if (rkey)
		*rkey = mr->rkey;
	return 0;
}

unsigned int pp_verbs_arena_mrs(const struct pp_verbs_arena *va)
{
	return va->nr_mrs;
}

/* ---- IOVA mode verbs, as the domain calls it ---- */

static int verbs_mode_create(const struct pp_dma_opts *opts, void **priv)
{
	struct pp_verbs *v = verbs_create(opts);

	if (!v)
		return -errno;
	*priv = v;
	return 0;
}

static void verbs_mode_destroy(void *priv)
{
	verbs_destroy(priv);
}

static int verbs_mode_map_arena(void *priv, struct pp_dma_arena *a)
{
	struct pp_verbs_arena *va;
	int err;

	err = verbs_map_arena(priv, a, &va);
	if (!err)
		a->priv = va;
	return err;
}

static int verbs_mode_unmap_arena(void *priv, struct pp_dma_arena *a)
{
	(void)priv;
	verbs_unmap_arena(a->priv);
	a->priv = NULL;
	return 0;
}

static int verbs_mode_map_segment(void *priv, struct pp_dma_arena *a,
				  const struct pp_arena_segment *seg)
{
	(void)priv;
	return verbs_map_segment(a->priv, (uintptr_t)seg->addr - a->base, seg);
}

static void verbs_mode_unmap_segment(void *priv, struct pp_dma_arena *a,
				     const struct pp_arena_segment *seg)
{
	int err;

	(void)priv;
	err = verbs_unmap_segment(a->priv, (uintptr_t)seg->addr - a->base,
				  seg);
	if (err && !a->unmap_err)
		a->unmap_err = err;
}

/* Work requests carry virtual addresses; one SGE must lie inside one
 * registration. */
static int verbs_mode_map_page(void *priv, const struct pp_dma_arena *a,
			       void *addr, size_t off, size_t len,
			       enum pp_dma_dir dir, uint64_t *iova)
{
	(void)priv, (void)dir;
	if (PP_UNLIKELY(pp_verbs_keys(a->priv, off, len, NULL, NULL)))
		return -EINVAL;
	*iova = (uint64_t)(uintptr_t)addr;
	return 0;
}

const struct pp_dma_mode pp_dma_mode_verbs = {
	.name = "verbs",
	.xlate = PP_DMA_XLATE_HOOK,
	.create = verbs_mode_create,
	.destroy = verbs_mode_destroy,
	.map_arena = verbs_mode_map_arena,
	.unmap_arena = verbs_mode_unmap_arena,
	.map_segment = verbs_mode_map_segment,
	.unmap_segment = verbs_mode_unmap_segment,
	.map_page = verbs_mode_map_page,
};

struct ibv_context *pp_verbs_open(const char *name, unsigned int port)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_port_attr attr;
	struct ibv_context *ctx;
	char names[256] = "";
	int i, n = 0, err;
	size_t used = 0;

	errno = 0;
	/* Fault sites here: listing, opening and querying the device. */
	list = PP_OS_FAULT(ENOMEM) ? (errno = ENOMEM, NULL) :
				     ibv_get_device_list(&n);
	if (!list && errno == ENOMEM) {
		err = errno;
		PP_ERR("dma: cannot list the RDMA devices: %s", strerror(err));
		errno = err;
		return NULL;
	}
	if (!list || n == 0) {
		if (list)
			ibv_free_device_list(list);
		PP_ERR("dma: no RDMA device: load the NIC's driver, or for soft-RoCE load rdma_rxe and run 'rdma link add rxe0 type rxe netdev IFACE'");
		errno = ENODEV;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const char *dn = ibv_get_device_name(list[i]);

		if (!dev && (!name || strcmp(dn, name) == 0))
			dev = list[i];
		if (used < sizeof(names))
			used += (size_t)snprintf(names + used,
						 sizeof(names) - used, "%s%s",
						 i ? ", " : "", dn);
	}
	if (!dev) {
		PP_ERR("dma: no RDMA device named %s: use one of %s",
		       name, names);
		ibv_free_device_list(list);
		errno = ENODEV;
		return NULL;
	}
	ctx = PP_OS_FAULT(EMFILE) ? (errno = EMFILE, NULL) :
				    ibv_open_device(dev);
	if (!ctx) {
		err = errno ? errno : ENODEV;
		PP_ERR("dma: cannot open RDMA device %s (%s): load ib_uverbs and check the permissions of /dev/infiniband/uverbs*",
		       ibv_get_device_name(dev), strerror(err));
		ibv_free_device_list(list);
		errno = err;
		return NULL;
	}
	if (port == 0)
		port = 1;
	err = PP_OS_FAULT(EIO) ? EIO :
				 ibv_query_port(ctx, (uint8_t)port, &attr);
	if (err || port > 255) {
		PP_ERR("dma: RDMA device %s has no port %u: ports count from 1",
		       ibv_get_device_name(dev), port);
		err = EINVAL;
		goto err_close;
	}
	if (attr.state != IBV_PORT_ACTIVE) {
		PP_ERR("dma: port %u of RDMA device %s is %s, not ACTIVE: bring its link up (for soft-RoCE, 'ip link set IFACE up' on its netdev) and wait until it is ACTIVE",
		       port, ibv_get_device_name(dev),
		       ibv_port_state_str(attr.state));
		err = ENETDOWN;
		goto err_close;
	}
	ibv_free_device_list(list);
	return ctx;

err_close:
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	errno = err;
	return NULL;
}
