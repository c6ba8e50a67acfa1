/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * arena.c - the hugepage arena (pp_arena.h): choosing the page size,
 * getting the pages on the right node, and the messages that tell the
 * operator what to reserve when they are short. The syscalls are in
 * lib/os; this file owns the policy and the cleanup.
 *
 * Creation order, and why:
 *   1. check the arguments and the free counts in sysfs, so that a request
 *      that cannot succeed takes no page from a pool other processes share;
 *   2. create the file (memfd or hugetlbfs) and fallocate() it under a
 *      thread policy bound to the node: the pages are taken here, and a
 *      shortage is -ENOSPC now rather than SIGBUS at first touch;
 *   3. reserve the range PROT_NONE, aligned, map the file into it with
 *      MAP_FIXED, bind the range to the node, and fill the page tables
 *      (MADV_POPULATE_WRITE);
 *   4. check the node of every page and refuse memory on another node;
 *   5. lock 4 KiB pages (hugetlb pages are never swapped; see below).
 * Each step has a cleanup label that undoes it.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pp_log.h"
#include "pp_opts.h"
#include "pp_os_fault.h"
#include "pp_os.h"
#include "arena_priv.h"

/*
 * Arenas are aligned to at least 2 MiB even with 4 KiB pages: the page
 * allocator builds buddy blocks up to order 9 in every arena, and a block
 * must be aligned to its size for the buddy arithmetic to hold.
 */
#define ARENA_MIN_ALIGN PP_PAGE_SIZE_2M

/* pp_arena_destroy() parks the user count here so late users see it. */
#define USERS_DEAD INT_MIN

const char *pp_arena_size_name(size_t page_size)
{
	switch (page_size) {
	case PP_PAGE_SIZE_1G:
		return "1 GiB";
	case PP_PAGE_SIZE_2M:
		return "2 MiB";
	default:
		return "4 KiB";
	}
}

static bool is_hugepage_size(size_t page_size)
{
	return page_size == PP_PAGE_SIZE_2M || page_size == PP_PAGE_SIZE_1G;
}

/* Why a hugepage size could not be used; becomes one message. */
struct shortage {
	size_t page_size;
	int node;		/* as asked; negative for any node */
	long need;
	long avail;		/* -errno when sysfs could not be read */
	bool unsupported;	/* the kernel offers no pages of this size */
	const char *full_dir;	/* hugetlbfs mount out of room, pool not */
};

/*
 * One line that says what is short and what to write where. The figure
 * to write is the current reservation plus what is missing, so the
 * operator does not have to work it out.
 */
static void format_shortage(char *buf, size_t len, const struct shortage *s)
{
	char path[160], cmd[80];
	long add;

	if (s->unsupported) {
		pp_os_hugepages_path(path, sizeof(path), s->page_size, -1, "");
		snprintf(buf, len,
			 "this kernel offers no %s hugepages (%s does not exist): use another page size",
			 pp_arena_size_name(s->page_size), path);
		return;
	}
	if (s->full_dir) {
		snprintf(buf, len,
			 "the hugetlbfs mount at %s has no room for %ld %zu kB pages though %ld are free: raise its limit (mount -o remount,size=... %s) or use another mount",
			 s->full_dir, s->need, s->page_size >> 10, s->avail,
			 s->full_dir);
		return;
	}
	if (s->avail < 0) {
		/* An errno from sysfs, not a count: say so, not "-2 free". */
		pp_os_hugepages_path(path, sizeof(path), s->page_size, s->node,
				     "free_hugepages");
		snprintf(buf, len,
			 "need %ld free %zu kB hugepages but their free count cannot be read (%s): check %s",
			 s->need, s->page_size >> 10, strerror((int)-s->avail),
			 path);
		return;
	}
	if (s->avail >= s->need) {
		/* fallocate() said ENOSPC, yet the count says enough. */
		snprintf(buf, len,
			 "the kernel refused %ld %zu kB hugepages though %ld are free now: another process took them meanwhile (try again), or a hugetlb cgroup limit applies",
			 s->need, s->page_size >> 10, s->avail);
		return;
	}
	add = s->need - s->avail;
	pp_os_hugepages_reserve_cmd(cmd, sizeof(cmd), s->page_size, s->node,
				    add);
	if (s->node >= 0)
		snprintf(buf, len,
			 "need %ld free %zu kB hugepages on node %d but %ld are free there: reserve %ld more with '%s'%s",
			 s->need, s->page_size >> 10, s->node, s->avail, add,
			 cmd,
			 s->page_size == PP_PAGE_SIZE_1G ?
				 " (1 GiB pages are surest reserved at boot: hugepagesz=1G hugepages=N)" :
				 "");
	else
		snprintf(buf, len,
			 "need %ld free %zu kB hugepages but %ld are free on all nodes together: reserve %ld more with '%s'%s",
			 s->need, s->page_size >> 10, s->avail, add, cmd,
			 s->page_size == PP_PAGE_SIZE_1G ?
				 " (1 GiB pages are surest reserved at boot: hugepagesz=1G hugepages=N)" :
				 "");
}

/* Every committed slot, then the reservation (destroy, failed create). */
static void unmap_all(struct pp_arena *arena)
{
	for (unsigned int k = 0; k < arena->nr_slots; k++)
		if (arena->seg[k].addr)
			pp_arena_uncommit_slot(arena, k);
	pp_os_unmap(arena->base, arena->size);
	arena->base = NULL;
}

/* Allocate the file's pages, on @node when one is asked. */
static int populate_on_node(struct pp_arena *arena, int fd, size_t len,
			    int node, bool *policy_failed)
{
	struct pp_os_policy saved;
	int err;

	*policy_failed = false;
	if (node >= 0) {
		err = pp_os_policy_bind(node, &saved);
		if (err) {
			/* Not a shortage: the pool was not asked yet. */
			PP_ERR("arena '%s': binding this thread's memory policy to node %d failed: %s",
			       arena->name, node, strerror(-err));
			*policy_failed = true;
			return err;
		}
	}
	err = pp_os_populate_file(fd, len);
	if (node >= 0)
		pp_os_policy_restore(&saved);
	return err;
}

/*
 * Check the node of every page (one query per page: hugepage
 * reservations are not NUMA-aware, so the pool may have handed out pages
 * from anywhere). Sets seg->node; refuses a page off the asked node.
 */
static int check_nodes(struct pp_arena *arena, struct pp_arena_segment *seg,
		       int want)
{
	int first = PP_NUMA_NODE_ANY;

	for (size_t off = 0; off < seg->len; off += seg->page_size) {
		int node = pp_os_addr_node((char *)seg->addr + off);

		if (node < 0) {
			/* Cannot tell (no libnuma on a multi-node machine). */
			seg->node = want;
			return 0;
		}
		if (want >= 0 && node != want) {
			char path[160];

			pp_os_hugepages_path(path, sizeof(path),
					     seg->page_size, want,
					     "nr_hugepages");
			PP_ERR("arena '%s': the %s page at offset %#zx landed on node %d, not on node %d as asked; refusing it: reserve more %zu kB pages on node %d itself in %s",
			       arena->name, pp_arena_size_name(seg->page_size), off,
			       node, want, seg->page_size >> 10, want, path);
			return -ENODEV;
		}
		if (off == 0)
			first = node;
		else if (node != first)
			first = PP_NUMA_NODE_ANY;
	}
	seg->node = first;
	return 0;
}

static int slot_file(struct pp_arena *arena)
{
	bool huge = arena->page_size != PP_PAGE_SIZE_4K;
	int fd;

	if (huge && arena->hugetlbfs_dir)
		fd = pp_os_hugetlbfs_file(arena->hugetlbfs_dir, arena->name);
	else
		fd = pp_os_memfd(arena->name, arena->page_size);
	if (fd >= 0)
		return fd;
	if (huge && arena->hugetlbfs_dir)
		PP_ERR("arena '%s': cannot create a file in %s: %s (it must be writable by this user)",
		       arena->name, arena->hugetlbfs_dir, strerror(-fd));
	else
		PP_ERR("arena '%s': memfd_create for %s pages failed: %s",
		       arena->name, pp_arena_size_name(arena->page_size),
		       strerror(-fd));
	return fd;
}

/*
 * Commit slot @k: its file, its pages taken on the node, mapped over its
 * part of the reservation, page tables filled, nodes checked, 4 KiB pages
 * locked. Returns 0; -ENOSPC when hugepages ran short (the caller says so,
 * since it may still fall back); any other -errno after logging why. On
 * failure the slot is reserved address space again and nothing is held.
 */
int pp_arena_commit_slot(struct pp_arena *arena, unsigned int k)
{
	size_t len = arena->slot_size, page_size = arena->page_size;
	void *addr = (char *)arena->base + (size_t)k * len;
	struct pp_arena_segment seg = { 0 };
	bool huge = page_size != PP_PAGE_SIZE_4K;
	int node = arena->want_node;
	bool policy_failed;
	int fd, err;

	fd = slot_file(arena);
	if (fd < 0)
		return fd;
	err = populate_on_node(arena, fd, len, node, &policy_failed);
	/* A policy failure is reported already and is no shortage. */
	if (err && !policy_failed) {
		/*
		 * hugetlb says ENOSPC when the pool is short; shmem says
		 * ENOMEM or ENOSPC when memory is. Only the former is a
		 * hugepage shortage the caller may fall back from.
		 */
		if (huge && (err == -ENOSPC || err == -ENOMEM)) {
			err = -ENOSPC;
		} else {
			PP_ERR("arena '%s': allocating %zu bytes of %s pages failed: %s",
			       arena->name, len, pp_arena_size_name(page_size),
			       strerror(-err));
			if (err == -ENOSPC)
				err = -ENOMEM;
		}
	}
	if (err)
		goto err_close_fd;

	err = pp_os_map_fixed(addr, len, fd, 0);
	if (err) {
		PP_ERR("arena '%s': mapping %zu bytes of %s pages failed: %s",
		       arena->name, len, pp_arena_size_name(page_size),
		       strerror(-err));
		goto err_rereserve;
	}
	if (node >= 0) {
		/* Any page the file still lacks must come from the node too. */
		err = pp_os_bind_range(addr, len, node);
		if (err) {
			PP_ERR("arena '%s': binding to node %d failed: %s",
			       arena->name, node, strerror(-err));
			goto err_rereserve;
		}
	}

	/*
	 * The pages exist; this only fills the page tables so the data path
	 * takes no fault. EFAULT is where SIGBUS would have been: a page was
	 * missing after all. EINVAL: a kernel before 5.14, first touches
	 * will fault instead, which is slower but safe.
	 */
	err = pp_os_populate_map(addr, len);
	if (err == -EFAULT && huge) {
		err = -ENOSPC;
		goto err_rereserve;
	}
	if (err && err != -EINVAL) {
		PP_ERR("arena '%s': populating %zu bytes failed: %s",
		       arena->name, len, strerror(-err));
		goto err_rereserve;
	}

	seg.addr = addr;
	seg.len = len;
	seg.page_size = page_size;
	seg.fd = fd;
	seg.fd_offset = 0;
	err = check_nodes(arena, &seg, node);
	if (err)
		goto err_rereserve;

	/*
	 * hugetlb pages are never swapped or migrated, and the kernel's
	 * mlock() skips hugetlb mappings (it neither locks nor needs to)
	 * while still charging them to RLIMIT_MEMLOCK; locking them would
	 * only make a large arena fail for unprivileged users. 4 KiB shmem
	 * pages can be swapped, so they are locked.
	 */
	if (arena->lock_pages) {
		err = pp_os_lock(addr, len);
		if (err) {
			PP_ERR("arena '%s': mlock of %zu bytes failed: %s: raise RLIMIT_MEMLOCK (ulimit -l, or LimitMEMLOCK= for a service), run with CAP_IPC_LOCK, or pass PP_ARENA_F_NO_LOCK",
			       arena->name, len, strerror(-err));
			/* The rlimit check says ENOMEM; it is a permission. */
			if (err == -ENOMEM)
				err = -EPERM;
			goto err_rereserve;
		}
	}

	arena->seg[k] = seg;
	arena->nr_committed++;
	__atomic_store_n(&arena->committed_bytes, arena->committed_bytes + len,
			 __ATOMIC_RELAXED);
	return 0;

err_rereserve:
	pp_os_rereserve(addr, len);
err_close_fd:
	close(fd);
	return err;
}

void pp_arena_uncommit_slot(struct pp_arena *arena, unsigned int k)
{
	struct pp_arena_segment *seg = &arena->seg[k];

	if (arena->lock_pages)
		pp_os_unlock(seg->addr, seg->len);
	pp_os_rereserve(seg->addr, seg->len);
	close(seg->fd);
	arena->nr_committed--;
	__atomic_store_n(&arena->committed_bytes,
			 arena->committed_bytes - seg->len, __ATOMIC_RELAXED);
	memset(seg, 0, sizeof(*seg));
	seg->fd = -1;
}

/* Round @size up to @page_size; 0 when it overflows. */
static size_t round_to_page(size_t size, size_t page_size)
{
	if (size > SIZE_MAX - (page_size - 1))
		return 0;
	return (size + page_size - 1) & ~(page_size - 1);
}

/*
 * An arena's slots with @page_size pages. A fixed arena is one slot of
 * its size; a growable one has slots of grow_step, rounded up to the page
 * size and to 2 MiB (a buddy block of the largest order must fit in a
 * slot: ARENA_MIN_ALIGN), so that a slot holds whole blocks and can leave
 * the allocator on its own.
 */
struct geometry {
	size_t step, min, span;
};

static struct geometry geometry(const struct pp_arena_opts *o,
				size_t page_size)
{
	size_t unit = page_size > ARENA_MIN_ALIGN ? page_size : ARENA_MIN_ALIGN;
	struct geometry g;

	if (!o->max_size) {
		g.step = round_to_page(o->size, page_size);
		g.min = g.span = g.step;
		return g;
	}
	g.step = round_to_page(o->grow_step ? o->grow_step :
					      PP_ARENA_GROW_STEP_DEFAULT,
			       unit);
	g.min = round_to_page(o->size, g.step);
	g.span = round_to_page(o->max_size, g.step);
	return g;
}

/*
 * Reserve the span and commit the minimum with @page_size pages. Returns
 * 0; -ENOSPC when hugepages ran short; any other -errno after a message.
 * Nothing is held on failure.
 */
static int build_at(struct pp_arena *arena, const struct pp_arena_opts *o,
		    size_t page_size)
{
	size_t align = page_size > ARENA_MIN_ALIGN ? page_size : ARENA_MIN_ALIGN;
	struct geometry g = geometry(o, page_size);
	int err = 0;

	arena->page_size = page_size;
	arena->lock_pages = page_size == PP_PAGE_SIZE_4K &&
			    !(o->flags & PP_ARENA_F_NO_LOCK);
	arena->slot_size = g.step;
	arena->nr_slots = (unsigned int)(g.span / g.step);
	arena->min_slots = (unsigned int)(g.min / g.step);
	arena->seg = pp_os_calloc(arena->nr_slots, sizeof(*arena->seg));
	if (!arena->seg) {
		PP_ERR("arena '%s': out of memory for %u slots",
		       arena->name, arena->nr_slots);
		return -ENOMEM;
	}
	arena->base = pp_os_reserve(g.span, align);
	if (!arena->base) {
		err = -errno;
		PP_ERR("arena '%s': cannot reserve %zu bytes of address space aligned to %zu: %s",
		       arena->name, g.span, align, strerror(-err));
		goto err_free;
	}
	arena->size = g.span;
	for (unsigned int k = 0; k < arena->min_slots && !err; k++) {
		err = pp_arena_commit_slot(arena, k);
		/* The first slot says where the pages are. */
		if (!err && k == 0)
			arena->node = arena->seg[0].node;
		else if (!err && arena->seg[k].node != arena->node)
			arena->node = PP_NUMA_NODE_ANY;
	}
	if (err)
		goto err_unmap;
	return 0;

err_unmap:
	unmap_all(arena);
	arena->size = 0;
err_free:
	free(arena->seg);
	arena->seg = NULL;
	return err;
}

/* try_hugepages(): too few pages of that size; its @why says why. */
#define ARENA_SHORT 1

/*
 * Try one hugepage size. Returns 0, ARENA_SHORT with @why filled when the
 * pages are short (checked before taking any), or -errno for any other
 * failure, which build_at() has reported: an mmap() or mbind() that
 * fails with ENOMEM is not a shortage, and the shortage message would
 * send the operator to reserve pages that are free already.
 */
static int try_hugepages(struct pp_arena *arena, const struct pp_arena_opts *o,
			 size_t page_size, struct shortage *why)
{
	long avail;
	int err;

	why->page_size = page_size;
	why->node = o->numa_node;
	why->need = (long)(geometry(o, page_size).min / page_size);
	why->unsupported = false;
	why->full_dir = NULL;
	if (!pp_os_hugepage_size_supported(page_size)) {
		why->unsupported = true;
		return ARENA_SHORT;
	}
	/*
	 * Check first so that a request that cannot be met takes nothing
	 * from a pool other processes share; fallocate() would take what is
	 * there before failing. The count can change under us, so the
	 * ENOSPC from fallocate() remains the real test.
	 */
	avail = pp_os_hugepages_available(page_size, o->numa_node);
	why->avail = avail;
	if (avail >= 0 && avail < why->need)
		return ARENA_SHORT;
	err = build_at(arena, o, page_size);
	if (err == -ENOSPC) {
		why->avail = pp_os_hugepages_available(page_size, o->numa_node);
		/*
		 * The pool had the pages but the mount's size= limit (or
		 * what other files hold) did not: say so, or the message
		 * would send the operator to the wrong file.
		 */
		if (o->hugetlbfs_dir && why->avail >= why->need)
			why->full_dir = o->hugetlbfs_dir;
		return ARENA_SHORT;
	}
	return err;
}

static int fall_back_4k(struct pp_arena *arena, const struct pp_arena_opts *o,
			const struct shortage *why)
{
	char msg[400];

	format_shortage(msg, sizeof(msg), why);
	PP_WARN("arena '%s': %s; using 4 KiB pages instead, as PP_ARENA_F_ALLOW_4K permits",
		arena->name, msg);
	return build_at(arena, o, PP_PAGE_SIZE_4K);
}

static int report_shortage(struct pp_arena *arena, const struct shortage *why)
{
	char msg[400];

	format_shortage(msg, sizeof(msg), why);
	PP_ERR("arena '%s': %s (or allow 4 KiB pages with PP_ARENA_F_ALLOW_4K)",
	       arena->name, msg);
	return -ENOMEM;
}

/*
 * AUTO: the largest size that fits in the arena and has the pages, then
 * the smallest hugepage size larger than the arena (a whole 1 GiB page
 * for a 4 MiB arena only if no 2 MiB page is free), then 4 KiB if allowed.
 */
static int build_auto(struct pp_arena *arena, const struct pp_arena_opts *o)
{
	static const size_t desc[] = { PP_PAGE_SIZE_1G, PP_PAGE_SIZE_2M };
	static const size_t asc[] = { PP_PAGE_SIZE_2M, PP_PAGE_SIZE_1G };
	struct shortage why = { 0 }, tried;
	bool have_why = false;
	int err;

	for (size_t i = 0; i < 2; i++) {
		if (desc[i] > o->size)
			continue;
		err = try_hugepages(arena, o, desc[i], &tried);
		if (err != ARENA_SHORT)
			return err;
		/* Report the smallest size tried: the likeliest to reserve. */
		why = tried;
		have_why = true;
	}
	for (size_t i = 0; i < 2; i++) {
		if (asc[i] <= o->size)
			continue;
		err = try_hugepages(arena, o, asc[i], &tried);
		if (err != ARENA_SHORT)
			return err;
		if (!have_why) {
			why = tried;
			have_why = true;
		}
	}
	if (o->flags & PP_ARENA_F_ALLOW_4K)
		return fall_back_4k(arena, o, &why);
	return report_shortage(arena, &why);
}

static int build(struct pp_arena *arena, const struct pp_arena_opts *o)
{
	struct shortage why;
	int err;

	if (o->page_size == PP_PAGE_SIZE_4K)
		return build_at(arena, o, PP_PAGE_SIZE_4K);
	if (o->page_size == PP_PAGE_SIZE_AUTO)
		return build_auto(arena, o);
	err = try_hugepages(arena, o, o->page_size, &why);
	if (err != ARENA_SHORT)
		return err;
	if (o->flags & PP_ARENA_F_ALLOW_4K)
		return fall_back_4k(arena, o, &why);
	return report_shortage(arena, &why);
}

/*
 * Copy the caller's options, whatever size they were built with, and check
 * them. A larger struct (a caller built against a newer pagepool) is
 * accepted when the fields this version does not know are zero.
 */
static int check_opts(const struct pp_arena_opts *uopts,
		      struct pp_arena_opts *o)
{
	unsigned int known = PP_ARENA_F_ALLOW_4K | PP_ARENA_F_NO_LOCK;
	const char *name;

	/* The first published struct ended before max_size. */
	if (pp_opts_copy(o, uopts, offsetof(struct pp_arena_opts, max_size),
			 sizeof(*o),
			 "struct pp_arena_opts"))
		return -EINVAL;
	name = o->name ? o->name : "pagepool";

	if (o->size == 0) {
		PP_ERR("arena '%s': size is 0: ask for at least one page",
		       name);
		return -EINVAL;
	}
	/* Room to round up to 1 GiB and to align the reservation. */
	if (o->size > SIZE_MAX / 2) {
		PP_ERR("arena '%s': size %zu is too large for the address space",
		       name, o->size);
		return -EINVAL;
	}
	if (o->max_size && o->max_size < o->size) {
		PP_ERR("arena '%s': max_size %zu is below size %zu: give a max_size of at least the size (or 0 for a fixed arena)",
		       name, o->max_size, o->size);
		return -EINVAL;
	}
	if (o->max_size > SIZE_MAX / 2 || o->grow_step > SIZE_MAX / 2) {
		PP_ERR("arena '%s': max_size %zu or grow_step %zu is too large for the address space",
		       name, o->max_size, o->grow_step);
		return -EINVAL;
	}
	if (o->grow_step && !o->max_size) {
		PP_ERR("arena '%s': grow_step %zu without max_size: give a max_size to make the arena growable, or leave grow_step 0",
		       name, o->grow_step);
		return -EINVAL;
	}
	if (o->page_size != PP_PAGE_SIZE_AUTO &&
	    o->page_size != PP_PAGE_SIZE_4K &&
	    o->page_size != PP_PAGE_SIZE_2M &&
	    o->page_size != PP_PAGE_SIZE_1G) {
		PP_ERR("arena '%s': page size %zu is not one of PP_PAGE_SIZE_AUTO, _4K, _2M, _1G",
		       name, o->page_size);
		return -EINVAL;
	}
	if (o->flags & ~known) {
		PP_ERR("arena '%s': unknown flags %#x", name,
		       o->flags & ~known);
		return -EINVAL;
	}
	if (o->numa_node < PP_NUMA_NODE_ANY) {
		PP_ERR("arena '%s': NUMA node %d is not a node: pass a node number or PP_NUMA_NODE_ANY",
		       name, o->numa_node);
		return -EINVAL;
	}
	if (o->numa_node >= 0) {
		int online = pp_os_node_state(o->numa_node);

		if (online < 0) {
			PP_ERR("arena '%s': cannot tell whether NUMA node %d is online: reading /sys/devices/system/node/online failed: %s",
			       name, o->numa_node, strerror(-online));
			return online;
		}
		if (!online) {
			PP_ERR("arena '%s': NUMA node %d is not online: pick one listed in /sys/devices/system/node/online",
			       name, o->numa_node);
			return -EINVAL;
		}
	}
	if (o->numa_node >= 0 && !pp_os_numa_available() &&
	    pp_os_node_count() > 1) {
		PP_ERR("arena '%s': cannot place memory on node %d: pagepool was built without libnuma (install libnuma-dev and rebuild) or the kernel lacks NUMA",
		       name, o->numa_node);
		return -EINVAL;
	}
	if (o->hugetlbfs_dir) {
		long fs_page = pp_os_hugetlbfs_page_size(o->hugetlbfs_dir);

		if (fs_page == -EINVAL) {
			PP_ERR("arena '%s': %s is not a hugetlbfs mount: mount one (mount -t hugetlbfs -o pagesize=2M,mode=0700 none DIR) or leave hugetlbfs_dir NULL for memfd",
			       name, o->hugetlbfs_dir);
			return -EINVAL;
		}
		if (fs_page < 0) {
			PP_ERR("arena '%s': cannot use hugetlbfs directory %s: %s",
			       name, o->hugetlbfs_dir, strerror((int)-fs_page));
			return (int)fs_page;
		}
		if (o->page_size == PP_PAGE_SIZE_4K) {
			PP_ERR("arena '%s': 4 KiB pages do not come from hugetlbfs (%s holds %ld kB pages): leave hugetlbfs_dir NULL or ask for %ld kB pages",
			       name, o->hugetlbfs_dir, fs_page >> 10,
			       fs_page >> 10);
			return -EINVAL;
		}
		if (o->page_size == PP_PAGE_SIZE_AUTO) {
			o->page_size = (size_t)fs_page;
		} else if (o->page_size != (size_t)fs_page) {
			PP_ERR("arena '%s': %s holds %ld kB pages but %zu kB pages were asked: use a mount with pagesize=%zuK or ask for its size",
			       name, o->hugetlbfs_dir, fs_page >> 10,
			       o->page_size >> 10, o->page_size >> 10);
			return -EINVAL;
		}
	}
	return 0;
}

struct pp_arena *pp_arena_create(const struct pp_arena_opts *uopts)
{
	struct pp_arena_opts o;
	struct pp_arena *arena;
	int err;

	err = check_opts(uopts, &o);
	if (err)
		goto err_out;
	arena = pp_os_calloc(1, sizeof(*arena));
	if (!arena) {
		err = -ENOMEM;
		PP_ERR("arena: out of memory for the arena's handle");
		goto err_out;
	}
	snprintf(arena->name, sizeof(arena->name), "%s",
		 o.name ? o.name : "pagepool");
	arena->node = PP_NUMA_NODE_ANY;
	arena->want_node = o.numa_node;
	arena->flags = o.flags;
	if (o.hugetlbfs_dir) {
		size_t len = strlen(o.hugetlbfs_dir) + 1;

		/* Kept: each growth step makes a file there. */
		arena->hugetlbfs_dir = pp_os_malloc(len);
		if (!arena->hugetlbfs_dir) {
			err = -ENOMEM;
			PP_ERR("arena '%s': out of memory for its directory's name",
			       arena->name);
			goto err_free;
		}
		memcpy(arena->hugetlbfs_dir, o.hugetlbfs_dir, len);
	}
	err = -pthread_mutex_init(&arena->lock, NULL);
	if (err)
		goto err_free;

	err = build(arena, &o);
	if (err)
		goto err_mutex;
	return arena;

err_mutex:
	pthread_mutex_destroy(&arena->lock);
err_free:
	free(arena->hugetlbfs_dir);
	free(arena);
err_out:
	errno = -err;
	return NULL;
}

int pp_arena_destroy(struct pp_arena *arena)
{
	int idle = 0;

	if (!arena)
		return 0;
	/*
	 * Acquire pairs with the release in pp_arena_put_user(): the last
	 * allocator's use of the arena is done before we unmap it. USERS_DEAD
	 * makes a pp_arena_get_user() that races us fail instead of count.
	 */
	if (!__atomic_compare_exchange_n(&arena->users, &idle, USERS_DEAD,
					 false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED)) {
		/* The failed exchange left the user count in @idle. */
		if (idle == USERS_DEAD)
			PP_ERR("arena '%s': destroy refused: another thread is destroying it (destroy an arena once)",
			       arena->name);
		else
			PP_ERR("arena '%s': destroy refused, %d allocator(s) still use it; nothing was destroyed: pp_allocator_destroy() them first, then destroy the arena",
			       arena->name, idle);
		return -EBUSY;
	}
	unmap_all(arena);
	pthread_mutex_destroy(&arena->lock);
	free(arena->seg);
	free(arena->hugetlbfs_dir);
	free(arena);
	return 0;
}

int pp_arena_get_user(struct pp_arena *arena)
{
	int users;

	if (!arena)
		return -EINVAL;
	users = __atomic_load_n(&arena->users, __ATOMIC_RELAXED);
	do {
		if (users < 0) {
			PP_ERR("arena '%s': used while being destroyed",
			       arena->name);
			return -ENODEV;
		}
	} while (!__atomic_compare_exchange_n(&arena->users, &users,
					      users + 1, true,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return 0;
}

void pp_arena_put_user(struct pp_arena *arena)
{
	/* Release pairs with the acquire in pp_arena_destroy(). */
	if (arena)
		__atomic_fetch_sub(&arena->users, 1, __ATOMIC_RELEASE);
}

void *pp_arena_base(const struct pp_arena *arena)
{
	return arena->base;
}

size_t pp_arena_size(const struct pp_arena *arena)
{
	return arena->size;
}

size_t pp_arena_page_size(const struct pp_arena *arena)
{
	return arena->page_size;
}

int pp_arena_node(const struct pp_arena *arena)
{
	return arena->node;
}

const char *pp_arena_name(const struct pp_arena *arena)
{
	return arena->name;
}

size_t pp_arena_committed(const struct pp_arena *arena)
{
	return __atomic_load_n(&arena->committed_bytes, __ATOMIC_RELAXED);
}

bool pp_arena_growable(const struct pp_arena *arena)
{
	return arena->nr_slots > arena->min_slots;
}

long pp_hugepages_free(size_t page_size, int node)
{
	if (!is_hugepage_size(page_size) || node < PP_NUMA_NODE_ANY)
		return -EINVAL;
	if (!pp_os_hugepage_size_supported(page_size))
		return -ENOENT;
	return pp_os_hugepages_free(page_size, node);
}
