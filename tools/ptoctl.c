// SPDX-License-Identifier: MIT
/*
 * ptoctl - inspect and drive pto devices.
 *
 *   ptoctl info [-d N]      print the device topology
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pto/pto.h>

struct ptoctl_cmd {
	const char *name;
	const char *usage;
	int (*fn)(int argc, char **argv);
};

static int parse_device(int argc, char **argv, unsigned int *index)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	*index = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			errno = 0;
			*index = (unsigned int)strtoul(optarg, &end, 0);
			if (errno || *end) {
				fprintf(stderr, "ptoctl: bad device '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

static int cmd_info(int argc, char **argv)
{
	struct pto_dev_info info;
	struct pto_dev *dev;
	unsigned int index, c;
	int ret;

	ret = parse_device(argc, argv, &index);
	if (ret)
		return ret;
	ret = pto_dev_open(index, &dev);
	if (ret) {
		fprintf(stderr, "ptoctl: /dev/pto%u: %s\n", index,
			pto_strerror(ret));
		return ret;
	}
	pto_dev_info(dev, &info);
	printf("device:      pto%u (abi %u.%u%s)\n", info.index, info.abi_major,
	       info.abi_minor, info.caps & 1 ? ", mock" : "");
	printf("clusters:    %u (1 AIC + 2 AIV each)\n", info.clusters);
	printf("cores:       %u\n", info.cores);
	printf("gm:          %llu MiB (buffer alignment %u)\n",
	       (unsigned long long)(info.gm_size >> 20), info.gm_align);
	printf("window:      %u bytes per core\n", info.window_size);
	printf("lanes:       %u\n", info.lanes);
	for (c = 0; c < info.clusters; c++) {
		unsigned int i, base = c * 3;

		printf("cluster %-3u", c);
		for (i = base; i < base + 3 && i < info.cores; i++)
			printf(" core %-3u %s", i,
			       info.core_type[i] == PTO_CORE_TYPE_AIC ? "AIC" :
			       info.core_type[i] == PTO_CORE_TYPE_AIV ? "AIV" :
									"???");
		printf("\n");
	}
	pto_dev_close(dev);
	return 0;
}

static const struct ptoctl_cmd cmds[] = {
	{ "info", "info [-d N]", cmd_info },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: ptoctl COMMAND [ARGS]\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  ptoctl %s\n", cmds[i].usage);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1) ? 1 : 0;
	fprintf(stderr, "ptoctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
