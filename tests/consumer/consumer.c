/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * consumer.c - a packet app's first lines with pagepool, built outside the
 * tree against the installed headers and pagepool.pc: an arena that needs
 * no hugepages, an allocator, a page_pool, one page out and back.
 */
#include <stdio.h>
#include <string.h>

#include <pagepool/pagepool.h>

int main(void)
{
	struct pp_arena_opts ao = {
		.sz = sizeof(ao),
		.size = 4u << 20,
		.page_size = PP_PAGE_SIZE_4K,
		.numa_node = PP_NUMA_NODE_ANY,
		.flags = PP_ARENA_F_NO_LOCK,
		.name = "consumer",
	};
	struct pp_arena *arena = pp_arena_create(&ao);
	if (!arena) {
		perror("pp_arena_create");
		return 1;
	}

	struct pp_allocator_opts lo = {
		.sz = sizeof(lo), .arenas = &arena, .nr_arenas = 1,
	};
	struct pp_allocator *alloc = pp_allocator_create(&lo);
	if (!alloc) {
		perror("pp_allocator_create");
		return 1;
	}

	struct pp_pool_params pp = {
		.sz = sizeof(pp), .allocator = alloc, .nid = PP_NUMA_NODE_ANY,
		.name = "consumer",
	};
	struct pp_pool *pool = pp_pool_create(&pp);
	if (!pool) {
		perror("pp_pool_create");
		return 1;
	}

	struct pp_page *page = pp_pool_alloc_pages(pool);
	if (!page) {
		fprintf(stderr, "no page from the pool\n");
		return 1;
	}
	memset(pp_page_address(page), 0xab, PP_PAGE_SIZE);
	pp_pool_recycle_direct(pool, page);

	if (pp_pool_destroy(pool) || pp_allocator_destroy(alloc) ||
	    pp_arena_destroy(arena)) {
		fprintf(stderr, "teardown failed\n");
		return 1;
	}
	printf("consumer: pagepool %s ok\n", PP_VERSION);
	return 0;
}
