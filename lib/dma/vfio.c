/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vfio.c - IOVA mode vfio (pp_dma_mode_vfio): one container per domain,
 * the IOMMU groups of the devices that use it, and the IOVA space.
 *
 * The container is opened and checked at create time (API version, then
 * the best IOMMU type: type1v2, type1). The IOMMU type can only be set once
 * a group is in, so the first group added sets it and reads the IOVA ranges
 * and page sizes (VFIO_IOMMU_GET_INFO); arenas can be mapped only after
 * that. Every group shares the container's mappings: type1 replays the
 * existing ones into a group's domain when the group joins.
 *
 * IOVAs: identity (IOVA = VA) when the arena lies inside one reported IOVA
 * range, which also bounds it by the IOMMU's address width (QEMU's
 * intel-iommu has 39 bits by default, below a 47-bit user address, so
 * identity often does not fit there); otherwise IOVAs are allocated from
 * the ranges (first fit), aligned to the arena's page size so that the
 * IOMMU can use its large pages. Both kinds are taken out of one free list
 * (struct pp_iova_space, iova_space.c), so an identity mapping and an
 * allocated one never overlap, and an unmapped arena's space is reused by
 * the next mapping.
 *
 * An arena's IOVA range covers its whole span (a growable arena's reserved
 * range) from pp_dma_map_arena() on, so a page's IOVA is always the base's
 * plus its offset; inside it each segment is one VFIO_IOMMU_MAP_DMA at its
 * offset, made when the arena commits the segment (before the allocator
 * hands out a page of it) and undone (VFIO_IOMMU_UNMAP_DMA) when the arena
 * gives it back. A group added later gets the mappings of the moment
 * replayed by type1, and every later one too, as all the container's
 * domains do.
 *
 * One lock serialises everything here; none of it is on the data path:
 * per page, dma.c adds the offset to the arena's IOVA base itself
 * (PP_DMA_XLATE_LINEAR), without calling into this file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "pp_log.h"
#include "pp_dma_mode_priv.h"
#include "pp_iova_space_priv.h"
#include "pp_vfio_dma_priv.h"
#include "pp_os_fault.h"
#include "pp_os.h"
#include "pp_vfio.h"

/* Devices sharing one domain: the ports of one application. */
#define VFIO_MAX_GROUPS 16
/* Type1 reports a handful of ranges (the aperture minus the MSI window and
 * reserved regions); more are ignored, which only shrinks what we use. */
#define VFIO_MAX_RANGES 16

struct vfio_group {
	int nr;
	int fd;
};

struct pp_vfio {
	pthread_mutex_t lock;
	int cfd;
	int type;              /* VFIO_TYPE1v2_IOMMU, ... */
	bool iommu_set;        /* after the first group */
	bool noiommu;
	enum pp_vfio_iova iova_mode;
	unsigned int nr_groups;
	struct vfio_group groups[VFIO_MAX_GROUPS];
	uint64_t pgsizes;
	unsigned int nr_ranges;
	struct pp_os_iova_range ranges[VFIO_MAX_RANGES];
	struct pp_iova_space space; /* the free part of the ranges */
};

/* Allocations start at 1 MiB: IOVA 0 reads as "no address" (the e1000e
 * driver takes a zero IOVA for a failed lookup), and a margin above it
 * costs nothing in a space of 2^39 bytes. */
#define IOVA_FLOOR (1ull << 20)

static const char *type_name(int type)
{
	switch (type) {
	case VFIO_TYPE1v2_IOMMU:
		return "type1v2";
	case VFIO_TYPE1_IOMMU:
		return "type1";
	case VFIO_NOIOMMU_IOMMU:
		return "noiommu";
	}
	return "unknown";
}

/*
 * A PCI address as the application or its operator gave it, checked where
 * it enters lib/dma, so that a bad one is refused with the forms to write
 * before anything is opened. lib/os checks again before it builds a path;
 * the message is here. Returns 0 or -EINVAL.
 */
static int addr_check(const char *pci_addr)
{
	char addr[PP_PCI_ADDR_LEN];

	if (!pp_os_pci_addr_parse(pci_addr, addr))
		return 0;
	PP_ERR("dma: vfio: '%.40s%s' is not a PCI address: write " PP_PCI_ADDR_FORMS,
	       pci_addr, strlen(pci_addr) > 40 ? "..." : "");
	return -EINVAL;
}

static void vfio_destroy(struct pp_vfio *v);

static struct pp_vfio *vfio_create(const struct pp_dma_opts *opts)
{
	struct pp_vfio *v;
	int err, api = 0;

	if (opts->vfio_iova > PP_VFIO_IOVA_ALLOC ||
	    (opts->vfio_flags & ~PP_VFIO_F_UNSAFE_NOIOMMU)) {
		PP_ERR("dma: vfio: unknown vfio_iova %d or vfio_flags 0x%x: use enum pp_vfio_iova and pp_vfio_flags",
		       (int)opts->vfio_iova, opts->vfio_flags);
		errno = EINVAL;
		return NULL;
	}
	if (opts->vfio_pci_addr && addr_check(opts->vfio_pci_addr)) {
		errno = EINVAL;
		return NULL;
	}
	v = pp_os_calloc(1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	v->iova_mode = opts->vfio_iova;
	v->cfd = pp_os_vfio_container_open();
	if (v->cfd < 0) {
		err = v->cfd;
		PP_ERR("dma: vfio: cannot open /dev/vfio/vfio (%s): load the vfio and vfio_iommu_type1 modules (modprobe vfio-pci) and run as root",
		       strerror(-err));
		goto err_free;
	}
	err = pp_os_vfio_container_check(v->cfd, &v->type, &api);
	if (err == -EPROTO) {
		PP_ERR("dma: vfio: kernel VFIO API version %d, this build knows %d: rebuild pagepool against this kernel's headers",
		       api, VFIO_API_VERSION);
		goto err_close_container;
	}
	if (err) {
		PP_ERR("dma: vfio: the container offers no IOMMU type: load vfio_iommu_type1 (modprobe vfio_iommu_type1)");
		goto err_close_container;
	}
	if (v->type == VFIO_NOIOMMU_IOMMU) {
		if (!(opts->vfio_flags & PP_VFIO_F_UNSAFE_NOIOMMU)) {
			PP_ERR("dma: vfio: only no-IOMMU mode is available, where the device can write anywhere in memory: boot with intel_iommu=on (or amd_iommu=on), or set PP_VFIO_F_UNSAFE_NOIOMMU to accept that");
			err = -EPERM;
			goto err_close_container;
		}
		v->noiommu = true;
		PP_WARN("dma: vfio: UNSAFE no-IOMMU mode: devices are not isolated");
	}
	pthread_mutex_init(&v->lock, NULL);
	if (opts->vfio_pci_addr) {
		err = pp_vfio_add_device(v, opts->vfio_pci_addr);
		if (err) {
			vfio_destroy(v);
			errno = -err;
			return NULL;
		}
	}
	return v;

err_close_container:
	close(v->cfd);
err_free:
	free(v);
	errno = -err;
	return NULL;
}

static void vfio_destroy(struct pp_vfio *v)
{
	unsigned int i;

	if (!v)
		return;
	for (i = 0; i < v->nr_groups; i++) {
		pp_os_vfio_group_unset_container(v->groups[i].fd);
		close(v->groups[i].fd);
	}
	close(v->cfd);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

/* After VFIO_SET_IOMMU: what the IOMMU can address. Caller holds the lock. */
static int read_iommu_info(struct pp_vfio *v)
{
	struct pp_iova_range free_ranges[VFIO_MAX_RANGES];
	uint32_t avail;
	unsigned int i;
	int err;

	err = pp_os_vfio_iommu_info(v->cfd, &v->pgsizes, v->ranges,
				    VFIO_MAX_RANGES, &v->nr_ranges, &avail);
	if (err) {
		PP_ERR("dma: vfio: VFIO_IOMMU_GET_INFO failed (%s): the kernel's vfio_iommu_type1 is too old, use Linux 5.4 or later",
		       strerror(-err));
		return err;
	}
	if (!v->nr_ranges) {
		/* Before Linux 5.4 there is no range capability: assume the
		 * 39 bits every VT-d and AMD-Vi implementation offers. */
		v->ranges[0].start = 0;
		v->ranges[0].end = (1ull << 39) - 1;
		v->nr_ranges = 1;
	}
	for (i = 0; i < v->nr_ranges; i++) {
		free_ranges[i].start = v->ranges[i].start;
		free_ranges[i].end = v->ranges[i].end;
	}
	pp_iova_space_init(&v->space, free_ranges, v->nr_ranges, IOVA_FLOOR);
	for (i = 0; i < v->nr_ranges; i++)
		PP_DEBUG_LOG("dma: vfio: IOVA range 0x%llx-0x%llx",
			     (unsigned long long)v->ranges[i].start,
			     (unsigned long long)v->ranges[i].end);
	return 0;
}

static int group_index(const struct pp_vfio *v, int nr)
{
	unsigned int i;

	for (i = 0; i < v->nr_groups; i++)
		if (v->groups[i].nr == nr)
			return (int)i;
	return -1;
}

/* Caller holds the lock. Returns the group's index or -errno. */
static int add_group(struct pp_vfio *v, const char *pci_addr)
{
	char devices[512];
	int nr, gfd, err;

	err = addr_check(pci_addr);
	if (err)
		return err;
	nr = pp_os_vfio_group_of(pci_addr);
	if (nr == -ENODEV) {
		PP_ERR("dma: vfio: no PCI device %s: check the address with pp-devbind --status (domain:bus:slot.function)",
		       pci_addr);
		return nr;
	}
	if (nr < 0) {
		PP_ERR("dma: vfio: %s has no IOMMU group: boot with intel_iommu=on (or amd_iommu=on), or see doc/vfio.md for no-IOMMU mode",
		       pci_addr);
		return -ENODEV;
	}
	err = group_index(v, nr);
	if (err >= 0)
		return err;
	if (v->nr_groups == VFIO_MAX_GROUPS) {
		PP_ERR("dma: vfio: already %u groups in this domain: use a second domain for %s",
		       VFIO_MAX_GROUPS, pci_addr);
		return -ENOSPC;
	}
	gfd = pp_os_vfio_group_open(nr, v->noiommu);
	if (gfd == -ENOENT) {
		PP_ERR("dma: vfio: no /dev/vfio/%s%d for %s: bind it to vfio-pci (pp-devbind --bind vfio-pci %s)",
		       v->noiommu ? "noiommu-" : "", nr, pci_addr, pci_addr);
		return -ENODEV;
	}
	if (gfd < 0) {
		PP_ERR("dma: vfio: cannot open IOMMU group %d of %s (%s): run as root, and close other programs using it",
		       nr, pci_addr, strerror(-gfd));
		return gfd;
	}
	err = pp_os_vfio_group_viable(gfd);
	if (err <= 0) {
		pp_os_vfio_group_devices(nr, devices, sizeof(devices));
		PP_ERR("dma: vfio: IOMMU group %d of %s is not viable: bind every device of it to vfio-pci or unbind it: %s",
		       nr, pci_addr, devices);
		err = err ? err : -EPERM;
		goto err_close_group;
	}
	err = pp_os_vfio_group_set_container(gfd, v->cfd);
	if (err) {
		PP_ERR("dma: vfio: cannot add IOMMU group %d to the container (%s): the group is in use by another process",
		       nr, strerror(-err));
		goto err_close_group;
	}
	if (!v->iommu_set) {
		err = pp_os_vfio_set_iommu(v->cfd, v->type);
		if (err) {
			PP_ERR("dma: vfio: VFIO_SET_IOMMU %s failed (%s): load vfio_iommu_type1",
			       type_name(v->type), strerror(-err));
			goto err_unset_container;
		}
		v->iommu_set = true;
		if (!v->noiommu) {
			err = read_iommu_info(v);
			if (err)
				goto err_unset_container;
		}
	}
	v->groups[v->nr_groups].nr = nr;
	v->groups[v->nr_groups].fd = gfd;
	return (int)v->nr_groups++;

err_unset_container:
	pp_os_vfio_group_unset_container(gfd);
err_close_group:
	close(gfd);
	return err;
}

int pp_vfio_add_device(struct pp_vfio *v, const char *pci_addr)
{
	int err;

	pthread_mutex_lock(&v->lock);
	err = add_group(v, pci_addr);
	pthread_mutex_unlock(&v->lock);
	return err < 0 ? err : 0;
}

int pp_vfio_device_fd(struct pp_vfio *v, const char *pci_addr)
{
	int idx, fd;

	pthread_mutex_lock(&v->lock);
	idx = add_group(v, pci_addr);
	if (idx < 0) {
		pthread_mutex_unlock(&v->lock);
		return idx;
	}
	fd = pp_os_vfio_device_open(v->groups[idx].fd, pci_addr);
	pthread_mutex_unlock(&v->lock);
	if (fd < 0)
		PP_ERR("dma: vfio: cannot open device %s (%s): it must be bound to vfio-pci and not open elsewhere",
		       pci_addr, strerror(-fd));
	return fd;
}

static void report_map_error(const char *name, int err, size_t len)
{
	struct rlimit rl;
	long limit;

	switch (err) {
	case -EEXIST:
		PP_ERR("dma: vfio: arena %s: its IOVA range is mapped already in this container: map each arena once per domain",
		       name);
		break;
	case -ENOMEM:
		getrlimit(RLIMIT_MEMLOCK, &rl);
		PP_ERR("dma: vfio: arena %s: pinning %zu bytes failed: RLIMIT_MEMLOCK is %llu bytes, raise it (ulimit -l unlimited) or run as root",
		       name, len, (unsigned long long)rl.rlim_cur);
		break;
	case -ENOSPC:
		limit = pp_os_vfio_dma_entry_limit();
		PP_ERR("dma: vfio: arena %s: out of DMA mappings (dma_entry_limit %ld): raise /sys/module/vfio_iommu_type1/parameters/dma_entry_limit",
		       name, limit);
		break;
	default:
		PP_ERR("dma: vfio: arena %s: VFIO_IOMMU_MAP_DMA failed (%s): see doc/vfio.md",
		       name, strerror(-err));
	}
}

/*
 * The arena's IOVA range: its whole span (a growable arena's reserved
 * range), taken at once, so that xlate stays linear (the IOVA of base
 * plus the offset) however the arena grows; its segments are mapped into
 * it one by one (vfio_map_segment()).
 */
static int vfio_map_arena(struct pp_vfio *v, struct pp_dma_arena *a)
{
	uint64_t align = a->page_size ? a->page_size : 4096;
	uint64_t at;
	int err = 0;

	pthread_mutex_lock(&v->lock);
	if (!v->iommu_set) {
		PP_ERR("dma: vfio: no device in this domain yet: set opts.vfio_pci_addr or call pp_dma_vfio_add_device() before mapping arenas");
		err = -ENODEV;
		goto out_unlock;
	}
	if (v->noiommu) {
		PP_ERR("dma: vfio: no-IOMMU containers cannot map: use a PP_IOVA_PA domain for the addresses");
		err = -ENOTSUP;
		goto out_unlock;
	}
	if (v->iova_mode != PP_VFIO_IOVA_ALLOC &&
	    !pp_iova_space_take(&v->space, a->base, a->size)) {
		at = a->base;
	} else if (v->iova_mode == PP_VFIO_IOVA_VA) {
		PP_ERR("dma: vfio: arena at 0x%llx+%zu lies outside the IOMMU's IOVA ranges (or on IOVAs in use): use vfio_iova PP_VFIO_IOVA_AUTO",
		       (unsigned long long)a->base, a->size);
		err = -ERANGE;
		goto out_unlock;
	} else if (pp_iova_space_alloc(&v->space, a->size, align, &at)) {
		PP_ERR("dma: vfio: no IOVA space left for %zu bytes (%llu bytes free, fragmented): use fewer or smaller arenas",
		       a->size,
		       (unsigned long long)pp_iova_space_free_bytes(&v->space));
		err = -ENOSPC;
		goto out_unlock;
	}
	a->iova = at;
out_unlock:
	pthread_mutex_unlock(&v->lock);
	return err;
}

/* Every segment is unmapped by now; the span's IOVAs go back, unless
 * one of them is still mapped in the kernel. */
static void vfio_unmap_arena(struct pp_vfio *v, struct pp_dma_arena *a)
{
	pthread_mutex_lock(&v->lock);
	if (!a->iova_stuck)
		pp_iova_space_free(&v->space, a->iova, a->size);
	pthread_mutex_unlock(&v->lock);
}

/* One VFIO_IOMMU_MAP_DMA for the segment, at its place in the range. */
static int vfio_map_segment(struct pp_vfio *v, struct pp_dma_arena *a,
			    const struct pp_arena_segment *seg)
{
	int err;

	pthread_mutex_lock(&v->lock);
	err = pp_os_vfio_dma_map(v->cfd, seg->addr,
				 a->iova + ((uintptr_t)seg->addr - a->base),
				 seg->len);
	pthread_mutex_unlock(&v->lock);
	if (err)
		report_map_error(a->name, err, seg->len);
	return err;
}

static void vfio_unmap_segment(struct pp_vfio *v, struct pp_dma_arena *a,
			       const struct pp_arena_segment *seg)
{
	size_t off = (uintptr_t)seg->addr - a->base;
	int err;

	pthread_mutex_lock(&v->lock);
	err = pp_os_vfio_dma_unmap(v->cfd, a->iova + off, seg->len);
	if (err)
		a->iova_stuck = true;
	pthread_mutex_unlock(&v->lock);
	if (err)
		PP_WARN("dma: vfio: arena %s: unmapping the segment at offset %zu KiB failed (%s): its pages stay pinned until the container closes",
			a->name, off >> 10, strerror(-err));
}

/* ---- IOVA mode vfio, as the domain calls it ---- */

static int vfio_mode_create(const struct pp_dma_opts *opts, void **priv)
{
	struct pp_vfio *v = vfio_create(opts);

	if (!v)
		return -errno;
	*priv = v;
	return 0;
}

static void vfio_mode_destroy(void *priv)
{
	vfio_destroy(priv);
}

static int vfio_mode_map_arena(void *priv, struct pp_dma_arena *a)
{
	return vfio_map_arena(priv, a);
}

static int vfio_mode_unmap_arena(void *priv, struct pp_dma_arena *a)
{
	vfio_unmap_arena(priv, a);
	return 0;
}

static int vfio_mode_map_segment(void *priv, struct pp_dma_arena *a,
				 const struct pp_arena_segment *seg)
{
	return vfio_map_segment(priv, a, seg);
}

static void vfio_mode_unmap_segment(void *priv, struct pp_dma_arena *a,
				    const struct pp_arena_segment *seg)
{
	vfio_unmap_segment(priv, a, seg);
}

/* Per page: the arena's IOVA base plus the offset, inline in dma.c. */
const struct pp_dma_mode pp_dma_mode_vfio = {
	.name = "vfio",
	.xlate = PP_DMA_XLATE_LINEAR,
	.create = vfio_mode_create,
	.destroy = vfio_mode_destroy,
	.map_arena = vfio_mode_map_arena,
	.unmap_arena = vfio_mode_unmap_arena,
	.map_segment = vfio_mode_map_segment,
	.unmap_segment = vfio_mode_unmap_segment,
};
