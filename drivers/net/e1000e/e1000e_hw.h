/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e1000e_hw.h - Intel 82574 registers and descriptors, the subset this
 * driver uses. Section numbers are from the "Intel 82574 GbE Controller
 * Family Datasheet" (rev 3.4); QEMU's -device e1000e emulates this part.
 * Shared by the driver and the in-guest tests that program the NIC by hand.
 */
#ifndef PP_E1000E_HW_H
#define PP_E1000E_HW_H

#include <stdint.h>

/* 10.2.2.1 Device Control; 10.2.2.2 Device Status. */
#define E1000_CTRL 0x0000
#define E1000_CTRL_SLU (1u << 6)   /* set link up */
#define E1000_CTRL_RST (1u << 26)  /* software reset, self-clearing */
#define E1000_STATUS 0x0008
#define E1000_STATUS_LU (1u << 1)  /* link up */
/* 10.2.4: interrupt cause read, mask set, mask clear. */
#define E1000_ICR 0x00C0
#define E1000_IMC 0x00D8
/* 10.2.5.1 Receive Control. */
#define E1000_RCTL 0x0100
#define E1000_RCTL_EN (1u << 1)
#define E1000_RCTL_UPE (1u << 3)   /* unicast promiscuous */
#define E1000_RCTL_MPE (1u << 4)   /* multicast promiscuous */
#define E1000_RCTL_LPE (1u << 5)   /* long packets: over 1518 bytes */
#define E1000_RCTL_BAM (1u << 15)  /* accept broadcast */
#define E1000_RCTL_SECRC (1u << 26) /* strip the CRC */
/* BSIZE 00 with BSEX 0: 2048-byte buffers (10.2.5.1). */
#define E1000_RX_BUF_LEN 2048u
/* 10.2.6.1 Transmit Control; 10.2.6.2 inter-packet gap. */
#define E1000_TCTL 0x0400
#define E1000_TCTL_EN (1u << 1)
#define E1000_TCTL_PSP (1u << 3)   /* pad short packets */
#define E1000_TCTL_CT (0x0Fu << 4) /* collision threshold, 10.2.6.1 */
#define E1000_TCTL_COLD (0x3Fu << 12) /* collision distance, full duplex */
#define E1000_TIPG 0x0410
#define E1000_TIPG_DEFAULT 0x00602008u /* 10.2.6.2 recommended for copper */
/* 10.2.5.4-10.2.5.8: the RX ring; 10.2.6.5-10.2.6.9: the TX ring. */
#define E1000_RDBAL 0x2800
#define E1000_RDBAH 0x2804
#define E1000_RDLEN 0x2808
#define E1000_RDH 0x2810
#define E1000_RDT 0x2818
#define E1000_TDBAL 0x3800
#define E1000_TDBAH 0x3804
#define E1000_TDLEN 0x3808
#define E1000_TDH 0x3810
#define E1000_TDT 0x3818
/* 10.2.5.15 Receive Filter Control: EXSTEN selects extended RX
 * descriptors; clear, the legacy format (7.1.4.1) is used. */
#define E1000_RFCTL 0x5008
#define E1000_RFCTL_EXSTEN (1u << 15)
/* 10.2.5.12/13 Receive Address 0 (the MAC address); AV = valid. */
#define E1000_RAL0 0x5400
#define E1000_RAH0 0x5404
#define E1000_RAH_AV (1u << 31)
/* 10.2.7 statistics, clear on read. */
#define E1000_CRCERRS 0x4000
#define E1000_MPC 0x4010   /* missed: no descriptor free */
#define E1000_GPRC 0x4074
#define E1000_GPTC 0x4080
#define E1000_RNBC 0x40A0  /* receive no buffers */
#define E1000_TPR 0x40D0

/* 7.1.4.1 legacy receive descriptor. */
struct e1000_rx_desc {
	uint64_t addr;
	uint16_t length;
	uint16_t csum;
	uint8_t status;
	uint8_t errors;
	uint16_t special;
};
#define E1000_RXD_STAT_DD 0x01   /* descriptor done */
#define E1000_RXD_STAT_EOP 0x02  /* end of packet */

/* 7.2.10.1 legacy transmit descriptor. */
struct e1000_tx_desc {
	uint64_t addr;
	uint16_t length;
	uint8_t cso;
	uint8_t cmd;
	uint8_t status;
	uint8_t css;
	uint16_t special;
};
#define E1000_TXD_CMD_EOP 0x01
#define E1000_TXD_CMD_IFCS 0x02  /* insert the CRC */
#define E1000_TXD_CMD_RS 0x08    /* report status (sets DD) */
#define E1000_TXD_STAT_DD 0x01

_Static_assert(sizeof(struct e1000_rx_desc) == 16, "7.1.4.1: 16 bytes");
_Static_assert(sizeof(struct e1000_tx_desc) == 16, "7.2.10.1: 16 bytes");

static inline uint32_t e1000_read(const volatile uint8_t *regs, uint32_t reg)
{
	return *(const volatile uint32_t *)(regs + reg);
}

static inline void e1000_write(volatile uint8_t *regs, uint32_t reg,
			       uint32_t v)
{
	*(volatile uint32_t *)(regs + reg) = v;
}

struct pp_port;
/*
 * pp_e1000e_stats - an e1000e port's hardware counters since the last call
 * (10.2.7, clear on read): good frames received and sent, frames missed for
 * want of a descriptor, CRC errors. For tests and tools. 0 or -EINVAL.
 * Telemetry's /ethdev/xstats reads the registers too, into totals this
 * call reports the growth of, so neither takes the other's counts.
 */
int pp_e1000e_stats(struct pp_port *port, uint64_t *rx, uint64_t *tx,
		    uint64_t *missed, uint64_t *crc);

#endif /* PP_E1000E_HW_H */
