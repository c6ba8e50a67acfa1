/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_dma.h - IOVA domains: how a device addresses arena memory.
 *
 * Mapping is per segment, not per page (doc/design.md decision 5):
 * pp_dma_map_arena() does the expensive part once (reads pagemap for PA,
 * one VFIO_IOMMU_MAP_DMA ioctl per segment for VFIO, one ibv_reg_mr per
 * segment for verbs), and pp_dma_map_page() is then an O(1) lookup that
 * page_pool calls once per page lifetime.
 *
 * Modes: VA (IOVA = virtual address); PA (physical address from
 * /proc/self/pagemap, which needs CAP_SYS_ADMIN); OPS (a caller-supplied
 * table, for IOMMUs this library does not drive itself, and for tests that
 * inject mapping failures); VFIO (the IOMMU behind a VFIO container, see
 * doc/vfio.md); VERBS (an RDMA device through rdma-core: IOVA = virtual
 * address, keys from pp_dma_verbs_keys(); built only with the verbs
 * option, else -EOPNOTSUPP; see doc/rdma.md).
 */
#ifndef PAGEPOOL_PP_DMA_H
#define PAGEPOOL_PP_DMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pagepool/pp_arena.h>
#include <pagepool/pp_common.h>
#include <pagepool/pp_page.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pp_dma;
/* rdma-core's types; only pointers to them cross this API. */
struct ibv_context;
struct ibv_pd;

enum pp_iova_mode {
	PP_IOVA_VA = 0,
	PP_IOVA_PA = 1,
	PP_IOVA_OPS = 2,
	PP_IOVA_VFIO = 3,
	PP_IOVA_VERBS = 4,
};

/* How a VFIO domain picks IOVAs (pp_dma_opts.vfio_iova). */
enum pp_vfio_iova {
	/* IOVA = VA when the arena lies inside the IOMMU's IOVA ranges,
	 * else allocated from them (what DPDK's EAL does for VA mode). */
	PP_VFIO_IOVA_AUTO = 0,
	PP_VFIO_IOVA_VA = 1,    /* identity only; refuse an arena that does not fit */
	PP_VFIO_IOVA_ALLOC = 2, /* always allocate from the IOVA ranges */
};

enum pp_vfio_flags {
	/*
	 * Accept a container whose only IOMMU type is VFIO_NOIOMMU_IOMMU
	 * (the device can then DMA anywhere: no isolation at all). Without
	 * this flag such a container is refused.
	 */
	PP_VFIO_F_UNSAFE_NOIOMMU = 1u << 0,
};

enum pp_dma_dir {
	PP_DMA_BIDIRECTIONAL = 0,
	PP_DMA_TO_DEVICE = 1,
	PP_DMA_FROM_DEVICE = 2,
};

/* A caller-supplied backend. Every hook is optional except page_map. */
struct pp_dma_ops {
	size_t sz; /* sizeof(struct pp_dma_ops) */
	const char *name;
	/* Once per segment; returns 0 or -errno. */
	int (*segment_map)(void *ctx, const struct pp_arena_segment *seg);
	void (*segment_unmap)(void *ctx, const struct pp_arena_segment *seg);
	/* Once per page lifetime; returns 0 and sets *iova, or -errno. */
	int (*page_map)(void *ctx, void *addr, size_t len, enum pp_dma_dir dir,
			uint64_t *iova);
	void (*page_unmap)(void *ctx, uint64_t iova, size_t len,
			   enum pp_dma_dir dir);
	void (*sync_for_device)(void *ctx, uint64_t iova, size_t len,
				enum pp_dma_dir dir);
	void (*sync_for_cpu)(void *ctx, uint64_t iova, size_t len,
			     enum pp_dma_dir dir);
};

struct pp_dma_opts {
	size_t sz; /* sizeof(struct pp_dma_opts) */
	enum pp_iova_mode mode;
	const struct pp_dma_ops *ops; /* PP_IOVA_OPS only */
	void *ops_ctx;
	/* PP_IOVA_VFIO: the device whose IOMMU group is added first (more
	 * with pp_dma_vfio_add_device()); NULL: add one later. */
	const char *vfio_pci_addr;      /* "0000:00:02.0" */
	enum pp_vfio_iova vfio_iova;
	unsigned int vfio_flags;        /* enum pp_vfio_flags */
	/* PP_IOVA_VERBS: the protection domain every segment is registered
	 * on (the caller's; it must outlive the domain), and the IBV_ACCESS_*
	 * flags (0: local write, remote read and remote write). */
	struct ibv_pd *verbs_pd;
	unsigned int verbs_access;
};

/*
 * pp_dma_create - an IOVA domain. Returns NULL with errno EINVAL (bad mode
 * or opts; a vfio_pci_addr that is not a PCI address, see
 * pp_dma_vfio_add_device()) or ENOMEM; in VFIO mode also ENODEV (no /dev/vfio/vfio, or no
 * such device), EPERM (group not viable: a device of the group is bound to
 * another driver; the message lists them) or the ioctl's errno.
 */
PP_API struct pp_dma *pp_dma_create(const struct pp_dma_opts *opts);

/*
 * pp_dma_vfio_add_device - add the IOMMU group of PCI device @pci_addr to a
 * VFIO domain (a no-op when the group is in already). @pci_addr is
 * "DDDD:BB:DD.F" (hex; device 00-1f, function 0-7; either case) or the
 * short "BB:DD.F" in domain 0000, and nothing else. Arenas mapped before
 * are mapped for the new group too (type1 replays them). Returns 0, -EINVAL
 * (not a VFIO domain, or not such an address: refused before any file is
 * looked up, with a message), -ENODEV, -EPERM (group not viable) or -errno.
 * Control path.
 */
PP_API int pp_dma_vfio_add_device(struct pp_dma *dma, const char *pci_addr);

/*
 * pp_dma_vfio_device_fd - the VFIO device file of @pci_addr, whose group
 * is added first if needed. The caller owns and closes the descriptor.
 * Returns the descriptor or -errno as pp_dma_vfio_add_device().
 */
PP_API int pp_dma_vfio_device_fd(struct pp_dma *dma, const char *pci_addr);

/* The IOVA a VFIO domain gave @arena's base, for tests and tools;
 * -ENOENT when not mapped, -EINVAL when not a VFIO domain. */
PP_API int pp_dma_vfio_arena_iova(struct pp_dma *dma,
				  const struct pp_arena *arena, uint64_t *iova);

/*
 * pp_dma_verbs_open - open RDMA device @name (NULL: the first one) and
 * check that @port (0: port 1) is ACTIVE. Returns the context (close it
 * with ibv_close_device()), or NULL with errno ENODEV (no RDMA device, or
 * none of that name; the message lists them), ENETDOWN (the port is not
 * ACTIVE: its link is down or still coming up), EINVAL (no such port) or
 * EOPNOTSUPP (built without the verbs mode). Control path; any thread.
 */
PP_API struct ibv_context *pp_dma_verbs_open(const char *name,
					     unsigned int port);

/*
 * pp_dma_verbs_keys - the lkey and rkey (either may be NULL) under which
 * the device reaches [@addr, @addr + @len) of an arena mapped into the
 * VERBS domain @dma; its address in a work request is @addr itself (the
 * IOVA pp_dma_map_page() gives). O(1). Returns 0, -ENOENT (not in a
 * mapped arena, or in a part of a growable arena's span that is not
 * committed), -EINVAL (not a VERBS domain, or the range spans two
 * registrations) or -EOPNOTSUPP (built without the verbs mode). Data path:
 * never touches errno; any thread.
 */
PP_API int pp_dma_verbs_keys(struct pp_dma *dma, const void *addr, size_t len,
			     uint32_t *lkey, uint32_t *rkey);

/* How many registrations (ibv_reg_mr calls) back @arena in the VERBS
 * domain @dma now (one per committed segment), for tests and tools; -ENOENT when not mapped, -EINVAL when
 * not a VERBS domain. */
PP_API int pp_dma_verbs_arena_mrs(struct pp_dma *dma,
				  const struct pp_arena *arena);

/* Returns 0, or -EBUSY while arenas are still mapped. */
PP_API int pp_dma_destroy(struct pp_dma *dma);

PP_API enum pp_iova_mode pp_dma_mode(const struct pp_dma *dma);

/*
 * pp_dma_map_arena - make every segment of @arena addressable: the ones
 * committed now, and for a growable arena (doc/growth.md) every one it
 * commits later, mapped before its allocator hands out a page of it, and
 * unmapped when the arena gives it back, until pp_dma_unmap_arena(). A
 * growth whose mapping fails here fails with the errors below, after
 * their message; the arena stays as it was. The domain covers the whole
 * span (pp_arena_size()): in VFIO mode one IOVA range for all of it.
 * Returns 0 or -errno: -EPERM when pagemap hides PFNs (PA mode without
 * CAP_SYS_ADMIN; the message says so), -EFAULT for a page not present,
 * in VFIO mode -ENODEV (no group added yet), -ENOMEM (RLIMIT_MEMLOCK),
 * -ENOSPC (dma_entry_limit, or no IOVA range left), -ERANGE (vfio_iova VA
 * and the arena lies outside the IOVA ranges), -EEXIST when already
 * mapped (or, VFIO, when the kernel has the IOVA range mapped already), -ENOSPC past 32 mapped arenas, or the
 * backend's segment_map error (segments mapped before it are unmapped).
 * VERBS mode: each segment registered with ibv_reg_mr; -ENOMEM (over
 * RLIMIT_MEMLOCK without CAP_IPC_LOCK, or the device's tables are full),
 * -EPERM/-EACCES or another errno when the device refuses; the message
 * says which limit to raise.
 * Nothing stays mapped on failure. Control path; any thread.
 */
PP_API int pp_dma_map_arena(struct pp_dma *dma, struct pp_arena *arena);

/* Returns 0, or -ENOENT when @arena was not mapped. No other thread may
 * still map pages of @arena during the call. VERBS mode: every
 * registration is dropped even while pages are still posted to the device
 * (their work requests then complete in error, they never write the
 * memory); an error of ibv_dereg_mr is returned after the arena is gone
 * from the domain anyway. */
PP_API int pp_dma_unmap_arena(struct pp_dma *dma, struct pp_arena *arena);

/*
 * pp_dma_map_page - the IOVA of a block of 2^@order pages at @addr.
 * Returns 0, -ENOENT (not in a mapped arena; PA and VERBS mode also for
 * a part of a growable arena's span that is not committed), -EINVAL
 * (block not contiguous for the device: an order > 0 block on a 4 KiB
 * arena in PA mode), or the backend's error. Never touches errno.
 */
PP_API int pp_dma_map_page(struct pp_dma *dma, void *addr, unsigned int order,
			   enum pp_dma_dir dir, uint64_t *iova);

PP_API void pp_dma_unmap_page(struct pp_dma *dma, uint64_t iova,
			      unsigned int order, enum pp_dma_dir dir);

/* No-ops on coherent backends (VA, PA on x86); hooks for OPS. */
PP_API void pp_dma_sync_for_device(struct pp_dma *dma, uint64_t iova,
				   size_t len, enum pp_dma_dir dir);
PP_API void pp_dma_sync_for_cpu(struct pp_dma *dma, uint64_t iova, size_t len,
				enum pp_dma_dir dir);

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_DMA_H */
