/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_opts.c - the one rule for options structs (lib/common/opts.c, doc/
 * api.md "Options structs"), first on the helpers, then through every
 * public call that takes such a struct: sz 0 is refused; a struct from
 * newer headers (sz larger, the bytes this version does not know zero) is
 * accepted; the same with one unknown byte set is refused, with a message
 * that names the struct.
 */
#include <errno.h>
#include <stddef.h>

#include <pagepool/pagepool.h>
#include <pagepool/pp_net_driver.h>

#include "pp_opts.h"
#include "pp_test.h"

/* Version 2 of a struct whose version 1 ended before b. */
struct opts_v2 {
	size_t sz;
	int a;
	int b;
};

static void test_helpers(void)
{
	struct {
		struct opts_v2 o;
		uint64_t newer;
	} big = { .o = { .sz = sizeof(big), .a = 1, .b = 2 } };
	struct opts_v2 in = { .sz = offsetof(struct opts_v2, b), .a = 7, .b = 9 };
	struct opts_v2 out = { .sz = 99, .a = 99, .b = 99 };
	const size_t min = offsetof(struct opts_v2, b), known = sizeof(in);

	pp_test_capture_log();
	pp_test_log_reset();
	CHECK_EQ(pp_opts_valid(NULL, min, known, "struct v2"), -EINVAL);
	CHECK(pp_test_log_has("struct v2 is NULL"));
	in.sz = 0;
	CHECK_EQ(pp_opts_valid(&in, min, known, "struct v2"), -EINVAL);
	CHECK(pp_test_log_has("struct v2: sz is 0"));
	in.sz = min - 1;
	CHECK_EQ(pp_opts_copy(&out, &in, min, known, "struct v2"), -EINVAL);
	CHECK_EQ(out.a, 99);

	/* An older caller: b is missing, and reads as zero in the copy. */
	in.sz = min;
	CHECK_EQ(pp_opts_copy(&out, &in, min, known, "struct v2"), 0);
	CHECK_EQ(out.sz, known);
	CHECK_EQ(out.a, 7);
	CHECK_EQ(out.b, 0);

	/* A newer caller that sets nothing new, then one that does. */
	CHECK_EQ(pp_opts_copy(&out, &big.o, min, known, "struct v2"), 0);
	CHECK_EQ(out.sz, known);
	CHECK_EQ(out.b, 2);
	big.newer = 1ull << 63;
	pp_test_log_reset();
	CHECK_EQ(pp_opts_valid(&big.o, min, known, "struct v2"), -EINVAL);
	CHECK(pp_test_log_has("past the 16 bytes this pagepool knows"));
}

/*
 * Each public struct inside one with 8 more bytes. try() sets sz to
 * @sz, the extra bytes to @extra, and says whether the call took it.
 */
#define NEWER(type) struct { type o; uint64_t extra; }

static struct pp_arena *arena;
static struct pp_allocator *alloc;

static bool expect(bool ok, bool want, const char *what)
{
	if (!want && !pp_test_log_has(what)) {
		fprintf(stderr, "the refusal does not name %s\n", what);
		return false;
	}
	return ok == want;
}

static void prog_fn(const struct pp_prog_ctx *ctx, struct pp_frame *frames,
		    uint16_t *verdicts, unsigned int n)
{
	(void)ctx;
	(void)frames;
	(void)verdicts;
	(void)n;
}

/* One case: sz = sizeof + 8 with @extra in the new bytes, or sz = 0. */
static bool try_arena(size_t sz, uint64_t extra)
{
	NEWER(struct pp_arena_opts) n = { .o = {
		.size = 1 << 20, .page_size = PP_PAGE_SIZE_4K,
		.numa_node = PP_NUMA_NODE_ANY, .name = "opts" }, .extra = extra };
	struct pp_arena *a;

	n.o.sz = sz;
	a = pp_arena_create(&n.o);
	if (a)
		CHECK_EQ(pp_arena_destroy(a), 0);
	return expect(a != NULL, sz && !extra, "struct pp_arena_opts");
}

static bool try_vmalloc(size_t sz, uint64_t extra)
{
	NEWER(struct pp_vmalloc_opts) n = { .o = {
		.numa_node = PP_NUMA_NODE_ANY, .name = "opts" }, .extra = extra };
	struct pp_vm_area *v;

	n.o.sz = sz;
	v = pp_vmalloc(1 << 20, &n.o);
	if (v)
		CHECK_EQ(pp_vfree(v), 0);
	return expect(v != NULL, sz && !extra, "struct pp_vmalloc_opts");
}

static bool try_allocator(size_t sz, uint64_t extra)
{
	NEWER(struct pp_allocator_opts) n = { .o = {
		.arenas = &arena, .nr_arenas = 1 }, .extra = extra };
	struct pp_allocator *a;

	n.o.sz = sz;
	a = pp_allocator_create(&n.o);
	if (a)
		CHECK_EQ(pp_allocator_destroy(a), 0);
	return expect(a != NULL, sz && !extra, "struct pp_allocator_opts");
}

static bool try_dma(size_t sz, uint64_t extra)
{
	NEWER(struct pp_dma_opts) n = { .o = { .mode = PP_IOVA_VA },
					.extra = extra };
	struct pp_dma *d;

	n.o.sz = sz;
	d = pp_dma_create(&n.o);
	if (d)
		CHECK_EQ(pp_dma_destroy(d), 0);
	return expect(d != NULL, sz && !extra, "struct pp_dma_opts");
}

static bool try_pool(size_t sz, uint64_t extra)
{
	NEWER(struct pp_pool_params) n = { .o = {
		.allocator = alloc, .nid = PP_NUMA_NODE_ANY,
		.refill = PP_REFILL_ARRAY }, .extra = extra };
	struct pp_pool *p;

	n.o.sz = sz;
	p = pp_pool_create(&n.o);
	if (p)
		CHECK_EQ(pp_pool_destroy(p), 0);
	return expect(p != NULL, sz && !extra, "struct pp_pool_params");
}

static bool try_port(size_t sz, uint64_t extra)
{
	NEWER(struct pp_port_conf) n = { .o = {
		.allocator = alloc, .nid = PP_NUMA_NODE_ANY }, .extra = extra };
	struct pp_port *p;

	n.o.sz = sz;
	p = pp_port_open("null0", &n.o);
	if (p)
		CHECK_EQ(pp_port_close(p), 0);
	return expect(p != NULL, sz && !extra, "struct pp_port_conf");
}

static bool try_prog(size_t sz, uint64_t extra)
{
	struct pp_port_conf conf = { .sz = sizeof(conf), .allocator = alloc,
				     .nid = PP_NUMA_NODE_ANY };
	NEWER(struct pp_prog) n = { .o = { .fn = prog_fn }, .extra = extra };
	struct pp_port *p = pp_port_open("null0", &conf);
	int err;

	REQUIRE(p != NULL);
	n.o.sz = sz;
	err = pp_port_set_prog(p, &n.o);
	CHECK_EQ(pp_port_close(p), 0);
	return expect(err == 0, sz && !extra, "struct pp_prog");
}

static bool try_telemetry(size_t sz, uint64_t extra)
{
	char dir[] = "/tmp/pp-opts-XXXXXX", cmd[64];
	NEWER(struct pp_telemetry_opts) n = { .o = { .prefix = "opts" },
					      .extra = extra };
	int err;

	REQUIRE(mkdtemp(dir) != NULL);
	n.o.runtime_dir = dir;
	n.o.sz = sz;
	err = pp_telemetry_start(&n.o);
	pp_telemetry_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ(system(cmd), 0);
	return expect(err == 0, sz && !extra, "struct pp_telemetry_opts");
}

static void test_public(void)
{
	static const struct {
		const char *name;
		bool (*try)(size_t sz, uint64_t extra);
		size_t size;
	} calls[] = {
		{ "pp_arena_create", try_arena, sizeof(struct pp_arena_opts) },
		{ "pp_vmalloc", try_vmalloc, sizeof(struct pp_vmalloc_opts) },
		{ "pp_allocator_create", try_allocator,
		  sizeof(struct pp_allocator_opts) },
		{ "pp_dma_create", try_dma, sizeof(struct pp_dma_opts) },
		{ "pp_pool_create", try_pool, sizeof(struct pp_pool_params) },
		{ "pp_port_open", try_port, sizeof(struct pp_port_conf) },
		{ "pp_port_set_prog", try_prog, sizeof(struct pp_prog) },
		{ "pp_telemetry_start", try_telemetry,
		  sizeof(struct pp_telemetry_opts) },
	};

	arena = pp_test_arena(8 << 20, PP_PAGE_SIZE_4K);
	alloc = pp_test_allocator(arena);
	pp_test_capture_log();
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		size_t newer = calls[i].size + sizeof(uint64_t);
		bool ok = true;

		pp_test_log_reset();
		ok &= calls[i].try(0, 0);
		ok &= calls[i].try(calls[i].size, 0);
		ok &= calls[i].try(newer, 0);
		pp_test_log_reset();
		ok &= calls[i].try(newer, 1);
		if (!ok)
			fprintf(stderr, "%s does not follow the sz rule\n",
				calls[i].name);
		CHECK(ok);
	}
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	CHECK_EQ(pp_arena_destroy(arena), 0);
}

int main(void)
{
	RUN_TEST(test_helpers);
	RUN_TEST(test_public);
	return pp_test_result();
}
