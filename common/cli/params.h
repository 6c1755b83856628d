/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PARAMS_H
#define XDPSG_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * One table per command drives getopt_long, --help and the man-page check.
 * Values land in a caller-owned config struct at the offset each entry names.
 */
enum param_type {
	PARAM_FLAG, /* bool, no argument */
	PARAM_COUNTER, /* int, incremented each time (-vv) */
	PARAM_UINT, /* __u64, plain decimal, no suffix */
	PARAM_COUNT, /* __u64, decimal suffixes: 1k = 1000, 2M, 3G */
	PARAM_BYTES, /* __u64, binary suffixes: 1k = 1024, 2M, 1GiB */
	PARAM_RATE, /* __u64 packets/s: 100000, 1.5M, 10Mpps */
	PARAM_DURATION, /* __u64 nanoseconds: 500ms, 5s, 2m; bare number = seconds */
	PARAM_STRING, /* const char * */
	PARAM_IFNAME, /* const char *, an interface name: at most PARAMS_IFNAME_MAX bytes */
	PARAM_ENUM, /* int, one of the names in .enums */
	PARAM_LIST, /* struct param_list: "all" or "0,2-5" */
	PARAM_STRINGS, /* struct param_strings: a string option given any number of times */
};

/* The longest interface name the kernel takes (IFNAMSIZ - 1). */
#define PARAMS_IFNAME_MAX 15

struct param_enum {
	const char *name;
	int value;
};

#define PARAM_LIST_MAX 256

struct param_list {
	bool all;
	unsigned int n;
	unsigned int ids[PARAM_LIST_MAX];
};

#define PARAM_STRINGS_MAX 16

struct param_strings {
	unsigned int n;
	const char *v[PARAM_STRINGS_MAX];
};

struct param_def {
	const char *name; /* long name, no dashes; NULL ends a table */
	int short_opt; /* 0 when there is none */
	enum param_type type;
	size_t offset; /* offsetof() into the config struct */
	const char *metavar; /* shown in --help, e.g. SECONDS */
	const char *help;
	__u64 min, max; /* numeric range, inclusive; max 0 = no upper bound */
	const struct param_enum *enums; /* PARAM_ENUM only, ends with name NULL */
	/*
	 * PARAM_ENUM only: the value may be left out, and the option alone stores
	 * 'bare'. A value is the next word when it is one of the names, or follows
	 * '=' (--drop-causes local, --drop-causes=local, --drop-causes IFNAME).
	 */
	bool optional;
	int bare;
};

/*
 * One row of a table, in the manner of xdp-tools' DEFINE_OPTION: the long
 * name, the type and where the value goes (offsetof() into the config
 * struct), then every other field by its name:
 *
 *	PARAM_OPT("rate", PARAM_RATE, offsetof(struct gen_cfg, rate), .short_opt = 'r',
 *		  .metavar = "PPS", .help = "packets per second", .max = 1000000000ULL),
 *
 * A table ends with an empty row, {}.
 */
#define PARAM_OPT(name_, type_, offset_, ...)                                      \
	{                                                                          \
		.name = (name_), .type = (type_), .offset = (offset_), __VA_ARGS__ \
	}

#define PARAM_TABLES_MAX 5

struct param_cmd {
	const char *name; /* subcommand, e.g. "drop" */
	const char *summary; /* one line for the tool's overview */
	const char *description; /* a paragraph for --help; may be NULL */
	const char *positional; /* e.g. "IFNAME" (then checked as one); NULL if none */
	const struct param_def *tables[PARAM_TABLES_MAX]; /* NULL-terminated */
	/*
	 * What the tool runs for this command: its mode's ops (struct
	 * sink_mode_ops, struct gen_mode), so that the command row is all a
	 * tool looks up. params never reads it.
	 */
	const void *ops;
};

enum {
	PARAMS_OK = 0,
	PARAMS_HELP = 1, /* --help was asked: nothing parsed, nothing printed */
	PARAMS_VERSION = 2, /* --version was asked */
};

/*
 * Parse argv (argv[0] is the subcommand name) into cfg. Returns PARAMS_OK,
 * PARAMS_HELP or PARAMS_VERSION (the caller answers them: params_command()
 * in params_cmd.h does), or -EINVAL after printing exactly one line naming
 * the problem and the fix. *positional receives the positional argument (or
 * NULL).
 */
int params_parse(const char *prog, const struct param_cmd *cmd, int argc, char **argv, void *cfg,
		 const char **positional);

/*
 * Value parsers used by params_parse, exposed for tests and for tools with
 * their own syntax. Each returns 0, or -EINVAL (malformed) / -ERANGE (too big),
 * and on error points *why at a short reason.
 */
int params_parse_uint(const char *s, __u64 *out, const char **why);
int params_parse_count(const char *s, __u64 *out, const char **why);
int params_parse_bytes(const char *s, __u64 *out, const char **why);
int params_parse_rate(const char *s, __u64 *out, const char **why);
int params_parse_duration(const char *s, __u64 *out_ns, const char **why);
int params_parse_list(const char *s, unsigned int max_id, struct param_list *out, const char **why);

/*
 * 0 when name fits an interface name, else -EINVAL after one line on stderr
 * naming the problem and the fix. A longer name must never be cut short: its
 * first 15 bytes may name another interface.
 */
int params_check_ifname(const char *prog, const char *what, const char *name);

/*
 * Store arg into cfg as the option def (not PARAM_FLAG/PARAM_COUNTER), as the
 * command line would; prog prefixes the one error line (a tool reading its
 * own syntax, e.g. "xdp-gen: --stream 1", names where the value came from).
 */
int params_store(const char *prog, const struct param_def *def, const char *arg, void *cfg);

/* Format a value of def's type from cfg, as --help shows defaults. */
void params_format(const struct param_def *def, const void *cfg, char *buf, size_t len);

#endif
