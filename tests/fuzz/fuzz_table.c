// SPDX-License-Identifier: GPL-2.0
/*
 * pto-fuzz's operations and their weights: a new operation (lanes,
 * captures, graph launches) is one function and one line here. The
 * conductor picks among the entries of nonzero weight; "verify" it runs
 * on every actor before each check of the device's state.
 */
#include "fuzz_actor.h"

const struct fz_op fz_ops[] = {
	{ "alloc", 12, op_alloc },
	{ "free", 8, op_free },
	{ "info", 4, op_info },
	{ "map", 6, op_map },
	{ "unmap", 4, op_unmap },
	{ "acquire", 8, op_acquire },
	{ "release", 4, op_release },
	{ "launch", 8, op_launch },
	{ "task", 16, op_task },
	{ "doorbell", 4, op_doorbell },
	{ "retire", 4, op_retire },
	{ "stats", 4, op_stats },
	{ "fork", 2, op_fork },
	{ "reopen", 1, op_reopen },
	{ "race", 3, op_race },
	{ "bind", 3, op_bind },
	{ "capture", 8, op_capture },
	{ "ack", 3, op_ack },
	{ "dclose", 2, op_dclose },
	{ "unbind", 2, op_unbind },
	{ "dstatus", 2, op_dstatus },
	{ "graph", 8, op_graph },
	{ "verify", 0, op_verify },
};
const unsigned int fz_nops = sizeof(fz_ops) / sizeof(fz_ops[0]);
const unsigned int fz_op_verify = sizeof(fz_ops) / sizeof(fz_ops[0]) - 1;
