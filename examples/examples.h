/* SPDX-License-Identifier: MIT */
/*
 * The examples as functions, for `ptoctl run NAME` (each example is also a
 * program of its own). Output is TAP plus "# ..." timing lines; the return
 * value is 0 when every check passed.
 */
#ifndef PTO_EXAMPLES_H
#define PTO_EXAMPLES_H

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct ex_opts {
	unsigned int dev;	/* /dev/ptoN */
	unsigned int clusters;	/* clusters to use; 0: all */
	const char *trace;	/* --trace FILE: the run trace's file; NULL */
	int resident;		/* --route resident: 1; sched (default): 0 */
	unsigned int dump_level; /* --dump-args LEVEL: PTO_DUMP_*; 0 off */
	const char *dump_dir;	/* --dump-dir DIR: "." unless given */
};


/* X(name, one-line description) for every example. */
#define PTO_EXAMPLES(X)							\
	X(vector, "c = a + b; d = c + 1; e = c + 2; g = d * e; f = g + c: f = 47") \
	X(chain_dummy, "100 dependency-only tasks in a chain; 1 -> 18 -> 1")	\
	X(fanin, "64 producers x 64 consumers, all-to-all explicit deps")	\
	X(spmd, "SPMD blocks on AIV and MIX, each writes its index")	\
	X(matmul_add, "50 x (128x128 matmul on AIC, add on AIV) vs CPU")	\
	X(small_ring, "ring back-pressure: error, then just large enough") \
	X(host_device, "device m = 2x + 1; host checks and reverses m; device f = t + x") \
	X(vector_hbg, "resident route: c = a + b; d = c + 1; e = c + 2; f = d * e: f = 42")

/*
 * A whole decimal number in @min..UINT_MAX into *out; -1 for anything
 * else (empty, a sign, trailing text, out of range), so a mistyped option
 * is refused instead of read as 0 (device 0, all clusters). Decimal, as
 * ptoctl's other counts and indices: "010" is 10, not 8.
 */
static inline int ex_parse_uint(const char *s, unsigned int min,
				unsigned int *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > UINT_MAX)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/* --dump-args takes a level by number or by name, as the files name it. */
static inline int ex_parse_dump_level(const char *s, unsigned int *out)
{
	static const char *const names[] = { "off", "partial", "full",
					     "hybrid" };
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i])) {
			*out = i;
			return 0;
		}
	return ex_parse_uint(s, 0, out) || *out >= i ? -1 : 0;
}

/*
 * After getopt_long() returned ':' (a value missing; the option string
 * starts with ':') or '?' (an unknown option) with opterr 0: say which
 * option, as "@name: ..." (getopt would name argv[0], a subcommand's own
 * name).
 */
static inline void ex_bad_option(const char *name, char **argv, int c)
{
	if (c == ':')
		fprintf(stderr, "%s: '%s' needs a value\n",
			name, argv[optind - 1]);
	else if (optopt)	/* in a cluster (-xy), argv[optind - 1] is not it */
		fprintf(stderr, "%s: unknown option '-%c'\n", name, optopt);
	else
		fprintf(stderr, "%s: unknown option '%s'\n",
			name, argv[optind - 1]);
}

/*
 * [-d N] [--clusters M] [--trace FILE] [--route R] [--dump-args LEVEL]
 * [--dump-dir DIR] and at most @max_args other arguments (the
 * programs: none; ptoctl run: the example's name), for the programs and
 * for ptoctl run; options may follow the name (getopt permutes: the
 * arguments are then argv[optind..argc - 1]). @name prefixes the
 * messages ("vector", "ptoctl run"). 0, or -1 after a message and a
 * usage line on stderr.
 */
static inline int ex_parse(int argc, char **argv, const char *name,
			   int max_args, struct ex_opts *opts)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "clusters", required_argument, NULL, 'c' },
		{ "trace", required_argument, NULL, 't' },
		{ "route", required_argument, NULL, 'r' },
		{ "dump-args", required_argument, NULL, 'A' },
		{ "dump-dir", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opts->dev = 0;
	opts->clusters = 0;
	opts->trace = NULL;
	opts->resident = 0;
	opts->dump_level = 0;
	opts->dump_dir = ".";
	optind = 0;	/* glibc: also forgets a previous parse's -xy position */
	opterr = 0;	/* getopt would name argv[0]: "run" for ptoctl run */
	while ((c = getopt_long(argc, argv, ":d:c:", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (ex_parse_uint(optarg, 0, &opts->dev)) {
				fprintf(stderr, "%s: bad device '%s' (-d N opens /dev/ptoN)\n",
					name, optarg);
				goto usage;
			}
			break;
		case 'c':
			/* 0 is every cluster, as pto_sched_config's. */
			if (ex_parse_uint(optarg, 0, &opts->clusters)) {
				fprintf(stderr, "%s: bad --clusters '%s' (a count; 0 or none: all the device's clusters)\n",
					name, optarg);
				goto usage;
			}
			break;
		case 't':
			opts->trace = optarg;
			break;
		case 'r':
			if (strcmp(optarg, "sched") && strcmp(optarg, "resident")) {
				fprintf(stderr, "%s: bad --route '%s' (sched or resident)\n",
					name, optarg);
				goto usage;
			}
			opts->resident = !strcmp(optarg, "resident");
			break;
		case 'A':
			if (ex_parse_dump_level(optarg, &opts->dump_level)) {
				fprintf(stderr, "%s: bad --dump-args '%s' (0-3 or off, partial, full, hybrid)\n",
					name, optarg);
				goto usage;
			}
			break;
		case 'D':
			opts->dump_dir = optarg;
			break;
		default:
			ex_bad_option(name, argv, c);
			goto usage;
		}
	}
	if (argc - optind > max_args) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", name,
			argv[optind + max_args]);
		goto usage;
	}
	return 0;
usage:
	fprintf(stderr, "usage: %s%s [-d N] [--clusters M] [--trace FILE] [--route R] [--dump-args LEVEL] [--dump-dir DIR]\n", name,
		max_args ? " EXAMPLE" : "");
	return -1;
}

#define PTO_EX_DECLARE(name, desc) int ex_##name(const struct ex_opts *opts);
PTO_EXAMPLES(PTO_EX_DECLARE)
#undef PTO_EX_DECLARE

#endif
