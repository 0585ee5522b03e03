// SPDX-License-Identifier: MIT
/*
 * The examples' and `ptoctl run`'s command line (examples/examples.h,
 * ex_parse()): -d N and --clusters M are read whole, or refused with a
 * message that names the mistake and a usage line (`-d x`,
 * `--clusters abc`, `--clusters -1`, a stray argument). `--clusters 0` is
 * every cluster, as the library's 0.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "../../examples/examples.h"
#include "kselftest_harness.h"

/* The examples themselves are not linked in: ex_parse() alone. */
#define ARGC(v) ((int)(sizeof(v) / sizeof((v)[0])) - 1)

/*
 * ex_parse() on @argv (NULL-terminated) with its stderr captured into
 * @err; its return value.
 */
static int parse(char **argv, const char *name, int max_args,
		 struct ex_opts *o, char *err, size_t len)
{
	FILE *tmp = tmpfile();
	int argc = 0, saved, ret;
	size_t n;

	while (argv[argc])
		argc++;
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(tmp), 2);
	ret = ex_parse(argc, argv, name, max_args, o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, len - 1, tmp);
	err[n] = 0;
	fclose(tmp);
	return ret;
}

TEST(good_options_are_read_whole)
{
	char *v1[] = { "run", "vector", "-d", "3", "--clusters", "2", NULL };
	char *v2[] = { "run", "--device=010", "fanin", "--clusters=8", NULL };
	char *v3[] = { "vector", NULL };
	char *v4[] = { "run", "vector", "--route", "resident", NULL };
	char *v5[] = { "run", "vector", "--route=sched", NULL };
	char err[512];
	struct ex_opts o;

	ASSERT_EQ(0, parse(v1, "ptoctl run", 1, &o, err, sizeof(err)));
	EXPECT_EQ(3u, o.dev);
	EXPECT_EQ(2u, o.clusters);
	EXPECT_STREQ("", err);
	/* getopt permuted the name to the end of the options */
	ASSERT_EQ(ARGC(v1) - 1, optind);
	EXPECT_STREQ("vector", v1[optind]);

	ASSERT_EQ(0, parse(v2, "ptoctl run", 1, &o, err, sizeof(err)));
	EXPECT_EQ(10u, o.dev);	/* decimal, as ptoctl exec's -d */
	EXPECT_EQ(8u, o.clusters);
	EXPECT_STREQ("fanin", v2[optind]);

	/* no option: device 0, every cluster (0), the scheduler route */
	o.dev = o.clusters = 7;
	o.resident = 1;
	ASSERT_EQ(0, parse(v3, "vector", 0, &o, err, sizeof(err)));
	EXPECT_EQ(0u, o.dev);
	EXPECT_EQ(0u, o.clusters);
	EXPECT_EQ(0, o.resident);
	EXPECT_EQ(1, optind);
	EXPECT_STREQ("", err);

	ASSERT_EQ(0, parse(v4, "ptoctl run", 1, &o, err, sizeof(err)));
	EXPECT_EQ(1, o.resident);
	ASSERT_EQ(0, parse(v5, "ptoctl run", 1, &o, err, sizeof(err)));
	EXPECT_EQ(0, o.resident);
}

/*
 * --clusters 0 is every cluster, as pto_sched_config's 0; a parse that stopped inside "-xd9" leaves nothing to the
 * next one (glibc keeps the cluster position unless optind is 0).
 */
TEST(clusters_0_is_all_and_parses_start_clean)
{
	char *v4[] = { "run", "vector", "--clusters", "0", NULL };
	char *v5[] = { "run", "vector", "-xd9", NULL };
	char *v6[] = { "run", "vector", NULL };
	char err[512];
	struct ex_opts o;

	o.clusters = 7;
	ASSERT_EQ(0, parse(v4, "ptoctl run", 1, &o, err, sizeof(err)));
	EXPECT_EQ(0u, o.clusters);
	EXPECT_EQ(-1, parse(v5, "ptoctl run", 1, &o, err, sizeof(err)));
	ASSERT_EQ(0, parse(v6, "ptoctl run", 1, &o, err, sizeof(err)));
	EXPECT_EQ(0u, o.dev);
}

/* --dump-args by number or name (any case); the files' directory is
 * the current one unless --dump-dir says. */
TEST(dump_level_by_number_or_name)
{
	static const struct {
		const char *arg;
		unsigned int level;
	} good[] = {
		{ "0", 0 }, { "off", 0 }, { "1", 1 }, { "partial", 1 },
		{ "2", 2 }, { "FULL", 2 }, { "3", 3 }, { "Hybrid", 3 },
	};
	char *v1[] = { "run", "vector", NULL };
	char err[512];
	struct ex_opts o;
	unsigned int i;

	o.dump_level = 9;
	o.dump_dir = NULL;
	ASSERT_EQ(0, parse(v1, "ptoctl run", 1, &o, err, sizeof(err)));
	EXPECT_EQ(0u, o.dump_level);
	EXPECT_STREQ(".", o.dump_dir);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *v[] = { "run", "vector", "--dump-args",
			      (char *)good[i].arg, "--dump-dir", "/tmp/d",
			      NULL };

		ASSERT_EQ(0, parse(v, "ptoctl run", 1, &o, err, sizeof(err)))
			TH_LOG("%s: %s", good[i].arg, err);
		EXPECT_EQ(good[i].level, o.dump_level) TH_LOG("%s", good[i].arg);
		EXPECT_STREQ("/tmp/d", o.dump_dir);
	}
}

TEST(mistakes_are_refused_and_named)
{
	static const struct {
		const char *a[4];
		const char *msg;
	} bad[] = {
		{ { "vector", "-d", "x" }, "ptoctl run: bad device 'x'" },
		{ { "vector", "-d", "1x" }, "ptoctl run: bad device '1x'" },
		{ { "vector", "-d", "0x2" }, "ptoctl run: bad device '0x2'" },
		{ { "vector", "-d", "-1" }, "ptoctl run: bad device '-1'" },
		{ { "vector", "-d", "4294967296" },
		  "ptoctl run: bad device '4294967296'" },
		{ { "vector", "-xy" }, "ptoctl run: unknown option '-x'" },
		{ { "vector", "--clusters", "abc" },
		  "ptoctl run: bad --clusters 'abc' (a count; 0 or none: all the device's clusters)" },
		{ { "vector", "--clusters", "-1" },
		  "ptoctl run: bad --clusters '-1'" },
		{ { "vector", "--clusters", " 2" },
		  "ptoctl run: bad --clusters ' 2'" },
		{ { "vector", "extra" },
		  "ptoctl run: unexpected argument 'extra'" },
		{ { "vector", "--bogus" },
		  "ptoctl run: unknown option '--bogus'" },
		{ { "vector", "-x" }, "ptoctl run: unknown option '-x'" },
		{ { "vector", "--clusters" },
		  "ptoctl run: '--clusters' needs a value" },
		{ { "vector", "-d" }, "ptoctl run: '-d' needs a value" },
		{ { "vector", "--route", "fast" },
		  "ptoctl run: bad --route 'fast' (sched or resident)" },
		{ { "vector", "--dump-args", "4" },
		  "ptoctl run: bad --dump-args '4' (0-3 or off, partial, full, hybrid)" },
		{ { "vector", "--dump-args", "most" },
		  "ptoctl run: bad --dump-args 'most'" },
		{ { "vector", "--dump-args", "" },
		  "ptoctl run: bad --dump-args ''" },
		{ { "vector", "--dump-args" },
		  "ptoctl run: '--dump-args' needs a value" },
	};
	char err[512];
	unsigned int i, k;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[6] = { "run" };
		struct ex_opts o;

		for (k = 0; k < 4 && bad[i].a[k]; k++)
			argv[k + 1] = (char *)bad[i].a[k];
		EXPECT_EQ(-1, parse(argv, "ptoctl run", 1, &o, err,
				    sizeof(err))) TH_LOG("case %u", i);
		EXPECT_NE(NULL, strstr(err, bad[i].msg))
			TH_LOG("case %u: %s", i, err);
		EXPECT_NE(NULL, strstr(err, "\nusage: ptoctl run EXAMPLE [-d N] [--clusters M] [--trace FILE] [--route R] [--dump-args LEVEL] [--dump-dir DIR]\n"))
			TH_LOG("case %u: %s", i, err);
	}
}

/* A program of its own takes no argument at all, and says its name. */
TEST(a_program_takes_no_argument)
{
	char *v[] = { "vector", "fanin", NULL };
	char err[512];
	struct ex_opts o;

	EXPECT_EQ(-1, parse(v, "vector", 0, &o, err, sizeof(err)));
	EXPECT_STREQ("vector: unexpected argument 'fanin'\n"
		     "usage: vector [-d N] [--clusters M] [--trace FILE] [--route R] [--dump-args LEVEL] [--dump-dir DIR]\n", err);
}

TEST_HARNESS_MAIN
