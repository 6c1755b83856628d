// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen's marks (marks.h): which flows a thread speaks for, the marks'
 * bodies, the barrier before the end marks and their timing. How a frame
 * reaches the wire is the mode's (struct gen_mode.mark_send).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "marks.h"
#include "measure/clockid.h"
#include "replay.h"
#include "streams.h"

const unsigned int gen_mark_end_gap_ms[XDPSG_MARK_REPEAT] = { 0, 2, 10, 50 };

_Static_assert(GEN_STREAMS_MAX <= XDPSG_GEN_MAX_STREAMS, "a mark_frames slot per stream");
_Static_assert(XDPSG_GEN_COPY_MAX <= GEN_MARK_FRAME, "kernel marks fit the buffer");

/* The flows of one run a thread sends: a stream, the run's one stream, or a replay's. */
struct mark_run {
	unsigned int idx; /* stream index (0 without streams) */
	struct pkt_gen *pg; /* builds and numbers its flows; NULL: the replay's one flow */
	__u32 run, nflows, first, step;
};

/* A batch of marks on their way to mark_send, and which stream each is of. */
struct mark_batch {
	unsigned int n, cap;
	void **frames;
	__u32 *lens;
	unsigned int *stream;
};

bool gen_marks_on(const struct gen *g)
{
	if (g->replay)
		return g->replay->stamp && gen_replay_mark_ready(g);
	return !g->cfg->no_stamp;
}

unsigned int gen_marks_per_flow(const struct gen *g)
{
	if (!gen_marks_on(g))
		return 0;
	return XDPSG_MARK_START_REPEAT + (g->cfg->no_end_mark ? 0 : XDPSG_MARK_REPEAT);
}

static unsigned int runs_of(const struct gen_thread *t, struct mark_run *out)
{
	const struct gen *g = t->g;
	unsigned int s;

	if (g->replay) {
		out[0] = (struct mark_run){ .run = g->popts.run,
					    .nflows = g->nthreads,
					    .first = t->idx,
					    .step = g->nthreads };
		return 1;
	}
	if (!t->ts) {
		out[0] = (struct mark_run){ .pg = t->pg,
					    .run = t->pg->run,
					    .nflows = t->pg->nflows,
					    .first = t->pg->shard,
					    .step = t->pg->shards };
		return 1;
	}
	for (s = 0; s < g->nstreams; s++) {
		struct pkt_gen *pg = t->ts[s].pg;

		out[s] = (struct mark_run){ .idx = s,
					    .pg = pg,
					    .run = pg->run,
					    .nflows = pg->nflows,
					    .first = pg->shard,
					    .step = pg->shards };
	}
	return g->nstreams;
}

/* Flow f's next sequence number: the frames it sent. */
static __u32 flow_seq(const struct gen_thread *t, const struct mark_run *r, __u32 f)
{
	return r->pg ? r->pg->seq[f] : *t->replay_seq;
}

static void flush(struct gen_thread *t, struct mark_batch *b)
{
	int n, i;

	if (!b->n)
		return;
	n = t->g->mode->mark_send(t, b->frames, b->lens, b->n);
	if (n < 0 || (unsigned int)n < b->n)
		pr_warn("%s %u: %u of %u marks not sent%s%s\n", t->g->mode->unit, t->queue,
			b->n - (n < 0 ? 0 : n), b->n, n < 0 ? ": " : "", n < 0 ? strerror(-n) : "");
	for (i = 0; i < n; i++) {
		CNT_ADD(t->c.marks, 1);
		if (t->ts)
			CNT_ADD(t->ts[b->stream[i]].marks, 1);
	}
	b->n = 0;
}

/* One mark of flow f of run r into the batch (sent when full). */
static void add(struct gen_thread *t, struct mark_batch *b, const struct mark_run *r, __u32 f,
		enum xdpsg_mark_kind kind, unsigned int repeat, __u64 run_frames)
{
	const struct gen *g = t->g;
	const struct clock_info *ci = &g->clock;
	struct xdpsg_mark m = {
		.kind = (__u8)kind,
		.clock = (__u8)ci->clock,
		.flow = (__u16)f,
		.repeat = (__u16)repeat,
		.flags = ci->synced ? XDPSG_MARK_F_SYNCED : 0,
		.clock_id = ci->id,
		.nflows = r->nflows,
		.sync_error_us = ci->maxerror_us > 0xffffffffULL ? 0xffffffffU :
								   (__u32)ci->maxerror_us,
	};
	__u8 *frame = b->frames[b->n];

	if (kind == XDPSG_MARK_END) {
		m.flow_frames = flow_seq(t, r, f);
		m.run_frames = run_frames;
	}
	m.clock_ns = clock_now_ns(ci->clock);
	b->lens[b->n] = r->pg ? pkt_gen_mark(r->pg, f, m.clock_ns, &m, frame) :
				gen_replay_mark(g, m.clock_ns, &m, frame, GEN_MARK_FRAME);
	b->stream[b->n] = r->idx;
	if (++b->n == b->cap)
		flush(t, b);
}

/*
 * Every flow of every run of the thread, repeats first .. first + n - 1 of
 * kind, in as few batches as they fit (a kernel-mode batch is a call).
 */
static void send_round(struct gen_thread *t, enum xdpsg_mark_kind kind, unsigned int first,
		       unsigned int n, const __u64 *run_frames)
{
	struct mark_run runs[XDPSG_GEN_MAX_STREAMS];
	unsigned int i, r, nr = runs_of(t, runs);
	struct mark_batch *b = t->mark_batch;
	__u32 f;

	b->n = 0;
	for (r = first; r < first + n; r++)
		for (i = 0; i < nr; i++)
			for (f = runs[i].first; f < runs[i].nflows; f += runs[i].step)
				add(t, b, &runs[i], f, kind, r, run_frames ? run_frames[i] : 0);
	flush(t, b);
}

unsigned int gen_marks_batch(const struct gen_thread *t)
{
	struct mark_run runs[XDPSG_GEN_MAX_STREAMS];
	unsigned int i, nr = runs_of(t, runs), n = 0;

	for (i = 0; i < nr; i++)
		n += (runs[i].nflows - runs[i].first + runs[i].step - 1) / runs[i].step;
	n *= XDPSG_MARK_START_REPEAT;
	return n > GEN_MARK_BATCH ? GEN_MARK_BATCH : n ? n : 1;
}

/* The thread's batch and its frames' room, once. */
static int batch_alloc(struct gen_thread *t)
{
	unsigned int i, cap = gen_marks_batch(t);
	struct mark_batch *b;

	if (t->mark_batch)
		return 0;
	b = calloc(1, sizeof(*b));
	t->mark_batch = b;
	t->mark_buf = malloc((size_t)cap * GEN_MARK_FRAME);
	if (!b || !t->mark_buf)
		return -ENOMEM;
	b->cap = cap;
	b->frames = calloc(cap, sizeof(*b->frames));
	b->lens = calloc(cap, sizeof(*b->lens));
	b->stream = calloc(cap, sizeof(*b->stream));
	if (!b->frames || !b->lens || !b->stream)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		b->frames[i] = (__u8 *)t->mark_buf + (size_t)i * GEN_MARK_FRAME;
	return 0;
}

void gen_marks_free(struct gen_thread *t)
{
	struct mark_batch *b = t->mark_batch;

	if (b) {
		free(b->frames);
		free(b->lens);
		free(b->stream);
	}
	free(b);
	free(t->mark_buf);
	t->mark_batch = t->mark_buf = NULL;
}

static bool marks_begin(struct gen_thread *t)
{
	if (!gen_marks_on(t->g))
		return false;
	if (batch_alloc(t)) {
		pr_warn("%s %u: no memory for marks\n", t->g->mode->unit, t->queue);
		return false;
	}
	__atomic_store_n(&t->marking, 1, __ATOMIC_RELEASE);
	return true;
}

void gen_marks_start(struct gen_thread *t)
{
	if (!marks_begin(t))
		return;
	send_round(t, XDPSG_MARK_START, 0, XDPSG_MARK_START_REPEAT, NULL);
	__atomic_store_n(&t->marking, 0, __ATOMIC_RELEASE);
}

/* Until every other thread is done with its data, or never got to send any. */
static void barrier(const struct gen *g)
{
	unsigned int i;

	for (i = 0; i < g->nthreads; i++)
		while (!__atomic_load_n(&g->th[i].marks_arrived, __ATOMIC_ACQUIRE) &&
		       !__atomic_load_n(&g->th[i].w.finished, __ATOMIC_ACQUIRE))
			usleep(200);
}

static void sleep_until(__u64 ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL) };

	/* The stop's wake-up signal may cut it short: the deadline stands. */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void gen_marks_end(struct gen_thread *t)
{
	struct gen *g = t->g;
	struct mark_run runs[XDPSG_GEN_MAX_STREAMS];
	__u64 run_frames[XDPSG_GEN_MAX_STREAMS] = { 0 }, last = 0, sum;
	unsigned int i, r, nr;
	__u32 f;

	if (!marks_begin(t))
		return;
	if (g->mode->mark_sync && g->mode->mark_sync(t))
		pr_warn("%s %u: cannot read the flows' sequence numbers: their end marks may be off\n",
			g->mode->unit, t->queue);
	nr = runs_of(t, runs);
	for (i = 0; i < nr; i++) {
		for (f = runs[i].first, sum = 0; f < runs[i].nflows; f += runs[i].step)
			sum += flow_seq(t, &runs[i], f);
		t->mark_frames[runs[i].idx] = sum;
	}
	__atomic_store_n(&t->marks_arrived, 1, __ATOMIC_RELEASE);
	if (g->cfg->no_end_mark) {
		__atomic_store_n(&t->marking, 0, __ATOMIC_RELEASE);
		return;
	}
	barrier(g);
	for (i = 0; i < g->nthreads; i++) {
		if (!__atomic_load_n(&g->th[i].marks_arrived, __ATOMIC_ACQUIRE))
			continue;
		for (r = 0; r < nr; r++)
			run_frames[r] += g->th[i].mark_frames[runs[r].idx];
		if (CNT_READ(g->th[i].last_ns) > last)
			last = CNT_READ(g->th[i].last_ns);
	}
	if (!last)
		last = now_ns();
	for (r = 0; r < XDPSG_MARK_REPEAT; r++) {
		sleep_until(last + gen_mark_end_gap_ms[r] * 1000000ULL);
		send_round(t, XDPSG_MARK_END, r, 1, run_frames);
	}
	__atomic_store_n(&t->marking, 0, __ATOMIC_RELEASE);
}
