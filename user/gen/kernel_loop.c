// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen kernel: the send loops. Each thread calls BPF_PROG_RUN with live
 * frames on its own CPU, in calls long enough that the page pool each call
 * sets up costs little, and short enough that a stop or a --duration ends
 * the run on time.
 */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/cpu.h"
#include "base/log.h"
#include "base/runtime.h"
#include "gen_prog.h"
#include "kernel.h"
#include "marks.h"
#include "streams.h"

/*
 * Frames per BPF_PROG_RUN call. Each call sets up and tears down a page pool
 * (measured 24 ms once, 0.5-1 ms later into xdp-sink drop), so calls must be
 * long: the chunk is sized to
 * about 250 ms of work at the rate the thread achieves. A stop interrupts a
 * running call with SIGUSR1 (BPF_PROG_RUN returns EINTR between batches), and
 * the last chunk of a --duration run is trimmed to the time left.
 */
#define KERNEL_CHUNK_FIRST (1U << 20)
#define KERNEL_CHUNK_MIN (1U << 16)
#define KERNEL_CHUNK_MAX (1U << 23)
#define KERNEL_CHUNK_NS 250000000ULL
/* Paced calls mostly skip runs: longer calls, fewer setup pauses to catch up on. */
#define KERNEL_PACED_CHUNK_NS 1000000000ULL
#define KERNEL_PACED_CHUNK_MAX (1U << 30)

/* cap, or fewer: the runs that fit in the time left before end at est a second (0: unknown). */
static __u64 fit_time(__u64 cap, __u64 end, __u64 now, __u64 est)
{
	__u64 left = end > now ? end - now : 0;
	/* 128 bits: a saturated --duration leaves centuries. */
	unsigned __int128 fit = (unsigned __int128)left * est / 1000000000ULL + 1;

	return end && est && fit < cap ? (__u64)fit : cap;
}

/* How many frames the next call may send: the chunk, trimmed to the time left. */
static __u32 next_call(struct gen_thread *t, __u32 chunk, __u64 est_pps, __u64 end, __u64 now,
		       __u64 *due)
{
	__u32 want, batch = t->g->cfg->batch;
	__u64 cap = fit_time(chunk, end, now, est_pps);

	want = pace_budget(&t->pace, t->c.submitted, (__u32)cap, now, due);
	/*
	 * Whole batches, so the program's one clock reading per batch (clock_every)
	 * stays at the start of each batch the kernel builds; a remainder below a
	 * batch goes in a call of its own at the end.
	 */
	if (want > batch)
		want -= want % batch;
	return want;
}

/* The next chunk: about target_ns at the rate this call achieved, at most max. */
static __u32 resize_chunk(__u32 chunk, __u32 sent, __u64 took, __u64 *est_pps, __u64 target_ns,
			  __u64 max)
{
	__u64 cap;

	if (!took || sent < KERNEL_CHUNK_MIN)
		return chunk;
	*est_pps = (__u64)((unsigned __int128)sent * 1000000000ULL / took);
	cap = (__u64)((unsigned __int128)*est_pps * target_ns / 1000000000ULL);
	return (__u32)(cap < KERNEL_CHUNK_MIN ? KERNEL_CHUNK_MIN : cap > max ? max : cap);
}

/*
 * One BPF_PROG_RUN call of 'repeat' runs on the thread's own input frame,
 * begun at 'began'. Returns CALL_DONE; CALL_CUT when a signal that is no stop
 * (SIGSTOP and SIGCONT: a shell's Ctrl-Z and fg, a debugger) interrupted it
 * between batches, and the thread goes on; or CALL_END when the thread must
 * end: stopped (a stop interrupts a call with EINTR too), or failed
 * (t->w.err set). Any call may have sent frames, so each is a send in the
 * sending span: a stop's cut call ends it.
 */
enum { CALL_DONE, CALL_CUT, CALL_END };

static int run_call(struct gen_thread *t, __u32 repeat, __u64 began)
{
	struct kernel_gen *k = kg(t->g);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = k->frames + (size_t)t->idx * k->frame_len,
		    .data_size_in = k->frame_len, .repeat = repeat,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = (__u32)t->g->cfg->batch);
	int err = bpf_prog_test_run_opts(k->prog_fd, &o) ? errno : 0;

	gen_note_sent(t, began);
	if (!err)
		return CALL_DONE;
	if (err == EINTR)
		return gen_should_stop(t->g) ? CALL_END : CALL_CUT;
	t->w.err = -err;
	pr_warn("BPF_PROG_RUN on cpu %d failed: %s\n", t->cpu, strerror(err));
	return CALL_END;
}

/*
 * With --rate the program paces itself (struct gen_cpu): every run of a call
 * either sends the frame that is due or nothing, so frames leave evenly
 * spaced however long the call; the repeat count is runs, not frames, and
 * the program's own count says how many went. Calls are sized to about
 * KERNEL_PACED_CHUNK_NS, so the time each call spends setting up is a pause
 * once a second, which the program catches up on.
 */
static void kernel_paced_loop(struct gen_thread *t)
{
	struct gen *g = t->g;
	struct kernel_gen *k = kg(g);
	__u64 est = 0, end = g->cfg->duration ? deadline_after(t->pace.t0, g->cfg->duration) : 0;
	__u64 batch = g->cfg->batch ? g->cfg->batch : 1;
	__u32 chunk = KERNEL_CHUNK_FIRST;
	struct gen_cpu c;
	int call;

	while (!gen_should_stop(g)) {
		__u64 now = now_ns(), cap = chunk;

		if (gen_prog_cpu_state(k->skel, t->cpu, &c))
			break;
		CNT_SET(t->c.submitted, c.packets);
		if (pace_done(&t->pace, c.packets) || (end && now >= end))
			break;
		cap = fit_time(cap, end, now, est);
		/* The runs the rest of the quota needs (5% more), not a second of spinning after. */
		if (t->pace.quota && est) {
			__u64 fit = (__u64)((unsigned __int128)(t->pace.quota - c.packets) * est /
					    t->pace.rate * 21 / 20) +
				    KERNEL_CHUNK_MIN;

			if (fit < cap)
				cap = fit;
		}
		/* Whole batches: a burst begins at a batch's first run (struct gen_cpu). */
		cap = (cap + batch - 1) / batch * batch;
		/* The program's own counts say what a cut call sent: read at the top. */
		call = run_call(t, (__u32)cap, now);
		if (call == CALL_END)
			break;
		if (call == CALL_DONE)
			chunk = resize_chunk(chunk, (__u32)cap, now_ns() - now, &est,
					     KERNEL_PACED_CHUNK_NS, KERNEL_PACED_CHUNK_MAX);
	}
	if (!gen_prog_cpu_state(k->skel, t->cpu, &c))
		CNT_SET(t->c.submitted, c.packets);
}

/*
 * After a call cut short: the runs the program has made so far, each a frame
 * sent or refused by the redirect, become the thread's count. Nonzero if the
 * program's state cannot be read (the thread ends, as on a failed call).
 */
static int runs_done(struct gen_thread *t)
{
	struct gen_cpu c;
	int err = gen_prog_cpu_state(kg(t->g)->skel, t->cpu, &c);

	if (err) {
		if (!t->w.err)
			t->w.err = err;
		return err;
	}
	CNT_SET(t->c.submitted, c.packets + c.redirect_err);
	return 0;
}

static void kernel_loop(struct gen_thread *t)
{
	struct gen *g = t->g;
	__u64 due, est_pps = 0;
	__u64 end = g->cfg->duration ? deadline_after(t->pace.t0, g->cfg->duration) : 0;
	__u32 chunk = KERNEL_CHUNK_FIRST;
	int call;

	while (!gen_should_stop(g) && !pace_done(&t->pace, t->c.submitted)) {
		__u64 now = now_ns();
		__u32 want = next_call(t, chunk, est_pps, end, now, &due);

		if (!want) {
			pace_wait(due, false);
			continue;
		}
		call = run_call(t, want, now);
		if (call != CALL_DONE) {
			if (runs_done(t) || call == CALL_END)
				break;
			continue;
		}
		CNT_ADD(t->c.submitted, want);
		chunk = resize_chunk(chunk, want, now_ns() - now, &est_pps, KERNEL_CHUNK_NS,
				     KERNEL_CHUNK_MAX);
	}
}

/*
 * The runs the streams still need: with a paced stream, its frames left at
 * its rate in runs at the call's rate (5% more); else one run a frame while
 * every stream has a count. ~0: no bound (a stream without a count).
 */
static __u64 streams_runs_left(struct gen_thread *t, __u32 live, __u64 est)
{
	__u64 frames = 0, ns = 0;
	unsigned int s;

	for (s = 0; s < t->g->nstreams; s++) {
		const struct gen_tstream *ts = &t->ts[s];
		__u64 left;

		if (!(live & (1U << s)))
			continue;
		if (!ts->pace.quota)
			return ~0ULL;
		left = ts->pace.quota - CNT_READ(ts->sent);
		frames += left;
		if (ts->pace.rate) {
			__u64 need =
				(__u64)((unsigned __int128)left * 1000000000ULL / ts->pace.rate);

			ns = need > ns ? need : ns;
		}
	}
	if (!ns)
		return frames;
	if (!est)
		return ~0ULL;
	return (__u64)((unsigned __int128)ns * est / 1000000000ULL * 21 / 20) + KERNEL_CHUNK_MIN;
}

/*
 * --stream: the dispatcher picks the stream of each run (kernel_streams.c),
 * so a call's repeat count is runs, as paced; each call ends with the
 * streams' counts read back, and the thread ends when none has frames left.
 */
static void kernel_streams_loop(struct gen_thread *t)
{
	struct gen *g = t->g;
	bool paced = kernel_streams_paced(g);
	__u64 est = 0, end = g->cfg->duration ? deadline_after(t->pace.t0, g->cfg->duration) : 0;
	__u64 target = paced ? KERNEL_PACED_CHUNK_NS : KERNEL_CHUNK_NS;
	__u64 max = paced ? KERNEL_PACED_CHUNK_MAX : KERNEL_CHUNK_MAX;
	__u32 chunk = KERNEL_CHUNK_FIRST, live = 0;
	int call;

	while (!gen_should_stop(g)) {
		__u64 now = now_ns(), cap = chunk, left;

		if (kernel_streams_read(t, &live) || !live || (end && now >= end))
			break;
		cap = fit_time(cap, end, now, est);
		left = streams_runs_left(t, live, est);
		if (left < cap)
			cap = left;
		call = run_call(t, (__u32)cap, now);
		if (call == CALL_END)
			break;
		if (call == CALL_DONE)
			chunk = resize_chunk(chunk, (__u32)cap, now_ns() - now, &est, target, max);
	}
	kernel_streams_read(t, &live);
}

/*
 * Marks go out as the data frames do, through the run's own object (its
 * tx_port, its tracepoints' filter) and on the thread's CPU, so a veth peer
 * takes them into the receive queue the flows' frames went to.
 */
int kernel_mark_send(struct gen_thread *t, void *const *frames, const __u32 *lens, unsigned int n)
{
	return gen_prog_send_marks(kg(t->g)->skel, t->cpu, kg(t->g)->mark_base[t->idx], frames,
				   lens, n, (__u32)t->g->cfg->batch);
}

/* The flows' sequence numbers are the programs': each stream's, or the run's one. */
int kernel_mark_sync(struct gen_thread *t)
{
	struct kernel_gen *k = kg(t->g);
	unsigned int s;
	int err = 0;

	if (!t->ts)
		return gen_prog_read_seqs(k->skel, t->pg, t->cpu);
	for (s = 0; !err && s < t->g->nstreams; s++)
		err = gen_prog_read_seqs(k->sk[s], t->ts[s].pg, t->cpu);
	return err;
}

void *kernel_worker(void *arg)
{
	struct gen_thread *t = arg;

	runtime_block_signals();
	if (gen_worker_ready(t, cpu_pin_self(t->cpu))) {
		gen_marks_start(t);
		if (t->ts)
			kernel_streams_loop(t);
		else if (t->pace.rate)
			kernel_paced_loop(t);
		else
			kernel_loop(t);
		gen_marks_end(t);
	}
	run_worker_done(&t->w);
	return NULL;
}
