/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * machine.c - what the figures were measured on: CPU model and TSC flags
 * from /proc/cpuinfo, online cores, kernel release, and the date.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

static void read_cpuinfo(struct bench_machine *m)
{
	char line[4096];
	bool have_model = false, have_flags = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(m->cpu_model, sizeof(m->cpu_model), "unknown");
	if (!f)
		return;
	while ((!have_model || !have_flags) && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (!have_model && !strncmp(line, "model name", 10)) {
			snprintf(m->cpu_model, sizeof(m->cpu_model), "%s",
				 colon + 2);
			trim(m->cpu_model);
			have_model = true;
		} else if (!have_flags && !strncmp(line, "flags", 5)) {
			m->constant_tsc = strstr(colon, " constant_tsc") &&
					  strstr(colon, " nonstop_tsc");
			have_flags = true;
		}
	}
	fclose(f);
}

void bench_machine_read(struct bench_machine *m)
{
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;

	memset(m, 0, sizeof(*m));
	read_cpuinfo(m);
	m->cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (uname(&u) == 0)
		snprintf(m->kernel, sizeof(m->kernel), "%s", u.release);
	else
		snprintf(m->kernel, sizeof(m->kernel), "unknown");
	gmtime_r(&now, &tm);
	strftime(m->date, sizeof(m->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
}
