/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_test_proc.h - what the kernel says about this process, for the tests
 * that check nothing leaked (descriptors, mappings, hugepages) and those
 * that behave differently under ASan. One copy for every test.
 */
#ifndef PP_TEST_PROC_H
#define PP_TEST_PROC_H

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_test.h"

#if defined(__SANITIZE_ADDRESS__)
#define PP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PP_TEST_ASAN 1
#endif
#endif
#ifndef PP_TEST_ASAN
#define PP_TEST_ASAN 0
#endif

/* Open file descriptors. */
static inline int pp_test_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	REQUIRE(d != NULL);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the descriptor opendir() holds */
}

/*
 * Mappings in /proc/self/maps whose line contains @needle (an arena's
 * name shows in its memfd or hugetlbfs file name), or that overlap
 * [@lo, @hi) when @needle is NULL. Counting all mappings would not do:
 * sanitizer runtimes map memory of their own as a test runs.
 */
static inline int pp_test_count_maps(const char *needle, uintptr_t lo,
				     uintptr_t hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	int n = 0;

	REQUIRE(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		uintptr_t start, end;

		if (needle) {
			n += strstr(line, needle) != NULL;
			continue;
		}
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &start, &end) == 2 &&
		    start < hi && lo < end)
			n++;
	}
	fclose(f);
	return n;
}

/* A "Field:   N kB" line of /proc/self/status, in kB; -1 if absent. */
static inline long pp_test_status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	size_t len = strlen(field);
	char line[256];
	long v = -1;

	REQUIRE(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':')
			v = strtol(line + len + 1, NULL, 10);
	fclose(f);
	return v;
}

#endif /* PP_TEST_PROC_H */
