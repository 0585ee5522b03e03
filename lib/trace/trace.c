// SPDX-License-Identifier: MIT
/*
 * The run-trace recorder's setup side: the trace object, per-thread
 * buffers and the names the file shows. The record path is inline in
 * trace.h; nothing here runs per task.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pto.h>
#include "trace/trace_priv.h"

_Thread_local struct trace_buf *trace_self;

void trace_self_enter(struct trace *t, enum trace_role role, uint32_t index)
{
	struct trace_buf *b = NULL;

	if (t && trace_buf_get(t, role, index, &b))
		b = NULL;	/* no memory: this thread's records are lost */
	trace_self = b;
}

/* The TSC ticks at one constant rate on every CPU, in every P- and
 * C-state (the kernel's constant_tsc and nonstop_tsc flags). */
static bool tsc_constant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	bool constant = false, nonstop = false;
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
#else
	return false;
#endif
}

int trace_create(size_t buf_bytes, uint32_t ncores, struct trace **out)
{
	struct trace *t;

	*out = NULL;
	if (buf_bytes < sizeof(struct trace_buf) + sizeof(struct trace_rec) ||
	    ncores > TRACE_NO_CORE)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->core_type = calloc(ncores ? ncores : 1, 1);
	if (!t->core_type) {
		free(t);
		return -ENOMEM;
	}
	t->buf_bytes = buf_bytes;
	t->ncores = ncores;
	t->ticks = tsc_constant();
	if (t->ticks)
		trace_clock_pair(&t->tick0, &t->ns0);
	pthread_mutex_init(&t->names_lock, NULL);
	*out = t;
	return 0;
}

void trace_destroy(struct trace *t)
{
	struct trace_buf *b, *next;
	uint32_t i;

	if (!t)
		return;
	for (b = t->bufs; b; b = next) {
		next = b->next;
		free(b);
	}
	for (i = 0; i < t->nfuncs; i++)
		free(t->funcs[i].name);
	free(t->funcs);
	free(t->core_type);
	pthread_mutex_destroy(&t->names_lock);
	free(t);
}

int trace_buf_get(struct trace *t, enum trace_role role, uint32_t index,
		  struct trace_buf **out)
{
	size_t cap = (t->buf_bytes - sizeof(struct trace_buf)) /
		     sizeof(struct trace_rec), len, off;
	struct trace_buf *b;

	*out = NULL;
	if ((unsigned int)role >= TRACE_ROLE_NR)
		return -EINVAL;
	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	len = sizeof(*b) + cap * sizeof(struct trace_rec);
	b = malloc(len);
	if (!b)
		return -ENOMEM;
	/*
	 * Every page written now, not by the records of a run: a first
	 * touch's fault costs more than a hundred records. Volatile stores:
	 * the compiler turns malloc + memset(0) into calloc, which leaves a
	 * fresh mapping's pages untouched.
	 */
	for (off = 0; off < len; off += 4096)
		((volatile char *)b)[off] = 0;
	memset(b, 0, sizeof(*b));
	b->role = role;
	b->index = index;
	b->cap = (uint32_t)cap;
	b->ticks = t->ticks;
	/* Release: the writer's acquire load of the head sees b's fields. */
	b->next = __atomic_load_n(&t->bufs, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&t->bufs, &b->next, b, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	*out = b;
	return 0;
}

int trace_func_name(struct trace *t, uint32_t func, const char *name)
{
	struct trace_func *f;
	char *copy;
	uint32_t i;

	if (!name || !*name)
		return -EINVAL;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&t->names_lock);
	for (i = 0; i < t->nfuncs; i++) {
		if (t->funcs[i].id == func) {
			free(t->funcs[i].name);
			t->funcs[i].name = copy;
			pthread_mutex_unlock(&t->names_lock);
			return 0;
		}
	}
	f = realloc(t->funcs, (t->nfuncs + 1) * sizeof(*f));
	if (!f) {
		pthread_mutex_unlock(&t->names_lock);
		free(copy);
		return -ENOMEM;
	}
	t->funcs = f;
	f[t->nfuncs].id = func;
	f[t->nfuncs].name = copy;
	t->nfuncs++;
	pthread_mutex_unlock(&t->names_lock);
	return 0;
}

int trace_core_type(struct trace *t, uint16_t core, uint32_t type)
{
	if (core >= t->ncores || (type != PTO_CORE_AIC && type != PTO_CORE_AIV))
		return -EINVAL;
	t->core_type[core] = (uint8_t)type;
	return 0;
}

void trace_counts(struct trace *t, uint64_t *records, uint64_t *dropped)
{
	struct trace_buf *b;

	*records = 0;
	*dropped = 0;
	for (b = __atomic_load_n(&t->bufs, __ATOMIC_ACQUIRE); b; b = b->next) {
		*records += __atomic_load_n(&b->n, __ATOMIC_ACQUIRE);
		*dropped += __atomic_load_n(&b->dropped, __ATOMIC_RELAXED);
	}
}
