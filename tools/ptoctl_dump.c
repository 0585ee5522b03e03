// SPDX-License-Identifier: MIT
/*
 * ptoctl dump DIR [--task T] [--stage before|after] [--role R] [--arg I]
 * [--export]: the records of an args dump (ptoctl_dump_read.c) listed,
 * or exported as one text file per record under DIR/args_dump/export/.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ptoctl.h"
#include "ptoctl_dump.h"

/* DIR/args_dump/export/NNNN-...txt for each selected record. */
static int export_all(const struct dd_dump *d, const struct dd_filter *f)
{
	char dir[4096 + 16], path[4096 + 96];
	size_t i;
	int ret = 0;

	snprintf(dir, sizeof(dir), "%s/export", d->dir);
	if (mkdir(dir, 0777) && errno != EEXIST) {
		ret = -errno;
		fprintf(stderr, "ptoctl dump: %s: %s\n", dir, strerror(errno));
		return ret;
	}
	for (i = 0; i < d->set.n && !ret; i++) {
		const struct dump_rec *r = &d->set.rec[i];
		FILE *out;

		if (!dd_match(f, r))
			continue;
		snprintf(path, sizeof(path), "%s/%04zu-0x%016" PRIx64
			 "-%s-%s-arg%" PRIu32 ".txt", dir, i, r->task_id,
			 r->stage == DUMP_BEFORE_DISPATCH ? "before" : "after",
			 dump_role_name(r->role), r->arg_index);
		out = fopen(path, "w");
		if (!out) {
			ret = -errno;
			fprintf(stderr, "ptoctl dump: %s: %s\n", path,
				strerror(errno));
			break;
		}
		ret = dd_export(out, d, i);
		if (fclose(out) && !ret)
			ret = -EIO;
		if (!ret)
			printf("%s\n", path);
	}
	return ret;
}

static int parse_filter(int argc, char **argv, struct dd_filter *f,
			bool *export, const char **dir)
{
	static const struct option opts[] = {
		{ "task", required_argument, NULL, 't' },
		{ "stage", required_argument, NULL, 's' },
		{ "role", required_argument, NULL, 'r' },
		{ "arg", required_argument, NULL, 'a' },
		{ "export", no_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t arg;
	char *end;
	int c;

	*f = (struct dd_filter){ .stage = -1, .role = -1, .arg = -1 };
	*export = false;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			errno = 0;
			f->task = strtoull(optarg, &end, 0);
			if (errno || *end || optarg[0] == '-' || !optarg[0])
				goto bad;
			f->has_task = true;
			break;
		case 's':
			f->stage = !strcmp(optarg, "before") ? DUMP_BEFORE_DISPATCH :
				   !strcmp(optarg, "after") ?
				   DUMP_AFTER_COMPLETION :
				   dump_name_index(dump_stage_name,
						   DUMP_STAGE_NR, optarg);
			if (f->stage < 0)
				goto bad;
			break;
		case 'r':
			f->role = dump_name_index(dump_role_name, DUMP_ROLE_NR,
						  optarg);
			if (f->role < 0)
				goto bad;
			break;
		case 'a':
			if (ptoctl_parse_u32(optarg, &end, &arg) || *end)
				goto bad;
			f->arg = arg;
			break;
		case 'e':
			*export = true;
			break;
		default:
			ptoctl_bad_option(argv, c);
			goto usage;
		}
	}
	if (optind + 1 != argc)
		goto usage;
	*dir = argv[optind];
	return 0;
bad:
	fprintf(stderr, "ptoctl dump: bad value '%s' for '%s'\n", optarg,
		argv[optind - 1]);
usage:
	fprintf(stderr, "usage: ptoctl " PTOCTL_DUMP_USAGE "\n");
	return -EINVAL;
}

int ptoctl_dump(int argc, char **argv)
{
	struct dd_filter f;
	struct dd_dump d;
	const char *dir;
	bool export;
	int ret;

	ret = parse_filter(argc, argv, &f, &export, &dir);
	if (ret)
		return ret;
	ret = dd_load(dir, &d);
	if (ret)
		return ret;
	if (export)
		ret = export_all(&d, &f);
	else
		dd_list(stdout, &d, &f);
	dd_free(&d);
	return ret;
}
