// SPDX-License-Identifier: GPL-2.0
/*
 * The OpenMetrics writer: label values escaped, --metrics-label checked,
 * histogram buckets cumulative and never claiming a value faster than it was,
 * a published exposition that ends with "# EOF" in the file and for the
 * HTTP server alike, a file that cannot be written said once (not every
 * interval), and a publish that never waits for the storage.
 */
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "report/metrics.h"
#include "test.h"

/*
 * Storage that stalls: while gated, this program's rename() (which the
 * library's calls resolve to) waits for the test to open the gate, at most
 * 10 s so that a publish that waits for it ends the test instead of hanging.
 */
static bool rename_gated;
static bool rename_timed_out;
static sem_t rename_gate;

int rename(const char *from, const char *to)
{
	struct timespec ts;

	if (__atomic_load_n(&rename_gated, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 10;
		if (sem_timedwait(&rename_gate, &ts))
			__atomic_store_n(&rename_timed_out, true, __ATOMIC_RELEASE);
	}
	return renameat(AT_FDCWD, from, AT_FDCWD, to);
}

static void test_escape(void)
{
	char buf[64];

	ASSERT_TRUE(metrics_escape("plain", buf, sizeof(buf)), "plain fits");
	ASSERT_STREQ(buf, "plain", "plain unchanged");
	ASSERT_TRUE(metrics_escape("a\"b\\c\nd", buf, sizeof(buf)), "specials fit");
	ASSERT_STREQ(buf, "a\\\"b\\\\c\\\\x0ad",
		     "quote and backslash escaped; a newline by the names' rule, its \\ escaped");
	ASSERT_TRUE(metrics_escape("ev\377\xc3\xa9", buf, sizeof(buf)), "not UTF-8 fits");
	ASSERT_STREQ(buf, "ev\\\\xff\xc3\xa9", "a byte that is not UTF-8 as \\xff, UTF-8 kept");
	ASSERT_FALSE(metrics_escape("abcd", buf, 4), "no room for the terminator");
	ASSERT_FALSE(metrics_escape("ab\"", buf, 4), "no room for an escape");
	ASSERT_TRUE(metrics_escape("ab", buf, 3), "exactly fits");
}

static void test_label_check(void)
{
	const char *why = NULL;

	ASSERT_OK(metrics_label_check("host=a", &why), "simple");
	ASSERT_OK(metrics_label_check("_x9=", &why), "underscore first, empty value");
	ASSERT_OK(metrics_label_check("dc=a=b", &why), "'=' in the value");
	ASSERT_ERR(metrics_label_check("host", &why), -EINVAL, "no '='");
	ASSERT_ERR(metrics_label_check("=a", &why), -EINVAL, "empty name");
	ASSERT_ERR(metrics_label_check("9host=a", &why), -EINVAL, "digit first");
	ASSERT_ERR(metrics_label_check("ho-st=a", &why), -EINVAL, "dash");
	ASSERT_ERR(metrics_label_check("__name__=a", &why), -EINVAL, "reserved prefix");
	ASSERT_ERR(metrics_label_check("queue=1", &why), -EINVAL, "built-in label");
	ASSERT_ERR(metrics_label_check("device=x", &why), -EINVAL, "built-in label");
	ASSERT_ERR(metrics_label_check("interface=x", &why), -EINVAL, "device's old name");
	ASSERT_OK(metrics_label_check("queues=1", &why), "a built-in's prefix is fine");
}

/* The value of the row whose text starts with 'head', or -1. */
static long long row(const char *text, const char *head)
{
	const char *p = strstr(text, head);

	return p ? strtoll(p + strlen(head), NULL, 10) : -1;
}

static char *render_hist(const struct hist *h)
{
	struct metrics_w w = { .labels = "mode=\"xsk\"" };
	char *buf = NULL;
	size_t len = 0;

	w.f = open_memstream(&buf, &len);
	if (!w.f)
		return NULL;
	metrics_family(&w, "lat_seconds", "histogram", "seconds", "test");
	metrics_hist_seconds(&w, "lat_seconds", "run", "r1", h);
	fclose(w.f);
	return buf;
}

static void test_histogram(void)
{
	struct hist h;
	char *t;
	int i;

	hist_init(&h);
	for (i = 0; i < 3; i++)
		hist_record(&h, 500); /* 0.5 us */
	/* On the first bound, but in a bucket (1000-1007 ns) that reaches past it. */
	hist_record(&h, 1000);
	hist_record(&h, 1500);
	hist_record(&h, 3000000000ULL); /* 3 s */
	hist_record(&h, 1ULL << 43); /* beyond the histogram's range */
	t = render_hist(&h);
	if (!ASSERT_TRUE(t, "rendered"))
		return;
	ASSERT_TRUE(strstr(t, "# TYPE lat_seconds histogram\n# UNIT lat_seconds seconds\n"),
		    "family lines");
	ASSERT_EQ(row(t, "lat_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"1e-06\"} "), 3,
		  "le 1us holds the values certainly at or below it");
	ASSERT_EQ(row(t, "lat_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"2.5e-06\"} "), 5,
		  "le 2.5us, cumulative");
	ASSERT_EQ(row(t, "lat_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"2.5\"} "), 5,
		  "3 s is above 2.5 s");
	ASSERT_EQ(row(t, "lat_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"5\"} "), 6,
		  "3 s is below 5 s");
	ASSERT_EQ(row(t, "lat_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"10\"} "), 6,
		  "the overflow is not below the last bound");
	ASSERT_EQ(row(t, "lat_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"+Inf\"} "), 7,
		  "+Inf is the count");
	ASSERT_EQ(row(t, "lat_seconds_count{mode=\"xsk\",run=\"r1\"} "), 7, "count");
	ASSERT_TRUE(strstr(t, "lat_seconds_sum{mode=\"xsk\",run=\"r1\"} 8799.093026208\n"),
		    "exact sum in seconds");
	free(t);
}

static void test_histogram_monotonic(void)
{
	long long prev = 0, v;
	struct hist h;
	char head[160], *t;
	unsigned int b;
	__u64 x;

	hist_init(&h);
	for (x = 1; x < 20000000000ULL; x = x * 3 + 7)
		hist_record(&h, x);
	t = render_hist(&h);
	if (!ASSERT_TRUE(t, "rendered"))
		return;
	for (b = 0; b < metrics_hist_nbounds; b++) {
		snprintf(head, sizeof(head),
			 "lat_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"%g\"} ",
			 (double)metrics_hist_bounds_ns[b] / 1e9);
		v = row(t, head);
		ASSERT_GE(v, prev, head);
		prev = v;
	}
	ASSERT_LE(prev, (long long)h.count, "no bound above the count");
	free(t);
}

/*
 * The live histogram: a value at a bound counts at that bound (le is
 * inclusive), one just above it at the next; rows are cumulative, the sum
 * exact; merging two is recording both into one.
 */
static void test_coarse_histogram(void)
{
	struct metrics_w w = { .labels = "mode=\"xsk\"" };
	struct hist_coarse a = { 0 }, b = { 0 };
	char *t = NULL;
	size_t len = 0;

	ASSERT_EQ(metrics_hist_nbounds, HIST_COARSE_BOUNDS, "one set of bounds");
	hist_coarse_record(&a, 0);
	hist_coarse_record(&a, 1000); /* at 1 us */
	hist_coarse_record(&a, 1001); /* just above */
	hist_coarse_record(&b, 50000);
	hist_coarse_record(&b, 20000000000ULL); /* above 10 s */
	hist_coarse_merge(&a, &b);
	w.f = open_memstream(&t, &len);
	if (!ASSERT_TRUE(w.f, "stream"))
		return;
	metrics_hist_coarse_seconds(&w, "q_seconds", "queue", "0", &a);
	fclose(w.f);
	ASSERT_EQ(row(t, "q_seconds_bucket{mode=\"xsk\",queue=\"0\",le=\"1e-06\"} "), 2,
		  "0 and 1 us at or below 1 us");
	ASSERT_EQ(row(t, "q_seconds_bucket{mode=\"xsk\",queue=\"0\",le=\"2.5e-06\"} "), 3,
		  "1.001 us at the next bound");
	ASSERT_EQ(row(t, "q_seconds_bucket{mode=\"xsk\",queue=\"0\",le=\"5e-05\"} "), 4,
		  "50 us at its bound, merged");
	ASSERT_EQ(row(t, "q_seconds_bucket{mode=\"xsk\",queue=\"0\",le=\"10\"} "), 4,
		  "20 s is above the last bound");
	ASSERT_EQ(row(t, "q_seconds_bucket{mode=\"xsk\",queue=\"0\",le=\"+Inf\"} "), 5,
		  "+Inf is the count");
	ASSERT_TRUE(strstr(t, "q_seconds_sum{mode=\"xsk\",queue=\"0\"} 20.000052001\n"),
		    "exact sum in seconds");
	free(t);
}

/* A histogram already in buckets (loss episodes' outages): cumulative rows, +Inf, sum, count. */
static void test_buckets_histogram(void)
{
	static const __u64 bounds[] = { 1000000ULL, 50000000ULL, 1000000000ULL };
	static const __u64 counts[] = { 2, 0, 1, 3 }; /* the last: above 1 s */
	struct metrics_w w = { .labels = "mode=\"xsk\"" };
	char *t = NULL;
	size_t len = 0;

	w.f = open_memstream(&t, &len);
	if (!ASSERT_TRUE(w.f, "stream"))
		return;
	metrics_buckets_seconds(&w, "o_seconds", "run", "r1", bounds, counts, 3, 7050000001ULL);
	fclose(w.f);
	ASSERT_EQ(row(t, "o_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"0.001\"} "), 2, "le 1 ms");
	ASSERT_EQ(row(t, "o_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"0.05\"} "), 2,
		  "le 50 ms, cumulative");
	ASSERT_EQ(row(t, "o_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"1\"} "), 3, "le 1 s");
	ASSERT_EQ(row(t, "o_seconds_bucket{mode=\"xsk\",run=\"r1\",le=\"+Inf\"} "), 6,
		  "+Inf: all of them");
	ASSERT_EQ(row(t, "o_seconds_count{mode=\"xsk\",run=\"r1\"} "), 6, "count");
	ASSERT_TRUE(strstr(t, "o_seconds_sum{mode=\"xsk\",run=\"r1\"} 7.050000001\n"),
		    "exact sum in seconds");
	free(t);
}

static void test_publish_file(void)
{
	char dir[] = "/tmp/xdpsg-metrics.XXXXXX", path[96], text[4096];
	struct metrics_cli cli = { 0 };
	struct metrics_opts o = {
		.tool = "xdp-test", .mode = "drop", .ifname = "v\"0", .cli = &cli
	};
	struct metrics *m = NULL;
	struct metrics_w w;
	size_t n = 0, len = 0;
	char *pub;
	FILE *f;

	if (!ASSERT_TRUE(mkdtemp(dir), "temp dir"))
		return;
	snprintf(path, sizeof(path), "%s/x.prom", dir);
	cli.file = path;
	cli.labels.v[cli.labels.n++] = "host=h\\1";
	if (!ASSERT_OK(metrics__create(&o, &m), "create") || !ASSERT_TRUE(m, "made"))
		goto out;
	ASSERT_TRUE(access(path, F_OK) != 0, "nothing written before a publish");
	ASSERT_OK(metrics_begin(m, &w), "begin");
	metrics_family(&w, "x_total", "counter", NULL, "a test");
	metrics_u64_at(&w, "x_total", "queue", 3, 42);
	metrics_publish(m, &w);
	ASSERT_OK(metrics_file_wait(m), "the writer wrote it");
	f = fopen(path, "r");
	if (ASSERT_TRUE(f, "file written")) {
		n = fread(text, 1, sizeof(text) - 1, f);
		text[n] = '\0';
		fclose(f);
	}
	ASSERT_STREQ(text,
		     "# TYPE x_total counter\n# HELP x_total a test\n"
		     "x_total{device=\"v\\\"0\",mode=\"drop\",host=\"h\\\\1\",queue=\"3\"} 42\n"
		     "# EOF\n",
		     "the whole exposition");
	pub = metrics_published_copy(m, &len);
	ASSERT_STREQ(pub, text, "HTTP serves the same text");
	ASSERT_EQ(len, n, "its length");
	free(pub);
out:
	metrics__destroy(m);
	unlink(path);
	rmdir(dir);
}

/* One small exposition, published. */
static void publish_one(struct metrics *m, __u64 v)
{
	struct metrics_w w;

	if (!ASSERT_OK(metrics_begin(m, &w), "begin"))
		return;
	metrics_family(&w, "x_total", "counter", NULL, "a test");
	metrics_u64(&w, "x_total", NULL, NULL, v);
	metrics_publish(m, &w);
}

static int count_lines(const char *text, const char *what)
{
	int n = 0;

	for (; text && (text = strstr(text, what)); text++)
		n++;
	return n;
}

/*
 * The file's directory goes away (every write fails), comes back, goes away
 * again: one line when the writes start failing, one when they work again,
 * one at the second failure; nothing for the intervals in between.
 */
static void test_file_errors_said_once(void)
{
	char dir[] = "/tmp/xdpsg-metrics.XXXXXX", path[96], *log = NULL;
	struct metrics_cli cli = { 0 };
	struct metrics_opts o = { .tool = "xdp-test", .mode = "drop", .ifname = "v0", .cli = &cli };
	struct metrics *m = NULL;
	size_t log_len = 0;
	FILE *logf;
	int i;

	if (!ASSERT_TRUE(mkdtemp(dir), "temp dir"))
		return;
	snprintf(path, sizeof(path), "%s/x.prom", dir);
	cli.file = path;
	logf = open_memstream(&log, &log_len);
	if (!ASSERT_TRUE(logf, "log stream"))
		goto out;
	log_set_stream(logf);
	if (!ASSERT_OK(metrics__create(&o, &m), "create"))
		goto out;
	publish_one(m, 1);
	ASSERT_OK(metrics_file_wait(m), "written while the directory is there");
	unlink(path);
	rmdir(dir);
	for (i = 0; i < 5; i++) {
		publish_one(m, 2);
		ASSERT_ERR(metrics_file_wait(m), -ENOENT, "no directory: not written");
	}
	mkdir(dir, 0700);
	for (i = 0; i < 3; i++) {
		publish_one(m, 3);
		ASSERT_OK(metrics_file_wait(m), "written again");
	}
	unlink(path);
	rmdir(dir);
	for (i = 0; i < 5; i++) {
		publish_one(m, 4);
		ASSERT_ERR(metrics_file_wait(m), -ENOENT, "gone again: not written");
	}
	/* The final write fails as well: nothing new to say. */
	metrics__destroy(m);
	m = NULL;
	fflush(logf);
	ASSERT_EQ(count_lines(log, "not written"), 2, "a line at each start of failures");
	ASSERT_EQ(count_lines(log, "written again, after 5 attempts"), 1, "a line at the recovery");
	ASSERT_EQ(count_lines(log, "\n"), 3, "and no other line");
	if (test__failed)
		fprintf(stderr, "  the messages were:\n%s", log ? log : "");
out:
	log_set_stream(NULL);
	if (logf)
		fclose(logf);
	free(log);
	metrics__destroy(m);
	unlink(path);
	rmdir(dir);
}

/*
 * A publish (the interval loop's) returns while the storage has not taken
 * the file yet: the rename stalls until the test opens the gate after the
 * publish returned, and the text is in the file after that.
 */
static void test_publish_never_waits_for_storage(void)
{
	char dir[] = "/tmp/xdpsg-metrics.XXXXXX", path[96];
	struct metrics_cli cli = { 0 };
	struct metrics_opts o = { .tool = "xdp-test", .mode = "drop", .ifname = "v0", .cli = &cli };
	struct metrics *m = NULL;

	if (!ASSERT_TRUE(mkdtemp(dir), "temp dir"))
		return;
	snprintf(path, sizeof(path), "%s/x.prom", dir);
	cli.file = path;
	sem_init(&rename_gate, 0, 0);
	rename_timed_out = false;
	if (!ASSERT_OK(metrics__create(&o, &m), "create"))
		goto out;
	__atomic_store_n(&rename_gated, true, __ATOMIC_RELEASE);
	publish_one(m, 7);
	ASSERT_FALSE(__atomic_load_n(&rename_timed_out, __ATOMIC_ACQUIRE),
		     "publish returned before the stalled storage took the file");
	sem_post(&rename_gate);
	ASSERT_OK(metrics_file_wait(m), "the writer wrote it once the storage moved");
	__atomic_store_n(&rename_gated, false, __ATOMIC_RELEASE);
	ASSERT_EQ(access(path, F_OK), 0, "the file is there");
out:
	__atomic_store_n(&rename_gated, false, __ATOMIC_RELEASE);
	metrics__destroy(m);
	sem_destroy(&rename_gate);
	unlink(path);
	rmdir(dir);
}

static void test_bad_options(void)
{
	struct metrics_cli cli = { 0 };
	struct metrics_opts o = { .tool = "xdp-test", .mode = "drop", .ifname = "v0", .cli = &cli };
	struct metrics *m = NULL;

	ASSERT_OK(metrics__create(&o, &m), "nothing asked");
	ASSERT_TRUE(!m, "nothing made");
	cli.labels.v[cli.labels.n++] = "a=1";
	ASSERT_ERR(metrics__create(&o, &m), -EINVAL, "a label without an output");
	cli.file = "/nonexistent-dir/x.prom";
	ASSERT_ERR(metrics__create(&o, &m), -EINVAL, "unwritable directory");
	cli.file = "/tmp/xdpsg-metrics-test.prom";
	cli.labels.v[cli.labels.n++] = "a=2";
	ASSERT_ERR(metrics__create(&o, &m), -EINVAL, "a label given twice");
	cli.labels.n = 1;
	cli.listen = "127.0.0.1:0x50";
	ASSERT_ERR(metrics__create(&o, &m), -EINVAL, "a port that is not a number");
	ASSERT_TRUE(!m, "nothing made on failure");
}

/* The common labels of a tool on ifname, and those for a sample naming another device. */
static void common_labels_of(const char *ifname, const char *mode, char *all, char *nodev,
			     size_t len)
{
	char dir[] = "/tmp/xdpsg-metrics.XXXXXX", path[96];
	struct metrics_cli cli = { 0 };
	struct metrics_opts o = { .tool = "xdp-test", .mode = mode, .ifname = ifname, .cli = &cli };
	struct metrics *m = NULL;
	struct metrics_w w;

	all[0] = nodev[0] = '\0';
	if (!ASSERT_TRUE(mkdtemp(dir), "temp dir"))
		return;
	snprintf(path, sizeof(path), "%s/x.prom", dir);
	cli.file = path;
	cli.labels.v[cli.labels.n++] = "host=h";
	if (ASSERT_OK(metrics__create(&o, &m), "create") &&
	    ASSERT_OK(metrics_begin(m, &w), "begin")) {
		snprintf(all, len, "%s", w.labels);
		snprintf(nodev, len, "%s", w.labels_nodev);
		metrics_publish(m, &w);
	}
	metrics__destroy(m);
	unlink(path);
	rmdir(dir);
}

/*
 * node_exporter's name for a network device is device (node_network_receive_bytes_total
 * {device="eth0"}): the same label joins the two. A tool without a device (the
 * host-wide drop tracer) has none rather than an empty one, and a sample whose
 * device is the one a drop happened on gets the labels without the tool's own.
 */
static void test_device_label(void)
{
	char all[256], nodev[256];

	common_labels_of("eth0", "xsk", all, nodev, sizeof(all));
	ASSERT_STREQ(all, "device=\"eth0\",mode=\"xsk\",host=\"h\"", "the tool's device");
	ASSERT_STREQ(nodev, "mode=\"xsk\",host=\"h\"", "without it, for a drop's device");
	common_labels_of("", "drops", all, nodev, sizeof(all));
	ASSERT_STREQ(all, "mode=\"drops\",host=\"h\"", "no device: no device label");
	ASSERT_STREQ(nodev, all, "and nothing to leave off");
}

static const struct test_case cases[] = {
	TEST_CASE(escape),
	TEST_CASE(label_check),
	TEST_CASE(device_label),
	TEST_CASE(histogram),
	TEST_CASE(histogram_monotonic),
	TEST_CASE(coarse_histogram),
	TEST_CASE(buckets_histogram),
	TEST_CASE(publish_file),
	TEST_CASE(file_errors_said_once),
	TEST_CASE(publish_never_waits_for_storage),
	TEST_CASE(bad_options),
};

TEST_MAIN("metrics", cases)
