/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_vhost_user.c - the virtio_user driver's check of the replies a
 * vhost-user back-end sends (vhost_user_reply_parse), over arbitrary
 * bytes: what a hostile or broken back-end could write on the socket.
 *
 * Invariants: the parser never reads past @len; it accepts a reply only
 * when it is exactly a version-1 reply to the request asked, with the
 * payload size that request's reply has (8 bytes, or 8 for a vring
 * state), and then the value it returns is the one in the bytes; every
 * refusal is -EPROTO with a message.
 *
 * Input: byte 0 picks the request asked (any of the 256 values, so
 * requests without a reply are asked too), the rest is the reply.
 */
#include <errno.h>

#include "fuzz_common.h"
#include "virtio_user_priv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long log_before;
	uint32_t request, flags, req, psize;
	uint64_t val = 0xdeadbeef, want;
	uint8_t *copy;
	size_t len;
	int r;

	static int once;

	if (!once) {
		pp_log_set_handler(fuzz_log_fn, NULL, PP_LOG_WARN);
		once = 1;
	}
	if (size < 1)
		return 0;
	request = data[0] % 32;
	len = size - 1;
	/* An exact-size heap copy: ASan sees any read past the end. */
	copy = malloc(len ? len : 1);
	FUZZ_CHECK(copy);
	memcpy(copy, data + 1, len);
	log_before = fuzz_log_count;
	r = vhost_user_reply_parse(copy, len, request, &val);
	if (r) {
		FUZZ_CHECK(r == -EPROTO);
		FUZZ_CHECK(fuzz_log_count > log_before);
		FUZZ_CHECK(val == 0xdeadbeef);
		free(copy);
		return 0;
	}
	FUZZ_CHECK(len >= VHOST_USER_HDR_LEN + 8);
	memcpy(&req, copy, 4);
	memcpy(&flags, copy + 4, 4);
	memcpy(&psize, copy + 8, 4);
	FUZZ_CHECK(req == request);
	FUZZ_CHECK((flags & VHOST_USER_VERSION_MASK) == VHOST_USER_VERSION);
	FUZZ_CHECK(flags & VHOST_USER_REPLY);
	FUZZ_CHECK(psize == 8 && len == VHOST_USER_HDR_LEN + 8);
	FUZZ_CHECK(request == VHOST_USER_GET_FEATURES ||
		   request == VHOST_USER_GET_PROTOCOL_FEATURES ||
		   request == VHOST_USER_GET_QUEUE_NUM ||
		   request == VHOST_USER_GET_VRING_BASE);
	if (request == VHOST_USER_GET_VRING_BASE) {
		uint32_t num;

		memcpy(&num, copy + VHOST_USER_HDR_LEN + 4, 4);
		want = num;
	} else {
		memcpy(&want, copy + VHOST_USER_HDR_LEN, 8);
	}
	FUZZ_CHECK(val == want);
	free(copy);
	return 0;
}
