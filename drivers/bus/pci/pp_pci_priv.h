/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_pci_priv.h - the PCI bus for poll-mode drivers: a device found by its
 * address in sysfs, opened through VFIO, its BARs mapped and its memory
 * decoding and bus mastering switched on before any register is touched.
 * In-tree drivers (e1000e) and tests use it; it is not installed.
 */
#ifndef PP_PCI_PRIV_H
#define PP_PCI_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <pagepool/pp_dma.h>

#include "pp_os.h"
#include "pp_vfio.h"

#define PP_PCI_MAX_BARS 6

struct pp_pci_dev {
	char addr[PP_PCI_ADDR_LEN]; /* "0000:00:02.0", the kernel's form */
	uint16_t vendor, device;
	int fd;                 /* VFIO device file */
	struct pp_os_vfio_region cfg;
	struct pp_os_vfio_region bar[PP_PCI_MAX_BARS];
	void *bar_addr[PP_PCI_MAX_BARS];
};

/*
 * pp_pci_open - open PCI device @addr through VFIO domain @dma (its group
 * is added to the domain), map every memory BAR, and enable memory
 * decoding and bus mastering in the command register. @addr is what
 * pp_os_pci_addr_parse() accepts; dev->addr is its canonical form.
 * Returns NULL with errno: EINVAL (@dma not VFIO, or @addr not a PCI
 * address, refused before any path is built), ENODEV (no such device, not
 * bound to vfio-pci), or the errno of the failing call; a message says
 * what to do.
 */
struct pp_pci_dev *pp_pci_open(struct pp_dma *dma, const char *addr);

/* Switch bus mastering off (the device stops DMA), unmap, close. */
void pp_pci_close(struct pp_pci_dev *dev);

/* Config space through the VFIO config region. 0 or -errno. */
int pp_pci_cfg_read16(struct pp_pci_dev *dev, unsigned int off, uint16_t *v);
int pp_pci_cfg_write16(struct pp_pci_dev *dev, unsigned int off, uint16_t v);

/* PCI_COMMAND bits (PCI Local Bus spec 3.0, 6.2.2). */
#define PP_PCI_COMMAND 0x04
#define PP_PCI_COMMAND_MEMORY 0x0002
#define PP_PCI_COMMAND_MASTER 0x0004
#define PP_PCI_COMMAND_INTX_DISABLE 0x0400

/* Read the sysfs attribute @attr of device @addr ("vendor", "device",
 * "class") as a number. Returns it, or -errno: -EINVAL when @addr is not
 * a PCI address (pp_os_pci_addr_parse()), with no path built. */
long pp_pci_sysfs_read(const char *addr, const char *attr);

#endif /* PP_PCI_PRIV_H */
