// SPDX-License-Identifier: GPL-2.0
/*
 * counter.h's published snapshots: a reader on another thread never sees
 * fields from two different publishes. The sink's 'lost' and 'lost_final'
 * are published this way; a reader that mixed two batches read a pending
 * count of lost - lost_final near 2^64.
 */
#include <pthread.h>

#include "base/counter.h"
#include "test.h"

/* Like the sink's books: lost never below lost_final, and both move together. */
struct books {
	__u64 received, lost, lost_final, pad[5];
};

struct shared {
	__u64 seq;
	struct books b;
	volatile int go, done;
};

#define PUBLISHES 1000000

#define WORDS (sizeof(struct books) / sizeof(__u64))

static void *writer(void *arg)
{
	struct shared *s = arg;
	struct books b = { 0 };
	volatile unsigned int spin;
	__u64 i;

	while (!s->go) /* the reader is reading */
		sched_yield();
	for (i = 1; i <= PUBLISHES; i++) {
		/* A batch's worth of other work between publishes, as in the sink. */
		for (spin = 0; spin < 20; spin++)
			;
		/* A gap of i % 7 that becomes final at once, and one that stays pending. */
		b.received += 1;
		b.lost_final += i % 7;
		b.lost = b.lost_final + (i & 1);
		b.pad[0] = b.received * 3;
		cnt_publish(&s->seq, (__u64 *)&s->b, (const __u64 *)&b, WORDS);
	}
	s->done = 1;
	return NULL;
}

static void test_snapshot_is_one_publish(void)
{
	static struct shared s;
	struct books r;
	pthread_t t;
	__u64 torn = 0, seen = 0, last = 0;

	if (!ASSERT_EQ(pthread_create(&t, NULL, writer, &s), 0, "writer thread"))
		return;
	s.go = 1;
	/*
	 * Read while the writer publishes a fixed number of times: how often the
	 * two overlap is the scheduler's business (on a busy machine, less), so
	 * only that no reading ever mixes two publishes is asserted (here without
	 * the sequence count, millions of readings mixed them).
	 */
	do {
		cnt_snapshot(&s.seq, (__u64 *)&r, (const __u64 *)&s.b, WORDS);
		torn += r.lost < r.lost_final || r.lost - r.lost_final > 1 ||
			r.pad[0] != r.received * 3;
		seen += r.received != last;
		last = r.received;
	} while (!s.done || last != PUBLISHES);
	pthread_join(t, NULL);
	ASSERT_EQ(torn, 0, "readings that mixed two publishes");
	ASSERT_GE(seen, 1, "the reader saw the writer's publishes");
}

static const struct test_case cases[] = {
	TEST_CASE(snapshot_is_one_publish),
};

TEST_MAIN("counter", cases)
