/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vmalloc.c - large virtually contiguous areas (pp_vmalloc.h): which page
 * sizes an area uses, where its pages come from, on which nodes, and what
 * it wastes. The syscalls are in lib/os; this file owns the policy and the
 * cleanup.
 *
 * Layout of an area of len bytes (size rounded up to 4 KiB):
 *
 *   base (aligned to the largest page used)
 *   | n1 x 1 GiB | n2 x 2 MiB | tail: n3 x 4 KiB (less than 2 MiB unless
 *                                    bigger pages were off or short) |
 *
 * n1 is as many 1 GiB pages as fit and are free, n2 likewise with 2 MiB
 * pages in what is left. Hugepages come from one hugetlb memfd per size,
 * fallocate()d before anything is mapped (a shortage is ENOSPC, not a
 * SIGBUS) and closed once mapped: the mapping keeps the pages, and
 * munmap() gives them back. The tail is anonymous memory, or pages a
 * base page source (pp_vm_area.h) names by file and offset, mapped
 * again here from that file: the allocator's pages of a 4 KiB arena.
 *
 * The allocator sits above this layer (doc/design.md: each layer depends only
 * on those below), so this file knows nothing of it. The allocator's
 * source and the public pp_vmalloc(), the one call that sees both, are in
 * lib/page/page_vmalloc.c; lib/page's own descriptor arrays call
 * pp_vm_area_create() here with no source. pp_vfree() and the rest of the
 * public calls stay here: giving the pages back is the source's release().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pagepool/pp_vmalloc.h>

#include "pp_log.h"
#include "pp_opts.h"
#include "pp_vm_area.h"
#include "pp_os_fault.h"
#include "pp_os.h"

#define SZ_4K PP_PAGE_SIZE_4K
#define SZ_2M PP_PAGE_SIZE_2M
#define SZ_1G PP_PAGE_SIZE_1G

#define NAME_LEN 48

/*
 * Base pages whose node is looked up one by one; beyond them one in
 * SAMPLE_STRIDE is (a query per 4 KiB page of a 1 GiB area would take a
 * quarter of a million system calls). 512 pages: one 2 MiB page's worth,
 * which covers any tail of an area that has hugepages.
 */
#define SAMPLE_STRIDE 512UL

#define KNOWN_FLAGS                                                      \
	(PP_VMALLOC_F_NO_HUGE | PP_VMALLOC_F_NO_1G | PP_VMALLOC_F_NO_2M |   \
	 PP_VMALLOC_F_NO_FALLBACK | PP_VMALLOC_F_INTERLEAVE |               \
	 PP_VMALLOC_F_ROUND_UP)

/* The hugepage sizes an area may use, largest first. */
static const struct huge_size {
	size_t page_size;
	unsigned int off_flag;
	const char *name;
} huge_sizes[] = {
	{ SZ_1G, PP_VMALLOC_F_NO_1G, "1 GiB" },
	{ SZ_2M, PP_VMALLOC_F_NO_2M, "2 MiB" },
};
#define NR_HUGE_SIZES (sizeof(huge_sizes) / sizeof(huge_sizes[0]))

/* One page size's share of the area: a hugetlb memfd holding nr pages. */
struct huge_part {
	size_t page_size;
	unsigned long nr;
	int fd;
};

struct pp_vm_area {
	void *addr;
	size_t len;			/* mapped and reserved */
	/* The tail's base pages; .fill NULL: anonymous memory. */
	struct pp_vm_base_source src;
	struct pp_vm_area_stats stats;
	char name[NAME_LEN];
};

bool pp_vmalloc_huge_disabled(void)
{
	const char *v = getenv(PP_VMALLOC_ENV_NOHUGE);

	/* Like the kernel's nohugevmalloc: present and not "0" means off. */
	return v && *v && strcmp(v, "0") != 0;
}

bool pp_vmalloc_page_size_supported(size_t page_size)
{
	switch (page_size) {
	case SZ_4K:
		return true;
	case SZ_2M:
	case SZ_1G:
		return pp_os_hugepage_size_supported(page_size);
	default:
		/* No query for this size: unsupported, as in the seed. */
		return false;
	}
}

long pp_vmalloc_pages_available(size_t page_size, int node)
{
	if (page_size != SZ_2M && page_size != SZ_1G)
		return -EINVAL;
	if (!pp_os_hugepage_size_supported(page_size))
		return -ENOENT;
	return pp_os_hugepages_available(page_size, node);
}

static size_t round_up(size_t v, size_t to)
{
	if (v > SIZE_MAX - (to - 1))
		return 0;
	return (v + to - 1) & ~(to - 1);
}

/* Copy and check the caller's options; NULL means the defaults. */
static int check_opts(size_t size, const struct pp_vmalloc_opts *uopts,
		      struct pp_vmalloc_opts *o)
{
	const char *name;

	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->numa_node = PP_NUMA_NODE_ANY;
	if (uopts) {
		if (pp_opts_copy(o, uopts, sizeof(*o), sizeof(*o),
				 "struct pp_vmalloc_opts"))
			return -EINVAL;
	}
	name = o->name ? o->name : "vmalloc";

	if (size == 0) {
		PP_ERR("vmalloc '%s': size is 0: ask for at least one byte",
		       name);
		return -EINVAL;
	}
	/* Room to round up to 1 GiB and to align the reservation. */
	if (size > SIZE_MAX / 4) {
		PP_ERR("vmalloc '%s': size %zu is too large for the address space",
		       name, size);
		return -EINVAL;
	}
	if (o->flags & ~KNOWN_FLAGS) {
		PP_ERR("vmalloc '%s': unknown flags %#x", name,
		       o->flags & ~KNOWN_FLAGS);
		return -EINVAL;
	}
	if (o->flags & PP_VMALLOC_F_INTERLEAVE) {
		uint64_t online = pp_os_online_node_mask();

		if (!o->interleave_nodes)
			o->interleave_nodes = online;
		if (o->interleave_nodes & ~online) {
			PP_ERR("vmalloc '%s': interleave mask %#llx names nodes that are not online (online: %#llx): pick nodes listed in /sys/devices/system/node/online",
			       name, (unsigned long long)o->interleave_nodes,
			       (unsigned long long)online);
			return -EINVAL;
		}
		if (!pp_os_numa_available() && o->interleave_nodes != 1) {
			PP_ERR("vmalloc '%s': cannot interleave over nodes %#llx: pagepool was built without libnuma (install libnuma-dev and rebuild)",
			       name, (unsigned long long)o->interleave_nodes);
			return -ENOSYS;
		}
		o->numa_node = PP_NUMA_NODE_ANY;
	} else if (o->numa_node < PP_NUMA_NODE_ANY ||
		   (o->numa_node >= 0 && !pp_os_node_online(o->numa_node))) {
		PP_ERR("vmalloc '%s': NUMA node %d is not online: pass PP_NUMA_NODE_ANY or a node listed in /sys/devices/system/node/online",
		       name, o->numa_node);
		return -EINVAL;
	} else if (o->numa_node >= 0 && !pp_os_numa_available() &&
		   pp_os_node_count() > 1) {
		PP_ERR("vmalloc '%s': cannot place memory on node %d: pagepool was built without libnuma (install libnuma-dev and rebuild)",
		       name, o->numa_node);
		return -ENOSYS;
	}
	return 0;
}

/* Whether @hs may be used at all: the switches and the kernel. */
static bool huge_size_enabled(const struct huge_size *hs, unsigned int flags,
			      bool env_off)
{
	if (env_off || (flags & (PP_VMALLOC_F_NO_HUGE | hs->off_flag)))
		return false;
	return pp_vmalloc_page_size_supported(hs->page_size);
}

/* One line naming the sysfs file and the figure to write into it. */
static void report_short(const struct pp_vm_area *area,
			 const struct pp_vmalloc_opts *o,
			 const struct huge_size *hs, unsigned long want,
			 long avail)
{
	long have = avail > 0 ? avail : 0;
	long add = (long)want - have;
	char cmd[80];

	pp_os_hugepages_reserve_cmd(cmd, sizeof(cmd), hs->page_size,
				    o->numa_node, add);
	PP_ERR("vmalloc '%s': need %lu free %zu kB hugepages%s but %ld are available: reserve %ld more with '%s', or drop PP_VMALLOC_F_NO_FALLBACK to map with smaller pages",
	       area->name, want, hs->page_size >> 10,
	       o->numa_node >= 0 ? " on the node asked" : "", have, add, cmd);
}

/* Take the file's pages under the policy the options ask for. */
static int populate_placed(int fd, size_t len, const struct pp_vmalloc_opts *o)
{
	struct pp_os_policy saved = { .changed = false };
	int err = 0;

	if (o->flags & PP_VMALLOC_F_INTERLEAVE)
		err = pp_os_policy_interleave(o->interleave_nodes, &saved);
	else if (o->numa_node >= 0)
		err = pp_os_policy_bind(o->numa_node, &saved);
	if (err)
		return err;
	err = pp_os_populate_file(fd, len);
	pp_os_policy_restore(&saved);
	return err;
}

/*
 * Take up to @want pages of @hs into @part. Fewer (even none) when they are
 * short and falling back is allowed; -ENOMEM after a message when it is
 * not; another -errno after a message when something else failed.
 */
static int take_huge(struct pp_vm_area *area, const struct pp_vmalloc_opts *o,
		     const struct huge_size *hs, unsigned long want,
		     struct huge_part *part)
{
	bool strict = o->flags & PP_VMALLOC_F_NO_FALLBACK;
	long avail = pp_vmalloc_pages_available(hs->page_size, o->numa_node);
	unsigned long got = want;
	int fd, err;

	part->page_size = hs->page_size;
	part->nr = 0;
	part->fd = -1;
	/*
	 * Check first, so that a request that cannot be met takes nothing
	 * from the pool others share; fallocate()'s ENOSPC stays the real
	 * test, since the count can change under us.
	 */
	if (avail >= 0 && (unsigned long)avail < want) {
		if (strict) {
			report_short(area, o, hs, want, avail);
			return -ENOMEM;
		}
		got = (unsigned long)avail;
		area->stats.fallbacks++;
		PP_INFO("vmalloc '%s': %ld of the %lu %s pages wanted are free; mapping the rest with smaller pages",
			area->name, avail, want, hs->name);
	}
	if (got == 0)
		return 0;

	fd = pp_os_memfd(area->name, hs->page_size);
	if (fd < 0) {
		PP_ERR("vmalloc '%s': memfd_create for %s pages failed: %s",
		       area->name, hs->name, strerror(-fd));
		return fd;
	}
	err = populate_placed(fd, got * hs->page_size, o);
	if (err == -ENOSPC || err == -ENOMEM) {
		/* Lost a race for the pages, or the node had too few. */
		close(fd);
		if (strict) {
			report_short(area, o, hs, want,
				     pp_vmalloc_pages_available(hs->page_size,
								o->numa_node));
			return -ENOMEM;
		}
		if (got == want)
			area->stats.fallbacks++;
		PP_INFO("vmalloc '%s': taking %lu %s pages failed (%s); mapping with smaller pages",
			area->name, got, hs->name, strerror(-err));
		return 0;
	}
	if (err) {
		PP_ERR("vmalloc '%s': allocating %lu %s pages failed: %s",
		       area->name, got, hs->name, strerror(-err));
		close(fd);
		return err;
	}
	part->nr = got;
	part->fd = fd;
	return 0;
}

/* Put the calling policy on a range of anonymous memory before it faults. */
static int place_range(void *addr, size_t len, const struct pp_vmalloc_opts *o)
{
	if (o->flags & PP_VMALLOC_F_INTERLEAVE)
		return pp_os_interleave_range(addr, len, o->interleave_nodes);
	if (o->numa_node >= 0)
		return pp_os_bind_range(addr, len, o->numa_node);
	return 0;
}

/* Fill the page tables; EINVAL (before Linux 5.14): fault by touching. */
static int populate_range(void *addr, size_t len)
{
	int err = pp_os_populate_map(addr, len);

	if (err == -EINVAL) {
		for (size_t off = 0; off < len; off += SZ_4K)
			((volatile char *)addr)[off] = 0;
		err = 0;
	}
	return err;
}

static int map_anon_tail(struct pp_vm_area *area, char *start, size_t len,
			 const struct pp_vmalloc_opts *o)
{
	int err;

	err = pp_os_map_anon_fixed(start, len);
	if (err) {
		PP_ERR("vmalloc '%s': mapping %zu bytes of base pages failed: %s",
		       area->name, len, strerror(-err));
		return err;
	}
	/* 4 KiB pages are what the statistics say: no THP behind our back. */
	pp_os_no_thp(start, len);
	err = place_range(start, len, o);
	if (err) {
		PP_ERR("vmalloc '%s': setting the NUMA policy of the base pages failed: %s",
		       area->name, strerror(-err));
		return err;
	}
	err = populate_range(start, len);
	if (err)
		PP_ERR("vmalloc '%s': populating %zu bytes of base pages failed: %s (memory is short)",
		       area->name, len, strerror(-err));
	return err;
}

/*
 * Map @n base pages from the area's source at @start, one mmap() per run
 * of pages that are adjacent in one file (a fresh allocator gives long
 * runs), then pre-fault and zero them: a source's pages come as their last
 * user left them.
 */
static int map_source_tail(struct pp_vm_area *area, char *start,
			   unsigned long n, const struct pp_vmalloc_opts *o)
{
	const struct pp_vm_base_source *src = &area->src;
	struct pp_vm_base_page *pages;
	unsigned long i, j;
	int err;

	pages = pp_os_calloc(n, sizeof(*pages));
	if (!pages)
		return -ENOMEM;
	err = src->fill(src->ctx, area->name, o, n, pages);
	if (err)
		goto out_free_pages;

	for (i = 0; i < n; i = j) {
		const struct pp_vm_base_page *run = &pages[i];

		for (j = i + 1; j < n; j++) {
			if (pages[j].fd != run->fd ||
			    pages[j].offset != run->offset + (j - i) * SZ_4K)
				break;
		}
		err = pp_os_map_fixed(start + i * SZ_4K, (j - i) * SZ_4K,
				      run->fd, run->offset);
		if (err) {
			PP_ERR("vmalloc '%s': mapping base pages from %s failed: %s%s",
			       area->name, src->what, strerror(-err),
			       err == -ENOMEM ? " (too many mappings: raise vm.max_map_count or allow hugepages)" : "");
			goto out_free_pages;
		}
	}
	err = populate_range(start, n * SZ_4K);
	if (err) {
		PP_ERR("vmalloc '%s': populating the base pages from %s failed: %s",
		       area->name, src->what, strerror(-err));
		goto out_free_pages;
	}
	memset(start, 0, n * SZ_4K);
out_free_pages:
	/* The mappings hold the files; the pages stay with the source. */
	free(pages);
	return err;
}

static void note_node(struct pp_vm_area *area, const void *addr)
{
	int node = pp_os_addr_node(addr);

	if (node >= 0 && node < 64)
		area->stats.nodes_seen |= 1ULL << node;
}

static void scan_nodes(struct pp_vm_area *area, const struct huge_part *parts,
		       size_t tail_off)
{
	char *p = area->addr;

	for (size_t i = 0; i < NR_HUGE_SIZES; i++) {
		for (unsigned long k = 0; k < parts[i].nr; k++) {
			note_node(area, p);
			p += parts[i].page_size;
		}
	}
	for (unsigned long k = 0; k < (area->len - tail_off) / SZ_4K; k++)
		if (k < SAMPLE_STRIDE || k % SAMPLE_STRIDE == 0)
			note_node(area, (char *)area->addr + tail_off +
					       k * SZ_4K);
}

/*
 * Map the hugetlb parts at the head of the reservation, largest first,
 * then the tail. Returns the tail's offset in @tail_off.
 */
static int map_area(struct pp_vm_area *area, struct huge_part *parts,
		    const struct pp_vmalloc_opts *o, size_t *tail_off)
{
	char *p = area->addr;
	size_t off = 0;
	int err;

	for (size_t i = 0; i < NR_HUGE_SIZES; i++) {
		size_t len = parts[i].nr * parts[i].page_size;

		if (!parts[i].nr)
			continue;
		err = pp_os_map_fixed(p + off, len, parts[i].fd, 0);
		if (err) {
			PP_ERR("vmalloc '%s': mapping %lu %s pages failed: %s",
			       area->name, parts[i].nr, huge_sizes[i].name,
			       strerror(-err));
			return err;
		}
		/* The pages exist; this fills the page tables only. */
		err = populate_range(p + off, len);
		if (err) {
			PP_ERR("vmalloc '%s': populating %lu %s pages failed: %s",
			       area->name, parts[i].nr, huge_sizes[i].name,
			       strerror(-err));
			return err;
		}
		off += len;
	}
	*tail_off = off;
	if (off == area->len)
		return 0;
	if (area->src.fill)
		return map_source_tail(area, p + off,
				       (area->len - off) / SZ_4K, o);
	return map_anon_tail(area, p + off, area->len - off, o);
}

static void close_parts(struct huge_part *parts)
{
	for (size_t i = 0; i < NR_HUGE_SIZES; i++) {
		if (parts[i].fd >= 0)
			close(parts[i].fd);
		parts[i].fd = -1;
	}
}

static void fill_stats(struct pp_vm_area *area, const struct huge_part *parts,
		       size_t size, size_t tail_off,
		       const struct pp_vmalloc_opts *o)
{
	struct pp_vm_area_stats *s = &area->stats;

	s->size = size;
	s->mapped = area->len;
	s->wasted = area->len - size;
	/* 5.13 mapped an area of at least one PMD all with PMD pages. */
	s->kernel_wasted = (size >= SZ_2M ? round_up(size, SZ_2M) :
					    round_up(size, SZ_4K)) - size;
	for (size_t i = 0; i < NR_HUGE_SIZES; i++) {
		if (parts[i].page_size == SZ_1G) {
			s->pages_1g = parts[i].nr;
			s->bytes_1g = parts[i].nr * SZ_1G;
		} else {
			s->pages_2m = parts[i].nr;
			s->bytes_2m = parts[i].nr * SZ_2M;
		}
	}
	s->bytes_4k = area->len - tail_off;
	s->pages_4k = s->bytes_4k / SZ_4K;
	/* The allocator is the only source there is (page_vmalloc.c). */
	s->base_from_allocator = area->src.fill && s->pages_4k;
	s->interleaved = o->flags & PP_VMALLOC_F_INTERLEAVE;
	s->node = o->numa_node;
}

/* Give the source back what it took; the area must be unmapped. */
static void release_source(const struct pp_vm_base_source *src)
{
	if (src && src->release)
		src->release(src->ctx);
}

struct pp_vm_area *pp_vm_area_create(size_t size,
				     const struct pp_vmalloc_opts *uopts,
				     const struct pp_vm_base_source *src)
{
	struct huge_part parts[NR_HUGE_SIZES];
	struct pp_vmalloc_opts o;
	struct pp_vm_area *area;
	bool env_off = pp_vmalloc_huge_disabled();
	size_t rest, align = SZ_4K, tail_off = 0, largest = SZ_4K;
	int err;

	for (size_t i = 0; i < NR_HUGE_SIZES; i++) {
		parts[i].page_size = huge_sizes[i].page_size;
		parts[i].nr = 0;
		parts[i].fd = -1;
	}
	err = check_opts(size, uopts, &o);
	if (err)
		goto err_release_source;
	if (o.alloc && !src) {
		/* Only lib/page can take pages from an allocator. */
		PP_ERR("vmalloc '%s': opts->alloc given without its base page source: call pp_vmalloc()",
		       o.name ? o.name : "vmalloc");
		err = -EINVAL;
		goto err_release_source;
	}
	area = pp_os_calloc(1, sizeof(*area));
	if (!area) {
		err = -ENOMEM;
		goto err_release_source;
	}
	snprintf(area->name, sizeof(area->name), "%s",
		 o.name ? o.name : "vmalloc");
	/* The name goes into JSON and /proc/<pid>/maps: keep it plain. */
	for (char *c = area->name; *c; c++)
		if (*c == '"' || *c == '\\' || *c == '/' ||
		    (unsigned char)*c < 0x20)
			*c = '_';
	if (src)
		area->src = *src;

	/*
	 * ROUND_UP rounds to the largest size allowed that has the pages
	 * (any, with NO_FALLBACK, so that the shortage is reported): rounding
	 * 64 MiB up to 1 GiB and then mapping that 1 GiB with 2 MiB pages
	 * would only waste memory.
	 */
	for (size_t i = 0; (o.flags & PP_VMALLOC_F_ROUND_UP) &&
			   i < NR_HUGE_SIZES; i++) {
		const struct huge_size *hs = &huge_sizes[i];
		long avail;

		if (!huge_size_enabled(hs, o.flags, env_off))
			continue;
		avail = pp_vmalloc_pages_available(hs->page_size,
						   o.numa_node);
		if ((o.flags & PP_VMALLOC_F_NO_FALLBACK) || avail < 0 ||
		    (size_t)avail >= round_up(size, hs->page_size) /
					     hs->page_size) {
			largest = hs->page_size;
			break;
		}
		area->stats.fallbacks++;
	}
	area->len = round_up(size, largest);

	/* Head first: as many of each size as fit and are free. */
	rest = area->len;
	for (size_t i = 0; i < NR_HUGE_SIZES; i++) {
		const struct huge_size *hs = &huge_sizes[i];

		if (!huge_size_enabled(hs, o.flags, env_off) ||
		    rest < hs->page_size)
			continue;
		err = take_huge(area, &o, hs, rest / hs->page_size, &parts[i]);
		if (err)
			goto err_close_parts;
		rest -= parts[i].nr * hs->page_size;
		if (parts[i].nr && hs->page_size > align)
			align = hs->page_size;
	}

	area->addr = pp_os_reserve(area->len, align);
	if (!area->addr) {
		err = -errno;
		PP_ERR("vmalloc '%s': cannot reserve %zu bytes of address space aligned to %zu: %s",
		       area->name, area->len, align, strerror(-err));
		goto err_close_parts;
	}
	err = map_area(area, parts, &o, &tail_off);
	if (err)
		goto err_unmap;
	/* The mappings hold the hugetlb files now. */
	close_parts(parts);

	fill_stats(area, parts, size, tail_off, &o);
	scan_nodes(area, parts, tail_off);
	return area;

err_unmap:
	/* Unmapped before the source takes its pages back. */
	pp_os_unmap(area->addr, area->len);
err_close_parts:
	close_parts(parts);
	free(area);
err_release_source:
	release_source(src);
	errno = -err;
	return NULL;
}

int pp_vfree(struct pp_vm_area *area)
{
	if (!area)
		return 0;
	pp_os_unmap(area->addr, area->len);
	/* Unmapped first: nothing reaches the pages through the area now. */
	release_source(&area->src);
	free(area);
	return 0;
}

void *pp_vm_area_addr(const struct pp_vm_area *area)
{
	return area->addr;
}

size_t pp_vm_area_size(const struct pp_vm_area *area)
{
	return area->stats.size;
}

int pp_vm_area_stats(const struct pp_vm_area *area,
		     struct pp_vm_area_stats *out)
{
	if (!area || !out)
		return -EINVAL;
	*out = area->stats;
	return 0;
}

int pp_vm_area_stats_json(const struct pp_vm_area *area, char *buf,
			  size_t len)
{
	const struct pp_vm_area_stats *s;

	if (!area || (!buf && len))
		return -EINVAL;
	s = &area->stats;
	return snprintf(buf, len,
			"{\"name\":\"%s\",\"size\":%zu,\"mapped\":%zu,"
			"\"wasted\":%zu,\"kernel_wasted\":%zu,"
			"\"pages\":{\"1g\":%lu,\"2m\":%lu,\"4k\":%lu},"
			"\"bytes\":{\"1g\":%zu,\"2m\":%zu,\"4k\":%zu},"
			"\"fallbacks\":%u,\"base_from_allocator\":%s,"
			"\"interleaved\":%s,\"node\":%d,\"nodes_seen\":%llu}",
			area->name, s->size, s->mapped, s->wasted,
			s->kernel_wasted, s->pages_1g, s->pages_2m,
			s->pages_4k, s->bytes_1g, s->bytes_2m, s->bytes_4k,
			s->fallbacks, s->base_from_allocator ? "true" : "false",
			s->interleaved ? "true" : "false", s->node,
			(unsigned long long)s->nodes_seen);
}
