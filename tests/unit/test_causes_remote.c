// SPDX-License-Identifier: GPL-2.0
/*
 * --drop-causes-from: the URLs it takes and refuses, and the one family it
 * reads out of another host's OpenMetrics text (as 'xdp-sink drops' writes it).
 */
#include <stdlib.h>
#include <string.h>

#include "../../user/sink/causes_remote.h"
#include "test.h"

static void test_urls(void)
{
	struct causes_src s;
	char why[256];

	ASSERT_EQ(causes_src_parse("http://10.254.0.3:9464/metrics", &s, why, sizeof(why)), 0,
		  "address, port, path");
	ASSERT_STREQ(s.host, "10.254.0.3", "host");
	ASSERT_STREQ(s.port, "9464", "port");
	ASSERT_STREQ(s.path, "/metrics", "path");
	ASSERT_EQ(causes_src_parse("http://[fd00::3]:80", &s, why, sizeof(why)), 0, "IPv6");
	ASSERT_STREQ(s.host, "fd00::3", "IPv6 host without brackets");
	ASSERT_STREQ(s.path, "/metrics", "the default path");
	ASSERT_EQ(causes_src_parse("http://dut.lab/x?y", &s, why, sizeof(why)), 0, "a name");
	ASSERT_STREQ(s.port, "80", "the default port");
	ASSERT_STREQ(s.path, "/x?y", "path and query as given");
	ASSERT_EQ(causes_src_parse("https://h:1/", &s, why, sizeof(why)), -EINVAL, "https");
	ASSERT_TRUE(strstr(why, "http://ADDR:PORT/metrics") != NULL, "the fix is named");
	ASSERT_EQ(causes_src_parse("http://:80/", &s, why, sizeof(why)), -EINVAL, "no host");
	ASSERT_EQ(causes_src_parse("http://h:0/", &s, why, sizeof(why)), -EINVAL, "port 0");
	ASSERT_EQ(causes_src_parse("http://h:65536/", &s, why, sizeof(why)), -EINVAL, "port");
	ASSERT_EQ(causes_src_parse("http://h:8x/", &s, why, sizeof(why)), -EINVAL, "not a port");
	ASSERT_EQ(causes_src_parse("http://[::1/", &s, why, sizeof(why)), -EINVAL, "no ']'");
}

static const char TEXT[] =
	"# TYPE xdp_sink_dropped_by_cause_total counter\n"
	"# HELP xdp_sink_dropped_by_cause_total Drops.\n"
	"xdp_sink_dropped_by_cause_total{tool=\"xdp-sink\",mode=\"drops\",kind=\"run\","
	"run=\"0a0b0c0d\",reason=\"QDISC_DROP\",device=\"lab-ds\",netns=\"\"} 11304\n"
	"xdp_sink_dropped_by_cause_total{kind=\"mark\",run=\"0a0b0c0d\",reason=\"QDISC_DROP\","
	"device=\"lab-ds\",netns=\"lab-dut\"} 4\n"
	"xdp_sink_dropped_by_cause_total{kind=\"unidentified\",run=\"00000000\",reason=\"a \\\"q\\\" b\","
	"device=\"x\",netns=\"4026532\"} 7\n"
	"xdp_sink_dropped_by_cause_created{kind=\"run\",run=\"0a0b0c0d\"} 1.7e9\n"
	"xdp_sink_other_total{kind=\"run\"} 9\n"
	"# EOF\n";

static void test_parse(void)
{
	struct remote_cause *v;
	size_t n;

	if (!ASSERT_EQ(causes_parse_metrics(TEXT, sizeof(TEXT) - 1, &v, &n), 0, "parsed"))
		return;
	if (!ASSERT_EQ(n, 3, "the family's three samples, nothing else"))
		goto out;
	ASSERT_STREQ(v[0].kind, "run", "kind");
	ASSERT_EQ(v[0].run, 0x0a0b0c0d, "run id, hex");
	ASSERT_STREQ(v[0].reason, "QDISC_DROP", "reason");
	ASSERT_STREQ(v[0].dev, "lab-ds", "device");
	ASSERT_STREQ(v[0].netns, "", "netns: its own");
	ASSERT_EQ_U64(v[0].packets, 11304, "packets");
	ASSERT_STREQ(v[1].kind, "mark", "a mark");
	ASSERT_STREQ(v[1].netns, "lab-dut", "a named namespace");
	ASSERT_STREQ(v[2].reason, "a \"q\" b", "escapes undone");
	ASSERT_EQ_U64(v[2].packets, 7, "packets after an escaped label");
out:
	free(v);
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"xdp_sink_dropped_by_cause_total{kind=\"run\",run=\"1\"} x\n",
		"xdp_sink_dropped_by_cause_total{kind=\"run\",run=\"1\"}\n",
		"xdp_sink_dropped_by_cause_total{kind=\"run\",run=\"1} 5\n",
		"xdp_sink_dropped_by_cause_total{run=\"1\"} 5\n",
	};
	struct remote_cause *v;
	unsigned int i;
	size_t n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(causes_parse_metrics(bad[i], strlen(bad[i]), &v, &n), -EINVAL, bad[i]);
		ASSERT_TRUE(v == NULL && n == 0, "nothing kept");
	}
	ASSERT_EQ(causes_parse_metrics("", 0, &v, &n), 0, "an empty text");
	ASSERT_EQ(n, 0, "no counts");
	free(v);
}

static const struct test_case cases[] = {
	TEST_CASE(urls),
	TEST_CASE(parse),
	TEST_CASE(refused),
};

TEST_MAIN("causes_remote", cases)
