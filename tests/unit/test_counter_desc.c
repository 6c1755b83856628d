// SPDX-License-Identifier: GPL-2.0
/*
 * Counter tables (counter_desc.h): each output writes exactly the rows the
 * report's conditions allow, under the row's name, from the offset it names;
 * an object with nothing to show is left out; metric names and HELP come from
 * the table; --counters lists every row with its family, kind, unit and help.
 */
#include <stdio.h>
#include <stdlib.h>

#include "report/counter_desc.h"
#include "test.h"

struct toy {
	__u64 a, b, c, d;
};

#define HAS_X (1U << 0)
#define HAS_Y (1U << 1)

static const struct ctr_desc toy_rows[] = {
	{ "alpha", offsetof(struct toy, a), CTR_COUNTER, "packets", CTR_ALL, 0, "Always." },
	{ "beta", offsetof(struct toy, b), CTR_COUNTER, "packets", CTR_ALL, HAS_X, "With x." },
	{ "gamma", offsetof(struct toy, c), CTR_COUNTER, "packets", CTR_JSON | CTR_SIGNED,
	  HAS_X | HAS_Y, "With x and y, JSON only, signed." },
	{ "delta", offsetof(struct toy, d), CTR_GAUGE, "frames", CTR_METRIC, 0, "A level." },
};

static const struct ctr_family labelled = {
	.name = "toy",
	.json = "outer.toys",
	.metric = "toy_total",
	.label = "reason",
	.help = "Toys by reason.",
	CTR_ROWS(toy_rows),
};

static const struct ctr_family own = {
	.name = "toy_own",
	.prefix = "x_",
	CTR_ROWS(toy_rows),
};

static const struct toy vals = { .a = 1, .b = 2, .c = (__u64)-3, .d = 4 };

/* A memory stream: what is written to cap.f, as a string once closed (free() it). */
struct cap {
	FILE *f;
	char *buf;
	size_t len;
};

static FILE *cap_open(struct cap *c)
{
	c->buf = NULL;
	c->f = open_memstream(&c->buf, &c->len);
	return c->f;
}

static char *cap_close(struct cap *c)
{
	fclose(c->f);
	return c->buf;
}

static char *json_of(const struct ctr_family *f, unsigned int have)
{
	struct cap c;
	struct jw w;

	jw_begin(&w, cap_open(&c), NULL);
	ctr_json(&w, f, &vals, have);
	jw_end_obj(&w);
	return cap_close(&c);
}

static void test_json_rows_by_condition(void)
{
	char *s;

	s = json_of(&labelled, 0);
	ASSERT_STREQ(s, "{\"toys\":{\"alpha\":1}}", "no conditions: the unconditional row");
	free(s);
	s = json_of(&labelled, HAS_X);
	ASSERT_STREQ(s, "{\"toys\":{\"alpha\":1,\"beta\":2}}", "x: a row that needs only x");
	free(s);
	s = json_of(&labelled, HAS_X | HAS_Y);
	ASSERT_STREQ(s, "{\"toys\":{\"alpha\":1,\"beta\":2,\"gamma\":-3}}",
		     "x and y: all JSON rows, the signed one negative");
	free(s);
	s = json_of(&own, HAS_X);
	ASSERT_STREQ(s, "{\"alpha\":1,\"beta\":2}", "no JSON path: members of the object");
	free(s);
}

static void test_json_empty_family_left_out(void)
{
	static const struct ctr_family only_x = {
		.name = "only_x", .json = "xs", .rows = toy_rows + 1, .n = 1
	};
	char *s = json_of(&only_x, 0);

	ASSERT_STREQ(s, "{}", "no row to show: no object either");
	free(s);
}

static void test_text_and_sum(void)
{
	unsigned int n;
	struct cap c;
	char *s;

	n = ctr_text(cap_open(&c), &labelled, &vals, HAS_X | HAS_Y, ", ");
	s = cap_close(&c);
	ASSERT_STREQ(s, "alpha 1, beta 2", "text rows only, 'name value' joined by sep");
	ASSERT_EQ(n, 2, "rows printed");
	free(s);
	ASSERT_EQ_U64(ctr_sum(&labelled, &vals, 0), 1, "sum of the rows shown");
	ASSERT_EQ_U64(ctr_sum(&labelled, &vals, HAS_X), 3, "sum with x");
}

static void test_metrics_labelled(void)
{
	struct cap c;
	struct metrics_w w = { .f = cap_open(&c), .labels = "" };
	char *s;

	ctr_metrics(&w, &labelled, &vals, HAS_X);
	s = cap_close(&c);

	ASSERT_STREQ(s,
		     "# TYPE toy_total counter\n# HELP toy_total Toys by reason.\n"
		     "toy_total{reason=\"alpha\"} 1\ntoy_total{reason=\"beta\"} 2\n"
		     "toy_total{reason=\"delta\"} 4\n",
		     "one metric, a labelled sample per metric row shown (not gamma: JSON only)");
	free(s);
}

static void test_metrics_own(void)
{
	struct metrics_w w = { .labels = "" };
	struct cap c;
	char name[64];
	char *s;

	ctr_metric_name(&own, &toy_rows[0], name, sizeof(name));
	ASSERT_STREQ(name, "x_alpha_total", "a counter of its own: prefix, name, _total");
	ctr_metric_name(&own, &toy_rows[3], name, sizeof(name));
	ASSERT_STREQ(name, "x_delta", "a gauge: no _total");
	w.f = cap_open(&c);
	ctr_metric_head(&w, &own, &toy_rows[3]);
	ctr_metric_at(&w, &own, &toy_rows[3], "queue", "7", &vals);
	s = cap_close(&c);
	ASSERT_STREQ(s, "# TYPE x_delta gauge\n# HELP x_delta A level.\nx_delta{queue=\"7\"} 4\n",
		     "the row's own HELP, one sample per instance");
	free(s);
}

static void test_list(void)
{
	static const struct ctr_mode modes[] = { { "plain", 0 }, { "xy", HAS_X | HAS_Y } };
	struct cap c;
	char *s, *gamma;

	ctr_list(cap_open(&c), "toy-tool", &labelled, modes, 2, 0);
	s = cap_close(&c);
	gamma = strstr(s, "\"name\":\"gamma\"");

	ASSERT_TRUE(
		strstr(s,
		       "{\"type\":\"counter\",\"schema\":1,\"tool\":\"toy-tool\",\"family\":\"toy\","
		       "\"name\":\"alpha\",\"kind\":\"counter\",\"unit\":\"packets\","
		       "\"help\":\"Always.\",\"json\":\"outer.toys.alpha\","
		       "\"metric\":\"toy_total\",\"label\":\"reason\",\"text\":true,"
		       "\"modes\":[\"plain\",\"xy\"]}\n"),
		"a row: family, kind, unit, help, JSON path, metric, label, modes");
	ASSERT_TRUE(gamma && strstr(gamma, "\"metric\":\"\",\"label\":\"\",\"text\":false,"
					   "\"modes\":[\"xy\"]}"),
		    "a JSON-only row, in the modes that meet its conditions");
	ASSERT_TRUE(strstr(s, "\"name\":\"delta\",\"kind\":\"gauge\",\"unit\":\"frames\""),
		    "a gauge");
	free(s);
}

static void test_sub(void)
{
	struct toy a = { 10, 20, 30, 40 }, b = { 1, 2, 3, 4 }, r;

	ctr_sub(&r, &a, &b, sizeof(r));
	ASSERT_EQ_U64(r.a + r.b + r.c + r.d, 90, "member by member");
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		TEST_CASE(json_rows_by_condition),
		TEST_CASE(json_empty_family_left_out),
		TEST_CASE(text_and_sum),
		TEST_CASE(metrics_labelled),
		TEST_CASE(metrics_own),
		TEST_CASE(list),
		TEST_CASE(sub),
	};

	return test_run_all("counter_desc", cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
