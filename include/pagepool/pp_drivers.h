/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_drivers.h - the built-in poll-mode drivers (null, veth, af_xdp,
 * e1000e) and pp_port_open(), which picks one from a device string.
 *
 * Link pagepool-drivers for these (pkg-config pagepool-drivers); the rest
 * of the port API (pp_net.h) is libpagepool's, which knows no driver but
 * the one it is handed (pp_net_driver.h, for writing one).
 */
#ifndef PAGEPOOL_PP_DRIVERS_H
#define PAGEPOOL_PP_DRIVERS_H

#include <pagepool/pp_net.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * pp_port_open - open a port from a device string "<driver><n>[,key=value]
 * ...": the driver is the name without its trailing digits ("null0" is a
 * null port named null0). Keys are the driver's (doc/net.md lists them).
 * Returns the port, or NULL with errno:
 *   EINVAL  unknown driver, key or value (the message names the bad part
 *           and what is accepted), bad conf;
 *   ENOMEM  no memory for the port, its rings or its pools.
 * A veth device string creates both ends of the pair (as "ip link add ...
 * type veth peer name ..." does); pp_port_peer() returns the other end.
 * The calling thread owns the RX pools until a poll on another thread.
 */
PP_API struct pp_port *pp_port_open(const char *devstr,
				    const struct pp_port_conf *conf);

/*
 * The null driver's wire format: each frame it fabricates is a 14-byte
 * Ethernet header (EtherType 0x88b5, local experimental) followed by the
 * RX queue's 64-bit sequence number in host byte order, so a receiver can
 * check order and loss (app/fwd --verify).
 */
#define PP_NULL_HDR_LEN 14
#define PP_NULL_SEQ_OFF PP_NULL_HDR_LEN

#ifdef __cplusplus
}
#endif

#endif /* PAGEPOOL_PP_DRIVERS_H */
