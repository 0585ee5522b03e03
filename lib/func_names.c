// SPDX-License-Identifier: MIT
/* The built-in kernels' names (PTO_FUNC_*): the trace's and ptoctl's. */
#include <stddef.h>
#include <linux/pto.h>
#include "core.h"

static const char *const func_names[PTO_FUNC_COUNT] = {
	[PTO_FUNC_NOOP] = "noop",
	[PTO_FUNC_ADD] = "add",
	[PTO_FUNC_SUB] = "sub",
	[PTO_FUNC_MUL] = "mul",
	[PTO_FUNC_ADD_SCALAR] = "add_scalar",
	[PTO_FUNC_MUL_SCALAR] = "mul_scalar",
	[PTO_FUNC_COPY] = "copy",
	[PTO_FUNC_FILL] = "fill",
	[PTO_FUNC_REDUCE_SUM] = "reduce_sum",
	[PTO_FUNC_MATMUL] = "matmul",
	[PTO_FUNC_SPIN_NS] = "spin_ns",
	[PTO_FUNC_FAULT] = "fault",
	[PTO_FUNC_HANG] = "hang",
	[PTO_FUNC_BLOCK_ID] = "block_id",
};

const char *core_func_name(uint32_t func)
{
	return func < PTO_FUNC_COUNT ? func_names[func] : NULL;
}
