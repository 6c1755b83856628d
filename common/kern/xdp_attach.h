/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_XDP_ATTACH_H
#define XDPSG_XDP_ATTACH_H

#include <stdbool.h>

struct bpf_object;
struct xdp_program;

/*
 * Attach one program of an already loaded BPF object to an interface, through
 * a BPF link where the kernel has them (the program then goes away with the
 * process, even after SIGKILL), else through libxdp (netlink), refusing to take an interface that holds another program unless
 * forced, and telling a stale program of our own (left by a killed run) from
 * one in use by a running process.
 */
enum xdpsg_mode {
	XDPSG_MODE_NATIVE = 0,
	XDPSG_MODE_SKB = 1,
};

struct xdp_attach_opts {
	const char *tool; /* "xdp-sink": for messages */
	const char *own_prefix; /* program names that are ours, e.g. "xdp_sink_" */
	const char *ifname;
	int ifindex;
	enum xdpsg_mode mode;
	bool force;
	unsigned int mtu; /* the interface's, for the message when it is too large (0: unknown) */
};

struct xdp_attachment;

/*
 * 0 on success. On failure prints one line naming the problem and the fix and
 * returns -EBUSY (interface taken), -EOPNOTSUPP (mode unsupported, or the
 * interface's MTU too large for a program that takes frames in one buffer)
 * or another -errno (runtime failure).
 */
int xdp_attachment__create(struct bpf_object *obj, const char *prog_name,
			   const struct xdp_attach_opts *opts, struct xdp_attachment **out);
/* Detach and free; NULL-safe. */
void xdp_attachment__destroy(struct xdp_attachment *a);
/* True when libxdp attached the program alone (its dispatcher unavailable). */
bool xdp_attachment_is_single(const struct xdp_attachment *a);
/*
 * False once the program is no longer attached through this attachment:
 * another process took the interface (--force), or removed it ('ip link set
 * dev X xdp off'). Two syscalls at most: for a tick, not a packet.
 */
bool xdp_attachment_held(const struct xdp_attachment *a);

/*
 * Which other process, if any, holds an fd to a BPF object: key "prog_id" or
 * "map_id" as /proc/PID/fdinfo shows them (a link's fdinfo shows its prog_id).
 * 0 when none does.
 */
int xdp_attach_find_holder(const char *key, unsigned int id);

/* Describe what holds an interface now; 0 and *prog_id 0 when nothing. */
int xdp_attach_query(int ifindex, unsigned int *prog_id, char *name, unsigned long name_len,
		     int *holder_pid);

#endif
