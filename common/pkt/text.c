// SPDX-License-Identifier: GPL-2.0
/*
 * The generator's option values as text: MAC addresses, IP and port ranges,
 * IMIX specifications, TCP flags and tunnels (text.h). Each parser says in
 * err what is wrong and how to fix it.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/parsing.h"
#include "pkt/text.h"

#define PKT_IMIX_WEIGHT_MAX 1000000

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int pkt_text_mac(const char *s, __u8 mac[6], char *err, size_t errlen)
{
	const char *p = s;
	__u8 out[6];
	int i, d;

	if (!s || !*s) {
		PKT_SETERR(err, errlen, "empty MAC address; write it as aa:bb:cc:dd:ee:ff");
		return -EINVAL;
	}
	for (i = 0; i < 6; i++) {
		int v = 0, n = 0;

		while ((d = hexval((unsigned char)*p)) >= 0 && n < 3) {
			v = v * 16 + d;
			p++;
			n++;
		}
		if (n == 0 || n > 2 || *p != (i == 5 ? '\0' : ':'))
			goto bad;
		out[i] = (__u8)v;
		if (i < 5)
			p++;
	}
	memcpy(mac, out, 6);
	return 0;
bad:
	PKT_SETERR(err, errlen,
		   "bad MAC address '%s': expected six hex bytes like aa:bb:cc:dd:ee:ff", s);
	return -EINVAL;
}

static __u64 be64_load(const __u8 *b)
{
	__u64 v;

	memcpy(&v, b, 8);
	return be64toh(v);
}

/* One address into (family, hi, lo). Returns 0 or -EINVAL. */
static int parse_one_ip(const char *s, enum pkt_family *family, __u64 *hi, __u64 *lo)
{
	__u8 buf[16];

	if (strchr(s, ':')) {
		if (inet_pton(AF_INET6, s, buf) != 1)
			return -EINVAL;
		*family = PKT_IPV6;
		*hi = be64_load(buf);
		*lo = be64_load(buf + 8);
		return 0;
	}
	if (inet_pton(AF_INET, s, buf) != 1)
		return -EINVAL;
	*family = PKT_IPV4;
	*hi = 0;
	*lo = ((__u32)buf[0] << 24) | ((__u32)buf[1] << 16) | ((__u32)buf[2] << 8) | buf[3];
	return 0;
}

int pkt_text_ip_range(const char *s, struct pkt_ip_range *out, char *err, size_t errlen)
{
	char a[INET6_ADDRSTRLEN + 1], b[INET6_ADDRSTRLEN + 1];
	enum pkt_family fa, fb;
	const char *dash;
	__u64 ha, la, hb, lb;
	size_t n;

	if (!s || !*s) {
		PKT_SETERR(err, errlen,
			   "empty address; give one like 10.0.0.1 or 10.0.0.1-10.0.0.254");
		return -EINVAL;
	}
	dash = strchr(s, '-');
	n = dash ? (size_t)(dash - s) : strlen(s);
	if (n >= sizeof(a) || (dash && strlen(dash + 1) >= sizeof(b)))
		goto bad;
	memcpy(a, s, n);
	a[n] = '\0';
	snprintf(b, sizeof(b), "%s", dash ? dash + 1 : a);
	if (parse_one_ip(a, &fa, &ha, &la) || parse_one_ip(b, &fb, &hb, &lb))
		goto bad;
	if (fa != fb) {
		PKT_SETERR(err, errlen,
			   "address range '%s' mixes IPv4 and IPv6; give both ends in one family",
			   s);
		return -EINVAL;
	}
	if (ha != hb) {
		PKT_SETERR(
			err, errlen,
			"IPv6 range '%s' differs in the upper 64 bits; only the low 64 bits may vary, e.g. fd00::1-fd00::ff",
			s);
		return -EINVAL;
	}
	if (la > lb) {
		PKT_SETERR(err, errlen,
			   "address range '%s' starts above its end; write it as LOW-HIGH", s);
		return -EINVAL;
	}
	out->family = fa;
	out->hi = ha;
	out->lo_start = la;
	out->lo_end = lb;
	return 0;
bad:
	PKT_SETERR(
		err, errlen,
		"bad address '%s': expected an IPv4 or IPv6 address or a range like 10.0.0.1-10.0.0.254",
		s);
	return -EINVAL;
}

/* A decimal number; *end set past it. -EINVAL if none, -ERANGE above max. */
static int parse_dec(const char *s, const char **end, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	while (isdigit((unsigned char)*p)) {
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > max)
			return -ERANGE;
		p++;
	}
	*end = p;
	*out = v;
	return 0;
}

int pkt_text_port_range(const char *s, struct pkt_port_range *out, char *err, size_t errlen)
{
	unsigned long a, b;
	const char *p;
	int ret;

	if (!s || !*s) {
		PKT_SETERR(err, errlen, "empty port; give one like 1000 or 1000-2000");
		return -EINVAL;
	}
	ret = parse_dec(s, &p, 65535, &a);
	if (!ret && *p == '-')
		ret = parse_dec(p + 1, &p, 65535, &b);
	else
		b = a;
	if (ret == -ERANGE) {
		PKT_SETERR(err, errlen, "port in '%s' is above 65535; ports are 1-65535", s);
		return -EINVAL;
	}
	if (ret || *p) {
		PKT_SETERR(err, errlen,
			   "bad port '%s': expected a number or a range like 1000-2000", s);
		return -EINVAL;
	}
	if (a == 0 || b == 0) {
		PKT_SETERR(err, errlen, "port 0 in '%s' is reserved; ports are 1-65535", s);
		return -EINVAL;
	}
	if (a > b) {
		PKT_SETERR(err, errlen,
			   "port range '%s' starts above its end; write it as LOW-HIGH", s);
		return -EINVAL;
	}
	out->start = (__u16)a;
	out->end = (__u16)b;
	return 0;
}

static unsigned int gcd(unsigned int a, unsigned int b)
{
	while (b) {
		unsigned int t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Smooth weighted round robin (as in nginx): each step every entry gains its
 * weight, the richest is picked and pays the total. Over one period every
 * entry appears exactly 'weight' times, spread out rather than in blocks.
 */
static void imix_expand(struct pkt_imix *im)
{
	long cur[PKT_IMIX_MAX] = { 0 };
	unsigned int i, step, total = 0;

	for (i = 0; i < im->n; i++)
		total += im->weight[i];
	for (step = 0; step < total; step++) {
		unsigned int best = 0;

		for (i = 0; i < im->n; i++) {
			cur[i] += im->weight[i];
			if (cur[i] > cur[best])
				best = i;
		}
		cur[best] -= total;
		im->seq[step] = (__u8)best;
	}
	im->seq_len = total;
}

int pkt_text_imix(const char *s, struct pkt_imix *out, char *err, size_t errlen)
{
	struct pkt_imix im = { 0 };
	unsigned long size, weight;
	unsigned int i, g = 0;
	__u64 total = 0;
	const char *p = s;
	int ret;

	if (!s || !*s) {
		PKT_SETERR(err, errlen, "empty IMIX spec; give SIZE:WEIGHT pairs like %s",
			   PKT_IMIX_DEFAULT);
		return -EINVAL;
	}
	for (;;) {
		const char *entry = p;
		int len;

		ret = parse_dec(p, &p, PKT_SIZE_MAX, &size);
		weight = 1;
		if (!ret && *p == ':')
			ret = parse_dec(p + 1, &p, PKT_IMIX_WEIGHT_MAX, &weight);
		len = (int)(strchrnul(entry, ',') - entry);
		if (ret == -ERANGE) {
			PKT_SETERR(
				err, errlen,
				"IMIX entry '%.*s' is too large; sizes go up to %u, weights up to %u",
				len, entry, PKT_SIZE_MAX, PKT_IMIX_WEIGHT_MAX);
			return -EINVAL;
		}
		if (ret || (*p && *p != ',')) {
			PKT_SETERR(err, errlen,
				   "bad IMIX entry '%.*s' in '%s': expected SIZE:WEIGHT like 576:4",
				   len, entry, s);
			return -EINVAL;
		}
		if (weight == 0) {
			PKT_SETERR(
				err, errlen,
				"IMIX entry '%.*s' has weight 0; weights are 1 or more (drop the entry instead)",
				len, entry);
			return -EINVAL;
		}
		for (i = 0; i < im.n; i++) {
			if (im.size[i] == size) {
				PKT_SETERR(
					err, errlen,
					"IMIX spec '%s' lists size %lu twice; give each size once with the summed weight",
					s, size);
				return -EINVAL;
			}
		}
		if (im.n == PKT_IMIX_MAX) {
			PKT_SETERR(err, errlen, "IMIX spec '%s' has more than %d sizes; use fewer",
				   s, PKT_IMIX_MAX);
			return -EINVAL;
		}
		im.size[im.n] = (unsigned int)size;
		im.weight[im.n] = (unsigned int)weight;
		im.n++;
		if (!*p)
			break;
		p++; /* ',' */
	}
	for (i = 0; i < im.n; i++)
		g = gcd(g, im.weight[i]);
	for (i = 0; i < im.n; i++) {
		im.weight[i] /= g;
		total += im.weight[i];
	}
	if (total > PKT_IMIX_SEQ_MAX) {
		PKT_SETERR(
			err, errlen,
			"IMIX weights in '%s' add up to %llu (after dividing by their common factor); keep the sum at %d or less",
			s, (unsigned long long)total, PKT_IMIX_SEQ_MAX);
		return -EINVAL;
	}
	imix_expand(&im);
	*out = im;
	return 0;
}

void pkt_imix_default(struct pkt_imix *out, unsigned int min_size)
{
	unsigned int i;
	int ret;

	ret = pkt_text_imix(PKT_IMIX_DEFAULT, out, NULL, 0);
	(void)ret; /* a constant spec: cannot fail */
	for (i = 0; i < out->n; i++)
		if (out->size[i] < min_size)
			out->size[i] = min_size;
}

static const char tcp_letters[] = "FSRPAUEC"; /* bit i of the flags byte */

int pkt_text_tcp_flags(const char *s, __u8 *out, char *err, size_t errlen)
{
	const char *c;

	*out = 0;
	for (c = s; *c; c++) {
		const char *at = *c ? strchr(tcp_letters, *c) : NULL;

		if (!at) {
			PKT_SETERR(
				err, errlen,
				"--tcp-flags %s: '%c' is not a TCP flag; use letters from S A P R F U E C, e.g. S, SA or PA",
				s, *c);
			return -EINVAL;
		}
		*out |= (__u8)(1u << (at - tcp_letters));
	}
	if (!*s) {
		PKT_SETERR(err, errlen, "--tcp-flags is empty; give letters like S, SA or PA");
		return -EINVAL;
	}
	return 0;
}

int pkt_text_encap(const char *s, enum pkt_encap *encap, __u32 *vni, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	unsigned long v = 0;
	char *end;

	*vni = 0;
	if (n == 5 && !strncmp(s, "vxlan", 5))
		*encap = PKT_ENCAP_VXLAN;
	else if (n == 6 && !strncmp(s, "geneve", 6))
		*encap = PKT_ENCAP_GENEVE;
	else if (n == 3 && !strncmp(s, "gre", 3))
		*encap = PKT_ENCAP_GRE;
	else if (n == 4 && !strncmp(s, "ipip", 4))
		*encap = PKT_ENCAP_IPIP;
	else {
		PKT_SETERR(err, errlen,
			   "--encap %s: unknown tunnel; use vxlan[:VNI], geneve[:VNI], gre or ipip",
			   s);
		return -EINVAL;
	}
	if (!colon)
		return 0;
	if (*encap != PKT_ENCAP_VXLAN && *encap != PKT_ENCAP_GENEVE) {
		PKT_SETERR(err, errlen, "--encap %s: only vxlan and geneve take a VNI; drop ':%s'",
			   s, colon + 1);
		return -EINVAL;
	}
	errno = 0;
	v = strtoul(colon + 1, &end, 0);
	if (errno || end == colon + 1 || *end || colon[1] == '-' || v > PKT_VNI_MAX) {
		PKT_SETERR(err, errlen, "--encap %s: the VNI must be a number from 0 to %u", s,
			   PKT_VNI_MAX);
		return -EINVAL;
	}
	*vni = (__u32)v;
	return 0;
}
