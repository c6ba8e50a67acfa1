/* SPDX-License-Identifier: BSD-3-Clause */
/* drivers.h - the built-in drivers, for the table in drivers.c. */
#ifndef PP_DRIVERS_H
#define PP_DRIVERS_H

#include <pagepool/pp_net_driver.h>

extern const struct pp_net_driver pp_net_null_driver;
extern const struct pp_net_driver pp_net_veth_driver;

#endif /* PP_DRIVERS_H */
