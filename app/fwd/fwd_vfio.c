/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd_vfio.c - the forwarder's ports on PCI devices: which device strings
 * name a VFIO driver, and the one IOMMU domain they all share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd.h"

/*
 * Ports whose driver reaches a PCI device through VFIO need conf.dma, a
 * PP_IOVA_VFIO domain holding the device's IOMMU group with the arena
 * mapped. Returns the PCI address in a device string of such a driver
 * ("e1000e:ADDR", "e1000e0,pci=ADDR" or ",iface=ADDR"), else NULL.
 */
static const char *const vfio_drivers[] = { "e1000e", NULL };

static const char *vfio_pci_addr(const char *devstr, char *buf, size_t len)
{
	size_t n = strcspn(devstr, ":,"), d = n;
	const char *a = NULL;

	while (d && devstr[d - 1] >= '0' && devstr[d - 1] <= '9')
		d--;
	for (unsigned int i = 0; vfio_drivers[i]; i++) {
		if (strlen(vfio_drivers[i]) != d ||
		    strncmp(devstr, vfio_drivers[i], d))
			continue;
		if (devstr[n] == ':')
			a = devstr + n + 1;
		for (const char *k = strchr(devstr, ','); !a && k;
		     k = strchr(k + 1, ','))
			if (!strncmp(k, ",pci=", 5) || !strncmp(k, ",iface=", 7))
				a = strchr(k, '=') + 1;
		if (!a)
			return NULL; /* the driver says what is missing */
		snprintf(buf, len, "%.*s", (int)strcspn(a, ","), a);
		return buf;
	}
	return NULL;
}

struct pp_dma *vfio_domain_create(const char *const *dev, unsigned int nr_dev,
				  struct pp_arena *arena, bool *uses)
{
	struct pp_dma_opts o = { .sz = sizeof(o), .mode = PP_IOVA_VFIO };
	struct pp_dma *dma = NULL;
	char addr[64];
	int err;

	for (unsigned int i = 0; i < nr_dev; i++) {
		uses[i] = vfio_pci_addr(dev[i], addr, sizeof(addr)) != NULL;
		if (!uses[i])
			continue;
		if (!dma) {
			o.vfio_pci_addr = addr;
			dma = pp_dma_create(&o);
			err = dma ? 0 : -errno;
		} else {
			err = pp_dma_vfio_add_device(dma, addr);
		}
		if (err == -EINVAL) {
			/* A --port to correct, not the machine: exit 2. */
			fprintf(stderr, "fwd: '%s' is not a PCI address (the message above says what to write)\n",
				addr);
			exit(2);
		}
		if (err) {
			fprintf(stderr, "fwd: cannot reach %s through VFIO: %s (bind it to vfio-pci: pp-devbind --bind vfio-pci %s; the message above says more)\n",
				addr, strerror(-err), addr);
			exit(1);
		}
	}
	if (dma && (err = pp_dma_map_arena(dma, arena))) {
		fprintf(stderr, "fwd: cannot map the arena for DMA: %s (the message above says what to change)\n",
			strerror(-err));
		exit(1);
	}
	return dma;
}
