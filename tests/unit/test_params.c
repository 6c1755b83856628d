// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>

#include "base/log.h"
#include "cli/params.h"
#include "cli/params_cmd.h"
#include "cli/params_doc.h"
#include "test.h"

static void test_count_suffixes(void)
{
	const char *why = NULL;
	__u64 v;

	ASSERT_OK(params_parse_count("64", &v, &why), "64");
	ASSERT_EQ(v, 64, "64 value");
	ASSERT_OK(params_parse_count("1k", &v, &why), "1k");
	ASSERT_EQ(v, 1000, "1k value");
	ASSERT_OK(params_parse_count("2M", &v, &why), "2M");
	ASSERT_EQ(v, 2000000, "2M value");
	ASSERT_OK(params_parse_count("1.5M", &v, &why), "1.5M");
	ASSERT_EQ(v, 1500000, "1.5M value");
	ASSERT_OK(params_parse_count("3G", &v, &why), "3G");
	ASSERT_EQ(v, 3000000000LL, "3G value");
	ASSERT_OK(params_parse_count("0", &v, &why), "0");
	ASSERT_EQ(v, 0, "0 value");
	ASSERT_OK(params_parse_count("18446744073709551615", &v, &why), "u64 max");
	ASSERT_EQ_U64(v, UINT64_MAX, "u64 max value");
}

static void test_count_errors(void)
{
	const char *why = NULL;
	__u64 v = 7;

	ASSERT_ERR(params_parse_count("", &v, &why), -EINVAL, "empty");
	ASSERT_STREQ(why, "empty value", "empty why");
	ASSERT_ERR(params_parse_count(NULL, &v, &why), -EINVAL, "null");
	ASSERT_ERR(params_parse_count("-1", &v, &why), -EINVAL, "negative");
	ASSERT_STREQ(why, "must not be negative", "negative why");
	ASSERT_ERR(params_parse_count("abc", &v, &why), -EINVAL, "letters");
	ASSERT_STREQ(why, "not a number", "letters why");
	ASSERT_ERR(params_parse_count("12x", &v, &why), -EINVAL, "bad suffix");
	ASSERT_STREQ(why, "unknown suffix", "bad suffix why");
	ASSERT_ERR(params_parse_count("1 k", &v, &why), -EINVAL, "space");
	ASSERT_ERR(params_parse_count(" 1", &v, &why), -EINVAL, "leading space");
	ASSERT_ERR(params_parse_count("18446744073709551616", &v, &why), -ERANGE, "overflow");
	ASSERT_STREQ(why, "too large", "overflow why");
	ASSERT_ERR(params_parse_count("20000000000G", &v, &why), -ERANGE, "suffix overflow");
	ASSERT_ERR(params_parse_count("1.5", &v, &why), -EINVAL, "fraction w/o suffix");
	ASSERT_STREQ(why, "fraction does not give a whole number", "fraction why");
	ASSERT_ERR(params_parse_count("1.0001k", &v, &why), -EINVAL, "fraction too fine");
	ASSERT_ERR(params_parse_count(".", &v, &why), -EINVAL, "lone dot");
	ASSERT_ERR(params_parse_count("1.1234567890123456789k", &v, &why), -EINVAL, "many places");
	ASSERT_STREQ(why, "too many decimal places", "many places why");
	ASSERT_ERR(params_parse_count("18446744073709551615.5k", &v, &why), -ERANGE,
		   "overflow with fraction");
	ASSERT_ERR(params_parse_count("18446744073709551.9999k", &v, &why), -EINVAL,
		   "fraction not whole");
	ASSERT_OK(params_parse_count("18446744073709551.615k", &v, &why), "max via fraction");
	ASSERT_EQ_U64(v, UINT64_MAX, "max via fraction value");
	ASSERT_ERR(params_parse_count("18446744073709551.616k", &v, &why), -ERANGE,
		   "fraction add overflow");
	v = 7;
	ASSERT_ERR(params_parse_count("9x", &v, &why), -EINVAL, "error");
	ASSERT_EQ(v, 7, "value untouched on error");
}

static void test_uint(void)
{
	const char *why = NULL;
	__u64 v;

	ASSERT_OK(params_parse_uint("4096", &v, &why), "4096");
	ASSERT_EQ(v, 4096, "4096 value");
	ASSERT_ERR(params_parse_uint("4k", &v, &why), -EINVAL, "no suffixes");
	ASSERT_ERR(params_parse_uint("1.5", &v, &why), -EINVAL, "no fraction");
	ASSERT_STREQ(why, "must be a whole number", "fraction why");
	ASSERT_ERR(params_parse_uint("99999999999999999999", &v, &why), -ERANGE, "overflow");
}

static void test_rate(void)
{
	const char *why = NULL;
	__u64 v;

	ASSERT_OK(params_parse_rate("10Mpps", &v, &why), "10Mpps");
	ASSERT_EQ(v, 10000000, "10Mpps value");
	ASSERT_OK(params_parse_rate("100000", &v, &why), "plain");
	ASSERT_EQ(v, 100000, "plain value");
	ASSERT_OK(params_parse_rate("500pps", &v, &why), "pps");
	ASSERT_EQ(v, 500, "pps value");
	ASSERT_OK(params_parse_rate("2.5kpps", &v, &why), "2.5kpps");
	ASSERT_EQ(v, 2500, "2.5kpps value");
	ASSERT_ERR(params_parse_rate("10Mbps", &v, &why), -EINVAL, "bits are not packets");
	ASSERT_ERR(params_parse_rate("fast", &v, &why), -EINVAL, "word");
}

static void test_bytes(void)
{
	const char *why = NULL;
	__u64 v;

	ASSERT_OK(params_parse_bytes("64", &v, &why), "64");
	ASSERT_EQ(v, 64, "64 value");
	ASSERT_OK(params_parse_bytes("1k", &v, &why), "1k");
	ASSERT_EQ(v, 1024, "1k value");
	ASSERT_OK(params_parse_bytes("64M", &v, &why), "64M");
	ASSERT_EQ(v, 64 << 20, "64M value");
	ASSERT_OK(params_parse_bytes("2GiB", &v, &why), "2GiB");
	ASSERT_EQ(v, 2ULL << 30, "2GiB value");
	ASSERT_OK(params_parse_bytes("1500B", &v, &why), "1500B");
	ASSERT_EQ(v, 1500, "1500B value");
	ASSERT_OK(params_parse_bytes("0.5k", &v, &why), "0.5k");
	ASSERT_EQ(v, 512, "0.5k value");
	ASSERT_ERR(params_parse_bytes("1T", &v, &why), -EINVAL, "T not a byte suffix");
	ASSERT_ERR(params_parse_bytes("17179869184G", &v, &why), -ERANGE, "overflow");
}

static void test_duration(void)
{
	const char *why = NULL;
	__u64 v;

	ASSERT_OK(params_parse_duration("5", &v, &why), "bare");
	ASSERT_EQ(v, 5000000000LL, "bare is seconds");
	ASSERT_OK(params_parse_duration("5s", &v, &why), "5s");
	ASSERT_EQ(v, 5000000000LL, "5s value");
	ASSERT_OK(params_parse_duration("500ms", &v, &why), "500ms");
	ASSERT_EQ(v, 500000000, "500ms value");
	ASSERT_OK(params_parse_duration("20us", &v, &why), "20us");
	ASSERT_EQ(v, 20000, "20us value");
	ASSERT_OK(params_parse_duration("7ns", &v, &why), "7ns");
	ASSERT_EQ(v, 7, "7ns value");
	ASSERT_OK(params_parse_duration("2m", &v, &why), "2m");
	ASSERT_EQ(v, 120000000000LL, "2m value");
	ASSERT_OK(params_parse_duration("1h", &v, &why), "1h");
	ASSERT_EQ(v, 3600000000000LL, "1h value");
	ASSERT_OK(params_parse_duration("1.5s", &v, &why), "1.5s");
	ASSERT_EQ(v, 1500000000, "1.5s value");
	ASSERT_OK(params_parse_duration("0.25", &v, &why), "0.25");
	ASSERT_EQ(v, 250000000, "0.25 value");
	ASSERT_ERR(params_parse_duration("5sec", &v, &why), -EINVAL, "5sec");
	ASSERT_ERR(params_parse_duration("1.5ns", &v, &why), -EINVAL, "half ns");
	ASSERT_ERR(params_parse_duration("99999999999h", &v, &why), -ERANGE, "overflow");
	ASSERT_ERR(params_parse_duration("-5s", &v, &why), -EINVAL, "negative");
}

static void test_list(void)
{
	struct param_list l;
	const char *why = NULL;

	ASSERT_OK(params_parse_list("all", 63, &l, &why), "all");
	ASSERT_TRUE(l.all, "all flag");
	ASSERT_OK(params_parse_list("0,2-4,7", 63, &l, &why), "mixed");
	ASSERT_FALSE(l.all, "not all");
	ASSERT_EQ(l.n, 5, "count");
	ASSERT_EQ(l.ids[0], 0, "id0");
	ASSERT_EQ(l.ids[1], 2, "id1");
	ASSERT_EQ(l.ids[3], 4, "id3");
	ASSERT_EQ(l.ids[4], 7, "id4");
	ASSERT_OK(params_parse_list("3", 3, &l, &why), "single at max");
	ASSERT_EQ(l.n, 1, "single count");
	ASSERT_ERR(params_parse_list("", 63, &l, &why), -EINVAL, "empty");
	ASSERT_ERR(params_parse_list("4", 3, &l, &why), -ERANGE, "above max");
	ASSERT_STREQ(why, "number out of range", "above max why");
	ASSERT_ERR(params_parse_list("3-1", 63, &l, &why), -EINVAL, "reversed");
	ASSERT_STREQ(why, "range start is above its end", "reversed why");
	ASSERT_ERR(params_parse_list("1,1", 63, &l, &why), -EINVAL, "duplicate");
	ASSERT_STREQ(why, "a number appears twice", "duplicate why");
	ASSERT_ERR(params_parse_list("1,", 63, &l, &why), -EINVAL, "trailing comma");
	ASSERT_ERR(params_parse_list("1;2", 63, &l, &why), -EINVAL, "bad separator");
	ASSERT_STREQ(why, "expected ',' or '-'", "bad separator why");
	ASSERT_ERR(params_parse_list("a", 63, &l, &why), -EINVAL, "letter");
	ASSERT_ERR(params_parse_list("0-300", 4095, &l, &why), -ERANGE, "too many");
	ASSERT_STREQ(why, "too many entries", "too many why");
}

/* A small command table exercised end to end through getopt_long. */
struct cfg {
	__u64 count, batch, duration, rate, size;
	bool force;
	int verbose, mode;
	const char *to;
	struct param_list queues;
};

static const struct param_enum modes[] = { { .name = "native", .value = 1 },
					   { .name = "skb", .value = 2 },
					   {} };

static const struct param_def defs[] = {
	PARAM_OPT("count", PARAM_COUNT, offsetof(struct cfg, count), .short_opt = 'n',
		  .metavar = "PACKETS", .help = "stop after", .min = 1),
	PARAM_OPT("batch", PARAM_UINT, offsetof(struct cfg, batch), .metavar = "N", .help = "batch",
		  .min = 1, .max = 256),
	PARAM_OPT("duration", PARAM_DURATION, offsetof(struct cfg, duration), .short_opt = 'd',
		  .metavar = "TIME", .help = "run"),
	PARAM_OPT("rate", PARAM_RATE, offsetof(struct cfg, rate), .short_opt = 'r',
		  .metavar = "PPS", .help = "rate"),
	PARAM_OPT("size", PARAM_BYTES, offsetof(struct cfg, size), .short_opt = 's',
		  .metavar = "BYTES", .help = "size", .min = 60, .max = 9000),
	PARAM_OPT("force", PARAM_FLAG, offsetof(struct cfg, force), .help = "replace"),
	PARAM_OPT("verbose", PARAM_COUNTER, offsetof(struct cfg, verbose), .short_opt = 'v',
		  .help = "more"),
	PARAM_OPT("xdp-mode", PARAM_ENUM, offsetof(struct cfg, mode), .short_opt = 'm',
		  .metavar = "MODE", .help = "mode", .enums = modes),
	PARAM_OPT("to", PARAM_IFNAME, offsetof(struct cfg, to), .metavar = "IFNAME",
		  .help = "target"),
	PARAM_OPT("queues", PARAM_LIST, offsetof(struct cfg, queues), .metavar = "LIST",
		  .help = "queues", .max = 63),
	{},
};

static const struct param_cmd cmd = {
	.name = "drop",
	.summary = "drop everything",
	.positional = "IFNAME",
	.tables = { defs, NULL },
};

static int parse(struct cfg *c, const char **pos, int argc, char **argv)
{
	static const struct cfg defaults = { .batch = 64, .size = 60, .mode = 1 };
	FILE *devnull = fopen("/dev/null", "w");
	FILE *saved = stderr;
	int err;

	*c = defaults;
	/* Parse errors go to stderr: keep the test output to one line per test. */
	stderr = devnull;
	err = params_parse("prog", &cmd, argc, argv, c, pos);
	stderr = saved;
	fclose(devnull);
	return err;
}

#define ARGV(...)                         \
	(char *[])                        \
	{                                 \
		"drop", __VA_ARGS__, NULL \
	}
#define ARGC(...) (int)(sizeof((char *[]){ "drop", __VA_ARGS__ }) / sizeof(char *))

static void test_parse_table(void)
{
	const char *pos;
	struct cfg c;

	ASSERT_OK(parse(&c, &pos,
			ARGC("-n", "1M", "--batch", "32", "-d", "500ms", "-r", "10Mpps", "--force",
			     "-vv", "-m", "skb", "--to", "veth1", "--queues", "0-1", "-s", "1k",
			     "eth0"),
			ARGV("-n", "1M", "--batch", "32", "-d", "500ms", "-r", "10Mpps", "--force",
			     "-vv", "-m", "skb", "--to", "veth1", "--queues", "0-1", "-s", "1k",
			     "eth0")),
		  "full parse");
	ASSERT_EQ(c.count, 1000000, "count");
	ASSERT_EQ(c.batch, 32, "batch");
	ASSERT_EQ(c.duration, 500000000, "duration");
	ASSERT_EQ(c.rate, 10000000, "rate");
	ASSERT_TRUE(c.force, "force");
	ASSERT_EQ(c.verbose, 2, "verbose counted");
	ASSERT_EQ(c.mode, 2, "enum");
	ASSERT_STREQ(c.to, "veth1", "string");
	ASSERT_EQ(c.queues.n, 2, "list");
	ASSERT_EQ(c.size, 1024, "bytes");
	ASSERT_STREQ(pos, "eth0", "positional");

	ASSERT_OK(parse(&c, &pos, ARGC("eth0"), ARGV("eth0")), "defaults");
	ASSERT_EQ(c.batch, 64, "default kept");
	ASSERT_EQ(c.mode, 1, "default enum kept");
}

/* --help and --version are reported to the caller; parsing itself prints nothing. */
static void test_help_is_reported(void)
{
	static const struct cfg defaults = { .batch = 64, .size = 60, .mode = 1 };
	FILE *out = tmpfile(), *saved = stdout;
	const char *pos;
	struct cfg c;
	char buf[4096];
	size_t n;

	ASSERT_TRUE(out != NULL, "tmpfile");
	stdout = out;
	ASSERT_EQ(parse(&c, &pos, ARGC("-n", "5", "--help"), ARGV("-n", "5", "--help")),
		  PARAMS_HELP, "--help reported");
	ASSERT_EQ(parse(&c, &pos, ARGC("--version"), ARGV("--version")), PARAMS_VERSION,
		  "--version reported");
	ASSERT_EQ(ftell(out), 0, "params_parse printed nothing");
	/* params_command() answers them: usage or version on stdout, exit code 0. */
	c = defaults;
	ASSERT_EQ(params_command("prog", &cmd, ARGC("--help"), ARGV("--help"), &c, &defaults, &pos),
		  0, "help exits 0");
	ASSERT_EQ(params_command("prog", &cmd, ARGC("eth0"), ARGV("eth0"), &c, &defaults, &pos), -1,
		  "a run goes on");
	stdout = saved;
	rewind(out);
	n = fread(buf, 1, sizeof(buf) - 1, out);
	buf[n] = '\0';
	fclose(out);
	ASSERT_TRUE(strstr(buf, "Usage: prog drop") != NULL, "usage printed by params_command");
	ASSERT_TRUE(strstr(buf, "--batch") != NULL, "usage lists the options");
}

static void test_parse_errors(void)
{
	const char *pos;
	struct cfg c;

	ASSERT_ERR(parse(&c, &pos, ARGC("--batch", "0", "eth0"), ARGV("--batch", "0", "eth0")),
		   -EINVAL, "below min");
	ASSERT_ERR(parse(&c, &pos, ARGC("--batch", "257", "eth0"), ARGV("--batch", "257", "eth0")),
		   -EINVAL, "above max");
	ASSERT_ERR(parse(&c, &pos, ARGC("-n", "0", "eth0"), ARGV("-n", "0", "eth0")), -EINVAL,
		   "count min");
	ASSERT_ERR(parse(&c, &pos, ARGC("-n", "x", "eth0"), ARGV("-n", "x", "eth0")), -EINVAL,
		   "malformed");
	ASSERT_ERR(parse(&c, &pos, ARGC("-s", "59", "eth0"), ARGV("-s", "59", "eth0")), -EINVAL,
		   "size min");
	ASSERT_ERR(parse(&c, &pos, ARGC("-m", "hw", "eth0"), ARGV("-m", "hw", "eth0")), -EINVAL,
		   "enum unknown");
	ASSERT_ERR(parse(&c, &pos, ARGC("--to", "", "eth0"), ARGV("--to", "", "eth0")), -EINVAL,
		   "empty string");
	ASSERT_ERR(parse(&c, &pos, ARGC("--queues", "9-2", "eth0"),
			 ARGV("--queues", "9-2", "eth0")),
		   -EINVAL, "bad list");
	ASSERT_ERR(parse(&c, &pos, ARGC("--bogus", "eth0"), ARGV("--bogus", "eth0")), -EINVAL,
		   "unknown long");
	ASSERT_ERR(parse(&c, &pos, ARGC("-Z", "eth0"), ARGV("-Z", "eth0")), -EINVAL,
		   "unknown short");
	ASSERT_ERR(parse(&c, &pos, ARGC("eth0", "-n"), ARGV("eth0", "-n")), -EINVAL,
		   "missing value");
	ASSERT_ERR(parse(&c, &pos, ARGC("--force"), ARGV("--force")), -EINVAL,
		   "missing positional");
	ASSERT_ERR(parse(&c, &pos, ARGC("eth0", "eth1"), ARGV("eth0", "eth1")), -EINVAL,
		   "extra positional");
	ASSERT_ERR(parse(&c, &pos, ARGC("-d", "5sec", "eth0"), ARGV("-d", "5sec", "eth0")), -EINVAL,
		   "bad duration");
}

/* What a bad option says: the option by its name, never getopt's internal code. */
static void test_error_names_the_option(void)
{
	FILE *err = tmpfile(), *saved = stderr;
	const char *pos;
	struct cfg c;
	char buf[1024];
	size_t n;
	int rc;

	ASSERT_TRUE(err != NULL, "tmpfile");
	c = (struct cfg){ .batch = 64, .size = 60, .mode = 1 };
	stderr = err;
	rc = params_parse("prog", &cmd, ARGC("--force=1", "eth0"), ARGV("--force=1", "eth0"), &c,
			  &pos);
	stderr = saved;
	ASSERT_EQ(rc, -EINVAL, "a flag given a value");
	rewind(err);
	n = fread(buf, 1, sizeof(buf) - 1, err);
	buf[n] = '\0';
	fclose(err);
	ASSERT_TRUE(strstr(buf, "option '--force' takes no value") != NULL, buf);
}

static void test_help_and_format(void)
{
	static const struct cfg defaults = {
		.batch = 64, .size = 4096, .mode = 2, .duration = 1500000000
	};
	char *buf = NULL, out[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	params_usage(f, "prog", &cmd, &defaults);
	fclose(f);
	ASSERT_TRUE(strstr(buf, "Usage: prog drop [OPTIONS] IFNAME") != NULL, "usage line");
	ASSERT_TRUE(strstr(buf, "--batch N") != NULL, "option with metavar");
	ASSERT_TRUE(strstr(buf, "(default 64)") != NULL, "default shown");
	ASSERT_TRUE(strstr(buf, "-v, --verbose") != NULL, "short and long");
	ASSERT_TRUE(strstr(buf, "(default skb)") != NULL, "enum default");
	free(buf);

	params_format(&defs[4], &defaults, out, sizeof(out));
	ASSERT_STREQ(out, "4k", "bytes format");
	params_format(&defs[2], &defaults, out, sizeof(out));
	ASSERT_STREQ(out, "1500ms", "duration format");
}

static void test_log_levels(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	log_set_stream(f);
	log_set_prog("/usr/sbin/xdp-sink");
	log_set_level(LOG_LEVEL_INFO);
	pr_warn("w%d\n", 1);
	pr_info("i%d\n", 2);
	pr_debug("d%d\n", 3);
	fflush(f);
	ASSERT_STREQ(buf, "xdp-sink: w1\ni2\n", "info level shows warn+info");
	log_set_level(LOG_LEVEL_WARN);
	pr_info("hidden\n");
	log_set_level(LOG_LEVEL_DEBUG);
	pr_debug("d\n");
	fclose(f);
	log_set_stream(NULL);
	ASSERT_STREQ(buf, "xdp-sink: w1\ni2\nd\n", "quiet hides info, verbose shows debug");
	free(buf);

	/* libbpf's warnings become our info, its info our debug, its debug trace. */
	ASSERT_EQ(log_level_from_libbpf(0), LOG_LEVEL_INFO, "libbpf warn");
	ASSERT_EQ(log_level_from_libbpf(1), LOG_LEVEL_DEBUG, "libbpf info");
	ASSERT_EQ(log_level_from_libbpf(2), LOG_LEVEL_TRACE, "libbpf debug");
}

/* Interface names are never cut to IFNAMSIZ - 1: a longer name is refused. */
static void test_ifname_length(void)
{
	const char *pos;
	struct cfg c;

	ASSERT_OK(parse(&c, &pos, ARGC("abcdefghijklmno"), ARGV("abcdefghijklmno")),
		  "15 characters");
	ASSERT_STREQ(pos, "abcdefghijklmno", "positional kept whole");
	ASSERT_ERR(parse(&c, &pos, ARGC("abcdefghijklmnop"), ARGV("abcdefghijklmnop")), -EINVAL,
		   "16 characters");
	ASSERT_ERR(parse(&c, &pos, ARGC("abcdefghijklmnopqrstuvwxyz"),
			 ARGV("abcdefghijklmnopqrstuvwxyz")),
		   -EINVAL, "26 characters");
	ASSERT_ERR(parse(&c, &pos, ARGC("--to", "abcdefghijklmnop", "eth0"),
			 ARGV("--to", "abcdefghijklmnop", "eth0")),
		   -EINVAL, "--to with 16 characters");
	ASSERT_OK(parse(&c, &pos, ARGC("--to", "abcdefghijklmno", "eth0"),
			ARGV("--to", "abcdefghijklmno", "eth0")),
		  "--to with 15 characters");
	ASSERT_OK(params_check_ifname("prog", "name", "lo"), "short");
	ASSERT_ERR(params_check_ifname("prog", "name", "0123456789abcdef"), -EINVAL, "16");
}

/* A repeatable string option keeps every value, in order, up to its limit. */
struct scfg {
	struct param_strings labels;
};

static const struct param_def sdefs[] = {
	PARAM_OPT("label", PARAM_STRINGS, offsetof(struct scfg, labels), .short_opt = 'l',
		  .metavar = "KEY=VALUE", .help = "label"),
	{},
};

static const struct param_cmd scmd = { .name = "x", .positional = NULL, .tables = { sdefs } };

static void test_strings(void)
{
	char *argv[PARAM_STRINGS_MAX + 3] = { "x", "-l", "a=1", "--label", "b=2" };
	static const struct scfg defaults;
	FILE *devnull = fopen("/dev/null", "w"), *saved = stderr;
	struct scfg c = defaults;
	const char *pos;
	char buf[64];
	int i;

	ASSERT_OK(params_parse("prog", &scmd, 5, argv, &c, &pos), "two values");
	ASSERT_EQ(c.labels.n, 2, "both kept");
	ASSERT_STREQ(c.labels.v[0], "a=1", "first");
	ASSERT_STREQ(c.labels.v[1], "b=2", "second");
	params_format(&sdefs[0], &c, buf, sizeof(buf));
	ASSERT_STREQ(buf, "a=1,b=2", "formatted");
	for (i = 1; i <= PARAM_STRINGS_MAX + 1; i++)
		argv[i] = "--label=k=v";
	c = defaults;
	stderr = devnull;
	ASSERT_ERR(params_parse("prog", &scmd, PARAM_STRINGS_MAX + 2, argv, &c, &pos), -EINVAL,
		   "one too many");
	c = defaults;
	argv[1] = "--label=";
	ASSERT_ERR(params_parse("prog", &scmd, 2, argv, &c, &pos), -EINVAL, "empty");
	stderr = saved;
	fclose(devnull);
}

static const struct test_case cases[] = {
	TEST_CASE(count_suffixes),
	TEST_CASE(count_errors),
	TEST_CASE(uint),
	TEST_CASE(rate),
	TEST_CASE(bytes),
	TEST_CASE(duration),
	TEST_CASE(list),
	TEST_CASE(parse_table),
	TEST_CASE(parse_errors),
	TEST_CASE(error_names_the_option),
	TEST_CASE(help_is_reported),
	TEST_CASE(help_and_format),
	TEST_CASE(log_levels),
	TEST_CASE(ifname_length),
	TEST_CASE(strings),
};

TEST_MAIN("params", cases)
