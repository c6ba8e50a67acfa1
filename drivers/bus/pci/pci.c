/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pci.c - PCI devices behind VFIO: find by address, open, map BARs, switch
 * on decoding and bus mastering. All VFIO calls go through lib/os.
 *
 * Why the command register first: a BAR is not decoded until MEMORY is set
 * (a read returns all ones, a write is lost), and a device whose MASTER bit
 * is clear cannot DMA at all. vfio-pci clears both when it takes the device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "pp_log.h"
#include "pp_os_fault.h"
#include "pp_pci_priv.h"

long pp_pci_sysfs_read(const char *addr, const char *attr)
{
	char path[128], a[PP_PCI_ADDR_LEN];
	long v;
	FILE *f;

	if (pp_os_pci_addr_parse(addr, a))
		return -EINVAL;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", a, attr);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%li", &v) != 1)
		v = -EINVAL;
	fclose(f);
	return v;
}

int pp_pci_cfg_read16(struct pp_pci_dev *dev, unsigned int off, uint16_t *v)
{
	return pp_os_vfio_region_read(dev->fd, &dev->cfg, off, v, sizeof(*v));
}

int pp_pci_cfg_write16(struct pp_pci_dev *dev, unsigned int off, uint16_t v)
{
	return pp_os_vfio_region_write(dev->fd, &dev->cfg, off, &v, sizeof(v));
}

static void unmap_bars(struct pp_pci_dev *dev)
{
	unsigned int i;

	for (i = 0; i < PP_PCI_MAX_BARS; i++)
		if (dev->bar_addr[i])
			pp_os_vfio_region_unmap(dev->bar_addr[i], &dev->bar[i]);
}

struct pp_pci_dev *pp_pci_open(struct pp_dma *dma, const char *in)
{
	char addr[PP_PCI_ADDR_LEN];
	struct pp_pci_dev *dev;
	long vendor, device;
	unsigned int i;
	uint16_t cmd;
	int err;

	/* The address first: it goes into sysfs paths below. */
	if (pp_os_pci_addr_parse(in, addr)) {
		PP_ERR("pci: '%.40s%s' is not a PCI address: write " PP_PCI_ADDR_FORMS,
		       in ? in : "(null)", in && strlen(in) > 40 ? "..." : "");
		errno = EINVAL;
		return NULL;
	}
	if (!dma || pp_dma_mode(dma) != PP_IOVA_VFIO) {
		PP_ERR("pci: %s: a VFIO DMA domain (PP_IOVA_VFIO) is required",
		       addr);
		errno = EINVAL;
		return NULL;
	}
	vendor = pp_pci_sysfs_read(addr, "vendor");
	device = pp_pci_sysfs_read(addr, "device");
	if (vendor < 0 || device < 0) {
		PP_ERR("pci: no device %s in /sys/bus/pci/devices: list them with pp-devbind --status",
		       addr);
		errno = ENODEV;
		return NULL;
	}
	dev = pp_os_calloc(1, sizeof(*dev));
	if (!dev) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(dev->addr, addr, sizeof(dev->addr));
	dev->vendor = (uint16_t)vendor;
	dev->device = (uint16_t)device;
	dev->fd = pp_dma_vfio_device_fd(dma, addr);
	if (dev->fd < 0) {
		err = dev->fd;
		goto err_free;
	}
	err = pp_os_vfio_region_info(dev->fd, VFIO_PCI_CONFIG_REGION_INDEX,
				     &dev->cfg);
	if (err) {
		PP_ERR("pci: %s: no config space region (%s): is it bound to vfio-pci?",
		       addr, strerror(-err));
		goto err_close;
	}
	for (i = 0; i < PP_PCI_MAX_BARS; i++) {
		struct pp_os_vfio_region *r = &dev->bar[i];

		if (pp_os_vfio_region_info(dev->fd,
					   VFIO_PCI_BAR0_REGION_INDEX + i, r) ||
		    !r->size || !(r->flags & VFIO_REGION_INFO_FLAG_MMAP))
			continue;
		dev->bar_addr[i] = pp_os_vfio_region_map(dev->fd, r);
		if (!dev->bar_addr[i]) {
			err = -errno;
			PP_ERR("pci: %s: mmap of BAR%u (%llu bytes) failed (%s)",
			       addr, i, (unsigned long long)r->size,
			       strerror(errno));
			goto err_unmap;
		}
	}
	err = pp_pci_cfg_read16(dev, PP_PCI_COMMAND, &cmd);
	if (!err) {
		/* Polled, so legacy interrupts stay off. */
		cmd |= PP_PCI_COMMAND_MEMORY | PP_PCI_COMMAND_MASTER |
		       PP_PCI_COMMAND_INTX_DISABLE;
		err = pp_pci_cfg_write16(dev, PP_PCI_COMMAND, cmd);
	}
	if (err) {
		PP_ERR("pci: %s: cannot enable memory decoding and bus mastering (%s)",
		       addr, strerror(-err));
		goto err_unmap;
	}
	return dev;

err_unmap:
	unmap_bars(dev);
err_close:
	close(dev->fd);
err_free:
	free(dev);
	errno = -err;
	return NULL;
}

void pp_pci_close(struct pp_pci_dev *dev)
{
	uint16_t cmd;

	if (!dev)
		return;
	if (pp_pci_cfg_read16(dev, PP_PCI_COMMAND, &cmd) == 0)
		pp_pci_cfg_write16(dev, PP_PCI_COMMAND,
				   cmd & ~PP_PCI_COMMAND_MASTER);
	unmap_bars(dev);
	close(dev->fd);
	free(dev);
}
