// SPDX-License-Identifier: GPL-2.0
/*
 * bench-xcpu: what one cache line costs to move between two CPUs, as the
 * round trip of a flag that two pinned threads hand back and forth.
 *
 *   bench-xcpu [--cpus A,B] [--rounds N]
 *
 * Default CPUs 0 and 1, 200000 rounds a pass; the best and the worst of five
 * passes are printed. On veth the kernel copies each frame into the UMEM on
 * the sender's CPU, and a verifying AF_XDP sink on another CPU reads it there:
 * every frame is such a trip. On the 2-vCPU VM of docs/performance.md the
 * figure is about 500 ns at some times and about 180 ns at others (where the
 * host puts the two vCPUs), and the verifying sink's rate off the receive CPU
 * moves with it: run this beside a benchmark whose pairs disagree.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "base/runtime.h"

#define PASSES 5

struct xcpu {
	_Alignas(64) atomic_uint turn; /* the line that travels: odd is the other side's turn */
	_Alignas(64) unsigned long rounds;
	int cpu;
	int err;
};

static void *answer(void *arg)
{
	struct xcpu *x = arg;
	unsigned int want = 1;
	unsigned long i;

	x->err = -cpu_pin_self(x->cpu);
	for (i = 0; i < (unsigned long)PASSES * x->rounds; i++, want += 2) {
		while (atomic_load_explicit(&x->turn, memory_order_acquire) != want)
			;
		atomic_store_explicit(&x->turn, want + 1, memory_order_release);
	}
	return NULL;
}

static int parse_cpus(const char *s, int *a, int *b)
{
	char *end;
	long x, y;

	errno = 0;
	x = strtol(s, &end, 10);
	if (end == s || *end != ',' || x < 0 || x >= CPU_SETSIZE)
		return -1;
	s = end + 1;
	y = strtol(s, &end, 10);
	if (end == s || *end || errno || y < 0 || y >= CPU_SETSIZE || x == y)
		return -1;
	*a = (int)x;
	*b = (int)y;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ .name = "cpus", .has_arg = required_argument, .val = 'c' },
		{ .name = "rounds", .has_arg = required_argument, .val = 'n' },
		{ .name = "help", .has_arg = no_argument, .val = 'h' },
		{ 0 },
	};
	static struct xcpu x = { .rounds = 200000, .cpu = 1 };
	double best = 0, worst = 0, ns;
	__u64 t0;
	unsigned int turn = 0;
	unsigned long i;
	cpu_set_t allowed;
	pthread_t t;
	int c, me = 0, p, err;
	char *end;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (parse_cpus(optarg, &me, &x.cpu)) {
				fprintf(stderr,
					"bench-xcpu: --cpus '%s' is not two different CPUs "
					"A,B; e.g. --cpus 0,1\n",
					optarg);
				return 2;
			}
			break;
		case 'n':
			errno = 0;
			x.rounds = strtoul(optarg, &end, 10);
			if (end == optarg || *end || errno || !x.rounds || x.rounds > 100000000UL) {
				fprintf(stderr,
					"bench-xcpu: --rounds '%s' is not a count of "
					"1-100000000; e.g. --rounds 200000\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			printf("Usage: bench-xcpu [--cpus A,B] [--rounds N]\n");
			return 0;
		default:
			fprintf(stderr, "bench-xcpu: see bench-xcpu --help\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bench-xcpu: unexpected argument '%s'; see bench-xcpu --help\n",
			argv[optind]);
		return 2;
	}
	/* Both CPUs must be ours to run on: two threads spinning on one CPU never finish. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) || !CPU_ISSET(me, &allowed) ||
	    !CPU_ISSET(x.cpu, &allowed)) {
		fprintf(stderr,
			"bench-xcpu: CPUs %d and %d are not both online and allowed here; "
			"pick two with --cpus (nproc: %d)\n",
			me, x.cpu, CPU_COUNT(&allowed));
		return 2;
	}
	err = -cpu_pin_self(me);
	if (err) {
		fprintf(stderr,
			"bench-xcpu: cannot run on CPU %d: %s; pick online CPUs with --cpus\n", me,
			strerror(err));
		return 2;
	}
	err = pthread_create(&t, NULL, answer, &x);
	if (err) {
		fprintf(stderr, "bench-xcpu: cannot start a thread: %s\n", strerror(err));
		return 1;
	}
	for (p = 0; p < PASSES; p++) {
		t0 = now_ns();
		for (i = 0; i < x.rounds; i++, turn += 2) {
			atomic_store_explicit(&x.turn, turn + 1, memory_order_release);
			while (atomic_load_explicit(&x.turn, memory_order_acquire) != turn + 2)
				;
		}
		ns = (double)(now_ns() - t0) / (double)x.rounds;
		if (!p || ns < best)
			best = ns;
		if (ns > worst)
			worst = ns;
	}
	pthread_join(t, NULL);
	if (x.err) {
		fprintf(stderr,
			"bench-xcpu: cannot run on CPU %d: %s; pick online CPUs with --cpus\n",
			x.cpu, strerror(x.err));
		return 2;
	}
	printf("CPU %d <-> CPU %d: %.0f ns a round trip (best of %d passes of %lu; worst %.0f)\n",
	       me, x.cpu, best, PASSES, x.rounds, worst);
	return 0;
}
