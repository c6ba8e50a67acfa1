/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp-devbind - bind network devices to vfio-pci and back, like DPDK's
 * dpdk-devbind.py, through sysfs only.
 *
 *   pp-devbind --status                 network devices (PCI class 02),
 *                                       their driver and IOMMU group
 *   pp-devbind --bind vfio-pci ADDR...  bind (driver_override, so no other
 *                                       device of the same ID is taken)
 *   pp-devbind --unbind ADDR...         leave the device without a driver
 *   pp-devbind --restore ADDR...        back to the driver it had before
 *                                       --bind (remembered in /run/pagepool)
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PCI "/sys/bus/pci"
#define STATE_DIR "/run/pagepool/devbind"

static int write_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(s, f) < 0)
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static void read_link_leaf(const char *path, char *out, size_t len,
			   const char *none)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	const char *leaf;

	if (n < 0) {
		snprintf(out, len, "%s", none);
		return;
	}
	buf[n] = '\0';
	leaf = strrchr(buf, '/');
	leaf = leaf ? leaf + 1 : buf;
	n = (ssize_t)strnlen(leaf, len - 1);
	memcpy(out, leaf, (size_t)n);
	out[n] = '\0';
}

static long read_num(const char *addr, const char *attr)
{
	char path[PATH_MAX];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), PCI "/devices/%s/%s", addr, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%li", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void driver_of(const char *addr, char *out, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), PCI "/devices/%s/driver", addr);
	read_link_leaf(path, out, len, "-");
}

static int status(void)
{
	char path[PATH_MAX], drv[64], group[32];
	struct dirent *de;
	DIR *dir = opendir(PCI "/devices");

	if (!dir) {
		fprintf(stderr, "pp-devbind: cannot read " PCI "/devices: is sysfs mounted?\n");
		return 1;
	}
	printf("%-14s %-11s %-12s %s\n", "address", "vendor:dev", "driver",
	       "iommu_group");
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' ||
		    (read_num(de->d_name, "class") >> 16) != 0x02)
			continue;
		driver_of(de->d_name, drv, sizeof(drv));
		snprintf(path, sizeof(path), PCI "/devices/%s/iommu_group",
			 de->d_name);
		read_link_leaf(path, group, sizeof(group), "none");
		printf("%-14s %04lx:%04lx   %-12s %s\n", de->d_name,
		       read_num(de->d_name, "vendor"),
		       read_num(de->d_name, "device"), drv, group);
	}
	closedir(dir);
	return 0;
}

static int unbind(const char *addr)
{
	char path[PATH_MAX], drv[64];
	int err;

	driver_of(addr, drv, sizeof(drv));
	if (!strcmp(drv, "-"))
		return 0;
	snprintf(path, sizeof(path), PCI "/devices/%s/driver/unbind", addr);
	err = write_str(path, addr);
	if (err)
		fprintf(stderr, "pp-devbind: unbinding %s from %s failed: %s (run as root)\n",
			addr, drv, strerror(-err));
	return err;
}

/*
 * driver_override then drivers_probe: only this device goes to @driver.
 * An override of "\n" clears it, and the kernel picks the driver by ID.
 */
static int bind_to(const char *addr, const char *driver)
{
	bool any = !strcmp(driver, "\n");
	char path[PATH_MAX], drv[64];
	int err;

	snprintf(path, sizeof(path), PCI "/devices/%s/driver_override", addr);
	err = write_str(path, driver);
	if (!err)
		err = unbind(addr);
	if (!err)
		err = write_str(PCI "/drivers_probe", addr);
	driver_of(addr, drv, sizeof(drv));
	if (err || (!any && strcmp(drv, driver))) {
		fprintf(stderr, "pp-devbind: %s did not bind to %s (now: %s): load the module (modprobe %s)\n",
			addr, any ? "its driver" : driver, drv,
			any ? "for it" : driver);
		return err ? err : -ENODEV;
	}
	return 0;
}

static int cmd_bind(const char *driver, const char *addr)
{
	char path[PATH_MAX], drv[64];

	if (read_num(addr, "vendor") < 0) {
		fprintf(stderr, "pp-devbind: no PCI device %s: see pp-devbind --status\n",
			addr);
		return -ENODEV;
	}
	driver_of(addr, drv, sizeof(drv));
	if (strcmp(drv, driver) && strcmp(drv, "-")) {
		mkdir("/run/pagepool", 0700);
		mkdir(STATE_DIR, 0700);
		snprintf(path, sizeof(path), STATE_DIR "/%s", addr);
		write_str(path, drv);
	}
	return bind_to(addr, driver);
}

static int cmd_restore(const char *addr)
{
	char path[PATH_MAX], drv[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), STATE_DIR "/%s", addr);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(drv, sizeof(drv), f))
			drv[0] = '\0';
		fclose(f);
	}
	/* An empty override lets the kernel match the device again; where
	 * no driver claims it, bind the remembered one by name. */
	if (bind_to(addr, "\n"))
		return -ENODEV;
	if (drv[0]) {
		char now[64];

		drv[strcspn(drv, "\n")] = '\0';
		driver_of(addr, now, sizeof(now));
		if (strcmp(now, drv)) {
			snprintf(path, sizeof(path), PCI "/drivers/%s/bind", drv);
			if (write_str(path, addr)) {
				fprintf(stderr, "pp-devbind: %s: cannot bind back to %s: load it (modprobe %s)\n",
					addr, drv, drv);
				return -ENODEV;
			}
		}
		snprintf(path, sizeof(path), STATE_DIR "/%s", addr);
		unlink(path);
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pp-devbind --status\n"
		"       pp-devbind --bind DRIVER ADDR...   (e.g. --bind vfio-pci 0000:00:02.0)\n"
		"       pp-devbind --unbind ADDR...\n"
		"       pp-devbind --restore ADDR...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "--status"))
		return status();
	if (!strcmp(argv[1], "--bind")) {
		if (argc < 4)
			usage();
		for (i = 3; i < argc; i++)
			rc |= cmd_bind(argv[2], argv[i]) != 0;
	} else if (!strcmp(argv[1], "--unbind")) {
		for (i = 2; i < argc; i++)
			rc |= unbind(argv[i]) != 0;
	} else if (!strcmp(argv[1], "--restore")) {
		for (i = 2; i < argc; i++)
			rc |= cmd_restore(argv[i]) != 0;
	} else {
		usage();
	}
	return rc;
}
