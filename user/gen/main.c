// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-gen: send traffic into an interface as fast as the machine allows, or at
 * an exact rate, with contents a sink can check (flow, sequence, send time).
 *
 * Every mode shares this front end: packet options, one thread per queue (or
 * per CPU) each owning its own share of the count and the rate, and the same
 * output. Threads own their counters (one cache line each, single writer);
 * the main thread only reads them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <linux/if_packet.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gen_prog.h"
#include "cpu.h"
#include "iface.h"
#include "kstats.h"
#include "log.h"
#include "numa.h"
#include "params.h"
#include "pkt.h"
#include "runtime.h"
#include "stall.h"
#include "fmt.h"
#include "json_writer.h"
#include "xsk_queue.h"

enum gen_mode { GEN_XSK, GEN_KERNEL, GEN_QDISC };

#define STALL_WINDOW_NS 1000000000ULL

struct gen_cfg {
	/* run */
	__u64 duration, count, interval, rate;
	bool json, quiet;
	int verbose;
	/* packets */
	__u64 size;
	bool imix;
	const char *imix_sizes;
	bool ipv6;
	const char *src_mac, *dst_mac, *src_ip, *dst_ip, *src_port, *dst_port;
	__u64 flows;
	bool random;
	bool no_stamp;
	/* threads */
	struct param_list queues;
	struct param_list cpus;
	/* AF_XDP */
	__u64 batch, ring_size;
	struct xsk_cli xsk;
	__u64 tx_budget;
	/* kernel (live frames) */
	__u64 threads;
	bool fix_peer;
	/* qdisc (AF_PACKET) */
	__u64 sndbuf;
	bool kernel_stats;
};

static const struct gen_cfg defaults = {
	.interval = 1000000000ULL,
	.batch = 64,
	.ring_size = 2048,
	.xsk = XSK_CLI_DEFAULTS,
	.queues = { .n = 1, .ids = { 0 } },
};

#define OPT(f) offsetof(struct gen_cfg, f)

static const struct param_def run_opts[] = {
	{ "duration", 'd', PARAM_DURATION, OPT(duration), "TIME", "stop after this long", 1, 0 },
	{ "count", 'n', PARAM_COUNT, OPT(count), "PACKETS",
	  "send exactly this many, over all threads", 1, 0 },
	{ "rate", 'r', PARAM_RATE, OPT(rate), "PPS",
	  "packets per second over all threads (0: no limit)", 0, 1000000000ULL },
	{ "interval", 'i', PARAM_DURATION, OPT(interval), "TIME", "statistics period", 10000000ULL,
	  3600000000000ULL },
	{ "json", 'j', PARAM_FLAG, OPT(json), NULL, "one JSON object per line" },
	{ "quiet", 'q', PARAM_FLAG, OPT(quiet), NULL, "print only the final summary" },
	{ "verbose", 'v', PARAM_COUNTER, OPT(verbose), NULL,
	  "per-queue detail and frame accounting; twice for libbpf's messages" },
	{ "kernel-stats", 0, PARAM_FLAG, OPT(kernel_stats), NULL,
	  "also show the interface's qdisc, link and veth counters" },
	{ NULL },
};

static const struct param_def pkt_opts_table[] = {
	{ "size", 's', PARAM_UINT, OPT(size), "BYTES",
	  "frame size without FCS (default: the smallest that holds the stamp, 60 for IPv4, 80 for IPv6)",
	  42, PKT_SIZE_MAX },
	{ "imix", 0, PARAM_FLAG, OPT(imix), NULL, "mixed sizes, 7:4:1 of 60/576/1500 bytes" },
	{ "imix-sizes", 0, PARAM_STRING, OPT(imix_sizes), "SPEC",
	  "mixed sizes as SIZE:WEIGHT,... e.g. 60:7,576:4,1500:1" },
	{ "ipv6", '6', PARAM_FLAG, OPT(ipv6), NULL, "IPv6 instead of IPv4" },
	{ "src-mac", 0, PARAM_STRING, OPT(src_mac), "MAC",
	  "source MAC (default: the interface's)" },
	{ "dst-mac", 0, PARAM_STRING, OPT(dst_mac), "MAC",
	  "destination MAC (default: the neighbour entry for --dst-ip)" },
	{ "src-ip", 0, PARAM_STRING, OPT(src_ip), "IP[-IP]",
	  "source address or range (default: the interface's address)" },
	{ "dst-ip", 0, PARAM_STRING, OPT(dst_ip), "IP[-IP]",
	  "destination address or range (default: the interface's first neighbour)" },
	{ "src-port", 0, PARAM_STRING, OPT(src_port), "PORT[-PORT]", "UDP source port or range" },
	{ "dst-port", 0, PARAM_STRING, OPT(dst_port), "PORT[-PORT]",
	  "UDP destination port or range" },
	{ "flows", 0, PARAM_UINT, OPT(flows), "N",
	  "flows spread over the ranges (default 1 per thread)", 1, PKT_FLOWS_MAX },
	{ "random", 0, PARAM_FLAG, OPT(random), NULL, "pick flows at random instead of in turn" },
	{ "no-stamp", 0, PARAM_FLAG, OPT(no_stamp), NULL,
	  "no flow/sequence/time stamp in the payload" },
	{ NULL },
};

static const struct param_def xsk_opts[] = {
	{ "queues", 0, PARAM_LIST, OPT(queues), "all|LIST", "transmit queues, one thread each", 0,
	  1023 },
	{ "cpus", 0, PARAM_LIST, OPT(cpus), "LIST",
	  "CPU of each queue's thread (default: queue i on CPU i mod CPUs)", 0, 4095 },
	{ "batch", 'b', PARAM_UINT, OPT(batch), "N", "frames per ring operation", 1, 2048 },
	{ "ring-size", 0, PARAM_UINT, OPT(ring_size), "N", "tx and completion ring entries", 64,
	  32768 },
	XSK_CLI_PARAMS(struct gen_cfg, xsk),
	{ "tx-budget", 0, PARAM_UINT, OPT(tx_budget), "N",
	  "copy-mode frames per kick, Linux 6.17+ (default: the batch size; the kernel's own is 32)",
	  1, 65536 },
	{ NULL },
};

#define LIVE_FRAME_MAX 3408 /* the largest frame BPF_PROG_RUN live frames takes */

static const struct param_def kernel_opts[] = {
	{ "threads", 't', PARAM_UINT, OPT(threads), "N", "threads, one per CPU (default 1)", 1,
	  1024 },
	{ "cpus", 0, PARAM_LIST, OPT(cpus), "LIST",
	  "CPU of each thread, all different (default: thread i on CPU i)", 0, 4095 },
	{ "batch", 'b', PARAM_UINT, OPT(batch), "N",
	  "frames the kernel builds and flushes at a time (BPF_PROG_RUN batch_size)", 1, 256 },
	{ "fix-peer", 0, PARAM_FLAG, OPT(fix_peer), NULL,
	  "turn GRO on at a veth peer that runs no NAPI (restored at exit)" },
	{ NULL },
};

static const struct param_cmd cmd_kernel = {
	.name = "kernel",
	.summary = "in-kernel generation with BPF_PROG_RUN live frames: the highest rate",
	.description =
		"Each thread runs xdp_gen.bpf.c on its own CPU through BPF_PROG_RUN with\n"
		"BPF_F_TEST_XDP_LIVE_FRAMES; the program rewrites flow, sequence, time and\n"
		"checksums per frame and redirects it out of IFNAME. The kernel can still drop\n"
		"a frame after the program redirected it (on veth: the peer runs no NAPI, or\n"
		"its ring is full); the summary shows sent = transmitted + failed from the\n"
		"device's own counters. Bypasses the qdisc layer. Needs Linux 5.18 or newer.",
	.positional = "IFNAME",
	.tables = { run_opts, pkt_opts_table, kernel_opts, NULL },
};

static const struct param_def qdisc_opts[] = {
	{ "threads", 't', PARAM_UINT, OPT(threads), "N",
	  "sending threads, one socket each (default 1)", 1, 1024 },
	{ "cpus", 0, PARAM_LIST, OPT(cpus), "LIST",
	  "CPU of each thread (default: thread i on CPU i mod CPUs)", 0, 4095 },
	{ "batch", 'b', PARAM_UINT, OPT(batch), "N", "frames per sendmmsg call", 1, 1024 },
	{ "sndbuf", 0, PARAM_BYTES, OPT(sndbuf), "BYTES",
	  "socket send buffer, forced past the sysctl limit (SO_SNDBUFFORCE); large lets the qdisc overflow",
	  4096, 1ULL << 31 },
	{ NULL },
};

static const struct param_cmd cmd_qdisc = {
	.name = "qdisc",
	.summary = "AF_PACKET through the qdisc layer: the path that backs up and overflows",
	.description =
		"Frames go through the interface's qdisc like any socket's (no qdisc bypass),\n"
		"batched with sendmmsg, one socket per thread. A frame the qdisc refuses\n"
		"(ENOBUFS: it was full and dropped it) is counted as refused and not sent\n"
		"again; accepted + refused = attempted. With the default send buffer the\n"
		"threads block instead of overflowing the qdisc: give --sndbuf 64M to let it\n"
		"overflow. A qdisc that holds packets but sends none for a second is reported\n"
		"as a stall and ends the run.",
	.positional = "IFNAME",
	.tables = { run_opts, pkt_opts_table, qdisc_opts, NULL },
};

static const struct param_cmd cmd_xsk = {
	.name = "xsk",
	.summary = "AF_XDP transmit: one socket, UMEM and frame allocator per queue",
	.description =
		"Each queue gets its own thread pinned to a CPU, with its UMEM on that CPU's\n"
		"NUMA node. Frames are written from a template and recycled through the\n"
		"completion ring; the kernel is kicked only when it asks (need_wakeup).\n"
		"AF_XDP transmit bypasses the qdisc layer.",
	.positional = "IFNAME",
	.tables = { run_opts, pkt_opts_table, xsk_opts, NULL },
};

static const struct param_cmd *const cmds[] = { &cmd_xsk, &cmd_kernel, &cmd_qdisc, NULL };

/* Counters of one thread: written only by it, read by the main thread. */
struct gen_counters {
	__u64 sent; /* frames the kernel confirmed taking */
	__u64 bytes; /* bytes of the frames sent */
	__u64 submitted; /* frames handed to the kernel */
	__u64 stall_ring; /* the tx ring was full */
	__u64 stall_frames; /* no free frame: waiting for completions */
	__u64 stall_kick; /* the kick was answered EAGAIN/EBUSY/ENOBUFS */
	__u64 kicks;
	__u64 redirect_err; /* kernel mode: the program's redirect was refused */
	__u64 refused; /* qdisc mode: the qdisc dropped the frame (ENOBUFS) */
} __attribute__((aligned(64)));

#define CNT_READ(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define CNT_ADD(x, v) __atomic_store_n(&(x), (x) + (v), __ATOMIC_RELAXED)

struct gen;

struct gen_thread {
	struct gen *g;
	unsigned int idx;
	unsigned int queue;
	int cpu;
	__u64 quota; /* frames to send; 0: no limit */
	__u64 rate; /* this thread's share of --rate; 0: no limit */
	bool idle; /* its share of --count or --rate is zero: it sends nothing */
	pthread_t tid;
	bool created;
	int err; /* set before 'ready' */
	int ready; /* 1 when set up (or failed) */
	int finished;
	struct gen_counters c;
	struct pkt_gen *pg;
	struct xsk_queue *q;
	bool zerocopy;
	int tx_budget_err;
	char accounting[160]; /* frame accounting check at exit */
	bool accounting_ok;
	__u64 *addrs;
	__u32 *lens; /* per UMEM frame: length written, for bytes at completion */
};

struct gen_snapshot {
	__u64 t_ns;
	struct gen_counters total;
	struct gen_counters *per; /* per thread */
	struct link_stats link;
	__u64 xsk_tx_invalid;
	__u64 xdp_xmit, xdp_xmit_errors; /* the device's own ndo_xdp_xmit counters */
	struct gen_xmit_stats tp; /* what the raw tracepoints saw for the target */
	struct kstats *ks; /* with --kernel-stats, or in qdisc mode for the stall check */
};

struct gen {
	const struct gen_cfg *cfg;
	enum gen_mode mode;
	const char *mode_name;
	struct iface ifc;
	struct pkt_opts popts;
	struct pkt_imix imix;
	unsigned int nthreads;
	struct gen_thread *th;
	int go; /* threads wait for it, so the rate clock starts together */
	int stop; /* set by the main thread: duration over or a signal */
	__u64 t0;
	struct gen_snapshot base, prev, cur;
	const char *stop_reason;
	/* kernel mode */
	struct xdp_gen_bpf *skel;
	void *frame;
	unsigned int frame_len;
	struct gen_cpu *cpu_vals;
	struct iface_estats *estats;
	bool peer_fixed;
	char peer_desc[96];
	struct bpf_link *tp_links[2]; /* raw tracepoints, where the kernel has them */
	struct gen_xmit_stats *tp_vals;
	__u64 end_ns; /* --duration's end, for trimming the last chunk */
	/* qdisc mode and --kernel-stats */
	struct kstats_reader *kr;
	struct stall stall;
	__u64 stall_ns;
};

static void thread_done(struct gen_thread *t)
{
	__atomic_store_n(&t->finished, 1, __ATOMIC_RELEASE);
}

static bool should_stop(const struct gen *g)
{
	return runtime_stop || __atomic_load_n(&g->stop, __ATOMIC_RELAXED);
}

/*
 * How many frames this thread may send now: its share of --count left, and
 * of --rate the frames due since the start. *wait_ns says when the next
 * frame is due if none is.
 */
static __u32 budget(const struct gen_thread *t, __u64 sent_or_submitted, __u32 batch, __u64 now,
		    __u64 *due_ns)
{
	__u64 allowed = batch;

	*due_ns = 0;
	if (t->quota) {
		__u64 left = t->quota - sent_or_submitted;

		if (left < allowed)
			allowed = left;
	}
	if (t->rate) {
		__u64 elapsed = now - t->g->t0;
		__u64 due = (__u64)((unsigned __int128)elapsed * t->rate / 1000000000ULL);

		if (due <= sent_or_submitted) {
			*due_ns = t->g->t0 + (__u64)((unsigned __int128)(sent_or_submitted + 1) *
						     1000000000ULL / t->rate);
			return 0;
		}
		if (due - sent_or_submitted < allowed)
			allowed = due - sent_or_submitted;
	}
	return (__u32)allowed;
}

/* Wait for the next frame to be due: sleep when it is far, spin when close. */
static void pace(__u64 due_ns)
{
	__u64 now = now_ns();

	if (due_ns > now + 50000)
		runtime_sleep_until(due_ns - 20000);
}

/* Returns false when the thread has nothing to send (its share is zero). */
static bool wait_go(struct gen_thread *t)
{
	__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&t->g->go, __ATOMIC_ACQUIRE) && !should_stop(t->g))
		usleep(1000);
	return !t->idle;
}

/* ---------------------------------------------------------------------------
 * AF_XDP
 */

static int xsk_setup(struct gen_thread *t)
{
	const struct gen_cfg *cfg = t->g->cfg;
	struct xsk_queue_opts o;
	__u32 i, n, nr;
	int err;

	xsk_queue_opts_init(&o);
	o.ifname = t->g->ifc.name;
	o.queue_id = t->queue;
	o.cpu = t->cpu;
	o.tx_size = (__u32)cfg->ring_size;
	o.comp_size = (__u32)cfg->ring_size;
	/* Frames: the tx ring plus as many again in flight toward completion. */
	o.nr_frames = 2 * (__u32)cfg->ring_size;
	o.rx = false;
	o.tx = true;
	xsk_queue_apply_cli(&o, &cfg->xsk);
	o.batch = (__u32)cfg->batch;
	err = xsk_queue__create(&t->q, &o);
	if (err)
		return err;
	t->zerocopy = t->q->zerocopy;
	/*
	 * A copy-mode kick sends at most 32 frames unless raised (Linux 6.17):
	 * one batch per kick halves the syscalls (measured: +4% on veth).
	 */
	if (!t->zerocopy) {
		__u32 budget = (__u32)(cfg->tx_budget ? cfg->tx_budget : cfg->batch);

		t->tx_budget_err = xsk_queue_set_tx_budget(t->q, budget);
		if (t->tx_budget_err == -ENOPROTOOPT && cfg->tx_budget)
			pr_info("queue %u: this kernel has no XDP_MAX_TX_SKB_BUDGET (Linux 6.17+); --tx-budget ignored\n",
				t->queue);
		else if (t->tx_budget_err && t->tx_budget_err != -ENOPROTOOPT)
			pr_warn("queue %u: the kernel refused a tx budget of %u: %s\n", t->queue,
				budget, strerror(-t->tx_budget_err));
	}

	nr = t->q->umem->nr_frames;
	t->addrs = calloc(nr, sizeof(*t->addrs));
	t->lens = calloc(nr, sizeof(*t->lens));
	if (!t->addrs || !t->lens)
		return -ENOMEM;
	/*
	 * Write every frame's payload once: afterwards only headers and stamp
	 * are rewritten per packet (the pattern depends only on the offset).
	 */
	n = frame_alloc_bulk(t->q->fa, nr, t->addrs);
	for (i = 0; i < n; i++)
		pkt_gen_prefill(t->pg, xsk_queue_frame_data(t->q, t->addrs[i]));
	frame_free_bulk(t->q->fa, n, t->addrs);
	return 0;
}

/* Bytes of the frames the completion ring returns, then recycle them. */
static __u32 xsk_reap(struct gen_thread *t)
{
	struct xsk_queue *q = t->q;
	struct xsk_ring_cons *cq = &q->umem->comp;
	__u32 idx, i, n;
	__u64 bytes = 0;

	n = xsk_ring_cons__peek(cq, q->batch, &idx);
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		__u64 addr = *xsk_ring_cons__comp_addr(cq, idx + i);

		t->addrs[i] = addr;
		bytes += t->lens[addr / q->umem->frame_size];
	}
	xsk_ring_cons__release(cq, n);
	frame_alloc_note_completed(q->fa, n);
	frame_free_bulk(q->fa, n, t->addrs);
	CNT_ADD(t->c.sent, n);
	CNT_ADD(t->c.bytes, bytes);
	return n;
}

static void xsk_kick(struct gen_thread *t)
{
	__u64 busy = t->q->cnt.tx_kick_busy;

	/* Nothing submitted is waiting: a kick would be a syscall for nothing. */
	if (t->c.submitted == t->c.sent)
		return;
	if (!xsk_ring_prod__needs_wakeup(&t->q->tx) && t->q->need_wakeup)
		return;
	xsk_queue_kick_tx(t->q);
	CNT_ADD(t->c.kicks, 1);
	if (t->q->cnt.tx_kick_busy != busy)
		CNT_ADD(t->c.stall_kick, 1);
}

/*
 * Test hook: XDPSG_TEST_SEQ_JUMP="AT:DELTA" moves flow 0's sequence number by
 * DELTA (negative: back) once thread 0 has submitted AT frames, so tests can
 * put an exact gap or exact duplicates on the wire.
 */
static bool seq_jump_hook(__s64 *at, __s64 *delta)
{
	const char *v = getenv("XDPSG_TEST_SEQ_JUMP");

	return v && sscanf(v, "%lld:%lld", (long long *)at, (long long *)delta) == 2 && *at > 0;
}

static void *xsk_thread(void *arg)
{
	struct gen_thread *t = arg;
	struct gen *g = t->g;
	struct xsk_queue *q;
	__u32 batch = (__u32)g->cfg->batch;
	__u64 *addrs = NULL, due, deadline;
	__s64 jump_at = 0, jump_by = 0;
	bool jump = t->idx == 0 && seq_jump_hook(&jump_at, &jump_by);
	int err;

	runtime_block_signals();
	err = cpu_pin_self(t->cpu);
	if (!err)
		err = xsk_setup(t);
	addrs = calloc(batch, sizeof(*addrs));
	if (!err && !addrs)
		err = -ENOMEM;
	t->err = err;
	if (!wait_go(t) || err)
		goto out;
	q = t->q;

	while (!should_stop(g)) {
		__u32 want, n, got, idx, i;
		__u64 now = now_ns(), ts;

		xsk_reap(t);
		if (t->quota && t->c.submitted >= t->quota)
			break;
		want = budget(t, t->c.submitted, batch, now, &due);
		if (!want) {
			xsk_kick(t);
			pace(due);
			continue;
		}
		n = frame_alloc_bulk(q->fa, want, addrs);
		if (n < want)
			CNT_ADD(t->c.stall_frames, 1);
		if (!n) {
			xsk_kick(t);
			continue;
		}
		got = xsk_queue_tx_reserve(q, n, &idx);
		if (got < n) {
			CNT_ADD(t->c.stall_ring, 1);
			frame_free_bulk(q->fa, n - got, addrs + got);
		}
		ts = now;
		for (i = 0; i < got; i++) {
			struct xdp_desc *d = xsk_queue_tx_desc(q, idx + i);
			__u32 len = pkt_gen_next(t->pg, xsk_queue_frame_data(q, addrs[i]), ts);

			d->addr = addrs[i];
			d->len = len;
			t->lens[addrs[i] / q->umem->frame_size] = len;
		}
		if (got) {
			xsk_queue_tx_submit(q, got);
			CNT_ADD(t->c.submitted, got);
		}
		if (jump && t->c.submitted >= (__u64)jump_at) {
			t->pg->seq[t->pg->shard] += (__u32)jump_by;
			jump = false;
		}
		xsk_kick(t);
	}

	/* Drain: every frame handed over is confirmed before the summary counts it. */
	deadline = now_ns() + 2000000000ULL;
	while (t->c.sent < t->c.submitted && now_ns() < deadline) {
		if (!xsk_reap(t)) {
			xsk_kick(t);
			usleep(50);
		}
	}
	t->accounting_ok = !frame_alloc_check(q->fa, t->accounting, sizeof(t->accounting));
out:
	free(addrs);
	thread_done(t);
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Kernel mode: BPF_PROG_RUN with live frames
 */

/*
 * Frames per BPF_PROG_RUN call. Each call sets up and tears down a page pool
 * (measured: about 24 ms here), so calls must be long: the chunk is sized to
 * about 250 ms of work at the rate the thread achieves. A stop interrupts a
 * running call with SIGUSR1 (BPF_PROG_RUN returns EINTR between batches), and
 * the last chunk of a --duration run is trimmed to the time left.
 */
#define KERNEL_CHUNK_FIRST (1U << 20)
#define KERNEL_CHUNK_MIN (1U << 16)
#define KERNEL_CHUNK_MAX (1U << 23)
#define KERNEL_CHUNK_NS 250000000ULL

static void on_wake(int sig)
{
	(void)sig;
}

static void *kernel_thread(void *arg)
{
	struct gen_thread *t = arg;
	struct gen *g = t->g;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = g->frame, .data_size_in = g->frame_len,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = (__u32)g->cfg->batch);
	int fd = bpf_program__fd(g->skel->progs.xdp_gen);
	__u32 chunk = KERNEL_CHUNK_FIRST;
	__u64 due, est_pps = 0;
	int err;

	runtime_block_signals();
	err = cpu_pin_self(t->cpu);
	t->err = err;
	if (!wait_go(t) || err)
		goto out;
	while (!should_stop(g)) {
		__u32 want;

		if (t->quota && t->c.submitted >= t->quota)
			break;
		__u64 now = now_ns(), cap = chunk, took;

		if (g->end_ns && est_pps) {
			__u64 left = g->end_ns > now ? g->end_ns - now : 0;
			__u64 fit = (__u64)((unsigned __int128)left * est_pps / 1000000000ULL) + 1;

			if (fit < cap)
				cap = fit;
		}
		want = budget(t, t->c.submitted, (__u32)cap, now, &due);
		if (!want) {
			pace(due);
			continue;
		}
		o.repeat = want;
		if (bpf_prog_test_run_opts(fd, &o)) {
			if (errno == EINTR && should_stop(g))
				break;
			t->err = -errno;
			pr_warn("BPF_PROG_RUN on cpu %d failed: %s\n", t->cpu, strerror(errno));
			break;
		}
		CNT_ADD(t->c.submitted, want);
		took = now_ns() - now;
		if (took && want >= KERNEL_CHUNK_MIN) {
			est_pps = (__u64)((unsigned __int128)want * 1000000000ULL / took);
			cap = est_pps * KERNEL_CHUNK_NS / 1000000000ULL;
			chunk = (__u32)(cap < KERNEL_CHUNK_MIN ? KERNEL_CHUNK_MIN :
					cap > KERNEL_CHUNK_MAX ? KERNEL_CHUNK_MAX :
								 cap);
		}
	}
out:
	thread_done(t);
	return NULL;
}

static bool kernel_has_live_frames(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return true; /* cannot tell: let BPF_PROG_RUN answer */
	return major > 5 || (major == 5 && minor >= 18);
}

/* The target must transmit redirected frames: for veth, its peer needs NAPI. */
static int kernel_check_peer(struct gen *g)
{
	struct peer_napi pn;
	int err;

	if (strcmp(g->ifc.driver, "veth"))
		return 0;
	err = iface_peer_napi(&g->ifc, g->cfg->fix_peer, &pn);
	if (err) {
		pr_info("the veth peer of %s is out of reach (%s), so its NAPI cannot be checked; failed transmits show as xdp_xmit_errors\n",
			g->ifc.name, strerror(-err));
		return 0;
	}
	snprintf(g->peer_desc, sizeof(g->peer_desc), "%s%s%s", pn.name,
		 pn.netns[0] ? " in netns " : "", pn.netns);
	if (pn.fixed) {
		g->peer_fixed = true;
		pr_info("--fix-peer: GRO turned on at %s so it can receive redirected frames; turned off again at exit\n",
			g->peer_desc);
		return 0;
	}
	if (!pn.xdp && !pn.gro) {
		fprintf(stderr,
			"xdp-gen: %s cannot transmit redirected frames: its veth peer %s runs no NAPI; attach an XDP program there (e.g. xdp-sink drop %s), turn GRO on (ethtool -K %s gro on), or add --fix-peer\n",
			g->ifc.name, g->peer_desc, pn.name, pn.name);
		return -EINVAL;
	}
	return 0;
}

static int kernel_setup(struct gen *g)
{
	/*
	 * veth counts ndo_xdp_xmit per receive queue of the peer, picked by CPU;
	 * with more sending CPUs than queues two CPUs share a counter and the
	 * kernel loses increments (measured: 13,104 of 22.4M errors missing).
	 */
	if (!strcmp(g->ifc.driver, "veth") && g->nthreads > g->ifc.tx_queues)
		pr_warn("%u threads on %s with %u queue%s: veth's xdp_xmit counters lose counts when CPUs share a queue, so 'unexplained' may not be 0; use a lab with --queues %u\n",
			g->nthreads, g->ifc.name, g->ifc.tx_queues,
			g->ifc.tx_queues == 1 ? "" : "s", g->nthreads);

	struct pkt_gen *pg = g->th[0].pg;
	unsigned int i;
	int err;

	g->skel = xdp_gen_bpf__open();
	if (!g->skel) {
		err = -errno;
		pr_warn("cannot open the generator's BPF object: %s\n", strerror(-err));
		return err;
	}
	gen_prog_set_rodata(g->skel, pg, (__u32)g->ifc.ifindex);
	/* Tracepoints are global; ifindexes are per namespace: count only our own flushes. */
	g->skel->rodata->owner_tgid = (__u32)getpid();
	/* The generator, and the raw tracepoints that see what happens after it. */
	bpf_program__set_autoload(g->skel->progs.xdp_gen_bare, false);
	log_libbpf_expect_failures(true);
	err = xdp_gen_bpf__load(g->skel);
	log_libbpf_expect_failures(false);
	if (err) {
		/* A kernel without BTF or the tracepoints: load the generator alone. */
		pr_debug("loading with the xdp tracepoints failed (%s); counting without them\n",
			 strerror(-err));
		xdp_gen_bpf__destroy(g->skel);
		g->skel = xdp_gen_bpf__open();
		if (!g->skel)
			return -errno;
		gen_prog_set_rodata(g->skel, pg, (__u32)g->ifc.ifindex);
		bpf_program__set_autoload(g->skel->progs.xdp_gen_bare, false);
		bpf_program__set_autoload(g->skel->progs.gen_devmap_xmit, false);
		bpf_program__set_autoload(g->skel->progs.gen_redirect_err, false);
		err = xdp_gen_bpf__load(g->skel);
	}
	if (err) {
		pr_warn("cannot load the generator's BPF program: %s (run with -vv for the verifier's log)\n",
			strerror(-err));
		return err;
	}
	err = gen_prog_fill_maps(g->skel, pg);
	for (i = 0; !err && i < g->nthreads; i++)
		err = gen_prog_set_cpu(g->skel, g->th[i].pg, g->th[i].cpu);
	if (err) {
		pr_warn("cannot fill the generator's maps: %s\n", strerror(-err));
		return err;
	}
	g->frame_len = pkt_gen_max_len(pg);
	g->frame = calloc(1, g->frame_len);
	g->cpu_vals = calloc((size_t)libbpf_num_possible_cpus(), sizeof(*g->cpu_vals));
	if (!g->frame || !g->cpu_vals)
		return -ENOMEM;
	pkt_gen_prefill(pg, g->frame);
	iface_estats__open(g->ifc.name, &g->estats);
	if (bpf_program__fd(g->skel->progs.gen_devmap_xmit) >= 0) {
		g->tp_links[0] = bpf_program__attach(g->skel->progs.gen_devmap_xmit);
		g->tp_links[1] = bpf_program__attach(g->skel->progs.gen_redirect_err);
		if (!g->tp_links[0] || !g->tp_links[1]) {
			pr_debug("xdp tracepoints not attachable; counting without them\n");
			bpf_link__destroy(g->tp_links[0]);
			bpf_link__destroy(g->tp_links[1]);
			g->tp_links[0] = g->tp_links[1] = NULL;
		}
	}
	g->tp_vals = calloc((size_t)libbpf_num_possible_cpus(), sizeof(*g->tp_vals));
	if (!g->tp_vals)
		return -ENOMEM;
	return 0;
}

/* ---------------------------------------------------------------------------
 * Qdisc mode: AF_PACKET, through the qdisc
 */

static int qdisc_socket(struct gen_thread *t, struct sockaddr_ll *sll)
{
	const struct gen_cfg *cfg = t->g->cfg;
	int fd, val;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pr_warn("cannot open an AF_PACKET socket: %s (needs CAP_NET_RAW)\n",
			strerror(errno));
		return -errno;
	}
	/*
	 * Blocking, with no send timeout: a short sendmmsg count then has one
	 * meaning, the qdisc refusing the next frame. A stop wakes a thread
	 * blocked on a full send buffer with SIGUSR1.
	 */
	if (cfg->sndbuf) {
		val = (int)(cfg->sndbuf / 2); /* the kernel doubles what it is given */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &val, sizeof(val))) {
			pr_warn("cannot force the send buffer to %" PRIu64
				" bytes (%s); using the sysctl limit\n",
				(uint64_t)cfg->sndbuf, strerror(errno));
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &val, sizeof(val));
		}
	}
	memset(sll, 0, sizeof(*sll));
	sll->sll_family = AF_PACKET;
	sll->sll_ifindex = t->g->ifc.ifindex;
	sll->sll_halen = 6;
	memcpy(sll->sll_addr, t->g->popts.dst_mac, 6);
	return fd;
}

static void *qdisc_thread(void *arg)
{
	struct gen_thread *t = arg;
	struct gen *g = t->g;
	__u32 batch = (__u32)g->cfg->batch, i;
	unsigned int flen = pkt_gen_max_len(t->pg);
	struct mmsghdr *msgs = calloc(batch, sizeof(*msgs));
	struct iovec *iov = calloc(batch, sizeof(*iov));
	__u8 *bufs = calloc(batch, flen);
	struct sockaddr_ll sll;
	__u64 due;
	int fd = -1, err = 0;

	runtime_block_signals();
	if (!msgs || !iov || !bufs)
		err = -ENOMEM;
	if (!err)
		err = cpu_pin_self(t->cpu);
	if (!err) {
		fd = qdisc_socket(t, &sll);
		if (fd < 0)
			err = fd;
	}
	for (i = 0; !err && i < batch; i++) {
		pkt_gen_prefill(t->pg, bufs + (size_t)i * flen);
		iov[i].iov_base = bufs + (size_t)i * flen;
		msgs[i].msg_hdr.msg_name = &sll;
		msgs[i].msg_hdr.msg_namelen = sizeof(sll);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	t->err = err;
	if (!wait_go(t) || err)
		goto out;

	while (!should_stop(g)) {
		__u64 attempted = t->c.sent + t->c.refused, ts, bytes = 0;
		__u32 want, start = 0;

		if (t->quota && attempted >= t->quota)
			break;
		want = budget(t, attempted, batch, now_ns(), &due);
		if (!want) {
			pace(due);
			continue;
		}
		ts = now_ns();
		for (i = 0; i < want; i++)
			iov[i].iov_len = pkt_gen_next(t->pg, iov[i].iov_base, ts);
		while (start < want && !should_stop(g)) {
			int r = sendmmsg(fd, msgs + start, want - start, 0);

			if (r < 0 && errno == EINTR)
				break; /* woken to stop: this frame was not taken */
			if (r < 0 && errno != ENOBUFS) {
				t->err = -errno;
				pr_warn("sendmmsg on %s: %s\n", g->ifc.name, strerror(errno));
				goto out;
			}
			if (r < 0) {
				/* The qdisc was full and dropped it: refused, never sent again. */
				CNT_ADD(t->c.refused, 1);
				start++;
				continue;
			}
			for (i = start; i < start + (__u32)r; i++)
				bytes += iov[i].iov_len;
			CNT_ADD(t->c.sent, (__u64)r);
			start += (__u32)r;
			/*
			 * A short count: sendmmsg dropped the error of the next frame.
			 * On a blocking packet socket without a send timeout that is
			 * the qdisc refusing it (ENOBUFS), unless a stop interrupted
			 * the call; the qdisc's drop counter shows the same refusals.
			 */
			if (start < want) {
				if (should_stop(g))
					break;
				CNT_ADD(t->c.refused, 1);
				start++;
			}
		}
		CNT_ADD(t->c.bytes, bytes);
		CNT_ADD(t->c.submitted, start);
	}
out:
	if (fd >= 0)
		close(fd);
	free(msgs);
	free(iov);
	free(bufs);
	thread_done(t);
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Setup shared by the modes
 */

static int resolve_addresses(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	int family = cfg->ipv6 ? AF_INET6 : AF_INET;
	char err[256], ip[INET6_ADDRSTRLEN + 1], dst_one[INET6_ADDRSTRLEN + 1];
	const char *dst = cfg->dst_ip;
	unsigned char mac[6];
	struct pkt_opts *o = &g->popts;

	memcpy(o->src_mac, g->ifc.mac, 6);
	if (cfg->src_mac && pkt_parse_mac(cfg->src_mac, o->src_mac, err, sizeof(err)))
		goto bad;

	if (cfg->src_ip) {
		if (pkt_parse_ip_range(cfg->src_ip, &o->src_ip, err, sizeof(err)))
			goto bad;
	} else if (!iface_first_addr(g->ifc.name, family, ip, sizeof(ip))) {
		pkt_parse_ip_range(ip, &o->src_ip, err, sizeof(err));
	} else if (cfg->ipv6) {
		pkt_parse_ip_range("fd00::1", &o->src_ip, err, sizeof(err));
	}

	/* The destination: the one given, or the interface's first neighbour. */
	if (!dst) {
		if (iface_neigh_lookup(g->ifc.ifindex, family, NULL, ip, sizeof(ip), mac)) {
			if (!cfg->dst_mac) {
				snprintf(
					err, sizeof(err),
					"%s has no %s neighbour entry to send to; give --dst-ip and --dst-mac",
					g->ifc.name, cfg->ipv6 ? "IPv6" : "IPv4");
				goto bad;
			}
			dst = cfg->ipv6 ? "fd00::2" : "10.0.0.2";
		} else {
			dst = ip;
			memcpy(o->dst_mac, mac, 6);
		}
	} else if (!cfg->dst_mac) {
		/* The first address of a range names the neighbour to ask for. */
		const char *dash = strchr(dst, '-');
		size_t l = dash ? (size_t)(dash - dst) : strlen(dst);

		snprintf(dst_one, sizeof(dst_one), "%.*s", (int)(l < sizeof(dst_one) ? l : 0), dst);
		if (iface_neigh_lookup(g->ifc.ifindex, family, dst_one, ip, sizeof(ip), mac)) {
			snprintf(
				err, sizeof(err),
				"no neighbour entry for %s on %s to take its MAC from; give --dst-mac",
				dst_one, g->ifc.name);
			goto bad;
		}
		memcpy(o->dst_mac, mac, 6);
	}
	if (cfg->dst_mac && pkt_parse_mac(cfg->dst_mac, o->dst_mac, err, sizeof(err)))
		goto bad;
	if (pkt_parse_ip_range(dst, &o->dst_ip, err, sizeof(err)))
		goto bad;
	if (o->src_ip.family != o->dst_ip.family) {
		snprintf(
			err, sizeof(err),
			"source and destination addresses are of different families; use --ipv6 with IPv6 addresses");
		goto bad;
	}
	if (o->dst_ip.family == PKT_IPV6 && !cfg->ipv6) {
		snprintf(err, sizeof(err), "IPv6 addresses given without --ipv6; add --ipv6");
		goto bad;
	}
	return 0;
bad:
	fprintf(stderr, "xdp-gen: %s\n", err);
	return -EINVAL;
}

static int build_packets(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	struct pkt_opts *o = &g->popts;
	char err[256];
	__u16 run = 0;
	__u64 tuples;
	int rc;

	pkt_opts_init(o);
	rc = resolve_addresses(g);
	if (rc)
		return rc;
	if (cfg->src_port && pkt_parse_port_range(cfg->src_port, &o->src_port, err, sizeof(err)))
		goto bad;
	if (cfg->dst_port && pkt_parse_port_range(cfg->dst_port, &o->dst_port, err, sizeof(err)))
		goto bad;
	o->size = cfg->size ? (unsigned int)cfg->size :
			      pkt_min_size(cfg->ipv6 ? PKT_IPV6 : PKT_IPV4, !cfg->no_stamp);
	if (o->size < PKT_SIZE_DEFAULT && !cfg->size)
		o->size = PKT_SIZE_DEFAULT;
	o->max_size = g->ifc.mtu + PKT_ETH_HLEN;
	o->no_stamp = cfg->no_stamp;
	o->random = cfg->random;
	if (cfg->imix || cfg->imix_sizes) {
		if (cfg->imix_sizes) {
			if (pkt_parse_imix(cfg->imix_sizes, &g->imix, err, sizeof(err)))
				goto bad;
		} else {
			pkt_imix_default(&g->imix, pkt_min_size(cfg->ipv6 ? PKT_IPV6 : PKT_IPV4,
								!cfg->no_stamp));
		}
		o->imix = &g->imix;
	}
	/*
	 * Each flow is sent by one thread, so its sequence numbers stay in
	 * order: at least one flow per thread. Without --flows and --src-port,
	 * give each thread its own source port.
	 */
	o->flows = cfg->flows ? (__u32)cfg->flows : g->nthreads;
	if (o->flows < g->nthreads) {
		snprintf(
			err, sizeof(err),
			"--flows %u is fewer than the %u threads; use --flows %u or more (each flow is sent by one thread)",
			o->flows, g->nthreads, g->nthreads);
		goto bad;
	}
	tuples = pkt_tuple_count(o);
	if (!cfg->flows && !cfg->src_port && tuples < o->flows)
		o->src_port.end = (__u16)(o->src_port.start + o->flows - 1);
	getrandom(&run, sizeof(run), 0);
	o->run = run;
	o->seed = ((__u64)run << 32) | 0x9e3779b9u;
	return 0;
bad:
	fprintf(stderr, "xdp-gen: %s\n", err);
	return -EINVAL;
}

static int make_thread_gens(struct gen *g)
{
	char err[256];
	unsigned int i;

	for (i = 0; i < g->nthreads; i++) {
		struct pkt_opts o = g->popts;

		o.shard = i;
		o.shards = g->nthreads;
		o.seed += i;
		g->th[i].pg = pkt_gen__create(&o, err, sizeof(err));
		if (!g->th[i].pg) {
			fprintf(stderr, "xdp-gen: %s\n", err);
			return -EINVAL;
		}
	}
	return 0;
}

static int plan_threads(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	unsigned int i, nq, ncpu = (unsigned int)cpu_online_count();
	unsigned int maxq = g->ifc.tx_queues < g->ifc.rx_queues ? g->ifc.tx_queues :
								  g->ifc.rx_queues;

	if (!maxq)
		maxq = 1;
	if (g->mode != GEN_XSK)
		nq = cfg->threads ? (unsigned int)cfg->threads : 1;
	else
		nq = cfg->queues.all ? maxq : cfg->queues.n;
	if (!nq)
		nq = 1;
	g->nthreads = nq;
	g->th = calloc(nq, sizeof(*g->th));
	if (!g->th)
		return -ENOMEM;
	if (!cfg->cpus.all && cfg->cpus.n && cfg->cpus.n != nq) {
		fprintf(stderr, "xdp-gen: --cpus names %u CPUs for %u %s; give one CPU per %s\n",
			cfg->cpus.n, nq, g->mode != GEN_XSK ? "threads" : "queues",
			g->mode != GEN_XSK ? "thread" : "queue");
		return -EINVAL;
	}
	for (i = 0; i < nq; i++) {
		struct gen_thread *t = &g->th[i];

		t->g = g;
		t->idx = i;
		t->queue = g->mode != GEN_XSK ? i : cfg->queues.all ? i : cfg->queues.ids[i];
		if (g->mode == GEN_XSK && t->queue >= maxq) {
			fprintf(stderr, "xdp-gen: %s has no queue %u (it has %u); pick from 0-%u\n",
				g->ifc.name, t->queue, maxq, maxq - 1);
			return -EINVAL;
		}
		t->cpu = (cfg->cpus.n && !cfg->cpus.all) ? (int)cfg->cpus.ids[i] : (int)(i % ncpu);
		if (t->cpu >= (int)ncpu) {
			fprintf(stderr, "xdp-gen: CPU %d is not online (CPUs 0-%u); fix --cpus\n",
				t->cpu, ncpu - 1);
			return -EINVAL;
		}
		/* Kernel mode keeps per-CPU state: one thread per CPU. */
		if (g->mode == GEN_KERNEL && i >= ncpu && !cfg->cpus.n) {
			fprintf(stderr,
				"xdp-gen: --threads %u is more than the %u CPUs; use at most %u (one thread per CPU)\n",
				nq, ncpu, ncpu);
			return -EINVAL;
		}
		/* Each thread owns an exact share of --count and --rate. */
		if (cfg->count)
			t->quota = cfg->count / nq + (i < cfg->count % nq);
		if (cfg->rate)
			t->rate = cfg->rate / nq + (i < cfg->rate % nq);
		/* More threads than packets (or packets/s): the rest send nothing. */
		t->idle = (cfg->count && !t->quota) || (cfg->rate && !t->rate);
	}
	return 0;
}

static int preflight(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	int err;

	err = iface_preflight(g->ifc.name, "gen", &g->ifc);
	if (err)
		return err;
	if (g->mode == GEN_XSK && xsk_queue_check_cli(g->ifc.driver, &cfg->xsk, cfg->ring_size))
		return -EINVAL;
	if (g->mode == GEN_XSK && cfg->batch > cfg->ring_size) {
		fprintf(stderr,
			"xdp-gen: --batch %" PRIu64 " is larger than the ring (%" PRIu64
			"); lower it or raise --ring-size\n",
			(uint64_t)cfg->batch, (uint64_t)cfg->ring_size);
		return -EINVAL;
	}
	err = plan_threads(g);
	if (err)
		return err;
	err = build_packets(g);
	if (err)
		return err;
	err = make_thread_gens(g);
	if (err)
		return err;
	if (g->mode == GEN_KERNEL) {
		if (!kernel_has_live_frames()) {
			fprintf(stderr,
				"xdp-gen: kernel mode needs BPF_PROG_RUN live frames (Linux 5.18 or newer); use 'xdp-gen xsk'\n");
			return -EINVAL;
		}
		if (pkt_gen_max_len(g->th[0].pg) > LIVE_FRAME_MAX) {
			fprintf(stderr,
				"xdp-gen: frames of %u bytes are larger than live frames allow (%d); use -s %d or less, or 'xdp-gen xsk'\n",
				pkt_gen_max_len(g->th[0].pg), LIVE_FRAME_MAX, LIVE_FRAME_MAX);
			return -EINVAL;
		}
		return kernel_check_peer(g);
	}
	if (g->mode == GEN_QDISC)
		return 0;
	if (pkt_gen_max_len(g->th[0].pg) > cfg->xsk.frame_size) {
		fprintf(stderr,
			"xdp-gen: frames of %u bytes do not fit --frame-size %" PRIu64
			"; use a larger frame size or a smaller -s\n",
			pkt_gen_max_len(g->th[0].pg), (uint64_t)cfg->xsk.frame_size);
		return -EINVAL;
	}
	return 0;
}

/* ---------------------------------------------------------------------------
 * Statistics and output
 */

static void counters_add(struct gen_counters *d, const struct gen_counters *s)
{
	d->sent += CNT_READ(s->sent);
	d->bytes += CNT_READ(s->bytes);
	d->submitted += CNT_READ(s->submitted);
	d->stall_ring += CNT_READ(s->stall_ring);
	d->stall_frames += CNT_READ(s->stall_frames);
	d->stall_kick += CNT_READ(s->stall_kick);
	d->kicks += CNT_READ(s->kicks);
	d->redirect_err += CNT_READ(s->redirect_err);
	d->refused += CNT_READ(s->refused);
}

static void take_snapshot(struct gen *g, struct gen_snapshot *s)
{
	unsigned int i;

	s->t_ns = now_ns();
	memset(&s->total, 0, sizeof(s->total));
	s->xsk_tx_invalid = 0;
	if (g->mode == GEN_KERNEL) {
		__u32 key = 0;

		bpf_map__lookup_elem(g->skel->maps.cpu_state, &key, sizeof(key), g->cpu_vals,
				     (size_t)libbpf_num_possible_cpus() * sizeof(*g->cpu_vals), 0);
	}
	for (i = 0; i < g->nthreads; i++) {
		memset(&s->per[i], 0, sizeof(s->per[i]));
		counters_add(&s->per[i], &g->th[i].c);
		if (g->mode == GEN_KERNEL) {
			/* What the program redirected, counted by the program itself. */
			const struct gen_cpu *v = &g->cpu_vals[g->th[i].cpu];

			s->per[i].sent = v->packets;
			s->per[i].bytes = v->bytes;
			s->per[i].redirect_err = v->redirect_err;
		}
		counters_add(&s->total, &s->per[i]);
	}
	iface_link_stats(g->ifc.name, &s->link);
	if (g->tp_links[0]) {
		int c, n = libbpf_num_possible_cpus();
		__u32 key = 0;

		memset(&s->tp, 0, sizeof(s->tp));
		if (!bpf_map__lookup_elem(g->skel->maps.xmit_stats, &key, sizeof(key), g->tp_vals,
					  (size_t)n * sizeof(*g->tp_vals), 0))
			for (c = 0; c < n; c++) {
				s->tp.sent += g->tp_vals[c].sent;
				s->tp.drops += g->tp_vals[c].drops;
				s->tp.err += g->tp_vals[c].err;
			}
	}
	if (g->kr && s->ks)
		kstats_read(g->kr, s->ks);
	if (g->estats && !iface_estats_read(g->estats)) {
		s->xdp_xmit = iface_estat_sum(g->estats, "tx_queue_", "_xdp_xmit", NULL);
		s->xdp_xmit_errors =
			iface_estat_sum(g->estats, "tx_queue_", "_xdp_xmit_errors", NULL);
	}
}

static void copy_snapshot(struct gen *g, struct gen_snapshot *d, const struct gen_snapshot *s)
{
	struct gen_counters *per = d->per;
	struct kstats *ks = d->ks;

	*d = *s;
	d->per = per;
	d->ks = ks;
	if (ks && s->ks)
		*ks = *s->ks;
	memcpy(per, s->per, g->nthreads * sizeof(*per));
}

static __u64 xsk_tx_invalid(struct gen *g)
{
	struct xdp_statistics st;
	__u64 n = 0;
	unsigned int i;

	for (i = 0; i < g->nthreads; i++)
		if (g->th[i].q && !xsk_queue_stats(g->th[i].q, &st))
			n += st.tx_invalid_descs;
	return n;
}

static void report(struct gen *g, const struct gen_snapshot *a, const struct gen_snapshot *b,
		   bool summary)
{
	const struct gen_cfg *cfg = g->cfg;
	__u64 dt = a->t_ns - b->t_ns;
	double secs = (double)dt / 1e9;
	__u64 sent = a->total.sent - b->total.sent, bytes = a->total.bytes - b->total.bytes;
	__u64 outstanding = g->mode == GEN_XSK ? a->total.submitted - a->total.sent : 0;
	__u64 link_tx = a->link.tx_packets - b->link.tx_packets;
	__u64 link_drop = a->link.tx_dropped - b->link.tx_dropped;
	__u64 xmit = a->xdp_xmit - b->xdp_xmit, xmit_err = a->xdp_xmit_errors - b->xdp_xmit_errors;
	__u64 tp_sent = a->tp.sent - b->tp.sent, tp_drops = a->tp.drops - b->tp.drops;
	__u64 tp_err = a->tp.err - b->tp.err;
	bool books = g->mode == GEN_KERNEL && (g->estats || g->tp_links[0]);

	/* Without the device's own counters (veth has them), the tracepoints speak. */
	if (!g->estats && g->tp_links[0]) {
		xmit = tp_sent;
		xmit_err = tp_drops + tp_err;
	}
	char b1[32], b2[32], b3[32];
	unsigned int i;

	if (cfg->json) {
		struct jw w;

		jw_begin(&w, stdout, summary ? "summary" : "interval");
		jw_str(&w, "tool", "xdp-gen");
		jw_str(&w, "mode", g->mode_name);
		jw_str(&w, "ifname", g->ifc.name);
		if (summary) {
			jw_str(&w, "stop_reason", g->stop_reason);
			jw_u64(&w, "requested", cfg->count);
			jw_u64(&w, "run", g->popts.run);
		}
		jw_double(&w, "time_s", (double)(a->t_ns - g->base.t_ns) / 1e9);
		jw_double(&w, "duration_s", secs);
		jw_u64(&w, "tx_packets", sent);
		jw_u64(&w, "tx_bytes", bytes);
		jw_u64(&w, "rx_packets", 0);
		jw_u64(&w, "rx_bytes", 0);
		jw_double(&w, "pps", counter_rate(a->total.sent, b->total.sent, dt));
		jw_double(&w, "bps", counter_rate(a->total.bytes, b->total.bytes, dt) * 8);
		jw_u64(&w, "outstanding", outstanding);
		jw_obj(&w, "stalls");
		jw_u64(&w, "ring_full", a->total.stall_ring - b->total.stall_ring);
		jw_u64(&w, "no_free_frame", a->total.stall_frames - b->total.stall_frames);
		jw_u64(&w, "kick_busy", a->total.stall_kick - b->total.stall_kick);
		jw_end_obj(&w);
		jw_u64(&w, "kicks", a->total.kicks - b->total.kicks);
		jw_obj(&w, "drops");
		jw_u64(&w, "link_tx_dropped", link_drop);
		if (g->mode == GEN_XSK)
			jw_u64(&w, "xsk_tx_invalid", a->xsk_tx_invalid - b->xsk_tx_invalid);
		if (g->mode == GEN_KERNEL) {
			jw_u64(&w, "redirect_refused",
			       a->total.redirect_err - b->total.redirect_err);
			jw_u64(&w, "xdp_xmit_errors", xmit_err);
		}
		jw_end_obj(&w);
		if (g->mode == GEN_QDISC) {
			/* attempted = accepted (tx_packets) + refused by a full qdisc */
			jw_u64(&w, "attempted", sent + a->total.refused - b->total.refused);
			jw_u64(&w, "refused", a->total.refused - b->total.refused);
		}
		if (cfg->kernel_stats && a->ks && b->ks) {
			struct kstats *d = malloc(sizeof(*d));

			if (d) {
				kstats_delta(a->ks, b->ks, d);
				kstats_json(&w, "kernel_stats", d);
				free(d);
			}
		}
		if (books) {
			/* sent = transmitted + failed, from the device's own counters */
			jw_u64(&w, "transmitted", xmit);
			jw_u64(&w, "failed", xmit_err);
			jw_i64(&w, "unexplained", (__s64)sent - (__s64)(xmit + xmit_err));
		}
		if (g->tp_links[0]) {
			jw_obj(&w, "tracepoints");
			jw_u64(&w, "devmap_xmit_sent", tp_sent);
			jw_u64(&w, "devmap_xmit_drops", tp_drops);
			jw_u64(&w, "redirect_err", tp_err);
			jw_end_obj(&w);
		}
		jw_obj(&w, "kernel");
		jw_u64(&w, "link_tx_packets", link_tx);
		jw_u64(&w, "link_tx_dropped", link_drop);
		if (g->estats) {
			jw_u64(&w, "xdp_xmit", xmit);
			jw_u64(&w, "xdp_xmit_errors", xmit_err);
		}
		jw_end_obj(&w);
		jw_arr(&w, "queues");
		for (i = 0; i < g->nthreads; i++) {
			const struct gen_counters *pa = &a->per[i], *pb = &b->per[i];

			jw_obj(&w, NULL);
			jw_u64(&w, "queue", g->th[i].queue);
			jw_u64(&w, "cpu", (__u64)g->th[i].cpu);
			jw_u64(&w, "tx_packets", pa->sent - pb->sent);
			jw_u64(&w, "tx_bytes", pa->bytes - pb->bytes);
			jw_double(&w, "pps", counter_rate(pa->sent, pb->sent, dt));
			jw_u64(&w, "outstanding",
			       (g->mode == GEN_XSK ? pa->submitted - pa->sent : 0));
			if (summary && g->th[i].accounting[0]) {
				jw_bool(&w, "frames_balanced", g->th[i].accounting_ok);
				jw_str(&w, "frame_accounting", g->th[i].accounting);
			}
			jw_end_obj(&w);
		}
		jw_end_arr(&w);
		jw_finish(&w);
		return;
	}
	if (!summary) {
		printf("%8.2fs  tx %7s pps %7sbit/s  total %s",
		       (double)(a->t_ns - g->base.t_ns) / 1e9,
		       fmt_si(b1, sizeof(b1), counter_rate(a->total.sent, b->total.sent, dt)),
		       fmt_si(b2, sizeof(b2), counter_rate(a->total.bytes, b->total.bytes, dt) * 8),
		       fmt_count(b3, sizeof(b3), a->total.sent - g->base.total.sent));
		if (a->total.stall_ring != b->total.stall_ring ||
		    a->total.stall_frames != b->total.stall_frames ||
		    a->total.stall_kick != b->total.stall_kick)
			printf("  stalls: ring %" PRIu64 " frames %" PRIu64 " kick %" PRIu64,
			       (uint64_t)(a->total.stall_ring - b->total.stall_ring),
			       (uint64_t)(a->total.stall_frames - b->total.stall_frames),
			       (uint64_t)(a->total.stall_kick - b->total.stall_kick));
		if (outstanding)
			printf("  outstanding %" PRIu64, (uint64_t)outstanding);
		if (link_drop)
			printf("  link tx_dropped %" PRIu64, (uint64_t)link_drop);
		if (xmit_err)
			printf("  xdp_xmit_errors %" PRIu64, (uint64_t)xmit_err);
		if (g->mode == GEN_QDISC && a->total.refused != b->total.refused)
			printf("  refused %" PRIu64,
			       (uint64_t)(a->total.refused - b->total.refused));
		printf("\n");
	} else {
		printf("xdp-gen %s %s: %s packets, %s bytes in %.2f s (%s pps, %sbit/s); stopped by %s\n",
		       g->mode_name, g->ifc.name, fmt_count(b1, sizeof(b1), sent),
		       fmt_count(b2, sizeof(b2), bytes), secs,
		       fmt_si(b3, sizeof(b3), counter_rate(a->total.sent, b->total.sent, dt)),
		       fmt_si(b3 + 16, 16, counter_rate(a->total.bytes, b->total.bytes, dt) * 8),
		       g->stop_reason);
		if (g->mode == GEN_XSK)
			printf("  stalls:   ring full %" PRIu64 ", no free frame %" PRIu64
			       ", kick busy %" PRIu64 " (kicks %" PRIu64 "); outstanding %" PRIu64
			       "\n",
			       (uint64_t)(a->total.stall_ring - b->total.stall_ring),
			       (uint64_t)(a->total.stall_frames - b->total.stall_frames),
			       (uint64_t)(a->total.stall_kick - b->total.stall_kick),
			       (uint64_t)(a->total.kicks - b->total.kicks), (uint64_t)outstanding);
		if (books)
			printf("  sent %" PRIu64 " = transmitted %" PRIu64 " + failed %" PRIu64
			       " (xdp_xmit_errors: %s)%s\n",
			       (uint64_t)sent, (uint64_t)xmit, (uint64_t)xmit_err,
			       xmit_err ? "the peer's ring was full or it runs no NAPI" : "none",
			       sent == xmit + xmit_err ? "" : "  UNEXPLAINED difference");
		if (g->mode == GEN_KERNEL)
			printf("  redirect refused by the kernel: %" PRIu64 "\n",
			       (uint64_t)(a->total.redirect_err - b->total.redirect_err));
		if (g->tp_links[0])
			printf("  tracepoints: xdp_devmap_xmit sent %" PRIu64 ", dropped %" PRIu64
			       "; xdp_redirect_err %" PRIu64 "\n",
			       (uint64_t)tp_sent, (uint64_t)tp_drops, (uint64_t)tp_err);
		if (g->mode == GEN_QDISC)
			printf("  attempted %" PRIu64 " = accepted %" PRIu64 " + refused %" PRIu64
			       " (ENOBUFS: the qdisc was full)\n",
			       (uint64_t)(sent + a->total.refused - b->total.refused),
			       (uint64_t)sent, (uint64_t)(a->total.refused - b->total.refused));
		printf("  kernel:   %s tx_packets %" PRIu64 ", tx_dropped %" PRIu64, g->ifc.name,
		       (uint64_t)link_tx, (uint64_t)link_drop);
		if (g->mode == GEN_XSK)
			printf(", xsk tx_invalid_descs %" PRIu64,
			       (uint64_t)(a->xsk_tx_invalid - b->xsk_tx_invalid));
		printf("\n");
	}
	if (cfg->verbose) {
		for (i = 0; i < g->nthreads; i++) {
			const struct gen_counters *pa = &a->per[i], *pb = &b->per[i];

			printf("    queue %-4u cpu %-3d %12s packets %8s pps  outstanding %" PRIu64
			       "%s%s\n",
			       g->th[i].queue, g->th[i].cpu,
			       fmt_count(b1, sizeof(b1), pa->sent - pb->sent),
			       fmt_si(b2, sizeof(b2), counter_rate(pa->sent, pb->sent, dt)),
			       (uint64_t)((g->mode == GEN_XSK ? pa->submitted - pa->sent : 0)),
			       summary && g->th[i].accounting[0] ? "  frames: " : "",
			       summary ? g->th[i].accounting : "");
		}
	}
	fflush(stdout);
}

static bool all_finished(const struct gen *g)
{
	unsigned int i;

	for (i = 0; i < g->nthreads; i++)
		if (!__atomic_load_n(&g->th[i].finished, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static int start_threads(struct gen *g)
{
	unsigned int i;
	int err;

	for (i = 0; i < g->nthreads; i++) {
		err = -pthread_create(&g->th[i].tid, NULL,
				      g->mode == GEN_KERNEL ? kernel_thread :
				      g->mode == GEN_QDISC  ? qdisc_thread :
							      xsk_thread,
				      &g->th[i]);
		if (err) {
			pr_warn("cannot start a thread: %s\n", strerror(-err));
			return err;
		}
		g->th[i].created = true;
	}
	/* Wait until every thread has its queue (or failed), then start the clock. */
	for (i = 0; i < g->nthreads; i++)
		while (!__atomic_load_n(&g->th[i].ready, __ATOMIC_ACQUIRE))
			usleep(1000);
	for (i = 0; i < g->nthreads; i++)
		if (g->th[i].err)
			return g->th[i].err;
	return 0;
}

/*
 * The qdisc holds packets but has sent none for a second: its device's TX
 * queue is stopped and nobody wakes it. Say so and stop instead of hanging.
 * Test hook: XDPSG_TEST_STALL=1 feeds the detector a frozen counter.
 */
static bool qdisc_stalled(struct gen *g)
{
	static int hook = -1;
	const struct kstats_qdisc *root;
	__u64 now = now_ns(), sent, backlog;

	if (hook < 0)
		hook = getenv("XDPSG_TEST_STALL") != NULL;
	if (kstats_read(g->kr, g->cur.ks))
		return false;
	root = kstats_root(g->cur.ks);
	if (!root)
		return false;
	sent = hook ? 0 : root->packets;
	backlog = hook ? 1 : root->backlog + root->qlen;
	if (!stall_update(&g->stall, now, sent, backlog))
		return false;
	g->stall_ns = stall_duration(&g->stall, now);
	pr_warn("stall: the %s qdisc on %s holds %" PRIu64 " bytes (%" PRIu64
		" packets) but sent nothing for %.1f s; its TX queue looks stopped and never woken (seen with multi-queue veth and GRO-only NAPI on the peer: attach an XDP program to the peer)\n",
		root->kind, g->ifc.name, (uint64_t)root->backlog, (uint64_t)root->qlen,
		(double)g->stall_ns / 1e9);
	return true;
}

static int run(struct gen *g)
{
	const struct gen_cfg *cfg = g->cfg;
	__u64 next_report, end = 0;
	bool stalled = false;
	unsigned int i;

	take_snapshot(g, &g->base);
	copy_snapshot(g, &g->prev, &g->base);
	g->t0 = g->base.t_ns;
	next_report = g->t0 + cfg->interval;
	if (cfg->duration)
		end = g->t0 + cfg->duration;
	g->end_ns = end;
	if (!cfg->quiet && !cfg->json) {
		printf("xdp-gen %s on %s: %u %s%s (", g->mode_name, g->ifc.name, g->nthreads,
		       g->mode == GEN_KERNEL ? "thread" : "queue", g->nthreads > 1 ? "s" : "");
		for (i = 0; i < g->nthreads; i++)
			printf("%s%u on cpu %d", i ? ", " : "", g->th[i].queue, g->th[i].cpu);
		printf("), %s, %u-byte frames%s; Ctrl-C to stop\n",
		       g->mode == GEN_KERNEL ? "live frames" :
		       g->th[0].zerocopy     ? "zero-copy mode" :
					       "copy mode",
		       pkt_gen_max_len(g->th[0].pg), g->popts.imix ? " max (imix)" : "");
		fflush(stdout);
	}
	__atomic_store_n(&g->go, 1, __ATOMIC_RELEASE);

	while (!runtime_stop) {
		__u64 wake = next_report, now = now_ns();

		if (end && end < wake)
			wake = end;
		if (now + 20000000ULL < wake)
			wake = now + 20000000ULL;
		runtime_sleep_until(wake);
		if (all_finished(g)) {
			g->stop_reason = cfg->count ? "count" : "error";
			break;
		}
		if (g->mode == GEN_QDISC && qdisc_stalled(g)) {
			g->stop_reason = "stall";
			stalled = true;
			break;
		}
		if (end && now_ns() >= end) {
			g->stop_reason = "duration";
			break;
		}
		if (now_ns() >= next_report) {
			take_snapshot(g, &g->cur);
			g->cur.xsk_tx_invalid = g->mode == GEN_XSK ? xsk_tx_invalid(g) : 0;
			if (!cfg->quiet)
				report(g, &g->cur, &g->prev, false);
			copy_snapshot(g, &g->prev, &g->cur);
			next_report += cfg->interval;
			if (next_report < g->cur.t_ns)
				next_report = g->cur.t_ns + cfg->interval;
		}
	}
	if (runtime_stop)
		g->stop_reason = runtime_signal == SIGTERM ? "SIGTERM" :
				 runtime_signal == SIGHUP  ? "SIGHUP" :
							     "SIGINT";
	__atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < g->nthreads; i++) {
		if (!g->th[i].created)
			continue;
		/* Kernel mode: cut a long BPF_PROG_RUN short; it stops between batches. */
		while (g->mode == GEN_KERNEL &&
		       !__atomic_load_n(&g->th[i].finished, __ATOMIC_ACQUIRE)) {
			pthread_kill(g->th[i].tid, SIGUSR1);
			usleep(1000);
		}
		pthread_join(g->th[i].tid, NULL);
		g->th[i].created = false;
	}
	take_snapshot(g, &g->cur);
	g->cur.xsk_tx_invalid = g->mode == GEN_XSK ? xsk_tx_invalid(g) : 0;
	for (i = 0; i < g->nthreads; i++)
		if (g->th[i].err) {
			g->stop_reason = "error";
			report(g, &g->cur, &g->base, true);
			return g->th[i].err;
		}
	report(g, &g->cur, &g->base, true);
	if (stalled)
		return -EIO;
	if (g->mode == GEN_KERNEL && (g->estats || g->tp_links[0])) {
		__u64 sent = g->cur.total.sent - g->base.total.sent;
		__u64 done = g->estats ?
				     (g->cur.xdp_xmit - g->base.xdp_xmit) +
					     (g->cur.xdp_xmit_errors - g->base.xdp_xmit_errors) :
				     (g->cur.tp.sent - g->base.tp.sent) +
					     (g->cur.tp.drops - g->base.tp.drops) +
					     (g->cur.tp.err - g->base.tp.err);

		if (sent != done) {
			pr_warn("the books do not balance: the program sent %llu, the device counted %llu transmitted or failed\n",
				(unsigned long long)sent, (unsigned long long)done);
			return -EIO;
		}
	}
	if (g->mode == GEN_XSK && g->cur.link.tx_dropped != g->base.link.tx_dropped)
		pr_warn("%s dropped %llu of the frames the kernel took (link tx_dropped): a veth without a qdisc drops when its peer's ring is full; give it one (tc qdisc add dev %s root pfifo) to get backpressure instead\n",
			g->ifc.name,
			(unsigned long long)(g->cur.link.tx_dropped - g->base.link.tx_dropped),
			g->ifc.name);
	for (i = 0; i < g->nthreads; i++)
		if (g->th[i].accounting[0] && !g->th[i].accounting_ok) {
			pr_warn("queue %u: frame accounting does not balance: %s\n", g->th[i].queue,
				g->th[i].accounting);
			return -EIO;
		}
	return 0;
}

static void cleanup(struct gen *g)
{
	unsigned int i;

	__atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; g->th && i < g->nthreads; i++) {
		struct gen_thread *t = &g->th[i];

		if (t->created)
			pthread_join(t->tid, NULL);
		xsk_queue__destroy(t->q);
		pkt_gen__destroy(t->pg);
		free(t->addrs);
		free(t->lens);
	}
	free(g->th);
	if (g->peer_fixed && iface_peer_set_gro(&g->ifc, false))
		pr_warn("could not turn GRO off again at %s; do it with 'ethtool -K <peer> gro off'\n",
			g->peer_desc);
	bpf_link__destroy(g->tp_links[0]);
	bpf_link__destroy(g->tp_links[1]);
	free(g->tp_vals);
	xdp_gen_bpf__destroy(g->skel);
	free(g->frame);
	free(g->cpu_vals);
	iface_estats__close(g->estats);
	kstats_reader__close(g->kr);
	free(g->base.ks);
	free(g->prev.ks);
	free(g->cur.ks);
	free(g->base.per);
	free(g->prev.per);
	free(g->cur.per);
}

int main(int argc, char **argv)
{
	struct gen_cfg cfg = defaults;
	const struct param_cmd *cmd;
	struct gen g = { .cfg = &cfg };
	const char *ifname;
	int err;

	log_set_prog("xdp-gen");
	err = params_dispatch(
		"xdp-gen",
		"Send packets with checkable contents, as fast as possible or at a rate.", cmds,
		&defaults, argc, argv, &cmd);
	if (err >= 0)
		return err;
	err = params_parse("xdp-gen", cmd, argc - 1, argv + 1, &cfg, &defaults, &ifname);
	if (err)
		return err == PARAMS_EXIT ? 0 : 2;
	log_setup(cfg.quiet, cfg.verbose);
	g.mode = cmd == &cmd_kernel ? GEN_KERNEL : cmd == &cmd_qdisc ? GEN_QDISC : GEN_XSK;
	g.mode_name = cmd->name;
	snprintf(g.ifc.name, sizeof(g.ifc.name), "%s", ifname);

	/* Signals first: preflight may change a peer (--fix-peer) that cleanup restores. */
	if (runtime_install_signals()) {
		cleanup(&g);
		return 1;
	}
	{
		/* SIGUSR1 only interrupts a worker's blocking call; no SA_RESTART. */
		struct sigaction sa = { .sa_handler = on_wake };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
	}
	/* Everything that can be refused is refused before a socket exists. */
	err = preflight(&g);
	if (err) {
		cleanup(&g);
		return 2;
	}
	g.base.per = calloc(g.nthreads, sizeof(*g.base.per));
	g.prev.per = calloc(g.nthreads, sizeof(*g.prev.per));
	g.cur.per = calloc(g.nthreads, sizeof(*g.cur.per));
	if (!g.base.per || !g.prev.per || !g.cur.per) {
		cleanup(&g);
		return 1;
	}
	/* The kernel's own counters: shown with --kernel-stats, watched for stalls in qdisc mode. */
	if (cfg.kernel_stats || g.mode == GEN_QDISC) {
		if (kstats_reader__open(g.ifc.name, &g.kr) ||
		    !(g.base.ks = calloc(1, sizeof(struct kstats))) ||
		    !(g.prev.ks = calloc(1, sizeof(struct kstats))) ||
		    !(g.cur.ks = calloc(1, sizeof(struct kstats)))) {
			pr_warn("cannot read the kernel counters of %s\n", g.ifc.name);
			cleanup(&g);
			return 1;
		}
		stall_init(&g.stall, STALL_WINDOW_NS);
	}

	/* Kernel mode: one loaded program, maps filled, per-CPU state set. */
	if (g.mode == GEN_KERNEL) {
		err = kernel_setup(&g);
		if (err) {
			cleanup(&g);
			return 1;
		}
	}
	/* Threads make their sockets on their own CPUs, then run together. */
	err = start_threads(&g);
	if (!err)
		err = run(&g);
	cleanup(&g);
	/* The environment said no: missing device or queue, busy queue, no huge pages. */
	if (err == -ENODEV || err == -EINVAL || err == -EOPNOTSUPP || err == -EPERM ||
	    err == -EBUSY || (err == -ENOMEM && cfg.xsk.huge_pages))
		return 2;
	return err ? 1 : 0;
}
