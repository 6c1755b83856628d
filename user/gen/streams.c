// SPDX-License-Identifier: GPL-2.0
/*
 * Several streams in one run: --stream SPEC (key=value,...) and --streams
 * FILE (a JSON array of objects with the same keys) into struct gen_stream,
 * their shares of -n and --rate, each thread's share of each stream, and
 * their lines in the report. streams.h says the contract.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "pkt/build.h"
#include "streams.h"

/* What may differ per stream: the generator's own long option names. */
static const char *const stream_keys[] = {
	"name",	    "proto",	"tcp-flags",  "vlan",  "vlan-prio", "encap",
	"size",	    "imix",	"imix-sizes", "flows", "src-ip",    "dst-ip",
	"src-port", "dst-port", "ipv6",	      "rate",  "count",	    NULL,
};
#define STREAM_KEYS                                                                               \
	"name, proto, tcp-flags, vlan, vlan-prio, encap, size, imix, imix-sizes, flows, src-ip, " \
	"dst-ip, src-port, dst-port, ipv6, rate, count"

static const struct param_def *find_def(const struct param_cmd *cmd, const char *name)
{
	const struct param_def *d;
	int i;

	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++)
		for (d = cmd->tables[i]; d->name; d++)
			if (!strcmp(d->name, name))
				return d;
	return NULL;
}

static bool known_key(const char *key)
{
	unsigned int i;

	for (i = 0; stream_keys[i]; i++)
		if (!strcmp(stream_keys[i], key))
			return true;
	return false;
}

/* A value that lives as long as the run (the stream's cfg points into it). */
static char *keep(struct gen *g, const char *s, size_t len)
{
	char **v = realloc(g->stream_strs, (g->nstream_strs + 1) * sizeof(*v));
	char *c;

	if (!v)
		return NULL;
	g->stream_strs = v;
	c = strndup(s, len);
	if (c)
		v[g->nstream_strs++] = c;
	return c;
}

static int set_flag(struct gen_stream *s, const char *key, const char *val, bool *out)
{
	if (!strcmp(val, "1") || !strcmp(val, "true") || !strcmp(val, "yes"))
		*out = true;
	else if (!strcmp(val, "0") || !strcmp(val, "false") || !strcmp(val, "no"))
		*out = false;
	else {
		fprintf(stderr, "xdp-gen: %s: %s '%s': give true or false\n", s->where, key, val);
		return -EINVAL;
	}
	return 0;
}

/* vlan=ID or vlan=OUTER/INNER: the stream's tags replace the run's. */
static int set_vlan(struct gen *g, struct gen_stream *s, const struct param_def *d, const char *val)
{
	char prog[128];
	const char *p = val;

	snprintf(prog, sizeof(prog), "xdp-gen: %s", s->where);
	s->cfg.vlan.n = 0;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t l = slash ? (size_t)(slash - p) : strlen(p);
		char *one = keep(g, p, l);

		if (!one)
			return -ENOMEM;
		if (params_store(prog, d, one, &s->cfg))
			return -EINVAL;
		p += l + (slash ? 1 : 0);
	}
	return 0;
}

/* One key=value into stream s; val must live as long as the run. */
static int stream_set(struct gen *g, const struct param_cmd *cmd, struct gen_stream *s,
		      const char *key, const char *val)
{
	const struct param_def *d;
	char prog[128];

	if (!known_key(key)) {
		fprintf(stderr, "xdp-gen: %s: unknown key '%s' (keys: " STREAM_KEYS ")\n", s->where,
			key);
		return -EINVAL;
	}
	if (!*val) {
		fprintf(stderr, "xdp-gen: %s: %s has no value; give %s=VALUE\n", s->where, key,
			key);
		return -EINVAL;
	}
	if (!strcmp(key, "name")) {
		if (strlen(val) >= GEN_STREAM_NAME_MAX || strpbrk(val, "\"\\ ,=")) {
			fprintf(stderr,
				"xdp-gen: %s: name '%s': at most %d characters, no spaces, quotes, commas or '='\n",
				s->where, val, GEN_STREAM_NAME_MAX - 1);
			return -EINVAL;
		}
		snprintf(s->name, sizeof(s->name), "%s", val);
		return 0;
	}
	d = find_def(cmd, key);
	if (!d) /* every key is in the tables of the commands that take --stream */
		return -EINVAL;
	s->has_count |= !strcmp(key, "count");
	s->has_rate |= !strcmp(key, "rate");
	s->has_size |= !strcmp(key, "size");
	s->has_imix |= !strncmp(key, "imix", 4);
	s->has_proto |= !strcmp(key, "proto");
	s->has_tcp_flags |= !strcmp(key, "tcp-flags");
	s->has_ports |= !strcmp(key, "src-port") || !strcmp(key, "dst-port");
	if (d->type == PARAM_FLAG)
		return set_flag(s, key, val, (bool *)((char *)&s->cfg + d->offset));
	if (d->type == PARAM_STRINGS)
		return set_vlan(g, s, d, val);
	snprintf(prog, sizeof(prog), "xdp-gen: %s", s->where);
	return params_store(prog, d, val, &s->cfg);
}

static struct gen_stream *stream_new(struct gen *g, const struct gen_cfg *cfg, const char *where)
{
	struct gen_stream *s, *v;

	if (g->nstreams >= GEN_STREAMS_MAX) {
		fprintf(stderr, "xdp-gen: %s: more than %d streams; give at most %d\n", where,
			GEN_STREAMS_MAX, GEN_STREAMS_MAX);
		return NULL;
	}
	v = realloc(g->streams, (g->nstreams + 1) * sizeof(*v));
	if (!v)
		return NULL;
	g->streams = v;
	s = &v[g->nstreams];
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	/* The run's -n and --rate are split over the streams, not copied into each. */
	s->cfg.count = 0;
	s->cfg.rate = 0;
	snprintf(s->where, sizeof(s->where), "%s", where);
	snprintf(s->name, sizeof(s->name), "%u", g->nstreams);
	g->nstreams++;
	return s;
}

/* --stream SPEC: key=value pairs separated by commas. */
static int parse_spec(struct gen *g, const struct gen_cfg *cfg, const struct param_cmd *cmd,
		      unsigned int idx, const char *spec)
{
	char where[96], *copy, *p, *tok;
	struct gen_stream *s;

	snprintf(where, sizeof(where), "--stream %u", idx);
	s = stream_new(g, cfg, where);
	copy = s ? keep(g, spec, strlen(spec)) : NULL;
	if (!copy)
		return s ? -ENOMEM : -EINVAL;
	for (p = copy; (tok = strsep(&p, ","));) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			fprintf(stderr,
				"xdp-gen: %s: '%s' is not key=value; give e.g. proto=tcp,rate=10k (keys: " STREAM_KEYS
				")\n",
				where, tok);
			return -EINVAL;
		}
		*eq = '\0';
		if (stream_set(g, cmd, s, tok, eq + 1))
			return -EINVAL;
	}
	return 0;
}

/* A value of the file: its text kept (as --stream's are). */
static int jp_value(struct gen *g, struct json_read *j, char **out)
{
	const char *text;
	size_t len;

	if (json_read_value(j, &text, &len))
		return -EINVAL;
	*out = keep(g, text, len);
	return *out ? 0 : -ENOMEM;
}

static int jp_object(struct gen *g, struct json_read *j, const char *file,
		     const struct gen_cfg *cfg, const struct param_cmd *cmd)
{
	struct gen_stream *s;
	char where[96], *key, *val;
	unsigned int key_line, obj_line = j->line;

	snprintf(where, sizeof(where), "--streams %s line %u: stream %u", file, j->line,
		 g->nstreams);
	s = stream_new(g, cfg, where);
	if (!s)
		return -EEXIST; /* said */
	if (json_read_eat(j, '}'))
		return 0;
	do {
		if (json_read_peek(j) != '"')
			return json_read_fail(j, "expected a \"key\" in quotes");
		key_line = j->line;
		if (jp_value(g, j, &key))
			return -EINVAL;
		if (!json_read_eat(j, ':'))
			return json_read_fail(j, "expected ':' after a key");
		if (jp_value(g, j, &val))
			return -EINVAL;
		snprintf(s->where, sizeof(s->where), "--streams %s line %u: stream %u", file,
			 key_line, g->nstreams - 1);
		if (stream_set(g, cmd, s, key, val))
			return -EEXIST;
	} while (json_read_eat(j, ','));
	if (!json_read_eat(j, '}'))
		return json_read_fail(j, "expected ',' or '}' after a value");
	/* What is found wrong later (a size below the headers) names the object's line. */
	snprintf(s->where, sizeof(s->where), "--streams %s line %u: stream %u", file, obj_line,
		 g->nstreams - 1);
	return 0;
}

static int parse_file(struct gen *g, const struct gen_cfg *cfg, const struct param_cmd *cmd)
{
	struct json_read j;
	char buf[65536];
	size_t n;
	FILE *f;
	int err;

	f = fopen(cfg->streams_file, "r");
	if (!f) {
		fprintf(stderr, "xdp-gen: --streams %s: %s; give a readable JSON file\n",
			cfg->streams_file, strerror(errno));
		return -EINVAL;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n == sizeof(buf)) {
		fprintf(stderr, "xdp-gen: --streams %s: larger than 64 KiB; give fewer streams\n",
			cfg->streams_file);
		return -EINVAL;
	}
	/* The parser reads C strings: a NUL would end a number or a word unseen. */
	if (memchr(buf, '\0', n)) {
		const char *nul = memchr(buf, '\0', n), *bol = buf, *p;
		unsigned int line = 1;

		for (p = buf; p < nul; p++)
			if (*p == '\n') {
				line++;
				bol = p + 1;
			}
		fprintf(stderr,
			"xdp-gen: --streams %s line %u column %u: a NUL byte; the file must be JSON "
			"text, remove it\n",
			cfg->streams_file, line, (unsigned int)(nul - bol) + 1);
		return -EINVAL;
	}
	json_read_init(&j, buf, n);
	err = json_read_eat(&j, '[') ?
		      0 :
		      json_read_fail(&j, "expected '[': the file is a JSON array of objects");
	if (!err && !json_read_eat(&j, ']')) {
		do {
			if (!json_read_eat(&j, '{')) {
				err = json_read_fail(&j, "expected '{': each stream is an object");
				break;
			}
			err = jp_object(g, &j, cfg->streams_file, cfg, cmd);
		} while (!err && json_read_eat(&j, ','));
		if (!err && !json_read_eat(&j, ']'))
			err = json_read_fail(&j, "expected ',' or ']' after an object");
	}
	if (!err && json_read_peek(&j))
		err = json_read_fail(&j, "text after the array; the file holds one array");
	if (err == -EINVAL)
		fprintf(stderr, "xdp-gen: --streams %s line %u: %s\n", cfg->streams_file, j.line,
			j.err);
	if (!err && !g->nstreams) {
		fprintf(stderr, "xdp-gen: --streams %s: no streams; give at least one object\n",
			cfg->streams_file);
		err = -EINVAL;
	}
	return err ? -EINVAL : 0;
}

/* What a stream's keys replace takes what depends on it along (a run's --tcp-flags, --imix). */
static void stream_settle(struct gen_stream *s)
{
	if (s->has_proto && !s->has_tcp_flags)
		s->cfg.tcp_flags = NULL;
	if (s->has_proto && !s->has_ports && s->cfg.proto == PKT_ICMP)
		s->cfg.src_port = s->cfg.dst_port = NULL;
	if (s->has_size && !s->has_imix) {
		s->cfg.imix = false;
		s->cfg.imix_sizes = NULL;
	}
	if (s->has_imix && !s->has_size)
		s->cfg.size = 0;
}

/*
 * -n and --rate over the streams: a stream's own count= and rate= stand;
 * the rest of -n goes to the others in proportion to their rates (all
 * given), else evenly; the rest of --rate evenly to the streams without one.
 */
static int split(struct gen *g, struct gen_cfg *cfg)
{
	__u64 cnt = 0, rate = 0, rsum = 0, left;
	unsigned int i, nc = 0, nr = 0, k;
	bool all_rated;

	for (i = 0; i < g->nstreams; i++) {
		struct gen_stream *s = &g->streams[i];

		s->count = s->has_count ? s->cfg.count : 0;
		s->rate = s->has_rate ? s->cfg.rate : 0;
		cnt += s->count;
		rate += s->rate;
		nc += !s->has_count;
		nr += !s->has_rate;
	}
	if (cfg->count && (cnt > cfg->count || (!nc && cnt != cfg->count))) {
		fprintf(stderr,
			"xdp-gen: the streams' count= add up to %llu, not the -n %llu; drop -n or make them agree\n",
			(unsigned long long)cnt, (unsigned long long)cfg->count);
		return -EINVAL;
	}
	if (cfg->rate &&
	    (rate > cfg->rate || (!nr && rate != cfg->rate) || (nr && rate + nr > cfg->rate))) {
		fprintf(stderr,
			"xdp-gen: the streams' rate= add up to %llu pps, which leaves no share of the --rate %llu for the others; raise --rate or drop it\n",
			(unsigned long long)rate, (unsigned long long)cfg->rate);
		return -EINVAL;
	}
	for (i = 0, k = 0; cfg->rate && nr && i < g->nstreams; i++) {
		struct gen_stream *s = &g->streams[i];

		if (s->has_rate)
			continue;
		s->rate = (cfg->rate - rate) / nr + (k++ < (cfg->rate - rate) % nr);
	}
	/* Rates first: a stream given its share of --rate takes its share of -n by it. */
	all_rated = true;
	rsum = 0;
	for (i = 0; i < g->nstreams; i++) {
		if (g->streams[i].has_count)
			continue;
		all_rated &= g->streams[i].rate != 0;
		rsum += g->streams[i].rate;
	}
	left = cfg->count ? cfg->count - cnt : 0;
	for (i = 0; left && i < g->nstreams; i++) {
		struct gen_stream *s = &g->streams[i];

		if (s->has_count)
			continue;
		s->count = all_rated && rsum ?
				   (__u64)((unsigned __int128)(cfg->count - cnt) * s->rate / rsum) :
				   (cfg->count - cnt) / nc;
		left -= s->count;
	}
	/* What rounding left goes to the first streams, one each. */
	for (i = 0; left && i < g->nstreams; i++)
		if (!g->streams[i].has_count) {
			g->streams[i].count++;
			left--;
		}
	/* A count of 0 means no limit: a share that rounds to nothing cannot be given. */
	for (i = 0; cfg->count && i < g->nstreams; i++)
		if (!g->streams[i].count) {
			fprintf(stderr,
				"xdp-gen: -n %llu leaves stream %u (%s) no frames once split; raise -n or give it count=\n",
				(unsigned long long)cfg->count, i, g->streams[i].name);
			return -EINVAL;
		}
	/*
	 * Every stream counted: the run's -n is their sum (the stop says "count").
	 * Their rates stay theirs: streams that end apart never make one rate.
	 */
	cnt = 0;
	for (i = 0; i < g->nstreams; i++)
		cnt = (cnt == ~0ULL || !g->streams[i].count) ? ~0ULL : cnt + g->streams[i].count;
	if (cnt != ~0ULL)
		cfg->count = cnt;
	return 0;
}

static int refuse(const struct gen_cfg *cfg, const struct param_cmd *cmd)
{
	const char *why = NULL;

	(void)cmd;
	if (cfg->stream.n && cfg->streams_file)
		why = "--stream and --streams both give the streams; use one";
	else if (cfg->pcap || cfg->rtt)
		why = "--pcap and --rtt send one stream; drop --stream/--streams";
	else if (cfg->burst || cfg->poisson)
		why = "--burst and --poisson shape one stream; drop them with --stream/--streams";
	if (why)
		fprintf(stderr, "xdp-gen: %s\n", why);
	return why ? -EINVAL : 0;
}

int gen_streams_parse(struct gen *g, struct gen_cfg *cfg, const struct param_cmd *cmd)
{
	unsigned int i;
	int err = 0;

	if (!cfg->stream.n && !cfg->streams_file)
		return 0;
	if (refuse(cfg, cmd))
		return -EINVAL;
	for (i = 0; !err && i < cfg->stream.n; i++)
		err = parse_spec(g, cfg, cmd, i, cfg->stream.v[i]);
	if (!err && cfg->streams_file)
		err = parse_file(g, cfg, cmd);
	for (i = 0; !err && i < g->nstreams; i++)
		stream_settle(&g->streams[i]);
	return err ? -EINVAL : split(g, cfg);
}

/*
 * Stream 0 keeps the run id build() drew; stream i takes run + i. Drawn
 * again until none of them is 0 (no stamp names run 0), so the ids are
 * distinct by construction, not by chance.
 */
static void assign_runs(struct gen *g)
{
	__u32 run = g->streams[0].popts.run;
	unsigned int i;

	while (run == 0 || (__u32)(run + g->nstreams - 1) < run)
		run = run * 2654435761u + 1;
	for (i = 0; i < g->nstreams; i++) {
		struct pkt_opts *o = &g->streams[i].popts;

		o->run = run + i;
		o->seed = ((__u64)o->run << 32) | 0x9e3779b9u;
		/* A frame may be reused by a stream with other headers: copy it whole. */
		o->copy_payload = true;
	}
}

static int thread_shares(struct gen *g, struct gen_thread *t)
{
	unsigned int s, biggest = 0;
	char err[256];
	bool idle = true;

	t->ts = aligned_alloc(64, g->nstreams * sizeof(*t->ts));
	if (!t->ts)
		return -ENOMEM;
	memset(t->ts, 0, g->nstreams * sizeof(*t->ts));
	for (s = 0; s < g->nstreams; s++) {
		struct gen_stream *st = &g->streams[s];
		struct gen_tstream *x = &t->ts[s];
		struct pkt_opts o = st->popts;

		o.imix = st->popts.imix ? &st->imix : NULL;
		o.shard = t->idx;
		o.shards = g->nthreads;
		o.seed += t->idx;
		x->pg = pkt_gen__create(&o, err, sizeof(err));
		if (!x->pg) {
			fprintf(stderr, "xdp-gen: %s: %s\n", st->where, err);
			return -EINVAL;
		}
		x->pg->clock_off = g->clock.user_offset_ns;
		pace_share(&x->pace, st->count, st->rate, t->idx, g->nthreads);
		idle &= x->pace.idle;
		if (pkt_gen_max_len(x->pg) > pkt_gen_max_len(t->ts[biggest].pg))
			biggest = s;
	}
	/* pg: the largest frame, for the buffers' size; the thread idles if every share is 0. */
	t->pg = t->ts[biggest].pg;
	t->pace.idle = idle;
	return 0;
}

int gen_streams_build(struct gen *g,
		      int (*build)(struct gen *g, const struct gen_cfg *cfg, struct pkt_opts *o,
				   struct pkt_imix *imix, const char *where))
{
	unsigned int i;
	int err = 0;

	for (i = 0; !err && i < g->nstreams; i++)
		err = build(g, &g->streams[i].cfg, &g->streams[i].popts, &g->streams[i].imix,
			    g->streams[i].where);
	if (err)
		return err;
	assign_runs(g);
	/* The start line and the run's one id (replay, rtt: refused) are stream 0's. */
	g->popts = g->streams[0].popts;
	for (i = 0; !err && i < g->nthreads; i++)
		err = thread_shares(g, &g->th[i]);
	return err;
}

void gen_streams_free(struct gen *g)
{
	unsigned int i, s;

	for (i = 0; g->th && g->streams && i < g->nthreads; i++) {
		for (s = 0; g->th[i].ts && s < g->nstreams; s++)
			pkt_gen__destroy(g->th[i].ts[s].pg);
		free(g->th[i].ts);
		g->th[i].ts = NULL;
		g->th[i].pg = NULL;
	}
	for (i = 0; i < g->nstream_strs; i++)
		free(g->stream_strs[i]);
	free(g->stream_strs);
	free(g->streams);
}
