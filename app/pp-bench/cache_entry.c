/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cache_entry.c - what a cache's owner pays to keep a remote drainer out,
 * three ways, on the same work: take one pointer off a 64-entry stack and
 * put it back (the shape of a single-page alloc + free from a cache).
 *
 *   none        plain loads and stores: nothing can drain the cache
 *               (DPDK's per-lcore mempool cache; the floor)
 *   lock word   an atomic exchange to enter, a store to leave (what the
 *               allocator's thread caches did before the handshake, and
 *               do now where membarrier() is missing)
 *   asymmetric  a store to "busy", a load of "stop", a store to leave;
 *               the drainer pays a membarrier(): the thread caches' own
 *               inline entry and exit (pagepool/pp_handshake.h)
 *   rseq        per-CPU stacks: the pop and the push are each a
 *               restartable sequence whose last store commits, and the
 *               kernel restarts a sequence that was preempted or
 *               migrated (per-CPU caches; the drainer would still need
 *               to stop each CPU's owner, e.g. with membarrier's
 *               MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)
 *
 * Each is timed in the benchmark's thread, alone: the cost is the owner's
 * instructions and fences, not contention. The rseq row needs x86-64 and
 * glibc's registration (2.35+, GLIBC_TUNABLES glibc.pthread.rseq not 0);
 * otherwise it is skipped with the reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) && __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define HAVE_RSEQ_ROW 1
#else
#define HAVE_RSEQ_ROW 0
#endif

#include "bench.h"
#include "timing.h"

#define STACK_SLOTS 64

struct entry_stack {
	uint32_t lock;
	struct pp_handshake_ hs;
	uint64_t count;
	void *slot[STACK_SLOTS];
} __attribute__((aligned(PP_CACHE_LINE)));

/* Half full, so that neither the pop nor the push meets an edge. */
static void stack_fill(struct entry_stack *st)
{
	static char objs[STACK_SLOTS];

	memset(st, 0, sizeof(*st));
	for (st->count = 0; st->count < STACK_SLOTS / 2; st->count++)
		st->slot[st->count] = &objs[st->count];
}

static inline void *pop(struct entry_stack *st)
{
	return st->slot[--st->count];
}

static inline void push(struct entry_stack *st, void *p)
{
	st->slot[st->count++] = p;
}

static int entry_none(void *arg, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	struct entry_stack *st = arg;
	uint64_t t0;

	(void)why, (void)why_len;
	t0 = tsc_begin();
	for (unsigned long i = 0; i < iters; i++) {
		void *p = pop(st);

		bench_barrier();
		push(st, p);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

static inline void lock_enter(struct entry_stack *st)
{
	while (__atomic_exchange_n(&st->lock, 1, __ATOMIC_ACQUIRE))
		;
}

static inline void lock_leave(struct entry_stack *st)
{
	__atomic_store_n(&st->lock, 0, __ATOMIC_RELEASE);
}

static int entry_lock(void *arg, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	struct entry_stack *st = arg;
	uint64_t t0;

	(void)why, (void)why_len;
	t0 = tsc_begin();
	for (unsigned long i = 0; i < iters; i++) {
		void *p;

		lock_enter(st);
		p = pop(st);
		lock_leave(st);
		bench_barrier();
		lock_enter(st);
		push(st, p);
		lock_leave(st);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
}

/* The allocator's owner side (pp_tcache_enter_()); nobody holds the
 * handshake here, so the slow branch is never taken but still compiled
 * in. */
static inline bool asym_enter(struct entry_stack *st)
{
	return pp_handshake_enter_fast_(&st->hs);
}

static inline void asym_leave(struct entry_stack *st)
{
	pp_handshake_exit_fast_(&st->hs);
}

static int entry_asym(void *arg, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	struct entry_stack *st = arg;
	uint64_t t0;

	t0 = tsc_begin();
	for (unsigned long i = 0; i < iters; i++) {
		void *p;

		if (PP_UNLIKELY(!asym_enter(st)))
			goto stopped;
		p = pop(st);
		asym_leave(st);
		bench_barrier();
		if (PP_UNLIKELY(!asym_enter(st)))
			goto stopped;
		push(st, p);
		asym_leave(st);
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
stopped:
	snprintf(why, why_len, "stop raised with no drainer");
	return -1;
}

#if HAVE_RSEQ_ROW
/*
 * One restartable sequence per operation, on the stack of the CPU the
 * thread runs on. The descriptor (struct rseq_cs: version, flags, start,
 * length up to the commit, abort address) goes in its own section; the
 * abort address is preceded by the signature glibc registered (RSEQ_SIG),
 * which the kernel checks before it jumps there. The sequence checks the
 * CPU it was started for, reads, and ends with the one store that
 * publishes the new count: a preemption or migration before that store
 * sends the thread to the abort address, and the caller starts over.
 */
#define RSEQ_CS_ENTRY(label, start, end, abort)                             \
	".pushsection __rseq_cs, \"aw\"\n\t"                                \
	".balign 32\n\t"                                                    \
	label ":\n\t"                                                       \
	".long 0, 0\n\t"                                                    \
	".quad " start ", (" end " - " start "), " abort "\n\t"             \
	".popsection\n\t"

#define RSEQ_ABORT_ENTRY(abort, target)                                     \
	".pushsection __rseq_failure, \"ax\"\n\t"                           \
	".byte 0x0f, 0xb9, 0x3d\n\t" /* ud1: not an instruction stream */   \
	".long %c[sig]\n\t"                                                 \
	abort ":\n\t"                                                       \
	"jmp %l[" target "]\n\t"                                            \
	".popsection\n\t"

static inline struct rseq *rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() +
			       __rseq_offset);
}

/* Pop from @st (CPU @cpu's stack) into *@out; false if it had to restart. */
static inline bool rseq_pop(struct rseq *rs, uint32_t cpu,
			    struct entry_stack *st, void **out)
{
	__asm__ __volatile__ goto(
		RSEQ_CS_ENTRY("3", "1f", "2f", "4f")
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %[cs]\n\t"
		"1:\n\t"
		"cmpl %[cpu], %[cur]\n\t"
		"jnz 4f\n\t"
		"movq %[count], %%rax\n\t"
		"movq -8(%[slots], %%rax, 8), %%rcx\n\t"
		"movq %%rcx, (%[out])\n\t"
		"decq %%rax\n\t"
		"movq %%rax, %[count]\n\t"
		"2:\n\t"
		RSEQ_ABORT_ENTRY("4", "restart")
		: /* no outputs: asm goto */
		: [cs] "m" (rs->rseq_cs), [cpu] "r" (cpu),
		  [cur] "m" (rs->cpu_id), [count] "m" (st->count),
		  [slots] "r" (st->slot), [out] "r" (out),
		  [sig] "i" (RSEQ_SIG)
		: "memory", "cc", "rax", "rcx"
		: restart);
	return true;
restart:
	return false;
}

static inline bool rseq_push(struct rseq *rs, uint32_t cpu,
			     struct entry_stack *st, void *p)
{
	__asm__ __volatile__ goto(
		RSEQ_CS_ENTRY("3", "1f", "2f", "4f")
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %[cs]\n\t"
		"1:\n\t"
		"cmpl %[cpu], %[cur]\n\t"
		"jnz 4f\n\t"
		"movq %[count], %%rax\n\t"
		"movq %[p], (%[slots], %%rax, 8)\n\t"
		"incq %%rax\n\t"
		"movq %%rax, %[count]\n\t"
		"2:\n\t"
		RSEQ_ABORT_ENTRY("4", "restart")
		: /* no outputs: asm goto */
		: [cs] "m" (rs->rseq_cs), [cpu] "r" (cpu),
		  [cur] "m" (rs->cpu_id), [count] "m" (st->count),
		  [slots] "r" (st->slot), [p] "r" (p), [sig] "i" (RSEQ_SIG)
		: "memory", "cc", "rax"
		: restart);
	return true;
restart:
	return false;
}

struct rseq_arg {
	struct entry_stack *stacks;	/* one per CPU */
	unsigned int nr_cpus;
	unsigned long restarts;
};

static int entry_rseq(void *arg, unsigned long iters, struct bench_sample *s,
		      char *why, size_t why_len)
{
	struct rseq_arg *a = arg;
	struct rseq *rs = rseq_area();
	uint32_t cpu;
	uint64_t t0;

	t0 = tsc_begin();
	for (unsigned long i = 0; i < iters; i++) {
		void *p;

		for (;;) {
			cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
			if (PP_UNLIKELY(cpu >= a->nr_cpus))
				goto bad_cpu;
			if (PP_LIKELY(rseq_pop(rs, cpu, &a->stacks[cpu], &p)))
				break;
			a->restarts++;
		}
		bench_barrier();
		for (;;) {
			cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
			if (PP_UNLIKELY(cpu >= a->nr_cpus))
				goto bad_cpu;
			if (PP_LIKELY(rseq_push(rs, cpu, &a->stacks[cpu], p)))
				break;
			a->restarts++;
		}
	}
	s->cycles = tsc_end() - t0;
	s->ops = iters;
	return 0;
bad_cpu:
	snprintf(why, why_len, "rseq cpu_id %u out of range", cpu);
	return -1;
}

static void rseq_row(const struct bench_cfg *cfg, struct bench_results *out,
		     const char *name)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	struct rseq_arg a = { 0 };
	struct bench_result *r;
	uint64_t total = 0;

	if ((int)__rseq_size <= 0) {
		bench_skip(out, BENCH_BASELINE, name, 0, "op",
			   "glibc did not register rseq (GLIBC_TUNABLES glibc.pthread.rseq=0, or the kernel lacks it)");
		return;
	}
	a.nr_cpus = n > 0 ? (unsigned int)n : 1;
	if (posix_memalign((void **)&a.stacks, PP_CACHE_LINE,
			   a.nr_cpus * sizeof(*a.stacks))) {
		bench_skip(out, BENCH_BASELINE, name, 0, "op",
			   "out of memory for %u per-CPU stacks", a.nr_cpus);
		return;
	}
	for (unsigned int i = 0; i < a.nr_cpus; i++)
		stack_fill(&a.stacks[i]);
	r = bench_run(cfg, out, BENCH_BASELINE, name, 0, "op", entry_rseq, &a);
	/* Every pop was matched by a push on some CPU's stack: a sequence
	 * that committed twice or half would show here. */
	for (unsigned int i = 0; i < a.nr_cpus; i++)
		total += a.stacks[i].count;
	if (!r->failed && total != (uint64_t)a.nr_cpus * (STACK_SLOTS / 2)) {
		r->failed = true;
		snprintf(r->why, sizeof(r->why),
			 "the per-CPU stacks hold %llu pointers, not %u",
			 (unsigned long long)total,
			 a.nr_cpus * (STACK_SLOTS / 2));
	}
	free(a.stacks);
}
#else
static void rseq_row(const struct bench_cfg *cfg, struct bench_results *out,
		     const char *name)
{
	(void)cfg;
	bench_skip(out, BENCH_BASELINE, name, 0, "op",
		   "restartable sequences are written for x86-64 with glibc 2.35+ only");
}
#endif

int bench_cache_entry(const struct bench_cfg *cfg, struct bench_results *out)
{
	static struct entry_stack st;

	stack_fill(&st);
	bench_run(cfg, out, BENCH_BASELINE, "cache entry: none", 0, "op",
		  entry_none, &st);
	stack_fill(&st);
	bench_run(cfg, out, BENCH_BASELINE, "cache entry: lock word", 0, "op",
		  entry_lock, &st);
	stack_fill(&st);
	/* Asymmetric and free, as the library sets a handshake up where
	 * membarrier() works (the row times the owner alone). */
	st.hs.stop = PP_HANDSHAKE_ASYM_;
	bench_run(cfg, out, BENCH_BASELINE, "cache entry: asymmetric", 0,
		  "op", entry_asym, &st);
	rseq_row(cfg, out, "cache entry: rseq per-CPU");
	return 0;
}
