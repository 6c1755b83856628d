/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_RUNTIME_H
#define XDPSG_RUNTIME_H

#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <linux/types.h>

/* CLOCK_MONOTONIC in nanoseconds: the clock of rates, stamps and deadlines. */
static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * t + d, or the end of time when that overflows: a deadline never wraps
 * around into the past (-d 5124095h must not end a run at once).
 */
static inline __u64 deadline_after(__u64 t_ns, __u64 d_ns)
{
	__u64 end;

	return __builtin_add_overflow(t_ns, d_ns, &end) ? ~0ULL : end;
}

/*
 * SIGINT and SIGTERM set a flag and do nothing else; loops poll it. The
 * signal that stopped the run is kept for the summary.
 */
extern volatile sig_atomic_t runtime_stop;
extern volatile sig_atomic_t runtime_signal;
int runtime_install_signals(void);

/* Worker threads: SIGINT/SIGTERM/SIGHUP go to the main thread only. */
void runtime_block_signals(void);

/* Sleep until an absolute CLOCK_MONOTONIC time; returns early on a signal. */
void runtime_sleep_until(__u64 deadline_ns);

#endif
