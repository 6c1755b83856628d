/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_SINK_H
#define XDPSG_SINK_H

/*
 * xdp-sink's parts: main.c (options and the command table), sink.c (the life
 * of a run: preflight, load, pin, attach, the run skeleton's callbacks,
 * teardown), report.c (readings and the report lines every mode shares),
 * pins.c, and one file per mode family behind struct sink_mode_ops: xdp.c
 * (drop, pass, tx, redirect), cpumap.c (redirect-cpu) and xsk.c. Everything here runs on the main
 * thread; only xsk.c starts other threads, and it owns what they touch.
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "base/json_writer.h"
#include "cli/params.h"
#include "kern/iface.h"
#include "pkt/stamp.h"
#include "report/metrics.h"
#include "report/run.h"
#include "shared.h"
#include "xsk/xsk_queue.h"

#define SINK_PIN_ROOT "/sys/fs/bpf/xdp-sink"
/* How often the counters are read: --count's precision and the traffic span's. */
#define SINK_TICK_NS 10000000ULL
/*
 * Above this MTU a frame may not fit one buffer: every mode loads its programs
 * frags-aware there, and xsk binds its sockets with XDP_USE_SG (veth refuses a
 * program that is not frags-aware from an MTU of about 3.5 KB). At or below
 * it, the programs are the single-buffer ones, which cost nothing extra.
 */
#define SINK_MTU_ONE_BUF 1500U

/* A program bound to one device, whose metadata kfuncs reach its driver (Linux 6.3; older headers lack it). */
#define SINK_F_XDP_DEV_BOUND_ONLY (1U << 6)

/* --drop-causes: where the local drop tracer counts. */
enum sink_drop_causes {
	SINK_CAUSES_OFF = 0,
	SINK_CAUSES_HOST = 1, /* every namespace's devices (one host: the default) */
	SINK_CAUSES_LOCAL = 2, /* this namespace's only, as a host of its own */
};

struct iface_estats;
struct kstats;
struct kstats_reader;
struct causes;
struct xdp_attachment;
struct xdp_sink_bpf;

struct sink_cfg {
	__u64 duration;
	__u64 count;
	__u64 interval;
	bool json;
	bool quiet;
	int verbose;
	int xdp_mode;
	bool force;
	bool pin;
	bool keep_pins;
	bool parse;
	bool kernel_stats;
	__u64 cost;
	bool reflect; /* tx: swap addresses and ports too */
	const char *to;
	int packet_op; /* enum xdpsg_packet_op */
	/* redirect-cpu */
	struct param_list remote_cpus;
	__u64 qsize;
	int remote_action; /* 0 drop, 1 pass */
	/* xsk */
	struct param_list queues, cpus;
	__u64 batch, ring_size;
	__u64 episodes; /* the longest loss episodes kept whole per run (--episodes) */
	struct xsk_cli xsk;
	bool poll, time_all, hw_time, no_verify, follow_rx, no_follow_rx;
	bool read_data; /* xsk --no-verify: read each delivered frame's first bytes */
	bool read_frames; /* xsk: verify from the frames, not from the program's records */
	int drop_causes; /* enum sink_drop_causes: the drop tracer, joined with the runs' books */
	bool drops_local; /* drops: --local, this namespace's devices only */
	struct param_strings causes_from; /* --drop-causes-from URL: a DUT host's tracer */
	__u64 drop_runs; /* --drop-runs: the tracer's run books' size; 0: its default */
	const char *stamp_key; /* --stamp-key FILE */
	const char *hist;
	struct metrics_cli metrics;
	/* --capture (xsk; drop with --sample) */
	const char *capture;
	int capture_what; /* 0 all, 1 anomalies */
	int capture_format; /* 0 from the name, 1 pcap, 2 pcapng */
	__u64 snaplen, capture_max, sample;
};

/* Counters at one moment: the program's maps plus the kernel's own. */
struct sink_snap {
	struct run_snap rs; /* first: the run skeleton's view */
	struct sink_stats total;
	struct sink_stats q[XDPSG_STATS_SLOTS];
	struct sink_stats *cpu; /* per CPU, summed over queues */
	struct link_stats link;
	__u64 veth_rx_drops; /* dropped in the veth receive path after XDP (e.g. failed redirects) */
	__u64 xdp_tx_errors; /* XDP_TX frames the kernel failed to send */
	/* veth: what the kernel's XDP counters saw on queues added during the run */
	__u64 added_queue_xdp;
	struct kstats *ks; /* with --kernel-stats */
	void *mode; /* the mode's own reading, ops->snap_size() bytes, copied as they are */
};

/*
 * Drops between two readings, where each is counted; the rows of the drop
 * reasons' table (counters.c) point into it. The program's counters are all
 * here, so a reason the program counts is a row and nothing else.
 */
struct sink_drops {
	struct sink_stats prog; /* the program's counts */
	__u64 veth_rx_drops;
	__u64 xdp_tx_errors;
	__u64 xdp_xmit_errors;
	__u64 cpumap_unseen; /* redirect-cpu: redirected, not (yet) seen on the remote CPU */
	struct xdp_statistics xsk; /* the sockets', summed */
};

/*
 * What a report can show (struct sink_mode_ops.has, and the 'when' of the
 * counter tables' rows): a mode's bits, then the ones the run adds.
 */
#define SINK_HAS_VERDICT (1U << 0) /* the program's verdict is the packet's fate (not xsk) */
#define SINK_HAS_TX (1U << 1) /* frames bounced out: the kernel may drop them */
#define SINK_HAS_REDIRECT (1U << 2) /* a devmap target, which may drop */
#define SINK_HAS_XSK (1U << 3) /* AF_XDP sockets and their books */
#define SINK_HAS_VETH (1U << 4) /* run time: the interface is a veth, its counters are read */
#define SINK_HAS_PARSE (1U << 5) /* run time: --parse */
#define SINK_HAS_LIVE (1U << 6) /* run time: an interval's exposition, not the final one */
#define SINK_HAS_DROPS (1U << 7) /* the drop tracer alone (the drops command) */
#define SINK_HAS_CPUMAP (1U << 8) /* redirect-cpu: a cpumap and its program on other CPUs */
#define SINK_HAS_RUNTIME (SINK_HAS_VETH | SINK_HAS_PARSE | SINK_HAS_LIVE)

/* The maps a mode pins (bits). */
#define SINK_PIN_STATS (1U << 0)
#define SINK_PIN_TX_PORT (1U << 1)
#define SINK_PIN_XSKS (1U << 2)
#define SINK_PIN_BLACKHOLE (1U << 3) /* blackhole and blackhole_stats */

struct sink;

/*
 * What makes a mode a mode. Optional callbacks may be NULL. A report's text or
 * JSON is written by report.c, which calls the mode for its own parts.
 */
struct sink_mode_ops {
	const char *prog; /* the BPF program loaded and attached */
	const char *remote_prog; /* loaded too, not attached: the cpumap entries' program */
	unsigned int pins; /* SINK_PIN_* */
	unsigned int has; /* SINK_*: which counters its reports can show */
	bool user_cost; /* --cost is spent in user space, not in the program */
	bool rx_time; /* the program writes each frame's receive time in front of it */
	bool sends; /* the tx and redirect verdicts send packets out */
	/* Preflight, before the kernel is touched: check and plan, allocate sk->ms. */
	int (*plan)(struct sink *sk);
	/* Before the load: the mode's settings in rodata, its maps' sizes. */
	void (*configure)(struct sink *sk);
	/* After the load, before the pins: fill the mode's maps. */
	int (*loaded)(struct sink *sk);
	/* Before the base reading and the attach: what must receive from packet one. */
	int (*start)(struct sink *sk);
	/* Size of the mode's part of a reading, and how to take it. */
	size_t (*snap_size)(const struct sink *sk);
	void (*read)(struct sink *sk, struct sink_snap *s);
	/*
	 * The receive times of the first and the last packet, when the mode
	 * knows them exactly; NULL or false: the ticks where the count moved.
	 */
	bool (*span)(const struct sink *sk, const struct sink_snap *s, __u64 *first, __u64 *last);
	/* Packets (and bytes) the sink received; NULL: what the program saw. */
	__u64 (*received)(const struct sink *sk, const struct sink_snap *s, __u64 *bytes);
	/* The mode's drops between two readings, beyond the ones every mode has. */
	void (*drops)(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		      struct sink_drops *d);
	/* Every tick: say once what kernel-side losses mean. */
	void (*explain)(struct sink *sk, const struct sink_snap *s);
	/* Every tick, after explain: the mode's own upkeep (xsk: --follow-rx). */
	void (*tick)(struct sink *sk, const struct sink_snap *s);
	/*
	 * Report parts beyond the counter tables': JSON members after the
	 * drops, text lines, and OpenMetrics rows (counters since b, the base).
	 */
	void (*json)(const struct sink *sk, struct jw *w, const struct sink_snap *a,
		     const struct sink_snap *b, const struct sink_stats *d,
		     const struct sink_drops *dr, enum run_report kind);
	void (*text)(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		     const struct sink_stats *d, enum run_report kind);
	void (*metrics)(const struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
			const struct sink_snap *b, enum run_report kind);
	/* The summary's last line, RESULT: ...; NULL: every packet counted by its verdict. */
	void (*result)(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		       const struct sink_drops *dr);
	/* After the summary: the mode's verdict, 0 or -errno. */
	int (*finish)(struct sink *sk);
	/* Undo plan, loaded and start (also after a failure half-way). */
	void (*cleanup)(struct sink *sk);
	/*
	 * A command without an interface or XDP program (drops): the whole
	 * run, from the checks to the summary. Returns the exit code.
	 */
	int (*alone)(struct sink *sk);
};

extern const struct sink_mode_ops sink_drop_ops, sink_pass_ops, sink_tx_ops, sink_redirect_ops;
extern const struct sink_mode_ops sink_xsk_ops, sink_drops_ops, sink_redirect_cpu_ops;

struct sink {
	const struct sink_cfg *cfg;
	const struct sink_mode_ops *ops;
	const char *mode_name;
	struct iface ifc;
	struct xdp_sink_bpf *skel;
	bool frags; /* the programs were loaded frags-aware: the MTU is above SINK_MTU_ONE_BUF */
	struct xdp_attachment *att;
	struct iface_estats *estats; /* the interface's veth counters, if it is a veth */
	struct kstats_reader *kr;
	char pin_dir[128];
	bool pinned;
	int ncpus;
	unsigned int nslots; /* queue slots read: the device's rx queues (+ overflow) */
	unsigned int rx_queues_now; /* the device's rx queues at the last tick (-L may change them) */
	struct sink_stats *buf; /* lookup buffer, one value per possible CPU */
	struct sink_snap base, prev, cur;
	double peak_pps; /* highest interval rate */
	/* when traffic was first and last seen, at tick resolution (see span()) */
	__u64 first_rx_ns, last_rx_ns, seen;
	__u64 detached_ns; /* when the program was found detached (--force of another); 0: held */
	void *ms; /* the mode's state */
	struct metrics *metrics; /* --metrics-file/--metrics-listen */
	struct causes *causes; /* --drop-causes */
	bool hw_time; /* xsk --hw-time: its program is xdp_sink_xsk_hw, bound to the device */
	struct stamp_key key; /* the stamps' key: --stamp-key, $XDPSG_STAMP_KEY or the public one */
	struct run run;
};

/* sink.c */
int sink_preflight(struct sink *sk);
int sink_setup(struct sink *sk);
void sink_teardown(struct sink *sk);

/* report.c */
int sink_snap_alloc(struct sink *sk, struct sink_snap *s);
void sink_snap_free(struct sink_snap *s);
int sink_snap_read(struct sink *sk, struct sink_snap *s);
void sink_snap_copy(const struct sink *sk, struct sink_snap *dst, const struct sink_snap *src);
/* Frames on queues added during the run that the program never saw (veth), 0 if none. */
__u64 sink_unseen(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b);
/*
 * "RESULT: " and what every mode's verdict starts with when it holds: the
 * program was detached part-way (another took the interface), frames
 * passed unseen on added queues.
 */
void sink_result_begin(const struct sink *sk, const struct sink_snap *a, const struct sink_snap *b);
/*
 * The receive times of the first and last packet: exact where the mode knows
 * them, else the ticks where the count moved (the first stretched back one
 * tick). False when nothing arrived.
 */
bool sink_traffic_span(const struct sink *sk, const struct sink_snap *a, __u64 *first, __u64 *last);
__u64 sink_received(const struct sink *sk, const struct sink_snap *s, __u64 *bytes);
void sink_report_json(struct sink *sk, struct jw *w, const struct sink_snap *a,
		      const struct sink_snap *b, enum run_report kind);
void sink_report_text(struct sink *sk, const struct sink_snap *a, const struct sink_snap *b,
		      enum run_report kind);
void sink_report_metrics(struct sink *sk, struct metrics_w *w, const struct sink_snap *a,
			 const struct sink_snap *b, enum run_report kind);

/* The conditions a report of this run meets (struct ctr_desc.when). */
static inline unsigned int sink_has(const struct sink *sk, enum run_report kind)
{
	return sk->ops->has | (sk->estats ? SINK_HAS_VETH : 0) |
	       (sk->cfg->parse ? SINK_HAS_PARSE : 0) | (kind == RUN_INTERVAL ? SINK_HAS_LIVE : 0);
}

/* counters.c: the counter families, and --counters */
struct ctr_family;
extern const struct ctr_family sink_verdicts, sink_parse, sink_parse_errors, sink_parse_layers,
	sink_drop_reasons, sink_rx, sink_xsk_rx, sink_xsk_stats, sink_xsk_books, sink_xsk_unchecked,
	sink_causes, sink_cpumap;
int sink_list_counters(const struct param_cmd *const *cmds);

/* pins.c */
int sink_pin_maps(struct sink *sk);
void sink_unpin_maps(struct sink *sk, bool rmdir_too);

/* The mode's XDP program: its ops' own, or the xsk one bound to the device (--hw-time). */
static inline const char *sink_prog(const struct sink *sk)
{
	return sk->hw_time ? "xdp_sink_xsk_hw" : sk->ops->prog;
}

#endif
