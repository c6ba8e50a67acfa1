/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pci_addr.c - pp_os_pci_addr_parse(): the two forms it accepts,
 * normalized to the kernel's name, and the strings it must refuse because
 * they would name something other than one device in /sys/bus/pci/devices.
 */
#include "pp_os.h"
#include "pp_test.h"

/* @in is accepted and comes out as @want. */
static void good(const char *in, const char *want)
{
	char out[PP_PCI_ADDR_LEN];

	memset(out, 'x', sizeof(out));
	if (pp_os_pci_addr_parse(in, out)) {
		fprintf(stderr, "'%s' refused, want '%s'\n", in, want);
		pp_test_failures++;
		return;
	}
	if (strcmp(out, want)) {
		fprintf(stderr, "'%s' gave '%.*s', want '%s'\n", in,
			(int)sizeof(out), out, want);
		pp_test_failures++;
	}
}

/* @in is refused with -EINVAL and @out left as it was. */
static void bad(const char *in)
{
	char out[PP_PCI_ADDR_LEN] = "untouched";

	if (pp_os_pci_addr_parse(in, out) != -EINVAL) {
		fprintf(stderr, "'%s' accepted\n", in ? in : "(null)");
		pp_test_failures++;
	}
	CHECK(!strcmp(out, "untouched"));
}

static void test_accepts(void)
{
	good("0000:00:03.0", "0000:00:03.0");
	good("0000:00:00.0", "0000:00:00.0");
	good("ffff:ff:1f.7", "ffff:ff:1f.7");
	good("0000:00:1F.7", "0000:00:1f.7");
	good("ABCD:EF:0A.3", "abcd:ef:0a.3");
	/* The short form is domain 0000. */
	good("00:03.0", "0000:00:03.0");
	good("3B:1f.2", "0000:3b:1f.2");
}

static void test_refuses(void)
{
	bad(NULL);
	bad("");
	/* Paths, whatever their length. */
	bad("../x");
	bad("../../../tmp");
	bad("0000:00:03.0/../../x");
	bad("0000:00:03.0/");
	bad("00:03.0/../x");
	bad("../../../x00");   /* 12 characters, the full form's length */
	bad("../../.");        /* 7, the short form's */
	/* Device above 1f, function above 7. */
	bad("0000:00:20.0");
	bad("0000:00:ff.0");
	bad("0000:00:03.8");
	bad("0000:00:03.f");
	bad("00:20.0");
	/* Lengths and separators. */
	bad("0000:00:03.00");
	bad("00000:00:03.0");
	bad("0000:00:03");
	bad("0:0:3.0");
	bad("0000:00:3.0");
	bad("0000.00:03.0");
	bad("0000:00:03:0");
	bad("0000-00-03.0");
	bad(" 000:00:03.0");
	bad("0000:00:03.0\n");
	bad("0x00:00:03.0");
	bad("g000:00:03.0");
	bad("0000:00:03.0 and much more than any address is long");
}

int main(void)
{
	RUN_TEST(test_accepts);
	RUN_TEST(test_refuses);
	return pp_test_result();
}
