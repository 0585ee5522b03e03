// SPDX-License-Identifier: MIT
/* ptoctl exec: one built-in kernel on one core, its output printed (a
 * debugging aid; holds the core's cluster for the duration). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pto/pto.h>
#include "core.h"
#include "examples.h"
#include "ptoctl.h"

/*
 * A tensor dimension (--shape's, --n): ptoctl_parse_u32()'s number, and not 0
 * (-EDOM): an empty tensor is no kernel's operand, refused late
 * otherwise, after the cluster was taken (a 0-byte BO_ALLOC is -EINVAL,
 * matmul's --n 0 the kernel's ESHAPE).
 */
static int parse_dim(const char *s, char **end, uint32_t *out)
{
	int ret = ptoctl_parse_u32(s, end, out);

	if (ret)
		return ret;
	return *out ? 0 : -EDOM;
}

static const char *const task_errs[] = {
	"ok", "EFUNC (unknown func_id)", "EDTYPE (bad dtype)",
	"ESHAPE (bad shape or stride)", "EADDR (address outside the owner's GM)",
	"EFAULT (device fault)", "ESTOP (stopped)", "EINVAL (bad payload)",
};

struct exec_opts {
	uint32_t dev, core, n;
	unsigned int dtype, rank;
	int func;
	uint32_t shape[PTO_TENSOR_MAX_RANK];
	const char *a, *b, *scalar;
	uint64_t ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* One value of @dtype from text, as its 32-bit pattern. */
static int parse_val(const char *s, unsigned int dtype, uint32_t *out)
{
	char *end;

	errno = 0;
	if (dtype == PTO_DTYPE_F32) {
		float f = strtof(s, &end);

		memcpy(out, &f, 4);
	} else {
		/* Decimal, in int32 range: base 0 read "010" as 8, and a
		 * cast kept the low 32 bits of 4294967297. */
		long long v = strtoll(s, &end, 10);

		if (v < INT32_MIN || v > INT32_MAX)
			return -EINVAL;
		*out = (uint32_t)(int32_t)v;
	}
	return errno || end == s || (*end && *end != ',') ? -EINVAL : 0;
}

/* A whole "V,V,.." list of @dtype values (@one: exactly one value). */
static int check_vals(const char *list, unsigned int dtype, bool one)
{
	const char *p = list;
	uint32_t v;

	for (;;) {
		if (parse_val(p, dtype, &v))
			return -EINVAL;
		p = strchr(p, ',');
		if (!p)
			return 0;
		if (one || !*++p)
			return -EINVAL;
	}
}

/* Fill @n words from "V,V,.." (repeated), or with @dflt(i) if NULL. */
static int fill_vals(uint32_t *w, uint64_t n, const char *list,
		     unsigned int dtype, float dflt_mul)
{
	const char *p = list;
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (!list) {
			float f = dflt_mul * (float)i;

			if (dtype == PTO_DTYPE_F32)
				memcpy(&w[i], &f, 4);
			else
				w[i] = (uint32_t)(dflt_mul * i);
			continue;
		}
		if (parse_val(p, dtype, &w[i]))
			return -EINVAL;
		p = strchr(p, ',');
		p = p ? p + 1 : list;
	}
	return 0;
}

static void print_vals(const uint32_t *w, uint64_t n, uint32_t cols,
		       unsigned int dtype)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		float f;

		memcpy(&f, &w[i], 4);
		if (dtype == PTO_DTYPE_F32)
			printf("%s%g", i % cols ? " " : "  ", f);
		else
			printf("%s%d", i % cols ? " " : "  ", (int32_t)w[i]);
		if (i % cols == cols - 1 || i == n - 1)
			printf("\n");
	}
}

static int parse_exec(int argc, char **argv, struct exec_opts *o)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "core", required_argument, NULL, 'c' },
		{ "func", required_argument, NULL, 'f' },
		{ "dtype", required_argument, NULL, 't' },
		{ "shape", required_argument, NULL, 's' },
		{ "n", required_argument, NULL, 'n' },
		{ "a", required_argument, NULL, 'a' },
		{ "b", required_argument, NULL, 'b' },
		{ "scalar", required_argument, NULL, 'S' },
		{ "ns", required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	char *end, *p;
	int c, i, ret;

	memset(o, 0, sizeof(*o));
	o->func = -1;
	o->dtype = PTO_DTYPE_F32;
	o->rank = 1;
	o->shape[0] = 8;
	o->n = 4;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:c:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (ptoctl_parse_u32(optarg, &end, &o->dev) || *end) {
				fprintf(stderr, "ptoctl: bad device '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			if (ptoctl_parse_u32(optarg, &end, &o->core) || *end) {
				fprintf(stderr, "ptoctl: bad --core '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'f':
			for (i = 0; i < PTO_FUNC_COUNT; i++)
				if (!strcmp(optarg, core_func_name(i)))
					o->func = i;
			if (o->func < 0) {
				fprintf(stderr, "ptoctl: unknown kernel '%s'; the kernels:",
					optarg);
				for (i = 0; i < PTO_FUNC_COUNT; i++)
					fprintf(stderr, " %s", core_func_name(i));
				fprintf(stderr, "\n");
				return -EINVAL;
			}
			break;
		case 't':
			if (!strcmp(optarg, "f32"))
				o->dtype = PTO_DTYPE_F32;
			else if (!strcmp(optarg, "i32"))
				o->dtype = PTO_DTYPE_I32;
			else {
				fprintf(stderr, "ptoctl: bad --dtype '%s' (f32 or i32)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 's':
			o->rank = 0;
			/* Dimensions separated by single x's; "2x" is a
			 * mistake, not shape 2. */
			for (p = optarg; *p && o->rank < PTO_TENSOR_MAX_RANK;) {
				ret = parse_dim(p, &end, &o->shape[o->rank++]);
				if (ret || (*end && (*end != 'x' || !end[1]))) {
					fprintf(stderr,
						"ptoctl: bad --shape '%s' (%sdimensions 1..%u)\n",
						optarg,
						ret == -EDOM ? "a dimension is 0; " : "",
						UINT32_MAX);
					return -EINVAL;
				}
				p = *end ? end + 1 : end;
			}
			if (*p || !o->rank) {
				fprintf(stderr, "ptoctl: bad --shape '%s' (1 to %d dimensions, DxD..)\n",
					optarg, PTO_TENSOR_MAX_RANK);
				return -EINVAL;
			}
			break;
		case 'n':
			ret = parse_dim(optarg, &end, &o->n);
			if (ret || *end) {
				fprintf(stderr, "ptoctl: bad --n '%s' (%s1..%u)\n",
					optarg,
					ret == -EDOM ? "0 is an empty tensor; " : "",
					UINT32_MAX);
				return -EINVAL;
			}
			break;
		case 'a':
			o->a = optarg;
			break;
		case 'b':
			o->b = optarg;
			break;
		case 'S':
			o->scalar = optarg;
			break;
		case 'N':
			errno = 0;
			o->ns = strtoull(optarg, &end, 10);
			if (errno || !isdigit((unsigned char)*optarg) || *end) {
				fprintf(stderr, "ptoctl: bad --ns '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		default:
			ptoctl_bad_option(argv, c);
			fprintf(stderr, "usage: ptoctl %s\n", PTOCTL_EXEC_USAGE);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ptoctl: unexpected argument '%s'\nusage: ptoctl %s\n",
			argv[optind], PTOCTL_EXEC_USAGE);
		return -EINVAL;
	}
	/* The values, checked before any device work, each refusal
	 * naming the option. */
	{
		const struct { const char *opt, *val; bool one; } v[] = {
			{ "a", o->a, false }, { "b", o->b, false },
			{ "scalar", o->scalar, true },
		};
		unsigned int k;

		for (k = 0; k < 3; k++) {
			if (!v[k].val || !check_vals(v[k].val, o->dtype, v[k].one))
				continue;
			fprintf(stderr, "ptoctl: bad --%s '%s' (%s; %s)\nusage: ptoctl %s\n",
				v[k].opt, v[k].val,
				v[k].one ? "one value" : "values V,V,..",
				o->dtype == PTO_DTYPE_I32 ?
				"i32: decimal, -2147483648..2147483647" : "f32",
				PTOCTL_EXEC_USAGE);
			return -EINVAL;
		}
	}
	if (o->func < 0) {
		fprintf(stderr, "ptoctl: exec needs --func\n");
		return -EINVAL;
	}
	if (o->func == PTO_FUNC_MATMUL && o->rank != 2) {
		fprintf(stderr, "ptoctl: matmul needs --shape MxK and --n N\n");
		return -EINVAL;
	}
	return 0;
}

static void exec_tensor(struct pto_tensor_desc *t, uint64_t addr,
			unsigned int dtype, unsigned int rank,
			const uint32_t *shape)
{
	uint64_t s = 1;
	int i;

	memset(t, 0, sizeof(*t));
	t->addr = addr;
	t->dtype = dtype;
	t->rank = rank;
	for (i = (int)rank - 1; i >= 0; i--) {
		t->shape[i] = shape[i];
		t->strides[i] = s;
		s *= shape[i];
	}
}

/*
 * The words of the A, B and output tensors of @o, one after the other in
 * one buffer, and its size in bytes: 0, or -EOVERFLOW if any of them does
 * not fit 64 bits (--shape 2x1x1073741824x1073741824 has 2^61 elements,
 * whose byte count would wrap).
 */
static int exec_sizes(const struct exec_opts *o, uint64_t *a_words,
		      uint64_t *b_words, uint64_t *o_words, uint64_t *bytes)
{
	uint64_t total;
	unsigned int i;

	*a_words = 1;
	for (i = 0; i < o->rank; i++)
		if (__builtin_mul_overflow(*a_words, o->shape[i], a_words))
			return -EOVERFLOW;
	if (o->func == PTO_FUNC_MATMUL) {
		/* A: M x K, B: K x N, out: M x N (u32 x u32 fits). */
		*b_words = (uint64_t)o->shape[1] * o->n;
		*o_words = (uint64_t)o->shape[0] * o->n;
	} else {
		*b_words = *a_words;
		*o_words = o->func == PTO_FUNC_REDUCE_SUM ? 1 : *a_words;
	}
	if (__builtin_add_overflow(*a_words, *b_words, &total) ||
	    __builtin_add_overflow(total, *o_words, &total) ||
	    __builtin_mul_overflow(total, 4, bytes))
		return -EOVERFLOW;
	return 0;
}

int ptoctl_exec(int argc, char **argv)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0 }, elems, b_elems, bytes, t0;
	uint32_t bshape[2], oshape[PTO_TENSOR_MAX_RANK], orank, *w;
	struct pto_payload p = { 0 };
	struct core_launch *l = NULL;
	struct pto_bo *bo = NULL;
	struct pto_dev_info info;
	struct pto_dev *dev;
	struct exec_opts o;
	struct core_rc *c;
	struct core_done done[2];
	uint64_t a_addr, b_addr, o_addr, o_elems;
	unsigned int i, cluster;
	int ret, ring, n = 0;

	ret = parse_exec(argc, argv, &o);
	if (ret)
		return ret;
	ret = ptoctl_open_index(o.dev, &dev);
	if (ret)
		return ret;
	pto_dev_info(dev, &info);
	/* core_type[] and cores[] bound it too, whatever the driver says. */
	if (o.core >= info.cores || o.core >= PTO_DEV_MAX_CORES ||
	    o.core >= PTO_CORE_MASK_WORDS * 64) {
		fprintf(stderr, "ptoctl: core %u: the device has %u\n", o.core,
			info.cores);
		ret = -EINVAL;
		goto out_close;
	}
	/* Before anything is taken: the buffer must fit the device's GM. */
	ret = exec_sizes(&o, &elems, &b_elems, &o_elems, &bytes);
	/* A buffer is at most the GM less its reserved low part (pto.h). */
	if (ret || bytes > info.gm_size - PTO_GM_RESERVED) {
		if (ret)
			fprintf(stderr,
				"ptoctl: --shape: the tensors' size overflows 64 bits\n");
		else
			fprintf(stderr,
				"ptoctl: --shape: the tensors need %llu bytes, more than a buffer of the device's GM can hold (%llu bytes)\n",
				(unsigned long long)bytes,
				(unsigned long long)(info.gm_size -
						     PTO_GM_RESERVED));
		ret = -EFBIG;
		goto out_close;
	}
	cluster = o.core / PTO_CORES_PER_CLUSTER;
	ret = core_cluster_acquire(dev, 1ull << cluster);
	if (ret) {
		fprintf(stderr, "ptoctl: cluster %u: %s\n", cluster,
			ret == -EBUSY ? "owned by another process" :
					pto_strerror(ret));
		goto out_close;
	}
	cores[o.core / 64] = 1ull << (o.core % 64);
	ret = core_launch_cores(dev, cores, &l);
	if (ret) {
		fprintf(stderr, "ptoctl: launch core %u: %s\n", o.core,
			pto_strerror(ret));
		goto out_release;
	}

	memcpy(oshape, o.shape, sizeof(oshape));
	orank = o.rank;
	bshape[0] = o.shape[0];
	bshape[1] = o.rank > 1 ? o.shape[1] : 1;
	if (o.func == PTO_FUNC_MATMUL) {
		bshape[0] = o.shape[1];
		bshape[1] = o.n;
		oshape[1] = o.n;
	} else if (o.func == PTO_FUNC_REDUCE_SUM) {
		orank = 1;
		oshape[0] = 1;
	}
	ret = pto_bo_alloc(dev, bytes, 0, &bo);
	if (!ret)
		ret = pto_bo_map(bo, (void **)&w);
	if (ret) {
		fprintf(stderr, "ptoctl: GM: %s\n", pto_strerror(ret));
		goto out_free;
	}
	a_addr = pto_bo_dev_addr(bo);
	b_addr = a_addr + elems * 4;
	o_addr = b_addr + b_elems * 4;
	if (fill_vals(w, elems, o.a, o.dtype, 1.0f) ||
	    fill_vals(w + elems, b_elems, o.b, o.dtype, 10.0f)) {
		fprintf(stderr, "ptoctl: bad --a / --b values\n");
		ret = -EINVAL;
		goto out_free;
	}

	p.func_id = (uint32_t)o.func;
	switch (o.func) {
	case PTO_FUNC_ADD:
	case PTO_FUNC_SUB:
	case PTO_FUNC_MUL:
		exec_tensor(&p.t[PTO_ARG_B], b_addr, o.dtype, o.rank, o.shape);
		/* fall through */
	case PTO_FUNC_ADD_SCALAR:
	case PTO_FUNC_MUL_SCALAR:
	case PTO_FUNC_COPY:
	case PTO_FUNC_REDUCE_SUM:
		exec_tensor(&p.t[PTO_ARG_A], a_addr, o.dtype, o.rank, o.shape);
		/* fall through */
	case PTO_FUNC_FILL:
		exec_tensor(&p.t[PTO_ARG_OUT], o_addr, o.dtype, orank, oshape);
		break;
	case PTO_FUNC_MATMUL:
		exec_tensor(&p.t[PTO_ARG_A], a_addr, o.dtype, 2, o.shape);
		exec_tensor(&p.t[PTO_ARG_B], b_addr, o.dtype, 2, bshape);
		exec_tensor(&p.t[PTO_ARG_OUT], o_addr, o.dtype, 2, oshape);
		break;
	case PTO_FUNC_SPIN_NS:
	case PTO_FUNC_HANG:
		p.scalar[0] = o.ns;
		break;
	}
	if (o.scalar) {
		uint32_t v;

		if (parse_val(o.scalar, o.dtype, &v)) {
			ret = -EINVAL;
			goto out_free;
		}
		p.scalar[0] = v;
	}

	c = &l->core[0];
	memcpy(core_rc_next_payload(c), &p, sizeof(p));
	t0 = now_ns();
	core_rc_dispatch(c, &ring);
	if (ring)
		core_doorbell(l, cores);
	while (!n) {
		n = core_rc_reap(c, done);
		if (!n && now_ns() - t0 > 1000000) {
			ret = core_launch_wait(l, 30000);
			if (ret)
				goto out_free;
		}
	}
	printf("core %u (%s) %s: status %u %s, COND 0x%08x, %.1f us\n",
	       o.core, info.core_type[o.core] == PTO_CORE_AIC ? "AIC" :
								     "AIV",
	       core_func_name(o.func), done[0].status,
	       done[0].status < 8 ? task_errs[done[0].status] : "?",
	       core_win_read(c, PTO_REG_COND), (now_ns() - t0) / 1e3);
	if (!done[0].status && p.t[PTO_ARG_OUT].rank) {
		printf("out [");
		for (i = 0; i < orank; i++)
			printf("%s%u", i ? "x" : "", oshape[i]);
		printf("]:\n");
		print_vals(w + (o_addr - a_addr) / 4, o_elems,
			   oshape[orank - 1], o.dtype);
	}
	ret = done[0].status ? -EIO : 0;
out_free:
	pto_bo_free(bo);
	core_launch_free(l);
out_release:
	core_cluster_release(dev, 1ull << cluster);
out_close:
	pto_dev_close(dev);
	return ret;
}
