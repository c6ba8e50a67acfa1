/* SPDX-License-Identifier: BSD-3-Clause */
/* net_priv.h - what lib/net's files share and nobody else sees. */
#ifndef PP_NET_PRIV_H
#define PP_NET_PRIV_H

#include <pagepool/pp_net_driver.h>

int net_devargs_parse(const char *devstr, struct pp_devargs *da);
int net_devargs_check_keys(const struct pp_devargs *da,
			   const struct pp_net_driver *drv);

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

#endif /* PP_NET_PRIV_H */
