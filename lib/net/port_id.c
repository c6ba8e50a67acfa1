/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port_id.c - every open port's number, DPDK's port_id: the lowest one
 * free when the port is created, given back when it is freed. Telemetry
 * lists and finds ports by it (/ethdev/list), and a page's holder names
 * its port by it (pp_where.h), 12 bits there, hence the limit.
 *
 * A number is taken before the probe (the pools and rings are set up
 * under it) but the port is listed, for pp_port_ids_each/with, only
 * from the end of a successful probe to the start of pp_port_close():
 * telemetry's readers then never see a driver half set up or being
 * removed (a driver's xstats op reads its private state, which
 * remove() frees), and the number stays taken until the memory goes,
 * so no other port gets it while pages still name the old one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include "net_priv.h"
#include "pp_log.h"
#include "pp_port_ids.h"

static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pp_port *ports_by_id[PP_PORT_ID_MAX];
static bool listed[PP_PORT_ID_MAX];

int net_port_id_take(struct pp_port *port)
{
	unsigned int id;

	pthread_mutex_lock(&ids_lock);
	for (id = 0; id < PP_PORT_ID_MAX; id++)
		if (!ports_by_id[id])
			break;
	if (id < PP_PORT_ID_MAX) {
		ports_by_id[id] = port;
		port->id = id;
	}
	pthread_mutex_unlock(&ids_lock);
	if (id == PP_PORT_ID_MAX) {
		PP_ERR("port %s: %u ports are open already, the most a process may have: close one first",
		       port->name, PP_PORT_ID_MAX);
		return -ENOSPC;
	}
	return 0;
}

void net_port_id_drop(struct pp_port *port)
{
	pthread_mutex_lock(&ids_lock);
	if (port->id < PP_PORT_ID_MAX && ports_by_id[port->id] == port) {
		ports_by_id[port->id] = NULL;
		listed[port->id] = false;
	}
	pthread_mutex_unlock(&ids_lock);
}

static void set_listed(struct pp_port *port, bool on)
{
	pthread_mutex_lock(&ids_lock);
	if (port->id < PP_PORT_ID_MAX && ports_by_id[port->id] == port)
		listed[port->id] = on;
	pthread_mutex_unlock(&ids_lock);
}

void net_port_id_list(struct pp_port *port)
{
	set_listed(port, true);
}

void net_port_id_unlist(struct pp_port *port)
{
	if (port)
		set_listed(port, false);
}

unsigned int pp_port_id(const struct pp_port *port)
{
	return port->id;
}

int pp_port_ids_each(int (*fn)(struct pp_port *port, void *arg), void *arg)
{
	int ret = 0;

	pthread_mutex_lock(&ids_lock);
	for (unsigned int id = 0; id < PP_PORT_ID_MAX && !ret; id++)
		if (listed[id])
			ret = fn(ports_by_id[id], arg);
	pthread_mutex_unlock(&ids_lock);
	return ret;
}

int pp_port_ids_with(unsigned int id,
		     int (*fn)(struct pp_port *port, void *arg), void *arg)
{
	int ret = -ENODEV;

	pthread_mutex_lock(&ids_lock);
	if (id < PP_PORT_ID_MAX && listed[id])
		ret = fn(ports_by_id[id], arg);
	pthread_mutex_unlock(&ids_lock);
	return ret;
}
