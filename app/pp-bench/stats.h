/* SPDX-License-Identifier: BSD-3-Clause */
/* stats.h - the `pp-bench stats` subcommand (stats.c), called from
 * main.c: the allocator's fast path beside a statistics reader. */
#ifndef PP_BENCH_STATS_H
#define PP_BENCH_STATS_H

/* @argv[0] is "stats". Returns the exit status: 0, 1 (set-up), 2 (usage). */
int bench_stats_main(int argc, char **argv);

#endif /* PP_BENCH_STATS_H */
