// SPDX-License-Identifier: GPL-2.0
#include "../../user/gen/stall.h"
#include "test.h"

#define MS 1000000ULL

static void test_progress_is_not_a_stall(void)
{
	struct stall s;
	__u64 t;

	stall_init(&s, 1000 * MS);
	for (t = 0; t < 5000 * MS; t += 100 * MS)
		ASSERT_FALSE(stall_update(&s, t, t / MS, 500), "sent keeps moving with a backlog");
}

static void test_empty_queue_is_not_a_stall(void)
{
	struct stall s;
	__u64 t;

	stall_init(&s, 1000 * MS);
	for (t = 0; t < 5000 * MS; t += 100 * MS)
		ASSERT_FALSE(stall_update(&s, t, 42, 0), "idle path, nothing queued");
}

static void test_stuck_backlog_after_window(void)
{
	struct stall s;

	stall_init(&s, 1000 * MS);
	ASSERT_FALSE(stall_update(&s, 0, 100, 0), "first sample");
	ASSERT_FALSE(stall_update(&s, 100 * MS, 200, 3000), "moving");
	ASSERT_FALSE(stall_update(&s, 200 * MS, 200, 3000), "stuck from here");
	ASSERT_FALSE(stall_update(&s, 1100 * MS, 200, 3000), "stuck 0.9 s");
	ASSERT_EQ(stall_duration(&s, 1100 * MS), 900 * MS, "duration so far");
	ASSERT_TRUE(stall_update(&s, 1200 * MS, 200, 3000), "stuck 1.0 s: stalled");
	ASSERT_TRUE(stall_update(&s, 1300 * MS, 200, 2000),
		    "still stalled as backlog shrinks without sends");
	ASSERT_FALSE(stall_update(&s, 1400 * MS, 201, 2000), "one packet sent: recovered");
	ASSERT_EQ(stall_duration(&s, 1400 * MS), 0, "no stall duration after progress");
}

static void test_backlog_drained_resets(void)
{
	struct stall s;

	stall_init(&s, 500 * MS);
	ASSERT_FALSE(stall_update(&s, 0, 10, 100), "prime");
	ASSERT_FALSE(stall_update(&s, 400 * MS, 10, 100), "stuck 0.4 s");
	ASSERT_FALSE(stall_update(&s, 450 * MS, 10, 0), "queue emptied");
	ASSERT_FALSE(stall_update(&s, 800 * MS, 10, 100), "stuck again, window restarts");
	ASSERT_TRUE(stall_update(&s, 1300 * MS, 10, 100), "0.5 s after restart");
}

static const struct test_case cases[] = {
	TEST_CASE(progress_is_not_a_stall),
	TEST_CASE(empty_queue_is_not_a_stall),
	TEST_CASE(stuck_backlog_after_window),
	TEST_CASE(backlog_drained_resets),
};

TEST_MAIN("stall", cases)
