/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_CLOCKID_H
#define XDPSG_CLOCKID_H

/*
 * Which clock a time was read on, named so that two ends can tell whether
 * their times can be subtracted (DESIGN.md, "Across hosts"). A clock's id is
 * a hash of the kernel's boot id, the clock and its time namespace offset:
 * two processes get the same id exactly when they read one clock. The BPF
 * side reads the kernel's own CLOCK_MONOTONIC (bpf_ktime_get_ns()), which no
 * time namespace shifts: a process adds its namespace's offset to make such
 * a time its own clock's (clock_info.bpf_offset_ns).
 */
#include <stdbool.h>
#include <linux/types.h>

#include "shared.h"

struct clock_info {
	enum xdpsg_clock clock;
	__u64 id;
	/* what to add to bpf_ktime_get_ns() for this clock as this process reads it */
	__u64 bpf_offset_ns;
	bool offset_known; /* monotonic: the namespace offset was read (or no time namespaces) */
	/* what to add to this process's CLOCK_MONOTONIC (now_ns()) for this clock: 0 for it */
	__u64 user_offset_ns;
	/* adjtimex(): the host's synchronisation state */
	bool synced; /* STA_UNSYNC clear */
	__u64 maxerror_us, esterror_us;
};

/* The clock's name as options and reports spell it ("monotonic", "tai", "realtime"). */
const char *clock_name(enum xdpsg_clock c);
/* 0, or -EINVAL for a name that is none of them. */
int clock_parse(const char *s, enum xdpsg_clock *c);
/* This process's view of clock c. 0, or -errno (nothing filled). */
int clock_info_read(enum xdpsg_clock c, struct clock_info *out);
/* The clock's time now, in ns. */
__u64 clock_now_ns(enum xdpsg_clock c);

/*
 * Every clock a stamp may be on, as a receiver sees them: their ids, and
 * what turns its own CLOCK_MONOTONIC into each. The offsets hold as long
 * as nobody steps the clock (settimeofday, a leap second, ADJ_SETOFFSET):
 * slewing changes every clock's rate alike. Read once, at the start.
 */
struct clock_set {
	__u64 id[XDPSG_CLOCK_N];
	__u64 shift_ns[XDPSG_CLOCK_N]; /* clock c - this process's CLOCK_MONOTONIC */
	bool synced; /* this host's clock is synchronised (adjtimex: STA_UNSYNC clear) */
	__u64 maxerror_us; /* and its error bound (adjtimex maxerror) */
};

/* This process's clock set. 0, or -errno. */
int clock_set_read(struct clock_set *out);
/* A set with one clock, monotonic, of this id, and no error (tests, round trips). */
void clock_set_one(struct clock_set *out, __u64 monotonic_id);

#endif
