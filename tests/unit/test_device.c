// SPDX-License-Identifier: MIT
/*
 * libpto device layer without a device: error paths of open and
 * pto_strerror. (With a device, tests/selftests cover the rest.)
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <pto/pto.h>
#include "kselftest_harness.h"

TEST(open_missing_node)
{
	struct pto_dev *dev = (struct pto_dev *)1;

	EXPECT_EQ(-ENOENT, pto_dev_open_path("/nonexistent/pto0", &dev));
	EXPECT_EQ(NULL, dev);
}

TEST(open_not_a_pto_device)
{
	struct pto_dev *dev = (struct pto_dev *)1;

	/* GET_INFO on /dev/null is not a pto ioctl. */
	EXPECT_EQ(-ENOTTY, pto_dev_open_path("/dev/null", &dev));
	EXPECT_EQ(NULL, dev);
}

TEST(close_null_is_noop)
{
	pto_dev_close(NULL);
	EXPECT_EQ(0, pto_bo_free(NULL));
}

TEST(strerror_texts)
{
	EXPECT_STREQ("success", pto_strerror(0));
	EXPECT_STREQ(strerror(ENOMEM), pto_strerror(-ENOMEM));
	/* Positive and negative errno give the same text. */
	EXPECT_STREQ(pto_strerror(-EBUSY), pto_strerror(EBUSY));
	EXPECT_NE(NULL, strstr(pto_strerror(-EPROTO), "ABI"));
	EXPECT_NE(NULL, strstr(pto_strerror(EPROTO), "ABI"));
	/* No int negation of INT_MIN (UBSan aborts this test on one). */
	EXPECT_STREQ("unknown error", pto_strerror(INT_MIN));
}

TEST_HARNESS_MAIN
