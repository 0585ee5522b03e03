/* SPDX-License-Identifier: MIT */
/*
 * The examples as functions, for `ptoctl run NAME` (each example is also a
 * program of its own). Output is TAP plus "# ..." timing lines; the return
 * value is 0 when every check passed.
 */
#ifndef PTO_EXAMPLES_H
#define PTO_EXAMPLES_H

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

struct ex_opts {
	unsigned int dev;	/* /dev/ptoN */
	unsigned int clusters;	/* clusters to use; 0: all */
};

/* X(name, one-line description) for every example. */
#define PTO_EXAMPLES(X)							\
	X(vector, "c = a + b; d = c + 1; e = c + 2; g = d * e; f = g + c: f = 47") \
	X(chain_dummy, "100 dependency-only tasks in a chain; 1 -> 18 -> 1")	\
	X(fanin, "64 producers x 64 consumers, all-to-all explicit deps")	\
	X(spmd, "SPMD blocks on AIV and MIX, each writes its index")	\
	X(matmul_add, "50 x (128x128 matmul on AIC, add on AIV) vs CPU")	\
	X(small_ring, "ring back-pressure: error, then just large enough")

/*
 * [-d N] [--clusters M], for the programs and for ptoctl run; options may
 * follow the example's name (getopt permutes). 0, or -1 after a usage line.
 */
static inline int ex_parse(int argc, char **argv, struct ex_opts *opts)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "clusters", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opts->dev = 0;
	opts->clusters = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:c:", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			opts->dev = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			opts->clusters = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-d N] [--clusters M]\n",
				argv[0]);
			return -1;
		}
	}
	return 0;
}

#define PTO_EX_DECLARE(name, desc) int ex_##name(const struct ex_opts *opts);
PTO_EXAMPLES(PTO_EX_DECLARE)
#undef PTO_EX_DECLARE

#endif
