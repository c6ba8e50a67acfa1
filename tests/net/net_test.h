/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_test.h - what the lib/net tests share: a 4 KiB-page arena with an
 * allocator (no hugepages needed), port opening, and the accounting check
 * every test ends with: after closing all ports, no page is allocated.
 */
#ifndef NET_TEST_H
#define NET_TEST_H

#include <pagepool/pp_drivers.h>

#include "pp_test.h"

struct net_env {
	struct pp_arena *arena;
	struct pp_allocator *alloc;
	struct pp_port_conf conf;
};

static inline void net_env_init(struct net_env *e, size_t bytes)
{
	e->arena = pp_test_arena(bytes, PP_PAGE_SIZE_4K);
	e->alloc = pp_test_allocator(e->arena);
	memset(&e->conf, 0, sizeof(e->conf));
	e->conf.sz = sizeof(e->conf);
	e->conf.allocator = e->alloc;
	e->conf.nid = PP_NUMA_NODE_ANY;
}

static inline struct pp_port *net_open(struct net_env *e, const char *dev)
{
	struct pp_port *p = pp_port_open(dev, &e->conf);

	if (!p)
		fprintf(stderr, "pp_port_open(%s): %s\n", dev, strerror(errno));
	REQUIRE(p != NULL);
	return p;
}

/* Every pool of @p passes its invariant walker (call on the owner). */
static inline void net_check_pools(struct pp_port *p)
{
	for (unsigned int q = 0; q < pp_port_nr_rxq(p); q++) {
		pp_pool_set_owner(pp_port_rxq_pool(p, q));
		CHECK_EQ(pp_pool_check(pp_port_rxq_pool(p, q)), 0);
	}
}

/* After every port is closed: the allocator balances, nothing leaked. */
static inline void net_env_fini(struct net_env *e)
{
	unsigned long allocated = 1;

	pp_allocator_drain_thread(e->alloc);
	CHECK_EQ(pp_allocator_check(e->alloc, &allocated), 0);
	CHECK_EQ(allocated, 0);
	CHECK_EQ(pp_allocator_destroy(e->alloc), 0);
	CHECK_EQ(pp_arena_destroy(e->arena), 0);
}

static inline uint64_t frame_seq(const struct pp_frame *f)
{
	uint64_t seq;

	memcpy(&seq, (char *)pp_frame_data(f) + PP_NULL_SEQ_OFF, sizeof(seq));
	return seq;
}

#endif /* NET_TEST_H */
