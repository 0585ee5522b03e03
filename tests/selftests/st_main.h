/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The selftests' main(): runs the tests the options select, as newer upstream
 * harnesses do (linux-source-6.1's ignores them). -t/-T test, -f/-F fixture,
 * -v/-V variant include / exclude, -r F.V.T (F.T without variants; TEST()s are
 * in "global"), -l list (exit 4), -h (exit 4). The first option naming a test
 * decides; none, it runs unless something is included. A bad option or an
 * empty selection exits 1. Without options the harness's own
 * test_harness_run(); with, it runs copies of the selected fixtures and tests.
 * Include after kselftest_harness.h.
 */
#ifndef PTO_ST_MAIN_H
#define PTO_ST_MAIN_H

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TEST_HARNESS_MAIN
#error "include kselftest_harness.h before st_main.h (pto_selftest.h)"
#endif

#define ST_MAIN_OPTS "hlt:T:f:F:v:V:r:"

/* One selecting option: its letter and NAME. */
struct st_sel {
	int opt;
	const char *name;
};

static inline void st_usage(FILE *to, const char *prog)
{
	fprintf(to,
		"usage: %s [-h|-l] [-t|-T|-f|-F|-v|-V|-r NAME]...\n"
		"  -t NAME  include test NAME      -T NAME  exclude test NAME\n"
		"  -f NAME  include fixture NAME   -F NAME  exclude fixture NAME\n"
		"  -v NAME  include variant NAME   -V NAME  exclude variant NAME\n"
		"  -r FIXTURE.VARIANT.TEST (FIXTURE.TEST without variants)\n"
		"           include that test (TEST()s: fixture \"global\")\n"
		"  -l       list the selected tests   -h  this help\n"
		"Options repeat; the first one naming a test decides. Without\n"
		"includes, every test not excluded runs.\n", prog);
}

/* Whether @s is "FIXTURE.VARIANT.TEST" (no VARIANT. for none) of @t. */
static inline bool st_full_name_is(const char *s,
				   const struct __fixture_metadata *f,
				   const struct __fixture_variant_metadata *v,
				   const struct __test_metadata *t)
{
	size_t fl = strlen(f->name), vl = strlen(v->name);

	if (strncmp(s, f->name, fl) || s[fl] != '.')
		return false;
	s += fl + 1;
	if (vl) {
		if (strncmp(s, v->name, vl) || s[vl] != '.')
			return false;
		s += vl + 1;
	}
	return !strcmp(s, t->name);
}

/* Whether the @n options @sel select test @t of fixture @f, variant @v. */
static inline bool st_selected(const struct st_sel *sel, int n,
			       const struct __fixture_metadata *f,
			       const struct __fixture_variant_metadata *v,
			       const struct __test_metadata *t)
{
	bool includes = false;
	int i;

	for (i = 0; i < n; i++) {
		const char *name = sel[i].name;
		bool hit;

		switch (tolower(sel[i].opt)) {
		case 't':
			hit = !strcmp(name, t->name);
			break;
		case 'f':
			hit = !strcmp(name, f->name);
			break;
		case 'v':
			hit = !strcmp(name, v->name);
			break;
		default:	/* 'r' */
			hit = st_full_name_is(name, f, v, t);
			break;
		}
		if (hit)
			return islower(sel[i].opt);
		includes |= islower(sel[i].opt);
	}
	return !includes;
}

/* Append @item to a harness list (@head, whose head->prev is its last). */
#define ST_LIST_ADD(head, item) do { \
	(item)->next = NULL; \
	if (!(head)) { \
		(head) = (item); \
	} else { \
		(head)->prev->next = (item); \
		(item)->prev = (head)->prev; \
	} \
	(head)->prev = (item); \
} while (0)

/*
 * A copy of fixture @f without tests, with a copy of variant @v only (none
 * for @f without variants), or NULL when out of memory.
 */
static inline struct __fixture_metadata *
st_fixture_copy(const struct __fixture_metadata *f,
		const struct __fixture_variant_metadata *v)
{
	struct __fixture_metadata *fc = malloc(sizeof(*fc));

	if (!fc)
		return NULL;
	*fc = *f;
	fc->tests = NULL;
	fc->variant = NULL;
	if (f->variant) {
		fc->variant = malloc(sizeof(*v));
		if (!fc->variant) {
			free(fc);
			return NULL;
		}
		*fc->variant = *v;
		fc->variant->prev = fc->variant;
		fc->variant->next = NULL;
	}
	return fc;
}

/*
 * Replace the harness's fixture list by copies holding the tests @sel
 * selects (see the top of this file). The number of tests selected, or
 * -1 when out of memory (the program then exits).
 */
static inline int st_select(const struct st_sel *sel, int n)
{
	static struct __fixture_variant_metadata no_variant = { .name = "" };
	struct __fixture_metadata *f, *list = NULL;
	struct __fixture_variant_metadata *v;
	struct __test_metadata *t, *tc;
	int count = 0;

	for (f = __fixture_list; f; f = f->next) {
		for (v = f->variant ?: &no_variant; v; v = v->next) {
			struct __fixture_metadata *fc = NULL;

			for (t = f->tests; t; t = t->next) {
				if (!st_selected(sel, n, f, v, t))
					continue;
				if (!fc) {
					fc = st_fixture_copy(f, v);
					if (!fc)
						return -1;
					ST_LIST_ADD(list, fc);
				}
				tc = malloc(sizeof(*tc));
				if (!tc)
					return -1;
				*tc = *t;
				tc->fixture = fc;
				ST_LIST_ADD(fc->tests, tc);
				count++;
			}
		}
	}
	/* The originals are static objects: nothing to free. */
	__fixture_list = list;
	return count;
}

/* The tests the harness would run now, one full name a line. */
static inline void st_list(void)
{
	static struct __fixture_variant_metadata no_variant = { .name = "" };
	struct __fixture_metadata *f;
	struct __fixture_variant_metadata *v;
	struct __test_metadata *t;

	for (f = __fixture_list; f; f = f->next)
		for (v = f->variant ?: &no_variant; v; v = v->next)
			for (t = f->tests; t; t = t->next)
				printf("%s.%s%s%s\n", f->name, v->name,
				       v->name[0] ? "." : "", t->name);
}

static inline int st_main(int argc, char **argv)
{
	struct st_sel *sel = calloc(argc > 0 ? argc : 1, sizeof(*sel));
	bool list = false;
	int opt, n = 0, count;

	if (!sel) {
		perror("st_main");
		return KSFT_FAIL;
	}
	while ((opt = getopt(argc, argv, ST_MAIN_OPTS)) != -1) {
		switch (opt) {
		case 'l':
			list = true;
			break;
		case 'h':
			st_usage(stdout, argv[0]);
			free(sel);
			return KSFT_SKIP;
		case '?':
			st_usage(stderr, argv[0]);
			free(sel);
			return KSFT_FAIL;
		default:
			sel[n].opt = opt;
			sel[n++].name = optarg;
			break;
		}
	}
	if (!n && !list) {
		free(sel);
		return test_harness_run(argc, argv);
	}
	count = st_select(sel, n);
	free(sel);
	if (count < 0) {
		perror("st_main");
		return KSFT_FAIL;
	}
	if (!count) {
		fprintf(stderr, "%s: no test matches the options (-l lists them)\n",
			argv[0]);
		return KSFT_FAIL;
	}
	if (list) {
		st_list();
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}

/*
 * The harness's TEST_HARNESS_MAIN with st_main() in place of
 * test_harness_run(); the constructor is the harness's own (its lists are
 * built in source order whichever way the toolchain runs constructors).
 */
#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN \
	static void __attribute__((constructor)) \
	__constructor_order_last(void) \
	{ \
		if (!__constructor_order) \
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	} \
	int main(int argc, char **argv) \
	{ \
		return st_main(argc, argv); \
	}

#endif
