// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "base/log.h"
#include "base/numa.h"

/* From <numaif.h>, which belongs to libnuma and is not used here. */
#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif

#define NUMA_SYSFS_NODE "/sys/devices/system/node"
#define NUMA_SYSFS_CPU "/sys/devices/system/cpu"
/* Pages asked about per move_pages call. */
#define NUMA_QUERY_BATCH 512

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f;
	int err = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		err = ferror(f) ? -EIO : -ENODATA;
		goto out;
	}
	buf[strcspn(buf, "\n")] = '\0';
out:
	fclose(f);
	return err;
}

int numa_parse_node_list(const char *s)
{
	long highest = -1;
	const char *p = s;

	if (!s)
		return -EINVAL;
	while (*p) {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = strtol(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			b = strtol(p, &end, 10);
			p = end;
			if (b < a)
				return -EINVAL;
		}
		if (b >= NUMA_MAX_NODES)
			return -ERANGE;
		if (b > highest)
			highest = b;
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return highest < 0 ? -EINVAL : (int)highest + 1;
}

int numa_node_count(void)
{
	char buf[4096];
	int err;

	err = read_line(NUMA_SYSFS_NODE "/online", buf, sizeof(buf));
	/* A kernel built without NUMA has no node directory: one node. */
	if (err == -ENOENT)
		return 1;
	if (err)
		return err;
	return numa_parse_node_list(buf);
}

int numa_node_of_cpu(int cpu)
{
	char path[PATH_MAX];
	struct dirent *de;
	int node = -ENOENT;
	DIR *d;

	if (cpu < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), NUMA_SYSFS_CPU "/cpu%d", cpu);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ENODEV : -errno;
	while ((de = readdir(d))) {
		char *end;
		long n;

		if (strncmp(de->d_name, "node", 4) || !isdigit((unsigned char)de->d_name[4]))
			continue;
		n = strtol(de->d_name + 4, &end, 10);
		if (*end || n >= NUMA_MAX_NODES)
			continue;
		node = (int)n;
		break;
	}
	closedir(d);
	/* cpu exists but has no node link: a kernel without NUMA support. */
	if (node == -ENOENT)
		node = 0;
	return node;
}

int numa_iface_node(const char *ifname)
{
	char path[PATH_MAX], buf[64];
	char *end;
	long node;
	int err;

	if (!ifname || !*ifname || strchr(ifname, '/'))
		return -EINVAL;
	snprintf(path, sizeof(path), "/sys/class/net/%s", ifname);
	if (access(path, F_OK))
		return -ENODEV;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", ifname);
	err = read_line(path, buf, sizeof(buf));
	if (err)
		return -1; /* virtual device (veth): no node */
	node = strtol(buf, &end, 10);
	if (end == buf || node < 0 || node >= NUMA_MAX_NODES)
		return -1;
	return (int)node;
}

int numa_bind(void *addr, size_t len, int node)
{
	unsigned long mask[NUMA_MAX_NODES / (8 * sizeof(unsigned long))] = { 0 };
	const unsigned long bits = 8 * sizeof(unsigned long);

	if (node < 0 || node >= NUMA_MAX_NODES)
		return -EINVAL;
	mask[node / bits] = 1UL << (node % bits);
	/* maxnode counts bits; the kernel ignores the last one (historic off-by-one). */
	if (syscall(SYS_mbind, addr, len, MPOL_BIND, mask, (unsigned long)NUMA_MAX_NODES + 1, 0))
		return -errno;
	return 0;
}

int numa_page_nodes(void *addr, size_t len, size_t page_size, __u64 *counts, int max_nodes,
		    __u64 *absent)
{
	void *pages[NUMA_QUERY_BATCH];
	int status[NUMA_QUERY_BATCH];
	size_t npages, done = 0;
	__u64 nabsent = 0;
	int i;

	if (!addr || !page_size || !counts || max_nodes <= 0)
		return -EINVAL;
	memset(counts, 0, sizeof(*counts) * (size_t)max_nodes);
	npages = (len + page_size - 1) / page_size;
	while (done < npages) {
		size_t n = npages - done;

		if (n > NUMA_QUERY_BATCH)
			n = NUMA_QUERY_BATCH;
		for (i = 0; i < (int)n; i++)
			pages[i] = (char *)addr + (done + (size_t)i) * page_size;
		/* nodes == NULL: move nothing, report where each page is. */
		if (syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, status, 0))
			return -errno;
		for (i = 0; i < (int)n; i++) {
			if (status[i] >= 0 && status[i] < max_nodes)
				counts[status[i]]++;
			else
				nabsent++;
		}
		done += n;
	}
	if (absent)
		*absent = nabsent;
	return 0;
}
