// SPDX-License-Identifier: GPL-2.0
/*
 * bench-verify: what the verifying sink spends on a frame, by what the frame
 * is, without the kernel or the rings in the way: the parse, the stamp's
 * keyed check and the books (stamp_read() + seqtrack), per frame of a batch
 * of 60-byte frames already in memory, as a queue's thread sees them.
 *
 *   genuine   frames of one run and flow, in order
 *   unkeyed   the same frames, read without the keyed check (stamp_peek()):
 *             what the check costs is genuine - unkeyed
 *   forged    stamps whose tag fails, each naming another run: counted, no books
 *   claims    stamps that pass (the public key), each naming a new run: books
 *             opened on probation and closed again, without allocating
 *   foreign   frames without a stamp
 *
 * Then the features a frame meets on its way through the sink, one at a time
 * (the cost ledger of issue 38, docs/performance.md), ns per frame:
 *
 *   verified           a genuine frame: parse, keyed check, books, its timing
 *   keyed_check        genuine - unkeyed
 *   latency_hist       hist_record() of one latency
 *   jitter             jitter_update() and the IPDV histogram of one transit
 *   live_hist          hist_coarse_record() of one latency
 *   capture_anomalies  capture_offer() of an in-order frame, --capture-what
 *                      anomalies: the check that keeps it as its flow's "before"
 *   capture_all        capture_offer() of a frame, --capture: the copy to the
 *                      writer thread's ring (the writer on another CPU), in
 *                      timed chunks of half the ring, each offered once the
 *                      writer has emptied it: a full ring refuses frames
 *                      cheaply, and that is not what a frame costs
 *   stamp_write        xdp-gen xsk's frame write, stamped - --no-stamp
 *
 *   bench-verify [--frames N] [--quick] [--json FILE]
 *
 * Each figure is the best of five passes of N frames (default 4M, --quick
 * 1M). The goals (issue "Books that hold across hosts"): a claim costs at
 * most 2x a genuine frame; the keyed check keeps the genuine path at 0.97x
 * or more of the unkeyed one (the end-to-end pair is the bench's cell
 * xsk-unkeyed; this row shows where the difference is).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../user/sink/capture.h"
#include "base/outfile.h"
#include "measure/hist.h"
#include "measure/jitter.h"
#include "measure/seqtrack.h"
#include "pkt/gen.h"
#include "pkt/stamp.h"

#define PASSES 5
#define BATCH 4096 /* frames laid out in memory, reused over a pass */
#define FRAME 64

enum kind { K_GENUINE, K_UNKEYED, K_FORGED, K_CLAIMS, K_FOREIGN, K_N };

static const char *const kind_names[K_N] = { "genuine", "unkeyed", "forged", "claims", "foreign" };

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static struct pkt_gen *make_gen(const struct stamp_key *key, __u32 run, bool no_stamp)
{
	struct pkt_opts o;
	char err[256];
	struct pkt_gen *g;

	pkt_opts_init(&o);
	o.size = 60;
	o.run = run;
	o.key = key;
	o.no_stamp = no_stamp;
	g = pkt_gen__create(&o, err, sizeof(err));
	if (!g)
		fprintf(stderr, "bench-verify: %s\n", err);
	return g;
}

/* BATCH frames of one kind; seq_base moves a genuine batch on from pass to pass. */
static int fill(enum kind k, __u8 *frames, const struct stamp_key *key, __u64 *rng)
{
	struct pkt_gen *g = make_gen(key, 0x600d, k == K_FOREIGN);
	unsigned int i;

	if (!g)
		return -EINVAL;
	for (i = 0; i < BATCH; i++) {
		__u8 *f = frames + (size_t)i * FRAME;

		pkt_gen_prefill(g, f);
		pkt_gen_write(g, f, 0, i, 1000000000ULL + i * 1000ULL);
		if (k == K_FORGED || k == K_CLAIMS) {
			__u32 run = (__u32)pkt__xorshift64s(rng);
			struct stamp_key wrong = *key;

			wrong.k0 ^= k == K_FORGED;
			/* another run each; the checksum is not the sink's business here */
			stamp_write(f + 42, &wrong, run, 0, (__u32)pkt__xorshift64s(rng),
				    1000000000ULL + i * 1000ULL);
		}
	}
	pkt_gen__destroy(g);
	return 0;
}

/* One pass: every frame of the batch, n frames in all; ns per frame. */
static double pass(enum kind k, __u8 *frames, const struct stamp_key *key, struct seqtrack *t,
		   __u64 n, __u32 *seq, __u64 *sink)
{
	__u64 t0 = now_ns(), i, rx = 2000000000ULL, got = 0;
	struct stamp st;

	for (i = 0; i < n; i++) {
		const __u8 *f = frames + (size_t)(i % BATCH) * FRAME;
		int v = k == K_UNKEYED ? stamp_peek(f, 60, &st) : stamp_read(f, 60, key, &st);

		rx += 100;
		if (v == STAMP_DATA) {
			if (k == K_GENUINE || k == K_UNKEYED)
				st.seq = (*seq)++; /* the batch repeats; its numbers go on */
			got += seqtrack_update(t, &st, rx);
		} else {
			got += (__u64)-v;
		}
	}
	*sink += got;
	return (double)(now_ns() - t0) / (double)n;
}

static int measure(enum kind k, __u64 n, const struct stamp_key *key, double *best)
{
	__u8 *frames = aligned_alloc(64, (size_t)BATCH * FRAME);
	struct seqtrack *t = seqtrack__create(1);
	__u64 rng = 0x9e3779b97f4a7c15ULL, sink = 0;
	__u32 seq = 0;
	int p, err = -ENOMEM;

	if (!frames || !t)
		goto out;
	err = fill(k, frames, key, &rng);
	if (err)
		goto out;
	*best = 1e18;
	for (p = 0; p < PASSES; p++) {
		double ns = pass(k, frames, key, t, n, &seq, &sink);

		if (ns < *best)
			*best = ns;
	}
	/* the claims closed each other on probation; nothing else grew */
	if (k == K_CLAIMS && (t->slots || t->nruns > SEQTRACK_PROBATION_MAX + 1))
		fprintf(stderr, "bench-verify: claims grew the books: %u runs, %u slots\n",
			t->nruns, t->slots);
	__asm__ volatile("" : : "r"(sink) : "memory");
out:
	seqtrack__destroy(t);
	free(frames);
	return err;
}

/* ---------------------------------------------------------------------------
 * The features, one at a time: each the best of PASSES passes of n calls.
 */

enum feature {
	F_LAT_HIST,
	F_JITTER,
	F_LIVE_HIST,
	F_CAP_ANOMALIES,
	F_CAP_ALL,
	F_STAMPED,
	F_UNSTAMPED,
	F_N
};

static const char *const feature_names[F_N] = { "latency_hist",	     "jitter",	    "live_hist",
						"capture_anomalies", "capture_all", "stamped",
						"unstamped" };

/* Latencies of 5 to 70 us, a new one per call, as a run's frames give them. */
static inline __u64 next_latency(__u64 *rng)
{
	return 5000 + (pkt__xorshift64s(rng) & 0xffff);
}

struct feat {
	struct hist *h, *ipdv;
	struct hist_coarse live;
	struct jitter jit;
	struct capq *cap;
	struct pkt_gen *gen[2]; /* stamped, unstamped */
	__u8 *frames;
	__u64 rng, sink;
	__u64 cap_dropped; /* frames the capture ring refused: the figure is void */
};

/* Frames of a capture pass: each is written to the file (60 bytes and a header). */
#define CAP_FRAMES_MAX (1U << 18)
#define CAP_CHUNK (CAPTURE_RING_SLOTS / 2)

/* Until the writer has taken every frame offered: 0, or -1 after 5 s (it stopped?). */
static int capture_drained(struct feat *s)
{
	__u64 dropped, t0 = now_ns();

	while (capture_queue_backlog(s->cap, &dropped)) {
		if (now_ns() - t0 > 5000000000ULL)
			return -1;
		usleep(100);
	}
	return 0;
}

/* --capture, every frame: chunks the writer has room for, timed apart from the wait. */
static double capture_all_pass(struct feat *s, __u64 n)
{
	struct stamp st = { .run = 0x600d, .flow = 0 };
	__u64 i = 0, spent = 0, t0, end, dropped;

	if (n > CAP_FRAMES_MAX)
		n = CAP_FRAMES_MAX;
	while (i < n) {
		if (capture_drained(s))
			return -1;
		end = i + CAP_CHUNK < n ? i + CAP_CHUNK : n;
		t0 = now_ns();
		for (; i < end; i++) {
			st.seq = (__u32)i;
			capture_offer(s->cap, s->frames + (i % BATCH) * FRAME, 60, t0 + i,
				      SEQ_IN_ORDER, &st);
		}
		spent += now_ns() - t0;
	}
	if (capture_drained(s))
		return -1;
	capture_queue_backlog(s->cap, &dropped);
	s->cap_dropped += dropped;
	return (double)spent / (double)n;
}

static double feature_pass(enum feature f, struct feat *s, __u64 n)
{
	__u64 t0 = now_ns(), i, d = 0, got = 0;
	struct stamp st = { .run = 0x600d, .flow = 0 };

	for (i = 0; i < n; i++) {
		switch (f) {
		case F_LAT_HIST:
			hist_record(s->h, next_latency(&s->rng));
			break;
		case F_JITTER:
			if (jitter_update(&s->jit, next_latency(&s->rng), &d))
				hist_record(s->ipdv, d);
			break;
		case F_LIVE_HIST:
			hist_coarse_record(&s->live, next_latency(&s->rng));
			break;
		case F_CAP_ANOMALIES:
			st.seq = (__u32)i;
			capture_offer(s->cap, s->frames + (i % BATCH) * FRAME, 60, t0 + i,
				      SEQ_IN_ORDER, &st);
			break;
		case F_STAMPED:
		case F_UNSTAMPED:
			got += pkt_gen_write(s->gen[f == F_UNSTAMPED],
					     s->frames + (i % BATCH) * FRAME, 0, (__u32)i,
					     1000000000ULL + i * 100);
			break;
		default:
			break;
		}
	}
	s->sink += got + d;
	return (double)(now_ns() - t0) / (double)n;
}

/* The capture of --capture (ANOMALIES: --capture-what anomalies) into DIR/c.pcap. */
static struct capture *capture_open(bool anomalies, const char *dir, char *path, size_t sz)
{
	struct sink_cfg cfg;
	struct capture *c = NULL;
	unsigned int q = 0;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(path, sz, "%s/c.pcap", dir);
	cfg.capture = path;
	cfg.capture_what = anomalies;
	if (capture__create(&c, &cfg, 1, 2048, "bench", &q)) {
		capture__destroy(c);
		return NULL;
	}
	return c;
}

static int measure_feature(enum feature f, __u64 n, struct feat *s, const char *dir, double *best)
{
	struct capture *c = NULL;
	char path[4096];
	int p;

	if (f == F_CAP_ANOMALIES || f == F_CAP_ALL) {
		c = capture_open(f == F_CAP_ANOMALIES, dir, path, sizeof(path));
		if (!c)
			return -EIO;
		s->cap = capture_queue(c, 0);
	}
	*best = 1e18;
	for (p = 0; p < PASSES; p++) {
		double ns = f == F_CAP_ALL ? capture_all_pass(s, n) : feature_pass(f, s, n);

		if (ns < 0) {
			fprintf(stderr, "bench-verify: the capture writer stopped taking frames\n");
			*best = -1;
			break;
		}
		if (ns < *best)
			*best = ns;
	}
	if (c) {
		int err = *best < 0 ? -EIO : capture_finish(c);

		capture__destroy(c);
		unlink(path);
		if (err)
			return err;
		if (s->cap_dropped) {
			fprintf(stderr, "bench-verify: the capture ring refused %llu frames\n",
				(unsigned long long)s->cap_dropped);
			return -EAGAIN;
		}
	}
	return 0;
}

static int measure_features(__u64 n, const struct stamp_key *key, double *ns)
{
	const char *tmp = getenv("TMPDIR");
	char dir[3584];
	struct feat s = { .rng = 0x2545f4914f6cdd1dULL };
	int f, err = -ENOMEM, i;

	s.h = calloc(1, sizeof(*s.h));
	s.ipdv = calloc(1, sizeof(*s.ipdv));
	s.frames = aligned_alloc(64, (size_t)BATCH * FRAME);
	s.gen[0] = make_gen(key, 0x600d, false);
	s.gen[1] = make_gen(key, 0x600d, true);
	snprintf(dir, sizeof(dir), "%s/bench-verify.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!s.h || !s.ipdv || !s.frames || !s.gen[0] || !s.gen[1] || !mkdtemp(dir))
		goto out;
	hist_init(s.h);
	hist_init(s.ipdv);
	for (i = 0; i < BATCH; i++)
		pkt_gen_prefill(s.gen[0], s.frames + (size_t)i * FRAME);
	for (f = 0; f < F_N; f++) {
		err = measure_feature((enum feature)f, n, &s, dir, &ns[f]);
		if (err) {
			fprintf(stderr, "bench-verify: %s: cannot measure (%s)\n", feature_names[f],
				strerror(-err));
			break;
		}
	}
	rmdir(dir);
	__asm__ volatile("" : : "r"(s.sink) : "memory");
out:
	pkt_gen__destroy(s.gen[0]);
	pkt_gen__destroy(s.gen[1]);
	free(s.frames);
	free(s.h);
	free(s.ipdv);
	return err;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: bench-verify [--frames N] [--quick] [--json FILE]\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "frames", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *json = NULL;
	double ns[K_N], fns[F_N];
	__u64 n = 4000000;
	struct stamp_key key;
	struct outfile out;
	int c, k;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = strtoull(optarg, NULL, 0);
			if (!n) {
				fprintf(stderr, "bench-verify: --frames %s: give a count above 0\n",
					optarg);
				return 2;
			}
			break;
		case 'q':
			n = 1000000;
			break;
		case 'j':
			json = optarg;
			if (outfile_check("--json", json))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	stamp_key_public(&key);
	for (k = 0; k < K_N; k++)
		if (measure((enum kind)k, n, &key, &ns[k])) {
			fprintf(stderr, "bench-verify: %s: out of memory\n", kind_names[k]);
			return 1;
		}
	if (measure_features(n, &key, fns))
		return 1;
	printf("bench-verify: %llu frames a pass, best of %d\n", (unsigned long long)n, PASSES);
	for (k = 0; k < K_N; k++)
		printf("  %-8s %7.1f ns/frame  %.2fx genuine\n", kind_names[k], ns[k],
		       ns[k] / ns[K_GENUINE]);
	printf("goal: a claim at most 2x a genuine frame: %.2fx %s\n", ns[K_CLAIMS] / ns[K_GENUINE],
	       ns[K_CLAIMS] <= 2 * ns[K_GENUINE] ? "met" : "MISSED");
	printf("the keyed check: %.1f ns a frame (genuine - unkeyed)\n",
	       ns[K_GENUINE] - ns[K_UNKEYED]);
	printf("features, ns per frame:\n");
	for (k = 0; k < F_STAMPED; k++)
		printf("  %-18s %7.1f\n", feature_names[k], fns[k]);
	printf("  %-18s %7.1f\n", "stamp_write", fns[F_STAMPED] - fns[F_UNSTAMPED]);
	if (!json)
		return 0;
	if (outfile_open(&out, "--json", json))
		return 1;
	fprintf(out.f, "{\"type\":\"bench-verify\",\"frames\":%llu,\"ns\":{",
		(unsigned long long)n);
	for (k = 0; k < K_N; k++)
		fprintf(out.f, "%s\"%s\":%.2f", k ? "," : "", kind_names[k], ns[k]);
	fprintf(out.f, "},\"features\":{\"verified\":%.2f,\"keyed_check\":%.2f", ns[K_GENUINE],
		ns[K_GENUINE] - ns[K_UNKEYED]);
	for (k = 0; k < F_STAMPED; k++)
		fprintf(out.f, ",\"%s\":%.2f", feature_names[k], fns[k]);
	fprintf(out.f, ",\"stamp_write\":%.2f", fns[F_STAMPED] - fns[F_UNSTAMPED]);
	fprintf(out.f, "},\"claim_ratio\":%.4f,\"forged_ratio\":%.4f,\"keyed_ratio\":%.4f}\n",
		ns[K_CLAIMS] / ns[K_GENUINE], ns[K_FORGED] / ns[K_GENUINE],
		ns[K_UNKEYED] / ns[K_GENUINE]);
	return outfile_commit(&out) ? 1 : 0;
}
