/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_numbers.c - the strict number parsers every installed program
 * reads its option values with (app/common/pp_cli.c): decimal, or hex
 * after 0x, never octal; no sign for unsigned, no trailing text, no
 * overflow, the bounds inclusive; a refused value leaves *v untouched.
 */
#include <stdio.h>

#include "pp_cli.h"
#include "pp_test.h"

static void test_uint(void)
{
	unsigned long long v = 7;

	REQUIRE(pp_cli_parse_uint("10", 0, 100, &v) == 0 && v == 10);
	/* A padded count is decimal: "010" is ten, "08" eight. */
	REQUIRE(pp_cli_parse_uint("010", 0, 100, &v) == 0 && v == 10);
	REQUIRE(pp_cli_parse_uint("08", 0, 100, &v) == 0 && v == 8);
	REQUIRE(pp_cli_parse_uint("0x10", 0, 100, &v) == 0 && v == 16);
	REQUIRE(pp_cli_parse_uint("0X1f", 0, 100, &v) == 0 && v == 31);
	REQUIRE(pp_cli_parse_uint("0", 0, 100, &v) == 0 && v == 0);
	v = 7;
	REQUIRE(pp_cli_parse_uint("101", 0, 100, &v) == -1 && v == 7);
	REQUIRE(pp_cli_parse_uint("-1", 0, 100, &v) == -1 && v == 7);
	REQUIRE(pp_cli_parse_uint("+1", 0, 100, &v) == -1 && v == 7);
	REQUIRE(pp_cli_parse_uint("1k", 0, 100, &v) == -1 && v == 7);
	REQUIRE(pp_cli_parse_uint("", 0, 100, &v) == -1 && v == 7);
	REQUIRE(pp_cli_parse_uint("0x", 0, 100, &v) == -1 && v == 7);
	REQUIRE(pp_cli_parse_uint("18446744073709551616", 0, ~0ULL, &v) ==
		-1 && v == 7);
	REQUIRE(pp_cli_parse_uint("18446744073709551615", 0, ~0ULL, &v) ==
		0 && v == ~0ULL);
}

static void test_int(void)
{
	long long v = 7;

	REQUIRE(pp_cli_parse_int("-010", -100, 100, &v) == 0 && v == -10);
	REQUIRE(pp_cli_parse_int("-0x10", -100, 100, &v) == 0 && v == -16);
	REQUIRE(pp_cli_parse_int("09", -100, 100, &v) == 0 && v == 9);
	v = 7;
	REQUIRE(pp_cli_parse_int("-101", -100, 100, &v) == -1 && v == 7);
	REQUIRE(pp_cli_parse_int("+5", -100, 100, &v) == -1 && v == 7);
	REQUIRE(pp_cli_parse_int("5 ", -100, 100, &v) == -1 && v == 7);
}

int main(void)
{
	test_uint();
	test_int();
	printf("pp_cli numbers: decimal or 0x hex, strict, bounded\n");
	return 0;
}
