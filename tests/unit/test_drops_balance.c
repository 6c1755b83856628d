// SPDX-License-Identifier: GPL-2.0
/*
 * A run's drop causes against the frames it is missing: unexplained,
 * over-explained, and the unidentified drops taken as its missing marks.
 */
#include "../../user/sink/drops.h"
#include "test.h"

#define BAL_EQ(b, un, ov, mc, what)                                       \
	do {                                                              \
		ASSERT_EQ((b).unexplained, un, what ": unexplained");     \
		ASSERT_EQ((b).over, ov, what ": over-explained");         \
		ASSERT_EQ((b).marks_charged, mc, what ": marks charged"); \
	} while (0)

static void test_exact_and_short(void)
{
	BAL_EQ(drops_balance(1000, 1000, 0, 0, 0), 0, 0, 0, "every frame named");
	BAL_EQ(drops_balance(1000, 990, 0, 0, 6), 10, 0, 0, "ten named by nothing");
	BAL_EQ(drops_balance(0, 0, 0, 0, 0), 0, 0, 0, "nothing missing, nothing dropped");
}

/*
 * A slow sink's full ring dropped 971,266 frames and 3 of the run's end
 * marks, all unidentified: the 3 beyond lost are the marks, not over.
 */
static void test_marks_at_a_full_ring(void)
{
	BAL_EQ(drops_balance(971266, 971269, 971269, 0, 3), 0, 0, 3, "3 marks at the ring");
	/* The tracer saw one of the marks itself: only 2 are left to charge. */
	BAL_EQ(drops_balance(971266, 971269, 971269, 1, 3), 0, 1, 2, "one seen as a mark");
	/* Identified drops are frames the tracer read: never a mark by count. */
	BAL_EQ(drops_balance(100, 103, 0, 0, 6), 0, 3, 0, "identified excess stays over");
	/* The end not seen: how many marks it sent is unknown, nothing charged. */
	BAL_EQ(drops_balance(100, 103, 103, 0, 0), 0, 3, 0, "no end, no marks to charge");
	/* No more than the excess: a missing mark with nothing over stays missing. */
	BAL_EQ(drops_balance(100, 101, 101, 0, 6), 0, 0, 1, "one over, one charged");
}

static const struct test_case cases[] = {
	TEST_CASE(exact_and_short),
	TEST_CASE(marks_at_a_full_ring),
};

TEST_MAIN("drops_balance", cases)
