// SPDX-License-Identifier: GPL-2.0
/*
 * bench-ref: the reference points of the benchmark matrix (bench/run.py).
 *
 *   bench-ref drop IFNAME  attach xdp_bare_drop (one instruction: XDP_DROP) in
 *                          native mode and wait; the receive limit. Counts
 *                          nothing: the veth's own counters do.
 *   bench-ref gen IFNAME   run xdp_gen_bare (bpf_redirect out of IFNAME, no
 *                          per-packet work) through BPF_PROG_RUN with live
 *                          frames from one thread per CPU; the transmit limit.
 *
 * Both end after --duration or on SIGINT/SIGTERM, detach what they attached and
 * print one JSON summary line.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/cpu.h"
#include "base/log.h"
#include "base/runtime.h"
#include "cli/params_cmd.h"
#include "cli/params_doc.h"
#include "kern/iface.h"
#include "xdp_gen.skel.h"
#include "xdp_sink.skel.h"

#define REF_MAX_THREADS 64
#define REF_FRAME_MAX 3400

struct ref_cfg {
	__u64 duration;
	__u64 threads;
	__u64 size;
	__u64 batch;
	__u64 repeat;
	const char *dst_mac;
	bool skb_mode;
};

#define OPT(f) offsetof(struct ref_cfg, f)
static const struct param_def drop_opts[] = {
	PARAM_OPT("duration", PARAM_DURATION, OPT(duration), .short_opt = 'd', .metavar = "TIME",
		  .help = "stop after this long (0: until a signal)"),
	PARAM_OPT("skb", PARAM_FLAG, OPT(skb_mode),
		  .help = "attach in generic (skb) mode instead of native"),
	{},
};

static const struct param_def gen_opts[] = {
	PARAM_OPT("duration", PARAM_DURATION, OPT(duration), .short_opt = 'd', .metavar = "TIME",
		  .help = "stop after this long (0: until a signal)"),
	PARAM_OPT("threads", PARAM_UINT, OPT(threads), .short_opt = 't', .metavar = "N",
		  .help = "threads, thread i on CPU i", .min = 1, .max = REF_MAX_THREADS),
	PARAM_OPT("size", PARAM_UINT, OPT(size), .short_opt = 's', .metavar = "BYTES",
		  .help = "frame size without FCS", .min = 60, .max = REF_FRAME_MAX),
	PARAM_OPT("batch", PARAM_UINT, OPT(batch), .short_opt = 'b', .metavar = "N",
		  .help = "BPF_PROG_RUN batch_size", .min = 1, .max = 256),
	PARAM_OPT("repeat", PARAM_COUNT, OPT(repeat), .metavar = "N",
		  .help = "frames per BPF_PROG_RUN call", .min = 1),
	PARAM_OPT("dst-mac", PARAM_STRING, OPT(dst_mac), .metavar = "MAC",
		  .help = "destination MAC (default: broadcast)"),
	{},
};

static const struct param_cmd cmd_drop = {
	.name = "drop",
	.summary = "attach the bare XDP_DROP program (the receive limit) and wait",
	.positional = "IFNAME",
	.tables = { drop_opts, NULL },
};

static const struct param_cmd cmd_gen = {
	.name = "gen",
	.summary = "send with the bare live-frames redirect program (the transmit limit)",
	.positional = "IFNAME",
	.tables = { gen_opts, NULL },
};

static const struct param_cmd *const cmds[] = { &cmd_drop, &cmd_gen, NULL };

static void wait_stop(__u64 duration)
{
	__u64 end = duration ? now_ns() + duration : 0;

	while (!runtime_stop && (!end || now_ns() < end))
		usleep(20000);
}

/* Receive limit */
static int do_drop(const struct ref_cfg *c, const char *ifname)
{
	__u32 flags = c->skb_mode ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	struct xdp_sink_bpf *skel = NULL;
	struct bpf_program *p;
	int ifindex, err;
	__u64 t0;

	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex) {
		fprintf(stderr, "bench-ref: interface '%s' not found\n", ifname);
		return 2;
	}
	skel = xdp_sink_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench-ref: cannot open the sink object: %s\n", strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == skel->progs.xdp_bare_drop);
	err = xdp_sink_bpf__load(skel);
	if (err) {
		fprintf(stderr, "bench-ref: cannot load xdp_bare_drop: %s\n", strerror(-err));
		goto out;
	}
	err = bpf_xdp_attach(ifindex, bpf_program__fd(skel->progs.xdp_bare_drop),
			     flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		fprintf(stderr, "bench-ref: cannot attach to %s: %s (another XDP program there?)\n",
			ifname, strerror(-err));
		goto out;
	}
	t0 = now_ns();
	printf("{\"type\":\"ready\",\"tool\":\"bench-ref\",\"mode\":\"drop\",\"ifname\":\"%s\"}\n",
	       ifname);
	fflush(stdout);
	wait_stop(c->duration);
	bpf_xdp_detach(ifindex, flags, NULL);
	printf("{\"type\":\"summary\",\"tool\":\"bench-ref\",\"mode\":\"drop\",\"ifname\":\"%s\",\"duration_s\":%.3f}\n",
	       ifname, (double)(now_ns() - t0) / 1e9);
out:
	xdp_sink_bpf__destroy(skel);
	return err ? 1 : 0;
}

/* Transmit limit */
struct gen_thread {
	pthread_t tid;
	int cpu;
	int prog_fd;
	const struct ref_cfg *c;
	const unsigned char *frame;
	__u64 sent;
	int err;
};

static volatile int gen_stop;

static void on_wake(int sig)
{
	(void)sig;
}

static void *gen_thread(void *arg)
{
	struct gen_thread *t = arg;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = t->frame, .data_size_in = (__u32)t->c->size,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = (__u32)t->c->batch,
		    .repeat = (__u32)t->c->repeat);

	t->err = cpu_pin_self(t->cpu);
	while (!t->err && !gen_stop) {
		if (bpf_prog_test_run_opts(t->prog_fd, &o)) {
			if (errno == EINTR) {
				if (gen_stop)
					break;
				continue;
			}
			t->err = -errno;
			break;
		}
		/* Interrupted calls are not counted: this is a lower bound. */
		t->sent += o.repeat;
	}
	return NULL;
}

static void build_frame(unsigned char *f, size_t len, const unsigned char *dmac,
			const unsigned char *smac)
{
	unsigned char *ip = f + 14, *udp = f + 34;
	unsigned int iplen = (unsigned int)len - 14, sum = 0, i;

	memset(f, 0, len);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (unsigned char)(iplen >> 8);
	ip[3] = (unsigned char)iplen;
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 10, ip[13] = 11, ip[14] = 0, ip[15] = 1;
	ip[16] = 10, ip[17] = 11, ip[18] = 0, ip[19] = 2;
	for (i = 0; i < 20; i += 2)
		sum += (unsigned int)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (unsigned char)(~sum >> 8);
	ip[11] = (unsigned char)~sum;
	udp[0] = 0x27, udp[1] = 0x10, udp[2] = 0x27, udp[3] = 0x11;
	udp[4] = (unsigned char)((iplen - 20) >> 8);
	udp[5] = (unsigned char)(iplen - 20);
}

static int do_gen(const struct ref_cfg *c, const char *ifname)
{
	unsigned char frame[REF_FRAME_MAX], dmac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct gen_thread th[REF_MAX_THREADS] = {};
	struct xdp_gen_bpf *skel = NULL;
	struct sigaction sa = { .sa_handler = on_wake };
	struct bpf_program *p;
	sigset_t mask;
	unsigned int i, n = (unsigned int)c->threads, started = 0;
	struct iface ifc;
	__u64 t0, sent = 0;
	int err;

	if (iface_get(ifname, &ifc)) {
		fprintf(stderr, "bench-ref: interface '%s' not found\n", ifname);
		return 2;
	}
	if (c->dst_mac && sscanf(c->dst_mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dmac[0], &dmac[1],
				 &dmac[2], &dmac[3], &dmac[4], &dmac[5]) != 6) {
		fprintf(stderr, "bench-ref: bad --dst-mac '%s'\n", c->dst_mac);
		return 2;
	}
	if (n > (unsigned int)cpu_online_count()) {
		fprintf(stderr, "bench-ref: %u threads but only %d CPUs\n", n, cpu_online_count());
		return 2;
	}
	build_frame(frame, c->size, dmac, ifc.mac);
	skel = xdp_gen_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench-ref: cannot open the generator object: %s\n",
			strerror(errno));
		return 1;
	}
	skel->rodata->ifindex_out = (__u32)ifc.ifindex;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == skel->progs.xdp_gen_bare);
	err = xdp_gen_bpf__load(skel);
	if (err) {
		fprintf(stderr, "bench-ref: cannot load xdp_gen_bare: %s\n", strerror(-err));
		goto out;
	}
	/* SIGUSR1 interrupts a running BPF_PROG_RUN between batches (no SA_RESTART). */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	/* Workers take only SIGUSR1; SIGINT and SIGTERM go to the main thread. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		th[i] = (struct gen_thread){ .cpu = (int)i,
					     .prog_fd = bpf_program__fd(skel->progs.xdp_gen_bare),
					     .c = c,
					     .frame = frame };
		err = -pthread_create(&th[i].tid, NULL, gen_thread, &th[i]);
		if (err)
			break;
		started++;
	}
	pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
	if (!err)
		wait_stop(c->duration);
	gen_stop = 1;
	for (i = 0; i < started; i++)
		pthread_kill(th[i].tid, SIGUSR1);
	for (i = 0; i < started; i++) {
		pthread_join(th[i].tid, NULL);
		sent += th[i].sent;
		if (th[i].err && !err)
			err = th[i].err;
	}
	if (err)
		fprintf(stderr, "bench-ref: BPF_PROG_RUN failed: %s\n", strerror(-err));
	printf("{\"type\":\"summary\",\"tool\":\"bench-ref\",\"mode\":\"gen\",\"ifname\":\"%s\",\"threads\":%u,\"size\":%" PRIu64
	       ",\"tx_packets_min\":%" PRIu64 ",\"duration_s\":%.3f}\n",
	       ifname, n, (uint64_t)c->size, (uint64_t)sent, (double)(now_ns() - t0) / 1e9);
out:
	xdp_gen_bpf__destroy(skel);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct ref_cfg cfg = { .threads = 1, .size = 60, .batch = 64, .repeat = 1 << 20 };
	const struct ref_cfg defaults = cfg;
	const struct param_cmd *cmd;
	const char *ifname;
	int err;

	log_set_prog("bench-ref");
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		params_usage_tool(
			argc < 2 ? stderr : stdout, "bench-ref",
			"Reference points for bench/run.py: the receive and transmit limits.",
			cmds);
		return argc < 2 ? 2 : 0;
	}
	cmd = params_find_cmd(cmds, argv[1]);
	if (!cmd) {
		fprintf(stderr, "bench-ref: unknown command '%s'; use drop or gen\n", argv[1]);
		return 2;
	}
	err = params_command("bench-ref", cmd, argc - 1, argv + 1, &cfg, &defaults, &ifname);
	if (err >= 0)
		return err;
	log_route_libbpf();
	runtime_install_signals();
	return cmd == &cmd_drop ? do_drop(&cfg, ifname) : do_gen(&cfg, ifname);
}
