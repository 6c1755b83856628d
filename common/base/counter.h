/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_COUNTER_H
#define XDPSG_COUNTER_H

/*
 * Counters with one writer (a worker thread) and readers on other threads
 * (the main thread's reports). Relaxed atomic loads and stores: no lock and
 * no read-modify-write on the hot path, but a reader never sees a torn value
 * and the compiler keeps every store. Put each writer's counters on a cache
 * line of their own.
 */
#define CNT_READ(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define CNT_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
/* Only for the counter's single writer: load, add, store. */
#define CNT_ADD(x, v) CNT_SET(x, (x) + (v))

#include <sched.h>
#include <linux/types.h>

/*
 * Several counters a reader must see from one moment, as the kernel's
 * seqcount does it: the writer makes *seq odd, stores, and makes it even
 * again; a reader copies between two equal even readings of *seq, and
 * tries again otherwise. Fields whose difference is reported (lost and
 * lost_final, say) then never come from two different batches. On x86 the
 * fences are compiler barriers: the cost is two stores per publish.
 */
static inline void cnt_publish(__u64 *seq, __u64 *dst, const __u64 *src, unsigned int n)
{
	__u64 s = *seq; /* only this writer changes it */
	unsigned int i;

	CNT_SET(*seq, s + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		CNT_SET(dst[i], src[i]);
	__atomic_store_n(seq, s + 2, __ATOMIC_RELEASE);
}

static inline void cnt_snapshot(const __u64 *seq, __u64 *dst, const __u64 *src, unsigned int n)
{
	unsigned int i, tries = 0;
	__u64 s0, s1;

	for (;;) {
		s0 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
		for (i = 0; i < n; i++)
			dst[i] = CNT_READ(src[i]);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s1 = CNT_READ(*seq);
		if (!(s0 & 1) && s0 == s1)
			return;
		/* The writer is mid-publish, or was preempted there: let it finish. */
		if (++tries % 64 == 0)
			sched_yield();
	}
}

#endif
