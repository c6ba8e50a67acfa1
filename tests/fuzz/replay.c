/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay.c - main() for a fuzz target without libFuzzer: feed each file
 * named on the command line, or each file of a directory named there, to
 * LLVMFuzzerTestOneInput once, directory entries in name order. Every
 * build runs this over the seed corpus (suite unit), so the targets and
 * the inputs that once crashed them are checked by gcc builds too.
 * A broken invariant aborts, as under libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		perror(path);
		fclose(f);
		return -1;
	}
	/* One byte more, so an empty file still has a buffer. */
	buf = malloc((size_t)len + 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	printf("%s (%ld bytes)\n", path, len);
	fflush(stdout);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

static int run_dir(const char *dir)
{
	struct dirent **names;
	int n, i, ret = 0;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		perror(dir);
		return -1;
	}
	for (i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (names[i]->d_name[0] != '.' && !stat(path, &st) &&
		    S_ISREG(st.st_mode) && run_file(path))
			ret = -1;
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			perror(argv[i]);
			ret = 1;
		} else if (S_ISDIR(st.st_mode) ? run_dir(argv[i])
					       : run_file(argv[i])) {
			ret = 1;
		}
	}
	return ret;
}
