/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_cases.c - the bulk page allocator alone: alloc+free of one page,
 * of N pages one call at a time, and of N pages with one bulk list call or
 * one bulk array call, at each bulk size (the kernel's page_bench04 shape).
 * Figures are per page.
 *
 * The single-page rows call the allocator's real single-page functions at
 * full speed; nothing is added to them to make a ratio look better.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "timing.h"

const unsigned int bench_bulk_sizes[] = { 1, 8, 16, 32, 64, 128 };
const unsigned int bench_nr_bulk_sizes =
	sizeof(bench_bulk_sizes) / sizeof(bench_bulk_sizes[0]);

struct alloc_arg {
	struct pp_allocator *alloc;
	unsigned int bulk;
	struct pp_page *pages[BENCH_MAX_BULK];
};

static int single_page(void *p, unsigned long iters, struct bench_sample *s,
		       char *why, size_t why_len)
{
	struct alloc_arg *a = p;
	unsigned long i;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		struct pp_page *page = pp_alloc_page(a->alloc);

		if (PP_UNLIKELY(!page)) {
			snprintf(why, why_len, "pp_alloc_page returned NULL");
			return -1;
		}
		bench_keep(page);
		pp_free_page(a->alloc, page);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

/* N single-page calls, then N single frees: the same pages in hand as
 * one bulk call, without the bulk API. */
static int single_loop(void *p, unsigned long iters, struct bench_sample *s,
		       char *why, size_t why_len)
{
	struct alloc_arg *a = p;
	unsigned int j, bulk = a->bulk;
	unsigned long i;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		for (j = 0; j < bulk; j++) {
			a->pages[j] = pp_alloc_page(a->alloc);
			if (PP_UNLIKELY(!a->pages[j])) {
				snprintf(why, why_len,
					 "pp_alloc_page returned NULL after %u pages",
					 j);
				pp_free_pages_bulk(a->alloc, a->pages, j);
				memset(a->pages, 0, sizeof(a->pages));
				return -1;
			}
		}
		bench_barrier();
		for (j = 0; j < bulk; j++)
			pp_free_page(a->alloc, a->pages[j]);
	}
	s->cycles = tsc_end() - t0;
	s->ops = (uint64_t)iters * bulk;
	/* The bulk array case shares the array and fills only NULL slots. */
	memset(a->pages, 0, sizeof(a->pages));
	return 0;
}

static int bulk_list(void *p, unsigned long iters, struct bench_sample *s,
		     char *why, size_t why_len)
{
	struct alloc_arg *a = p;
	struct pp_page_list list;
	unsigned long i, n;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		pp_page_list_init(&list);
		n = pp_alloc_pages_bulk_list(a->alloc, (int)a->bulk, &list);
		if (PP_UNLIKELY(n != a->bulk)) {
			snprintf(why, why_len,
				 "pp_alloc_pages_bulk_list gave %lu of %u pages",
				 n, a->bulk);
			pp_free_page_list(a->alloc, &list);
			return -1;
		}
		bench_barrier();
		pp_free_page_list(a->alloc, &list);
	}
	s->cycles = tsc_end() - t0;
	s->ops = (uint64_t)iters * a->bulk;
	return 0;
}

/*
 * The array form fills only NULL entries, so the array is cleared after
 * each free: that store is part of what a caller of the array form pays.
 */
static int bulk_array(void *p, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	struct alloc_arg *a = p;
	unsigned long i, n;
	uint64_t t0;

	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		n = pp_alloc_pages_bulk_array(a->alloc, (int)a->bulk, a->pages);
		if (PP_UNLIKELY(n != a->bulk)) {
			snprintf(why, why_len,
				 "pp_alloc_pages_bulk_array gave %lu of %u pages",
				 n, a->bulk);
			pp_free_pages_bulk(a->alloc, a->pages, a->bulk);
			memset(a->pages, 0, sizeof(a->pages));
			return -1;
		}
		bench_barrier();
		pp_free_pages_bulk(a->alloc, a->pages, a->bulk);
		memset(a->pages, 0, a->bulk * sizeof(a->pages[0]));
	}
	s->cycles = tsc_end() - t0;
	s->ops = (uint64_t)iters * a->bulk;
	return 0;
}

/*
 * What the array form's contract costs by itself, with no allocator: the
 * scan that finds the array empty (only NULL entries are filled) and the
 * caller's clearing after the free. DPDK's get_bulk and put_bulk have
 * neither, so the bulk array rows minus this one is the allocator's own
 * cost beside DPDK's.
 */
static int array_contract(void *p, unsigned long iters,
			  struct bench_sample *s, char *why, size_t why_len)
{
	struct alloc_arg *a = p;
	unsigned long i;
	uint64_t t0;

	(void)why, (void)why_len;
	t0 = tsc_begin();
	for (i = 0; i < iters; i++) {
		uintptr_t set = 0;

		for (unsigned int j = 0; j < a->bulk; j++)
			set |= (uintptr_t)a->pages[j];
		bench_keep(set);
		bench_barrier();
		memset(a->pages, 0, a->bulk * sizeof(a->pages[0]));
	}
	s->cycles = tsc_end() - t0;
	s->ops = (uint64_t)iters * a->bulk;
	return 0;
}

int bench_alloc_cases(const struct bench_cfg *cfg, struct bench_results *out)
{
	struct alloc_arg a;
	unsigned int i;

	memset(&a, 0, sizeof(a));
	a.alloc = cfg->alloc;
	bench_run(cfg, out, BENCH_ALLOC, "single page", 1, "page",
		  single_page, &a);
	for (i = 0; i < bench_nr_bulk_sizes; i++) {
		a.bulk = bench_bulk_sizes[i];
		bench_run(cfg, out, BENCH_ALLOC, "single-page loop", a.bulk,
			  "page", single_loop, &a);
		bench_run(cfg, out, BENCH_ALLOC, "bulk list", a.bulk, "page",
			  bulk_list, &a);
		bench_run(cfg, out, BENCH_ALLOC, "bulk array", a.bulk, "page",
			  bulk_array, &a);
		bench_run(cfg, out, BENCH_ALLOC, "array contract alone", a.bulk,
			  "page", array_contract, &a);
	}
	return 0;
}
