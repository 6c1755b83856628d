// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/timex.h>

#include "measure/clockid.h"
#include "pkt/stamp.h"

static const char *const names[] = {
	[XDPSG_CLOCK_MONOTONIC] = "monotonic",
	[XDPSG_CLOCK_TAI] = "tai",
	[XDPSG_CLOCK_REALTIME] = "realtime",
};

const char *clock_name(enum xdpsg_clock c)
{
	return (unsigned int)c < sizeof(names) / sizeof(names[0]) ? names[c] : "unknown";
}

int clock_parse(const char *s, enum xdpsg_clock *c)
{
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*c = (enum xdpsg_clock)i;
			return 0;
		}
	return -EINVAL;
}

static clockid_t posix_clock(enum xdpsg_clock c)
{
	return c == XDPSG_CLOCK_TAI	 ? CLOCK_TAI :
	       c == XDPSG_CLOCK_REALTIME ? CLOCK_REALTIME :
					   CLOCK_MONOTONIC;
}

__u64 clock_now_ns(enum xdpsg_clock c)
{
	struct timespec ts;

	clock_gettime(posix_clock(c), &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* The kernel's boot id (36 characters); "" where it cannot be read. */
static void boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* This process's time namespace offset of CLOCK_MONOTONIC; 0 without time namespaces. */
static bool timens_monotonic(__s64 *off)
{
	FILE *f = fopen("/proc/self/timens_offsets", "re");
	char line[128];
	long long s, ns;

	*off = 0;
	if (!f)
		return errno == ENOENT; /* a kernel without time namespaces: no offset */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "monotonic %lld %lld", &s, &ns) == 2) {
			*off = (__s64)s * 1000000000LL + ns;
			break;
		}
	fclose(f);
	return true;
}

int clock_info_read(enum xdpsg_clock c, struct clock_info *out)
{
	char id[64], buf[128];
	struct timex tx;
	__s64 off = 0;
	int n, st;

	memset(out, 0, sizeof(*out));
	out->clock = c;
	boot_id(id, sizeof(id));
	if (c == XDPSG_CLOCK_MONOTONIC) {
		out->offset_known = timens_monotonic(&off);
		out->bpf_offset_ns = (__u64)off;
	} else {
		/* the kernel's BPF clock and this one, read side by side */
		struct timespec m, r;

		clock_gettime(CLOCK_MONOTONIC, &m);
		clock_gettime(posix_clock(c), &r);
		timens_monotonic(&off);
		out->user_offset_ns = ((__u64)r.tv_sec - (__u64)m.tv_sec) * 1000000000ULL +
				      (__u64)r.tv_nsec - (__u64)m.tv_nsec;
		out->bpf_offset_ns = out->user_offset_ns + (__u64)off;
		out->offset_known = true;
		off = 0; /* TAI and realtime are one clock across namespaces */
	}
	n = snprintf(buf, sizeof(buf), "%s %s %lld", id, clock_name(c), (long long)off);
	out->id = stamp_siphash(0x78647073672d636cULL, 0x6f636b2d69640000ULL, buf, (size_t)n, 2, 4);
	memset(&tx, 0, sizeof(tx));
	st = adjtimex(&tx);
	if (st >= 0) {
		out->synced = !(tx.status & STA_UNSYNC) && st != TIME_ERROR;
		out->maxerror_us = (__u64)tx.maxerror;
		out->esterror_us = (__u64)tx.esterror;
	}
	return 0;
}

int clock_set_read(struct clock_set *out)
{
	struct clock_info ci;
	unsigned int c;
	int err;

	memset(out, 0, sizeof(*out));
	for (c = 0; c < XDPSG_CLOCK_N; c++) {
		err = clock_info_read((enum xdpsg_clock)c, &ci);
		if (err)
			return err;
		out->id[c] = ci.id;
		out->shift_ns[c] = ci.user_offset_ns;
		out->synced = ci.synced;
		out->maxerror_us = ci.maxerror_us;
	}
	return 0;
}

void clock_set_one(struct clock_set *out, __u64 monotonic_id)
{
	memset(out, 0, sizeof(*out));
	out->id[XDPSG_CLOCK_MONOTONIC] = monotonic_id;
	out->synced = true;
}
