/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_vfio.c - the VFIO IOVA backend against a real kernel's VFIO and
 * IOMMU (run inside the QEMU guest by run-guest.sh; elsewhere it skips).
 *
 *   test_vfio api|container|map|iova_modes|memlock|entry_limit|errors|nonviable|grow
 *
 * "api" runs anywhere (it is also a host unit test): what a VFIO domain
 * says where the kernel has no VFIO and the calls' argument checks (the
 * IOVA space's free list has its own unit test, tests/dma).
 *
 * The devices are the guest's two e1000e, bound to vfio-pci by the guest's
 * init, named in PP_TEST_NIC0 and PP_TEST_NIC1.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pagepool/pagepool.h>
#include <pagepool/pp_dma.h>

#include "pp_test.h"

#define ARENA_SIZE (4u << 20)

static const char *nic(int i)
{
	const char *v = getenv(i ? "PP_TEST_NIC1" : "PP_TEST_NIC0");

	if (!v || !*v)
		pp_test_skip("no PP_TEST_NIC%d: run inside the QEMU guest (meson test --suite qemu)",
			     i);
	if (access("/dev/vfio/vfio", F_OK))
		pp_test_skip("no /dev/vfio/vfio: this kernel has no VFIO");
	return v;
}

static struct pp_dma *vfio_domain(const char *addr, enum pp_vfio_iova iova)
{
	struct pp_dma_opts o = {
		.sz = sizeof(o),
		.mode = PP_IOVA_VFIO,
		.vfio_pci_addr = addr,
		.vfio_iova = iova,
	};

	return pp_dma_create(&o);
}

static struct pp_arena *guest_arena(void)
{
	/* 2 MiB pages when the guest has them (its init reserves 64),
	 * which is the case the IOMMU's large pages are for. */
	if (pp_hugepages_free(PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY) >= 2)
		return pp_test_arena(ARENA_SIZE, PP_PAGE_SIZE_2M);
	return pp_test_arena(ARENA_SIZE, PP_PAGE_SIZE_4K);
}

/* Open, add both groups, close; a domain without devices cannot map. */
static void test_container(void)
{
	struct pp_arena *arena = guest_arena();
	struct pp_dma_opts o = { .sz = sizeof(o), .mode = PP_IOVA_VFIO };
	struct pp_dma *dma;
	int fd;

	dma = pp_dma_create(&o);
	REQUIRE(dma != NULL);
	pp_test_log_reset();
	CHECK_EQ(pp_dma_map_arena(dma, arena), -ENODEV);
	CHECK(pp_test_log_has("no device in this domain"));
	CHECK_EQ(pp_dma_vfio_add_device(dma, nic(0)), 0);
	CHECK_EQ(pp_dma_vfio_add_device(dma, nic(0)), 0); /* no-op */
	CHECK_EQ(pp_dma_vfio_add_device(dma, nic(1)), 0);
	fd = pp_dma_vfio_device_fd(dma, nic(1));
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(pp_dma_map_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), -EBUSY);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	pp_arena_destroy(arena);
}

/* One map per arena; a page's IOVA is base plus offset. */
static void test_map(void)
{
	struct pp_arena *arena = guest_arena();
	struct pp_dma *dma = vfio_domain(nic(0), PP_VFIO_IOVA_AUTO);
	char *base = pp_arena_base(arena);
	uint64_t iova0 = 0, iova;
	size_t off;

	REQUIRE(dma != NULL);
	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	CHECK_EQ(pp_dma_vfio_arena_iova(dma, arena, &iova0), 0);
	CHECK(iova0 != 0);
	CHECK_EQ(iova0 % pp_arena_page_size(arena), 0);
	for (off = 0; off < ARENA_SIZE; off += 37 * PP_PAGE_SIZE) {
		CHECK_EQ(pp_dma_map_page(dma, base + off, 0,
					 PP_DMA_FROM_DEVICE, &iova), 0);
		CHECK_EQ(iova, iova0 + off);
	}
	CHECK_EQ(pp_dma_map_page(dma, base + ARENA_SIZE - PP_PAGE_SIZE, 1,
				 PP_DMA_FROM_DEVICE, &iova), -EINVAL);
	CHECK_EQ(pp_dma_map_arena(dma, arena), -EEXIST);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), -ENOENT);
	CHECK_EQ(pp_dma_map_page(dma, base, 0, PP_DMA_FROM_DEVICE, &iova),
		 -ENOENT);
	/* Mapped again after an unmap: the kernel's map is gone too. */
	CHECK_EQ(pp_dma_map_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	pp_arena_destroy(arena);
}

/* ALLOC never uses the VA; VA uses it or refuses with -ERANGE. */
static void test_iova_modes(void)
{
	struct pp_arena *arena = guest_arena();
	uintptr_t base = (uintptr_t)pp_arena_base(arena);
	struct pp_dma *dma;
	uint64_t iova = 0;
	int err;

	dma = vfio_domain(nic(0), PP_VFIO_IOVA_ALLOC);
	REQUIRE(dma != NULL);
	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	CHECK_EQ(pp_dma_vfio_arena_iova(dma, arena, &iova), 0);
	CHECK(iova != base);
	printf("alloc: VA 0x%llx -> IOVA 0x%llx\n", (unsigned long long)base,
	       (unsigned long long)iova);
	/* Freed IOVA space is reused: with a second arena mapped above it,
	 * the first one's space comes back to the next mapping, and the
	 * device path through the kernel accepts it (no -EEXIST). */
	{
		struct pp_arena *other = guest_arena();
		uint64_t iova2 = 0, iova3 = 0;

		REQUIRE(pp_dma_map_arena(dma, other) == 0);
		CHECK_EQ(pp_dma_vfio_arena_iova(dma, other, &iova2), 0);
		CHECK(iova2 >= iova + ARENA_SIZE);
		CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
		CHECK_EQ(pp_dma_map_arena(dma, arena), 0);
		CHECK_EQ(pp_dma_vfio_arena_iova(dma, arena, &iova3), 0);
		CHECK_EQ(iova3, iova);
		printf("alloc: reused IOVA 0x%llx, second arena at 0x%llx\n",
		       (unsigned long long)iova3, (unsigned long long)iova2);
		CHECK_EQ(pp_dma_unmap_arena(dma, other), 0);
		pp_arena_destroy(other);
	}
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);

	dma = vfio_domain(nic(0), PP_VFIO_IOVA_VA);
	REQUIRE(dma != NULL);
	pp_test_log_reset();
	err = pp_dma_map_arena(dma, arena);
	if (err == 0) {
		CHECK_EQ(pp_dma_vfio_arena_iova(dma, arena, &iova), 0);
		CHECK_EQ(iova, base);
		CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
		printf("va: identity fits\n");
	} else {
		/* QEMU's intel-iommu has 39 address bits; user VAs reach 47. */
		CHECK_EQ(err, -ERANGE);
		CHECK(pp_test_log_has("outside the IOMMU's IOVA ranges"));
		printf("va: identity refused (VA above the IOMMU's width)\n");
	}
	CHECK_EQ(pp_dma_destroy(dma), 0);
	pp_arena_destroy(arena);
}

/* Without CAP_IPC_LOCK, pinning counts against RLIMIT_MEMLOCK. */
static void test_memlock(void)
{
	const char *addr = nic(0);
	int status;
	pid_t pid;

	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[2];
		struct rlimit rl = { 64 << 10, 64 << 10 };
		struct pp_arena *arena = guest_arena();
		struct pp_dma *dma = vfio_domain(addr, PP_VFIO_IOVA_AUTO);

		REQUIRE(dma != NULL);
		REQUIRE(syscall(SYS_capget, &h, d) == 0);
		d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
		REQUIRE(syscall(SYS_capset, &h, d) == 0);
		REQUIRE(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
		pp_test_log_reset();
		CHECK_EQ(pp_dma_map_arena(dma, arena), -ENOMEM);
		CHECK(pp_test_log_has("RLIMIT_MEMLOCK"));
		CHECK_EQ(pp_dma_destroy(dma), 0);
		exit(pp_test_result());
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int write_param(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

/* dma_entry_limit caps the number of mappings per container. */
static void test_entry_limit(void)
{
	static const char param[] =
		"/sys/module/vfio_iommu_type1/parameters/dma_entry_limit";
	struct pp_arena *a1 = guest_arena(), *a2 = guest_arena();
	struct pp_dma *dma;
	long old;
	FILE *f;

	f = fopen(param, "r");
	if (!f)
		pp_test_skip("no %s", param);
	REQUIRE(fscanf(f, "%ld", &old) == 1);
	fclose(f);
	/* Each arena is one segment here, so one entry each; the limit
	 * is read when the container's IOMMU is set. */
	REQUIRE(write_param(param, 1) == 0);
	dma = vfio_domain(nic(0), PP_VFIO_IOVA_AUTO);
	REQUIRE(dma != NULL);
	CHECK_EQ(pp_arena_segment_count(a1), 1);
	CHECK_EQ(pp_dma_map_arena(dma, a1), 0);
	pp_test_log_reset();
	CHECK_EQ(pp_dma_map_arena(dma, a2), -ENOSPC);
	CHECK(pp_test_log_has("dma_entry_limit"));
	CHECK_EQ(pp_dma_unmap_arena(dma, a1), 0);
	CHECK_EQ(pp_dma_map_arena(dma, a2), 0);
	CHECK_EQ(pp_dma_unmap_arena(dma, a2), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	write_param(param, old);
	pp_arena_destroy(a1);
	pp_arena_destroy(a2);
}

/* Messages that tell the operator what to do. */
static void test_errors(void)
{
	struct pp_dma_opts o = {
		.sz = sizeof(o),
		.mode = PP_IOVA_VFIO,
		.vfio_pci_addr = "0000:7f:1f.7",
	};
	const char *addr = nic(1);
	char path[128];
	struct pp_dma *dma;
	FILE *f;

	pp_test_log_reset();
	errno = 0;
	CHECK(pp_dma_create(&o) == NULL);
	CHECK_EQ(errno, ENODEV);
	CHECK(pp_test_log_has("no PCI device"));

	o.vfio_pci_addr = NULL;
	o.vfio_flags = 0x80;
	CHECK(pp_dma_create(&o) == NULL);
	CHECK_EQ(errno, EINVAL);

	/* A device not bound to vfio-pci has no group file. */
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/vfio-pci/unbind");
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fprintf(f, "%s\n", addr);
	fclose(f);
	o.vfio_flags = 0;
	o.vfio_pci_addr = addr;
	pp_test_log_reset();
	dma = pp_dma_create(&o);
	CHECK(dma == NULL);
	CHECK_EQ(errno, ENODEV);
	CHECK(pp_test_log_has("bind it to vfio-pci"));
	f = fopen("/sys/bus/pci/drivers/vfio-pci/bind", "w");
	REQUIRE(f != NULL);
	fprintf(f, "%s\n", addr);
	CHECK(fclose(f) == 0);
	dma = pp_dma_create(&o);
	CHECK(dma != NULL);
	CHECK_EQ(pp_dma_destroy(dma), 0);
}

/*
 * A growable arena in a VFIO domain: its IOVA range covers the whole
 * span from the start (a page's IOVA is the base's plus its offset,
 * before and after growth); each growth is a VFIO_IOMMU_MAP_DMA of the
 * new segment, each shrink a VFIO_IOMMU_UNMAP_DMA (growing again maps
 * the same IOVAs anew, which the kernel refuses with EEXIST while the
 * old mapping is there); a group added after a growth gets every
 * segment; and a growth the kernel refuses (dma_entry_limit) leaves the
 * zone as it was. The e1000e's DMA into grown segments is test_e1000e
 * grow's.
 */
#define GROW_MIN (4u << 20)
#define GROW_STEP (4u << 20)
#define GROW_MAX (16u << 20)

static struct pp_arena *grow_arena(void)
{
	struct pp_arena_opts o = {
		.sz = sizeof(o), .size = GROW_MIN, .max_size = GROW_MAX,
		.grow_step = GROW_STEP, .numa_node = PP_NUMA_NODE_ANY,
		.name = "vfio-grow",
	};
	struct pp_arena *a;

	o.page_size = pp_hugepages_free(PP_PAGE_SIZE_2M, PP_NUMA_NODE_ANY) >=
				      (long)(GROW_MAX >> 21) ?
			      PP_PAGE_SIZE_2M : PP_PAGE_SIZE_4K;
	a = pp_arena_create(&o);
	REQUIRE(a != NULL);
	return a;
}

static struct pp_allocator *grow_allocator(struct pp_arena *arena)
{
	struct pp_allocator_opts o = {
		.sz = sizeof(o), .arenas = &arena, .nr_arenas = 1,
		.flags = PP_ALLOCATOR_F_MANUAL_RESIZE,
	};
	struct pp_allocator *alloc = pp_allocator_create(&o);

	REQUIRE(alloc != NULL);
	return alloc;
}

static void check_linear(struct pp_dma *dma, struct pp_arena *arena,
			 uint64_t iova0)
{
	char *base = pp_arena_base(arena);
	uint64_t iova;
	size_t off;

	for (off = 0; off < GROW_MAX; off += 61 * PP_PAGE_SIZE) {
		CHECK_EQ(pp_dma_map_page(dma, base + off, 0,
					 PP_DMA_FROM_DEVICE, &iova), 0);
		CHECK_EQ(iova, iova0 + off);
	}
}

static void test_grow(void)
{
	static const char param[] =
		"/sys/module/vfio_iommu_type1/parameters/dma_entry_limit";
	struct pp_arena *arena = grow_arena();
	struct pp_dma *dma = vfio_domain(nic(0), PP_VFIO_IOVA_ALLOC);
	struct pp_zone_growth g = { .sz = sizeof(g) };
	struct pp_allocator *alloc;
	uint64_t iova0 = 0, iova = 0;
	unsigned long allocated = 1;
	long old_limit = -1;
	FILE *f;

	REQUIRE(dma != NULL);
	REQUIRE(pp_dma_map_arena(dma, arena) == 0);
	CHECK_EQ(pp_dma_vfio_arena_iova(dma, arena, &iova0), 0);
	CHECK(iova0 != 0);
	CHECK_EQ(iova0 % pp_arena_page_size(arena), 0);
	check_linear(dma, arena, iova0);
	alloc = grow_allocator(arena);

	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(pp_arena_committed(arena), GROW_MIN + 2 * GROW_STEP);
	/* The IOVA base stays: one range for the whole span. */
	CHECK_EQ(pp_dma_vfio_arena_iova(dma, arena, &iova), 0);
	CHECK_EQ(iova, iova0);
	check_linear(dma, arena, iova0);
	/* The second device's group joins after the growth: type1 replays
	 * every segment mapped so far into its domain (test_e1000e grow
	 * has the device DMA through it). */
	CHECK_EQ(pp_dma_vfio_add_device(dma, nic(1)), 0);

	/* Shrink unmaps both steps; growing again maps the same IOVAs,
	 * which VFIO_IOMMU_MAP_DMA refuses (EEXIST) while a mapping is
	 * left there. */
	CHECK_EQ(pp_allocator_shrink(alloc, 0), 2);
	CHECK_EQ(pp_arena_committed(arena), GROW_MIN);
	pp_test_log_reset();
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK(!pp_test_log_has("mapped already"));
	CHECK_EQ(pp_allocator_grow(alloc, 0), 0);
	CHECK_EQ(pp_allocator_shrink(alloc, 0), 2);

	/* The kernel refuses the next mapping: the growth fails with the
	 * message that says what to raise, and nothing changed. The limit
	 * is read when a container's IOMMU is set: a domain of its own
	 * (the groups leave the first one), with the one mapping the arena
	 * has at its minimum. */
	CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
	CHECK_EQ(pp_dma_destroy(dma), 0);
	f = fopen(param, "r");
	if (f) {
		CHECK(fscanf(f, "%ld", &old_limit) == 1);
		fclose(f);
	}
	if (old_limit > 0) {
		REQUIRE(write_param(param, 1) == 0);
		dma = vfio_domain(nic(0), PP_VFIO_IOVA_ALLOC);
		write_param(param, old_limit);
		REQUIRE(dma != NULL);
		CHECK_EQ(pp_dma_map_arena(dma, arena), 0);
		pp_test_log_reset();
		CHECK_EQ(pp_allocator_grow(alloc, 0), -ENOSPC);
		CHECK(pp_test_log_has("dma_entry_limit"));
		CHECK_EQ(pp_arena_committed(arena), GROW_MIN);
		CHECK_EQ(pp_allocator_zone_growth(alloc, 0, &g), 0);
		CHECK_EQ(g.committed_bytes, GROW_MIN);
		CHECK_EQ(g.last_error, -ENOSPC);
		CHECK(g.grow_failures >= 1);
		CHECK_EQ(pp_allocator_check(alloc, NULL), 0);
		CHECK_EQ(pp_dma_unmap_arena(dma, arena), 0);
		CHECK_EQ(pp_dma_destroy(dma), 0);
	}
	CHECK_EQ(pp_allocator_check(alloc, &allocated), 0);
	CHECK_EQ(allocated, 0);
	CHECK_EQ(pp_allocator_destroy(alloc), 0);
	pp_arena_destroy(arena);
}

static void test_api(void)
{
	static const char *const bad_addrs[] = { "../../../tmp",
						 "0000:00:03.0/../../x",
						 "0000:00:20.0", "" };
	struct pp_dma_opts o = { .sz = sizeof(o), .mode = PP_IOVA_VFIO };
	struct pp_dma_opts va = { .sz = sizeof(va), .mode = PP_IOVA_VA };
	struct pp_arena *arena = pp_test_arena(1 << 20, PP_PAGE_SIZE_4K);
	struct pp_dma *dma;
	uint64_t iova;

	/* Calls for VFIO domains refuse other domains. */
	dma = pp_dma_create(&va);
	REQUIRE(dma != NULL);
	CHECK_EQ(pp_dma_vfio_add_device(dma, "0000:00:02.0"), -EINVAL);
	CHECK_EQ(pp_dma_vfio_device_fd(dma, "0000:00:02.0"), -EINVAL);
	CHECK_EQ(pp_dma_vfio_arena_iova(dma, arena, &iova), -EINVAL);
	CHECK_EQ(pp_dma_destroy(dma), 0);

	o.vfio_iova = (enum pp_vfio_iova)7;
	errno = 0;
	CHECK(pp_dma_create(&o) == NULL);
	CHECK_EQ(errno, EINVAL);
	o.vfio_iova = PP_VFIO_IOVA_AUTO;

	/* An address that is a path, or not quite an address, is refused
	 * before anything is opened, VFIO or not, with the forms to write. */
	for (unsigned int i = 0; i < sizeof(bad_addrs) / sizeof(bad_addrs[0]);
	     i++) {
		o.vfio_pci_addr = bad_addrs[i];
		pp_test_log_reset();
		errno = 0;
		CHECK(pp_dma_create(&o) == NULL);
		CHECK_EQ(errno, EINVAL);
		CHECK(pp_test_log_has("is not a PCI address: write DDDD:BB:DD.F"));
	}
	o.vfio_pci_addr = NULL;

	pp_test_log_reset();
	dma = pp_dma_create(&o);
	if (access("/dev/vfio/vfio", F_OK)) {
		/* No VFIO here: a clear refusal that says what to load. */
		CHECK(dma == NULL);
		CHECK_EQ(errno, ENOENT);
		CHECK(pp_test_log_has("modprobe"));
	} else {
		REQUIRE(dma != NULL);
		CHECK_EQ(pp_dma_vfio_add_device(dma, bad_addrs[0]), -EINVAL);
		CHECK_EQ(pp_dma_vfio_device_fd(dma, bad_addrs[1]), -EINVAL);
		CHECK_EQ(pp_dma_map_arena(dma, arena), -ENODEV);
		CHECK_EQ(pp_dma_vfio_arena_iova(dma, arena, &iova), -ENOENT);
		CHECK_EQ(pp_dma_destroy(dma), 0);
	}
	pp_arena_destroy(arena);
}

/* A group with a device bound to another driver is refused, and the
 * message names that device and its driver. */
static void test_nonviable(void)
{
	const char *a = getenv("PP_TEST_SHARED0"), *b = getenv("PP_TEST_SHARED1");
	struct pp_dma *dma;
	char want[64];
	FILE *f;

	if (!a || !*a || !b || !*b)
		pp_test_skip("no shared IOMMU group in this guest (PP_TEST_SHARED0/1 unset)");
	pp_test_log_reset();
	errno = 0;
	dma = vfio_domain(a, PP_VFIO_IOVA_AUTO);
	CHECK(dma == NULL);
	CHECK_EQ(errno, EPERM);
	snprintf(want, sizeof(want), "%s (e1000)", b);
	CHECK(pp_test_log_has("not viable"));
	CHECK(pp_test_log_has(want));
	/* Unbound from e1000, the group is viable. */
	f = fopen("/sys/bus/pci/drivers/e1000/unbind", "w");
	REQUIRE(f != NULL);
	fprintf(f, "%s\n", b);
	CHECK(fclose(f) == 0);
	dma = vfio_domain(a, PP_VFIO_IOVA_AUTO);
	CHECK(dma != NULL);
	if (dma)
		CHECK_EQ(pp_dma_destroy(dma), 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s api|container|map|iova_modes|memlock|entry_limit|errors|nonviable|grow\n",
			argv[0]);
		return 2;
	}
	pp_test_capture_log();
	if (!strcmp(argv[1], "api"))
		RUN_TEST(test_api);
	else if (!strcmp(argv[1], "container"))
		RUN_TEST(test_container);
	else if (!strcmp(argv[1], "map"))
		RUN_TEST(test_map);
	else if (!strcmp(argv[1], "iova_modes"))
		RUN_TEST(test_iova_modes);
	else if (!strcmp(argv[1], "memlock"))
		RUN_TEST(test_memlock);
	else if (!strcmp(argv[1], "entry_limit"))
		RUN_TEST(test_entry_limit);
	else if (!strcmp(argv[1], "errors"))
		RUN_TEST(test_errors);
	else if (!strcmp(argv[1], "nonviable"))
		RUN_TEST(test_nonviable);
	else if (!strcmp(argv[1], "grow"))
		RUN_TEST(test_grow);
	else
		return 2;
	return pp_test_result();
}
