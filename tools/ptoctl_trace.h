/* SPDX-License-Identifier: MIT */
/* ptoctl trace: the run-trace file read back (ptoctl_trace_read.c) for the
 * summary and the swimlane (ptoctl_trace.c). */
#ifndef PTOCTL_TRACE_H
#define PTOCTL_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "ptoctl_json.h"

#define PTOCTL_TRACE_USAGE "trace summary|svg FILE.json"

/* The writer's processes of the task rows. */
#define TR_PID_DEVICE 2
#define TR_PID_HOST 3

/* A task's stamps, as the writer's args name them. */
enum tr_stamp { TR_SUBMITTED, TR_READY, TR_DISPATCHED, TR_STARTED, TR_ENDED,
		TR_COMPLETED, TR_CONSUMED, TR_NSTAMP };

/* A task execution (a "task" complete event). */
struct tr_task {
	uint64_t run, task, func;
	const char *name;
	uint64_t ts[TR_NSTAMP];		/* ns after the trace's t0 */
	uint32_t have;			/* bit per enum tr_stamp */
	int64_t pid, tid;		/* its row */
	uint64_t *deps;
	size_t ndeps;
};

/* A task row's name (thread_name metadata). */
struct tr_row {
	int64_t pid, tid;
	char name[32];
};

/* One end of a dependency flow. */
struct tr_flow {
	uint64_t id, ts;
	int64_t pid, tid;
	bool start;
};

/* A trace file read back; its strings live in root. */
struct tr_trace {
	char *text;			/* the file; root's numbers point in */
	struct jv root;
	struct tr_task *t;
	size_t n;
	struct tr_row *row;		/* thread names of the task rows */
	size_t nrow;
	struct tr_flow *flow;
	size_t nflow;
	uint64_t dropped;
};

/* Reads @path into @tr (0 or -errno; a message on stderr names the
 * file and what is wrong); tr_free() releases it. */
int tr_load(const char *path, struct tr_trace *tr);
void tr_free(struct tr_trace *tr);

/* ptoctl trace ARGS (argv[0] is "trace"); 0 or -errno. */
int ptoctl_trace(int argc, char **argv);

#endif /* PTOCTL_TRACE_H */
