// SPDX-License-Identifier: GPL-2.0
/*
 * The OpenMetrics exposition: rows into a memory stream, published as one
 * text for the HTTP server (http_text.c; a mutex around a pointer swap) and for the file,
 * which a thread of its own rewrites (a new file beside the target, renamed
 * over it) so that slow storage never holds up the interval loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/fmt.h"
#include "base/log.h"
#include "base/outfile.h"
#include "report/http_text.h"
#include "report/metrics.h"

struct metrics {
	char labels[METRICS_LABELS_LEN];
	char labels_nodev[METRICS_LABELS_LEN];
	const char *file;
	mode_t file_mode; /* what a new file gets under the umask */
	struct http_text *http;
	/* the stream being written */
	char *buf;
	size_t len;
	/* the last published exposition, for the HTTP thread and the writer */
	pthread_mutex_t lock;
	char *pub;
	size_t pub_len;
	/* the file's writer, under lock */
	pthread_t writer;
	bool writing; /* the thread runs */
	bool stop; /* write the last text once more, synced, and end */
	pthread_cond_t wake; /* for the writer: a new text, or stop */
	pthread_cond_t written; /* for metrics_file_wait */
	unsigned long long gen; /* texts published */
	unsigned long long done; /* the last one the writer wrote (or failed to) */
	int file_err; /* and how that went */
	/* the writer's own: what the user has been told */
	bool file_failed;
	unsigned int failures;
};

/*
 * The labels the tools set; --metrics-label may not use them. interface is
 * device's old name: a relabelling that brings it back for old dashboards
 * would clash with a user's own.
 */
static const char *const builtin_labels[] = {
	"device", "mode", "queue", "reason", "run", "verdict", "le", "interface", "kind", NULL,
};

bool metrics_escape(const char *v, char *buf, size_t len)
{
	size_t o = 0;

	/* Names by fmt_name()'s rule (label values must be UTF-8), then \ and " escaped. */
	while (*v) {
		unsigned int u = fmt_name_unit(v);
		const char *rep = *v == '\\' ? "\\\\" : *v == '"' ? "\\\"" : NULL;
		char hex[8];
		size_t n;

		if (!u && !rep) {
			snprintf(hex, sizeof(hex), "\\\\x%02x", (unsigned char)*v);
			rep = hex;
		}
		n = rep ? strlen(rep) : u;
		if (o + n >= len)
			return false;
		memcpy(buf + o, rep ? rep : v, n);
		o += n;
		v += u ? u : 1;
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

/* 1-2.5-5 steps from 1 us to 10 s: the coarse histogram's, so a live one is exact. */
const __u64 *const metrics_hist_bounds_ns = hist_coarse_bounds_ns;
const unsigned int metrics_hist_nbounds = HIST_COARSE_BOUNDS;

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

void metrics_buckets_seconds(struct metrics_w *w, const char *name, const char *key,
			     const char *value, const __u64 *bounds_ns, const __u64 *counts,
			     unsigned int n, __u64 sum_ns)
{
	unsigned int b;
	__u64 below = 0;
	char le[32], full[160];

	for (b = 0; b < n; b++) {
		below += counts[b];
		snprintf(le, sizeof(le), "%g", (double)bounds_ns[b] / 1e9);
		bucket_row(w, name, key, value, le, below);
	}
	below += counts[n];
	bucket_row(w, name, key, value, "+Inf", below);
	snprintf(full, sizeof(full), "%s_sum", name);
	sample_head(w, full, key, value);
	fprintf(w->f, "%" PRIu64 ".%09" PRIu64 "\n", (uint64_t)(sum_ns / 1000000000ULL),
		(uint64_t)(sum_ns % 1000000000ULL));
	snprintf(full, sizeof(full), "%s_count", name);
	metrics_u64(w, full, key, value, below);
}

void metrics_hist_coarse_seconds(struct metrics_w *w, const char *name, const char *key,
				 const char *value, const struct hist_coarse *h)
{
	unsigned int b;
	__u64 below = 0;
	char le[32], full[160];

	for (b = 0; b < HIST_COARSE_BOUNDS; b++) {
		below += h->n[b];
		snprintf(le, sizeof(le), "%g", (double)hist_coarse_bounds_ns[b] / 1e9);
		bucket_row(w, name, key, value, le, below);
	}
	bucket_row(w, name, key, value, "+Inf", h->count);
	snprintf(full, sizeof(full), "%s_sum", name);
	sample_head(w, full, key, value);
	fprintf(w->f, "%" PRIu64 ".%09" PRIu64 "\n", (uint64_t)(h->sum / 1000000000ULL),
		(uint64_t)(h->sum % 1000000000ULL));
	snprintf(full, sizeof(full), "%s_count", name);
	metrics_u64(w, full, key, value, h->count);
}

/*
 * device="eth0",mode="drop" and the user's labels, escaped; and the same
 * without device, for the samples whose device label names the device a drop
 * happened on. device is node_exporter's name (node_network_*{device="eth0"}),
 * so that the two join; no device (the host-wide tracer): no label, not "".
 */
static int common_labels(struct metrics *m, const struct metrics_opts *o)
{
	const struct param_strings *ls = &o->cli->labels;
	char esc[2][512];
	size_t off, dev, klen;
	unsigned int i;
	const char *why;

	if (!metrics_escape(o->ifname, esc[0], sizeof(esc[0])) ||
	    !metrics_escape(o->mode, esc[1], sizeof(esc[1])))
		return -EINVAL;
	/* What the device label in front of the rest takes. */
	dev = o->ifname[0] ? strlen(esc[0]) + sizeof("device=\"\",") - 1 : 0;
	off = (size_t)snprintf(m->labels_nodev, sizeof(m->labels_nodev), "mode=\"%s\"", esc[1]);
	for (i = 0; i < ls->n; i++) {
		if (metrics_label_check(ls->v[i], &why)) {
			pr_warn("--metrics-label '%s': %s; give KEY=VALUE with KEY like host_1\n",
				ls->v[i], why);
			return -EINVAL;
		}
		klen = (size_t)(strchr(ls->v[i], '=') - ls->v[i]);
		if (!metrics_escape(ls->v[i] + klen + 1, esc[1], sizeof(esc[1])) ||
		    dev + off + klen + strlen(esc[1]) + 4 >= sizeof(m->labels)) {
			pr_warn("--metrics-label '%s': too long; keep the labels under %d bytes\n",
				ls->v[i], METRICS_LABELS_LEN);
			return -EINVAL;
		}
		off += (size_t)snprintf(m->labels_nodev + off, sizeof(m->labels_nodev) - off,
					",%.*s=\"%s\"", (int)klen, ls->v[i], esc[1]);
	}
	/* dev + off fit: checked above. */
	if (dev)
		snprintf(m->labels, sizeof(m->labels), "device=\"%s\",", esc[0]);
	memcpy(m->labels + dev, m->labels_nodev, off + 1);
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

/*
 * outfile's steps (a new file beside the target, renamed over it; never
 * through a symlink) without its messages: this file is rewritten every
 * interval, and a failure is told once by file_report, not at each attempt.
 * Synced to disk only when asked (at exit): the readers are on this host.
 */
static int file_write(struct metrics *m, const char *text, size_t len, bool sync, const char **why)
{
	char *tmp = NULL;
	struct stat st;
	size_t off = 0;
	ssize_t n;
	int fd, err = 0;

	*why = NULL;
	if (!lstat(m->file, &st) && !S_ISREG(st.st_mode)) {
		*why = S_ISLNK(st.st_mode) ? "it is a symlink now, never written through" :
					     "it is no longer a regular file";
		return -EINVAL;
	}
	if (asprintf(&tmp, "%s.tmp.XXXXXX", m->file) < 0)
		return -ENOMEM;
	/* mkostemp opens with O_CREAT | O_EXCL: it never follows a symlink. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	fchmod(fd, m->file_mode);
	while (!err && off < len) {
		n = write(fd, text + off, len - off);
		if (n < 0 && errno != EINTR)
			err = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (!err && sync && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && !lstat(m->file, &st) && S_ISLNK(st.st_mode)) {
		*why = "it is a symlink now, never written through";
		err = -EINVAL;
	}
	if (!err && rename(tmp, m->file))
		err = -errno;
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}

/* Said once when writing starts to fail, once when it works again: never every interval. */
static void file_report(struct metrics *m, int err, const char *why)
{
	if (err && !m->file_failed)
		pr_warn("--metrics-file %s: not written (%s); trying again each interval, and saying so once it works\n",
			m->file, why ? why : strerror(-err));
	else if (!err && m->file_failed)
		pr_warn("--metrics-file %s: written again, after %u attempts that failed\n",
			m->file, m->failures);
	m->failures = err ? m->failures + 1 : 0;
	m->file_failed = err != 0;
}

/* Writes the newest text whenever there is one; what was published meanwhile is skipped. */
static void *file_writer(void *arg)
{
	struct metrics *m = arg;
	unsigned long long gen;
	const char *why;
	char *text;
	size_t len;
	bool last;
	int err;

	pthread_mutex_lock(&m->lock);
	for (;;) {
		while (m->done == m->gen && !m->stop)
			pthread_cond_wait(&m->wake, &m->lock);
		if (m->done == m->gen)
			break;
		gen = m->gen;
		last = m->stop;
		len = m->pub_len;
		text = malloc(len + 1);
		if (text)
			memcpy(text, m->pub, len + 1);
		pthread_mutex_unlock(&m->lock);
		err = text ? file_write(m, text, len, last, &why) : -ENOMEM;
		file_report(m, err, text ? why : NULL);
		free(text);
		pthread_mutex_lock(&m->lock);
		m->done = gen;
		m->file_err = err;
		pthread_cond_broadcast(&m->written);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* The writer's thread, with every signal blocked: they are the tool's. */
static int writer_start(struct metrics *m)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&m->writer, NULL, file_writer, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	m->writing = !err;
	if (err)
		pr_warn("--metrics-file %s: cannot start its writer: %s\n", m->file,
			strerror(-err));
	return err;
}

/* What GET /metrics answers: the last exposition, or before the first an empty one. */
static char *serve_body(void *ctx, size_t *len)
{
	char *body = metrics_published_copy(ctx, len);

	if (!body) {
		body = strdup("# EOF\n");
		*len = body ? strlen(body) : 0;
	}
	return body;
}

static int serve_start(struct metrics *m, const char *tool, const char *spec)
{
	struct http_text_opts o = {
		.prog = tool,
		.option = "--metrics-listen",
		.spec = spec,
		.path = "/metrics",
		.content_type = METRICS_CONTENT_TYPE,
		.body = serve_body,
		.ctx = m,
	};

	return http_text__start(&o, &m->http);
}

int metrics__create(const struct metrics_opts *o, struct metrics **out)
{
	const struct metrics_cli *cli = o->cli;
	struct metrics *m;
	mode_t mask;
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
	pthread_cond_init(&m->wake, NULL);
	pthread_cond_init(&m->written, NULL);
	m->file = cli->file;
	/* Read before any thread starts: the umask is the whole process's, and reading it sets it. */
	mask = umask(0);
	umask(mask);
	m->file_mode = 0666 & ~mask;
	err = labels_unique(&cli->labels);
	if (!err)
		err = common_labels(m, o);
	if (!err && cli->file)
		err = file_check(cli->file);
	if (!err && cli->file)
		err = writer_start(m);
	if (!err && cli->listen)
		err = serve_start(m, o->tool, cli->listen);
	if (err) {
		metrics__destroy(m);
		return err == -ENOMEM || err == -EAGAIN ? err : -EINVAL;
	}
	*out = m;
	return 0;
}

void metrics__destroy(struct metrics *m)
{
	if (!m)
		return;
	/* The server first: its thread may be copying the text. */
	http_text__stop(m->http);
	if (m->writing) {
		/* The final text once more, synced: the file outlives the run. */
		pthread_mutex_lock(&m->lock);
		m->stop = true;
		if (m->pub)
			m->gen++;
		pthread_cond_signal(&m->wake);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->writer, NULL);
	}
	free(m->pub);
	pthread_cond_destroy(&m->written);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int metrics_begin(struct metrics *m, struct metrics_w *w)
{
	m->buf = NULL;
	m->len = 0;
	w->f = open_memstream(&m->buf, &m->len);
	w->labels = m->labels;
	w->labels_nodev = m->labels_nodev;
	return w->f ? 0 : -ENOMEM;
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
	pthread_mutex_lock(&m->lock);
	old = m->pub;
	m->pub = m->buf;
	m->pub_len = m->len;
	m->gen++;
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->lock);
	free(old);
	m->buf = NULL;
}

int metrics_file_wait(struct metrics *m)
{
	unsigned long long want;
	int err;

	if (!m->writing)
		return -ENOENT;
	pthread_mutex_lock(&m->lock);
	want = m->gen;
	while (m->done < want)
		pthread_cond_wait(&m->written, &m->lock);
	err = m->file_err;
	pthread_mutex_unlock(&m->lock);
	return err;
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

const char *metrics_listening(const struct metrics *m)
{
	return m ? http_text_address(m->http) : NULL;
}
