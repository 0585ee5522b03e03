/* SPDX-License-Identifier: MIT */
/* ptoctl dump: an args dump (DIR/args_dump/, Documentation/dump-files.md)
 * read back into the library's records (ptoctl_dump_read.c), listed, and
 * exported one text file per record (ptoctl_dump.c). */
#ifndef PTOCTL_DUMP_H
#define PTOCTL_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "dump/dump.h"
#include "ptoctl_json.h"

#define PTOCTL_DUMP_USAGE "dump DIR [--task T] [--stage before|after] [--role R] [--arg I] [--export]"

/* A dump read back: set.rec[] as the manifest lists them (its order),
 * set.bin the whole of args.bin; value[i] a scalar record's value in the
 * manifest (NULL for a tensor). */
struct dd_dump {
	char dir[4000];			/* DIR/args_dump */
	char *text;
	struct jv root;
	struct dump_set set;
	const struct jv **value;
};

/* Which records: each criterion off when negative (task: !has_task). */
struct dd_filter {
	bool has_task;
	uint64_t task;
	int stage, role;
	int64_t arg;
};

/* Reads DIR/args_dump (or DIR itself when it holds args_dump.json) into
 * @d; 0 or -errno, with a message on stderr naming the file. */
int dd_load(const char *dir, struct dd_dump *d);
void dd_free(struct dd_dump *d);
bool dd_match(const struct dd_filter *f, const struct dump_rec *r);
/* The listing of the records @f selects. */
void dd_list(FILE *out, const struct dd_dump *d, const struct dd_filter *f);
/* Record @i's values as a grid; 0 or -EIO. */
int dd_export(FILE *out, const struct dd_dump *d, size_t i);

/* ptoctl dump ARGS (argv[0] is "dump"); 0 or -errno. */
int ptoctl_dump(int argc, char **argv);

#endif /* PTOCTL_DUMP_H */
