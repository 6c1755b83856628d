// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel verdict modes: drop, pass, tx and redirect. The program does
 * all the work; what differs is what can go wrong after it: bounced frames
 * (tx) and redirected ones (redirect) can still be dropped by the kernel.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "sample.h"
#include "sink.h"
#include "xdp_sink.skel.h"

/* tx and redirect: what the kernel did with the frames the program sent out. */
struct xdp_state {
	struct iface to; /* redirect target */
	struct iface_estats *to_estats;
	bool warned; /* the kernel's drops were explained */
};

/* redirect: the target's side of a reading. */
struct redirect_snap {
	__u64 to_xmit; /* frames the redirect target transmitted */
	__u64 to_xmit_errors; /* frames the redirect target dropped */
};

static int xdp_plan(struct sink *sk)
{
	sk->ms = calloc(1, sizeof(struct xdp_state));
	return sk->ms ? 0 : -ENOMEM;
}

static void xdp_cleanup(struct sink *sk)
{
	struct xdp_state *xs = sk->ms;

	if (!xs)
		return;
	iface_estats__close(xs->to_estats);
	free(xs);
	sk->ms = NULL;
}

/* drop: --sample's report, when it samples. */
static void drop_json(const struct sink *sk, struct jw *w, const struct sink_snap *a,
		      const struct sink_snap *b, const struct sink_stats *d,
		      const struct sink_drops *dr, enum run_report kind)
{
	(void)a;
	(void)b;
	(void)d;
	(void)dr;
	if (kind == RUN_SUMMARY)
		sample_json(sk, w);
}

static void drop_text(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		      const struct sink_stats *d, enum run_report kind)
{
	(void)a;
	(void)b;
	(void)d;
	if (kind == RUN_SUMMARY)
		sample_text(sk);
}

/* drop --cost: what it achieves, measured with BPF_PROG_RUN; then zero the counters. */
static int drop_loaded(struct sink *sk)
{
	unsigned char pkt[60] = { [12] = 0x08, [13] = 0x00 };
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = 0);
	int fd = bpf_program__fd(sk->skel->progs.xdp_sink_drop);
	int map_fd = bpf_map__fd(sk->skel->maps.stats);
	unsigned int key;
	int err;

	if (!sk->cfg->cost)
		return 0;
	/* About 5 ms of work, whatever the cost asked. */
	topts.repeat = (__u32)(5000000 / (sk->cfg->cost + 50)) + 1;
	err = bpf_prog_test_run_opts(fd, &topts);
	if (err) {
		pr_debug("cannot measure the per-packet cost: %s\n", strerror(errno));
		return 0;
	}
	pr_info("cost: %" PRIu64 " ns asked, %u ns measured per packet (BPF_PROG_RUN, %u runs)\n",
		(uint64_t)sk->cfg->cost, topts.duration, topts.repeat);
	memset(sk->buf, 0, (size_t)sk->ncpus * sizeof(*sk->buf));
	for (key = 0; key < XDPSG_STATS_SLOTS; key++)
		bpf_map_update_elem(map_fd, &key, sk->buf, BPF_ANY);
	return 0;
}

/* ---------------------------------------------------------------------------
 * tx: the kernel may drop bounced frames (xdp_tx_errors on the interface)
 */

static void tx_explain(struct sink *sk, const struct sink_snap *s)
{
	struct xdp_state *xs = sk->ms;

	if (xs->warned || s->xdp_tx_errors <= sk->base.xdp_tx_errors)
		return;
	pr_warn("the kernel dropped bounced frames on %s (xdp_tx_errors): if it is a veth, its peer needs an XDP program or GRO on\n",
		sk->ifc.name);
	xs->warned = true;
}

/* ---------------------------------------------------------------------------
 * redirect: through a devmap to another interface, which may drop them
 */

/* Preflight: the target exists, is up, and can take frames. */
static int check_target(struct sink *sk, struct iface *to)
{
	const struct sink_cfg *cfg = sk->cfg;
	bool xdp = false, gro = false;
	char peer[IF_NAMESIZE];
	int err;

	if (!cfg->to) {
		pr_warn("redirect needs a target: add --to IFNAME\n");
		return -EINVAL;
	}
	if (!strcmp(cfg->to, sk->ifc.name)) {
		pr_warn("--to %s is the interface itself; use 'xdp-sink tx %s' to bounce packets, or name another interface\n",
			cfg->to, cfg->to);
		return -EINVAL;
	}
	err = iface_get(cfg->to, to);
	if (err) {
		pr_warn("redirect target '%s' not found in this namespace; check 'ip link'\n",
			cfg->to);
		return -EINVAL;
	}
	if (!to->up) {
		pr_warn("redirect target %s is down; bring it up with 'ip link set dev %s up'\n",
			cfg->to, cfg->to);
		return -EINVAL;
	}
	if (strcmp(to->driver, "veth"))
		return 0;
	err = iface_veth_peer(to, peer, sizeof(peer));
	if (err) {
		pr_info("the veth peer of %s is in another namespace, so its NAPI cannot be checked; watching %s's xdp_xmit_errors instead\n",
			cfg->to, cfg->to);
		return 0;
	}
	err = iface_napi_state(peer, &xdp, &gro);
	if (!err && !xdp && !gro) {
		pr_warn("%s cannot take redirected frames: its veth peer %s runs no NAPI; attach an XDP program to %s (e.g. xdp-sink pass %s) or turn GRO on ('ethtool -K %s gro on')\n",
			cfg->to, peer, peer, peer, peer);
		return -EINVAL;
	}
	return 0;
}

static int redirect_plan(struct sink *sk)
{
	int err = xdp_plan(sk);

	return err ? err : check_target(sk, &((struct xdp_state *)sk->ms)->to);
}

/* The target goes into the devmap; its counters tell what it did with the frames. */
static int redirect_loaded(struct sink *sk)
{
	struct xdp_state *xs = sk->ms;
	__u32 key = 0, val = (__u32)xs->to.ifindex;
	int err;

	if (bpf_map_update_elem(bpf_map__fd(sk->skel->maps.tx_port), &key, &val, 0)) {
		err = -errno;
		pr_warn("cannot add %s to the devmap: %s\n", xs->to.name, strerror(-err));
		return err;
	}
	iface_estats__open(xs->to.name, &xs->to_estats);
	return 0;
}

static size_t redirect_snap_size(const struct sink *sk)
{
	(void)sk;
	return sizeof(struct redirect_snap);
}

static void redirect_read(struct sink *sk, struct sink_snap *s)
{
	struct xdp_state *xs = sk->ms;
	struct redirect_snap *rs = s->mode;

	if (!xs->to_estats || iface_estats_read(xs->to_estats))
		return;
	rs->to_xmit = iface_estat_sum(xs->to_estats, "tx_queue_", "_xdp_xmit", NULL);
	rs->to_xmit_errors = iface_estat_sum(xs->to_estats, "tx_queue_", "_xdp_xmit_errors", NULL);
}

static void redirect_drops(const struct sink *sk, const struct sink_snap *a,
			   const struct sink_snap *b, struct sink_drops *d)
{
	const struct redirect_snap *ra = a->mode, *rb = b->mode;

	(void)sk;
	d->xdp_xmit_errors = ra->to_xmit_errors - rb->to_xmit_errors;
}

static void redirect_explain(struct sink *sk, const struct sink_snap *s)
{
	const struct redirect_snap *now = s->mode, *then = sk->base.mode;
	struct xdp_state *xs = sk->ms;

	if (xs->warned || now->to_xmit_errors <= then->to_xmit_errors)
		return;
	pr_warn("the kernel dropped frames redirected to %s (xdp_xmit_errors): %s\n", xs->to.name,
		strcmp(xs->to.driver, "veth") ?
			"the target's driver refused them" :
			"its veth peer needs an XDP program or GRO on (NAPI), or its ring is full");
	xs->warned = true;
}

/* Without options the program reads one setting a frame (drop_plain), not each of them. */
static void drop_configure(struct sink *sk)
{
	const struct sink_cfg *cfg = sk->cfg;

	sk->skel->rodata->drop_plain = !cfg->parse && !sk->skel->rodata->cost_ns &&
				       cfg->packet_op == XDPSG_OP_NONE &&
				       !sk->skel->rodata->sample_every && !sk->frags;
}

const struct sink_mode_ops sink_drop_ops = {
	.prog = "xdp_sink_drop",
	.configure = drop_configure,
	.has = SINK_HAS_VERDICT,
	.pins = SINK_PIN_STATS,
	.sends = true,
	.plan = sample_plan,
	.loaded = drop_loaded,
	.start = sample_start,
	.read = sample_read,
	.finish = sample_finish,
	.json = drop_json,
	.text = drop_text,
	.cleanup = sample_cleanup,
};

const struct sink_mode_ops sink_pass_ops = {
	.prog = "xdp_sink_pass",
	.has = SINK_HAS_VERDICT,
	.pins = SINK_PIN_STATS,
	.sends = true,
};

const struct sink_mode_ops sink_tx_ops = {
	.prog = "xdp_sink_tx",
	.has = SINK_HAS_VERDICT | SINK_HAS_TX,
	.pins = SINK_PIN_STATS,
	.sends = true,
	.plan = xdp_plan,
	.explain = tx_explain,
	.cleanup = xdp_cleanup,
};

const struct sink_mode_ops sink_redirect_ops = {
	.prog = "xdp_sink_redirect",
	.has = SINK_HAS_VERDICT | SINK_HAS_REDIRECT,
	.pins = SINK_PIN_STATS | SINK_PIN_TX_PORT | SINK_PIN_BLACKHOLE,
	.sends = true,
	.plan = redirect_plan,
	.loaded = redirect_loaded,
	.snap_size = redirect_snap_size,
	.read = redirect_read,
	.drops = redirect_drops,
	.explain = redirect_explain,
	.cleanup = xdp_cleanup,
};
