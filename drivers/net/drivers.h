/* SPDX-License-Identifier: BSD-3-Clause */
/* drivers.h - the built-in drivers, for the table in drivers.c. */
#ifndef PP_DRIVERS_H
#define PP_DRIVERS_H

#include <pagepool/pp_net_driver.h>

extern const struct pp_net_driver pp_net_null_driver;
extern const struct pp_net_driver pp_net_veth_driver;
#ifdef PP_HAVE_AF_XDP
extern const struct pp_net_driver pp_net_af_xdp_driver;
#endif
#ifdef PP_HAVE_E1000E
extern const struct pp_net_driver pp_net_e1000e_driver;
#endif
#ifdef PP_HAVE_VIRTIO_USER
extern const struct pp_net_driver pp_net_virtio_user_driver;
#endif

#endif /* PP_DRIVERS_H */
