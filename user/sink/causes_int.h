/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SINK_CAUSES_INT_H
#define XDPSG_SINK_CAUSES_INT_H

/*
 * The books --drop-causes keeps (causes.h), shared by the join (causes.c)
 * and its reports (causes_report.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "causes.h"
#include "causes_remote.h"
#include "drops.h"

/* A cause of a run's losses, or a count charged to no run (run 0, !charged). */
struct cause {
	struct drops_count c;
	__u32 run;
	bool charged; /* an unidentified count charged to the run arriving when it was dropped */
	bool unseen; /* a run's drops, but no frame of that run reached the sink */
	bool mark; /* the run's marks dropped: no frame of its books, never a cause of lost */
	/* another host's count (--drop-causes-from): its source and labels; NULL: this host's */
	const struct causes_src *src;
	const struct remote_cause *rc;
};

/*
 * Drops without their run (unidentified: the socket's XSK_*, XDP_XMIT the
 * tracer could not read, a stamp beyond its copy) are read every
 * CAUSES_SLICE_NS and charged by when they happened: to the one run whose
 * frames were arriving then (a run's first to last receive, widened by
 * CAUSES_MARGIN_NS), on the sink's own interface always, elsewhere only on a
 * device where the tracer counted drops of the sink's runs by their stamp (a
 * device on their path: a drop on a device no run of ours goes through is
 * not ours because of when it happened).
 */
#define CAUSES_SLICE_NS 50000000ULL
#define CAUSES_MARGIN_NS 20000000ULL
/* --drop-causes-from: how long a reading may take while the run goes on, and at its end. */
#define CAUSES_REMOTE_TICK_MS 300
#define CAUSES_REMOTE_END_MS 2000

/* An unidentified count's growth between two readings. */
struct slice {
	__u64 t0, t1;
	struct xdpsg_drops_key key; /* reason and device */
	__u64 packets;
};

/* An unidentified count as last read. */
struct seen {
	struct xdpsg_drops_key key;
	__u64 packets;
};

struct causes {
	struct drops *d;
	struct slice *sl; /* unidentified drops, by time */
	size_t nsl, capsl;
	struct seen *seen; /* their totals at the last reading, by key */
	size_t nseen;
	__u64 last_t;
	int ifindex; /* the sink's interface */
	__u32 netns; /* and its namespace's inode */
	bool settled;
	struct drops_snapshot snap;
	struct cause *v;
	size_t n;
	__u64 unstamped; /* frames without a stamp the tracer saw dropped: never a run's */
	__u64 forged; /* frames whose stamp failed the check: never a run's */
	struct causes_src *src; /* --drop-causes-from, in the order given */
	unsigned int nsrc;
	__u64 remote_every, remote_next; /* read them every interval */
};

/* A run's causes (mark false) or its marks dropped (mark true); only the unidentified ones too. */
__u64 causes_run_sum(const struct causes *c, __u32 run, bool mark, bool unidentified_only);
__u64 causes_run_total(const struct causes *c, __u32 run, bool mark);
/* The run's causes against what its books miss (drops_balance()). */
struct drops_balance causes_balance(const struct causes *c, __u32 run,
				    const struct causes_books *bk);

#endif
