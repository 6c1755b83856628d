// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"

const char *fmt_si(char *buf, size_t len, double v)
{
	static const char units[] = { ' ', 'k', 'M', 'G', 'T' };
	unsigned int u = 0;

	/* Three significant digits first: the unit follows the rounded value. */
	if (v != 0.0 && isfinite(v)) {
		double scale = pow(10.0, floor(log10(fabs(v))) - 2);

		v = round(v / scale) * scale;
	}
	while (fabs(v) >= 999.5 && u < sizeof(units) - 1) {
		v /= 1000.0;
		u++;
	}
	if (!u)
		snprintf(buf, len, fabs(v) >= 100.0 || v == floor(v) ? "%.0f" : "%.3g", v);
	else if (fabs(v) >= 99.95)
		snprintf(buf, len, "%.0f%c", v, units[u]);
	else if (fabs(v) >= 9.995)
		snprintf(buf, len, "%.1f%c", v, units[u]);
	else
		snprintf(buf, len, "%.2f%c", v, units[u]);
	return buf;
}

const char *fmt_count(char *buf, size_t len, __u64 v)
{
	char tmp[32];
	size_t n, i, o = 0;

	n = (size_t)snprintf(tmp, sizeof(tmp), "%" PRIu64, (uint64_t)v);
	for (i = 0; i < n && o + 1 < len; i++) {
		if (i && (n - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

const char *fmt_icount(char *buf, size_t len, __s64 v)
{
	if (v >= 0 || len < 2)
		return fmt_count(buf, len, (__u64)v);
	buf[0] = '-';
	fmt_count(buf + 1, len - 1, (__u64)0 - (__u64)v);
	return buf;
}

const char *fmt_ns(char *buf, size_t len, __u64 ns)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, len, "%.2fs", (double)ns / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, len, "%.2fms", (double)ns / 1e6);
	else if (ns >= 1000ULL)
		snprintf(buf, len, "%.1fus", (double)ns / 1e3);
	else
		snprintf(buf, len, "%" PRIu64 "ns", (uint64_t)ns);
	return buf;
}

/*
 * The one rule for names (devices, streams, anything a user or the kernel
 * named) in every output: printable UTF-8 goes as it is; any other byte (not
 * UTF-8, overlong, a surrogate, a C0 or C1 control, DEL) goes as the four
 * characters \xHH. JSON, OpenMetrics, pcapng and the text all show the same.
 */
unsigned int fmt_name_unit(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int n, i;
	__u32 cp;

	if (p[0] < 0x20 || p[0] == 0x7f)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	/* A NUL is not a continuation byte: the walk stops at the string's end. */
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < 0xa0 || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

const char *fmt_name(char *buf, size_t len, const char *s)
{
	size_t o = 0;

	if (!len)
		return buf;
	for (; s && *s;) {
		unsigned int u = fmt_name_unit(s);
		size_t need = u ? u : 4;

		if (o + need >= len)
			break;
		if (u)
			memcpy(buf + o, s, u);
		else
			snprintf(buf + o, 5, "\\x%02x", (unsigned char)*s);
		o += need;
		s += u ? u : 1;
	}
	buf[o] = '\0';
	return buf;
}
