/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_DROPS_H
#define XDPSG_DROPS_H

/*
 * The drop tracer (bpf/xdp_drops.bpf.c), host-wide: every drop the kernel
 * reports, counted in the kernel per (run, reason, device) when the dropped
 * frame carries an xdp-gen stamp whose tag passes the check under the key
 * (a mark: as the run's mark), and otherwise per (reason, device): as forged
 * (the magic, a tag that fails), unstamped (no stamp), unidentified (the
 * kernel reports a count without the frame, or the stamp lies beyond what
 * the tracer reads) or uncharged (a run's drop that found the run books
 * full). Nothing is done per packet in user space: drops_read() copies the
 * books, drops_delta() subtracts two copies.
 *
 * Hooks are attached where the kernel has them (drops_hooks() says which);
 * skb:kfree_skb is the one the tracer cannot do without. One thread owns a
 * struct drops; drops_read() may run while the kernel counts.
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xdp_drops.h"

struct drops;
struct stamp_key;

struct drops_opts {
	unsigned int max_entries; /* the other books' size; 0: XDPSG_DROPS_ENTRIES */
	unsigned int run_entries; /* the run books' size; 0: XDPSG_DROPS_RUN_ENTRIES */
	const struct stamp_key *key; /* the stamps' key; NULL: the public key */
	/*
	 * Bits (1 << enum drops_hook) of the hooks to attach if the kernel has
	 * them; 0: all. kfree_skb is always attached.
	 */
	unsigned int hooks;
	bool no_unstamped; /* do not count frames without a stamp */
	__u32 only_netns; /* nonzero: count drops on this namespace's devices only (its inode) */
	const char *btf_path; /* kernel BTF to read; NULL: /sys/kernel/btf/vmlinux */
};

/* The hooks, as bits of drops_hooks(). */
enum drops_hook {
	DROPS_HOOK_KFREE_SKB, /* tp_btf/kfree_skb: skb drops with their reason */
	DROPS_HOOK_REDIRECT_ERR, /* tp_btf/xdp_redirect_err: failed XDP redirects, no frame */
	DROPS_HOOK_DEVMAP_XMIT, /* tp_btf/xdp_devmap_xmit: frames ndo_xdp_xmit refused */
	DROPS_HOOK_BULK_TX, /* tp_btf/xdp_bulk_tx: XDP_TX frames a driver could not send, no frame */
	DROPS_HOOK_COUNT,
};

/* One line of the books. */
struct drops_count {
	struct xdpsg_drops_key key; /* kind, run, reason, ifindex, netns */
	char dev[XDPSG_DROPS_IFNAMSIZ]; /* the device's name when first counted; "" if none */
	__u64 packets;
	__u64 bytes;
	__u64 location; /* skb drops: where in the kernel one of them was dropped; else 0 */
};

/* A copy of both books: counts sorted by key (run, reason, ifindex, netns, kind). */
struct drops_snapshot {
	struct drops_count *v;
	size_t n;
	size_t cap;
	__u64 overflow; /* packets of drops that found the other books full: counted nowhere */
	__u64 uncharged; /* drops of runs that found the run books full (kind uncharged) */
	__u64 events; /* drop events handled */
	__u64 run_entries; /* the run books' size */
	__u64 runs_used; /* and their entries in use when read (a level, not a count) */
	__u64 t_ns; /* CLOCK_MONOTONIC when read */
};

/*
 * Load the tracer and attach every hook the kernel has. Returns 0, or
 * -errno with a line in why (no program name, no newline) naming what is
 * missing and the fix; nothing is left loaded or attached then.
 */
int drops__open(const struct drops_opts *opts, struct drops **out, char *why, size_t why_len);

/* Detach and unload. NULL-safe. */
void drops__destroy(struct drops *d);

/* Bits (1 << enum drops_hook) of the hooks attached. */
unsigned int drops_hooks(const struct drops *d);
const char *drops_hook_name(enum drops_hook h);

/* The hook of that name, or -ENOENT. */
int drops_hook_by_name(const char *name);

/*
 * How often a hook's program ran and how long it took in all, as the kernel
 * counts while run-time statistics are on (bpf_enable_stats(); zeros
 * otherwise): the tracer's own cost, per event.
 */
int drops_hook_stats(const struct drops *d, enum drops_hook h, __u64 *runs, __u64 *run_ns);

/* Copy the books into s (reused across calls; drops_snapshot_free() at the end). */
int drops_read(struct drops *d, struct drops_snapshot *s);

/*
 * The same without the run books (s has no run's counts, runs_used 0): the
 * kinds counted by reason and device only, cheap to read often.
 */
int drops_read_other(struct drops *d, struct drops_snapshot *s);

/*
 * out = now - before: every count of now less the same key's in before,
 * counts that did not change left out. out must not be now or before.
 */
int drops_delta(const struct drops_snapshot *now, const struct drops_snapshot *before,
		struct drops_snapshot *out);

void drops_snapshot_free(struct drops_snapshot *s);

/*
 * The reason's name: the kernel's, from its BTF enum skb_drop_reason without
 * the SKB_DROP_REASON_ prefix ("QDISC_DROP"), or one of ours for the XDP path
 * ("XDP_XMIT", "XSK_RING_FULL"); a value neither knows as "REASON_<n>".
 * Returns buf or a string owned by d.
 */
const char *drops_reason_name(const struct drops *d, __u32 reason, char *buf, size_t len);

/*
 * A count's location as "function+0xoffset", from /proc/kallsyms (read at the
 * first call). -ENOENT when there is none or kallsyms hides addresses.
 */
int drops_location_name(struct drops *d, __u64 location, char *buf, size_t len);

/* "run", "unstamped", "unidentified", "forged", "mark" or "uncharged". */
const char *drops_kind_name(__u8 kind);

/*
 * The name of the network namespace whose inode number is inum: a name in
 * /run/netns, or "" for the caller's own. -ENOENT if neither.
 */
int drops_netns_name(__u32 inum, char *buf, size_t len);

/*
 * How a run's causes meet the frames it is missing (lost, and those missing
 * before its first). missing = causes + unexplained - over - marks_charged;
 * at most one of unexplained and over is non-zero. Drops counted without
 * their frame (a socket's full ring) are charged by when they happened, and
 * a run's marks are dropped there too: of the causes beyond what is missing,
 * as many of the unidentified ones as the run's marks that never arrived
 * (marks_missing, known once its end is seen) less those the tracer saw
 * dropped as marks (marks_seen) are those marks: marks_charged. What is
 * over beyond that is a frame dropped and delivered anyway, or the tail of
 * a run whose end was not seen.
 */
struct drops_balance {
	__u64 unexplained, over, marks_charged;
};

struct drops_balance drops_balance(__s64 missing, __u64 causes, __u64 unidentified,
				   __u64 marks_seen, __u64 marks_missing);

#endif
