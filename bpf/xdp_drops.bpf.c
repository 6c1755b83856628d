// SPDX-License-Identifier: GPL-2.0
/*
 * The drop tracer: on every drop the kernel reports, find the xdp-gen stamp
 * in the dropped frame, check its keyed tag, and count the drop per (run,
 * reason, device); frames without a stamp, and stamps that fail the check
 * (forged), are counted apart per (reason, device), never as a run's; drops
 * reported as a bare count (no frame) are counted per (reason, device) as
 * unidentified.
 *
 * It runs only on drops, except xdp_devmap_xmit, which fires once per bulk
 * (up to 16 frames) a devmap or BPF_PROG_RUN flushes into a device, drops
 * or not. User space (user/sink/drops.c) attaches what the kernel has. Every
 * hook is a tracepoint: fentry/fexit, which could see the frame of a failed
 * redirect, do not load on the kernel this was written on (EPERM).
 *
 * Kernel structs are read through CO-RE: the few fields used are declared
 * below and relocated against the running kernel's BTF.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/errno.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "shared.h"
#include "stamp_tag.h"
#include "xdp_drops.h"
#include "drops_find.h"

struct bpf_prog;

/* A devmap bulk queue's frames (DEV_MAP_BULK_SIZE). */
#define DROPS_BULK 16

struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct net {
	struct ns_common ns;
} __attribute__((preserve_access_index));

struct net_device {
	char name[XDPSG_DROPS_IFNAMSIZ];
	int ifindex;
	struct {
		struct net *net;
	} nd_net;
	struct bpf_prog *xdp_prog; /* set only for generic (skb-mode) XDP */
	struct xdp_dev_bulk_queue *xdp_bulkq; /* per CPU */
} __attribute__((preserve_access_index));

struct sk_buff {
	struct net_device *dev;
	unsigned int len;
	unsigned int data_len;
	__u16 mac_header;
	unsigned char *head;
	unsigned char *data;
} __attribute__((preserve_access_index));

struct xdp_frame {
	void *data;
	__u32 len;
} __attribute__((preserve_access_index));

struct xdp_dev_bulk_queue {
	struct xdp_frame *q[DROPS_BULK];
	struct net_device *dev;
	struct net_device *dev_rx;
	struct bpf_prog *xdp_prog;
} __attribute__((preserve_access_index));

/* A devmap entry: the target device. */
struct bpf_dtab_netdev {
	struct net_device *dev;
} __attribute__((preserve_access_index));

/* A BPF array map as the kernel keeps it: a per-CPU one holds per-CPU pointers. */
struct bpf_array {
	void *pptrs[0];
} __attribute__((preserve_access_index));

/* Set before load. */
const volatile bool count_unstamped = true;
/*
 * Nonzero: count only drops on devices of this network namespace (its
 * inode), as if the tracer ran on a host of its own (--drop-causes local).
 */
const volatile __u32 only_netns = 0;

/* The run books: genuine runs' drops and marks (xdp_drops.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XDPSG_DROPS_RUN_ENTRIES); /* resized before load */
	__type(key, struct xdpsg_drops_key);
	__type(value, struct xdpsg_drops_val);
} drop_runs SEC(".maps");

/* The other books: every other kind, per (kind, reason, device). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XDPSG_DROPS_ENTRIES); /* resized before load */
	__type(key, struct xdpsg_drops_key);
	__type(value, struct xdpsg_drops_val);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdpsg_drops_stats);
} drop_stats SEC(".maps");

/*
 * Per CPU: this CPU's per-CPU offset, which turns any per-CPU pointer of the
 * kernel into this CPU's object. Found as the address of this CPU's copy of
 * this map's value less the map's per-CPU pointer: the kernel's own offset
 * variables (this_cpu_off, __per_cpu_offset) cannot be ksyms where kallsyms
 * lacks data symbols (no CONFIG_KALLSYMS_ALL).
 */
struct cpu_self {
	__u64 addr; /* this copy's address, stored by this CPU */
	__u64 map; /* the map's address */
	__u64 offset;
	__u64 known; /* offset is set */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_self);
} cpu_self SEC(".maps");

#define SKB_DROP_REASON_CONSUMED 1 /* 0 and 1 are not drops (consume_skb's) */
#define MAC_HEADER_UNSET 0xffff
#define REDIRECT_BY_IFINDEX 0x7fffffff /* bpf_redirect(): no map, map_id INT_MAX, tgt the device */

static __always_inline struct xdpsg_drops_stats *stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&drop_stats, &zero);
}

/* Add to this CPU's copy of key's entry in books, if there is one. */
static __always_inline bool add(void *books, const struct xdpsg_drops_key *key, __u64 packets,
				__u64 bytes, __u64 location)
{
	struct xdpsg_drops_val *v = bpf_map_lookup_elem(books, key);

	if (!v)
		return false;
	v->packets += packets;
	v->bytes += bytes;
	if (location)
		v->location = location;
	return true;
}

/*
 * Count in key's entry of books; the CPU that makes the entry names the
 * device in its copy. False when the books are full.
 */
static __always_inline bool count_in(void *books, const struct xdpsg_drops_key *key, __u64 packets,
				     __u64 bytes, const struct net_device *dev, __u64 location)
{
	struct xdpsg_drops_val nv = {};

	if (add(books, key, packets, bytes, location))
		return true;
	nv.packets = packets;
	nv.bytes = bytes;
	nv.location = location;
	if (dev)
		BPF_CORE_READ_STR_INTO(&nv.dev, dev, name);
	/* Failing, they are full, or another CPU made the entry since the lookup. */
	return !bpf_map_update_elem(books, key, &nv, BPF_NOEXIST) ||
	       add(books, key, packets, bytes, location);
}

/*
 * A drop: a run's (RUN, MARK) in the run books, where a run that finds no
 * entry is counted as UNCHARGED in the other books, by reason and device
 * (its run is lost, not its drop); every other kind in the other books.
 */
static __always_inline void count(struct xdpsg_drops_key *key, __u64 packets, __u64 bytes,
				  const struct net_device *dev, __u64 location)
{
	struct xdpsg_drops_stats *s;
	bool runs = key->kind == XDPSG_DROPS_RUN || key->kind == XDPSG_DROPS_MARK;

	if (only_netns && key->netns != only_netns)
		return;
	s = stats();
	if (s)
		s->events++;
	if (runs && count_in(&drop_runs, key, packets, bytes, dev, location))
		return;
	if (runs) {
		if (s)
			s->uncharged += packets;
		key->kind = XDPSG_DROPS_UNCHARGED;
		key->run = 0;
	}
	if (!count_in(&drops, key, packets, bytes, dev, location) && s)
		s->overflow += packets;
}

static __always_inline void key_dev(struct xdpsg_drops_key *key, const struct net_device *dev)
{
	if (!dev)
		return;
	key->ifindex = BPF_CORE_READ(dev, ifindex);
	key->netns = BPF_CORE_READ(dev, nd_net.net, ns.inum);
}

/* A dropped frame of flen bytes, lin of them readable from its Ethernet header on. */
static __always_inline void count_frame(const void *frame, __s64 lin, __u64 flen, __u64 bytes,
					__u32 reason, const struct net_device *dev, __u64 location)
{
	struct xdpsg_drops_key key = { .reason = reason };
	__u32 run = 0;

	switch (find_stamp(frame, lin, flen, &run)) {
	case FOUND_DATA:
		key.kind = XDPSG_DROPS_RUN;
		key.run = run;
		break;
	case FOUND_MARK:
		key.kind = XDPSG_DROPS_MARK;
		key.run = run;
		break;
	case FOUND_FORGED:
		key.kind = XDPSG_DROPS_FORGED;
		break;
	case FOUND_UNREAD:
		key.kind = XDPSG_DROPS_UNIDENTIFIED;
		break;
	default:
		if (!count_unstamped)
			return;
		key.kind = XDPSG_DROPS_UNSTAMPED;
		break;
	}
	key_dev(&key, dev);
	count(&key, 1, bytes, dev, location);
}

static __always_inline void count_unidentified(__u32 reason, const struct net_device *dev,
					       __u64 packets)
{
	struct xdpsg_drops_key key = { .reason = reason, .kind = XDPSG_DROPS_UNIDENTIFIED };

	key_dev(&key, dev);
	count(&key, packets, 0, dev, 0);
}

/*
 * TP_PROTO(skb, location, reason, rx_sk): every freed skb that was dropped
 * (consume_skb is the other tracepoint). The frame starts at the MAC header
 * when one is set (receive path, and the transmit path from
 * dev_queue_xmit() on), else at data.
 */
SEC("tp_btf/kfree_skb")
int BPF_PROG(drops_kfree_skb, struct sk_buff *skb, void *location, int reason)
{
	unsigned char *data = skb->data, *mac = data;
	__u16 mh = skb->mac_header;

	if ((__u32)reason <= SKB_DROP_REASON_CONSUMED)
		return 0;
	if (mh != MAC_HEADER_UNSET)
		mac = skb->head + mh;
	count_frame(mac, (__s64)(data - mac) + skb->len - skb->data_len,
		    (__u64)(data - mac) + skb->len, skb->len, reason, skb->dev, (__u64)location);
	return 0;
}

static __always_inline __u32 redirect_reason(__u32 map_type, int err)
{
	if (map_type != BPF_MAP_TYPE_XSKMAP)
		return XDPSG_DROPS_XDP_REDIRECT | (err < 0 && err > -256 ? -err : 0);
	if (err == -ENOBUFS)
		return XDPSG_DROPS_XSK_RING_FULL;
	if (err == -ENOMEM)
		return XDPSG_DROPS_XSK_FILL_EMPTY;
	return XDPSG_DROPS_XSK_INVALID;
}

/*
 * TP_PROTO(dev, xdp_prog, tgt, err, map_type, map_id, index): a redirect
 * that failed; the frame is the caller's and out of reach. Counted on the
 * device it was meant for when there is one (a devmap entry, an ifindex),
 * else on the receiving device (an AF_XDP socket's). In generic (skb-mode)
 * XDP the skb is then freed with reason XDP, which kfree_skb counts with its
 * frame: not counted here.
 */
SEC("tp_btf/xdp_redirect_err")
int BPF_PROG(drops_redir_err, const struct net_device *dev, const struct bpf_prog *xdp_prog,
	     const void *tgt, int err, __u32 map_type, __u32 map_id)
{
	const struct net_device *to = NULL;

	if (xdp_prog && BPF_CORE_READ(dev, xdp_prog) == xdp_prog)
		return 0;
	if (tgt && (map_type == BPF_MAP_TYPE_DEVMAP || map_type == BPF_MAP_TYPE_DEVMAP_HASH))
		to = BPF_CORE_READ((const struct bpf_dtab_netdev *)tgt, dev);
	else if (tgt && map_type == BPF_MAP_TYPE_UNSPEC && map_id == REDIRECT_BY_IFINDEX)
		to = tgt;
	count_unidentified(redirect_reason(map_type, err), to ? to : dev, 1);
	return 0;
}

struct bulk_ctx {
	struct xdp_frame *q[DROPS_BULK];
	__u64 dev; /* to, as read from the bulk queue: a number a global function takes */
	__u32 first;
};

/*
 * One refused frame of a devmap bulk. A global function: the verifier checks
 * it once, alone, with any frame and device. Inlined into bulk_frame(), the
 * parse and the tag check were walked again for every state of the loop's
 * callback, and the program exceeded the verifier's million instructions.
 */
__noinline int xmit_frame(__u64 frame, __u32 len, __u64 dev)
{
	count_frame((const void *)frame, len, len, len, XDPSG_DROPS_XDP_XMIT,
		    (const struct net_device *)dev, 0);
	return 0;
}

static long bulk_frame(__u64 i, void *arg)
{
	struct bulk_ctx *c = arg;
	struct xdp_frame *f;
	__u32 k = c->first + (__u32)i;

	if (k >= DROPS_BULK)
		return 1;
	f = c->q[k];
	if (!f)
		return 0;
	xmit_frame((__u64)BPF_CORE_READ(f, data), BPF_CORE_READ(f, len), c->dev);
	return 0;
}

static __always_inline bool this_cpu_offset(__u64 *offset)
{
	struct cpu_self *self;
	__u64 base, map;
	__u32 zero = 0;
	void *pptr;

	self = bpf_map_lookup_elem(&cpu_self, &zero);
	if (!self)
		return false;
	if (!self->known) {
		/* Stored and read back: as numbers, which the verifier lets us add. */
		self->addr = (__u64)self;
		self->map = (__u64)&cpu_self;
		map = *(volatile __u64 *)&self->map;
		pptr = (void *)(map + bpf_core_field_offset(struct bpf_array, pptrs));
		if (bpf_probe_read_kernel(&base, sizeof(base), pptr) || !base)
			return false;
		self->offset = *(volatile __u64 *)&self->addr - base;
		self->known = 1;
	}
	*offset = self->offset;
	return true;
}

/*
 * This CPU's devmap bulk queue of dev, where bq_xmit_all() left the frames
 * it just flushed: q[0..sent) went out, q[sent..sent+drops) were refused and
 * returned to their page pool a moment ago, on this CPU, in this softirq:
 * their pages are not handed out again before the tracepoint returns.
 */
static __always_inline bool bulk_frames(const struct net_device *from, const struct net_device *to,
					struct bulk_ctx *c)
{
	struct xdp_dev_bulk_queue *bq;
	__u64 off;

	if (!this_cpu_offset(&off))
		return false;
	bq = (void *)((__u64)BPF_CORE_READ(to, xdp_bulkq) + off);
	c->dev = (__u64)BPF_CORE_READ(bq, dev);
	if (bpf_core_field_size(bq->q) != sizeof(c->q) || c->dev != (__u64)to ||
	    BPF_CORE_READ(bq, dev_rx) != from)
		return false;
	/* An egress program reorders the queue: then the refused ones are not known. */
	if (bpf_core_field_exists(bq->xdp_prog) && BPF_CORE_READ(bq, xdp_prog))
		return false;
	return !BPF_CORE_READ_INTO(&c->q, bq, q);
}

/*
 * TP_PROTO(from_dev, to_dev, sent, drops, err): one devmap bulk flushed into
 * to_dev by ndo_xdp_xmit (an XDP_REDIRECT, or BPF_PROG_RUN live frames); the
 * frames refused (a full ring, a veth peer without NAPI) are counted with
 * their run when the bulk queue still names them, else as unidentified.
 */
SEC("tp_btf/xdp_devmap_xmit")
int BPF_PROG(drops_devmap, const struct net_device *from, const struct net_device *to, int sent,
	     int drops)
{
	struct bulk_ctx c = {};

	if (drops <= 0)
		return 0;
	if (sent < 0 || sent + drops > DROPS_BULK || !bulk_frames(from, to, &c)) {
		count_unidentified(XDPSG_DROPS_XDP_XMIT, to, drops);
		return 0;
	}
	c.first = sent;
	bpf_loop(drops, bulk_frame, &c, 0);
	return 0;
}

/* TP_PROTO(dev, sent, drops, err): a driver's XDP_TX bulk; its queue is on the driver's stack. */
SEC("tp_btf/xdp_bulk_tx")
int BPF_PROG(drops_bulk_tx, const struct net_device *dev, int sent, int drops)
{
	if (drops > 0)
		count_unidentified(XDPSG_DROPS_XDP_TX, dev, drops);
	return 0;
}

char _license[] SEC("license") = "GPL";
