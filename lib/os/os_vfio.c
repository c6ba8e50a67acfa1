/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_vfio.c - VFIO ioctls and the IOMMU group files in sysfs, wrapped one
 * call each (see pp_vfio.h). No policy here: which IOMMU type to
 * accept, how to pick IOVAs and what to tell the operator live in
 * lib/dma/vfio.c and drivers/bus/pci.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "pp_os_fault.h"
#include "pp_os.h"
#include "pp_vfio.h"

#define PCI_DEVICES "/sys/bus/pci/devices"

int pp_os_vfio_container_open(void)
{
	int fd;

	PP_OS_FAIL_HERE(EMFILE);
	fd = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int pp_os_vfio_container_check(int cfd, int *type, int *api)
{
	static const int types[] = { VFIO_TYPE1v2_IOMMU, VFIO_TYPE1_IOMMU,
				     VFIO_NOIOMMU_IOMMU };
	unsigned int i;

	*api = ioctl(cfd, VFIO_GET_API_VERSION);
	if (*api != VFIO_API_VERSION)
		return -EPROTO;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (ioctl(cfd, VFIO_CHECK_EXTENSION, types[i]) > 0) {
			*type = types[i];
			return 0;
		}
	}
	return -ENOTSUP;
}

int pp_os_vfio_group_of(const char *pci_addr)
{
	char path[PATH_MAX], link[PATH_MAX], addr[PP_PCI_ADDR_LEN];
	const char *slash;
	ssize_t n;
	long group;
	char *end;

	/* The address goes into a path: one device's name, or nothing. */
	if (pp_os_pci_addr_parse(pci_addr, addr))
		return -EINVAL;
	snprintf(path, sizeof(path), PCI_DEVICES "/%s", addr);
	if (access(path, F_OK))
		return -ENODEV;
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/iommu_group", addr);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -ENOENT;
	link[n] = '\0';
	slash = strrchr(link, '/');
	group = strtol(slash ? slash + 1 : link, &end, 10);
	if (*end || group < 0 || group > INT_MAX)
		return -ENOENT;
	return (int)group;
}

int pp_os_vfio_group_open(int group, bool noiommu)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/vfio/%s%d", noiommu ? "noiommu-" : "",
		 group);
	PP_OS_FAIL_HERE(EMFILE);
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int pp_os_vfio_group_viable(int gfd)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };

	PP_OS_FAIL_HERE(EFAULT);
	if (ioctl(gfd, VFIO_GROUP_GET_STATUS, &st))
		return -errno;
	return (st.flags & VFIO_GROUP_FLAGS_VIABLE) ? 1 : 0;
}

void pp_os_vfio_group_devices(int group, char *buf, size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct dirent *de;
	size_t used = 0;
	const char *drv;
	ssize_t n;
	DIR *dir;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/kernel/iommu_groups/%d/devices",
		 group);
	dir = opendir(path);
	if (!dir) {
		snprintf(buf, len, "(cannot read %s)", path);
		return;
	}
	while ((de = readdir(dir)) && used + 1 < len) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver",
			 de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0) {
			drv = "no driver";
		} else {
			link[n] = '\0';
			drv = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
		}
		n = snprintf(buf + used, len - used, "%s%s (%s)",
			     used ? ", " : "", de->d_name, drv);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	closedir(dir);
}

int pp_os_vfio_group_set_container(int gfd, int cfd)
{
	PP_OS_FAIL_HERE(EBUSY);
	return ioctl(gfd, VFIO_GROUP_SET_CONTAINER, &cfd) ? -errno : 0;
}

void pp_os_vfio_group_unset_container(int gfd)
{
	(void)ioctl(gfd, VFIO_GROUP_UNSET_CONTAINER);
}

int pp_os_vfio_set_iommu(int cfd, int type)
{
	PP_OS_FAIL_HERE(EPERM);
	return ioctl(cfd, VFIO_SET_IOMMU, type) ? -errno : 0;
}

/* Walk the capability chain of a VFIO_IOMMU_GET_INFO reply. */
static void parse_caps(const struct vfio_iommu_type1_info *info,
		       struct pp_os_iova_range *ranges, unsigned int max,
		       unsigned int *nr, uint32_t *dma_avail)
{
	const char *base = (const char *)info;
	const struct vfio_info_cap_header *hdr;
	uint32_t off = info->cap_offset;
	unsigned int i;

	/* Offsets are from the start of the reply; 0 ends the chain. The
	 * bound guards against a malformed chain looping or running off. */
	while (off && off + sizeof(*hdr) <= info->argsz) {
		hdr = (const void *)(base + off);
		if (hdr->id == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE) {
			const struct vfio_iommu_type1_info_cap_iova_range *c =
				(const void *)hdr;

			for (i = 0; i < c->nr_iovas && *nr < max; i++) {
				ranges[*nr].start = c->iova_ranges[i].start;
				ranges[*nr].end = c->iova_ranges[i].end;
				(*nr)++;
			}
		} else if (hdr->id == VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL) {
			const struct vfio_iommu_type1_info_dma_avail *c =
				(const void *)hdr;

			*dma_avail = c->avail;
		}
		if (hdr->next <= off)
			break;
		off = hdr->next;
	}
}

int pp_os_vfio_iommu_info(int cfd, uint64_t *pgsizes,
			  struct pp_os_iova_range *ranges, unsigned int max,
			  unsigned int *nr, uint32_t *dma_avail)
{
	struct vfio_iommu_type1_info probe = { .argsz = sizeof(probe) };
	struct vfio_iommu_type1_info *info;

	*nr = 0;
	*dma_avail = UINT32_MAX;
	PP_OS_FAIL_HERE(EFAULT);
	if (ioctl(cfd, VFIO_IOMMU_GET_INFO, &probe))
		return -errno;
	*pgsizes = (probe.flags & VFIO_IOMMU_INFO_PGSIZES) ? probe.iova_pgsizes :
							    0;
	/* The first call says how big the reply with capabilities is. */
	if (!(probe.flags & VFIO_IOMMU_INFO_CAPS) || probe.argsz <= sizeof(probe))
		return 0;
	info = pp_os_calloc(1, probe.argsz);
	if (!info)
		return -ENOMEM;
	info->argsz = probe.argsz;
	if (ioctl(cfd, VFIO_IOMMU_GET_INFO, info)) {
		int err = -errno;

		free(info);
		return err;
	}
	if (info->flags & VFIO_IOMMU_INFO_CAPS)
		parse_caps(info, ranges, max, nr, dma_avail);
	free(info);
	return 0;
}

int pp_os_vfio_dma_map(int cfd, void *va, uint64_t iova, size_t len)
{
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uint64_t)(uintptr_t)va,
		.iova = iova,
		.size = len,
	};

	PP_OS_FAIL_HERE(ENOSPC);
	return ioctl(cfd, VFIO_IOMMU_MAP_DMA, &m) ? -errno : 0;
}

int pp_os_vfio_dma_unmap(int cfd, uint64_t iova, size_t len)
{
	struct vfio_iommu_type1_dma_unmap u = {
		.argsz = sizeof(u),
		.iova = iova,
		.size = len,
	};

	return ioctl(cfd, VFIO_IOMMU_UNMAP_DMA, &u) ? -errno : 0;
}

long pp_os_vfio_dma_entry_limit(void)
{
	FILE *f = fopen("/sys/module/vfio_iommu_type1/parameters/dma_entry_limit",
			"re");
	long v;

	if (!f)
		return -errno;
	if (fscanf(f, "%ld", &v) != 1)
		v = -EINVAL;
	fclose(f);
	return v;
}

int pp_os_vfio_device_open(int gfd, const char *pci_addr)
{
	char addr[PP_PCI_ADDR_LEN];
	int fd;

	/* The kernel matches the device's name exactly: the canonical form. */
	if (pp_os_pci_addr_parse(pci_addr, addr))
		return -EINVAL;
	PP_OS_FAIL_HERE(EMFILE);
	fd = ioctl(gfd, VFIO_GROUP_GET_DEVICE_FD, addr);
	return fd < 0 ? -errno : fd;
}

int pp_os_vfio_region_info(int dfd, unsigned int index,
			   struct pp_os_vfio_region *r)
{
	struct vfio_region_info ri = { .argsz = sizeof(ri), .index = index };

	PP_OS_FAIL_HERE(EINVAL);
	if (ioctl(dfd, VFIO_DEVICE_GET_REGION_INFO, &ri))
		return -errno;
	r->offset = ri.offset;
	r->size = ri.size;
	r->flags = ri.flags;
	return 0;
}

void *pp_os_vfio_region_map(int dfd, const struct pp_os_vfio_region *r)
{
	void *p;

	if (PP_OS_FAULT(ENOMEM)) {
		errno = ENOMEM;
		return NULL;
	}
	p = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, dfd,
		 (off_t)r->offset);
	return p == MAP_FAILED ? NULL : p;
}

void pp_os_vfio_region_unmap(void *addr, const struct pp_os_vfio_region *r)
{
	munmap(addr, r->size);
}

int pp_os_vfio_region_read(int dfd, const struct pp_os_vfio_region *r,
			   uint64_t off, void *buf, size_t len)
{
	ssize_t n;

	PP_OS_FAIL_HERE(EIO);
	n = pread(dfd, buf, len, (off_t)(r->offset + off));

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int pp_os_vfio_region_write(int dfd, const struct pp_os_vfio_region *r,
			    uint64_t off, const void *buf, size_t len)
{
	ssize_t n;

	PP_OS_FAIL_HERE(EIO);
	n = pwrite(dfd, buf, len, (off_t)(r->offset + off));

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int pp_os_vfio_device_reset(int dfd)
{
	PP_OS_FAIL_HERE(EIO);
	return ioctl(dfd, VFIO_DEVICE_RESET) ? -errno : 0;
}
