// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "base/cpu.h"
#include "base/log.h"
#include "xsk/umem.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
/* XDP_PACKET_HEADROOM: the kernel keeps this much in front of the user headroom. */
#define UMEM_XDP_HEADROOM 256

static long read_long(const char *path)
{
	long v = -ENOENT;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%ld", &v) != 1)
		v = -EINVAL;
	fclose(f);
	return v;
}

static long huge_pages_value(int node, const char *what)
{
	char path[160];
	long v;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/%s", node, what);
	v = read_long(path);
	if (v == -ENOENT) {
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-2048kB/%s", what);
		v = read_long(path);
	}
	return v;
}

long umem_free_huge_pages(int node)
{
	return huge_pages_value(node, "free_hugepages");
}

static bool has_cap(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1U << (cap % 32));
}

static int check_huge_pages(int node, size_t map_size)
{
	long free_pages = umem_free_huge_pages(node), nr;
	long need = (long)(map_size / UMEM_HUGE_PAGE_SIZE);

	if (free_pages >= need)
		return 0;
	if (free_pages < 0) {
		pr_warn("huge pages requested but the kernel reports no 2 MiB huge pages (%s); "
			"run without huge pages\n",
			strerror((int)-free_pages));
		return -ENOMEM;
	}
	nr = huge_pages_value(node, "nr_hugepages");
	if (nr < 0)
		nr = 0;
	pr_warn("huge pages requested: the UMEM needs %ld free 2 MiB pages on node %d, it has %ld; "
		"get them with 'echo %ld > /sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages' "
		"(or 'sysctl -w vm.nr_hugepages=%ld' on a one-node machine), or run without huge pages\n",
		need, node, free_pages, nr + need - free_pages, node, nr + need - free_pages);
	return -ENOMEM;
}

static int touch_pages(void *arg)
{
	struct umem *u = arg;
	size_t off;

	/* One call that returns an error instead of SIGBUS if a huge page is missing. */
	if (!madvise(u->area, u->map_size, MADV_POPULATE_WRITE))
		return 0;
	if (errno != EINVAL)
		return -errno;
	/* Kernels before 5.14: write each page. */
	for (off = 0; off < u->map_size; off += u->page_size)
		((volatile char *)u->area)[off] = 0;
	return 0;
}

static int pick_cpu_node(const struct umem_opts *opts, int *cpu, int *node)
{
	*cpu = opts->cpu;
	if (*cpu < 0) {
		*cpu = sched_getcpu();
		if (*cpu < 0)
			return -errno;
	}
	*node = numa_node_of_cpu(*cpu);
	if (*node < 0) {
		pr_warn("cpu %d: cannot find its NUMA node: %s (is the cpu number right?)\n", *cpu,
			strerror(-*node));
		return *node;
	}
	return 0;
}

int umem__create(struct umem **out, const struct umem_opts *opts)
{
	struct umem_placement *pl = NULL;
	struct umem *u = NULL;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	__u32 frame_size;
	int err;

	if (!out || !opts || !opts->nr_frames) {
		err = -EINVAL;
		goto out;
	}
	frame_size = opts->frame_size ? opts->frame_size : UMEM_FRAME_SIZE_DEFAULT;
	if (frame_size != 2048 && frame_size != 4096) {
		pr_warn("frame size %u is not supported: use 2048 or 4096\n", frame_size);
		err = -EINVAL;
		goto out;
	}
	if (opts->headroom >= frame_size - UMEM_XDP_HEADROOM) {
		pr_warn("headroom %u is too large for %u-byte frames: at most %u\n", opts->headroom,
			frame_size, frame_size - UMEM_XDP_HEADROOM - 1);
		err = -EINVAL;
		goto out;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		err = -ENOMEM;
		goto out;
	}
	u->area = MAP_FAILED;
	u->nr_frames = opts->nr_frames;
	u->frame_size = frame_size;
	u->headroom = opts->headroom;
	u->size = (size_t)opts->nr_frames * frame_size;
	u->huge_pages = opts->huge_pages;
	u->page_size = opts->huge_pages ? UMEM_HUGE_PAGE_SIZE : (size_t)sysconf(_SC_PAGESIZE);
	u->map_size = (u->size + u->page_size - 1) / u->page_size * u->page_size;
	err = pick_cpu_node(opts, &u->cpu, &u->node);
	if (err)
		goto out;

	if (u->huge_pages) {
		err = check_huge_pages(u->node, u->map_size);
		if (err)
			goto out;
		flags |= MAP_HUGETLB | MAP_HUGE_2MB;
	}
	u->area = mmap(NULL, u->map_size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (u->area == MAP_FAILED) {
		err = -errno;
		pr_warn("cannot map a UMEM of %zu bytes%s: %s\n", u->map_size,
			u->huge_pages ? " in 2 MiB huge pages" : "", strerror(-err));
		goto out;
	}
	/* Bind before the first touch so that every page is allocated on the node. */
	err = numa_bind(u->area, u->map_size, u->node);
	if (err == -ENOSYS) {
		pr_debug("mbind: kernel without NUMA support, placement left to the kernel\n");
	} else if (err) {
		pr_warn("cannot bind the UMEM to node %d: %s\n", u->node, strerror(-err));
		goto out;
	}
	if (opts->cpu < 0)
		err = touch_pages(u);
	else
		err = cpu_run_on(u->cpu, touch_pages, u);
	if (err) {
		pr_warn("cannot populate the UMEM (%zu bytes) on node %d from cpu %d: %s%s\n",
			u->map_size, u->node, u->cpu, strerror(-err),
			u->huge_pages ? " (not enough free huge pages on that node?)" : "");
		goto out;
	}

	pl = malloc(sizeof(*pl));
	if (!pl) {
		err = -ENOMEM;
		goto out;
	}
	err = umem_placement(u, pl);
	u->pages_total = pl->pages;
	u->pages_on_node = pl->per_node[u->node];
	u->placed_node = err ? -1 : u->node;
	if (err == -EXDEV) {
		char buf[256];

		umem_placement_format(pl, buf, sizeof(buf));
		pr_warn("UMEM for cpu %d should be on node %d but its pages are on: %s\n", u->cpu,
			u->node, buf);
	} else if (err) {
		pr_debug("cannot ask where the UMEM's pages are: %s\n", strerror(-err));
	}
	err = 0;
	pr_debug("UMEM: %u frames of %u bytes (%zu bytes, %s pages) on node %d for cpu %d\n",
		 u->nr_frames, u->frame_size, u->size, u->huge_pages ? "2 MiB" : "4 KiB", u->node,
		 u->cpu);
	*out = u;
	u = NULL;
out:
	free(pl);
	umem__destroy(u);
	return err;
}

void umem__destroy(struct umem *u)
{
	if (!u)
		return;
	umem_unregister(u);
	if (u->area && u->area != MAP_FAILED)
		munmap(u->area, u->map_size);
	free(u);
}

int umem_placement(const struct umem *u, struct umem_placement *pl)
{
	int err, nodes, i;

	memset(pl, 0, sizeof(*pl));
	pl->node = u->node;
	nodes = numa_node_count();
	pl->nr_nodes = nodes > 0 ? nodes : 1;
	pl->pages = u->map_size / u->page_size;
	err = numa_page_nodes(u->area, u->map_size, u->page_size, pl->per_node, NUMA_MAX_NODES,
			      &pl->absent);
	if (err)
		return err;
	/* A node past the online list would be a surprise; show it anyway. */
	for (i = NUMA_MAX_NODES - 1; i >= pl->nr_nodes; i--) {
		if (pl->per_node[i]) {
			pl->nr_nodes = i + 1;
			break;
		}
	}
	return pl->per_node[u->node] == pl->pages ? 0 : -EXDEV;
}

void umem_placement_format(const struct umem_placement *pl, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < pl->nr_nodes && used < len; i++) {
		if (!pl->per_node[i])
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%snode%d %" PRIu64,
					 used ? " " : "", i, (uint64_t)pl->per_node[i]);
	}
	if (used < len && (pl->absent || !used))
		snprintf(buf + used, len - used, "%sabsent %" PRIu64, used ? " " : "",
			 (uint64_t)pl->absent);
}

/*
 * Registration pins the area and charges RLIMIT_MEMLOCK unless we hold
 * CAP_IPC_LOCK. Root without CAP_SYS_RESOURCE cannot go past the hard limit:
 * say so and carry on, registration itself will tell whether it mattered.
 */
static void raise_memlock(size_t need)
{
	struct rlimit rl, unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	bool ipc_lock = has_cap(CAP_IPC_LOCK);
	int err;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	if (!setrlimit(RLIMIT_MEMLOCK, &unlimited))
		return;
	err = errno;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
	log_printf(ipc_lock ? LOG_LEVEL_DEBUG : LOG_LEVEL_WARN,
		   "cannot raise RLIMIT_MEMLOCK to unlimited (%s): it stays at %llu bytes, below "
		   "the UMEM's %zu%s\n",
		   strerror(err), (unsigned long long)rl.rlim_cur, need,
		   ipc_lock ? "; CAP_IPC_LOCK is held, so registration is not charged" :
			      "; registration may fail");
}

int umem_register(struct umem *u, __u32 fill_size, __u32 comp_size)
{
	struct xsk_umem_config cfg = {
		.fill_size = fill_size,
		.comp_size = comp_size,
		.frame_size = u->frame_size,
		.frame_headroom = u->headroom,
		.flags = 0,
	};
	struct rlimit rl = { 0, 0 };
	int err;

	if (u->xsk)
		return -EBUSY;
	raise_memlock(u->size);
	err = xsk_umem__create(&u->xsk, u->area, u->size, &u->fill, &u->comp, &cfg);
	if (err) {
		u->xsk = NULL;
		if (err == -EPERM || err == -ENOMEM || err == -ENOBUFS) {
			getrlimit(RLIMIT_MEMLOCK, &rl);
			pr_warn("cannot register a UMEM of %zu bytes (%u frames of %u): %s; "
				"RLIMIT_MEMLOCK is %llu bytes (hard %llu), CAP_IPC_LOCK %s, "
				"CAP_NET_RAW %s: use fewer frames or raise the limit (ulimit -l)\n",
				u->size, u->nr_frames, u->frame_size, strerror(-err),
				(unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
				has_cap(CAP_IPC_LOCK) ? "held" : "not held",
				has_cap(CAP_NET_RAW) ? "held" : "not held");
		} else {
			pr_warn("cannot register a UMEM of %zu bytes (%u frames of %u, fill %u, "
				"completion %u): %s\n",
				u->size, u->nr_frames, u->frame_size, fill_size, comp_size,
				strerror(-err));
		}
		return err;
	}
	u->fill_size = fill_size;
	u->comp_size = comp_size;
	return 0;
}

void umem_unregister(struct umem *u)
{
	if (!u || !u->xsk)
		return;
	xsk_umem__delete(u->xsk);
	u->xsk = NULL;
	memset(&u->fill, 0, sizeof(u->fill));
	memset(&u->comp, 0, sizeof(u->comp));
}
