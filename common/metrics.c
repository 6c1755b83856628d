// SPDX-License-Identifier: GPL-2.0
/*
 * The OpenMetrics exposition: rows into a memory stream, published as one
 * text for the HTTP server (a mutex around a pointer swap) and the file
 * (outfile.h: beside the target, renamed over it).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "outfile.h"

struct metrics {
	char labels[METRICS_LABELS_LEN];
	const char *file;
	bool file_failed; /* the last write failed: say so once */
	struct metrics_http *http;
	/* the stream being written */
	char *buf;
	size_t len;
	/* the last published exposition, for the HTTP thread */
	pthread_mutex_t lock;
	char *pub;
	size_t pub_len;
};

/* The labels every sample has; --metrics-label may not use them. */
static const char *const builtin_labels[] = { "interface", "mode",    "queue", "reason",
					      "run",	   "verdict", "le",    NULL };

bool metrics_escape(const char *v, char *buf, size_t len)
{
	size_t o = 0;

	for (; *v; v++) {
		const char *rep = *v == '\\' ? "\\\\" :
				  *v == '"'  ? "\\\"" :
				  *v == '\n' ? "\\n" :
					       NULL;
		size_t n = rep ? 2 : 1;

		if (o + n >= len)
			return false;
		if (rep)
			memcpy(buf + o, rep, 2);
		else
			buf[o] = *v;
		o += n;
	}
	if (o >= len)
		return false;
	buf[o] = '\0';
	return true;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

int metrics_label_check(const char *kv, const char **why)
{
	const char *eq = strchr(kv, '=');
	size_t klen = eq ? (size_t)(eq - kv) : 0;
	unsigned int i;

	if (!eq || !klen) {
		*why = eq ? "the name is empty" : "no '='";
		return -EINVAL;
	}
	for (i = 0; i < klen; i++)
		if (!name_char(kv[i], i == 0)) {
			*why = "a label name has only letters, digits and '_', and no digit first";
			return -EINVAL;
		}
	if (klen >= 2 && kv[0] == '_' && kv[1] == '_') {
		*why = "names starting with '__' are reserved for Prometheus";
		return -EINVAL;
	}
	for (i = 0; builtin_labels[i]; i++)
		if (strlen(builtin_labels[i]) == klen && !strncmp(kv, builtin_labels[i], klen)) {
			*why = "the tools set this label themselves";
			return -EINVAL;
		}
	return 0;
}

void metrics_family(struct metrics_w *w, const char *name, const char *type, const char *unit,
		    const char *help)
{
	fprintf(w->f, "# TYPE %s %s\n", name, type);
	if (unit)
		fprintf(w->f, "# UNIT %s %s\n", name, unit);
	fprintf(w->f, "# HELP %s %s\n", name, help);
}

static void sample_head(struct metrics_w *w, const char *name, const char *key, const char *value)
{
	char esc[256];

	fprintf(w->f, "%s{%s", name, w->labels);
	if (key) {
		if (!metrics_escape(value, esc, sizeof(esc)))
			snprintf(esc, sizeof(esc), "(too long)");
		fprintf(w->f, "%s%s=\"%s\"", w->labels[0] ? "," : "", key, esc);
	}
	fputs("} ", w->f);
}

void metrics_u64(struct metrics_w *w, const char *name, const char *key, const char *value, __u64 v)
{
	sample_head(w, name, key, value);
	fprintf(w->f, "%" PRIu64 "\n", (uint64_t)v);
}

void metrics_double(struct metrics_w *w, const char *name, const char *key, const char *value,
		    double v)
{
	sample_head(w, name, key, value);
	fprintf(w->f, "%.17g\n", v);
}

void metrics_u64_at(struct metrics_w *w, const char *name, const char *key, __u64 at, __u64 v)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRIu64, (uint64_t)at);
	metrics_u64(w, name, key, s, v);
}

/* 1-2.5-5 steps from 1 us to 10 s. */
const __u64 metrics_hist_bounds_ns[] = {
	1000ULL,       2500ULL,	      5000ULL,	     10000ULL,	     25000ULL,	   50000ULL,
	100000ULL,     250000ULL,     500000ULL,     1000000ULL,     2500000ULL,   5000000ULL,
	10000000ULL,   25000000ULL,   50000000ULL,   100000000ULL,   250000000ULL, 500000000ULL,
	1000000000ULL, 2500000000ULL, 5000000000ULL, 10000000000ULL,
};
const unsigned int metrics_hist_nbounds =
	sizeof(metrics_hist_bounds_ns) / sizeof(metrics_hist_bounds_ns[0]);

/* One _bucket row; the le value as OpenMetrics writes numbers. */
static void bucket_row(struct metrics_w *w, const char *name, const char *key, const char *value,
		       const char *le, __u64 n)
{
	char esc[256];

	fprintf(w->f, "%s_bucket{%s%s", name, w->labels, w->labels[0] ? "," : "");
	if (key) {
		if (!metrics_escape(value, esc, sizeof(esc)))
			snprintf(esc, sizeof(esc), "(too long)");
		fprintf(w->f, "%s=\"%s\",", key, esc);
	}
	fprintf(w->f, "le=\"%s\"} %" PRIu64 "\n", le, (uint64_t)n);
}

void metrics_hist_seconds(struct metrics_w *w, const char *name, const char *key, const char *value,
			  const struct hist *h)
{
	unsigned int b, i = 0;
	__u64 below = 0;
	char le[32], full[160];

	for (b = 0; b < metrics_hist_nbounds; b++) {
		/* Every bucket whose values are all at or below the bound. */
		for (; i < HIST_BUCKETS && hist_bucket_upper(i) <= metrics_hist_bounds_ns[b]; i++)
			below += h->buckets[i];
		/* The overflow bucket's upper bound is not its values' bound. */
		if (i == HIST_BUCKETS)
			below -= h->overflow;
		snprintf(le, sizeof(le), "%g", (double)metrics_hist_bounds_ns[b] / 1e9);
		bucket_row(w, name, key, value, le, below);
		if (i == HIST_BUCKETS)
			below += h->overflow;
	}
	bucket_row(w, name, key, value, "+Inf", h->count);
	snprintf(full, sizeof(full), "%s_sum", name);
	sample_head(w, full, key, value);
	/* Nanoseconds as exact decimal seconds while they fit in 64 bits. */
	if (!h->sum_hi)
		fprintf(w->f, "%" PRIu64 ".%09" PRIu64 "\n", (uint64_t)(h->sum_lo / 1000000000ULL),
			(uint64_t)(h->sum_lo % 1000000000ULL));
	else
		fprintf(w->f, "%.17g\n",
			((double)h->sum_hi * 18446744073709551616.0 + (double)h->sum_lo) / 1e9);
	snprintf(full, sizeof(full), "%s_count", name);
	metrics_u64(w, full, key, value, h->count);
}

/* interface="eth0",mode="drop" and the user's labels, escaped. */
static int common_labels(struct metrics *m, const struct metrics_opts *o)
{
	const struct param_strings *ls = &o->cli->labels;
	char esc[2][512];
	size_t off, klen;
	unsigned int i;
	const char *why;

	if (!metrics_escape(o->ifname, esc[0], sizeof(esc[0])) ||
	    !metrics_escape(o->mode, esc[1], sizeof(esc[1])))
		return -EINVAL;
	off = (size_t)snprintf(m->labels, sizeof(m->labels), "interface=\"%s\",mode=\"%s\"", esc[0],
			       esc[1]);
	for (i = 0; i < ls->n; i++) {
		if (metrics_label_check(ls->v[i], &why)) {
			pr_warn("--metrics-label '%s': %s; give KEY=VALUE with KEY like host_1\n",
				ls->v[i], why);
			return -EINVAL;
		}
		klen = (size_t)(strchr(ls->v[i], '=') - ls->v[i]);
		if (!metrics_escape(ls->v[i] + klen + 1, esc[0], sizeof(esc[0])) ||
		    off + klen + strlen(esc[0]) + 4 >= sizeof(m->labels)) {
			pr_warn("--metrics-label '%s': too long; keep the labels under %d bytes\n",
				ls->v[i], METRICS_LABELS_LEN);
			return -EINVAL;
		}
		off += (size_t)snprintf(m->labels + off, sizeof(m->labels) - off, ",%.*s=\"%s\"",
					(int)klen, ls->v[i], esc[0]);
	}
	return 0;
}

/* A label given twice would make every sample invalid. */
static int labels_unique(const struct param_strings *ls)
{
	unsigned int i, j;
	size_t ki, kj;

	for (i = 0; i < ls->n; i++)
		for (j = i + 1; j < ls->n; j++) {
			ki = strcspn(ls->v[i], "=");
			kj = strcspn(ls->v[j], "=");
			if (ki == kj && !strncmp(ls->v[i], ls->v[j], ki)) {
				pr_warn("--metrics-label: '%.*s' is given twice; give each label once\n",
					(int)ki, ls->v[i]);
				return -EINVAL;
			}
		}
	return 0;
}

/* A file can be written there: try it now, before anything is attached. */
static int file_check(const char *path)
{
	struct outfile o;
	int err = outfile_open(&o, "--metrics-file", path);

	outfile_abort(&o);
	return err ? -EINVAL : 0;
}

int metrics__create(const struct metrics_opts *o, struct metrics **out)
{
	const struct metrics_cli *cli = o->cli;
	struct metrics *m;
	int err;

	*out = NULL;
	if (!cli->file && !cli->listen && !cli->labels.n)
		return 0;
	if (!cli->file && !cli->listen) {
		pr_warn("--metrics-label needs --metrics-file or --metrics-listen\n");
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	m->file = cli->file;
	err = labels_unique(&cli->labels);
	if (!err)
		err = common_labels(m, o);
	if (!err && cli->file)
		err = file_check(cli->file);
	if (!err && cli->listen)
		err = metrics_http__start(o->tool, cli->listen, m, &m->http);
	if (err) {
		metrics__destroy(m);
		return err == -ENOMEM ? err : -EINVAL;
	}
	*out = m;
	return 0;
}

void metrics__destroy(struct metrics *m)
{
	if (!m)
		return;
	/* The server first: its thread may be copying the text. */
	metrics_http__stop(m->http);
	free(m->pub);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int metrics_begin(struct metrics *m, struct metrics_w *w)
{
	m->buf = NULL;
	m->len = 0;
	w->f = open_memstream(&m->buf, &m->len);
	w->labels = m->labels;
	return w->f ? 0 : -ENOMEM;
}

static void write_file(struct metrics *m, const char *text, size_t len)
{
	struct outfile o;
	int err;

	err = outfile_open(&o, "--metrics-file", m->file);
	if (!err) {
		if (fwrite(text, 1, len, o.f) != len)
			err = -EIO;
		if (!err)
			err = outfile_commit(&o);
		else
			outfile_abort(&o);
	}
	if (err && !m->file_failed)
		pr_warn("--metrics-file %s: not written (%s); trying again each interval\n",
			m->file, strerror(-err));
	m->file_failed = err != 0;
}

void metrics_publish(struct metrics *m, struct metrics_w *w)
{
	char *old;

	fputs("# EOF\n", w->f);
	if (fclose(w->f)) {
		free(m->buf);
		m->buf = NULL;
		return;
	}
	w->f = NULL;
	if (m->file)
		write_file(m, m->buf, m->len);
	pthread_mutex_lock(&m->lock);
	old = m->pub;
	m->pub = m->buf;
	m->pub_len = m->len;
	pthread_mutex_unlock(&m->lock);
	free(old);
	m->buf = NULL;
}

char *metrics_published_copy(struct metrics *m, size_t *len)
{
	char *copy = NULL;

	pthread_mutex_lock(&m->lock);
	if (m->pub) {
		copy = malloc(m->pub_len + 1);
		if (copy) {
			memcpy(copy, m->pub, m->pub_len + 1);
			*len = m->pub_len;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return copy;
}
