/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pagepool.h - everything an application needs, in layer order.
 *
 * Libraries: pkg-config pagepool for all of it but pp_drivers.h, whose
 * pp_port_open() and built-in drivers are pagepool-drivers'. Writing a
 * driver of your own takes pp_net_driver.h as well (not included here).
 */
#ifndef PAGEPOOL_PAGEPOOL_H
#define PAGEPOOL_PAGEPOOL_H

#include <pagepool/pp_common.h>
#include <pagepool/pp_config.h>
#include <pagepool/pp_arena.h>
#include <pagepool/pp_page.h>
#include <pagepool/pp_vmalloc.h>
#include <pagepool/pp_dma.h>
#include <pagepool/pp_page_pool.h>
#include <pagepool/pp_net.h>
#include <pagepool/pp_drivers.h>
#include <pagepool/pp_telemetry.h>

#endif /* PAGEPOOL_PAGEPOOL_H */
