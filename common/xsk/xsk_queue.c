// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "base/log.h"
#include "xsk/xsk_queue.h"

/* Up to a second for a queue just released by another process. */
#define XSK_QUEUE_BUSY_RETRIES 50
#define XSK_QUEUE_BUSY_RETRY_US 20000

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

void xsk_queue_opts_init(struct xsk_queue_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->cpu = -1;
	opts->frame_size = UMEM_FRAME_SIZE_DEFAULT;
	opts->rx_size = XSK_QUEUE_RING_DEFAULT;
	opts->tx_size = XSK_QUEUE_RING_DEFAULT;
	opts->rx = true;
	opts->tx = true;
	opts->mode = XSK_COPY_MODE_AUTO;
	opts->need_wakeup = true;
	opts->busy_poll_usecs = XSK_QUEUE_BUSY_POLL_USECS_DEFAULT;
	opts->batch = XSK_QUEUE_BATCH_DEFAULT;
}

const char *xsk_copy_mode_name(enum xsk_copy_mode mode)
{
	switch (mode) {
	case XSK_COPY_MODE_AUTO:
		return "auto";
	case XSK_COPY_MODE_COPY:
		return "copy";
	case XSK_COPY_MODE_ZEROCOPY:
		return "zero-copy";
	}
	return "?";
}

int xsk_copy_mode_parse(const char *s, enum xsk_copy_mode *mode)
{
	if (!s)
		return -EINVAL;
	if (!strcmp(s, "auto"))
		*mode = XSK_COPY_MODE_AUTO;
	else if (!strcmp(s, "copy"))
		*mode = XSK_COPY_MODE_COPY;
	else if (!strcmp(s, "zero-copy") || !strcmp(s, "zerocopy") || !strcmp(s, "zc"))
		*mode = XSK_COPY_MODE_ZEROCOPY;
	else
		return -EINVAL;
	return 0;
}

static bool pow2(__u32 v)
{
	return v && !(v & (v - 1));
}

/* Driver name for messages ("veth"), or "unknown". */
static void driver_name(const char *ifname, char *buf, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	int fd;

	snprintf(buf, len, "unknown");
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&info;
	if (!ioctl(fd, SIOCETHTOOL, &ifr) && info.driver[0])
		snprintf(buf, len, "%s", info.driver);
	close(fd);
}

/* Number of rx queues from sysfs, -1 if unknown. */
static int rx_queue_count(const char *ifname)
{
	char path[128];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, "rx-", 3);
	closedir(d);
	return n;
}

static int validate(const struct xsk_queue_opts *o)
{
	if (!o->ifname || !*o->ifname) {
		pr_warn("no interface given\n");
		return -EINVAL;
	}
	if (strlen(o->ifname) >= IF_NAMESIZE) {
		pr_warn("interface name '%s' is too long (at most %d characters)\n", o->ifname,
			IF_NAMESIZE - 1);
		return -EINVAL;
	}
	if (!o->rx && !o->tx) {
		pr_warn("an AF_XDP socket needs rx, tx or both enabled\n");
		return -EINVAL;
	}
	if ((o->rx && !pow2(o->rx_size)) || (o->tx && !pow2(o->tx_size)) ||
	    (o->fill_size && !pow2(o->fill_size)) || (o->comp_size && !pow2(o->comp_size))) {
		pr_warn("ring sizes must be powers of two (rx %u tx %u fill %u completion %u)\n",
			o->rx_size, o->tx_size, o->fill_size, o->comp_size);
		return -EINVAL;
	}
	if (!o->batch) {
		pr_warn("the batch size must be at least 1\n");
		return -EINVAL;
	}
	if (o->mode > XSK_COPY_MODE_ZEROCOPY)
		return -EINVAL;
	if (o->slot_frames > 1 && (!pow2(o->slot_frames) || !o->sg || o->rx)) {
		pr_warn("frames of %u UMEM frames need a power of two, sg and a socket that only sends\n",
			o->slot_frames);
		return -EINVAL;
	}
	return 0;
}

static int set_int_opt(int fd, int level, int name, int val, const char *what)
{
	if (setsockopt(fd, level, name, &val, sizeof(val))) {
		int err = -errno;

		pr_warn("cannot set %s to %d on the AF_XDP socket: %s\n", what, val,
			strerror(-err));
		return err;
	}
	return 0;
}

static int setup_busy_poll(struct xsk_queue *q, const struct xsk_queue_opts *o)
{
	int usecs = o->busy_poll_usecs ? (int)o->busy_poll_usecs :
					 XSK_QUEUE_BUSY_POLL_USECS_DEFAULT;
	int err;

	err = set_int_opt(q->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL");
	if (!err)
		err = set_int_opt(q->fd, SOL_SOCKET, SO_BUSY_POLL, usecs, "SO_BUSY_POLL");
	if (!err)
		err = set_int_opt(q->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, (int)q->batch,
				  "SO_BUSY_POLL_BUDGET");
	return err;
}

static void bind_failed(const struct xsk_queue *q, bool zc, int err)
{
	char drv[64];
	int nq;

	driver_name(q->ifname, drv, sizeof(drv));
	if (zc && (err == -EOPNOTSUPP || err == -EINVAL)) {
		pr_warn("%s (driver %s) cannot bind AF_XDP in zero-copy mode on queue %u: %s%s; "
			"use copy or auto mode\n",
			q->ifname, drv, q->queue_id, strerror(-err),
			!strcmp(drv, "veth") ? " (veth supports copy mode only)" : "");
		return;
	}
	nq = rx_queue_count(q->ifname);
	if (err == -EINVAL && nq >= 0 && q->queue_id >= (__u32)nq) {
		pr_warn("%s has no queue %u (it has %d rx queue%s): use a queue id below %d\n",
			q->ifname, q->queue_id, nq, nq == 1 ? "" : "s", nq);
		return;
	}
	if (err == -EBUSY) {
		pr_warn("%s queue %u already has an AF_XDP socket or UMEM bound: stop the other "
			"user first\n",
			q->ifname, q->queue_id);
		return;
	}
	pr_warn("cannot bind an AF_XDP socket to %s (driver %s) queue %u in %s mode: %s\n",
		q->ifname, drv, q->queue_id, zc ? "zero-copy" : "copy", strerror(-err));
}

static int bind_socket(struct xsk_queue *q, const struct xsk_queue_opts *o, __u32 fill_size,
		       __u32 comp_size)
{
	struct xsk_socket_config cfg = {
		.rx_size = o->rx ? o->rx_size : 0,
		.tx_size = o->tx ? o->tx_size : 0,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
	};
	bool try_zc = o->mode != XSK_COPY_MODE_COPY;
	int err, busy_tries = 0;

	for (;;) {
		cfg.bind_flags = (try_zc ? XDP_ZEROCOPY : XDP_COPY) |
				 (o->need_wakeup ? XDP_USE_NEED_WAKEUP : 0) |
				 (o->sg ? XDP_USE_SG : 0);
		err = umem_register(q->umem, fill_size, comp_size);
		if (err)
			return err;
		err = xsk_socket__create(&q->xsk, q->ifname, q->queue_id, q->umem->xsk,
					 o->rx ? &q->rx : NULL, o->tx ? &q->tx : NULL, &cfg);
		if (!err)
			return 0;
		q->xsk = NULL;
		/* The failed bind leaves rings on the UMEM's socket: start it afresh. */
		umem_unregister(q->umem);
		/*
		 * The kernel frees a closed socket's buffer pool from a work item, so
		 * the queue stays taken for a moment after the previous user exits.
		 */
		if (err == -EBUSY && busy_tries++ < XSK_QUEUE_BUSY_RETRIES) {
			pr_debug("%s queue %u busy, retrying\n", q->ifname, q->queue_id);
			usleep(XSK_QUEUE_BUSY_RETRY_US);
			continue;
		}
		if (try_zc && o->mode == XSK_COPY_MODE_AUTO &&
		    (err == -EOPNOTSUPP || err == -EINVAL)) {
			pr_debug("%s queue %u: zero-copy refused (%s), trying copy mode\n",
				 q->ifname, q->queue_id, strerror(-err));
			try_zc = false;
			continue;
		}
		bind_failed(q, try_zc, err);
		return err;
	}
}

int xsk_queue__create(struct xsk_queue **out, const struct xsk_queue_opts *opts)
{
	struct frame_alloc_opts fa_opts = { 0 };
	struct umem_opts u_opts = { 0 };
	struct xdp_options xo = { 0 };
	socklen_t optlen = sizeof(xo);
	struct xsk_queue *q = NULL;
	__u32 fill_size, comp_size, slot;
	int err;

	if (!out || !opts) {
		err = -EINVAL;
		goto out;
	}
	err = validate(opts);
	if (err)
		goto out;
	q = calloc(1, sizeof(*q));
	if (!q) {
		err = -ENOMEM;
		goto out;
	}
	q->fd = -1;
	snprintf(q->ifname, sizeof(q->ifname), "%s", opts->ifname);
	q->queue_id = opts->queue_id;
	q->batch = opts->batch;
	q->need_wakeup = opts->need_wakeup;
	q->busy_poll = opts->busy_poll;
	q->rx_size = opts->rx ? opts->rx_size : 0;
	q->tx_size = opts->tx ? opts->tx_size : 0;
	q->ifindex = (int)if_nametoindex(opts->ifname);
	if (!q->ifindex) {
		err = -ENODEV;
		pr_warn("interface '%s' not found (is it in this network namespace?)\n",
			opts->ifname);
		goto out;
	}
	q->nic_node = numa_iface_node(opts->ifname);

	fill_size = opts->fill_size ? opts->fill_size : 2 * opts->rx_size;
	comp_size = opts->comp_size ? opts->comp_size : opts->tx_size;
	u_opts.cpu = opts->cpu;
	u_opts.frame_size = opts->frame_size;
	u_opts.headroom = opts->headroom;
	u_opts.huge_pages = opts->huge_pages;
	u_opts.nr_frames = opts->nr_frames;
	if (!u_opts.nr_frames)
		u_opts.nr_frames = (opts->rx ? fill_size : 0) + (opts->tx ? opts->tx_size : 0);
	slot = opts->slot_frames ? opts->slot_frames : 1;
	u_opts.nr_frames *= slot;
	err = umem__create(&q->umem, &u_opts);
	if (err)
		goto out;
	fa_opts.nr_frames = q->umem->nr_frames / slot;
	fa_opts.frame_size = q->umem->frame_size * slot;
	fa_opts.debug = opts->debug_alloc;
	err = frame_alloc__create(&q->fa, &fa_opts);
	if (err)
		goto out;

	err = bind_socket(q, opts, fill_size, comp_size);
	if (err)
		goto out;
	q->fd = xsk_socket__fd(q->xsk);
	if (getsockopt(q->fd, SOL_XDP, XDP_OPTIONS, &xo, &optlen)) {
		err = -errno;
		pr_warn("getsockopt(XDP_OPTIONS) on the AF_XDP socket: %s\n", strerror(-err));
		goto out;
	}
	q->zerocopy = xo.flags & XDP_OPTIONS_ZEROCOPY;
	if (opts->busy_poll) {
		err = setup_busy_poll(q, opts);
		if (err)
			goto out;
	}
	/* The kernel can only receive into frames it was given. */
	if (opts->rx)
		while (xsk_queue_refill(q))
			;
	pr_debug("%s queue %u: AF_XDP %s mode, %u frames on node %d (NIC node %d), rings rx %u "
		 "tx %u fill %u completion %u\n",
		 q->ifname, q->queue_id, q->zerocopy ? "zero-copy" : "copy", q->umem->nr_frames,
		 q->umem->node, q->nic_node, q->rx_size, q->tx_size, fill_size, comp_size);
	*out = q;
	q = NULL;
out:
	xsk_queue__destroy(q);
	return err;
}

void xsk_queue__destroy(struct xsk_queue *q)
{
	if (!q)
		return;
	/* The socket first: the UMEM cannot go while a socket uses it. */
	if (q->xsk)
		xsk_socket__delete(q->xsk);
	umem__destroy(q->umem);
	frame_alloc__destroy(q->fa);
	free(q);
}

int xsk_queue_stats(struct xsk_queue *q, struct xdp_statistics *st)
{
	struct xdp_statistics now = { 0 };
	socklen_t len = sizeof(now);
	int err = 0;

	if (getsockopt(q->fd, SOL_XDP, XDP_STATISTICS, &now, &len)) {
		err = -errno;
		q->stats_failures++;
	} else {
		q->last_stats = now;
	}
	*st = q->last_stats;
	return err;
}

void xsk_queue_ring_levels(const struct xsk_queue *q, struct xsk_queue_ring_levels *lv)
{
	const struct umem *u = q->umem;

	memset(lv, 0, sizeof(*lv));
	if (u->xsk) {
		lv->fill = __atomic_load_n(u->fill.producer, __ATOMIC_ACQUIRE) -
			   __atomic_load_n(u->fill.consumer, __ATOMIC_ACQUIRE);
		lv->comp = __atomic_load_n(u->comp.producer, __ATOMIC_ACQUIRE) -
			   __atomic_load_n(u->comp.consumer, __ATOMIC_ACQUIRE);
	}
	if (q->rx_size && q->rx.producer)
		lv->rx = __atomic_load_n(q->rx.producer, __ATOMIC_ACQUIRE) -
			 __atomic_load_n(q->rx.consumer, __ATOMIC_ACQUIRE);
	if (q->tx_size && q->tx.producer)
		lv->tx = __atomic_load_n(q->tx.producer, __ATOMIC_ACQUIRE) -
			 __atomic_load_n(q->tx.consumer, __ATOMIC_ACQUIRE);
}

int xsk_queue_set_tx_budget(struct xsk_queue *q, __u32 budget)
{
	int err = 0;

	if (setsockopt(q->fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget))) {
		err = -errno;
		pr_debug("%s queue %u: XDP_MAX_TX_SKB_BUDGET %u not taken: %s%s\n", q->ifname,
			 q->queue_id, budget, strerror(-err),
			 err == -ENOPROTOOPT ? " (kernel older than 6.17)" : "");
	}
	return err;
}

static bool transient(int err)
{
	return err == EAGAIN || err == EBUSY || err == ENOBUFS || err == ENETDOWN || err == EINTR;
}

int xsk_queue_kick_tx(struct xsk_queue *q)
{
	if (!q->tx_size)
		return 0;
	if (q->need_wakeup && !q->busy_poll && !xsk_ring_prod__needs_wakeup(&q->tx))
		return 0;
	q->cnt.tx_kicks++;
	if (sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	/*
	 * EAGAIN: the kernel sent its budget of frames (32 by default in copy
	 * mode) and more are waiting: not backpressure, just call again.
	 * EBUSY/ENOBUFS: the device or the completion ring could not take more.
	 */
	if (errno == EAGAIN) {
		q->cnt.tx_kick_again++;
		return 0;
	}
	if (transient(errno)) {
		q->cnt.tx_kick_busy++;
		return 0;
	}
	return -errno;
}

bool xsk_queue_tx_round(struct xsk_queue *q, bool progress)
{
	struct pollfd p = { .fd = q->fd, .events = POLLOUT };

	if (progress || q->busy_poll) {
		q->tx_stuck = 0;
		return false;
	}
	if (++q->tx_stuck < XSK_QUEUE_STUCK_ROUNDS)
		return false;
	/* In copy mode poll() also sends what the tx ring holds (xsk_poll()). */
	q->cnt.tx_stall_waits++;
	(void)poll(&p, 1, XSK_QUEUE_STUCK_WAIT_MS);
	return true;
}

int xsk_queue_wakeup_rx(struct xsk_queue *q)
{
	/* With busy polling the syscall is what runs the driver's poll loop. */
	if (!q->busy_poll && (!q->need_wakeup || !xsk_ring_prod__needs_wakeup(&q->umem->fill)))
		return 0;
	q->cnt.rx_wakeups++;
	if (recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL) >= 0 || transient(errno))
		return 0;
	return -errno;
}

int xsk_queue_rx_recycle(struct xsk_queue *q, __u32 idx, __u32 n)
{
	__u64 addrs[64];
	__u32 i, j, m;
	int err = 0, e;

	for (i = 0; i < n; i += m) {
		m = n - i > 64 ? 64 : n - i;
		for (j = 0; j < m; j++)
			addrs[j] = frame_alloc_frame_of(
				q->fa, xsk_ring_cons__rx_desc(&q->rx, idx + i + j)->addr);
		e = frame_free_bulk(q->fa, m, addrs);
		if (e)
			err = e;
	}
	xsk_ring_cons__release(&q->rx, n);
	return err;
}

void xsk_queue_apply_cli(struct xsk_queue_opts *o, const struct xsk_cli *c)
{
	o->frame_size = (__u32)c->frame_size;
	o->mode = c->zero_copy ? XSK_COPY_MODE_ZEROCOPY :
		  c->copy      ? XSK_COPY_MODE_COPY :
				 XSK_COPY_MODE_AUTO;
	o->need_wakeup = !c->no_need_wakeup;
	o->busy_poll = c->busy_poll;
	o->huge_pages = c->huge_pages;
	o->debug_alloc = c->debug_alloc;
}

void xsk_queue_opts_cli(struct xsk_queue_opts *o, const char *ifname, __u32 queue, int cpu,
			const struct xsk_cli *c, __u32 batch, __u32 rx_ring, __u32 tx_ring)
{
	xsk_queue_opts_init(o);
	o->ifname = ifname;
	o->queue_id = queue;
	o->cpu = cpu;
	xsk_queue_apply_cli(o, c);
	o->batch = batch;
	o->rx = rx_ring > 0;
	o->tx = tx_ring > 0;
	/* The rings a socket does not use keep their defaults: the UMEM needs both. */
	if (rx_ring) {
		o->rx_size = rx_ring;
		o->fill_size = rx_ring / 2 >= batch ? rx_ring / 2 : rx_ring;
	}
	if (tx_ring) {
		o->tx_size = tx_ring;
		o->comp_size = tx_ring;
	}
	if (!rx_ring)
		o->nr_frames = 2 * tx_ring;
}

int xsk_queue_check_cli(const char *driver, const struct xsk_cli *c, __u64 ring_size)
{
	bool copy = c->copy, zero_copy = c->zero_copy;
	__u64 frame_size = c->frame_size;

	if (copy && zero_copy) {
		pr_warn("--copy and --zero-copy exclude each other; pick one\n");
		return -EINVAL;
	}
	if (zero_copy && !strcmp(driver, "veth")) {
		pr_warn("veth supports AF_XDP copy mode only; drop --zero-copy\n");
		return -EINVAL;
	}
	if (frame_size != 2048 && frame_size != UMEM_FRAME_SIZE_MAX) {
		pr_warn("--frame-size %llu is not supported; use 2048 or 4096\n",
			(unsigned long long)frame_size);
		return -EINVAL;
	}
	if (!ring_size || (ring_size & (ring_size - 1))) {
		pr_warn("--ring-size %llu is not a power of two; use e.g. 2048\n",
			(unsigned long long)ring_size);
		return -EINVAL;
	}
	return 0;
}
