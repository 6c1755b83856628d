// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_writer.h"
#include "base/log.h"
#include "cli/params.h"
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

int params_store(const char *prog, const struct param_def *def, const char *arg, void *cfg)
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

/* Is word one of an enum option's names? */
static bool enum_has(const struct param_def *d, const char *word)
{
	const struct param_enum *e;

	for (e = d->enums; e && e->name; e++)
		if (!strcmp(e->name, word))
			return true;
	return false;
}

int params_parse(const char *prog, const struct param_cmd *cmd, int argc, char **argv, void *cfg,
		 const char **positional)
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
					  d->optional ? optional_argument :
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
		if (c == 'h')
			return PARAMS_HELP;
		if (c == 0x1000)
			return PARAMS_VERSION;
		if (c == '?') {
			const char *arg = argv[optind - 1], *eq = strchr(arg, '=');

			/* A known long option given a value it does not take: getopt sets
			 * optopt to the option's code, which is no letter to print. */
			if (optopt && !strncmp(arg, "--", 2) && eq)
				fprintf(stderr,
					"%s %s: option '%.*s' takes no value; see '%s %s --help'\n",
					prog, cmd->name, (int)(eq - arg), arg, prog, cmd->name);
			else if (optopt)
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
		if (d->optional && !optarg) {
			if (optind < argc && enum_has(d, argv[optind])) {
				optarg = argv[optind++];
			} else {
				*(int *)field(cfg, d) = d->bare;
				continue;
			}
		}
		err = params_store(prog, d, optarg, cfg);
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
