// SPDX-License-Identifier: MIT
/*
 * pto-bench-starpu: StarPU 1.3's side of pto-bench on the same shapes (noop
 * tasks, dependencies from data access modes): chain, independent, fanout,
 * wavefront. "pto-bench-starpu SHAPE N WORKERS" prints "tasks_per_s X". Built
 * by make tools/bench/pto-bench-starpu.
 */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAN 16

static void noop(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

static struct starpu_codelet cl0 = {
	.cpu_funcs = { noop }, .nbuffers = 0, .name = "noop0",
};
static struct starpu_codelet cl_rw = {
	.cpu_funcs = { noop }, .nbuffers = 1, .modes = { STARPU_RW }, .name = "rw",
};
static struct starpu_codelet cl_r = {
	.cpu_funcs = { noop }, .nbuffers = 1, .modes = { STARPU_R }, .name = "r",
};
static struct starpu_codelet cl_w = {
	.cpu_funcs = { noop }, .nbuffers = 1, .modes = { STARPU_W }, .name = "w",
};
static struct starpu_codelet cl_rw1 = {
	.cpu_funcs = { noop }, .nbuffers = 2, .modes = { STARPU_R, STARPU_W },
	.name = "r_w",
};
static struct starpu_codelet cl_rrw = {
	.cpu_funcs = { noop }, .nbuffers = 3,
	.modes = { STARPU_R, STARPU_R, STARPU_W }, .name = "r_r_w",
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int submit(struct starpu_codelet *cl, starpu_data_handle_t *h)
{
	struct starpu_task *t = starpu_task_create();
	unsigned i;

	t->cl = cl;
	for (i = 0; i < (unsigned)cl->nbuffers; i++)
		t->handles[i] = h[i];
	return starpu_task_submit(t);
}

/* Submit @n tasks of @shape over the @w x @w grid handles @hs. */
static int run_shape(const char *shape, long n, long w,
		     starpu_data_handle_t *hs)
{
	starpu_data_handle_t h = hs[0];
	long i;
	int err = 0;

	if (!strcmp(shape, "chain")) {
		for (i = 0; i < n && !err; i++)
			err = submit(&cl_rw, &h);
	} else if (!strcmp(shape, "independent")) {
		for (i = 0; i < n && !err; i++)
			err = submit(&cl0, NULL);
	} else if (!strcmp(shape, "fanout")) {
		for (i = 0; i < n && !err; i++) {
			long pos = i % (FAN + 2);

			err = submit(pos == 0 || pos == FAN + 1 ? &cl_rw : &cl_r, &h);
		}
	} else {	/* wavefront */
		for (i = 0; i < n && !err; i++) {
			long r = i / w, c = i % w;
			starpu_data_handle_t a[3];

			if (r >= w) {
				err = submit(&cl0, NULL);
				continue;
			}
			if (r && c) {
				a[0] = hs[(r - 1) * w + c];
				a[1] = hs[r * w + c - 1];
				a[2] = hs[r * w + c];
				err = submit(&cl_rrw, a);
			} else if (r || c) {
				a[0] = r ? hs[(r - 1) * w + c] : hs[r * w + c - 1];
				a[1] = hs[r * w + c];
				err = submit(&cl_rw1, a);
			} else {
				err = submit(&cl_w, &hs[0]);
			}
		}
	}
	starpu_task_wait_for_all();
	return err;
}

int main(int argc, char **argv)
{
	static const char *const shapes[] = {
		"chain", "independent", "fanout", "wavefront",
	};
	struct starpu_conf conf;
	starpu_data_handle_t *hs = NULL;
	long n, i, w = 1, nh = 0;
	double t0, t;
	int err = 0, known = 0;
	uint64_t *vals;

	if (argc < 4) {
		fprintf(stderr, "usage: %s SHAPE N WORKERS\n", argv[0]);
		return 2;
	}
	for (i = 0; i < 4; i++)
		known |= !strcmp(argv[1], shapes[i]);
	if (!known) {
		fprintf(stderr, "unknown shape %s\n", argv[1]);
		return 2;
	}
	n = atol(argv[2]);
	setenv("STARPU_SILENT", "1", 0);
	setenv("STARPU_HOME", "/tmp", 0);
	starpu_conf_init(&conf);
	conf.ncpus = atoi(argv[3]);
	conf.ncuda = 0;
	conf.nopencl = 0;
	if (starpu_init(&conf))
		return 1;
	if (!strcmp(argv[1], "wavefront"))
		while ((w + 1) * (w + 1) <= n)
			w++;
	nh = !strcmp(argv[1], "wavefront") ? w * w : 1;
	vals = calloc((size_t)nh, sizeof(*vals));
	hs = calloc((size_t)nh, sizeof(*hs));
	for (i = 0; i < nh; i++)
		starpu_variable_data_register(&hs[i], STARPU_MAIN_RAM,
					      (uintptr_t)&vals[i], sizeof(vals[i]));

	/*
	 * Untimed warm-up of a quarter of the size (at least 1024) in the
	 * same StarPU instance, as pto-bench does for its orchestrator: the
	 * timed run then measures the runtime's steady state (its task
	 * allocator, queues and workers warm), not the first touches.
	 */
	err = run_shape(argv[1], n / 4 > 1024 ? n / 4 : 1024, w, hs);
	t0 = now();
	if (!err)
		err = run_shape(argv[1], n, w, hs);
	t = now() - t0;
	for (i = 0; i < nh; i++)
		starpu_data_unregister(hs[i]);
	starpu_shutdown();
	free(hs);
	free(vals);
	if (err)
		return 1;
	printf("tasks_per_s %.0f\n", (double)n / t);
	return 0;
}
