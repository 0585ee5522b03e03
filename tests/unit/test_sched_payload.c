// SPDX-License-Identifier: MIT
/*
 * The device scheduler's translation of an orchestrator task into a core
 * payload (lib/sched/payload.c), without a device.
 */
#include <errno.h>
#include <string.h>
#include <linux/pto.h>
#include "sched/sched.h"
#include "kselftest_harness.h"

static struct pto_arg_tensor gm(uint64_t obj, uint64_t off, uint64_t nbytes,
				uint8_t tag)
{
	struct pto_arg_tensor a = { .tag = tag };

	a.t.obj = obj;
	a.t.offset = off;
	a.t.nbytes = nbytes;
	a.t.space = PTO_SPACE_GM;
	a.t.dtype = PTO_DTYPE_F32;
	return a;
}

static void view(struct orch_dispatch_view *v, const struct pto_callable *c,
		 const struct pto_arg_tensor *t, uint32_t nt,
		 const uint64_t *s, uint32_t ns)
{
	memset(v, 0, sizeof(*v));
	v->callable = c;
	v->tensors = t;
	v->ntensors = nt;
	v->scalars = s;
	v->nscalars = ns;
	v->nmembers = 1;
}

/* A build into a buffer of unknown content: every tensor slot cleared. */
static int build(const struct orch_dispatch_view *v, struct pto_payload *p,
		 char *msg, size_t len)
{
	uint8_t dirty = SCHED_PAYLOAD_DIRTY_ALL;

	return sched_build_payload(v, p, &dirty, msg, len);
}

/*
 * A kernel finds its tensors by position: the last is the output, the
 * ones before it a and b, whatever their tags. An output tagged NO_DEP
 * (ordered by an explicit dependency) is still the output; a written
 * tensor given first is still a.
 */
TEST(tensors_fill_a_b_and_out_by_position)
{
	static const struct pto_callable add = { .kernel_id = PTO_FUNC_ADD };
	static const struct pto_callable cp = { .kernel_id = PTO_FUNC_COPY };
	static const struct pto_callable fill = { .kernel_id = PTO_FUNC_FILL };
	struct pto_arg_tensor t[3] = {
		gm(0x20000, 128, 64, PTO_INPUT),
		gm(0x30000, 256, 64, PTO_INPUT),
		gm(0x10000, 0, 64, PTO_NO_DEP),		/* the output */
	};
	struct orch_dispatch_view v;
	struct pto_payload p;
	char msg[128] = "";

	view(&v, &add, t, 3, NULL, 0);
	memset(&p, 0xa5, sizeof(p));	/* a zero below is written, not left */
	ASSERT_EQ(0, build(&v, &p, msg, sizeof(msg)));
	EXPECT_EQ(PTO_FUNC_ADD, p.func_id);
	EXPECT_EQ(0x20000 + 128, p.t[PTO_ARG_A].addr);
	EXPECT_EQ(0x30000 + 256, p.t[PTO_ARG_B].addr);
	EXPECT_EQ(0x10000, p.t[PTO_ARG_OUT].addr);
	EXPECT_EQ(1, p.t[PTO_ARG_A].rank);
	EXPECT_EQ(16, p.t[PTO_ARG_A].shape[0]);
	EXPECT_EQ(1, p.t[PTO_ARG_A].strides[0]);
	EXPECT_EQ(PTO_DTYPE_F32, p.t[PTO_ARG_OUT].dtype);
	EXPECT_EQ(0, p.block_num);

	/* A copy whose input and output are both NO_DEP. */
	t[1].tag = PTO_NO_DEP;
	view(&v, &cp, t + 1, 2, NULL, 0);
	memset(&p, 0xa5, sizeof(p));
	ASSERT_EQ(0, build(&v, &p, msg, sizeof(msg)));
	EXPECT_EQ(0x30000 + 256, p.t[PTO_ARG_A].addr);
	EXPECT_EQ(0, p.t[PTO_ARG_B].rank);
	EXPECT_EQ(0x10000, p.t[PTO_ARG_OUT].addr);

	/* A written tensor given first is a: the last one is the output. */
	t[0].tag = PTO_OUTPUT_EXISTING;
	t[1].tag = PTO_INPUT;
	t[2].tag = PTO_INPUT;
	view(&v, &add, t, 3, NULL, 0);
	ASSERT_EQ(0, build(&v, &p, msg, sizeof(msg)));
	EXPECT_EQ(0x20000 + 128, p.t[PTO_ARG_A].addr);
	EXPECT_EQ(0x10000, p.t[PTO_ARG_OUT].addr);

	/* A fill's one tensor is its output, tagged INPUT or not. */
	view(&v, &fill, t + 2, 1, NULL, 0);
	memset(&p, 0xa5, sizeof(p));
	ASSERT_EQ(0, build(&v, &p, msg, sizeof(msg)));
	EXPECT_EQ(0, p.t[PTO_ARG_A].rank);
	EXPECT_EQ(0, p.t[PTO_ARG_B].rank);
	EXPECT_EQ(0x10000, p.t[PTO_ARG_OUT].addr);
}

/*
 * Tags are consumed at submit: every assignment of the five tags to an
 * add's three tensors, a copy's two and a fill's one gives the payload
 * of the same tensors all tagged INPUT, byte for byte.
 */
TEST(tags_never_reach_the_payload)
{
	static const struct pto_callable add = { .kernel_id = PTO_FUNC_ADD };
	static const struct pto_callable cp = { .kernel_id = PTO_FUNC_COPY };
	static const struct pto_callable fill = { .kernel_id = PTO_FUNC_FILL };
	const struct pto_callable *k[3] = { &fill, &cp, &add };
	struct orch_dispatch_view v;
	struct pto_payload p, ref;
	unsigned int n, c, i, combos, checked = 0;
	char msg[128];

	for (n = 1; n <= 3; n++) {
		struct pto_arg_tensor t[3];

		for (i = 0; i < n; i++)
			t[i] = gm((uint64_t)(i + 1) << 16, 64 * i, 64,
				  PTO_INPUT);
		view(&v, k[n - 1], t, n, NULL, 0);
		memset(&ref, 0, sizeof(ref));
		ASSERT_EQ(0, build(&v, &ref, msg, sizeof(msg)));
		for (combos = 1, i = 0; i < n; i++)
			combos *= PTO_TAG_NR;
		for (c = 0; c < combos; c++) {
			unsigned int r = c;

			for (i = 0; i < n; i++, r /= PTO_TAG_NR)
				t[i].tag = (uint8_t)(r % PTO_TAG_NR);
			memset(&p, 0, sizeof(p));
			ASSERT_EQ(0, build(&v, &p, msg, sizeof(msg)));
			ASSERT_EQ(0, memcmp(&p, &ref, sizeof(p)))
				TH_LOG("%u tensors, tags %u", n, c);
			checked++;
		}
	}
	EXPECT_EQ(PTO_TAG_NR + PTO_TAG_NR * PTO_TAG_NR +
		  PTO_TAG_NR * PTO_TAG_NR * PTO_TAG_NR, checked);
}

TEST(shapes_and_default_strides)
{
	static const struct pto_callable mm = { .kernel_id = PTO_FUNC_MATMUL };
	struct pto_arg_tensor t[3] = {
		gm(0x10000, 0, 0, PTO_INPUT), gm(0x20000, 0, 0, PTO_INPUT),
		gm(0x30000, 0, 0, PTO_OUTPUT),
	};
	struct orch_dispatch_view v;
	struct pto_payload p;
	char msg[128];

	t[0].t.rank = 2;
	t[0].t.shape[0] = 8;
	t[0].t.shape[1] = 4;
	t[1].t.rank = 2;
	t[1].t.shape[0] = 4;
	t[1].t.shape[1] = 6;
	t[1].t.strides[0] = 10;		/* padded rows */
	t[2].t.rank = 2;
	t[2].t.shape[0] = 8;
	t[2].t.shape[1] = 6;
	view(&v, &mm, t, 3, NULL, 0);
	ASSERT_EQ(0, build(&v, &p, msg, sizeof(msg)));
	EXPECT_EQ(4, p.t[PTO_ARG_A].strides[0]);	/* contiguous rows */
	EXPECT_EQ(1, p.t[PTO_ARG_A].strides[1]);
	EXPECT_EQ(10, p.t[PTO_ARG_B].strides[0]);	/* as given */
	EXPECT_EQ(1, p.t[PTO_ARG_B].strides[1]);
	EXPECT_EQ(6, p.t[PTO_ARG_OUT].strides[0]);
	t[0].t.rank = 5;
	EXPECT_EQ(-EINVAL, build(&v, &p, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "rank"));
}

TEST(host_tensors_and_odd_sizes_are_refused)
{
	static const struct pto_callable cp = { .kernel_id = PTO_FUNC_COPY };
	struct pto_arg_tensor t[2] = {
		gm(0x10000, 0, 64, PTO_INPUT), gm(0x20000, 0, 64, PTO_OUTPUT),
	};
	struct orch_dispatch_view v;
	struct pto_payload p;
	char msg[128];

	t[0].t.space = PTO_SPACE_HOST;
	view(&v, &cp, t, 2, NULL, 0);
	EXPECT_EQ(-EINVAL, build(&v, &p, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "not in device GM"));
	t[0].t.space = PTO_SPACE_GM;
	t[0].t.nbytes = 6;
	EXPECT_EQ(-EINVAL, build(&v, &p, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "whole number"));
}

TEST(too_many_arguments)
{
	static const struct pto_callable add = { .kernel_id = PTO_FUNC_ADD };
	struct pto_arg_tensor t[4] = {
		gm(1 << 16, 0, 64, PTO_INPUT), gm(2 << 16, 0, 64, PTO_INPUT),
		gm(3 << 16, 0, 64, PTO_INPUT), gm(4 << 16, 0, 64, PTO_OUTPUT),
	};
	uint64_t s[3] = { 1, 2, 3 };
	struct orch_dispatch_view v;
	struct pto_payload p;
	char msg[128];

	view(&v, &add, t, 4, NULL, 0);
	EXPECT_EQ(-E2BIG, build(&v, &p, msg, sizeof(msg)));
	view(&v, &add, t + 1, 3, s, 3);
	EXPECT_EQ(-E2BIG, build(&v, &p, msg, sizeof(msg)));
	/* Three tensors tagged INPUT are a, b and out: tags do not count. */
	t[3].tag = PTO_INPUT;
	view(&v, &add, t + 1, 3, NULL, 0);
	EXPECT_EQ(0, build(&v, &p, msg, sizeof(msg)));
	EXPECT_EQ(4 << 16, p.t[PTO_ARG_OUT].addr);
}

TEST(tensorless_kernels_get_no_tensors_and_blocks_their_index)
{
	static const struct pto_callable noop = { .kernel_id = PTO_FUNC_NOOP };
	struct pto_arg_tensor t[1] = { gm(0, 0, 64, PTO_INOUT) };
	uint64_t s[2] = { 7, 0xffffffffffULL };
	struct orch_dispatch_view v;
	struct pto_payload p;
	char msg[128];

	t[0].t.space = PTO_SPACE_HOST;		/* a pure ordering key */
	view(&v, &noop, t, 1, s, 2);
	v.member = 5;
	v.nmembers = 12;
	memset(&p, 0xa5, sizeof(p));	/* a zero below is written, not left */
	ASSERT_EQ(0, build(&v, &p, msg, sizeof(msg)));
	EXPECT_EQ(0, p.t[PTO_ARG_A].addr);
	EXPECT_EQ(0, p.t[PTO_ARG_OUT].rank);
	EXPECT_EQ(7, p.scalar[0]);
	EXPECT_EQ(0xffffffffffULL, p.scalar[1]);
	EXPECT_EQ(5, p.block_idx);
	EXPECT_EQ(12, p.block_num);
	EXPECT_EQ(0, p.flags);
}

/* A join of a noop kernel may order on any number of tensors; a kernel id
 * wider than 32 bits is refused, not truncated into another kernel. */
TEST(noop_orders_on_many_tensors_and_wide_ids_are_refused)
{
	static const struct pto_callable noop = { .kernel_id = PTO_FUNC_NOOP };
	static const struct pto_callable wide = {
		.kernel_id = (1ULL << 32) | PTO_FUNC_NOOP };
	struct pto_arg_tensor t[6];
	struct orch_dispatch_view v;
	struct pto_payload p;
	char msg[128];
	int i;

	for (i = 0; i < 6; i++)
		t[i] = gm((uint64_t)(i + 1) << 16, 0, 64, PTO_INPUT);
	view(&v, &noop, t, 6, NULL, 0);
	memset(&p, 0xa5, sizeof(p));
	EXPECT_EQ(0, build(&v, &p, msg, sizeof(msg)));
	EXPECT_EQ(PTO_FUNC_NOOP, p.func_id);
	EXPECT_EQ(0, p.t[PTO_ARG_A].addr);
	view(&v, &wide, NULL, 0, NULL, 0);
	EXPECT_EQ(-EINVAL, build(&v, &p, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "not a device kernel"));
}

/*
 * One buffer reused with its dirty mask, as a core's payload buffer is,
 * through tasks with three, two, one and no tensors, failed builds and a
 * core's status write: after every successful build it holds exactly what
 * a build into a zeroed buffer holds (the whole-buffer clear it replaces).
 */
TEST(reused_buffer_matches_a_fresh_build)
{
	static const struct pto_callable add = { .kernel_id = PTO_FUNC_ADD };
	static const struct pto_callable cp = { .kernel_id = PTO_FUNC_COPY };
	static const struct pto_callable fill = { .kernel_id = PTO_FUNC_FILL };
	static const struct pto_callable noop = { .kernel_id = PTO_FUNC_NOOP };
	static const struct pto_callable mm = { .kernel_id = PTO_FUNC_MATMUL };
	struct pto_arg_tensor t3[3] = {
		gm(0x10000, 0, 64, PTO_INPUT), gm(0x20000, 64, 64, PTO_INPUT),
		gm(0x30000, 0, 64, PTO_OUTPUT),
	};
	struct pto_arg_tensor out_only[1] = { gm(0x40000, 0, 64, PTO_OUTPUT) };
	struct pto_arg_tensor in_only[1] = { gm(0x50000, 0, 64, PTO_INPUT) };
	struct pto_arg_tensor bad[2] = {
		gm(0x10000, 0, 64, PTO_INPUT), gm(0x20000, 0, 6, PTO_OUTPUT),
	};
	struct pto_arg_tensor mm3[3] = {
		gm(0x10000, 0, 0, PTO_INPUT), gm(0x20000, 0, 0, PTO_INPUT),
		gm(0x30000, 0, 0, PTO_OUTPUT),
	};
	uint64_t s[2] = { 3, 9 };
	struct {
		const struct pto_callable *c;
		const struct pto_arg_tensor *t;
		uint32_t nt, ns, member, nmembers;
		int ret;
	} seq[] = {
		{ &add, t3, 3, 0, 0, 1, 0 },
		{ &noop, t3, 3, 2, 1, 4, 0 },
		{ &cp, t3 + 1, 2, 0, 0, 1, 0 },
		{ &fill, out_only, 1, 1, 0, 1, 0 },
		{ &mm, mm3, 3, 0, 0, 1, 0 },
		{ &cp, bad, 2, 0, 0, 1, -EINVAL },	/* out half written */
		{ &noop, NULL, 0, 0, 0, 1, 0 },
		{ &add, t3, 3, 0, 0, 1, 0 },
		{ &cp, in_only, 1, 0, 0, 1, 0 },	/* out: the last */
		{ &add, t3, 3, 0, 0, 1, 0 },
		{ &noop, NULL, 0, 1, 2, 3, 0 },
	};
	struct orch_dispatch_view v;
	struct pto_payload p, fresh;
	uint8_t dirty = SCHED_PAYLOAD_DIRTY_ALL;
	char msg[128];
	unsigned int i;

	mm3[0].t.rank = mm3[1].t.rank = mm3[2].t.rank = 2;
	mm3[0].t.shape[0] = mm3[2].t.shape[0] = 8;
	mm3[0].t.shape[1] = mm3[1].t.shape[0] = 4;
	mm3[1].t.shape[1] = mm3[2].t.shape[1] = 6;
	memset(&p, 0xa5, sizeof(p));
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		view(&v, seq[i].c, seq[i].t, seq[i].nt, s, seq[i].ns);
		v.member = seq[i].member;
		v.nmembers = seq[i].nmembers;
		ASSERT_EQ(seq[i].ret,
			  sched_build_payload(&v, &p, &dirty, msg, sizeof(msg)));
		if (seq[i].ret)
			continue;
		memset(&fresh, 0, sizeof(fresh));
		ASSERT_EQ(0, build(&v, &fresh, msg, sizeof(msg)));
		ASSERT_EQ(0, memcmp(&p, &fresh, sizeof(p))) TH_LOG("task %u", i);
		/* The core's completion writes these. */
		p.status = 1;
		p.done_id = 77;
		p.start_ns = 1000;
		p.end_ns = 2000;
	}
}

TEST_HARNESS_MAIN
