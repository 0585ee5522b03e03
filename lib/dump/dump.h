/* SPDX-License-Identifier: MIT */
/*
 * The args dump's records and its files (Documentation/dump-files.md):
 * the record of one captured argument, a dump set that collects them with
 * their payload bytes, and the writer of DIR/args_dump/args_dump.json and
 * DIR/args_dump/args.bin. Internal to the library and its tools; a set
 * belongs to one thread at a time.
 */
#ifndef PTO_DUMP_H
#define PTO_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/pto.h>

/* Levels, numbered as the reference runtime numbers them. */
enum dump_level {
	DUMP_LEVEL_OFF = 0,
	DUMP_LEVEL_PARTIAL = 1,	/* marked arguments only */
	DUMP_LEVEL_FULL = 2,	/* every tensor and scalar, marks ignored */
	DUMP_LEVEL_HYBRID = 3,	/* a record per argument, payload if marked */
	DUMP_LEVEL_NR
};

/* Sort order of the file: a record's stage, then its role. */
enum dump_stage { DUMP_BEFORE_DISPATCH, DUMP_AFTER_COMPLETION, DUMP_STAGE_NR };
enum dump_role { DUMP_ROLE_INPUT, DUMP_ROLE_OUTPUT, DUMP_ROLE_INOUT,
		 DUMP_ROLE_NR };
enum dump_kind { DUMP_KIND_TENSOR, DUMP_KIND_SCALAR, DUMP_KIND_NR };

#define DUMP_MAX_RANK PTO_TENSOR_MAX_RANK
/* Subtasks of one task: a MIX task is one AIC and two AIV. */
#define DUMP_MAX_FUNCS 3
#define DUMP_FUNC_UNKNOWN (-1)

/*
 * One captured argument. A scalar's arg_index is the task's tensor count
 * plus its scalar index; its raw bits are @value (an f32 the IEEE pattern
 * in the low 32 bits, an i32 the low 32 bits). A tensor's layout is in
 * elements; its payload is @bin_size bytes at @bin_offset of args.bin,
 * fewer than numel elements when @truncated.
 */
struct dump_rec {
	uint64_t task_id;
	int32_t func_id[DUMP_MAX_FUNCS];
	uint32_t nfunc;
	uint32_t arg_index;
	uint8_t role;			/* enum dump_role */
	uint8_t stage;			/* enum dump_stage */
	uint8_t kind;			/* enum dump_kind */
	uint8_t rank;			/* 0..DUMP_MAX_RANK; 0 for a scalar */
	uint32_t dtype;			/* PTO_DTYPE_* */
	uint64_t value;
	uint32_t shape[DUMP_MAX_RANK];
	uint64_t strides[DUMP_MAX_RANK];
	uint64_t start_offset;
	uint64_t bin_offset, bin_size;
	bool contiguous;
	bool truncated;			/* the arena clamp cut its payload */
	bool overwritten;		/* its arena bytes were reused before
					 * the host copied them */
};

/* Records and their payloads; bin[] is args.bin in arrival order. */
struct dump_set {
	uint32_t level;			/* enum dump_level */
	struct dump_rec *rec;
	size_t n, cap;
	uint8_t *bin;
	size_t bin_len, bin_cap;
	uint64_t collected;		/* records drained from the lanes */
	uint64_t dropped;		/* records the lanes refused */
	bool unknown;			/* a lane never settled: the counts
					 * may be short */
};

void dump_set_init(struct dump_set *s, uint32_t level);
void dump_set_fini(struct dump_set *s);
/* A copy of @r, its payload @len bytes at @payload appended to bin[]
 * (@r's bin_offset / bin_size are set from them). 0 or -ENOMEM. */
int dump_set_add(struct dump_set *s, const struct dump_rec *r,
		 const void *payload, size_t len);
/* dump_set_add() with the payload's @len bytes left for the caller to
 * write at *@payload (valid until the next add); the record is returned
 * in *@added. 0 or -ENOMEM. */
int dump_set_append(struct dump_set *s, const struct dump_rec *r, size_t len,
		    struct dump_rec **added, uint8_t **payload);

/* Sorts the set's records into the file's order: (task_id, stage,
 * arg_index, role). */
void dump_set_sort(struct dump_set *s);
/* args_dump.json of @s (sorted first) on @f; 0 or -EIO. */
int dump_write_json(struct dump_set *s, FILE *f);
/*
 * DIR/args_dump/args_dump.json and, when a payload was written,
 * DIR/args_dump/args.bin (else none, a stale one removed); DIR is made if
 * its parent exists. Each file is written beside and renamed into place.
 * 0 or -errno.
 */
int dump_write(struct dump_set *s, const char *dir);

/* The file's names of the enums; NULL out of range. */
const char *dump_stage_name(unsigned int stage);
const char *dump_role_name(unsigned int role);
const char *dump_kind_name(unsigned int kind);
/* A PTO_DTYPE_*'s name ("float32") and element size; NULL / 0 if none. */
const char *dump_dtype_name(uint32_t dtype);
size_t dump_dtype_size(uint32_t dtype);
/* The enum of @name among @n names of @name_of; -1 if none. */
int dump_name_index(const char *(*name_of)(unsigned int), unsigned int n,
		    const char *name);
/* PTO_DTYPE_* of @name; 0 if none. */
uint32_t dump_dtype_of(const char *name);

/* Elements of a layout (1 for rank 0), and whether @strides are the
 * row-major packed strides of @shape. */
uint64_t dump_numel(unsigned int rank, const uint32_t *shape);
bool dump_is_contiguous(unsigned int rank, const uint32_t *shape,
			const uint64_t *strides);

#endif /* PTO_DUMP_H */
