/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_vfio.h - the VFIO part of the thin OS layer: the only code in
 * pagepool that opens /dev/vfio, issues VFIO ioctls or reads the IOMMU
 * group links in sysfs. lib/dma (containers, groups, DMA maps) and
 * drivers/bus/pci (device files, regions, config space) call it.
 *
 * Calls return 0 (or a descriptor, a count) on success and -errno on
 * failure, and log nothing: the caller knows what the operator should do.
 * The uAPI is <linux/vfio.h> (Linux 4.x onwards for everything used here;
 * the IOVA range capability is Linux 5.4).
 */
#ifndef PP_INTERNAL_VFIO_H
#define PP_INTERNAL_VFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The container: /dev/vfio/vfio, close-on-exec. */
int pp_os_vfio_container_open(void);

/*
 * pp_os_vfio_container_check - VFIO_GET_API_VERSION must be
 * VFIO_API_VERSION; sets *@type to the best IOMMU type the container
 * offers (type1v2, then type1), or to VFIO_NOIOMMU_IOMMU when that is all
 * there is. Returns 0, -EPROTO (API version) or -ENOTSUP (no type).
 */
int pp_os_vfio_container_check(int cfd, int *type, int *api);

/*
 * pp_os_vfio_group_of - the IOMMU group number of PCI device @pci_addr
 * (from /sys/bus/pci/devices/<addr>/iommu_group). Returns the number,
 * -EINVAL (@pci_addr is not what pp_os_pci_addr_parse() accepts; no path
 * is built from it), -ENODEV (no such device) or -ENOENT (no IOMMU group:
 * no IOMMU, or it is off; the kernel wants intel_iommu=on or amd_iommu=on).
 */
int pp_os_vfio_group_of(const char *pci_addr);

/* Open /dev/vfio/<group> (or /dev/vfio/noiommu-<group>). -ENOENT when the
 * device is not bound to vfio-pci (the file does not exist). */
int pp_os_vfio_group_open(int group, bool noiommu);

/* Whether every device of the group is bound to vfio-pci (or to no driver):
 * 1, 0, or -errno. */
int pp_os_vfio_group_viable(int gfd);

/* The devices of group @group with their drivers, "0000:00:02.0 (e1000e),
 * ..." into @buf, for the message that says what to unbind. */
void pp_os_vfio_group_devices(int group, char *buf, size_t len);

/* VFIO_GROUP_SET_CONTAINER / VFIO_GROUP_UNSET_CONTAINER. */
int pp_os_vfio_group_set_container(int gfd, int cfd);
void pp_os_vfio_group_unset_container(int gfd);

/* VFIO_SET_IOMMU, after the first group is in. */
int pp_os_vfio_set_iommu(int cfd, int type);

struct pp_os_iova_range {
	uint64_t start;
	uint64_t end; /* inclusive, as the kernel reports it */
};

/*
 * pp_os_vfio_iommu_info - VFIO_IOMMU_GET_INFO: the page sizes bitmap and
 * the usable IOVA ranges from the capability chain (at most @max; *@nr is
 * how many). A kernel without the capability reports one range covering
 * everything (*@nr = 0 then; the caller decides). *@dma_avail is the
 * VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL capability (mappings left under
 * dma_entry_limit), or UINT32_MAX when absent. Returns 0 or -errno.
 */
int pp_os_vfio_iommu_info(int cfd, uint64_t *pgsizes,
			  struct pp_os_iova_range *ranges, unsigned int max,
			  unsigned int *nr, uint32_t *dma_avail);

/* VFIO_IOMMU_MAP_DMA (read and write) / VFIO_IOMMU_UNMAP_DMA. -errno as
 * the kernel says it: -EEXIST (IOVA in use), -ENOMEM (RLIMIT_MEMLOCK),
 * -ENOSPC (dma_entry_limit), -EINVAL (outside the IOVA ranges). */
int pp_os_vfio_dma_map(int cfd, void *va, uint64_t iova, size_t len);
int pp_os_vfio_dma_unmap(int cfd, uint64_t iova, size_t len);

/* /sys/module/vfio_iommu_type1/parameters/dma_entry_limit, or -errno. */
long pp_os_vfio_dma_entry_limit(void);

/* VFIO_GROUP_GET_DEVICE_FD for @pci_addr in its canonical form
 * (pp_os_pci_addr_parse(); -EINVAL when it is not an address); the
 * descriptor or -errno. */
int pp_os_vfio_device_open(int gfd, const char *pci_addr);

struct pp_os_vfio_region {
	uint64_t offset; /* of the region in the device file */
	uint64_t size;
	uint32_t flags;  /* VFIO_REGION_INFO_FLAG_* */
};

/* VFIO_DEVICE_GET_REGION_INFO for region @index (VFIO_PCI_*_REGION_INDEX). */
int pp_os_vfio_region_info(int dfd, unsigned int index,
			   struct pp_os_vfio_region *r);

/* Map a region read-write and shared; NULL with errno when it fails. */
void *pp_os_vfio_region_map(int dfd, const struct pp_os_vfio_region *r);
void pp_os_vfio_region_unmap(void *addr, const struct pp_os_vfio_region *r);

/* Read/write @len bytes at @off of a region through the device file (the
 * PCI config space region has no mmap). Returns 0 or -errno (-EIO when
 * short). */
int pp_os_vfio_region_read(int dfd, const struct pp_os_vfio_region *r,
			   uint64_t off, void *buf, size_t len);
int pp_os_vfio_region_write(int dfd, const struct pp_os_vfio_region *r,
			    uint64_t off, const void *buf, size_t len);

/* VFIO_DEVICE_RESET (function level reset where the device has one). */
int pp_os_vfio_device_reset(int dfd);

#endif /* PP_INTERNAL_VFIO_H */
