/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp-devbind - bind network devices to vfio-pci and back, like DPDK's
 * dpdk-devbind.py, through sysfs only.
 *
 * The options are dpdk-devbind.py's (-s, -b DRIVER, -u; --force):
 *
 *   pp-devbind --status                 network devices (PCI class 02),
 *                                       their driver, IOMMU group and
 *                                       interfaces
 *   pp-devbind --bind vfio-pci DEV...   bind (driver_override, so no other
 *                                       device of the same ID is taken)
 *   pp-devbind --unbind DEV...          leave the device without a driver
 *   pp-devbind --restore DEV...         back to the driver it had before
 *                                       --bind (remembered in /run/pagepool)
 *
 * It runs as root and writes where its arguments point, so it trusts none
 * of them: a DEV is a PCI address in the kernel's form or the name of an
 * interface on a PCI device, and a DRIVER one plain name; anything else is
 * refused before any file is written, so no argument can lead a write out
 * of /sys/bus/pci. Every DEV of a command is checked first, and nothing
 * changes unless all pass. A device whose interface is up, or has
 * addresses or routes, is refused unless --force (dpdk-devbind does the
 * same): taking it cuts that traffic, perhaps the operator's own session.
 * A bind that fails puts driver_override back as it was.
 *
 * PP_DEVBIND_ROOT, for tests only: a directory that stands in for / for
 * every file this tool reads or writes (/sys, /proc/net, /run/pagepool),
 * so that tests/devbind can run it over a fake tree; each is named through
 * pp_cli_root_path() (app/common), after the parts that come from outside
 * were checked, so nothing in a path is cut. IPv4 addresses come
 * from the kernel (getifaddrs()), which a fake tree cannot answer for, so
 * they are asked only without it.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pp_cli.h"
#include "pp_cli_root.h"
#include "pp_os.h"

#define PCI "/sys/bus/pci"
#define STATE_DIR "/run/pagepool/devbind"

/*
 * Driver names in buffers of this size. The kernel's are module names
 * (MODULE_NAME_LEN, 56) or shorter; a longer one is refused.
 */
#define NAME_LEN 64

/* @s in one write(), as a sysfs attribute takes its value. 0 or -errno. */
static int write_all(int fd, const char *s)
{
	size_t len = strlen(s);
	ssize_t n = write(fd, s, len);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/*
 * A sysfs attribute: it exists (a write never creates a sysfs file, so
 * O_CREAT is left out) and takes its value in one write(). O_TRUNC, as a
 * shell's `echo >` has: sysfs ignores it, and a plain file standing in
 * for an attribute in a test tree then holds just the value.
 */
static int write_str(const char *path, const char *s)
{
	int fd, err;

	fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = write_all(fd, s);
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* The first line of @path without its newline. Returns 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
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

	pp_cli_root_path(path, PCI "/devices/%s/%s", addr, attr);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%li", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The driver @addr is bound to, "-" for none. */
static void driver_of(const char *addr, char *out, size_t len)
{
	char path[PATH_MAX];

	pp_cli_root_path(path, PCI "/devices/%s/driver", addr);
	read_link_leaf(path, out, len, "-");
}

/* ---- what the operator may name ---- */

/*
 * A name that is one path component: 1 to @max - 1 printable ASCII bytes,
 * no '/' or white space, not "." or "..".
 */
static bool plain_name(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n == 0 || n == max || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (!isgraph((unsigned char)*s) || *s == '/')
			return false;
	return true;
}

/*
 * An interface name the kernel could have given (dev_valid_name(): fewer
 * than IFNAMSIZ bytes, not "." or "..", no '/', ':' or white space), kept
 * to printable ASCII here.
 */
static bool ifname_valid(const char *s)
{
	return plain_name(s, IFNAMSIZ) && !strchr(s, ':');
}

/*
 * A driver name as the kernel gives them (vfio-pci, mlx5_core, 3w-9xxx):
 * letters, digits, '_', '-' and '.', fewer than NAME_LEN bytes, and not
 * starting with '-', which is an option that getopt took as --bind's
 * value ("--bind --force DEV"). Checked before anything is read for it.
 */
static bool driver_name_valid(const char *s)
{
	if (!plain_name(s, NAME_LEN) || s[0] == '-')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-.", *s))
			return false;
	return true;
}

/*
 * pci_function_of - the PCI function an interface's device link @path
 * leads to, into @addr: the device itself, or the one right above it (a
 * virtio NIC's interface belongs to virtio0, below its PCI function), as
 * device_in_use() looks for interfaces. @leaf gets the device's name, for
 * messages ("" when there is none). Returns whether there is one.
 */
static bool pci_function_of(const char *path, char addr[PP_PCI_ADDR_LEN],
			    char *leaf, size_t len)
{
	char real[PATH_MAX], *slash;
	int i;

	leaf[0] = '\0';
	if (!realpath(path, real))
		return false;
	/* The device, then its parent. */
	for (i = 0; i < 2; i++) {
		slash = strrchr(real, '/');
		if (!slash)
			return false;
		if (i == 0)
			snprintf(leaf, len, "%s", slash + 1);
		if (!pp_os_pci_addr_parse(slash + 1, addr) &&
		    !strcmp(slash + 1, addr))
			return true;
		*slash = '\0';
	}
	return false;
}

/* @s for a message: at most 40 bytes of it, "..." for the rest. */
#define SHOWN(s) 40, (s), strlen(s) > 40 ? "..." : ""

/*
 * resolve - the device @arg names, into @addr: a PCI address (see
 * pp_os_pci_addr_parse()), or a network interface whose device
 * (/sys/class/net/IF/device) is a PCI function. The device must exist.
 * Says what is wrong and what to write instead. Returns 0, -EINVAL for
 * an argument that is neither, or -ENODEV.
 */
static int resolve(const char *arg, char addr[PP_PCI_ADDR_LEN])
{
	char path[PATH_MAX], leaf[NAME_LEN];
	struct stat st;

	if (!pp_os_pci_addr_parse(arg, addr)) {
		if (read_num(addr, "vendor") < 0) {
			fprintf(stderr, "pp-devbind: no PCI device %s: pp-devbind --status lists them\n",
				addr);
			return -ENODEV;
		}
		return 0;
	}
	if (!ifname_valid(arg)) {
		fprintf(stderr, "pp-devbind: '%.*s%s' is neither a PCI address nor an interface name: write DDDD:BB:DD.F (hex: domain, bus, device 00-1f, function 0-7; e.g. 0000:00:02.0), BB:DD.F for domain 0000, or an interface name such as eth0 (pp-devbind --status lists them)\n",
			SHOWN(arg));
		return -EINVAL;
	}
	pp_cli_root_path(path, "/sys/class/net/%s", arg);
	if (stat(path, &st)) {
		fprintf(stderr, "pp-devbind: no interface %s, and it is not a PCI address either: write DDDD:BB:DD.F (e.g. 0000:00:02.0), BB:DD.F, or the name of an interface (pp-devbind --status lists them)\n",
			arg);
		return -ENODEV;
	}
	pp_cli_root_path(path, "/sys/class/net/%s/device", arg);
	if (!pci_function_of(path, addr, leaf, sizeof(leaf))) {
		fprintf(stderr, "pp-devbind: interface %s is not on a PCI device (%s%s): pp-devbind binds PCI devices only\n",
			arg, leaf[0] ? "its device is " : "a virtual interface",
			leaf);
		return -ENODEV;
	}
	if (read_num(addr, "vendor") < 0) {
		fprintf(stderr, "pp-devbind: interface %s: no PCI device %s\n",
			arg, addr);
		return -ENODEV;
	}
	return 0;
}

/* ---- whether the kernel networks through a device ---- */

/* A bounded message; what does not fit is cut and ends in "...". */
struct text {
	size_t len;
	char s[1024];
};

static __attribute__((format(printf, 2, 3))) void
text_add(struct text *t, const char *fmt, ...)
{
	size_t room = sizeof(t->s) - t->len;
	va_list ap;
	int n;

	if (room <= 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->s + t->len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < room) {
		t->len += (size_t)n;
		return;
	}
	t->len = sizeof(t->s) - 1;
	memcpy(t->s + t->len - 3, "...", 3);
}

static int prefix_len(uint32_t mask)
{
	return __builtin_popcount(mask);
}

/* IFF_UP in NETDIR/IF/flags: what `ip link set IF up` sets. */
static bool iface_up(const char *netdir, const char *ifname)
{
	char path[PATH_MAX], line[32];

	pp_cli_root_path(path, "%s/%s/flags", netdir, ifname);
	return !read_line(path, line, sizeof(line)) &&
	       (strtoul(line, NULL, 0) & IFF_UP);
}

/* IPv4 addresses from getifaddrs(); an alias label is "IF:N". */
static void ipv4_addrs(const struct ifaddrs *list, const char *ifname,
		       struct text *t)
{
	size_t n = strlen(ifname);
	char a[INET_ADDRSTRLEN];

	for (; list; list = list->ifa_next) {
		const struct sockaddr_in *in = (const void *)list->ifa_addr;
		const struct sockaddr_in *mask = (const void *)list->ifa_netmask;

		if (!in || in->sin_family != AF_INET ||
		    strncmp(list->ifa_name, ifname, n) ||
		    (list->ifa_name[n] && list->ifa_name[n] != ':'))
			continue;
		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		text_add(t, " %s/%d", a,
			 mask ? prefix_len(mask->sin_addr.s_addr) : 32);
	}
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * IPv6 addresses from /proc/net/if_inet6, one a line: 32 hex digits,
 * ifindex, prefix length, scope, flags, name (net/ipv6/addrconf.c).
 */
static void ipv6_addrs(const char *ifname, struct text *t)
{
	char path[PATH_MAX], line[256], hex[33], name[IFNAMSIZ];
	char a[INET6_ADDRSTRLEN];
	unsigned int idx, plen, scope, flags;
	struct in6_addr in6;
	FILE *f;
	int i;

	pp_cli_root_path(path, "/proc/net/if_inet6");
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%32s %x %x %x %x %15s", hex, &idx, &plen,
			   &scope, &flags, name) != 6 ||
		    strlen(hex) != 32 || strcmp(name, ifname))
			continue;
		for (i = 0; i < 16; i++) {
			int hi = hex_val(hex[2 * i]), lo = hex_val(hex[2 * i + 1]);

			if (hi < 0 || lo < 0)
				break;
			in6.s6_addr[i] = (uint8_t)(hi << 4 | lo);
		}
		if (i < 16)
			continue;
		inet_ntop(AF_INET6, &in6, a, sizeof(a));
		text_add(t, " %s/%u", a, plen);
	}
	fclose(f);
}

/*
 * IPv4 routes of the main table from /proc/net/route: a header line,
 * then name, destination, gateway, flags, refcount, use, metric, mask...
 * with addresses as the hex of their network-order 32-bit value.
 */
static void ipv4_routes(const char *ifname, struct text *t)
{
	char path[PATH_MAX], line[512], name[IFNAMSIZ];
	char a[INET_ADDRSTRLEN], gw[INET_ADDRSTRLEN];
	unsigned int dst, via, flags, mask;
	struct in_addr in;
	FILE *f;

	pp_cli_root_path(path, "/proc/net/route");
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s %x %x %x %*d %*d %*d %x", name, &dst,
			   &via, &flags, &mask) != 5 || strcmp(name, ifname))
			continue;
		in.s_addr = dst;
		inet_ntop(AF_INET, &in, a, sizeof(a));
		in.s_addr = via;
		inet_ntop(AF_INET, &in, gw, sizeof(gw));
		if (mask)
			text_add(t, " %s/%d", a, prefix_len(mask));
		else
			text_add(t, " default");
		if (via)
			text_add(t, " via %s", gw);
	}
	fclose(f);
}

/*
 * How the kernel uses interface @ifname, in sysfs directory @netdir,
 * appended to @why as "IF (up; addresses ...; routes ...)". Returns
 * whether it uses it.
 */
static bool iface_in_use(const char *netdir, const char *ifname,
			 const struct ifaddrs *ifa, struct text *why)
{
	struct text addrs = { 0 }, routes = { 0 };
	bool up = iface_up(netdir, ifname);
	const char *sep = "";

	ipv4_addrs(ifa, ifname, &addrs);
	ipv6_addrs(ifname, &addrs);
	ipv4_routes(ifname, &routes);
	if (!up && !addrs.len && !routes.len)
		return false;
	text_add(why, "%s%s (", why->len ? ", " : "", ifname);
	if (up) {
		text_add(why, "up");
		sep = "; ";
	}
	if (addrs.len) {
		text_add(why, "%saddresses%s", sep, addrs.s);
		sep = "; ";
	}
	if (routes.len)
		text_add(why, "%sroutes%s", sep, routes.s);
	text_add(why, ")");
	return true;
}

static bool dot_or_dotdot(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..");
}

/* The interfaces in sysfs directory @netdir (not under the root yet). */
static bool netdir_in_use(const char *netdir, const struct ifaddrs *ifa,
			  struct text *names, struct text *busy,
			  struct text *why)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool used = false;
	DIR *dir;

	pp_cli_root_path(path, "%s", netdir);
	dir = opendir(path);
	if (!dir)
		return false;
	while ((de = readdir(dir))) {
		if (dot_or_dotdot(de->d_name))
			continue;
		text_add(names, "%s%s", names->len ? "," : "", de->d_name);
		if (iface_in_use(netdir, de->d_name, ifa, why)) {
			text_add(busy, "%s%s", busy->len ? " " : "",
				 de->d_name);
			used = true;
		}
	}
	closedir(dir);
	return used;
}

/*
 * device_in_use - whether the kernel networks through @addr: one of its
 * interfaces is up, has an address (IPv6: /proc/net/if_inet6; IPv4:
 * getifaddrs(), only without PP_DEVBIND_ROOT) or a route
 * (/proc/net/route). Its interfaces are those in ADDR/net and those of
 * the devices right below it (ADDR/virtio0/net: a virtio NIC's interface
 * belongs to the virtio device, not to the PCI function). Any interface
 * counts, whatever its name: the names come from the kernel's directory.
 * @names gets every interface (comma-separated), @busy those in use
 * (space-separated), @why how. Returns whether any is.
 */
static bool device_in_use(const char *addr, struct text *names,
			  struct text *busy, struct text *why)
{
	/* Sized for what goes in, so that nothing is cut. */
	char dev[sizeof(PCI "/devices/") + PP_PCI_ADDR_LEN];
	char netdir[sizeof(dev) + NAME_MAX + sizeof("/net")];
	char path[PATH_MAX];
	struct ifaddrs *ifa = NULL;
	struct dirent *de;
	bool used = false;
	struct stat st;
	DIR *dir;

	snprintf(dev, sizeof(dev), PCI "/devices/%s", addr);
	pp_cli_root_path(path, "%s", dev);
	dir = opendir(path);
	if (!dir)
		return false;
	if (!pp_cli_root[0] && getifaddrs(&ifa))
		fprintf(stderr, "pp-devbind: cannot list IPv4 addresses (getifaddrs: %s): %s checked for up and routed only\n",
			strerror(errno), addr);
	snprintf(netdir, sizeof(netdir), "%s/net", dev);
	used = netdir_in_use(netdir, ifa, names, busy, why);
	while ((de = readdir(dir))) {
		/* Devices below are directories; links (driver, subsystem,
		 * iommu_group...) lead elsewhere and are not followed. */
		pp_cli_root_path(path, "%s/%s", dev, de->d_name);
		if (dot_or_dotdot(de->d_name) || !strcmp(de->d_name, "net") ||
		    lstat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		snprintf(netdir, sizeof(netdir), "%s/%s/net", dev, de->d_name);
		if (netdir_in_use(netdir, ifa, names, busy, why))
			used = true;
	}
	closedir(dir);
	if (ifa)
		freeifaddrs(ifa);
	return used;
}

/* Refuse a device in use, naming what uses it. Returns whether refused. */
static bool refuse_in_use(const char *addr)
{
	struct text names = { 0 }, busy = { 0 }, why = { 0 }, cmds = { 0 };
	char *ifname, *next;

	if (!device_in_use(addr, &names, &busy, &why))
		return false;
	for (ifname = busy.s; *ifname; ifname = next) {
		next = ifname + strcspn(ifname, " ");
		if (*next)
			*next++ = '\0';
		text_add(&cmds, "%sip link set %s down; ip addr flush dev %s",
			 cmds.len ? "; " : "", ifname, ifname);
	}
	fprintf(stderr, "pp-devbind: %s is in use by the kernel: %s. Taking it cuts that traffic (perhaps your own session): take it down first (%s), or pass --force\n",
		addr, why.s, cmds.s);
	return true;
}

/* ---- sysfs: binding ---- */

static int status(void)
{
	char path[PATH_MAX], drv[NAME_LEN], group[32], addr[PP_PCI_ADDR_LEN];
	struct dirent *de;
	DIR *dir;

	pp_cli_root_path(path, PCI "/devices");
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "pp-devbind: cannot read %s: is sysfs mounted?\n",
			path);
		return 1;
	}
	printf("%-14s %-11s %-12s %-11s %s\n", "address", "vendor:dev",
	       "driver", "iommu_group", "interfaces");
	while ((de = readdir(dir))) {
		struct text names = { 0 }, busy = { 0 }, why = { 0 };
		bool used;

		if (pp_os_pci_addr_parse(de->d_name, addr) ||
		    strcmp(de->d_name, addr) ||
		    (read_num(addr, "class") >> 16) != 0x02)
			continue;
		driver_of(addr, drv, sizeof(drv));
		pp_cli_root_path(path, PCI "/devices/%s/iommu_group", addr);
		read_link_leaf(path, group, sizeof(group), "none");
		used = device_in_use(addr, &names, &busy, &why);
		printf("%-14s %04lx:%04lx   %-12s %-11s %s%s\n", addr,
		       read_num(addr, "vendor"), read_num(addr, "device"), drv,
		       group, names.len ? names.s : "-",
		       used ? " (active)" : "");
	}
	closedir(dir);
	return 0;
}

static int unbind(const char *addr)
{
	char path[PATH_MAX], drv[NAME_LEN];
	int err;

	driver_of(addr, drv, sizeof(drv));
	if (!strcmp(drv, "-"))
		return 0;
	pp_cli_root_path(path, PCI "/devices/%s/driver/unbind", addr);
	err = write_str(path, addr);
	if (err)
		fprintf(stderr, "pp-devbind: unbinding %s from %s failed: %s (run as root)\n",
			addr, drv, strerror(-err));
	return err;
}

/*
 * The driver_override of @addr as it reads back ("(null)" for none) into
 * @buf, in the form that writes it again: the name and a newline, or a
 * lone newline, which clears it. Returns 0 or -errno.
 */
static int read_override(const char *addr, char *buf, size_t len)
{
	char path[PATH_MAX];
	int err;

	pp_cli_root_path(path, PCI "/devices/%s/driver_override", addr);
	err = read_line(path, buf, len - 1);
	if (err)
		return err;
	/* Too long to write back whole: refused rather than cut. */
	if (strlen(buf) >= len - 2)
		return -E2BIG;
	if (!strcmp(buf, "(null)"))
		buf[0] = '\0';
	strcat(buf, "\n");
	return 0;
}

/*
 * A bind of @addr failed after its driver_override was written: write
 * back @prev and, when it was unbound here from @old, probe it again, so
 * that the kernel gives it back to its driver. Says what it is left with.
 */
static void bind_undo(const char *addr, const char *prev, const char *old,
		      bool unbound)
{
	char path[PATH_MAX], probe[PATH_MAX], now[NAME_LEN];
	int err;

	pp_cli_root_path(path, PCI "/devices/%s/driver_override", addr);
	err = write_str(path, prev);
	if (err)
		fprintf(stderr, "pp-devbind: %s: cannot put driver_override back (%s): write it by hand: echo '%.*s' > %s\n",
			addr, strerror(-err), (int)strcspn(prev, "\n"), prev,
			path);
	if (unbound) {
		pp_cli_root_path(probe, PCI "/drivers_probe");
		write_str(probe, addr);
	}
	driver_of(addr, now, sizeof(now));
	if (!strcmp(now, old))
		fprintf(stderr, "pp-devbind: %s left as it was: driver %s%s\n",
			addr, now, err ? "" : ", driver_override as before");
	else if (!strcmp(old, "-"))
		fprintf(stderr, "pp-devbind: %s is now on driver %s; it had none\n",
			addr, now);
	else
		fprintf(stderr, "pp-devbind: %s is now on driver %s, not %s: bind it back with echo %s > " PCI "/drivers/%s/bind\n",
			addr, now, old, addr, old);
}

/*
 * bind_to - hand @addr to @driver: driver_override, then unbind, then
 * drivers_probe, so that only this device goes to @driver (new_id would
 * take every device of its ID). An override of "\n" clears it, and the
 * kernel picks the driver by ID. On a failure after the override was
 * written, bind_undo() puts it back. Returns 0 or -errno.
 */
static int bind_to(const char *addr, const char *driver)
{
	char path[PATH_MAX], old[NAME_LEN], now[NAME_LEN], prev[256];
	bool any = !strcmp(driver, "\n"), unbound = false;
	int err;

	driver_of(addr, old, sizeof(old));
	err = read_override(addr, prev, sizeof(prev));
	if (err) {
		fprintf(stderr, "pp-devbind: %s: cannot read driver_override (%s; it needs Linux 3.16 or later); nothing changed\n",
			addr, strerror(-err));
		return err;
	}
	pp_cli_root_path(path, PCI "/devices/%s/driver_override", addr);
	err = write_str(path, driver);
	if (err) {
		fprintf(stderr, "pp-devbind: %s: cannot write driver_override (%s): run as root; nothing changed\n",
			addr, strerror(-err));
		return err;
	}
	err = unbind(addr);
	if (!err) {
		unbound = strcmp(old, "-") != 0;
		pp_cli_root_path(path, PCI "/drivers_probe");
		err = write_str(path, addr);
		if (err)
			fprintf(stderr, "pp-devbind: %s: writing %s failed: %s\n",
				addr, path, strerror(-err));
	}
	driver_of(addr, now, sizeof(now));
	if (!err && (any || !strcmp(now, driver)))
		return 0;
	if (!err) {
		/* A named driver is there (main() checked): it refused. */
		if (any)
			fprintf(stderr, "pp-devbind: %s did not bind to its driver (now: %s): load the module for it\n",
				addr, now);
		else
			fprintf(stderr, "pp-devbind: %s did not bind to %s (now: %s): the driver did not take it (dmesg says why)\n",
				addr, driver, now);
		err = -ENODEV;
	}
	bind_undo(addr, prev, old, unbound);
	return err;
}

/*
 * Whether the kernel has driver @driver (/sys/bus/pci/drivers/DRIVER):
 * a bind to one it has not cannot succeed, and would leave the device
 * without its driver until the undo. Says so, with the fix.
 */
static bool driver_present(const char *driver)
{
	char path[PATH_MAX];
	struct stat st;

	pp_cli_root_path(path, PCI "/drivers/%s", driver);
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return true;
	fprintf(stderr, "pp-devbind: no driver %s in /sys/bus/pci/drivers: load its module (modprobe %s), or check the name (ls /sys/bus/pci/drivers)\n",
		driver, driver);
	return false;
}

/*
 * Whether --restore has anything to do for @addr: a driver remembered by
 * --bind, or a driver_override (which --bind sets, and --restore clears).
 * Without either, pp-devbind never bound it, and a "restore" would only
 * take it from its driver and give it back. Says so.
 */
static bool restorable(const char *addr)
{
	char path[PATH_MAX], prev[256], drv[NAME_LEN];
	struct stat st;

	pp_cli_root_path(path, STATE_DIR "/%s", addr);
	if (!lstat(path, &st))
		return true;
	/* Unreadable (a kernel before 3.16): let --restore say so. */
	if (read_override(addr, prev, sizeof(prev)) || prev[0] != '\n')
		return true;
	driver_of(addr, drv, sizeof(drv));
	fprintf(stderr, "pp-devbind: %s: nothing to restore: pp-devbind never bound it (no driver_override, no driver remembered in " STATE_DIR "); it is on %s%s\n",
		addr, strcmp(drv, "-") ? "driver " : "no driver", strcmp(drv, "-") ? drv : "");
	return false;
}

/* Remember @drv as the driver @addr goes back to on --restore. */
static int remember(const char *addr, const char *drv)
{
	char path[PATH_MAX];
	int fd, err = 0;

	pp_cli_root_path(path, "/run/pagepool");
	mkdir(path, 0700);
	pp_cli_root_path(path, STATE_DIR);
	mkdir(path, 0700);
	pp_cli_root_path(path, STATE_DIR "/%s", addr);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		err = -errno;
	} else {
		err = write_all(fd, drv);
		if (close(fd) && !err)
			err = -errno;
	}
	if (err)
		fprintf(stderr, "pp-devbind: %s is bound, but its driver %s could not be remembered in %s (%s): --restore will let the kernel choose\n",
			addr, drv, path, strerror(-err));
	return err;
}

static int cmd_bind(const char *driver, const char *addr)
{
	char drv[NAME_LEN];
	int err;

	driver_of(addr, drv, sizeof(drv));
	err = bind_to(addr, driver);
	if (err)
		return err;
	if (strcmp(drv, driver) && strcmp(drv, "-"))
		return remember(addr, drv);
	return 0;
}

static int cmd_restore(const char *addr)
{
	char path[PATH_MAX], drv[NAME_LEN] = "", now[NAME_LEN];

	pp_cli_root_path(path, STATE_DIR "/%s", addr);
	if (read_line(path, drv, sizeof(drv)))
		drv[0] = '\0';
	if (drv[0] && !driver_name_valid(drv)) {
		fprintf(stderr, "pp-devbind: %s: ignoring %s, which names no driver\n",
			addr, path);
		drv[0] = '\0';
	}
	/* An empty override lets the kernel match the device again; where
	 * no driver claims it, bind the remembered one by name. */
	if (bind_to(addr, "\n"))
		return -ENODEV;
	if (drv[0]) {
		driver_of(addr, now, sizeof(now));
		if (strcmp(now, drv)) {
			/* Another driver took it by ID (vfio-pci after a
			 * new_id, say); it must let go first, since a bind
			 * to a device that has a driver fails (EBUSY). */
			if (unbind(addr))
				return -EBUSY;
			pp_cli_root_path(path, PCI "/drivers/%s/bind", drv);
			if (write_str(path, addr)) {
				fprintf(stderr, "pp-devbind: %s: cannot bind back to %s: load it (modprobe %s)\n",
					addr, drv, drv);
				return -ENODEV;
			}
		}
		pp_cli_root_path(path, STATE_DIR "/%s", addr);
		unlink(path);
	}
	return 0;
}

static const char help[] =
	"usage: pp-devbind [--force] COMMAND\n"
	"\n"
	"  -s, --status           PCI network devices: address, vendor:device,\n"
	"                         driver, IOMMU group, interfaces (\"active\":\n"
	"                         up, or with addresses or routes)\n"
	"  -b, --bind DRIVER DEV...\n"
	"                         bind each DEV to DRIVER (e.g. vfio-pci) through\n"
	"                         driver_override, so no other device of its ID\n"
	"                         goes along; its old driver is remembered in\n"
	"                         /run/pagepool/devbind\n"
	"  -u, --unbind DEV...    leave each DEV without a driver\n"
	"  --restore DEV...       give each DEV back to the driver it had before\n"
	"                         --bind\n"
	"  --force                take a device even though its interface is up\n"
	"                         or has addresses or routes (that traffic stops)\n"
	"  -h, --help             this text\n"
	"  -V, --version          the version, and the commit it was built from\n"
	"\n"
	"DEV is a PCI address, DDDD:BB:DD.F in hex (domain 4 digits, bus 2,\n"
	"device 2 from 00 to 1f, function 0-7; e.g. 0000:00:02.0), or BB:DD.F\n"
	"in domain 0000, or the name of a network interface on a PCI device\n"
	"(e.g. eth0). DRIVER is a name as in /sys/bus/pci/drivers. Nothing else\n"
	"is accepted. Every DEV is checked before anything changes; a bind that\n"
	"fails puts driver_override back. Exit status: 0 done, 1 failed or\n"
	"refused (device in use, DRIVER not loaded), 2 bad command line or\n"
	"argument (no such DEV, nothing to --restore).\n";

static void print_help(FILE *f)
{
	fputs(help, f);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pp-devbind -s|--status\n"
		"       pp-devbind [--force] -b|--bind DRIVER DEV...   (e.g. -b vfio-pci 0000:00:02.0)\n"
		"       pp-devbind [--force] -u|--unbind DEV...\n"
		"       pp-devbind [--force] --restore DEV...\n"
		"DEV: DDDD:BB:DD.F, BB:DD.F or an interface name; pp-devbind --help says more\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *cmd = NULL, *driver = NULL;
	char (*addrs)[PP_PCI_ADDR_LEN];
	bool force = false, bad = false, missing, nothing = false;
	int i, n, rc = 0;

	static const struct option opts[] = {
		{ "status", no_argument, NULL, 's' },
		{ "bind", required_argument, NULL, 'b' },
		{ "unbind", no_argument, NULL, 'u' },
		{ "restore", no_argument, NULL, 'r' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct pp_cli_opts cli = {
		.tool = "pp-devbind",
		.shortopts = "sb:u",
		.longopts = opts,
		.usage = print_help,
	};
	int c, op = 0;

	while ((c = pp_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'b':
			driver = optarg;
			/* fall through */
		case 's':
		case 'u':
		case 'r':
			if (op && op != c) {
				fprintf(stderr, "pp-devbind: one command at a time\n");
				usage();
			}
			op = c;
			break;
		case 'f':
			force = true;
			break;
		}
	}
	if (!op)
		usage();
	if (pp_cli_root_set("pp-devbind", "PP_DEVBIND_ROOT"))
		return 2;
	argv += optind;
	n = argc - optind;
	if (op == 's') {
		if (n) {
			fprintf(stderr, "pp-devbind: --status takes no DEV, not '%s'\n",
				argv[0]);
			usage();
		}
		return status();
	}
	cmd = op == 'b' ? "--bind" : op == 'u' ? "--unbind" : "--restore";
	if (driver && driver[0] == '-') {
		fprintf(stderr, "pp-devbind: '%.*s%s' is not a driver name: it is an option, and --bind takes the driver as the next word: pp-devbind --force --bind DRIVER DEV (e.g. --bind vfio-pci 0000:00:02.0); nothing changed\n",
			SHOWN(driver));
		return 2;
	}
	if (driver && !driver_name_valid(driver)) {
		fprintf(stderr, "pp-devbind: '%.*s%s' is not a driver name: give it as in /sys/bus/pci/drivers (e.g. vfio-pci): letters, digits, '_', '-' and '.', at most %d bytes; nothing changed\n",
			SHOWN(driver), NAME_LEN - 1);
		return 2;
	}
	if (n < 1) {
		fprintf(stderr, "pp-devbind: %s needs at least one DEV\n", cmd);
		usage();
	}

	addrs = calloc((size_t)n, sizeof(*addrs));
	if (!addrs) {
		fprintf(stderr, "pp-devbind: out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		if (resolve(argv[i], addrs[i]))
			bad = true;
	/* The real reason first: a driver that is not there, a device with
	 * nothing to restore, and only then whether one is in use. Each
	 * device is checked, so that the operator hears of all. */
	missing = !bad && driver && !driver_present(driver);
	for (i = 0; i < n && !bad && !missing && op == 'r'; i++)
		if (!restorable(addrs[i]))
			nothing = true;
	bad |= nothing;
	for (i = 0; i < n && !bad && !missing && !force; i++)
		if (refuse_in_use(addrs[i]))
			rc = 1;
	if (missing)
		rc = 1;
	if (bad || rc) {
		fprintf(stderr, "pp-devbind: nothing changed\n");
		free(addrs);
		return bad ? 2 : 1;
	}
	for (i = 0; i < n; i++) {
		if (driver)
			rc |= cmd_bind(driver, addrs[i]) != 0;
		else if (!strcmp(cmd, "--unbind"))
			rc |= unbind(addrs[i]) != 0;
		else
			rc |= cmd_restore(addrs[i]) != 0;
	}
	free(addrs);
	return rc;
}
