// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "json_writer.h"
#include "params.h"
#include "shared.h"

struct suffix {
	const char *text;
	__u64 mult;
};

static const struct suffix count_suffixes[] = {
	{ "", 1 },	     { "k", 1000ULL },	     { "K", 1000ULL },
	{ "M", 1000000ULL }, { "G", 1000000000ULL }, { NULL, 0 },
};

static const struct suffix rate_suffixes[] = {
	{ "", 1 },
	{ "k", 1000ULL },
	{ "K", 1000ULL },
	{ "M", 1000000ULL },
	{ "G", 1000000000ULL },
	{ "pps", 1 },
	{ "kpps", 1000ULL },
	{ "Kpps", 1000ULL },
	{ "Mpps", 1000000ULL },
	{ "Gpps", 1000000000ULL },
	{ NULL, 0 },
};

static const struct suffix byte_suffixes[] = {
	{ "", 1 },
	{ "B", 1 },
	{ "k", 1ULL << 10 },
	{ "K", 1ULL << 10 },
	{ "KiB", 1ULL << 10 },
	{ "M", 1ULL << 20 },
	{ "MiB", 1ULL << 20 },
	{ "G", 1ULL << 30 },
	{ "GiB", 1ULL << 30 },
	{ NULL, 0 },
};

static const struct suffix duration_suffixes[] = {
	{ "", 1000000000ULL },
	{ "s", 1000000000ULL },
	{ "ms", 1000000ULL },
	{ "us", 1000ULL },
	{ "ns", 1ULL },
	{ "m", 60000000000ULL },
	{ "min", 60000000000ULL },
	{ "h", 3600000000000ULL },
	{ NULL, 0 },
};

/*
 * A decimal number with an optional fraction and a suffix from the table. The
 * result must be a whole number: "1.5k" is 1500, "1.5" (no multiplier) is not.
 */
static int parse_scaled(const char *s, const struct suffix *tab, __u64 *out, const char **why)
{
	__u64 whole = 0, frac = 0, frac_div = 1, val, part;
	const struct suffix *sf;
	const char *p = s;
	bool any = false;

	if (!s || !*s) {
		*why = "empty value";
		return -EINVAL;
	}
	if (*p == '-') {
		*why = "must not be negative";
		return -EINVAL;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		any = true;
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (__u64)(*p - '0'), &whole)) {
			*why = "too large";
			return -ERANGE;
		}
	}
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++) {
			any = true;
			if (frac_div >= 1000000000000000000ULL) {
				*why = "too many decimal places";
				return -EINVAL;
			}
			frac = frac * 10 + (__u64)(*p - '0');
			frac_div *= 10;
		}
	}
	if (!any) {
		*why = "not a number";
		return -EINVAL;
	}
	for (sf = tab; sf->text; sf++)
		if (!strcmp(p, sf->text))
			break;
	if (!sf->text) {
		*why = "unknown suffix";
		return -EINVAL;
	}
	if (__builtin_mul_overflow(whole, sf->mult, &val)) {
		*why = "too large";
		return -ERANGE;
	}
	if (frac) {
		/* frac < frac_div <= 1e18, mult <= 3.6e12: use 128 bits. */
		unsigned __int128 f = (unsigned __int128)frac * sf->mult;

		if (f % frac_div) {
			*why = "fraction does not give a whole number";
			return -EINVAL;
		}
		part = (__u64)(f / frac_div);
		if (__builtin_add_overflow(val, part, &val)) {
			*why = "too large";
			return -ERANGE;
		}
	}
	*out = val;
	return 0;
}

int params_parse_uint(const char *s, __u64 *out, const char **why)
{
	static const struct suffix none[] = { { "", 1 }, { NULL, 0 } };

	if (s && strchr(s, '.')) {
		*why = "must be a whole number";
		return -EINVAL;
	}
	return parse_scaled(s, none, out, why);
}

int params_parse_count(const char *s, __u64 *out, const char **why)
{
	return parse_scaled(s, count_suffixes, out, why);
}

int params_parse_rate(const char *s, __u64 *out, const char **why)
{
	return parse_scaled(s, rate_suffixes, out, why);
}

int params_parse_bytes(const char *s, __u64 *out, const char **why)
{
	return parse_scaled(s, byte_suffixes, out, why);
}

int params_parse_duration(const char *s, __u64 *out_ns, const char **why)
{
	return parse_scaled(s, duration_suffixes, out_ns, why);
}

static int parse_list_id(const char **pp, unsigned int max_id, unsigned int *id, const char **why)
{
	const char *p = *pp;
	__u64 v = 0;

	if (*p < '0' || *p > '9') {
		*why = "expected a number";
		return -EINVAL;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (__u64)(*p - '0');
		if (v > max_id) {
			*why = "number out of range";
			return -ERANGE;
		}
	}
	*id = (unsigned int)v;
	*pp = p;
	return 0;
}

int params_parse_list(const char *s, unsigned int max_id, struct param_list *out, const char **why)
{
	unsigned int lo, hi, i, j;
	const char *p = s;
	int err;

	memset(out, 0, sizeof(*out));
	if (!s || !*s) {
		*why = "empty list";
		return -EINVAL;
	}
	if (!strcmp(s, "all")) {
		out->all = true;
		return 0;
	}
	for (;;) {
		err = parse_list_id(&p, max_id, &lo, why);
		if (err)
			return err;
		hi = lo;
		if (*p == '-') {
			p++;
			err = parse_list_id(&p, max_id, &hi, why);
			if (err)
				return err;
			if (hi < lo) {
				*why = "range start is above its end";
				return -EINVAL;
			}
		}
		for (i = lo; i <= hi; i++) {
			for (j = 0; j < out->n; j++)
				if (out->ids[j] == i)
					break;
			if (j < out->n) {
				*why = "a number appears twice";
				return -EINVAL;
			}
			if (out->n >= PARAM_LIST_MAX) {
				*why = "too many entries";
				return -ERANGE;
			}
			out->ids[out->n++] = i;
		}
		if (!*p)
			return 0;
		if (*p != ',') {
			*why = "expected ',' or '-'";
			return -EINVAL;
		}
		p++;
	}
}

_Static_assert(PARAMS_IFNAME_MAX == IFNAMSIZ - 1, "one limit for interface names");

int params_check_ifname(const char *prog, const char *what, const char *name)
{
	size_t len = strlen(name);

	if (len && len <= PARAMS_IFNAME_MAX)
		return 0;
	fprintf(stderr, "%s: %s '%s' is %s; interface names have 1 to %d characters\n", prog, what,
		name, len ? "too long" : "empty", PARAMS_IFNAME_MAX);
	return -EINVAL;
}

static const char *type_hint(const struct param_def *def)
{
	switch (def->type) {
	case PARAM_UINT:
		return "a whole number, e.g. 64";
	case PARAM_COUNT:
		return "a number with an optional k, M or G suffix, e.g. 1M";
	case PARAM_BYTES:
		return "a size in bytes with an optional k, M or G suffix (powers of 1024), e.g. 64M";
	case PARAM_RATE:
		return "packets per second, e.g. 100000, 1.5M or 10Mpps";
	case PARAM_DURATION:
		return "a duration such as 500ms, 5s or 2m (a bare number is seconds)";
	case PARAM_LIST:
		return "'all' or a list such as 0,2-3";
	default:
		return "";
	}
}

static void *field(void *cfg, const struct param_def *def)
{
	return (char *)cfg + def->offset;
}

static const void *cfield(const void *cfg, const struct param_def *def)
{
	return (const char *)cfg + def->offset;
}

static void format_scaled(__u64 v, char *buf, size_t len)
{
	if (v >= 1000000 && v % 1000000 == 0)
		snprintf(buf, len, "%" PRIu64 "M", (uint64_t)(v / 1000000));
	else if (v >= 1000 && v % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "k", (uint64_t)(v / 1000));
	else
		snprintf(buf, len, "%" PRIu64, (uint64_t)v);
}

static void format_duration(__u64 ns, char *buf, size_t len)
{
	if (ns % 1000000000ULL == 0)
		snprintf(buf, len, "%" PRIu64 "s", (uint64_t)(ns / 1000000000ULL));
	else if (ns % 1000000ULL == 0)
		snprintf(buf, len, "%" PRIu64 "ms", (uint64_t)(ns / 1000000ULL));
	else if (ns % 1000ULL == 0)
		snprintf(buf, len, "%" PRIu64 "us", (uint64_t)(ns / 1000ULL));
	else
		snprintf(buf, len, "%" PRIu64 "ns", (uint64_t)ns);
}

void params_format(const struct param_def *def, const void *cfg, char *buf, size_t len)
{
	const void *f = cfield(cfg, def);
	const struct param_list *l;
	const struct param_enum *e;
	size_t off;
	unsigned int i;
	__u64 v;

	buf[0] = '\0';
	switch (def->type) {
	case PARAM_FLAG:
		snprintf(buf, len, "%s", *(const bool *)f ? "on" : "off");
		break;
	case PARAM_COUNTER:
		snprintf(buf, len, "%d", *(const int *)f);
		break;
	case PARAM_UINT:
		snprintf(buf, len, "%" PRIu64, (uint64_t) * (const __u64 *)f);
		break;
	case PARAM_COUNT:
	case PARAM_RATE:
		format_scaled(*(const __u64 *)f, buf, len);
		break;
	case PARAM_BYTES:
		v = *(const __u64 *)f;
		if (v >= (1ULL << 20) && v % (1ULL << 20) == 0)
			snprintf(buf, len, "%" PRIu64 "M", (uint64_t)(v >> 20));
		else if (v >= 1024 && v % 1024 == 0)
			snprintf(buf, len, "%" PRIu64 "k", (uint64_t)(v >> 10));
		else
			snprintf(buf, len, "%" PRIu64, (uint64_t)v);
		break;
	case PARAM_DURATION:
		format_duration(*(const __u64 *)f, buf, len);
		break;
	case PARAM_STRING:
	case PARAM_IFNAME:
		snprintf(buf, len, "%s", *(const char *const *)f ? *(const char *const *)f : "");
		break;
	case PARAM_ENUM:
		for (e = def->enums; e && e->name; e++)
			if (e->value == *(const int *)f)
				snprintf(buf, len, "%s", e->name);
		break;
	case PARAM_STRINGS: {
		const struct param_strings *ss = f;

		for (i = 0, off = 0; i < ss->n && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "",
						ss->v[i]);
		break;
	}
	case PARAM_LIST:
		l = f;
		if (l->all) {
			snprintf(buf, len, "all");
			break;
		}
		for (i = 0, off = 0; i < l->n && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%u", i ? "," : "",
						l->ids[i]);
		break;
	}
}

/* Worth showing as a default: not a flag, not zero, not empty. */
static bool shows_default(const struct param_def *d, const void *cfg, char *v, size_t len)
{
	const void *f = cfield(cfg, d);

	switch (d->type) {
	case PARAM_FLAG:
	case PARAM_COUNTER:
	case PARAM_STRINGS:
		return false;
	case PARAM_STRING:
	case PARAM_IFNAME:
		if (!*(const char *const *)f)
			return false;
		break;
	case PARAM_ENUM:
	case PARAM_LIST:
		break;
	default:
		if (!*(const __u64 *)f)
			return false;
	}
	params_format(d, cfg, v, len);
	return v[0] != '\0';
}

static int store_value(const char *prog, const struct param_def *def, const char *arg, void *cfg)
{
	const char *why = NULL;
	char lo[32], hi[32];
	__u64 v = 0;
	int err = 0;

	switch (def->type) {
	case PARAM_UINT:
		err = params_parse_uint(arg, &v, &why);
		break;
	case PARAM_COUNT:
		err = params_parse_count(arg, &v, &why);
		break;
	case PARAM_BYTES:
		err = params_parse_bytes(arg, &v, &why);
		break;
	case PARAM_RATE:
		err = params_parse_rate(arg, &v, &why);
		break;
	case PARAM_DURATION:
		err = params_parse_duration(arg, &v, &why);
		break;
	case PARAM_STRING:
		if (!*arg) {
			fprintf(stderr, "%s: --%s: empty value; give %s\n", prog, def->name,
				def->metavar ? def->metavar : "a value");
			return -EINVAL;
		}
		*(const char **)field(cfg, def) = arg;
		return 0;
	case PARAM_STRINGS: {
		struct param_strings *ss = field(cfg, def);

		if (!*arg || ss->n >= PARAM_STRINGS_MAX) {
			fprintf(stderr, "%s: --%s: %s; give %s, at most %d times\n", prog,
				def->name, *arg ? "given too often" : "empty value",
				def->metavar ? def->metavar : "a value", PARAM_STRINGS_MAX);
			return -EINVAL;
		}
		ss->v[ss->n++] = arg;
		return 0;
	}
	case PARAM_IFNAME: {
		char what[64];

		snprintf(what, sizeof(what), "--%s", def->name);
		if (params_check_ifname(prog, what, arg))
			return -EINVAL;
		*(const char **)field(cfg, def) = arg;
		return 0;
	}
	case PARAM_ENUM: {
		const struct param_enum *e;
		char names[256];
		size_t off = 0;

		for (e = def->enums; e && e->name; e++) {
			if (!strcmp(e->name, arg)) {
				*(int *)field(cfg, def) = e->value;
				return 0;
			}
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
						off ? ", " : "", e->name);
			if (off >= sizeof(names))
				off = sizeof(names) - 1;
		}
		fprintf(stderr, "%s: --%s: unknown value '%s'; use one of: %s\n", prog, def->name,
			arg, off ? names : "(none)");
		return -EINVAL;
	}
	case PARAM_LIST:
		err = params_parse_list(arg, def->max ? (unsigned int)def->max : 4095,
					field(cfg, def), &why);
		if (err) {
			fprintf(stderr, "%s: --%s '%s': %s; give %s\n", prog, def->name, arg, why,
				type_hint(def));
			return -EINVAL;
		}
		return 0;
	default:
		return -EINVAL;
	}
	if (err) {
		fprintf(stderr, "%s: --%s '%s': %s; give %s\n", prog, def->name, arg, why,
			type_hint(def));
		return -EINVAL;
	}
	if (v < def->min || (def->max && v > def->max)) {
		struct param_def tmp = *def;

		tmp.offset = 0;
		params_format(&tmp, &def->min, lo, sizeof(lo));
		if (def->max) {
			params_format(&tmp, &def->max, hi, sizeof(hi));
			fprintf(stderr,
				"%s: --%s '%s' is out of range; give a value from %s to %s\n", prog,
				def->name, arg, lo, hi);
		} else {
			fprintf(stderr, "%s: --%s '%s' is out of range; give at least %s\n", prog,
				def->name, arg, lo);
		}
		return -EINVAL;
	}
	*(__u64 *)field(cfg, def) = v;
	return 0;
}

#define MAX_OPTS 128

static const struct param_def *lookup_def(const struct param_cmd *cmd, int idx)
{
	const struct param_def *d;
	int i, n = 0;

	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++)
		for (d = cmd->tables[i]; d->name; d++)
			if (n++ == idx)
				return d;
	return NULL;
}

int params_parse(const char *prog, const struct param_cmd *cmd, int argc, char **argv, void *cfg,
		 const void *defaults, const char **positional)
{
	static const struct option builtin[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 0x1000 },
	};
	struct option opts[MAX_OPTS + 3];
	char shorts[MAX_OPTS * 2 + 4];
	const struct param_def *d;
	int n = 0, s = 0, i, c, longidx, err;

	*positional = NULL;
	shorts[s++] = ':';
	shorts[s++] = 'h';
	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++) {
		for (d = cmd->tables[i]; d->name; d++) {
			if (n >= MAX_OPTS)
				return -E2BIG;
			opts[n].name = d->name;
			opts[n].has_arg = (d->type == PARAM_FLAG || d->type == PARAM_COUNTER) ?
						  no_argument :
						  required_argument;
			opts[n].flag = NULL;
			opts[n].val = 0x2000 + n;
			if (d->short_opt) {
				shorts[s++] = (char)d->short_opt;
				if (opts[n].has_arg == required_argument)
					shorts[s++] = ':';
			}
			n++;
		}
	}
	opts[n++] = builtin[0];
	opts[n++] = builtin[1];
	memset(&opts[n], 0, sizeof(opts[n]));
	shorts[s] = '\0';

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, opts, &longidx)) != -1) {
		d = NULL;
		if (c == 'h') {
			params_usage(stdout, prog, cmd, defaults);
			return PARAMS_EXIT;
		}
		if (c == 0x1000) {
			printf("%s %s\n", prog, XDPSG_VERSION);
			return PARAMS_EXIT;
		}
		if (c == '?') {
			if (optopt)
				fprintf(stderr, "%s %s: unknown option '-%c'; see '%s %s --help'\n",
					prog, cmd->name, optopt, prog, cmd->name);
			else
				fprintf(stderr, "%s %s: unknown option '%s'; see '%s %s --help'\n",
					prog, cmd->name, argv[optind - 1], prog, cmd->name);
			return -EINVAL;
		}
		if (c == ':') {
			fprintf(stderr, "%s %s: option '%s' needs a value; see '%s %s --help'\n",
				prog, cmd->name, argv[optind - 1], prog, cmd->name);
			return -EINVAL;
		}
		if (c >= 0x2000) {
			d = lookup_def(cmd, c - 0x2000);
		} else {
			for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i] && !d; i++)
				for (const struct param_def *e = cmd->tables[i]; e->name; e++)
					if (e->short_opt == c) {
						d = e;
						break;
					}
		}
		if (!d)
			return -EINVAL;
		if (d->type == PARAM_FLAG) {
			*(bool *)field(cfg, d) = true;
			continue;
		}
		if (d->type == PARAM_COUNTER) {
			(*(int *)field(cfg, d))++;
			continue;
		}
		err = store_value(prog, d, optarg, cfg);
		if (err)
			return err;
	}
	if (cmd->positional) {
		if (optind >= argc) {
			fprintf(stderr, "%s %s: missing %s; usage: %s %s [OPTIONS] %s\n", prog,
				cmd->name, cmd->positional, prog, cmd->name, cmd->positional);
			return -EINVAL;
		}
		*positional = argv[optind++];
		if (!strcmp(cmd->positional, "IFNAME") &&
		    params_check_ifname(prog, "interface name", *positional))
			return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "%s %s: unexpected argument '%s'; see '%s %s --help'\n", prog,
			cmd->name, argv[optind], prog, cmd->name);
		return -EINVAL;
	}
	return PARAMS_OK;
}

void params_usage(FILE *out, const char *prog, const struct param_cmd *cmd, const void *defaults)
{
	const struct param_def *d;
	char left[64], def[96];
	int i;

	/* A tool with one command (name "") has no command word. */
	fprintf(out, "Usage: %s%s%s [OPTIONS]%s%s\n\n", prog, cmd->name[0] ? " " : "", cmd->name,
		cmd->positional ? " " : "", cmd->positional ? cmd->positional : "");
	if (cmd->summary)
		fprintf(out, "%s\n", cmd->summary);
	if (cmd->description)
		fprintf(out, "\n%s\n", cmd->description);
	fprintf(out, "\nOptions:\n");
	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++) {
		for (d = cmd->tables[i]; d->name; d++) {
			char sh[8] = "    ";

			if (d->short_opt)
				snprintf(sh, sizeof(sh), "-%c, ", d->short_opt);
			if (d->type == PARAM_FLAG || d->type == PARAM_COUNTER)
				snprintf(left, sizeof(left), "%s--%s", sh, d->name);
			else
				snprintf(left, sizeof(left), "%s--%s %s", sh, d->name,
					 d->metavar ? d->metavar : "VALUE");
			def[0] = '\0';
			if (defaults) {
				char v[64];

				if (shows_default(d, defaults, v, sizeof(v)))
					snprintf(def, sizeof(def), " (default %s)", v);
			}
			fprintf(out, "  %-28s %s%s\n", left, d->help ? d->help : "", def);
		}
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help and exit");
	fprintf(out, "  %-28s %s\n", "    --version", "show the version and exit");
}

void params_usage_tool(FILE *out, const char *prog, const char *summary,
		       const struct param_cmd *const *cmds)
{
	const char *sep = "";
	int i;

	fprintf(out, "Usage: %s ", prog);
	for (i = 0; cmds[i]; i++) {
		fprintf(out, "%s%s", sep, cmds[i]->name);
		sep = "|";
	}
	fprintf(out, " [OPTIONS] IFNAME\n\n%s\n\nCommands:\n", summary);
	for (i = 0; cmds[i]; i++)
		fprintf(out, "  %-10s %s\n", cmds[i]->name, cmds[i]->summary);
	fprintf(out, "\nSee '%s COMMAND --help' for the options of each command.\n", prog);
}

const struct param_cmd *params_find_cmd(const struct param_cmd *const *cmds, const char *name)
{
	int i;

	for (i = 0; cmds[i]; i++)
		if (!strcmp(cmds[i]->name, name))
			return cmds[i];
	return NULL;
}

static void cmd_names(const struct param_cmd *const *cmds, const char *sep, const char *last,
		      char *buf, size_t len)
{
	size_t off = 0;
	int i, n = 0;

	while (cmds[n])
		n++;
	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i == 0 ? "" : (i == n - 1 ? last : sep), cmds[i]->name);
}

#define PARAMS_NAMES_MAX 256

/* The long names of cmds[first..last]'s options, each once, in table order. */
static void json_options(struct jw *w, const char *key, const struct param_cmd *const *cmds,
			 unsigned int first, unsigned int last)
{
	const char *seen[PARAMS_NAMES_MAX];
	const struct param_def *d;
	unsigned int c, n = 0, i;
	int t;

	jw_arr(w, key);
	for (c = first; c <= last; c++)
		for (t = 0; t < PARAM_TABLES_MAX && cmds[c]->tables[t]; t++)
			for (d = cmds[c]->tables[t]; d->name; d++) {
				for (i = 0; i < n && strcmp(seen[i], d->name); i++)
					;
				if (i < n)
					continue;
				if (n < PARAMS_NAMES_MAX)
					seen[n++] = d->name;
				jw_str(w, NULL, d->name);
			}
	jw_end_arr(w);
}

void params_version_json(FILE *out, const char *prog, const struct param_cmd *const *cmds)
{
	unsigned int c, n = 0;
	struct jw w;

	while (cmds[n])
		n++;
	jw_begin(&w, out, "version");
	jw_str(&w, "tool", prog);
	jw_str(&w, "version", XDPSG_VERSION);
	jw_u64(&w, "stamp_version", XDPSG_STAMP_VERSION);
	jw_arr(&w, "modes");
	for (c = 0; c < n; c++) {
		jw_obj(&w, NULL);
		jw_str(&w, "name", cmds[c]->name);
		jw_str(&w, "summary", cmds[c]->summary);
		json_options(&w, "options", cmds, c, c);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	/* What the tool can do in some mode: every option any mode takes, once. */
	if (n)
		json_options(&w, "features", cmds, 0, n - 1);
	jw_finish(&w);
}

int params_dispatch(const char *prog, const char *summary, const struct param_cmd *const *cmds,
		    const void *defaults, int argc, char **argv, const struct param_cmd **cmd)
{
	char names[256];

	*cmd = NULL;
	if (argc < 2) {
		cmd_names(cmds, "|", "|", names, sizeof(names));
		fprintf(stderr,
			"%s: missing command; usage: %s %s [OPTIONS] IFNAME (see %s --help)\n",
			prog, prog, names, prog);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		params_usage_tool(stdout, prog, summary, cmds);
		return 0;
	}
	if (!strcmp(argv[1], "--man-options")) {
		params_man_tool(stdout, cmds, defaults);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		if (argc > 2 && (!strcmp(argv[2], "--json") || !strcmp(argv[2], "-j")))
			params_version_json(stdout, prog, cmds);
		else
			printf("%s %s\n", prog, XDPSG_VERSION);
		return 0;
	}
	*cmd = params_find_cmd(cmds, argv[1]);
	if (!*cmd) {
		cmd_names(cmds, ", ", " or ", names, sizeof(names));
		fprintf(stderr, "%s: unknown command '%s'; use %s (see %s --help)\n", prog, argv[1],
			names, prog);
		return 2;
	}
	return -1;
}

int params_cmdline(const char *prog, const char *summary, const struct param_cmd *const *cmds,
		   const void *defaults, int argc, char **argv, void *cfg,
		   const struct param_cmd **cmd, const char **positional)
{
	int err = params_dispatch(prog, summary, cmds, defaults, argc, argv, cmd);

	if (err >= 0)
		return err;
	err = params_parse(prog, *cmd, argc - 1, argv + 1, cfg, defaults, positional);
	if (err)
		return err == PARAMS_EXIT ? 0 : 2;
	return -1;
}

void params_for_each(const struct param_cmd *cmd, void (*fn)(const struct param_def *, void *),
		     void *ctx)
{
	const struct param_def *d;
	int i;

	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++)
		for (d = cmd->tables[i]; d->name; d++)
			fn(d, ctx);
}

static void roff_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '-' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void man_table(FILE *out, const struct param_def *table, const void *defaults)
{
	const struct param_def *d;
	char v[64];

	for (d = table; d->name; d++) {
		{
			fputs(".TP\n.B ", out);
			if (d->short_opt)
				fprintf(out, "\\-%c, ", d->short_opt);
			fputs("\\-\\-", out);
			roff_text(out, d->name);
			if (d->type != PARAM_FLAG && d->type != PARAM_COUNTER) {
				fputs(" \\fI", out);
				roff_text(out, d->metavar ? d->metavar : "VALUE");
				fputs("\\fR", out);
			}
			fputc('\n', out);
			roff_text(out, d->help);
			if (defaults && shows_default(d, defaults, v, sizeof(v))) {
				fputs(" (default ", out);
				roff_text(out, v);
				fputc(')', out);
			}
			fputs(".\n", out);
		}
	}
}

void params_man(FILE *out, const struct param_cmd *cmd, const void *defaults)
{
	int i;

	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++)
		man_table(out, cmd->tables[i], defaults);
}

static bool table_in_all(const struct param_cmd *const *cmds, const struct param_def *t)
{
	int c, i;

	for (c = 0; cmds[c]; c++) {
		for (i = 0; i < PARAM_TABLES_MAX && cmds[c]->tables[i]; i++)
			if (cmds[c]->tables[i] == t)
				break;
		if (i == PARAM_TABLES_MAX || !cmds[c]->tables[i])
			return false;
	}
	return true;
}

void params_man_tool(FILE *out, const struct param_cmd *const *cmds, const void *defaults)
{
	const struct param_def *done[32];
	int c, i, j, ndone = 0;

	fputs(".SS Options of every command\n", out);
	for (i = 0; i < PARAM_TABLES_MAX && cmds[0] && cmds[0]->tables[i]; i++) {
		if (table_in_all(cmds, cmds[0]->tables[i]) && ndone < 32) {
			man_table(out, cmds[0]->tables[i], defaults);
			done[ndone++] = cmds[0]->tables[i];
		}
	}
	fputs(".TP\n.B \\-h, \\-\\-help\nshow the options of a command and exit.\n", out);
	fputs(".TP\n.B \\-\\-version\nshow the version and exit.\n", out);
	for (c = 0; cmds[c]; c++) {
		bool header = false;

		for (i = 0; i < PARAM_TABLES_MAX && cmds[c]->tables[i]; i++) {
			for (j = 0; j < ndone; j++)
				if (done[j] == cmds[c]->tables[i])
					break;
			if (j < ndone)
				continue;
			if (!header) {
				fprintf(out, ".SS Options of %s\n", cmds[c]->name);
				header = true;
			}
			man_table(out, cmds[c]->tables[i], defaults);
			if (ndone < 32)
				done[ndone++] = cmds[c]->tables[i];
		}
	}
}
