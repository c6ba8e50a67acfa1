/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf.h - what conf.c (reading --apply's file) hands conf_apply.c
 * (fitting it in the memory, and writing it): the file's lines.
 */
#ifndef PP_HUGEPAGES_CONF_H
#define PP_HUGEPAGES_CONF_H

#include <limits.h>
#include <stddef.h>

struct hp_entry {
	unsigned long kb;
	int node; /* -1: machine-wide */
	unsigned long long pages;
	unsigned int line;
	long now; /* the count before (hp_conf_fits()), for the order */
};

struct hp_conf {
	char path[PATH_MAX];
	struct hp_entry *e;
	size_t n;
	unsigned int bad; /* bad lines */
};

#endif /* PP_HUGEPAGES_CONF_H */
