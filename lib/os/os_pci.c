/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * os_pci.c - PCI addresses as the kernel names PCI functions in sysfs
 * (see pp_os.h). The one parser every part of pagepool, and
 * pp-devbind, runs an address through before it becomes part of a path.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "pp_os.h"

int pp_os_pci_addr_parse(const char *in, char out[PP_PCI_ADDR_LEN])
{
	/* "0000:" is what the short form leaves out. */
	const size_t full = PP_PCI_ADDR_LEN - 1, domain = 5;
	char buf[PP_PCI_ADDR_LEN];
	size_t n, i;

	if (!in)
		return -EINVAL;
	n = strnlen(in, PP_PCI_ADDR_LEN);
	if (n == full) {
		memcpy(buf, in, n + 1);
	} else if (n == full - domain) {
		memcpy(buf, "0000:", domain);
		memcpy(buf + domain, in, n + 1);
	} else {
		return -EINVAL;
	}
	for (i = 0; i < full; i++) {
		if (i == 4 || i == 7) {
			if (buf[i] != ':')
				return -EINVAL;
		} else if (i == 10) {
			if (buf[i] != '.')
				return -EINVAL;
		} else if (!isxdigit((unsigned char)buf[i])) {
			return -EINVAL;
		}
		buf[i] = (char)tolower((unsigned char)buf[i]);
	}
	/* Device 00-1f: its first digit is 0 or 1. Function 0-7. */
	if (buf[8] > '1' || buf[11] > '7')
		return -EINVAL;
	memcpy(out, buf, PP_PCI_ADDR_LEN);
	return 0;
}
