/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e1000e_priv.h - the e1000e driver's per-port state and what its two
 * halves share (e1000e.c, the control path; e1000e_rxtx.c, the data
 * path), for the driver, for the in-guest tests that check how it treats
 * what the device writes, and for the fuzzer that plays a hostile device
 * (tests/fuzz/fuzz_e1000e.c).
 */
#ifndef PP_E1000E_PRIV_H
#define PP_E1000E_PRIV_H

#include <pthread.h>

#include <pagepool/pp_net_driver.h>

#include "e1000e_hw.h"

struct pp_pci_dev;

/* One 4 KiB page of 16-byte descriptors; RDLEN/TDLEN must be a multiple
 * of 128 bytes (10.2.5.6), which 4096 is. */
#define RING_SIZE (PP_PAGE_SIZE / sizeof(struct e1000_rx_desc))
#define RING_MASK (RING_SIZE - 1)

/* The statistics registers e1000e_xstats.c adds up. */
enum { E1000E_HW_GPRC, E1000E_HW_GPTC, E1000E_HW_MPC, E1000E_HW_CRCERRS,
       E1000E_HW_RNBC, E1000E_HW_TPR, E1000E_HW_NR };

struct e1000e_port {
	struct pp_pci_dev *pci;
	volatile uint8_t *regs;
	struct pp_dma *dma;
	/* RX: the polling thread's. */
	struct e1000_rx_desc *rx_ring;
	struct pp_page *rx_page[RING_SIZE];
	uint32_t rx_off[RING_SIZE];   /* buffer offset in the page */
	unsigned int rx_next;         /* next descriptor to check */
	uint32_t rx_holder;           /* holder codes of the rings (pp_where.h) */
	uint32_t tx_holder;
	unsigned int rx_hold;         /* refilled, not yet given (RDT) */
	/*
	 * Multi-buffer RX, for an MTU above what one 2048-byte buffer
	 * holds (e1000e_rings_init()): descriptors without EOP chain into
	 * one packet (e1000e_rx_burst() hands the burst to the chain
	 * path). rx_discard: a chain was refused before its EOP came, and
	 * the descriptors up to that EOP are dropped too, uncounted.
	 */
	bool rx_chain;
	bool rx_discard;
	uint32_t rx_max_pkt;          /* the longest packet: MTU + 18 */
	/* TX: the sending thread's. */
	struct e1000_tx_desc *tx_ring;
	struct pp_page *tx_page[RING_SIZE];
	/* Only the last descriptor of a burst asks for a status write-back
	 * (RS); tx_rs[i] is that descriptor for slot i. */
	uint16_t tx_rs[RING_SIZE];
	unsigned int tx_clean;        /* oldest descriptor not yet reclaimed */
	unsigned int tx_tail;         /* next descriptor to fill */
	struct pp_page *ring_page[2];
	uint16_t headroom;
	uint8_t mac[6];
	/* Cold: the clear-on-read registers added up since the probe, and
	 * what pp_e1000e_stats() reported last (e1000e_xstats.c). */
	pthread_mutex_t hw_lock;
	uint64_t hw_total[E1000E_HW_NR];
	uint64_t hw_seen[E1000E_HW_NR];
};

/*
 * e1000e_rings_init - the ring part of probe, on @ep whose dma and
 * headroom are set: one zeroed allocator page per ring mapped in ep->dma
 * (their IOVAs in *@rx_iova and *@tx_iova, for RDBA and TDBA), and every
 * RX slot given a buffer from @port's RX pool (the calling thread must be
 * its owner); and the RX mode the port's MTU asks for (ep->rx_chain,
 * ep->rx_max_pkt; e1000e_rctl_lpe() gives the RCTL bit that goes with it).
 * Registers are not touched. Returns 0, or -ENOMEM or the
 * mapping's error with a message naming @name; what was taken is then
 * returned by e1000e_rings_release().
 */
int e1000e_rings_init(struct pp_port *port, struct e1000e_port *ep,
		      const char *name, uint64_t *rx_iova, uint64_t *tx_iova);

/*
 * e1000e_rctl_lpe - RCTL.LPE, for a port whose MTU is above 1500: the
 * 82574 (and QEMU's model) drops frames over 1518 bytes without it.
 */
static inline uint32_t e1000e_rctl_lpe(const struct pp_port *port)
{
	return pp_port_mtu(port) > PP_PORT_MTU_DEFAULT ? E1000_RCTL_LPE : 0;
}

/*
 * e1000e_rings_release - the page part of remove, once the device is
 * stopped: RX buffers back to the RX pool (owner thread), pages still on
 * the TX ring back to their pools, both ring pages to the allocator. Safe
 * on a half-made port and twice.
 */
void e1000e_rings_release(struct pp_port *port, struct e1000e_port *ep);

/* The data path, the driver's rx_burst and tx_burst ops. */
unsigned int e1000e_rx_burst(struct pp_rxq *rxq, struct pp_frame *frames,
			     unsigned int n);
unsigned int e1000e_tx_burst(struct pp_txq *txq, struct pp_frame *frames,
			     unsigned int n);

/*
 * e1000e_xstats.c: the registers' growth since the last call into @d
 * (pp_e1000e_stats()), and pp_net_driver_ops.xstats and .mac_addr. Any
 * thread, with the registers mapped.
 */
void e1000e_hw_stats_delta(struct e1000e_port *ep, uint64_t d[E1000E_HW_NR]);
int e1000e_xstats(struct pp_port *port, struct pp_net_xstat *out,
		  unsigned int n);
int e1000e_mac_addr(struct pp_port *port, uint8_t mac[6]);

#endif /* PP_E1000E_PRIV_H */
