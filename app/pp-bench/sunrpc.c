/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sunrpc.c - the NFS server's request refill (the kernel's svc_alloc_arg),
 * the third user of the bulk allocator in the 5.13 series.
 *
 * A request holds an array of 66 page pointers: a 256 KiB message (64
 * pages) plus two (RPCSVC_MAXPAGES). Between requests some of its pages
 * were handed on and the slots are NULL; svc_alloc_arg fills the holes.
 * Here each iteration empties every other slot (33 holes) of
 * SUNRPC_REQUESTS requests, freeing the pages to the allocator outside the
 * timed region (in the server that happens elsewhere), then times the
 * refills of those requests alone, three ways:
 *
 *   single  one pp_alloc_page() per hole (the kernel before 5.13);
 *   list    count the holes, one pp_alloc_pages_bulk_list() call, then
 *           take the list's pages into the holes (the first 5.13 version);
 *   array   one pp_alloc_pages_bulk_array() over the whole array, which
 *           skips populated slots itself (the version that was merged).
 *
 * The figure is per call. The refills of several requests are timed
 * together so that the cost of one TSC read pair (tens of ns in a VM; the
 * baselines print it) is spread over them instead of inflating a call that
 * takes a few hundred ns; 8 requests free 264 pages, which the allocator's
 * thread cache (512 by default) absorbs as it would between two requests.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "timing.h"

/* RPCSVC_MAXPAGES: 256 KiB / 4 KiB + 2 (head and tail). */
#define SUNRPC_PAGES ((256 << 10) / PP_PAGE_SIZE + 2)
#define SUNRPC_REQUESTS 8

enum refill_mode { REFILL_SINGLE, REFILL_LIST, REFILL_ARRAY };

struct sunrpc_req {
	struct pp_page *pages[SUNRPC_PAGES];
};

struct sunrpc_arg {
	struct pp_allocator *alloc;
	enum refill_mode mode;
	struct sunrpc_req req[SUNRPC_REQUESTS];
};

static unsigned long refill_single(struct pp_allocator *alloc,
				   struct pp_page **pages)
{
	unsigned long i, filled = 0;

	for (i = 0; i < SUNRPC_PAGES; i++) {
		if (!pages[i]) {
			pages[i] = pp_alloc_page(alloc);
			if (PP_UNLIKELY(!pages[i]))
				break;
		}
		filled++;
	}
	return filled;
}

static unsigned long refill_list(struct pp_allocator *alloc,
				 struct pp_page **pages)
{
	struct pp_page_list list;
	unsigned long i, needed = 0, filled = 0;

	for (i = 0; i < SUNRPC_PAGES; i++)
		needed += !pages[i];
	pp_page_list_init(&list);
	if (pp_alloc_pages_bulk_list(alloc, (int)needed, &list) != needed) {
		pp_free_page_list(alloc, &list);
		return 0;
	}
	for (i = 0; i < SUNRPC_PAGES; i++) {
		if (!pages[i])
			pages[i] = pp_page_list_pop(&list);
		filled++;
	}
	return filled;
}

static unsigned long refill_array(struct pp_allocator *alloc,
				  struct pp_page **pages)
{
	return pp_alloc_pages_bulk_array(alloc, SUNRPC_PAGES, pages);
}

static int sunrpc_refill(void *p, unsigned long iters, struct bench_sample *s,
			 char *why, size_t why_len)
{
	struct sunrpc_arg *a = p;
	unsigned long (*refill)(struct pp_allocator *, struct pp_page **);
	unsigned long i, j, r, filled[SUNRPC_REQUESTS];
	uint64_t t0, cycles = 0;

	refill = a->mode == REFILL_SINGLE ? refill_single :
		 a->mode == REFILL_LIST ? refill_list : refill_array;
	for (i = 0; i < iters; i++) {
		for (r = 0; r < SUNRPC_REQUESTS; r++) {
			for (j = 0; j < SUNRPC_PAGES; j += 2) {
				pp_free_page(a->alloc, a->req[r].pages[j]);
				a->req[r].pages[j] = NULL;
			}
		}
		t0 = tsc_begin();
		for (r = 0; r < SUNRPC_REQUESTS; r++)
			filled[r] = refill(a->alloc, a->req[r].pages);
		cycles += tsc_end() - t0;
		for (r = 0; r < SUNRPC_REQUESTS; r++) {
			if (PP_UNLIKELY(filled[r] != SUNRPC_PAGES)) {
				snprintf(why, why_len,
					 "refill left a request with %lu of %lu pages",
					 filled[r], (unsigned long)SUNRPC_PAGES);
				return -1;
			}
		}
	}
	s->cycles = cycles;
	s->ops = (uint64_t)iters * SUNRPC_REQUESTS;
	return 0;
}

static void run_mode(const struct bench_cfg *cfg, struct bench_results *out,
		     const char *name, enum refill_mode mode)
{
	/* Static: 8 x 66 pointers is more than a stack frame should hold. */
	static struct sunrpc_arg a;
	unsigned long n = SUNRPC_PAGES;
	unsigned int r;

	memset(&a, 0, sizeof(a));
	a.alloc = cfg->alloc;
	a.mode = mode;
	for (r = 0; r < SUNRPC_REQUESTS && n == SUNRPC_PAGES; r++)
		n = pp_alloc_pages_bulk_array(a.alloc, SUNRPC_PAGES,
					      a.req[r].pages);
	if (n != SUNRPC_PAGES)
		bench_fail(out, BENCH_SUNRPC, name, 0, "call",
			   "could not fill a request: %lu of %lu pages", n,
			   (unsigned long)SUNRPC_PAGES);
	else
		bench_run(cfg, out, BENCH_SUNRPC, name, 0, "call",
			  sunrpc_refill, &a);
	/* NULL slots (after a failure) are skipped. */
	for (r = 0; r < SUNRPC_REQUESTS; r++)
		pp_free_pages_bulk(a.alloc, a.req[r].pages, SUNRPC_PAGES);
}

int bench_sunrpc_cases(const struct bench_cfg *cfg, struct bench_results *out)
{
	run_mode(cfg, out, "single-page loop", REFILL_SINGLE);
	run_mode(cfg, out, "bulk list", REFILL_LIST);
	run_mode(cfg, out, "bulk array", REFILL_ARRAY);
	return 0;
}
