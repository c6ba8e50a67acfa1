/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * af_xdp_prog.bpf.c - the XDP program the af_xdp driver attaches: every
 * frame that arrives on a queue with a socket in pp_xsks goes to that
 * socket; frames on other queues go on to the kernel stack.
 *
 * Built with clang at build time and embedded in the library, so that the
 * driver can recognise its own program by name on an interface (a stale
 * one left by a process killed with SIGKILL) and detach it. libxdp's
 * default program would do the same redirect, but it keeps a reference
 * count in a map that a killed process never decrements, so it stays
 * attached for good.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/*
 * One slot per queue index. 256 covers any NIC this library drives (the
 * kernel caps an XSKMAP's size only by memory); a queue beyond it falls
 * through to the stack.
 */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} pp_xsks SEC(".maps");

SEC("xdp")
int pp_xsk_redirect(struct xdp_md *ctx)
{
	/*
	 * The flags argument is the action for an empty slot (kernel 5.3+),
	 * so a queue without a socket passes instead of dropping.
	 */
	return bpf_redirect_map(&pp_xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
