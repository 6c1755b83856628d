/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_XDP_DROPS_H
#define XDPSG_XDP_DROPS_H

/*
 * The drop tracer's books: the key and value of its per-CPU hash, shared by
 * bpf/xdp_drops.bpf.c (the writer) and user/sink/drops.c (the reader). Only
 * uapi types: clang -target bpf compiles this too.
 */
#include <linux/types.h>

/*
 * Two hashes of the same key and value. The run books (drop_runs) hold a
 * key per (run, reason, device) of frames whose stamp passed the keyed check,
 * so only genuine runs take their entries; a genuine drop that finds them
 * full is counted as XDPSG_DROPS_UNCHARGED in the other books (drops), which
 * hold everything else per (kind, reason, device): their keys are bounded by
 * the host's devices and reasons, not by what senders put in frames. A drop
 * that finds those full is overflow. The sizes, unless the caller asks
 * otherwise:
 */
#define XDPSG_DROPS_ENTRIES 4096
#define XDPSG_DROPS_RUN_ENTRIES 4096

/* What a counted drop is known to be. */
enum xdpsg_drops_kind {
	XDPSG_DROPS_RUN = 0, /* a data frame whose stamp passed the check: key.run is its run */
	XDPSG_DROPS_UNSTAMPED = 1, /* the frame was seen and carries no stamp */
	/* the kernel reported a count, not the frame; or the frame's stamp lies beyond the copy */
	XDPSG_DROPS_UNIDENTIFIED = 2,
	XDPSG_DROPS_FORGED = 3, /* a stamp's magic, and a tag that fails the check */
	XDPSG_DROPS_MARK = 4, /* a mark (flow 0xffff) that passed the check: key.run is its run */
	XDPSG_DROPS_UNCHARGED = 5, /* a run's frame or mark that found the run books full */
};

/*
 * Reasons of our own, for drops on the XDP path that the kernel reports
 * without an skb_drop_reason. The kernel's reasons are small numbers, or a
 * subsystem's in the upper 16 bits (SKB_DROP_REASON_SUBSYS_SHIFT); subsystem
 * 0xffff is none of the kernel's.
 */
#define XDPSG_DROPS_OWN 0xffff0000U
enum xdpsg_drops_own_reason {
	XDPSG_DROPS_XSK_RING_FULL = XDPSG_DROPS_OWN | 1, /* AF_XDP socket's rx ring full */
	XDPSG_DROPS_XSK_FILL_EMPTY = XDPSG_DROPS_OWN | 2, /* AF_XDP socket's fill ring empty */
	XDPSG_DROPS_XSK_INVALID = XDPSG_DROPS_OWN | 3, /* socket unbound, wrong queue, too long */
	XDPSG_DROPS_XDP_XMIT = XDPSG_DROPS_OWN | 4, /* ndo_xdp_xmit refused redirected frames */
	XDPSG_DROPS_XDP_TX = XDPSG_DROPS_OWN | 5, /* the driver could not send XDP_TX frames */
	/* A redirect that failed otherwise: plus the errno (1-255) it failed with. */
	XDPSG_DROPS_XDP_REDIRECT = XDPSG_DROPS_OWN | 0x100,
};

/*
 * Hash key. ifindex repeats across network namespaces, so the namespace's
 * inode number (what stat(2) of /proc/PID/ns/net or /run/netns/NAME gives)
 * tells the devices apart. Explicit padding: the whole key is hashed.
 */
struct xdpsg_drops_key {
	__u32 run; /* XDPSG_DROPS_RUN and XDPSG_DROPS_MARK only; 0 otherwise */
	__u32 reason; /* enum skb_drop_reason, or XDPSG_DROPS_* */
	__s32 ifindex; /* 0: the kernel gave no device */
	__u32 netns; /* 0 with ifindex 0 */
	__u8 kind; /* enum xdpsg_drops_kind */
	__u8 pad[3];
};

#define XDPSG_DROPS_IFNAMSIZ 16

/* Per CPU: the CPU that first counts a key writes the device's name into its copy. */
struct xdpsg_drops_val {
	__u64 packets;
	__u64 bytes; /* as the kernel had the frame: skb->len, xdp frame length; 0 unidentified */
	char dev[XDPSG_DROPS_IFNAMSIZ];
	/* kfree_skb only: the code address that dropped this CPU's last one (symbol it). */
	__u64 location;
};

/* Per CPU, what the tracer could not put in its books. */
struct xdpsg_drops_stats {
	__u64 overflow; /* packets of drops that found the other books full: counted nowhere */
	__u64 events; /* drop events handled (frames, or counts reported) */
	__u64 uncharged; /* drops of a run that found the run books full (counted as UNCHARGED) */
};

#endif
