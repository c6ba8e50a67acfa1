/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port_id.c - every open port's number, DPDK's port_id: the lowest one
 * free when the port is created, given back when it is freed. Telemetry
 * lists and finds ports by it (/ethdev/list), and a page's holder names
 * its port by it (pp_where.h), 12 bits there, hence the limit.
 *
 * A number is taken at create and dropped at free; the port is in the
 * table that others read (pp_port_ids.h, the ring walk of pp_holders.h)
 * only from the end of a successful create to the start of its close,
 * while its driver's state is whole. The name stays with the number
 * until it is reused, so that a report about pages a closed port's
 * application still holds can name it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "net_priv.h"
#include "pp_holders.h"
#include "pp_log.h"
#include "pp_port_ids.h"

static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static bool id_taken[PP_PORT_ID_MAX];
static struct pp_port *ports_by_id[PP_PORT_ID_MAX];
static char names[PP_PORT_ID_MAX][PP_PORT_NAME_MAX];

/* The holder names of lower layers' reports (pp_holders.h). */
static int port_name_of(unsigned int id, char *buf, size_t len, bool *open)
{
	int ret = -ENODEV;

	pthread_mutex_lock(&ids_lock);
	if (id < PP_PORT_ID_MAX && names[id][0]) {
		snprintf(buf, len, "%s", names[id]);
		*open = ports_by_id[id] != NULL;
		ret = 0;
	}
	pthread_mutex_unlock(&ids_lock);
	return ret;
}

/* The pages drivers' rings hold unstamped, every port's (pp_holders.h). */
static void ring_pages_of_all(pp_ring_page_fn fn, void *arg)
{
	pthread_mutex_lock(&ids_lock);
	for (unsigned int id = 0; id < PP_PORT_ID_MAX; id++) {
		struct pp_port *port = ports_by_id[id];

		if (port && port->drv->ops.ring_pages)
			port->drv->ops.ring_pages(port, fn, arg);
	}
	pthread_mutex_unlock(&ids_lock);
}

int net_port_id_take(struct pp_port *port)
{
	unsigned int id;

	pp_port_name_hook_set(port_name_of);
	pp_ring_pages_hook_set(ring_pages_of_all);
	pthread_mutex_lock(&ids_lock);
	for (id = 0; id < PP_PORT_ID_MAX; id++)
		if (!id_taken[id])
			break;
	if (id < PP_PORT_ID_MAX) {
		id_taken[id] = true;
		memcpy(names[id], port->name, sizeof(names[id]));
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

static void table_set(struct pp_port *port, struct pp_port *value)
{
	if (!port || port->id >= PP_PORT_ID_MAX)
		return;
	pthread_mutex_lock(&ids_lock);
	if (id_taken[port->id])
		ports_by_id[port->id] = value;
	pthread_mutex_unlock(&ids_lock);
}

void net_port_publish(struct pp_port *port)
{
	table_set(port, port);
}

void net_port_unpublish(struct pp_port *port)
{
	table_set(port, NULL);
}

void net_port_id_drop(struct pp_port *port)
{
	if (port->id >= PP_PORT_ID_MAX)
		return;
	pthread_mutex_lock(&ids_lock);
	ports_by_id[port->id] = NULL;
	id_taken[port->id] = false;
	pthread_mutex_unlock(&ids_lock);
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
		if (ports_by_id[id])
			ret = fn(ports_by_id[id], arg);
	pthread_mutex_unlock(&ids_lock);
	return ret;
}

int pp_port_ids_with(unsigned int id,
		     int (*fn)(struct pp_port *port, void *arg), void *arg)
{
	int ret = -ENODEV;

	pthread_mutex_lock(&ids_lock);
	if (id < PP_PORT_ID_MAX && ports_by_id[id])
		ret = fn(ports_by_id[id], arg);
	pthread_mutex_unlock(&ids_lock);
	return ret;
}
