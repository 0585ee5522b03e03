// SPDX-License-Identifier: MIT
/*
 * ptoctl - inspect and drive pto devices. main() and the command table;
 * each command in its own file (ptoctl_dev.c: info, cores, gates;
 * ptoctl_exec.c; ptoctl_trace*.c; ptoctl_dump.c; ptoctl_monitor.c;
 * ptoctl_lanes.c), `ptoctl run` here. `ptoctl --help` lists the commands and their arguments.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pto/pto.h>
#include "examples.h"
#include "ptoctl.h"
#include "ptoctl_dump.h"
#include "ptoctl_trace.h"

/*
 * An unsigned 32-bit decimal number from the start of @s; *end as strtoul's.
 * Decimal only: with base 0, "010" would be 8 and a shape "0x4" the one
 * dimension 4 (decimal reads it as 0 by 4, which parse_dim() refuses). A value
 * above UINT32_MAX, a sign or a leading blank is an error: a cast of strtoul's
 * result would keep the low 32 bits (4294967297 read as 1, -1 as 4294967295).
 */
int ptoctl_parse_u32(const char *s, char **end, uint32_t *out)
{
	unsigned long long v;

	*end = (char *)s;
	if (!isdigit((unsigned char)*s))	/* no sign, no blank */
		return -EINVAL;
	errno = 0;
	v = strtoull(s, end, 10);
	if (errno || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* A subcommand's option mistake, named "ptoctl CMD: ..." (argv[0] is
 * the subcommand). */
void ptoctl_bad_option(char **argv, int c)
{
	char name[64];

	snprintf(name, sizeof(name), "ptoctl %s", argv[0]);
	ex_bad_option(name, argv, c);
}

static int parse_device(int argc, char **argv, unsigned int *index)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	*index = 0;
	optind = 0;
	opterr = 0;	/* ex_bad_option() says it, with the command's name */
	while ((c = getopt_long(argc, argv, ":d:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (ptoctl_parse_u32(optarg, &end, index) || *end) {
				fprintf(stderr, "ptoctl: bad device '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		default:
			ptoctl_bad_option(argv, c);
			fprintf(stderr, "usage: ptoctl %s [-d N]\n", argv[0]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ptoctl: unexpected argument '%s'\nusage: ptoctl %s [-d N]\n",
			argv[optind], argv[0]);
		return -EINVAL;
	}
	return 0;
}

/* Open /dev/pto<index>; says why on failure, and what to do if it is not
 * there. */
int ptoctl_open_index(unsigned int index, struct pto_dev **dev)
{
	int ret = pto_dev_open(index, dev);

	if (!ret)
		return 0;
	fprintf(stderr, "ptoctl: /dev/pto%u: %s\n", index, pto_strerror(ret));
	if (ret == -ENOENT)
		fprintf(stderr, "ptoctl: pto.ko is not loaded, or was loaded with fewer devices (its devices= parameter, default 1)\n");
	return ret;
}

/* -d N, open /dev/ptoN and read its topology; says why on failure. */
int ptoctl_open_device(int argc, char **argv, struct pto_dev **dev,
		       struct pto_dev_info *info)
{
	unsigned int index;
	int ret;

	ret = parse_device(argc, argv, &index);
	if (ret)
		return ret;
	ret = ptoctl_open_index(index, dev);
	if (ret)
		return ret;
	return pto_dev_info(*dev, info);
}

/* ptoctl run EXAMPLE [-d N] [--clusters M] [--trace FILE] [--route R]
 * [--dump-args LEVEL] [--dump-dir DIR]. */
struct ptoctl_example {
	const char *name;
	const char *desc;
	int (*run)(const struct ex_opts *opts);
};

#define PTOCTL_EXAMPLE(n, d) { #n, d, ex_##n },
static const struct ptoctl_example examples[] = { PTO_EXAMPLES(PTOCTL_EXAMPLE) };
#undef PTOCTL_EXAMPLE

static int ptoctl_run(int argc, char **argv)
{
	struct ex_opts eo;
	const char *name = NULL;
	size_t i;

	if (ex_parse(argc, argv, "ptoctl run", 1, &eo))
		return -EINVAL;
	if (optind < argc)
		name = argv[optind];
	for (i = 0; name && i < sizeof(examples) / sizeof(examples[0]); i++) {
		if (strcmp(name, examples[i].name))
			continue;
		if (eo.clusters)
			printf("# ptoctl run %s on /dev/pto%u, %u clusters: %s\n",
			       name, eo.dev, eo.clusters, examples[i].desc);
		else
			printf("# ptoctl run %s on /dev/pto%u: %s\n", name,
			       eo.dev, examples[i].desc);
		fflush(stdout);
		return examples[i].run(&eo) ? -EIO : 0;
	}
	fprintf(stderr, "ptoctl run: %s%s\nexamples:\n",
		name ? "unknown example " : "which example?", name ? name : "");
	for (i = 0; i < sizeof(examples) / sizeof(examples[0]); i++)
		fprintf(stderr, "  %-12s %s\n", examples[i].name, examples[i].desc);
	return -EINVAL;
}

static const struct ptoctl_cmd cmds[] = {
	{ "info", "info [-d N]", "the device topology", ptoctl_info },
	{ "cores", "cores [-d N]", "per-core state, owner and counters",
	  ptoctl_cores },
	{ "gates", "gates [-d N]",
	  "per-core retirement: bits, nonce, response, times", ptoctl_gates },
	{ "lanes", "lanes [-d N]",
	  "per dump lane: owner, level, state, counts, open reservation, quarantine",
	  ptoctl_lanes },
	{ "exec", PTOCTL_EXEC_USAGE,
	  "one built-in kernel on one core, its output printed", ptoctl_exec },
	{ "run", "run EXAMPLE [-d N] [--clusters M] [--trace FILE] [--route R] [--dump-args LEVEL] [--dump-dir DIR]",
	  "an example of examples/ (no EXAMPLE: the list)", ptoctl_run },
	{ "trace", PTOCTL_TRACE_USAGE,
	  "a run trace's summary, or its swimlane as SVG on stdout", ptoctl_trace },
	{ "dump", PTOCTL_DUMP_USAGE,
	  "an args dump's records, or (--export) one grid file per record",
	  ptoctl_dump },
	{ "monitor", PTOCTL_MONITOR_USAGE,
	  "one line per driver event until COUNT events or MS ms", ptoctl_monitor },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: ptoctl COMMAND [ARGS]\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  ptoctl %s\n      %s\n", cmds[i].usage,
			cmds[i].what);
	fprintf(f, "-d N: /dev/ptoN (default 0)\n--version: pto's version\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version"))
		return printf("ptoctl %s\n", PTO_VERSION) < 0;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		/* ptoctl CMD --help: that command's usage, status 0. */
		if (argc == 3 && (!strcmp(argv[2], "-h") ||
				  !strcmp(argv[2], "--help"))) {
			printf("usage: ptoctl %s\n  %s\n", cmds[i].usage,
			       cmds[i].what);
			return 0;
		}
		return cmds[i].fn(argc - 1, argv + 1) ? 1 : 0;
	}
	fprintf(stderr, "ptoctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
