// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "fmt.h"

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
