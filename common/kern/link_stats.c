// SPDX-License-Identifier: GPL-2.0
/* A device's link counters (iface_link_stats(), kern/iface.h), from sysfs. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>

#include "kern/iface.h"

/*
 * The statistics files of the device read last, kept open and read again
 * with pread() from offset 0, where sysfs makes a fresh value: 8 system calls
 * a reading instead of 32 (open, stat, read and close each). The sink reads
 * them every 10 ms, idle or not. A device that vanished fails the read, and
 * the files are opened again on the next call. One set for the process (a
 * thread that ends leaves nothing open), under a lock no frame waits on.
 */
#define LINK_STATS_N 8
static pthread_mutex_t link_fds_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char name[IF_NAMESIZE];
	int fd[LINK_STATS_N];
	bool open;
} link_fds;

static void link_fds_close(void)
{
	unsigned int i;

	for (i = 0; link_fds.open && i < LINK_STATS_N; i++)
		close(link_fds.fd[i]);
	link_fds.open = false;
}

static int link_fds_open(const char *name, const char *const *attr)
{
	char path[256];
	unsigned int i;
	int err;

	link_fds_close();
	if (strlen(name) >= sizeof(link_fds.name))
		return -ENODEV;
	for (i = 0; i < LINK_STATS_N; i++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/%s", name, attr[i]);
		link_fds.fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (link_fds.fd[i] < 0) {
			err = -errno;
			while (i--)
				close(link_fds.fd[i]);
			return err;
		}
	}
	snprintf(link_fds.name, sizeof(link_fds.name), "%s", name);
	link_fds.open = true;
	return 0;
}

static int link_stats_read(const char *name, struct link_stats *s)
{
	static const char *const attr[LINK_STATS_N] = {
		"statistics/rx_packets", "statistics/rx_bytes",	  "statistics/rx_dropped",
		"statistics/rx_errors",	 "statistics/tx_packets", "statistics/tx_bytes",
		"statistics/tx_dropped", "statistics/tx_errors",
	};
	__u64 *out[LINK_STATS_N] = { &s->rx_packets, &s->rx_bytes, &s->rx_dropped, &s->rx_errors,
				     &s->tx_packets, &s->tx_bytes, &s->tx_dropped, &s->tx_errors };
	__u64 v[LINK_STATS_N];
	char buf[32];
	unsigned int i;
	ssize_t n;
	int err;

	if (!link_fds.open || strcmp(link_fds.name, name)) {
		err = link_fds_open(name, attr);
		if (err)
			return err;
	}
	/* All or nothing: a device that vanished leaves the last reading. */
	for (i = 0; i < LINK_STATS_N; i++) {
		n = pread(link_fds.fd[i], buf, sizeof(buf) - 1, 0);
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			link_fds_close();
			return err;
		}
		buf[n] = '\0';
		v[i] = strtoull(buf, NULL, 0);
	}
	for (i = 0; i < LINK_STATS_N; i++)
		*out[i] = v[i];
	return 0;
}

int iface_link_stats(const char *name, struct link_stats *s)
{
	int err;

	pthread_mutex_lock(&link_fds_lock);
	err = link_stats_read(name, s);
	pthread_mutex_unlock(&link_fds_lock);
	return err;
}
