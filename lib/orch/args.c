// SPDX-License-Identifier: MIT
/*
 * Task-argument builder. Plain growable arrays owned by the caller; submit
 * copies them into the slot. No fixed cap on tensors, scalars or deps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <pto/orch.h>

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t nc;
	void *p;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 8;
	if (nc < need)
		nc = need;
	p = realloc(*arr, (size_t)nc * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

PTO_API void pto_args_init(struct pto_task_args *a)
{
	memset(a, 0, sizeof(*a));
}

PTO_API void pto_args_reset(struct pto_task_args *a)
{
	a->ntensors = a->nscalars = a->ndeps = 0;
}

PTO_API void pto_args_fini(struct pto_task_args *a)
{
	free(a->tensors);
	free(a->scalars);
	free(a->scalar_dump);
	free(a->deps);
	memset(a, 0, sizeof(*a));
}

PTO_API int pto_args_add_tensor(struct pto_task_args *a,
				const struct pto_tensor *t, enum pto_tag tag)
{
	struct pto_arg_tensor *x;

	if ((unsigned)tag >= PTO_TAG_NR || t->space >= PTO_SPACE_NR)
		return -EINVAL;
	if (a->ntensors == a->cap_tensors &&
	    grow((void **)&a->tensors, &a->cap_tensors, a->ntensors + 1,
		 sizeof(*a->tensors)))
		return -ENOMEM;
	/* Field by field: a memset of the whole entry before the copy costs
	 * as much as the copy (this is on every submit's path). */
	x = &a->tensors[a->ntensors];
	x->t = *t;
	x->tag = (uint8_t)tag;
	x->dump = 0;
	memset(x->pad, 0, sizeof(x->pad));
	return (int)a->ntensors++;
}

PTO_API int pto_args_add_scalar(struct pto_task_args *a, uint64_t v)
{
	uint32_t cap = a->cap_scalars;

	/* scalars and scalar_dump share cap_scalars: grow both to the
	 * same capacity (grow's policy depends only on cap and need). */
	if (grow((void **)&a->scalar_dump, &cap, a->nscalars + 1, 1) ||
	    grow((void **)&a->scalars, &a->cap_scalars, a->nscalars + 1,
		 sizeof(*a->scalars)))
		return -ENOMEM;
	a->scalars[a->nscalars] = v;
	a->scalar_dump[a->nscalars] = 0;
	return (int)a->nscalars++;
}

static int add_dep(struct pto_task_args *a, struct pto_task h, uint8_t retain)
{
	if (grow((void **)&a->deps, &a->cap_deps, a->ndeps + 1, sizeof(*a->deps)))
		return -ENOMEM;
	memset(&a->deps[a->ndeps], 0, sizeof(a->deps[0]));
	a->deps[a->ndeps].h = h;
	a->deps[a->ndeps].retain = retain;
	a->ndeps++;
	return 0;
}

PTO_API int pto_args_add_dep(struct pto_task_args *a, struct pto_task h)
{
	return add_dep(a, h, 1);
}

PTO_API int pto_args_add_dep_wait(struct pto_task_args *a, struct pto_task h)
{
	return add_dep(a, h, 0);
}

PTO_API int pto_args_set_dump(struct pto_task_args *a, int is_scalar,
			      uint32_t idx, uint8_t mark)
{
	if (is_scalar) {
		if (idx >= a->nscalars)
			return -EINVAL;
		a->scalar_dump[idx] = mark;
	} else {
		if (idx >= a->ntensors)
			return -EINVAL;
		a->tensors[idx].dump = mark;
	}
	return 0;
}
