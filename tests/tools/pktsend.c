// SPDX-License-Identifier: GPL-2.0
/*
 * pktsend: a minimal AF_PACKET sender for tests and a baseline for benchmarks.
 * Sends exactly --count IPv4/UDP frames with sendmmsg in batches; a frame the
 * kernel refuses (ENOBUFS) is retried, so the count on the wire is exact
 * unless the device itself drops (which its counters then show).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "base/runtime.h"
#include "cli/params_cmd.h"
#include "kern/iface.h"

struct cfg {
	__u64 count;
	__u64 size;
	__u64 batch;
	const char *dst_mac;
	const char *src_ip;
	const char *dst_ip;
	bool bypass;
	bool quiet;
};

#define OPT(f) offsetof(struct cfg, f)
static const struct param_def opts[] = {
	PARAM_OPT("count", PARAM_COUNT, OPT(count), .short_opt = 'n', .metavar = "PACKETS",
		  .help = "frames to send", .min = 1),
	PARAM_OPT("size", PARAM_UINT, OPT(size), .short_opt = 's', .metavar = "BYTES",
		  .help = "frame size without FCS", .min = 60, .max = 1514),
	PARAM_OPT("batch", PARAM_UINT, OPT(batch), .short_opt = 'b', .metavar = "N",
		  .help = "frames per sendmmsg", .min = 1, .max = 1024),
	PARAM_OPT("dst-mac", PARAM_STRING, OPT(dst_mac), .metavar = "MAC",
		  .help = "destination MAC (required)"),
	PARAM_OPT("src-ip", PARAM_STRING, OPT(src_ip), .metavar = "IPV4", .help = "source address"),
	PARAM_OPT("dst-ip", PARAM_STRING, OPT(dst_ip), .metavar = "IPV4",
		  .help = "destination address"),
	PARAM_OPT("bypass", PARAM_FLAG, OPT(bypass), .help = "PACKET_QDISC_BYPASS"),
	PARAM_OPT("quiet", PARAM_FLAG, OPT(quiet), .short_opt = 'q', .help = "no summary line"),
	{},
};

static const struct param_cmd cmd = {
	.name = "",
	.summary = "send exactly COUNT IPv4/UDP frames with AF_PACKET",
	.positional = "IFNAME",
	.tables = { opts, NULL },
};

static __u16 csum16(const void *p, size_t len)
{
	const __u8 *b = p;
	__u32 sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (__u32)(b[len - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

int main(int argc, char **argv)
{
	struct cfg c = {
		.count = 1000, .size = 60, .batch = 64, .src_ip = "10.11.0.1", .dst_ip = "10.11.0.2"
	};
	const struct cfg defaults = c;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	unsigned char frame[1514] = {}, dmac[6];
	struct mmsghdr *msgs;
	struct iovec iov;
	struct iface ifc;
	const char *ifname;
	__u64 sent = 0, refused = 0, t0;
	unsigned int i;
	int fd, err, one = 1;

	log_set_prog("pktsend");
	err = params_command("pktsend", &cmd, argc, argv, &c, &defaults, &ifname);
	if (err >= 0)
		return err;
	if (!c.dst_mac || sscanf(c.dst_mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dmac[0], &dmac[1],
				 &dmac[2], &dmac[3], &dmac[4], &dmac[5]) != 6) {
		fprintf(stderr, "pktsend: give the destination with --dst-mac aa:bb:cc:dd:ee:ff\n");
		return 2;
	}
	if (iface_get(ifname, &ifc)) {
		fprintf(stderr, "pktsend: interface '%s' not found\n", ifname);
		return 2;
	}

	/* Ethernet + IPv4 + UDP, checksums complete. */
	memcpy(frame, dmac, 6);
	memcpy(frame + 6, ifc.mac, 6);
	frame[12] = 0x08;
	frame[13] = 0x00;
	{
		unsigned char *ip = frame + 14, *udp = frame + 34;
		unsigned int iplen = (unsigned int)c.size - 14, udplen = iplen - 20;
		struct in_addr s, d;

		if (!inet_aton(c.src_ip, &s) || !inet_aton(c.dst_ip, &d)) {
			fprintf(stderr, "pktsend: bad --src-ip or --dst-ip\n");
			return 2;
		}
		ip[0] = 0x45;
		ip[2] = (unsigned char)(iplen >> 8);
		ip[3] = (unsigned char)iplen;
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, &s, 4);
		memcpy(ip + 16, &d, 4);
		{
			__u16 ck = csum16(ip, 20);

			ip[10] = (unsigned char)(ck >> 8);
			ip[11] = (unsigned char)ck;
		}
		udp[0] = 0x27;
		udp[1] = 0x10; /* 10000 */
		udp[2] = 0x27;
		udp[3] = 0x11; /* 10001 */
		udp[4] = (unsigned char)(udplen >> 8);
		udp[5] = (unsigned char)udplen;
		/* UDP checksum 0: none, legal for IPv4. */
	}

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		fprintf(stderr, "pktsend: socket: %s (needs CAP_NET_RAW)\n", strerror(errno));
		return 2;
	}
	if (c.bypass)
		setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	sll.sll_ifindex = ifc.ifindex;
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, dmac, 6);
	iov.iov_base = frame;
	iov.iov_len = c.size;
	msgs = calloc(c.batch, sizeof(*msgs));
	if (!msgs)
		return 1;
	for (i = 0; i < c.batch; i++) {
		msgs[i].msg_hdr.msg_name = &sll;
		msgs[i].msg_hdr.msg_namelen = sizeof(sll);
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	runtime_install_signals();
	t0 = now_ns();
	while (sent < c.count && !runtime_stop) {
		unsigned int n =
			(unsigned int)(c.count - sent < c.batch ? c.count - sent : c.batch);
		int r = sendmmsg(fd, msgs, n, 0);

		if (r < 0) {
			if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
				refused++;
				usleep(100);
				continue;
			}
			fprintf(stderr, "pktsend: sendmmsg: %s\n", strerror(errno));
			return 1;
		}
		sent += (unsigned int)r;
	}
	if (!c.quiet)
		printf("pktsend: %" PRIu64 " frames of %" PRIu64
		       " bytes sent on %s in %.3f s (%" PRIu64 " refused and retried)\n",
		       (uint64_t)sent, (uint64_t)c.size, ifname, (double)(now_ns() - t0) / 1e9,
		       (uint64_t)refused);
	free(msgs);
	close(fd);
	return sent == c.count ? 0 : 1;
}
