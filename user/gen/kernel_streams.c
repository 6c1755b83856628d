// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen kernel --stream: one xdp_gen program per stream, each loaded with
 * its own stream's layout as constants and its own maps (sizes, flows,
 * sequence numbers, per-CPU pace), and the dispatcher xdp_gen_streams in the
 * run's own object, which BPF_PROG_RUN runs and which tail-calls a stream's
 * program each run (struct gen_sched in include/shared.h). All of them share
 * the target (tx_port), so the tracepoints' filter and the books are the
 * run's, and the per-CPU schedule.
 *
 * Threads: load and fill on the main thread before the workers start; each
 * worker reads its own CPU's counts between its calls (kernel_streams_read()),
 * and the main thread sums the same counts for its samples.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "gen_prog.h"
#include "kernel.h"
#include "streams.h"

/* The per-CPU schedule of every CPU, in a buffer the caller frees. */
static struct gen_sched *sched_read(struct kernel_gen *k, int *err)
{
	int ncpu = libbpf_num_possible_cpus();
	struct gen_sched *v = calloc((size_t)ncpu, sizeof(*v));
	__u32 key = 0;

	*err = v ? bpf_map__lookup_elem(k->skel->maps.sched, &key, sizeof(key), v,
					(size_t)ncpu * sizeof(*v), 0) :
		   -ENOMEM;
	if (*err) {
		free(v);
		return NULL;
	}
	return v;
}

bool kernel_streams_paced(const struct gen *g)
{
	unsigned int s;

	for (s = 0; s < g->nstreams; s++)
		if (g->streams[s].rate)
			return true;
	return false;
}

/* Each thread's share of each stream, and which streams its CPU sends at all. */
static int set_threads(struct gen *g)
{
	struct kernel_gen *k = kg(g);
	unsigned int i, s;
	int err = 0;

	for (i = 0; !err && i < g->nthreads; i++) {
		struct gen_thread *t = &g->th[i];
		__u32 live = 0;

		for (s = 0; !err && s < g->nstreams; s++) {
			const struct gen_tstream *ts = &t->ts[s];

			err = gen_prog_set_stream_cpu(k->sk[s], ts->pg, t->cpu, ts->pace.rate,
						      ts->pace.quota);
			if (!ts->pace.idle)
				live |= 1U << s;
		}
		if (!err)
			err = gen_prog_set_live(k->skel, t->cpu, live);
	}
	return err;
}

int kernel_streams_setup(struct gen *g)
{
	struct kernel_gen *k = kg(g);
	bool paced = kernel_streams_paced(g);
	__u32 copy_len = 0;
	unsigned int s;
	int err = 0;

	/* One stream has its pages to itself; several copy the longest headers (see the program). */
	for (s = 0; g->nstreams > 1 && s < g->nstreams; s++)
		if (pkt_gen_copy_len(g->th[0].ts[s].pg) > copy_len)
			copy_len = pkt_gen_copy_len(g->th[0].ts[s].pg);
	for (s = 0; !err && s < g->nstreams; s++) {
		err = gen_prog_load_stream(k->skel, g->th[0].ts[s].pg, s, paced, copy_len,
					   &k->sk[s]);
		if (err)
			pr_warn("cannot load stream %u (%s)'s program: %s (run with -vv for the verifier's log)\n",
				s, g->streams[s].name, strerror(-err));
	}
	k->nsk = s;
	if (!err)
		err = set_threads(g);
	return err;
}

/*
 * Thread t's CPU: each stream's frames and bytes into its share's counters,
 * its first and last frame's time (the program's clock, CLOCK_MONOTONIC as
 * now_ns()), the thread's total; *live: the streams with frames left.
 */
int kernel_streams_read(struct gen_thread *t, __u32 *live)
{
	struct gen *g = t->g;
	struct kernel_gen *k = kg(g);
	struct gen_sched *v;
	struct gen_cpu c;
	__u64 total = 0;
	unsigned int s;
	int err;

	v = sched_read(k, &err);
	if (!v)
		return err;
	for (s = 0; s < g->nstreams; s++) {
		struct gen_tstream *ts = &t->ts[s];

		err = gen_prog_cpu_state(k->sk[s], t->cpu, &c);
		if (err)
			break;
		CNT_SET(ts->sent, c.packets);
		CNT_SET(ts->bytes, c.bytes);
		CNT_SET(ts->attempted, c.packets);
		if (v[t->cpu].first_ns[s]) {
			CNT_SET(ts->first_ns, v[t->cpu].first_ns[s]);
			CNT_SET(ts->last_ns, v[t->cpu].last_ns[s]);
		}
		total += c.packets;
	}
	*live = v[t->cpu].live;
	free(v);
	if (!err)
		CNT_SET(t->c.submitted, total);
	return err;
}

/*
 * Every thread's frames, bytes and refused redirects, summed over the
 * streams' programs, and each stream's, summed over the threads: fresher
 * than its share's counters, which its thread reads back once a call.
 */
void kernel_streams_sample(struct gen *g, struct gen_snapshot *snap)
{
	struct kernel_gen *k = kg(g);
	int n = libbpf_num_possible_cpus();
	unsigned int i, s;
	__u32 key = 0;

	for (i = 0; i < g->nthreads; i++) {
		snap->per[i].sent = snap->per[i].bytes = 0;
		snap->per[i].m[0] = 0;
	}
	for (s = 0; s < k->nsk; s++) {
		if (bpf_map__lookup_elem(k->sk[s]->maps.cpu_state, &key, sizeof(key), k->cpu_vals,
					 (size_t)n * sizeof(*k->cpu_vals), 0))
			continue;
		snap->stream_tx[2 * s] = snap->stream_tx[2 * s + 1] = 0;
		for (i = 0; i < g->nthreads; i++) {
			const struct gen_cpu *v = &k->cpu_vals[g->th[i].cpu];

			snap->per[i].sent += v->packets;
			snap->per[i].bytes += v->bytes;
			snap->per[i].m[0] += v->redirect_err;
			snap->stream_tx[2 * s] += v->packets;
			snap->stream_tx[2 * s + 1] += v->bytes;
		}
	}
}

void kernel_streams_destroy(struct kernel_gen *k)
{
	unsigned int s;

	for (s = 0; s < XDPSG_GEN_MAX_STREAMS; s++) {
		xdp_gen_bpf__destroy(k->sk[s]);
		k->sk[s] = NULL;
	}
	k->nsk = 0;
}
