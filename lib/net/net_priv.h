/* SPDX-License-Identifier: BSD-3-Clause */
/* net_priv.h - what lib/net's files share and nobody else sees. */
#ifndef PP_NET_PRIV_H
#define PP_NET_PRIV_H

#include <pagepool/pp_net_driver.h>

int net_devargs_parse(const char *devstr, struct pp_devargs *da);
int net_devargs_check_keys(const struct pp_devargs *da,
			   const struct pp_net_driver *drv);

/* port_id.c: give @port the lowest free number (0, or -ENOSPC with a
 * message) at create, and take it back at free; publish it in the table
 * others read once its driver is set up, and take it out before close
 * tears the driver down. */
int net_port_id_take(struct pp_port *port);
void net_port_id_drop(struct pp_port *port);
void net_port_publish(struct pp_port *port);
void net_port_unpublish(struct pp_port *port);

/*
 * A thread's identity for pool ownership: the address of a thread-local
 * byte, unique among live threads and cheap to read (initial-exec TLS, no
 * call into the dynamic linker on the data path).
 */
extern __thread char net_thread_marker __attribute__((tls_model("initial-exec")));

static inline const void *net_self(void)
{
	return &net_thread_marker;
}

/*
 * The pool whose NAPI context the calling thread is in: set by
 * pp_port_poll around the stack consumer's call, NULL elsewhere. A frame
 * freed there (pp_frame_put_bulk) whose page belongs to it is recycled
 * directly, as the kernel's napi_pp_put_page() does when the pool's NAPI
 * runs on the freeing CPU.
 */
extern __thread struct pp_pool *net_napi_pool
	__attribute__((tls_model("initial-exec")));

/*
 * Make the calling thread the owner of @rxq's pool if it is not already
 * (the first poll after a hand-over). The caller guarantees that nobody
 * else polls the queue meanwhile.
 */
static inline void net_rxq_claim(struct pp_rxq *rxq)
{
	if (PP_UNLIKELY(rxq->owner != net_self())) {
		pp_pool_set_owner(rxq->pool);
		rxq->owner = net_self();
	}
}

/*
 * After a poll that received nothing. An idle queue's pool keeps pages
 * nobody reuses: every 4096 empty polls (a few ms when idle) it gives
 * back those its allocator wants back (pp_pool_trim(): one load when it
 * wants none). An increment per empty poll; nothing when traffic flows.
 */
static inline void net_rxq_idle(struct pp_rxq *rxq)
{
	if (PP_UNLIKELY(!(++rxq->empty_polls & 4095)) && rxq->pool)
		pp_pool_trim(rxq->pool);
}

#endif /* PP_NET_PRIV_H */
