// SPDX-License-Identifier: GPL-2.0
/*
 * bench-alloc: per-frame cost of the frame allocator (alloc + free) at bulk
 * sizes 1..256, against baselines measured in the same run: the same LIFO one
 * frame at a time, and a pthread-mutex-protected shared free list, with one and
 * with two threads (two threads on one shared list vs one allocator each).
 *
 *   bench-alloc [--iterations N] [--quick] [--json FILE] [--check]
 *
 * N is the number of frames allocated and freed per measurement (default 20M,
 * --quick 2M). Each figure is the best of three runs. --check exits 1 if the
 * goals (<= 8 cycles/frame at bulk 64, >= 5x the two-thread mutex baseline)
 * are missed.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "base/outfile.h"
#include "xsk/frame_alloc.h"

#define NR_FRAMES 4096
#define FRAME_SIZE 4096
#define MAX_BULK 256
#define REPEATS 3

static const __u32 bulk_sizes[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
#define NR_BULK (sizeof(bulk_sizes) / sizeof(bulk_sizes[0]))

static double tsc_per_ns;

/* Keep a value alive without a store the compiler could drop. */
static inline void consume(__u64 v)
{
	__asm__ volatile("" : : "r"(v) : "memory");
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void calibrate(void)
{
	__u64 t0 = now_ns(), c0 = __rdtsc(), t1, c1;

	do {
		t1 = now_ns();
	} while (t1 - t0 < 100000000ULL);
	c1 = __rdtsc();
	tsc_per_ns = (double)(c1 - c0) / (double)(t1 - t0);
}

struct result {
	double ns; /* per frame, alloc + free */
	double cycles;
};

static struct frame_alloc *new_alloc(void)
{
	struct frame_alloc_opts o = { .nr_frames = NR_FRAMES, .frame_size = FRAME_SIZE };
	struct frame_alloc *fa = NULL;

	if (frame_alloc__create(&fa, &o)) {
		fprintf(stderr, "bench-alloc: cannot create an allocator\n");
		exit(1);
	}
	return fa;
}

/* One measurement: run fn over 'frames' frames, return cost per frame. */
typedef __u64 (*bench_fn)(void *ctx, __u32 bulk, __u64 frames);

static struct result measure(bench_fn fn, void *ctx, __u32 bulk, __u64 frames)
{
	struct result best = { 1e18, 1e18 };
	int r;

	for (r = 0; r < REPEATS; r++) {
		__u64 t0 = now_ns(), c0 = __rdtsc(), done;
		double ns, cyc;

		done = fn(ctx, bulk, frames);
		cyc = (double)(__rdtsc() - c0) / (double)done;
		ns = (double)(now_ns() - t0) / (double)done;
		if (cyc < best.cycles) {
			best.cycles = cyc;
			best.ns = ns;
		}
	}
	return best;
}

static __u64 run_bulk(void *ctx, __u32 bulk, __u64 frames)
{
	struct frame_alloc *fa = ctx;
	__u64 buf[MAX_BULK], done = 0, x = 0;
	__u32 i, n;

	while (done < frames) {
		n = frame_alloc_bulk(fa, bulk, buf);
		for (i = 0; i < n; i++)
			x ^= buf[i];
		frame_free_bulk(fa, n, buf);
		done += n;
	}
	consume(x);
	return done;
}

static __u64 run_one(void *ctx, __u32 bulk, __u64 frames)
{
	struct frame_alloc *fa = ctx;
	__u64 buf[MAX_BULK], done = 0, x = 0;
	__u32 i;

	while (done < frames) {
		for (i = 0; i < bulk; i++) {
			if (frame_alloc_one(fa, &buf[i]))
				break;
			x ^= buf[i];
		}
		for (i = 0; i < bulk; i++)
			frame_free_one(fa, buf[i]);
		done += bulk;
	}
	consume(x);
	return done;
}

/* The baseline: one free list shared under a mutex, a lock per frame. */
struct locked_list {
	pthread_mutex_t lock;
	__u64 stack[NR_FRAMES];
	__u32 nr_free;
};

static struct locked_list shared;

static void locked_init(struct locked_list *l)
{
	__u32 i;

	pthread_mutex_init(&l->lock, NULL);
	for (i = 0; i < NR_FRAMES; i++)
		l->stack[i] = (__u64)i * FRAME_SIZE;
	l->nr_free = NR_FRAMES;
}

static __u64 run_locked(void *ctx, __u32 bulk, __u64 frames)
{
	struct locked_list *l = ctx;
	__u64 buf[MAX_BULK], done = 0, x = 0;
	__u32 i, n;

	while (done < frames) {
		for (n = 0; n < bulk; n++) {
			bool got = false;

			pthread_mutex_lock(&l->lock);
			if (l->nr_free) {
				buf[n] = l->stack[--l->nr_free];
				got = true;
			}
			pthread_mutex_unlock(&l->lock);
			if (!got)
				break;
			x ^= buf[n];
		}
		for (i = 0; i < n; i++) {
			pthread_mutex_lock(&l->lock);
			l->stack[l->nr_free++] = buf[i];
			pthread_mutex_unlock(&l->lock);
		}
		done += n;
	}
	consume(x);
	return done;
}

struct thread_arg {
	bench_fn fn;
	void *ctx;
	__u32 bulk;
	__u64 frames;
	int cpu;
	pthread_barrier_t *barrier;
	__u64 t0, t1, c0, c1; /* measured by the thread itself */
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	pthread_barrier_wait(a->barrier);
	a->t0 = now_ns();
	a->c0 = __rdtsc();
	a->fn(a->ctx, a->bulk, a->frames);
	a->c1 = __rdtsc();
	a->t1 = now_ns();
	return NULL;
}

/*
 * Two threads at once; the cost is wall time (first start to last end, as the
 * threads saw it: the main thread may not even run meanwhile) per frame per
 * thread.
 */
static __u64 run_two(bench_fn fn, void *ctx0, void *ctx1, __u32 bulk, __u64 frames, __u64 *ns,
		     __u64 *cycles)
{
	struct thread_arg a[2] = {
		{ .fn = fn, .ctx = ctx0, .bulk = bulk, .frames = frames, .cpu = 0 },
		{ .fn = fn, .ctx = ctx1, .bulk = bulk, .frames = frames, .cpu = 1 },
	};
	pthread_barrier_t barrier;
	pthread_t t[2];
	int i;

	pthread_barrier_init(&barrier, NULL, 2);
	for (i = 0; i < 2; i++) {
		a[i].barrier = &barrier;
		if (pthread_create(&t[i], NULL, thread_main, &a[i])) {
			fprintf(stderr, "bench-alloc: cannot start a thread\n");
			exit(1);
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	*cycles = (a[0].c1 > a[1].c1 ? a[0].c1 : a[1].c1) - (a[0].c0 < a[1].c0 ? a[0].c0 : a[1].c0);
	*ns = (a[0].t1 > a[1].t1 ? a[0].t1 : a[1].t1) - (a[0].t0 < a[1].t0 ? a[0].t0 : a[1].t0);
	pthread_barrier_destroy(&barrier);
	return frames;
}

static struct result measure_two(bench_fn fn, void *ctx0, void *ctx1, __u32 bulk, __u64 frames)
{
	struct result best = { 1e18, 1e18 };
	int r;

	for (r = 0; r < REPEATS; r++) {
		__u64 ns, cyc;

		run_two(fn, ctx0, ctx1, bulk, frames, &ns, &cyc);
		if ((double)cyc / (double)frames < best.cycles) {
			best.cycles = (double)cyc / (double)frames;
			best.ns = (double)ns / (double)frames;
		}
	}
	return best;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: bench-alloc [--iterations N] [--quick] [--json FILE] [--check]\n"
		"  --iterations N  frames allocated and freed per measurement (default 20000000)\n"
		"  --quick         2000000 frames per measurement\n"
		"  --json FILE     also write the results as one JSON object\n"
		"  --check         exit 1 if a goal is missed\n");
}

/* The options; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, __u64 *frames, const char **json, bool *check)
{
	static const struct option long_opts[] = {
		{ "iterations", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int opt;

	while ((opt = getopt_long(argc, argv, "n:qj:ch", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			*frames = strtoull(optarg, &end, 10);
			if (*end || !*frames) {
				fprintf(stderr,
					"bench-alloc: --iterations '%s' is not a positive number\n",
					optarg);
				return 2;
			}
			break;
		case 'q':
			*frames = 2000000;
			break;
		case 'j':
			*json = optarg;
			if (outfile_check("--json", *json))
				return 2;
			break;
		case 'c':
			*check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct result bulk_res[NR_BULK], one_res[NR_BULK], lock1_res, lock2_res, own2_res;
	struct frame_alloc *fa, *fa2;
	const char *json = NULL;
	__u64 frames = 20000000;
	bool check = false, ok_cycles, ok_speedup;
	double at64 = 0, speedup;
	int ncpus, rc;
	size_t i;
	struct outfile out;
	FILE *f;

	rc = parse_args(argc, argv, &frames, &json, &check);
	if (rc >= 0)
		return rc;
	calibrate();
	fa = new_alloc();
	fa2 = new_alloc();
	locked_init(&shared);
	printf("bench-alloc: %llu frames per measurement, best of %d, TSC %.3f GHz\n",
	       (unsigned long long)frames, REPEATS, tsc_per_ns);
	printf("%6s %14s %14s %16s %16s\n", "bulk", "bulk ns/frame", "bulk cyc/frame",
	       "one-by-one ns", "one-by-one cyc");
	for (i = 0; i < NR_BULK; i++) {
		bulk_res[i] = measure(run_bulk, fa, bulk_sizes[i], frames);
		one_res[i] = measure(run_one, fa, bulk_sizes[i], frames);
		if (bulk_sizes[i] == 64)
			at64 = bulk_res[i].cycles;
		printf("%6u %14.2f %14.2f %16.2f %16.2f\n", bulk_sizes[i], bulk_res[i].ns,
		       bulk_res[i].cycles, one_res[i].ns, one_res[i].cycles);
	}

	/* Baselines: the mutex list with a lock per frame, as a shared pool does. */
	lock1_res = measure(run_locked, &shared, 64, frames);
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus >= 2) {
		lock2_res = measure_two(run_locked, &shared, &shared, 64, frames);
		own2_res = measure_two(run_bulk, fa, fa2, 64, frames);
	} else {
		lock2_res = lock1_res;
		own2_res = bulk_res[6];
	}
	speedup = lock2_res.ns / own2_res.ns;
	ok_cycles = at64 <= 8.0;
	ok_speedup = speedup >= 5.0;
	printf("\n%-44s %10s %10s\n", "baseline (alloc+free per frame)", "ns", "cycles");
	printf("%-44s %10.2f %10.2f\n", "mutex shared list, 1 thread", lock1_res.ns,
	       lock1_res.cycles);
	printf("%-44s %10.2f %10.2f\n", "mutex shared list, 2 threads (wall/thread)", lock2_res.ns,
	       lock2_res.cycles);
	printf("%-44s %10.2f %10.2f\n", "own allocator each, 2 threads, bulk 64", own2_res.ns,
	       own2_res.cycles);
	printf("\ngoal: <= 8 cycles/frame at bulk 64: %.2f %s\n", at64,
	       ok_cycles ? "MET" : "MISSED");
	printf("goal: >= 5x the 2-thread mutex baseline: %.1fx %s\n", speedup,
	       ok_speedup ? "MET" : "MISSED");
	if (ncpus < 2)
		printf("(one cpu online: the two-thread figures are the one-thread ones)\n");
	printf("reference: kernel slab bulk API ~64 cycles/object at bulk 16, 109 one at a time\n");

	if (json) {
		if (outfile_open(&out, "--json", json))
			return 1;
		f = out.f;
		fprintf(f, "{\"type\":\"bench-alloc\",\"frames\":%llu,\"tsc_ghz\":%.4f,\"bulk\":[",
			(unsigned long long)frames, tsc_per_ns);
		for (i = 0; i < NR_BULK; i++)
			fprintf(f,
				"%s{\"bulk\":%u,\"ns\":%.3f,\"cycles\":%.3f,\"one_ns\":%.3f,"
				"\"one_cycles\":%.3f}",
				i ? "," : "", bulk_sizes[i], bulk_res[i].ns, bulk_res[i].cycles,
				one_res[i].ns, one_res[i].cycles);
		fprintf(f,
			"],\"mutex_1t\":{\"ns\":%.3f,\"cycles\":%.3f},"
			"\"mutex_2t\":{\"ns\":%.3f,\"cycles\":%.3f},"
			"\"own_2t\":{\"ns\":%.3f,\"cycles\":%.3f},"
			"\"goals\":{\"cycles_bulk64\":%.3f,\"cycles_ok\":%s,\"speedup_2t\":%.2f,"
			"\"speedup_ok\":%s}}\n",
			lock1_res.ns, lock1_res.cycles, lock2_res.ns, lock2_res.cycles, own2_res.ns,
			own2_res.cycles, at64, ok_cycles ? "true" : "false", speedup,
			ok_speedup ? "true" : "false");
		if (outfile_commit(&out))
			return 1;
	}
	frame_alloc__destroy(fa);
	frame_alloc__destroy(fa2);
	return check && !(ok_cycles && ok_speedup) ? 1 : 0;
}
