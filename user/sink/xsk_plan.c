// SPDX-License-Identifier: GPL-2.0
/*
 * xsk: the mode's plan, before the kernel is touched: its options checked
 * together, the UMEM frame size chosen, and a queue and a CPU for each thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "base/cpu.h"
#include "base/log.h"
#include "base/numa.h"
#include "base/outfile.h"
#include "kern/xdp_attach.h"
#include "measure/clockid.h"
#include "xdp_sink.skel.h"
#include "xsk.h"

/* One queue and CPU per thread, checked before anything is created. */
static int plan_queues(struct sink *sk, struct xsk_state *xs)
{
	const struct sink_cfg *cfg = sk->cfg;
	unsigned int i, ncpu = (unsigned int)cpu_online_count();
	unsigned int nrx = sk->ifc.rx_queues ? sk->ifc.rx_queues : 1;

	for (i = 0; i < xs->nxq; i++) {
		struct xq *x = &xs->xq[i];

		x->sk = sk;
		x->queue = cfg->queues.all ? i : cfg->queues.ids[i];
		if (x->queue >= nrx) {
			pr_warn("%s has no queue %u (it has %u); pick from 0-%u\n", sk->ifc.name,
				x->queue, nrx, nrx - 1);
			return -EINVAL;
		}
		/*
		 * Default: the highest CPUs, away from a generator on the same
		 * machine (xdp-gen starts at CPU 0, and on veth the receive work
		 * runs in the sender's softirq on the sender's CPU).
		 */
		x->cpu = (cfg->cpus.n && !cfg->cpus.all) ? (int)cfg->cpus.ids[i] :
							   (int)(ncpu - 1 - i % ncpu);
		if (x->cpu >= (int)ncpu) {
			pr_warn("CPU %d is not online (CPUs 0-%u); fix --cpus\n", x->cpu, ncpu - 1);
			return -EINVAL;
		}
		x->umem_node = numa_node_of_cpu(x->cpu);
		x->rx_cpu = -1;
		if (cfg->follow_rx)
			x->follow = XQ_FOLLOW_ALWAYS;
		else if (cfg->no_follow_rx || (cfg->cpus.n && !cfg->cpus.all))
			x->follow = XQ_FOLLOW_OFF;
		else
			x->follow = XQ_FOLLOW_AUTO;
	}
	return 0;
}

/*
 * The UMEM frame size when --frame-size is not given: 2048 bytes whenever the
 * interface's largest frame fits (the MTU plus an Ethernet header and one
 * VLAN tag, after the kernel's 256 bytes of XDP headroom), else 4096. Half as
 * many pages for the same frames: the kernel's copy into a frame of a 4096-
 * frame UMEM then misses the TLB about half as often (in the lab here the
 * --follow-rx sink went from 0.77 to 0.89 of xdpsock -r).
 */
#define XQ_SMALL_FRAME 2048
#define XQ_FRAME_ROOM (XQ_SMALL_FRAME - 256 - 14 - 4)

static __u32 xsk_frame_size(const struct sink *sk)
{
	if (sk->cfg->xsk.frame_size)
		return (__u32)sk->cfg->xsk.frame_size;
	return sk->ifc.mtu && sk->ifc.mtu <= XQ_FRAME_ROOM ? XQ_SMALL_FRAME : 4096;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n > m && !strcmp(s + n - m, end);
}

/* --hist writes CSV or JSON, as its name ends: no other name, so no format is guessed. */
static bool hist_name_ok(const char *path)
{
	return ends_with(path, ".csv") || ends_with(path, ".json");
}

int xsk_plan(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	unsigned int i, n, nrx = sk->ifc.rx_queues ? sk->ifc.rx_queues : 1;
	struct clock_info ci;
	int err;
	struct xsk_cli cli = cfg->xsk;
	struct xsk_state *xs;

	cli.frame_size = xsk_frame_size(sk);
	if (xsk_queue_check_cli(sk->ifc.driver, &cli, cfg->ring_size))
		return -EINVAL;
	if (cfg->follow_rx && cfg->no_follow_rx) {
		pr_warn("--follow-rx and --no-follow-rx contradict each other; drop one of them\n");
		return -EINVAL;
	}
	if (cfg->read_data && !cfg->no_verify) {
		pr_warn("--read-data is for --no-verify: a verifying sink reads each stamp already; add --no-verify or drop --read-data\n");
		return -EINVAL;
	}
	if (cfg->read_frames && cfg->no_verify) {
		pr_warn("--read-frames chooses how stamps are verified, and --no-verify reads none; drop one of them\n");
		return -EINVAL;
	}
	if (cfg->no_verify && cfg->hist) {
		pr_warn("--hist needs the stamps that --no-verify skips; drop one of them\n");
		return -EINVAL;
	}
	/* Only checked here: the file is written when the run has ended. */
	if (cfg->hist && !hist_name_ok(cfg->hist)) {
		pr_warn("--hist %s: the name says the format; end it in .csv or .json\n",
			cfg->hist);
		return -EINVAL;
	}
	if (cfg->hist && outfile_check("--hist", cfg->hist))
		return -EINVAL;
	if (capture_check(cfg))
		return -EINVAL;
	n = cfg->queues.all ? nrx : cfg->queues.n;
	if (n > XDPSG_MAX_QUEUES)
		n = XDPSG_MAX_QUEUES;
	if (!cfg->cpus.all && cfg->cpus.n && cfg->cpus.n != n) {
		pr_warn("--cpus names %u CPUs for %u queues; give one CPU per queue\n", cfg->cpus.n,
			n);
		return -EINVAL;
	}
	xs = calloc(1, sizeof(*xs));
	if (!xs)
		return -ENOMEM;
	sk->ms = xs;
	xs->xq = calloc(n, sizeof(*xs->xq));
	if (!xs->xq)
		return -ENOMEM;
	xs->nxq = n;
	xs->frame_size = cli.frame_size;
	/*
	 * The longest frame a capture keeps: one UMEM frame, or, where frames may
	 * take several buffers (struct sink.frags), the MTU's (an Ethernet header
	 * and a VLAN tag on it).
	 */
	xs->max_frame = sk->ifc.mtu > SINK_MTU_ONE_BUF && sk->ifc.mtu + 18 > cli.frame_size ?
				sk->ifc.mtu + 18 :
				cli.frame_size;
	err = clock_info_read(XDPSG_CLOCK_MONOTONIC, &ci);
	if (err)
		return err;
	xs->clock_id = ci.id;
	xs->rx_off = ci.bpf_offset_ns;
	err = clock_set_read(&xs->clocks);
	if (err)
		return err;
	err = plan_queues(sk, xs);
	for (i = 0; !err && i < xs->nxq; i++) {
		xs->xq[i].rx_off = xs->rx_off;
		xs->xq[i].hw_off = xs->clocks.shift_ns[XDPSG_CLOCK_TAI];
	}
	return err;
}

/*
 * Records (shared.h) wherever the thread would read nothing of a frame but its
 * stamp: verifying, single-buffer frames, no capture and no --cost, native
 * XDP (one program run per queue at a time, so tickets are in order), and not
 * --read-frames. A ring holds 8 times the rx ring, and at least XSK_REC_MIN
 * records (32 bytes each), so that the tickets of frames the socket drops
 * while the thread is behind seldom take the room of frames still to come.
 */
#define XSK_REC_MIN 16384U

void xsk_configure(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;
	struct xsk_state *xs = sk->ms;
	__u32 n = 1, top = 0, i;

	xs->records = !cfg->no_verify && !cfg->read_frames && !cfg->capture && !cfg->cost &&
		      !sk->frags && cfg->xdp_mode == XDPSG_MODE_NATIVE;
	if (!xs->records)
		return;
	while ((n < 8 * cfg->ring_size || n < XSK_REC_MIN) && n < XDPSG_XSK_REC_MAX)
		n <<= 1;
	for (i = 0; i < xs->nxq; i++)
		if (xs->xq[i].queue + 1 > top)
			top = xs->xq[i].queue + 1;
	xs->rec_n = n;
	sk->skel->rodata->xsk_records = true;
	sk->skel->rodata->xsk_rec_mask = n - 1;
	bpf_map__set_max_entries(sk->skel->maps.xsk_recs, n * top);
}

static void *map_mmap(struct bpf_map *m, int prot, size_t *len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	*len = ((size_t)bpf_map__value_size(m) * bpf_map__max_entries(m) + page - 1) / page * page;
	p = mmap(NULL, *len, prot, MAP_SHARED, bpf_map__fd(m), 0);
	return p == MAP_FAILED ? NULL : p;
}

int xsk_loaded(struct sink *sk)
{
	struct xsk_state *xs = sk->ms;
	int err;

	if (!xs->records)
		return 0;
	xs->recs_map = map_mmap(sk->skel->maps.xsk_recs, PROT_READ, &xs->recs_len);
	if (xs->recs_map)
		xs->rings_map =
			map_mmap(sk->skel->maps.xsk_rings, PROT_READ | PROT_WRITE, &xs->rings_len);
	if (xs->rings_map)
		return 0;
	err = -errno;
	pr_warn("cannot map the program's records into memory: %s\n", strerror(-err));
	return err;
}

void xsk_records_unmap(struct xsk_state *xs)
{
	if (xs->recs_map)
		munmap(xs->recs_map, xs->recs_len);
	if (xs->rings_map)
		munmap(xs->rings_map, xs->rings_len);
	xs->recs_map = xs->rings_map = NULL;
}
