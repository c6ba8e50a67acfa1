/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * timing.h - reading the TSC around a loop, and the compiler barriers that
 * keep a measured loop from being optimised away.
 *
 * The machines this runs on have no hardware performance counters (a VM),
 * so every figure is TSC cycles, converted to ns with the TSC rate that
 * bench_tsc_calibrate() measured against CLOCK_MONOTONIC. The TSC ticks at
 * a constant rate, not at the core clock, so "cycles" here are TSC cycles.
 */
#ifndef PP_BENCH_TIMING_H
#define PP_BENCH_TIMING_H

#include <stdint.h>
#include <x86intrin.h>

/*
 * tsc_begin - LFENCE before RDTSC waits for earlier instructions to finish,
 * and the one after keeps the measured code from starting before the read.
 */
static inline uint64_t tsc_begin(void)
{
	uint64_t t;

	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
}

/*
 * tsc_end - RDTSCP waits for the measured code to finish; the LFENCE after
 * it keeps later code from starting before the read.
 */
static inline uint64_t tsc_end(void)
{
	unsigned int aux;
	uint64_t t = __rdtscp(&aux);

	_mm_lfence();
	return t;
}

/* The compiler may not move memory accesses across this, nor drop them. */
#define bench_barrier() __asm__ __volatile__("" ::: "memory")

/* @x is used: its computation may not be optimised away. */
#define bench_keep(x) __asm__ __volatile__("" : : "r"(x) : "memory")

#endif /* PP_BENCH_TIMING_H */
