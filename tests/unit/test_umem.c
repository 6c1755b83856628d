// SPDX-License-Identifier: GPL-2.0
#include <limits.h>
#include <pthread.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "base/cpu.h"
#include "base/log.h"
#include "base/numa.h"
#include "test.h"
#include "xsk/umem.h"
#include "xsk/xsk_queue.h"

/* The node of a cpu as sysfs says it, found independently of numa.c. */
static int sysfs_cpu_node(int cpu)
{
	char path[PATH_MAX];
	int node;

	for (node = 0; node < NUMA_MAX_NODES; node++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/node%d", cpu, node);
		if (!access(path, F_OK))
			return node;
	}
	return -1;
}

static bool cpu_usable(int cpu)
{
	cpu_set_t set;

	return !sched_getaffinity(0, sizeof(set), &set) && CPU_ISSET(cpu, &set);
}

static void test_parse_node_list(void)
{
	ASSERT_EQ(numa_parse_node_list("0"), 1, "one node");
	ASSERT_EQ(numa_parse_node_list("0-3"), 4, "range");
	ASSERT_EQ(numa_parse_node_list("0-3,6"), 7, "range and single");
	ASSERT_EQ(numa_parse_node_list("0,2,5-7"), 8, "holes");
	ASSERT_EQ(numa_parse_node_list("1023"), 1024, "largest node id");
	ASSERT_ERR(numa_parse_node_list("1024"), -ERANGE, "past the kernel's maximum");
	ASSERT_ERR(numa_parse_node_list(""), -EINVAL, "empty");
	ASSERT_ERR(numa_parse_node_list("a"), -EINVAL, "letters");
	ASSERT_ERR(numa_parse_node_list("3-1"), -EINVAL, "backwards range");
	ASSERT_ERR(numa_parse_node_list("0-"), -EINVAL, "open range");
	ASSERT_ERR(numa_parse_node_list("0;1"), -EINVAL, "bad separator");
}

static void test_topology(void)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	int nodes = numa_node_count(), cpu;

	ASSERT_GE(nodes, 1, "at least one node");
	for (cpu = 0; cpu < ncpus; cpu++) {
		int want = sysfs_cpu_node(cpu), got = numa_node_of_cpu(cpu);

		ASSERT_EQ(got, want < 0 ? 0 : want, "cpu's node as sysfs links it");
		ASSERT_LT(got, nodes, "node is online");
	}
	ASSERT_ERR(numa_node_of_cpu(1 << 20), -ENODEV, "no such cpu");
	ASSERT_ERR(numa_node_of_cpu(-1), -EINVAL, "negative cpu");
}

static void test_iface_node(void)
{
	ASSERT_EQ(numa_iface_node("lo"), -1, "loopback has no device node");
	ASSERT_ERR(numa_iface_node("xdpsg-nonexistent"), -ENODEV, "missing interface");
	ASSERT_ERR(numa_iface_node("../etc"), -EINVAL, "path in the name");
}

static void test_page_nodes_absent(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 16 * pg;
	__u64 counts[NUMA_MAX_NODES], absent = 0, total = 0;
	char *p;
	int i;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(p != MAP_FAILED, "mmap"))
		return;
	/* Never touched: the kernel has no page to report. */
	ASSERT_OK(numa_page_nodes(p, len, pg, counts, NUMA_MAX_NODES, &absent), "query");
	ASSERT_EQ(absent, 16, "untouched pages are absent");
	p[0] = 1;
	p[5 * pg] = 1;
	ASSERT_OK(numa_page_nodes(p, len, pg, counts, NUMA_MAX_NODES, &absent), "query again");
	for (i = 0; i < NUMA_MAX_NODES; i++)
		total += counts[i];
	ASSERT_EQ(total, 2, "two touched pages found");
	ASSERT_EQ(absent, 14, "the rest absent");
	munmap(p, len);
}

static bool check_umem_on_cpu(int cpu)
{
	struct umem_opts o = { .cpu = cpu, .nr_frames = 300, .frame_size = 4096 };
	struct umem_placement *pl = malloc(sizeof(*pl));
	int want = sysfs_cpu_node(cpu);
	struct umem *u = NULL;
	bool ok = false;
	char buf[128], expect[64];

	if (want < 0)
		want = 0;
	if (!ASSERT_TRUE(pl, "memory") || !ASSERT_OK(umem__create(&u, &o), "create"))
		goto out;
	ok = ASSERT_EQ(u->node, want, "bound to the cpu's node") &&
	     ASSERT_EQ(u->node, numa_node_of_cpu(cpu), "numa.c agrees") &&
	     ASSERT_EQ(u->cpu, cpu, "touched from that cpu") &&
	     ASSERT_EQ(u->size, 300 * 4096, "size") &&
	     ASSERT_EQ(u->pages_total, u->map_size / u->page_size, "every page queried") &&
	     ASSERT_EQ(u->pages_on_node, u->pages_total, "every page on the node") &&
	     ASSERT_EQ(u->placed_node, want, "placement proven") &&
	     ASSERT_OK(umem_placement(u, pl), "placement query") &&
	     ASSERT_EQ(pl->per_node[want], pl->pages, "query again: all on the node") &&
	     ASSERT_EQ(pl->absent, 0, "no page absent");
	/* This machine has one node: everything must be on node 0. */
	if (numa_node_count() == 1)
		ok = ok && ASSERT_EQ(pl->per_node[0], 300, "one-node machine: node 0");
	umem_placement_format(pl, buf, sizeof(buf));
	snprintf(expect, sizeof(expect), "node%d %llu", want, (unsigned long long)pl->pages);
	ok = ok && ASSERT_STREQ(buf, expect, "placement text");
out:
	free(pl);
	umem__destroy(u);
	return ok;
}

static void test_placement_cpu0(void)
{
	check_umem_on_cpu(0);
}

static void test_placement_cpu1(void)
{
	if (!cpu_usable(1)) {
		TEST_SKIP("cpu 1 not available");
		return;
	}
	check_umem_on_cpu(1);
}

static void test_caller_affinity_kept(void)
{
	cpu_set_t before, after;

	sched_getaffinity(0, sizeof(before), &before);
	check_umem_on_cpu(0);
	sched_getaffinity(0, sizeof(after), &after);
	ASSERT_TRUE(CPU_EQUAL(&before, &after), "the caller was not re-pinned");
}

static void *pinned_thread(void *arg)
{
	int *result = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		result[0] = -errno;
		return NULL;
	}
	result[0] = cpu_pinned_self();
	result[1] = check_umem_on_cpu(0);
	return NULL;
}

/* A caller already pinned to the cpu touches the pages itself. */
static void test_placement_pinned_caller(void)
{
	int result[2] = { -100, 0 };
	pthread_t t;

	if (!ASSERT_OK(-pthread_create(&t, NULL, pinned_thread, result), "thread"))
		return;
	pthread_join(t, NULL);
	ASSERT_EQ(result[0], 0, "thread sees itself pinned to cpu 0");
	ASSERT_TRUE(result[1], "placement from the pinned thread");
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		ASSERT_EQ(cpu_pinned_self(), -1, "main thread is not pinned");
}

static void test_current_cpu(void)
{
	struct umem_opts o = { .cpu = -1, .nr_frames = 16 };
	struct umem *u = NULL;

	if (!ASSERT_OK(umem__create(&u, &o), "create"))
		return;
	ASSERT_EQ(u->frame_size, UMEM_FRAME_SIZE_DEFAULT, "default frame size");
	ASSERT_EQ(u->node, numa_node_of_cpu(u->cpu), "node of the cpu it ran on");
	ASSERT_EQ(u->placed_node, u->node, "placed there");
	umem__destroy(u);
}

static void test_bad_options(void)
{
	struct umem_opts o = { .cpu = 0, .nr_frames = 16, .frame_size = 3000 };
	struct umem *u = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	log_set_stream(fp);
	ASSERT_ERR(umem__create(&u, &o), -EINVAL, "frame size 3000");
	o.frame_size = 2048;
	o.headroom = 2048 - 256;
	ASSERT_ERR(umem__create(&u, &o), -EINVAL, "headroom too large");
	o.headroom = 0;
	o.nr_frames = 0;
	ASSERT_ERR(umem__create(&u, &o), -EINVAL, "no frames");
	o.nr_frames = 16;
	o.cpu = 1 << 20;
	ASSERT_LT(umem__create(&u, &o), 0, "no such cpu");
	ASSERT_TRUE(u == NULL, "nothing returned");
	log_set_stream(NULL);
	fclose(fp);
	ASSERT_TRUE(buf && strstr(buf, "use 2048 or 4096"), "frame size message");
	ASSERT_TRUE(buf && strstr(buf, "at most 1791"), "headroom message");
	free(buf);
	o.cpu = 0;
	o.frame_size = 2048;
	o.headroom = 128;
	if (ASSERT_OK(umem__create(&u, &o), "2048-byte frames")) {
		ASSERT_EQ(u->size, 16 * 2048, "size");
		ASSERT_EQ(u->map_size, 16 * 2048, "page multiple");
		ASSERT_EQ(u->headroom, 128, "headroom kept");
	}
	umem__destroy(u);
}

/* Asking for huge pages: an error with advice when the node has none. */
static void test_huge_pages(void)
{
	struct umem_opts o = { .cpu = 0, .nr_frames = 1024, .huge_pages = true };
	int node = numa_node_of_cpu(0);
	long avail = umem_free_huge_pages(node);
	struct umem *u = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;
	int err;

	fp = open_memstream(&buf, &len);
	log_set_stream(fp);
	err = umem__create(&u, &o);
	log_set_stream(NULL);
	fclose(fp);
	if (avail >= 2) {
		/* Someone configured huge pages: the same path must then succeed. */
		if (ASSERT_OK(err, "huge pages available")) {
			ASSERT_EQ(u->page_size, UMEM_HUGE_PAGE_SIZE, "2 MiB pages");
			ASSERT_EQ(u->pages_total, 2, "4 MiB in two pages");
			ASSERT_EQ(u->placed_node, node, "on the cpu's node");
		}
	} else {
		ASSERT_ERR(err, -ENOMEM, "no huge pages");
		ASSERT_TRUE(u == NULL, "nothing returned");
		ASSERT_TRUE(buf && strstr(buf, "needs 2 free 2 MiB pages"), "says how many");
		ASSERT_TRUE(buf && strstr(buf, "nr_hugepages"), "says how to get them");
		if (buf && !strstr(buf, "nr_hugepages"))
			fprintf(stderr, "  message was: %s", buf);
	}
	free(buf);
	umem__destroy(u);
}

/*
 * A failed XDP_STATISTICS read gives the last good reading, not zeros: a
 * zeroed one made the next interval's drop counts run backwards (a delta of
 * nearly 2^64 that could start a CPU move). A UDP socket stands in for an
 * AF_XDP one whose read fails.
 */
static void test_stats_keep_last_good(void)
{
	struct xsk_queue q = { 0 };
	struct xdp_statistics st;
	int err;

	q.fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (!ASSERT_GE(q.fd, 0, "a socket"))
		return;
	q.last_stats.rx_dropped = 5;
	q.last_stats.rx_ring_full = 7;
	memset(&st, 0xff, sizeof(st));
	err = xsk_queue_stats(&q, &st);
	ASSERT_LT(err, 0, "the read fails");
	ASSERT_EQ(st.rx_dropped, 5, "the last good rx_dropped");
	ASSERT_EQ(st.rx_ring_full, 7, "the last good rx_ring_full");
	ASSERT_EQ(st.rx_invalid_descs, 0, "and the rest of it");
	ASSERT_EQ(q.stats_failures, 1, "the failure counted");
	close(q.fd);
}

static const struct test_case cases[] = {
	TEST_CASE(parse_node_list),	 TEST_CASE(topology),
	TEST_CASE(iface_node),		 TEST_CASE(page_nodes_absent),
	TEST_CASE(placement_cpu0),	 TEST_CASE(placement_cpu1),
	TEST_CASE(caller_affinity_kept), TEST_CASE(placement_pinned_caller),
	TEST_CASE(current_cpu),		 TEST_CASE(bad_options),
	TEST_CASE(huge_pages),		 TEST_CASE(stats_keep_last_good),
};

TEST_MAIN("umem", cases)
