/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_common.h - what the fuzz targets share: a reader that turns the
 * input into numbers (zeros once it runs dry, so every input is a whole
 * program), a check that aborts (libFuzzer and the replay program both
 * report an abort as a crash, with the input), a silenced log, and the
 * 4 KiB-page arena and allocator each target keeps for the process.
 *
 * Each target builds twice: linked with libFuzzer (-Dfuzz=enabled, clang),
 * and with replay.c's main() into a plain program that the unit suite runs
 * over the target's seed corpus.
 */
#ifndef PP_FUZZ_COMMON_H
#define PP_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pagepool/pagepool.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: say which, and crash so the input is kept. */
#define FUZZ_CHECK(cond)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n",  \
				__FILE__, __LINE__, #cond);                \
			abort();                                           \
		}                                                          \
	} while (0)

struct fuzz_in {
	const uint8_t *p;
	size_t left;
};

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

/* Little-endian; each read is its own statement, since C leaves the order
 * of two calls in one expression open (gcc and clang would replay a seed
 * differently). */
static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint16_t lo = fuzz_u8(in);
	uint16_t hi = fuzz_u8(in);

	return (uint16_t)(lo | hi << 8);
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t lo = fuzz_u16(in);
	uint32_t hi = fuzz_u16(in);

	return lo | hi << 16;
}

/*
 * The library reports bad device strings and refused calls through its
 * log; a fuzzer makes millions of them. Keep the count (a failed open
 * must say why) and print nothing.
 */
static unsigned long fuzz_log_count;

static void fuzz_log_fn(enum pp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
	fuzz_log_count++;
}

/*
 * A frame the library handed out must lie in its page block: check it,
 * and write the first and last byte of its data, so that ASan reports a
 * byte outside the block.
 */
static inline void fuzz_frame_touch(const struct pp_frame *f)
{
	uint8_t *start = pp_page_address(f->page);
	uint8_t *d = pp_frame_data(f);

	FUZZ_CHECK(pp_frame_valid(f));
	FUZZ_CHECK(d >= start &&
		   d + f->len <= start + (PP_PAGE_SIZE << f->page->order));
	if (f->len) {
		d[0] ^= 0x5a;
		d[f->len - 1] ^= 0xa5;
	}
}

struct fuzz_env {
	struct pp_arena *arena;
	struct pp_allocator *alloc;
};

/*
 * One arena of @bytes on 4 KiB pages (no hugepages needed) and an
 * allocator over it, made on the first input and kept: every input must
 * leave it as it found it, which each target checks.
 */
static inline struct fuzz_env *fuzz_env_get(size_t bytes)
{
	static struct fuzz_env env;

	if (!env.alloc) {
		struct pp_arena_opts o = {
			.sz = sizeof(o),
			.size = bytes,
			.page_size = PP_PAGE_SIZE_4K,
			.numa_node = PP_NUMA_NODE_ANY,
			.flags = PP_ARENA_F_NO_LOCK,
			.name = "fuzz",
		};
		struct pp_allocator_opts lo = { .sz = sizeof(lo), .nr_arenas = 1 };

		pp_log_set_handler(fuzz_log_fn, NULL, PP_LOG_WARN);
		env.arena = pp_arena_create(&o);
		FUZZ_CHECK(env.arena != NULL);
		lo.arenas = &env.arena;
		env.alloc = pp_allocator_create(&lo);
		FUZZ_CHECK(env.alloc != NULL);
	}
	return &env;
}

/* The allocator's walker passes and @expect pages are allocated. */
static inline void fuzz_check_allocated(struct fuzz_env *env,
					unsigned long expect)
{
	unsigned long allocated = ~0ul;

	FUZZ_CHECK(pp_allocator_check(env->alloc, &allocated) == 0);
	if (allocated != expect)
		fprintf(stderr, "allocated %lu pages, expected %lu\n",
			allocated, expect);
	FUZZ_CHECK(allocated == expect);
}

#endif /* PP_FUZZ_COMMON_H */
