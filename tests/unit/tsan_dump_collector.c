// SPDX-License-Identifier: MIT
/*
 * The host collector's thread under ThreadSanitizer: a fake producer
 * (dump_lane_fake.h) publishing into a lane image while the thread
 * drains and acknowledges, for a few seeds (printed; PTO_SEED repeats
 * one). Every payload arrives once, in order, and no access races.
 */
#include <stdlib.h>
#include <time.h>
#include "kselftest_harness.h"
#include "dump_lane_fake.h"

TEST(drain_races_nothing)
{
	const char *env = getenv("PTO_SEED");
	unsigned int base = env ? (unsigned int)strtoul(env, NULL, 0) :
			    (unsigned int)time(NULL);
	int i;

	for (i = 0; i < (env ? 1 : 4); i++) {
		struct fake f = { .seed = base + (unsigned int)i };
		struct dump_set s;

		ASSERT_EQ(0, img_make(&f.m));
		TH_LOG("seed %u", f.seed);
		ASSERT_EQ(0, run_collector(&f, i % 2 == 0, &s));
		EXPECT_EQ(0, f.bad_acks);
		EXPECT_EQ(i % 2 != 0, s.unknown);
		EXPECT_EQ(st(&f.m)->acct.collected, s.n);
		check_stream(_metadata, &s);
		dump_set_fini(&s);
		free(f.m.base);
	}
}

TEST_HARNESS_MAIN
