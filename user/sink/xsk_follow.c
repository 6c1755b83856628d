// SPDX-License-Identifier: GPL-2.0
/* xsk: each queue's thread follows the CPU that receives its frames (--follow-rx, and by trial). */
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/cpu.h"
#include "base/fmt.h"
#include "base/log.h"
#include "base/numa.h"
#include "xdp_sink.skel.h"
#include "xsk.h"

/*
 * Following the receive CPU. The kernel copies each frame into the UMEM on
 * the CPU that runs the queue's receive path: the NIC queue's interrupt CPU,
 * or on veth the sender's CPU. A thread that verifies on another CPU pulls
 * every frame's cache line over, and the kernel's next copy into that frame
 * has to take the line back; in the lab here that round trip cost the
 * verifying sink about half its rate. So every FOLLOW_NS the main thread looks
 * at which CPUs ran the program for each queue since its last look (the
 * per-CPU counters the program keeps anyway); the CPU that ran more than half
 * of the queue's packets is its rx_cpu. A thread moves only within the node
 * of its queue's UMEM, and then shares that CPU with the receive path: it
 * sleeps in poll() when its ring is empty, which leaves the CPU to the kernel.
 *
 * --follow-rx moves the thread there at every look. By default (verifying,
 * no --cpus) the move is a trial: made only when the socket dropped at least
 * one frame in a thousand since the last look (the thread is behind, so where
 * it runs matters), and kept only if the queue then delivers at least as many
 * frames a second as it did at home (XQ_FOLLOW_HOME_LOOKS, xsk.h). That it stops
 * dropping is no proof: a sender sharing that CPU can slow, or the kernel's
 * receive path there (ksoftirqd under a real-time sender) can drop before the
 * socket, and the socket's drops end while it delivers less. The rate it is
 * held to must be a whole look's: a look in which the traffic started reads
 * low (in the lab here 300 kpps against 440 for a look with traffic
 * throughout), and a starved thread's burst could pass it. So a move is made
 * only from a look that the one before it saw traffic too. A sender that
 * outranks the thread on that CPU (a real-time generator, say) would starve
 * it there: the trial sees the rate fall and moves the thread back, for good.
 * A queue that keeps up never moves.
 */
#define FOLLOW_NS 100000000ULL
#define FOLLOW_MIN_PACKETS 1000 /* fewer in a look: too little to judge */
/*
 * A trial is judged at the first look with traffic throughout; one that has
 * not been judged after this many looks (the traffic stopped, or trickles)
 * ends, and the thread goes back home: nothing showed the move paid.
 */
#define FOLLOW_TRIAL_LOOKS 20
static double follow_home_best(struct xq *x, double pps)
{
	double best = pps;
	int i;

	for (i = XQ_FOLLOW_HOME_LOOKS - 1; i > 0; i--)
		x->home_looks[i] = x->home_looks[i - 1];
	x->home_looks[0] = pps;
	for (i = 1; i < XQ_FOLLOW_HOME_LOOKS; i++)
		if (x->home_looks[i] > best)
			best = x->home_looks[i];
	return best;
}

static bool follow_move(struct xq *x, int cpu)
{
	int err = cpu_pin_thread(x->w.tid, cpu);

	if (err) {
		pr_warn("cannot move queue %u's thread to CPU %d: %s\n", x->queue, cpu,
			strerror(-err));
		return false;
	}
	x->cpu = cpu;
	x->cpu_moves++;
	return true;
}

static void follow_queue(struct sink *sk, struct xq *x, __u64 *seen, const struct xq_counts *xc,
			 const struct xdp_statistics *st, __u64 now)
{
	__u32 key = x->queue < XDPSG_MAX_QUEUES ? x->queue : XDPSG_MAX_QUEUES;
	__u64 n, total = 0, most = 0, rx, drops, dt;
	int c, best = -1;
	bool whole;
	double pps;

	if (bpf_map_lookup_elem(bpf_map__fd(sk->skel->maps.stats), &key, sk->buf))
		return;
	for (c = 0; c < sk->ncpus; c++) {
		n = sk->buf[c].packets - seen[c];
		seen[c] = sk->buf[c].packets;
		total += n;
		if (n > most) {
			most = n;
			best = c;
		}
	}
	/* What the queue delivered and what its socket dropped since the last look. */
	rx = xc->rx_packets - x->look_rx;
	drops = st->rx_dropped + st->rx_ring_full - x->look_drops;
	dt = x->look_ns ? now - x->look_ns : 0; /* the first look only sets the marks */
	x->look_rx = xc->rx_packets;
	x->look_drops = st->rx_dropped + st->rx_ring_full;
	x->look_ns = now;
	whole = x->look_busy;
	x->look_busy = dt && total >= FOLLOW_MIN_PACKETS;
	if (x->follow == XQ_FOLLOW_TRIAL && ++x->trial_looks > FOLLOW_TRIAL_LOOKS &&
	    (!x->look_busy || best < 0 || most * 2 <= total)) {
		if (follow_move(x, x->home_cpu)) {
			x->follow = XQ_FOLLOW_RETURNED;
			pr_info("queue %u: no steady traffic to judge the move by; back on CPU %d\n",
				x->queue, x->cpu);
		}
		return;
	}
	if (best < 0 || !x->look_busy || most * 2 <= total)
		return;
	x->rx_cpu = best;
	pps = (double)rx * 1e9 / (double)dt;
	switch (x->follow) {
	case XQ_FOLLOW_OFF:
	case XQ_FOLLOW_RETURNED:
		return;
	case XQ_FOLLOW_AUTO:
		if (!whole)
			return;
		x->home_pps = follow_home_best(x, pps);
		if (drops * 1000 < rx + drops || best == x->cpu ||
		    numa_node_of_cpu(best) != x->umem_node)
			return;
		x->home_cpu = x->cpu;
		x->trial_looks = 0;
		if (follow_move(x, best)) {
			x->follow = XQ_FOLLOW_TRIAL;
			pr_info("queue %u: behind on CPU %d (%s of %s frames dropped at its socket in 100 ms); trying its receive CPU %d\n",
				x->queue, x->home_cpu, FMT_COUNT(drops), FMT_COUNT(rx + drops),
				best);
		}
		return;
	case XQ_FOLLOW_TRIAL:
		if (pps >= x->home_pps) {
			x->follow = XQ_FOLLOW_MOVED;
			pr_info("queue %u: %s pps on its receive CPU %d, %s at home: it stays\n",
				x->queue, FMT_COUNT((__u64)pps), x->cpu,
				FMT_COUNT((__u64)x->home_pps));
		} else if (follow_move(x, x->home_cpu)) {
			x->follow = XQ_FOLLOW_RETURNED;
			pr_info("queue %u: %s pps on its receive CPU %d, %s at home: back on CPU %d\n",
				x->queue, FMT_COUNT((__u64)pps), best,
				FMT_COUNT((__u64)x->home_pps), x->cpu);
		}
		return;
	case XQ_FOLLOW_ALWAYS:
	case XQ_FOLLOW_MOVED:
		if (best != x->cpu && numa_node_of_cpu(best) == x->umem_node)
			follow_move(x, best);
		return;
	}
}

void xsk_follow_tick(struct sink *sk, const struct sink_snap *s)
{
	struct xsk_state *xs = sk->ms;
	unsigned int i;

	if (!xs->follow_seen || s->rs.t_ns < xs->follow_next_ns)
		return;
	xs->follow_next_ns = s->rs.t_ns + FOLLOW_NS;
	/*
	 * Not a thread that left its loop: once it exits, its pthread_t may
	 * name no thread, and a move must never land on another one.
	 */
	for (i = 0; i < xs->nxq; i++)
		if (xs->xq[i].w.created &&
		    !__atomic_load_n(&xs->xq[i].w.finished, __ATOMIC_ACQUIRE))
			follow_queue(sk, &xs->xq[i],
				     xs->follow_seen + (size_t)i * (size_t)sk->ncpus,
				     &xsk_snap_xc(s)[i], &xsk_snap_xs(sk, s)[i], s->rs.t_ns);
}
