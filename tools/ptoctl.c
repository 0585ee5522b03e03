// SPDX-License-Identifier: MIT
/*
 * ptoctl - inspect and drive pto devices.
 *
 *   ptoctl info [-d N]      print the device topology
 *   ptoctl cores [-d N]     per-core state, owner and counters
 *   ptoctl gates [-d N]     per-core retirement: bits, nonce, response, times
 *   ptoctl exec [-d N] [--core C] --func NAME [--dtype f32|i32]
 *               [--shape DxD..] [--n N] [--a V,V..] [--b V,V..]
 *               [--scalar S] [--ns NS]
 *                           run one built-in kernel on one core and print
 *                           its output (a debugging aid; acquires the
 *                           core's cluster for the duration)
 *   ptoctl run EXAMPLE [-d N] [--clusters M]
 *                           run an example of examples/ (no EXAMPLE: list
 *                           them)
 *   ptoctl trace summary|svg FILE.json
 *                           a run trace's summary, or its swimlane as SVG
 *   ptoctl monitor [-d N] [-n COUNT] [-t MS]
 *                           one line per event of the driver (errors,
 *                           quarantines, resets, retirement timeouts)
 */
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
#include "ptoctl_trace.h"

#define EXEC_USAGE "exec [-d N] [--core C] --func NAME [--dtype f32|i32] [--shape DxD..] [--n N] [--a V,..] [--b V,..] [--scalar S] [--ns NS]"

struct ptoctl_cmd {
	const char *name;
	const char *usage;
	const char *what;	/* one line for the usage text */
	int (*fn)(int argc, char **argv);
};

/*
 * An unsigned 32-bit decimal number from the start of @s; *end as
 * strtoul's. Decimal only: with base 0, "010" would be 8 and a shape
 * "0x4" the one dimension 4 (decimal reads it as 0 by 4, which
 * parse_dim() refuses). A value above UINT32_MAX, a sign or a leading blank is an
 * error: a cast of strtoul's result would keep the low 32 bits
 * (4294967297 read as 1, -1 as 4294967295).
 */
static int parse_u32(const char *s, char **end, uint32_t *out)
{
	unsigned long long v;

	*end = (char *)s;
	if (!isdigit((unsigned char)*s))	/* no sign, no blank */
		return -EINVAL;
	errno = 0;
	v = strtoull(s, end, 10);
	if (errno || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/*
 * A tensor dimension (--shape's, --n): parse_u32()'s number, and not 0
 * (-EDOM): an empty tensor is no kernel's operand, refused late
 * otherwise, after the cluster was taken (a 0-byte BO_ALLOC is -EINVAL,
 * matmul's --n 0 the kernel's ESHAPE).
 */
static int parse_dim(const char *s, char **end, uint32_t *out)
{
	int ret = parse_u32(s, end, out);

	if (ret)
		return ret;
	return *out ? 0 : -EDOM;
}

/* A subcommand's option mistake, named "ptoctl CMD: ..." (argv[0] is
 * the subcommand). */
static void cmd_bad_option(char **argv, int c)
{
	char name[64];

	snprintf(name, sizeof(name), "ptoctl %s", argv[0]);
	ex_bad_option(name, argv, c);
}

static int parse_device(int argc, char **argv, unsigned int *index)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	*index = 0;
	optind = 0;
	opterr = 0;	/* ex_bad_option() says it, with the command's name */
	while ((c = getopt_long(argc, argv, ":d:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_u32(optarg, &end, index) || *end) {
				fprintf(stderr, "ptoctl: bad device '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		default:
			cmd_bad_option(argv, c);
			fprintf(stderr, "usage: ptoctl %s [-d N]\n", argv[0]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ptoctl: unexpected argument '%s'\nusage: ptoctl %s [-d N]\n",
			argv[optind], argv[0]);
		return -EINVAL;
	}
	return 0;
}

/* Open /dev/pto<index>; says why on failure, and what to do if it is not
 * there. */
static int open_index(unsigned int index, struct pto_dev **dev)
{
	int ret = pto_dev_open(index, dev);

	if (!ret)
		return 0;
	fprintf(stderr, "ptoctl: /dev/pto%u: %s\n", index, pto_strerror(ret));
	if (ret == -ENOENT)
		fprintf(stderr, "ptoctl: pto.ko is not loaded, or was loaded with fewer devices (its devices= parameter, default 1)\n");
	return ret;
}

/* -d N, open /dev/ptoN and read its topology; says why on failure. */
static int open_device(int argc, char **argv, struct pto_dev **dev,
		       struct pto_dev_info *info)
{
	unsigned int index;
	int ret;

	ret = parse_device(argc, argv, &index);
	if (ret)
		return ret;
	ret = open_index(index, dev);
	if (ret)
		return ret;
	return pto_dev_info(*dev, info);
}

static int cmd_info(int argc, char **argv)
{
	struct pto_dev_info info;
	struct pto_dev *dev;
	unsigned int c;
	int ret;

	ret = open_device(argc, argv, &dev, &info);
	if (ret)
		return ret;
	printf("device:      pto%u (abi %u.%u%s)\n", info.index, info.abi_major,
	       info.abi_minor, info.caps & 1 ? ", mock" : "");
	printf("clusters:    %u (1 AIC + 2 AIV each)\n", info.clusters);
	printf("cores:       %u\n", info.cores);
	printf("gm:          %llu MiB (buffer alignment %u)\n",
	       (unsigned long long)(info.gm_size >> 20), info.gm_align);
	printf("window:      %u bytes per core\n", info.window_size);
	printf("lanes:       %u\n", info.lanes);
	for (c = 0; c < info.clusters; c++) {
		unsigned int i, base = c * 3;

		printf("cluster %-3u", c);
		for (i = base; i < base + 3 && i < info.cores; i++)
			printf(" core %-3u %s", i,
			       info.core_type[i] == PTO_CORE_AIC ? "AIC" :
			       info.core_type[i] == PTO_CORE_AIV ? "AIV" :
									"???");
		printf("\n");
	}
	pto_dev_close(dev);
	return 0;
}


static const char *const state_names[] = {
	"unlaunched", "handshake", "ready", "running", "exiting", "gated",
	"quarantined",
};

/*
 * Open the device of @argv, print @header and then @row for each core;
 * stop at the first failing row and, if @cmd, report it under that name.
 */
static int per_core_table(int argc, char **argv, const char *cmd,
			  const char *header,
			  int (*row)(struct pto_dev *dev,
				     const struct pto_dev_info *info,
				     unsigned int core))
{
	struct pto_dev_info info;
	struct pto_dev *dev;
	unsigned int i;
	int ret;

	ret = open_device(argc, argv, &dev, &info);
	if (ret)
		return ret;
	printf("%s\n", header);
	for (i = 0; i < info.cores && !ret; i++)
		ret = row(dev, &info, i);
	if (ret && cmd)
		fprintf(stderr, "ptoctl %s: %s\n", cmd, pto_strerror(ret));
	pto_dev_close(dev);
	return ret;
}

/* The first columns of a per-core row: index, type, state. */
static void core_row_head(const struct pto_dev_info *info, unsigned int i,
			  uint32_t state)
{
	printf("%-4u %-4s %-12s ", i,
	       info->core_type[i] == PTO_CORE_AIC ? "AIC" : "AIV",
	       state < 7 ? state_names[state] : "?");
}

static int cores_row(struct pto_dev *dev, const struct pto_dev_info *info,
		     unsigned int i)
{
	struct pto_core_stats st;
	int ret = core_stats(dev, i, &st);

	if (ret)
		return ret;
	core_row_head(info, i, st.state);
	printf("%-7u %-10llu %-10llu %-10llu %-10llu %-10llu %-10llu 0x%08x\n",
	       st.owner,
	       (unsigned long long)st.tasks,
	       (unsigned long long)st.errors,
	       (unsigned long long)st.parks,
	       (unsigned long long)st.dozes,
	       (unsigned long long)st.doorbells,
	       (unsigned long long)st.wakeups, st.last_cond);
	return 0;
}

static int cmd_cores(int argc, char **argv)
{
	return per_core_table(argc, argv, NULL,
			      "core type state        owner   tasks      errors     parks      dozes      doorbells  wakeups    cond",
			      cores_row);
}

static const char *const retire_by[] = {
	"-", "ioctl", "release", "launch", "fatal", "unload", "reset",
};

static int gates_row(struct pto_dev *dev, const struct pto_dev_info *info,
		     unsigned int i)
{
	struct pto_retire_status st;
	int ret = core_retire_status(dev, i, &st);

	if (ret)
		return ret;
	core_row_head(info, i, st.state);
	printf("%-10u %-5u %-9u 0x%08x 0x%08x %-6u %-8u %-11u %-7s %-10llu %-10llu %-10llu %llu\n",
	       st.gen,
	       !!(st.bits & PTO_RETIRE_BIT_READY),
	       !!(st.bits & PTO_RETIRE_BIT_REQUESTED), st.nonce,
	       st.response, !!(st.result & PTO_RETIRE_CLOSED),
	       !!(st.result & PTO_RETIRE_RELEASED),
	       st.state == PTO_CORE_QUARANTINED,
	       st.reason < 7 ? retire_by[st.reason] : "?",
	       (unsigned long long)st.core_ns / 1000,
	       (unsigned long long)st.set_ns / 1000,
	       (unsigned long long)st.retirements,
	       (unsigned long long)st.quarantines);
	return 0;
}

/*
 * Retirement per core, from the status ioctl (no root needed): the same
 * fields as debugfs "retirement" (Documentation/retirement.md).
 */
static int cmd_gates(int argc, char **argv)
{
	return per_core_table(argc, argv, "gates",
			      "core type state        gen        ready requested nonce      response   closed released quarantined by      core_us    set_us     retired    quarantines",
			      gates_row);
}

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
			if (parse_u32(optarg, &end, &o->dev) || *end) {
				fprintf(stderr, "ptoctl: bad device '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			if (parse_u32(optarg, &end, &o->core) || *end) {
				fprintf(stderr, "ptoctl: bad --core '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'f':
			for (i = 0; i < PTO_FUNC_COUNT; i++)
				if (!strcmp(optarg, func_names[i]))
					o->func = i;
			if (o->func < 0) {
				fprintf(stderr, "ptoctl: unknown kernel '%s'; the kernels:",
					optarg);
				for (i = 0; i < PTO_FUNC_COUNT; i++)
					fprintf(stderr, " %s", func_names[i]);
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
			cmd_bad_option(argv, c);
			fprintf(stderr, "usage: ptoctl %s\n", EXEC_USAGE);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ptoctl: unexpected argument '%s'\nusage: ptoctl %s\n",
			argv[optind], EXEC_USAGE);
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
				EXEC_USAGE);
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

static int cmd_exec(int argc, char **argv)
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
	ret = open_index(o.dev, &dev);
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
	       func_names[o.func], done[0].status,
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

/* ptoctl run EXAMPLE [-d N] [--clusters M]: an example from examples/. */
struct ptoctl_example {
	const char *name;
	const char *desc;
	int (*run)(const struct ex_opts *opts);
};

#define PTOCTL_EXAMPLE(n, d) { #n, d, ex_##n },
static const struct ptoctl_example examples[] = { PTO_EXAMPLES(PTOCTL_EXAMPLE) };
#undef PTOCTL_EXAMPLE

static int cmd_run(int argc, char **argv)
{
	struct ex_opts eo;
	const char *name = NULL;
	size_t i;

	if (ex_parse(argc, argv, "ptoctl run", 1, &eo))
		return -EINVAL;
	if (optind < argc)
		name = argv[optind];
	for (i = 0; name && i < sizeof(examples) / sizeof(examples[0]); i++) {
		if (strcmp(name, examples[i].name))
			continue;
		if (eo.clusters)
			printf("# ptoctl run %s on /dev/pto%u, %u clusters: %s\n",
			       name, eo.dev, eo.clusters, examples[i].desc);
		else
			printf("# ptoctl run %s on /dev/pto%u: %s\n", name,
			       eo.dev, examples[i].desc);
		fflush(stdout);
		return examples[i].run(&eo) ? -EIO : 0;
	}
	fprintf(stderr, "ptoctl run: %s%s\nexamples:\n",
		name ? "unknown example " : "which example?", name ? name : "");
	for (i = 0; i < sizeof(examples) / sizeof(examples[0]); i++)
		fprintf(stderr, "  %-12s %s\n", examples[i].name, examples[i].desc);
	return -EINVAL;
}

int ptoctl_monitor(int argc, char **argv);	/* ptoctl_monitor.c */

static const struct ptoctl_cmd cmds[] = {
	{ "info", "info [-d N]", "the device topology", cmd_info },
	{ "cores", "cores [-d N]", "per-core state, owner and counters",
	  cmd_cores },
	{ "gates", "gates [-d N]",
	  "per-core retirement: bits, nonce, response, times", cmd_gates },
	{ "exec", EXEC_USAGE,
	  "one built-in kernel on one core, its output printed", cmd_exec },
	{ "run", "run EXAMPLE [-d N] [--clusters M]",
	  "an example of examples/ (no EXAMPLE: the list)", cmd_run },
	{ "trace", PTOCTL_TRACE_USAGE,
	  "a run trace's summary, or its swimlane as SVG on stdout", ptoctl_trace },
	{ "monitor", "monitor [-d N] [-n COUNT] [-t MS]",
	  "one line per driver event until COUNT events or MS ms", ptoctl_monitor },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: ptoctl COMMAND [ARGS]\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  ptoctl %s\n      %s\n", cmds[i].usage,
			cmds[i].what);
	fprintf(f, "-d N: /dev/ptoN (default 0)\n--version: pto's version\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version"))
		return printf("ptoctl %s\n", PTO_VERSION) < 0;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		/* ptoctl CMD --help: that command's usage, status 0. */
		if (argc == 3 && (!strcmp(argv[2], "-h") ||
				  !strcmp(argv[2], "--help"))) {
			printf("usage: ptoctl %s\n  %s\n", cmds[i].usage,
			       cmds[i].what);
			return 0;
		}
		return cmds[i].fn(argc - 1, argv + 1) ? 1 : 0;
	}
	fprintf(stderr, "ptoctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
