// SPDX-License-Identifier: GPL-2.0
/*
 * xsk-probe: create one xsk_queue (UMEM + allocator + AF_XDP socket) on an
 * interface queue, optionally send a few frames through it, and print one JSON
 * line describing what was bound: mode, ring sizes, frame count, UMEM
 * placement, allocator check, XDP_STATISTICS. Used by the integration tests.
 *
 * Exit: 0 success, 1 runtime failure, 2 bad usage or environment (no such
 * interface or queue, zero-copy where unsupported).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/numa.h"
#include "cli/params.h"
#include "xsk/xsk_queue.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xsk-probe [OPTIONS] IFNAME\n"
		"  -q, --queue N        queue id (default 0)\n"
		"  -c, --cpu N          cpu whose node gets the UMEM (default: current)\n"
		"      --rx-size N      rx ring (default 2048), --tx-size N, --fill-size N,\n"
		"      --comp-size N    (fill default 2 x rx, completion default tx)\n"
		"      --frames N       UMEM frames (default fill + tx)\n"
		"      --frame-size N   2048 or 4096\n"
		"      --headroom N     bytes before each packet\n"
		"  -m, --mode MODE      auto | copy | zero-copy (default auto)\n"
		"      --rx-only, --tx-only\n"
		"      --no-need-wakeup, --busy-poll, --huge-pages\n"
		"      --tx-budget N    try XDP_MAX_TX_SKB_BUDGET\n"
		"      --send N         send N broadcast frames and wait for their completions\n"
		"      --hold SECONDS   keep the socket open after printing (ss --xdp can see it)\n"
		"  -v, --verbose\n");
}

static int parse_u32(const char *s, __u32 *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > 0xffffffffUL)
		return -EINVAL;
	*out = (__u32)v;
	return 0;
}

/* A 60-byte broadcast frame with a local experimental EtherType. */
static void write_frame(void *data, __u32 seq)
{
	unsigned char *p = data;

	memset(p, 0, 60);
	memset(p, 0xff, 6);
	p[6] = 0x02; /* locally administered source */
	p[11] = 0x01;
	p[12] = 0x88; /* 0x88b5: IEEE local experimental */
	p[13] = 0xb5;
	memcpy(p + 14, &seq, sizeof(seq));
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/* Send n frames and drain their completions; returns 0 or -errno. */
static int send_frames(struct xsk_queue *q, __u32 n, __u32 *sent, __u32 *completed)
{
	__u64 deadline = now_ms() + 5000;
	int err = 0;

	*sent = *completed = 0;
	while ((*sent < n || *completed < *sent) && !stop) {
		__u64 addrs[64];
		__u32 want = n - *sent, got, idx, r, i;

		if (want > q->batch)
			want = q->batch;
		if (want > 64)
			want = 64;
		got = frame_alloc_bulk(q->fa, want, addrs);
		r = got ? xsk_queue_tx_reserve(q, got, &idx) : 0;
		for (i = 0; i < r; i++) {
			struct xdp_desc *d = xsk_queue_tx_desc(q, idx + i);

			write_frame(xsk_queue_frame_data(q, addrs[i]), *sent + i);
			d->addr = addrs[i];
			d->len = 60;
			d->options = 0;
		}
		if (r)
			xsk_queue_tx_submit(q, r);
		if (got > r)
			frame_free_bulk(q->fa, got - r, addrs + r);
		*sent += r;
		err = xsk_queue_kick_tx(q);
		if (err)
			break;
		*completed += xsk_queue_complete(q);
		if (now_ms() > deadline) {
			err = -ETIMEDOUT;
			break;
		}
	}
	return err;
}

int main(int argc, char **argv)
{
	enum {
		OPT_RX = 256,
		OPT_TX,
		OPT_FILL,
		OPT_COMP,
		OPT_FRAMES,
		OPT_FRAME_SIZE,
		OPT_HEADROOM,
		OPT_RX_ONLY,
		OPT_TX_ONLY,
		OPT_NO_WAKEUP,
		OPT_BUSY,
		OPT_HUGE,
		OPT_BUDGET,
		OPT_SEND,
		OPT_HOLD,
	};
	static const struct option long_opts[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "rx-size", required_argument, NULL, OPT_RX },
		{ "tx-size", required_argument, NULL, OPT_TX },
		{ "fill-size", required_argument, NULL, OPT_FILL },
		{ "comp-size", required_argument, NULL, OPT_COMP },
		{ "frames", required_argument, NULL, OPT_FRAMES },
		{ "frame-size", required_argument, NULL, OPT_FRAME_SIZE },
		{ "headroom", required_argument, NULL, OPT_HEADROOM },
		{ "mode", required_argument, NULL, 'm' },
		{ "rx-only", no_argument, NULL, OPT_RX_ONLY },
		{ "tx-only", no_argument, NULL, OPT_TX_ONLY },
		{ "no-need-wakeup", no_argument, NULL, OPT_NO_WAKEUP },
		{ "busy-poll", no_argument, NULL, OPT_BUSY },
		{ "huge-pages", no_argument, NULL, OPT_HUGE },
		{ "tx-budget", required_argument, NULL, OPT_BUDGET },
		{ "send", required_argument, NULL, OPT_SEND },
		{ "hold", required_argument, NULL, OPT_HOLD },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct umem_placement *pl = NULL;
	struct xsk_queue_ring_levels lv;
	struct xsk_queue_opts o;
	struct xdp_statistics st;
	struct xsk_queue *q = NULL;
	__u32 budget = 0, nsend = 0, hold = 0, sent = 0, completed = 0, v, i;
	int budget_err = 0, send_err = 0, opt, err, ret = 1, pl_err;
	char check[256], placement[256];
	bool first = true;

	log_set_prog(argv[0]);
	xsk_queue_opts_init(&o);
	o.debug_alloc = true;
	while ((opt = getopt_long(argc, argv, "q:c:m:vh", long_opts, NULL)) != -1) {
		err = 0;
		switch (opt) {
		case 'q':
			err = parse_u32(optarg, &o.queue_id);
			break;
		case 'c':
			err = parse_u32(optarg, &v);
			o.cpu = (int)v;
			break;
		case OPT_RX:
			err = parse_u32(optarg, &o.rx_size);
			break;
		case OPT_TX:
			err = parse_u32(optarg, &o.tx_size);
			break;
		case OPT_FILL:
			err = parse_u32(optarg, &o.fill_size);
			break;
		case OPT_COMP:
			err = parse_u32(optarg, &o.comp_size);
			break;
		case OPT_FRAMES:
			err = parse_u32(optarg, &o.nr_frames);
			break;
		case OPT_FRAME_SIZE:
			err = parse_u32(optarg, &o.frame_size);
			break;
		case OPT_HEADROOM:
			err = parse_u32(optarg, &o.headroom);
			break;
		case 'm':
			err = xsk_copy_mode_parse(optarg, &o.mode);
			break;
		case OPT_RX_ONLY:
			o.tx = false;
			break;
		case OPT_TX_ONLY:
			o.rx = false;
			break;
		case OPT_NO_WAKEUP:
			o.need_wakeup = false;
			break;
		case OPT_BUSY:
			o.busy_poll = true;
			break;
		case OPT_HUGE:
			o.huge_pages = true;
			break;
		case OPT_BUDGET:
			err = parse_u32(optarg, &budget);
			break;
		case OPT_SEND:
			err = parse_u32(optarg, &nsend);
			break;
		case OPT_HOLD:
			err = parse_u32(optarg, &hold);
			break;
		case 'v':
			log_set_level(LOG_LEVEL_DEBUG);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (err) {
			fprintf(stderr, "xsk-probe: bad value '%s' for option %s\n", optarg,
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "xsk-probe: expected one interface name; see --help\n");
		return 2;
	}
	o.ifname = argv[optind];
	if (params_check_ifname("xsk-probe", "interface name", o.ifname))
		return 2;
	if (nsend && !o.tx) {
		fprintf(stderr, "xsk-probe: --send needs tx (drop --rx-only)\n");
		return 2;
	}
	log_route_libbpf();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	err = xsk_queue__create(&q, &o);
	if (err) {
		/* Environment problems (named on stderr already) are usage errors. */
		ret = (err == -ENODEV || err == -EINVAL || err == -EOPNOTSUPP || err == -EBUSY ||
		       err == -ENOMEM) ?
			      2 :
			      1;
		fprintf(stderr, "xsk-probe: cannot create an AF_XDP socket on %s queue %u: %s\n",
			o.ifname, o.queue_id, strerror(-err));
		goto out;
	}
	if (budget)
		budget_err = xsk_queue_set_tx_budget(q, budget);
	if (nsend)
		send_err = send_frames(q, nsend, &sent, &completed);

	pl = malloc(sizeof(*pl));
	if (!pl)
		goto out;
	pl_err = umem_placement(q->umem, pl);
	umem_placement_format(pl, placement, sizeof(placement));
	err = frame_alloc_check(q->fa, check, sizeof(check));
	xsk_queue_ring_levels(q, &lv);
	if (xsk_queue_stats(q, &st)) {
		fprintf(stderr, "xsk-probe: getsockopt(XDP_STATISTICS): %s\n", strerror(errno));
		goto out;
	}

	printf("{\"type\":\"xsk-probe\",\"ifname\":\"%s\",\"ifindex\":%d,\"queue\":%u,"
	       "\"mode\":\"%s\",\"asked_mode\":\"%s\",\"need_wakeup\":%s,\"busy_poll\":%s,"
	       "\"fd\":%d,",
	       q->ifname, q->ifindex, q->queue_id, q->zerocopy ? "zero-copy" : "copy",
	       xsk_copy_mode_name(o.mode), q->need_wakeup ? "true" : "false",
	       q->busy_poll ? "true" : "false", xsk_queue_fd(q));
	printf("\"frames\":%u,\"frame_size\":%u,\"headroom\":%u,", q->umem->nr_frames,
	       q->umem->frame_size, q->umem->headroom);
	printf("\"rings\":{\"rx\":%u,\"tx\":%u,\"fill\":%u,\"comp\":%u},",
	       q->rx_size ? q->rx.size : 0, q->tx_size ? q->tx.size : 0, q->umem->fill.size,
	       q->umem->comp.size);
	printf("\"levels\":{\"fill\":%u,\"rx\":%u,\"tx\":%u,\"comp\":%u},", lv.fill, lv.rx, lv.tx,
	       lv.comp);
	printf("\"umem\":{\"cpu\":%d,\"node\":%d,\"nic_node\":%d,\"huge_pages\":%s,"
	       "\"page_size\":%zu,\"bytes\":%zu,\"pages\":%llu,\"absent\":%llu,\"placed\":%s,"
	       "\"placement\":\"%s\",\"per_node\":{",
	       q->umem->cpu, q->umem->node, q->nic_node, q->umem->huge_pages ? "true" : "false",
	       q->umem->page_size, q->umem->size, (unsigned long long)pl->pages,
	       (unsigned long long)pl->absent, pl_err ? "false" : "true", placement);
	for (i = 0; i < (__u32)pl->nr_nodes; i++) {
		if (!pl->per_node[i])
			continue;
		printf("%s\"%u\":%llu", first ? "" : ",", i, (unsigned long long)pl->per_node[i]);
		first = false;
	}
	printf("}},\"alloc\":{\"ok\":%s,\"check\":\"%s\",\"free\":%u,\"kernel_rx\":%llu,"
	       "\"kernel_tx\":%llu,\"app\":%llu},",
	       err ? "false" : "true", check, q->fa->nr_free,
	       (unsigned long long)q->fa->cnt.kernel_rx, (unsigned long long)q->fa->cnt.kernel_tx,
	       (unsigned long long)q->fa->cnt.app);
	printf("\"tx_budget\":{\"asked\":%u,\"accepted\":%s,\"error\":\"%s\"},", budget,
	       budget && !budget_err ? "true" : "false", budget_err ? strerror(-budget_err) : "");
	printf("\"sent\":%u,\"completed\":%u,\"send_error\":\"%s\",", sent, completed,
	       send_err ? strerror(-send_err) : "");
	printf("\"stats\":{\"rx_dropped\":%llu,\"rx_invalid_descs\":%llu,\"tx_invalid_descs\":%llu,"
	       "\"rx_ring_full\":%llu,\"rx_fill_ring_empty_descs\":%llu,"
	       "\"tx_ring_empty_descs\":%llu}}\n",
	       (unsigned long long)st.rx_dropped, (unsigned long long)st.rx_invalid_descs,
	       (unsigned long long)st.tx_invalid_descs, (unsigned long long)st.rx_ring_full,
	       (unsigned long long)st.rx_fill_ring_empty_descs,
	       (unsigned long long)st.tx_ring_empty_descs);
	fflush(stdout);
	for (i = 0; i < hold * 10 && !stop; i++)
		usleep(100000);
	ret = err || send_err ? 1 : 0;
out:
	free(pl);
	xsk_queue__destroy(q);
	return ret;
}
