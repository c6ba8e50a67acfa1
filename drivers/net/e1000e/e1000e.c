/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e1000e.c - a poll-mode driver for the Intel 82574 (8086:10d3, QEMU's
 * -device e1000e) through VFIO: one RX and one TX queue, legacy
 * descriptors, no interrupts. This file is the control path (probe,
 * remove, reset, link); the data path is in e1000e_rxtx.c, apart so that
 * the descriptor-ring fuzzer can run it against a simulated device.
 *
 *   e1000e:0000:00:02.0          (pp_port_open() rewrites it as
 *   e1000e,iface=0000:00:02.0     iface=; pci= is the same key)
 *   e1000e0,pci=0000:00:02.0      (the port's conf.dma must be a VFIO domain)
 *
 * Memory: both descriptor rings are one 4 KiB arena page each (256
 * descriptors), taken from the port's allocator, so they lie in memory the
 * domain has mapped. RX buffers come from the RX queue's page_pool, which
 * maps each page once (an O(1) IOVA lookup); a buffer starts at the page's
 * colour plus the headroom and is 2048 bytes long (RCTL.BSIZE).
 *
 * MTU: up to 1500, frames of up to 1518 bytes, one 2048-byte buffer each.
 * Above 1500, RCTL.LPE lets longer frames in; above what a buffer holds
 * (MTU 2030), a frame spans several RX descriptors, all but the last
 * without EOP, and the driver hands it out as one multi-buffer packet of
 * that many frames (pp_net.h), whole: a chain whose EOP has not come yet
 * waits in the ring. TX sends a multi-buffer packet as one descriptor
 * per segment, EOP on the last. Any MTU up to PP_PORT_MTU_MAX fits in
 * PP_FRAME_MAX_SEGS buffers (9216 bytes: 5).
 *
 * Nothing the device writes is trusted: a descriptor with error bits,
 * without EOP (a frame spread over buffers) while the MTU fits in one
 * buffer, or with a length above the buffer or below an Ethernet header
 * is dropped, its page recycled, and counted in the queue's errors. With
 * chains, the whole chain is refused and counted once when any of its
 * descriptors has errors or a length outside its buffer, when the frame
 * is shorter than an Ethernet header or longer than the MTU's frame, or
 * when PP_FRAME_MAX_SEGS + 1 descriptors come without EOP (then the rest
 * of that chain, up to its EOP, is dropped too); every buffer goes back
 * to the pool. Nor is a frame handed to TX: one that does not lie in
 * its page block (pp_frame_valid()) would make the device read the
 * neighbouring arena pages onto the wire, so it gets no descriptor; it is
 * taken, its page returned, and counted in the TX queue's errors.
 *
 * Ownership (7.1.5, 7.2.2): the device owns RX descriptors [RDH, RDT) and
 * TX descriptors [TDH, TDT). One slot of each ring stays empty so that
 * head == tail means empty. Writes to descriptors are ordered before the
 * tail write by a release fence; reads of a descriptor's fields after its
 * DD bit by an acquire fence (x86 keeps both orders; the fences keep the
 * compiler from moving the accesses).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <pagepool/pp_net_driver.h>

#include "../../bus/pci/pp_pci_priv.h"
#include "pp_log.h"
#include "drivers.h"
#include "e1000e_priv.h"
#include "pp_os_fault.h"

/* Reset completes within 1 ms (datasheet 14.4); allow 100. */
#define RESET_WAIT_MS 100
/* Auto-negotiation takes up to a few seconds on copper. */
#define LINK_WAIT_MS 5000

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* 14.4 software reset: interrupts masked before and after. */
static int hw_reset(struct e1000e_port *ep)
{
	unsigned int ms;

	e1000_write(ep->regs, E1000_IMC, 0xffffffff);
	e1000_write(ep->regs, E1000_CTRL,
		    e1000_read(ep->regs, E1000_CTRL) | E1000_CTRL_RST);
	for (ms = 0; ms < RESET_WAIT_MS; ms++) {
		sleep_ms(1);
		if (!(e1000_read(ep->regs, E1000_CTRL) & E1000_CTRL_RST))
			break;
	}
	if (ms == RESET_WAIT_MS)
		return -ETIMEDOUT;
	e1000_write(ep->regs, E1000_IMC, 0xffffffff);
	(void)e1000_read(ep->regs, E1000_ICR);
	return 0;
}

static void stats_clear(struct e1000e_port *ep)
{
	static const uint32_t regs[] = { E1000_CRCERRS, E1000_MPC, E1000_GPRC,
					 E1000_GPTC, E1000_RNBC, E1000_TPR };
	unsigned int i;

	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		(void)e1000_read(ep->regs, regs[i]);
}

static void e1000e_remove(struct pp_port *port);

static int e1000e_probe(struct pp_port *port, const struct pp_devargs *da)
{
	const char *given = pp_devargs_get(da, "pci");
	char addr[PP_PCI_ADDR_LEN];
	struct e1000e_port *ep;
	uint64_t rx_iova, tx_iova;
	uint32_t ral, rah;
	unsigned int i, ms;
	int err;

	if (!given)
		given = pp_devargs_get(da, "iface");
	if (!given) {
		PP_ERR("e1000e: device '%s' needs a PCI address: e1000e:0000:00:02.0 or e1000e0,pci=0000:00:02.0",
		       da->devstr);
		return -EINVAL;
	}
	/* Where the operator's address enters: refused here, before the
	 * PCI bus or VFIO builds a sysfs path from it. */
	if (pp_os_pci_addr_parse(given, addr)) {
		PP_ERR("e1000e: '%s' is not a PCI address: write e1000e:ADDR or e1000e0,pci=ADDR where ADDR is " PP_PCI_ADDR_FORMS,
		       given);
		return -EINVAL;
	}
	if (!port->conf.dma || pp_dma_mode(port->conf.dma) != PP_IOVA_VFIO) {
		PP_ERR("e1000e: %s: the port needs conf.dma, a PP_IOVA_VFIO domain with the arena mapped",
		       addr);
		return -EINVAL;
	}
	if (port->nr_rxq != 1 || port->nr_txq != 1) {
		PP_ERR("e1000e: %s: one RX and one TX queue only (the 82574 has two, not used yet): set nr_rxq = 1",
		       addr);
		return -EINVAL;
	}
	ep = pp_os_calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	port->priv = ep;
	pthread_mutex_init(&ep->hw_lock, NULL);
	ep->dma = port->conf.dma;
	ep->headroom = (uint16_t)port->conf.headroom;
	if (ep->headroom + E1000_RX_BUF_LEN > PP_PAGE_SIZE) {
		PP_ERR("e1000e: headroom %u leaves no 2048-byte buffer in a page: use a headroom up to %u",
		       ep->headroom, (unsigned int)(PP_PAGE_SIZE - E1000_RX_BUF_LEN));
		err = -EINVAL;
		goto err_remove;
	}
	ep->pci = pp_pci_open(ep->dma, addr);
	if (!ep->pci) {
		err = -errno;
		goto err_remove;
	}
	if (ep->pci->vendor != 0x8086 || ep->pci->device != 0x10d3 ||
	    !ep->pci->bar_addr[0]) {
		PP_ERR("e1000e: %s is %04x:%04x, not an 82574 (8086:10d3) with BAR0",
		       addr, ep->pci->vendor, ep->pci->device);
		err = -ENODEV;
		goto err_remove;
	}
	ep->regs = ep->pci->bar_addr[0];
	err = hw_reset(ep);
	if (err) {
		PP_ERR("e1000e: %s: reset did not complete", addr);
		goto err_remove;
	}
	/* The MAC address, loaded from the NVM into RAL0/RAH0 (10.2.5.12). */
	ral = e1000_read(ep->regs, E1000_RAL0);
	rah = e1000_read(ep->regs, E1000_RAH0);
	for (i = 0; i < 4; i++)
		ep->mac[i] = (uint8_t)(ral >> (8 * i));
	ep->mac[4] = (uint8_t)rah;
	ep->mac[5] = (uint8_t)(rah >> 8);
	e1000_write(ep->regs, E1000_RAH0, rah | E1000_RAH_AV);

	/* The RX pool's pages are this thread's while the ring is filled. */
	pp_pool_set_owner(port->rxq[0].pool);
	err = e1000e_rings_init(port, ep, addr, &rx_iova, &tx_iova);
	if (err)
		goto err_remove;

	/* 14.6 receive initialisation: legacy descriptors, 2048-byte
	 * buffers, CRC stripped, promiscuous (a forwarder sees every frame). */
	e1000_write(ep->regs, E1000_RFCTL,
		    e1000_read(ep->regs, E1000_RFCTL) & ~E1000_RFCTL_EXSTEN);
	e1000_write(ep->regs, E1000_RDBAL, (uint32_t)rx_iova);
	e1000_write(ep->regs, E1000_RDBAH, (uint32_t)(rx_iova >> 32));
	e1000_write(ep->regs, E1000_RDLEN, PP_PAGE_SIZE);
	e1000_write(ep->regs, E1000_RDH, 0);
	e1000_write(ep->regs, E1000_RDT, RING_SIZE - 1);
	e1000_write(ep->regs, E1000_RCTL,
		    E1000_RCTL_EN | E1000_RCTL_UPE | E1000_RCTL_MPE |
			    E1000_RCTL_BAM | E1000_RCTL_SECRC |
			    e1000e_rctl_lpe(port));
	/* 14.7 transmit initialisation. */
	e1000_write(ep->regs, E1000_TDBAL, (uint32_t)tx_iova);
	e1000_write(ep->regs, E1000_TDBAH, (uint32_t)(tx_iova >> 32));
	e1000_write(ep->regs, E1000_TDLEN, PP_PAGE_SIZE);
	e1000_write(ep->regs, E1000_TDH, 0);
	e1000_write(ep->regs, E1000_TDT, 0);
	e1000_write(ep->regs, E1000_TIPG, E1000_TIPG_DEFAULT);
	e1000_write(ep->regs, E1000_TCTL,
		    E1000_TCTL_EN | E1000_TCTL_PSP | E1000_TCTL_CT |
			    E1000_TCTL_COLD);
	stats_clear(ep);

	e1000_write(ep->regs, E1000_CTRL,
		    e1000_read(ep->regs, E1000_CTRL) | E1000_CTRL_SLU);
	for (ms = 0; ms < LINK_WAIT_MS; ms += 10) {
		if (e1000_read(ep->regs, E1000_STATUS) & E1000_STATUS_LU)
			break;
		sleep_ms(10);
	}
	if (ms >= LINK_WAIT_MS)
		PP_WARN("e1000e: %s: no link after %u ms: check the cable (or QEMU's -netdev)",
			addr, LINK_WAIT_MS);
	PP_INFO("e1000e: %s: %02x:%02x:%02x:%02x:%02x:%02x, link %s", addr,
		ep->mac[0], ep->mac[1], ep->mac[2], ep->mac[3], ep->mac[4],
		ep->mac[5], ms < LINK_WAIT_MS ? "up" : "down");
	port->txq[0].priv = ep;
	port->rxq[0].priv = ep;
	return 0;

err_remove:
	e1000e_remove(port);
	return err;
}

static void e1000e_remove(struct pp_port *port)
{
	struct e1000e_port *ep = port->priv;

	if (!ep)
		return;
	if (ep->regs) {
		/* Stop both units before their memory goes away. */
		e1000_write(ep->regs, E1000_RCTL, 0);
		e1000_write(ep->regs, E1000_TCTL, 0);
		(void)hw_reset(ep);
	}
	pp_pci_close(ep->pci);
	e1000e_rings_release(port, ep);
	pthread_mutex_destroy(&ep->hw_lock);
	free(ep);
	port->priv = NULL;
}

/* See e1000e_hw.h. */
int pp_e1000e_stats(struct pp_port *port, uint64_t *rx, uint64_t *tx,
		    uint64_t *missed, uint64_t *crc)
{
	struct e1000e_port *ep;
	uint64_t d[E1000E_HW_NR];

	if (!port || port->drv != &pp_net_e1000e_driver || !port->priv)
		return -EINVAL;
	ep = port->priv;
	/* Through the totals telemetry's reads add to (e1000e_xstats.c). */
	e1000e_hw_stats_delta(ep, d);
	*rx = d[E1000E_HW_GPRC];
	*tx = d[E1000E_HW_GPTC];
	*missed = d[E1000E_HW_MPC];
	*crc = d[E1000E_HW_CRCERRS];
	return 0;
}

static const char *const e1000e_keys[] = { "pci", "iface", NULL };

const struct pp_net_driver pp_net_e1000e_driver = {
	.name = "e1000e",
	.keys = e1000e_keys,
	.help = "e1000e:<domain:bus:slot.fn> or pci=<...> (bound to vfio-pci; conf.dma a VFIO domain)",
	.ops = {
		.probe = e1000e_probe,
		.remove = e1000e_remove,
		.rx_burst = e1000e_rx_burst,
		.tx_burst = e1000e_tx_burst,
		.xstats = e1000e_xstats,
		.mac_addr = e1000e_mac_addr,
	},
};
