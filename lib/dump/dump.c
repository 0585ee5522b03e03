// SPDX-License-Identifier: MIT
/*
 * The dump set: records and their payload bytes as the collector hands
 * them over, and the names the file gives the record's fields.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dump/dump.h"

static const char *const stage_names[DUMP_STAGE_NR] = {
	[DUMP_BEFORE_DISPATCH] = "before_dispatch",
	[DUMP_AFTER_COMPLETION] = "after_completion",
};
static const char *const role_names[DUMP_ROLE_NR] = {
	[DUMP_ROLE_INPUT] = "input",
	[DUMP_ROLE_OUTPUT] = "output",
	[DUMP_ROLE_INOUT] = "inout",
};
static const char *const kind_names[DUMP_KIND_NR] = {
	[DUMP_KIND_TENSOR] = "tensor",
	[DUMP_KIND_SCALAR] = "scalar",
};

const char *dump_stage_name(unsigned int stage)
{
	return stage < DUMP_STAGE_NR ? stage_names[stage] : NULL;
}

const char *dump_role_name(unsigned int role)
{
	return role < DUMP_ROLE_NR ? role_names[role] : NULL;
}

const char *dump_kind_name(unsigned int kind)
{
	return kind < DUMP_KIND_NR ? kind_names[kind] : NULL;
}

const char *dump_dtype_name(uint32_t dtype)
{
	switch (dtype) {
	case PTO_DTYPE_F32:
		return "float32";
	case PTO_DTYPE_I32:
		return "int32";
	}
	return NULL;
}

size_t dump_dtype_size(uint32_t dtype)
{
	return dump_dtype_name(dtype) ? 4 : 0;
}

int dump_name_index(const char *(*name_of)(unsigned int), unsigned int n,
		    const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(name_of(i), name))
			return (int)i;
	return -1;
}

uint32_t dump_dtype_of(const char *name)
{
	uint32_t d;

	for (d = PTO_DTYPE_F32; d <= PTO_DTYPE_I32; d++)
		if (!strcmp(dump_dtype_name(d), name))
			return d;
	return 0;
}

uint64_t dump_numel(unsigned int rank, const uint32_t *shape)
{
	uint64_t n = 1;
	unsigned int i;

	for (i = 0; i < rank; i++)
		n *= shape[i];
	return n;
}

bool dump_is_contiguous(unsigned int rank, const uint32_t *shape,
			const uint64_t *strides)
{
	uint64_t want = 1;
	unsigned int i;

	for (i = rank; i-- > 0;) {
		/* A dimension of one element has no neighbour to stride to. */
		if (shape[i] != 1 && strides[i] != want)
			return false;
		want *= shape[i];
	}
	return true;
}

void dump_set_init(struct dump_set *s, uint32_t level)
{
	memset(s, 0, sizeof(*s));
	s->level = level;
}

void dump_set_fini(struct dump_set *s)
{
	free(s->rec);
	free(s->bin);
	memset(s, 0, sizeof(*s));
}

/* Room for @need elements of @size in *@p of *@cap (doubling). */
static int reserve(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

int dump_set_append(struct dump_set *s, const struct dump_rec *r, size_t len,
		    struct dump_rec **added, uint8_t **payload)
{
	struct dump_rec *d;

	if (reserve((void **)&s->rec, &s->cap, s->n + 1, sizeof(*s->rec)) ||
	    reserve((void **)&s->bin, &s->bin_cap, s->bin_len + len, 1))
		return -ENOMEM;
	d = &s->rec[s->n++];
	*d = *r;
	d->bin_offset = len ? s->bin_len : 0;
	d->bin_size = len;
	*payload = s->bin ? s->bin + s->bin_len : NULL;
	s->bin_len += len;
	s->collected++;
	*added = d;
	return 0;
}

int dump_set_add(struct dump_set *s, const struct dump_rec *r,
		 const void *payload, size_t len)
{
	struct dump_rec *d;
	uint8_t *p;
	int ret = dump_set_append(s, r, len, &d, &p);

	if (!ret && len)
		memcpy(p, payload, len);
	return ret;
}
