/* SPDX-License-Identifier: BSD-3-Clause */
/* tlb.h - the `pp-bench tlb` subcommand (tlb.c), called from main.c. */
#ifndef PP_BENCH_TLB_H
#define PP_BENCH_TLB_H

/* @argv[0] is "tlb". Returns the exit status: 0, 1 (set-up), 2 (usage). */
int bench_tlb_main(int argc, char **argv);

#endif /* PP_BENCH_TLB_H */
