// SPDX-License-Identifier: MIT
/*
 * Orchestrator semantics, driven deterministically: the "manual" backend
 * has no threads, so the test pops and completes tasks itself through the
 * same entry points a device scheduler uses (orch_ready_pop,
 * orch_member_done). The test thread is the orch thread.
 */
#include <pthread.h>
#include "kselftest_harness.h"
#include "orch_test.h"

static const struct pto_worker_desc W3[] = {
	OT_WORKER(0, PTO_WORKER_AIV), OT_WORKER(1, PTO_WORKER_AIV), OT_WORKER(2, PTO_WORKER_AIV),
	OT_WORKER(9, PTO_WORKER_SUB),
};

static int noop(struct pto_task_ctx *c)
{
	(void)c;
	return 0;
}

static const struct pto_callable NOOP = { .fn = noop };

FIXTURE(man)
{
	pto_orch *o;
	struct pto_run *r;
	struct pto_task_args a;
	char buf[8][64];
};

FIXTURE_SETUP(man)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 8,
				       .timeout_ms = 200, .workers = W3,
				       .nworkers = 4 };

	ASSERT_EQ(0, orch_create_manual(&cfg, &self->o));
	ASSERT_EQ(0, orch_begin_run(self->o, &self->r));
	pto_args_init(&self->a);
}

FIXTURE_TEARDOWN(man)
{
	if (self->o->building)
		orch_close_run_submission(self->o, self->r);
	ot_drain(self->o);
	EXPECT_EQ(1, pto_run_done(self->r));
	pto_run_release(self->r);
	EXPECT_TRUE(ot_empty(self->o));
	EXPECT_EQ(0, pto_orch_close(self->o, 100));
	EXPECT_EQ(0, pto_orch_destroy(self->o));
	pto_args_fini(&self->a);
}

/* Submit one task on worker @w with tensors (buf index, tag) pairs. */
static struct pto_task sub_on(struct __test_metadata *_metadata,
			      FIXTURE_DATA(man) *self, int32_t w, int nt,
			      const int *bufs, const int *tags)
{
	struct pto_task h = { 0 };
	int i;

	pto_args_reset(&self->a);
	for (i = 0; i < nt; i++) {
		struct pto_tensor t = pto_tensor_host(self->buf[bufs[i]], 64);

		pto_args_add_tensor(&self->a, &t, (enum pto_tag)tags[i]);
	}
	EXPECT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(w), &h));
	return h;
}

#define T1(w, b, t) sub_on(_metadata, self, w, 1, (int[]){ b }, (int[]){ t })

TEST_F(man, raw_edge_and_release)
{
	struct pto_task p = T1(0, 0, PTO_OUTPUT_EXISTING);
	struct pto_task c = T1(1, 0, PTO_INPUT);

	EXPECT_EQ(ORCH_READY, ot_state(self->o, p));
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c));
	EXPECT_EQ(0, ot_run_one(self->o, 1, 0, NULL));	/* c not ready */
	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, p));	/* scope holds it */
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
	EXPECT_EQ(1, ot_run_one(self->o, 1, 0, NULL));
	orch_close_run_submission(self->o, self->r);
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, p));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, c));
}

/*
 * A backend thread with a consume batch (the device scheduler's threads)
 * defers the consumptions its completions cause: the slots are CONSUMED
 * at once, but their TensorMap entries, ring slots and the run's count
 * are released by the flush, all of them, and not before.
 */
TEST_F(man, consume_batch_defers_cleanup_to_the_flush)
{
	struct orch_consume_batch b = { 0 };
	struct pto_task p, c;

	ASSERT_EQ(0, pto_scope_begin(self->o));
	p = T1(0, 0, PTO_OUTPUT_EXISTING);
	c = T1(1, 0, PTO_INPUT);
	ASSERT_EQ(0, pto_scope_end(self->o));	/* only the tasks hold them */
	EXPECT_EQ(2u, orch_ring_live(self->o, 1));
	EXPECT_EQ(1u, orch_tm_count(self->o));
	orch_set_consume_batch(&b);
	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));
	EXPECT_EQ(1, ot_run_one(self->o, 1, 0, NULL));
	orch_set_consume_batch(NULL);
	EXPECT_EQ(2u, b.n);
	EXPECT_EQ(ORCH_CONSUMED, atomic_load(&orch_slot_at(self->o, p.slot)->state));
	EXPECT_EQ(ORCH_CONSUMED, atomic_load(&orch_slot_at(self->o, c.slot)->state));
	EXPECT_EQ(2u, orch_ring_live(self->o, 1));
	EXPECT_EQ(1u, orch_tm_count(self->o));
	orch_close_run_submission(self->o, self->r);
	EXPECT_EQ(0, pto_run_done(self->r));	/* the batch holds its count */
	orch_consume_flush(self->o, &b);
	EXPECT_EQ(0u, b.n);
	EXPECT_EQ(0u, orch_ring_live(self->o, 1));
	EXPECT_EQ(0u, orch_tm_count(self->o));
	EXPECT_EQ(1, pto_run_done(self->r));
}

TEST_F(man, dedup_retain_wins)
{
	struct pto_task p = T1(0, 0, PTO_OUTPUT_EXISTING), c;
	struct orch_slot *ps = orch_slot_at(self->o, p.slot);

	pto_args_reset(&self->a);
	pto_args_add_dep_wait(&self->a, p);
	pto_args_add_dep(&self->a, p);
	pto_args_add_dep_wait(&self->a, p);
	{
		struct pto_tensor t = pto_tensor_host(self->buf[0], 64);

		pto_args_add_tensor(&self->a, &t, PTO_INPUT);
	}
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), &c));
	/* One edge: one notification, one retention (+ the scope ref). */
	EXPECT_EQ(1u, ps->nconsumers);
	EXPECT_EQ(2, ps->fanout_total);
	EXPECT_EQ(1, orch_slot_at(self->o, c.slot)->fanin_count);
	EXPECT_EQ(1u, orch_slot_at(self->o, c.slot)->nproducers);
}

/* Dump marks and tags stay with the slot's argument descriptors, reachable
 * from the dispatch view (for argument capture). */
TEST_F(man, dump_marks_reach_dispatch_view)
{
	struct pto_tensor t = pto_tensor_host(self->buf[0], 64);
	struct orch_dispatch d;
	struct orch_dispatch_view v;

	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &t, PTO_INPUT);
	pto_args_add_tensor(&self->a, &t, PTO_NO_DEP);
	pto_args_add_scalar(&self->a, 11);
	pto_args_add_scalar(&self->a, 22);
	ASSERT_EQ(0, pto_args_set_dump(&self->a, 0, 1, 3));
	ASSERT_EQ(0, pto_args_set_dump(&self->a, 1, 0, 5));
	EXPECT_EQ(-EINVAL, pto_args_set_dump(&self->a, 1, 2, 1));
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(0), NULL));
	pto_args_reset(&self->a);	/* the slot kept its own copy */
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d));
	orch_dispatch_view(&d, &v);
	ASSERT_EQ(2u, v.ntensors);
	EXPECT_EQ(0, v.tensors[0].dump);
	EXPECT_EQ(3, v.tensors[1].dump);
	EXPECT_EQ(PTO_NO_DEP, v.tensors[1].tag);
	ASSERT_EQ(2u, v.nscalars);
	EXPECT_EQ(22u, v.scalars[1]);
	EXPECT_EQ(5, v.scalar_dump[0]);
	EXPECT_EQ(0, v.scalar_dump[1]);
	orch_member_done(self->o, &d, 0, NULL);
}

/* What a task keeps of its call config (flags: not the reserved words)
 * reaches the backend's dispatch view; NULL is zero. */
TEST_F(man, call_config_reaches_the_dispatch_view)
{
	struct pto_call_config cfg = { .flags = PTO_CALL_FLAGS_VALID };
	struct orch_dispatch d;
	struct orch_dispatch_view v;
	int w;

	pto_args_reset(&self->a);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, &cfg,
					   pto_on_worker(0), NULL));
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), NULL));
	for (w = 0; w < 2; w++) {
		ASSERT_EQ(1, orch_ready_pop(self->o, w, &d));
		orch_dispatch_view(&d, &v);
		EXPECT_EQ(0u, v.cfg->flags);
		orch_member_done(self->o, &d, 0, NULL);
	}
}

TEST_F(man, dep_wait_orders_without_retaining)
{
	struct pto_task p = T1(0, 0, PTO_OUTPUT_EXISTING), c;
	struct orch_slot *ps = orch_slot_at(self->o, p.slot);

	pto_args_reset(&self->a);
	pto_args_add_dep_wait(&self->a, p);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), &c));
	EXPECT_EQ(1u, ps->nconsumers);
	EXPECT_EQ(1, ps->fanout_total);	/* scope only */
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c));
	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
}

TEST_F(man, completed_producer_is_satisfied)
{
	struct pto_task p = T1(0, 0, PTO_OUTPUT_EXISTING), c;

	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));
	pto_args_reset(&self->a);
	pto_args_add_dep(&self->a, p);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), &c));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
	/* A completed producer gets no notification edge, only retention. */
	EXPECT_EQ(0u, orch_slot_at(self->o, p.slot)->nconsumers);
	EXPECT_EQ(2, orch_slot_at(self->o, p.slot)->fanout_total);
}

TEST_F(man, consumed_producer_is_satisfied)
{
	struct pto_task p, c;

	ASSERT_EQ(0, pto_scope_begin(self->o));
	p = T1(0, 0, PTO_OUTPUT_EXISTING);
	ASSERT_EQ(0, pto_scope_end(self->o));
	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, p));
	pto_args_reset(&self->a);
	pto_args_add_dep(&self->a, p);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), &c));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
}

TEST_F(man, handle_naming_unsubmitted_task_rejected)
{
	struct pto_task bogus = { .run_id = pto_run_id(self->r), .task_id = 999,
				  .slot = 1 };

	pto_args_reset(&self->a);
	pto_args_add_dep(&self->a, bogus);
	EXPECT_EQ(-EINVAL, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
						 pto_on_worker(1), NULL));
	EXPECT_EQ(0, ot_live_slots(self->o));	/* rejected before the claim */
	orch_fail_run_submission(self->o, self->r, -EINVAL);
}

TEST_F(man, waw_earlier_writer_consumed_first_keeps_later_mapping)
{
	struct pto_task w1, w2, rd;
	struct orch_key k = { pto_run_id(self->r), PTO_SPACE_HOST, 0,
			      (uint64_t)(uintptr_t)self->buf[3] };
	struct orch_slotref m;

	ASSERT_EQ(0, pto_scope_begin(self->o));
	w1 = T1(0, 3, PTO_OUTPUT_EXISTING);
	ASSERT_EQ(0, pto_scope_end(self->o));
	w2 = T1(1, 3, PTO_OUTPUT);	/* data set: not auto-allocated */
	m = orch_tm_lookup(self->o, &k);
	EXPECT_EQ(w2.task_id, m.tid);
	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));	/* w1 done */
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, w1));
	/* The owner check kept w2's entry. */
	m = orch_tm_lookup(self->o, &k);
	EXPECT_EQ(w2.task_id, m.tid);
	EXPECT_EQ(1u, orch_tm_count(self->o));
	rd = T1(2, 3, PTO_INPUT);
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, rd));
	EXPECT_EQ(1, ot_run_one(self->o, 1, 0, NULL));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, rd));
}

/*
 * A GM tensor keys on (space, object, offset), not on its host address:
 * two mappings of one GM byte collide, one address in two objects does
 * not. The device tag is not in the key: a tagged and an untagged view of
 * one buffer collide, and so (in-process) do two devices' buffers at one
 * address, which orders them needlessly but never loses an edge.
 */
TEST_F(man, gm_tensor_key_is_object_and_offset)
{
	struct pto_tensor w = { .data = 0x1000, .nbytes = 64, .obj = 7,
				.offset = 128, .space = PTO_SPACE_GM, .dev = 1 };
	struct pto_tensor alias = w, other = w, dev2 = w, untagged = w;
	struct pto_task p, c1, c2, c3, c4;

	alias.data = 0x9000;	/* another view of the same bytes */
	other.obj = 8;		/* same address, another object */
	dev2.dev = 2;		/* same address, another device */
	untagged.dev = 0;	/* a hand-built view of the same bytes */
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &w, PTO_OUTPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(0), &p));
	EXPECT_EQ(0u, ot_heap_used(self->o));	/* data set: not allocated */
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &alias, PTO_INPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), &c1));
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &other, PTO_INPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(2), &c2));
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &dev2, PTO_INPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(2), &c3));
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &untagged, PTO_INPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), &c4));
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c1));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c2));
	/*
	 * The device tag is not in the key: an untagged view of the
	 * writer's bytes must wait for it. In-process, another device's
	 * buffer at the same address waits too (extra ordering only).
	 */
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c4));
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c3));
}

TEST_F(man, inout_chain_is_waw_and_raw)
{
	struct pto_task a = T1(0, 1, PTO_INOUT);
	struct pto_task b = T1(1, 1, PTO_INOUT);
	struct pto_task c = T1(2, 1, PTO_OUTPUT_EXISTING);	/* no lookup */

	EXPECT_EQ(ORCH_READY, ot_state(self->o, a));
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, b));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
}

/*
 * A task that names a key as an output before naming it as an input
 * (k(dst, src) called with dst == src) still reads the previous writer's
 * data: its INPUT must find that writer, not the task's own mapping of
 * the key. The same across the members of a group (member 0 writes,
 * member 1 reads). The reader runs only after the writer.
 */
TEST_F(man, input_named_after_an_output_of_the_same_key_keeps_raw_edge)
{
	struct pto_task w = T1(0, 0, PTO_OUTPUT_EXISTING);
	struct pto_task rd = sub_on(_metadata, self, 1, 2, (int[]){ 0, 0 },
				    (int[]){ PTO_OUTPUT_EXISTING, PTO_INPUT });
	struct pto_task w2 = T1(2, 1, PTO_OUTPUT_EXISTING);
	struct pto_tensor t = pto_tensor_host(self->buf[1], 64);
	struct pto_task_args m0, m1, *mp[2] = { &m0, &m1 };
	struct pto_task g;

	pto_args_init(&m0);
	pto_args_init(&m1);
	pto_args_add_tensor(&m0, &t, PTO_OUTPUT);	/* data set: no carving */
	pto_args_add_tensor(&m1, &t, PTO_INPUT);
	ASSERT_EQ(0, pto_submit_next_level_group(self->o, &NOOP, mp, 2, NULL,
						 (int32_t[]){ 0, 1 }, &g));
	pto_args_fini(&m0);
	pto_args_fini(&m1);
	EXPECT_EQ(ORCH_READY, ot_state(self->o, w));
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, rd));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, w2));
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, g));
	EXPECT_EQ(0, ot_run_one(self->o, 1, 0, NULL));	/* rd not ready */
	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));	/* w */
	EXPECT_EQ(ORCH_READY, ot_state(self->o, rd));
	EXPECT_EQ(1, ot_run_one(self->o, 1, 0, NULL));	/* rd */
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, g));	/* w2 still to run */
	EXPECT_EQ(1, ot_run_one(self->o, 2, 0, NULL));	/* w2 */
	EXPECT_EQ(ORCH_READY, ot_state(self->o, g));
}

TEST_F(man, alloc_inout_pins_slab)
{
	struct pto_tensor t;
	struct pto_task ah, user;

	ASSERT_EQ(0, pto_scope_begin(self->o));
	ASSERT_EQ(0, pto_alloc(self->o, 3000, &t, &ah));
	EXPECT_EQ(0u, t.data % PTO_HEAP_ALIGN);
	EXPECT_EQ(3072u, ot_heap_used(self->o));	/* 1024-aligned */
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, ah));
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &t, PTO_INOUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(0), &user));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, user));	/* alloc is done */
	ASSERT_EQ(0, pto_scope_end(self->o));
	/* The INOUT user retains the alloc slot past its scope. */
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, ah));
	EXPECT_EQ(3072u, ot_heap_used(self->o));
	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, ah));
	EXPECT_EQ(0u, ot_heap_used(self->o));
}

TEST_F(man, alloc_output_does_not_pin)
{
	struct pto_tensor t;
	struct pto_task ah;

	ASSERT_EQ(0, pto_scope_begin(self->o));
	ASSERT_EQ(0, pto_alloc(self->o, 100, &t, &ah));
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &t, PTO_OUTPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(0), NULL));
	ASSERT_EQ(0, pto_scope_end(self->o));
	/* Pure overwrite: no lifetime link, the slab goes at scope end
	 * (FIFO: reclaimed once the writer behind it is consumed too). */
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, ah));
}

TEST_F(man, output_auto_allocation_carved_and_aligned)
{
	struct pto_tensor t0 = { .nbytes = 10 }, t1 = { .nbytes = 2048 },
			  t2 = { .nbytes = 1 };
	struct pto_tensor ex = pto_tensor_host(self->buf[0], 64);
	struct pto_task h;

	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &t0, PTO_OUTPUT);
	pto_args_add_tensor(&self->a, &ex, PTO_OUTPUT_EXISTING);
	pto_args_add_tensor(&self->a, &t1, PTO_OUTPUT);
	pto_args_add_tensor(&self->a, &t2, PTO_OUTPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(0), &h));
	t0 = self->a.tensors[0].t;
	t1 = self->a.tensors[2].t;
	t2 = self->a.tensors[3].t;
	EXPECT_EQ(0u, t0.data % PTO_HEAP_ALIGN);
	EXPECT_EQ(t0.data + 1024, t1.data);
	EXPECT_EQ(t1.data + 2048, t2.data);
	EXPECT_EQ((uint64_t)(uintptr_t)self->buf[0], self->a.tensors[1].t.data);
	EXPECT_EQ(4096u, ot_heap_used(self->o));	/* one reservation */
	EXPECT_EQ(4u, orch_tm_count(self->o));
}

/*
 * Auto-allocated OUTPUTs declared GM (pto_tensor_gm_auto()) on the
 * in-process heap, which is HOST memory: each names its own allocation,
 * so C, a reader of P1's output, waits on P1 and not on P2.
 */
TEST_F(man, gm_declared_outputs_on_the_host_heap_are_keys_of_their_own)
{
	struct pto_tensor gm = { .nbytes = 64, .space = PTO_SPACE_GM };
	struct pto_tensor out1, out2;
	struct pto_task p1, p2, c;

	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &gm, PTO_OUTPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(0), &p1));
	out1 = self->a.tensors[0].t;
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &gm, PTO_OUTPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), &p2));
	out2 = self->a.tensors[0].t;
	/* What comes back is the heap's: HOST, at its own address. */
	EXPECT_EQ(PTO_SPACE_HOST, out1.space);
	EXPECT_EQ(PTO_SPACE_HOST, out2.space);
	EXPECT_EQ(0u, out1.dev);
	EXPECT_EQ(out1.data + PTO_HEAP_ALIGN, out2.data);
	EXPECT_EQ(2u, orch_tm_count(self->o));
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &out1, PTO_INPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(2), &c));
	EXPECT_EQ(1u, orch_slot_at(self->o, p1.slot)->nconsumers);
	EXPECT_EQ(0u, orch_slot_at(self->o, p2.slot)->nconsumers);
	/* P2 done, P1 still running: C must wait for P1. */
	EXPECT_EQ(1, ot_run_one(self->o, 1, 0, NULL));
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c));
	EXPECT_EQ(0, ot_run_one(self->o, 2, 0, NULL));
	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
}

/*
 * Sizes that wrap: 2^16 OUTPUTs of 2^48 bytes sum to 2^64, which wrapped
 * to a reservation of 0 bytes, and pto_alloc of a size within 1023 of
 * 2^64 aligned to 0; each then handed out addresses outside any heap.
 * Both are refused as too large, and the run's construction fails.
 */
TEST_F(man, output_sizes_that_wrap_are_refused)
{
	struct pto_tensor t = { .nbytes = 1ULL << 48 };
	uint32_t i;

	pto_args_reset(&self->a);
	for (i = 0; i < (1u << 16); i++)
		ASSERT_LE(0, pto_args_add_tensor(&self->a, &t, PTO_OUTPUT));
	EXPECT_EQ(-E2BIG, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
						pto_on_worker(0), NULL));
	EXPECT_EQ(0u, ot_heap_used(self->o));
	EXPECT_EQ(0u, self->a.tensors[0].t.data);
}

/* An auto-allocated OUTPUT over 2^48 bytes is refused as too large (it
 * said it "needs a size"); one of 0 bytes does need a size. */
TEST_F(man, auto_output_over_2_48_bytes_is_too_large)
{
	struct pto_tensor t = { .nbytes = (1ULL << 48) + 1 };

	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &t, PTO_OUTPUT);
	EXPECT_EQ(-E2BIG, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
						pto_on_worker(0), NULL));
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "too large"))
		TH_LOG("\"%s\"", pto_orch_error(self->o));
	EXPECT_EQ(0u, ot_heap_used(self->o));
}

TEST_F(man, auto_output_of_0_bytes_needs_a_size)
{
	struct pto_tensor t = { .nbytes = 0 };

	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &t, PTO_OUTPUT);
	EXPECT_EQ(-EINVAL, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
						 pto_on_worker(0), NULL));
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "needs a size"));
}

TEST_F(man, alloc_size_that_wraps_is_refused)
{
	struct pto_tensor got = { 0 };

	EXPECT_EQ(-E2BIG, pto_alloc(self->o, UINT64_MAX, &got, NULL));
	EXPECT_EQ(0u, got.data);
	EXPECT_EQ(0u, ot_heap_used(self->o));
}

/*
 * The TensorMap's bucket array starts at 1024 and doubles with the live
 * mappings (tensormap.c): 3000 live outputs in one scope rehash it twice,
 * and every key still names its producer; consumption erases them all.
 */
TEST(tensormap_grows_past_its_first_buckets)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20,
				       .task_window = 4096, .timeout_ms = 200,
				       .workers = W3, .nworkers = 4 };
	enum { N = 3000 };
	static char buf[N];
	struct pto_task_args a;
	struct pto_task h[N];
	struct pto_run *r;
	pto_orch *o;
	uint32_t i, bad = 0;

	ASSERT_EQ(0, orch_create_manual(&cfg, &o));
	ASSERT_EQ(0, orch_begin_run(o, &r));
	EXPECT_EQ(1024u, o->tm.nbuckets);
	pto_args_init(&a);
	for (i = 0; i < N; i++) {
		struct pto_tensor t = pto_tensor_host(&buf[i], 1);

		pto_args_reset(&a);
		pto_args_add_tensor(&a, &t, PTO_OUTPUT_EXISTING);
		ASSERT_EQ(0, pto_submit_next_level(o, &NOOP, &a, NULL,
						   pto_on_worker(0), &h[i]));
	}
	EXPECT_EQ((uint32_t)N, orch_tm_count(o));
	EXPECT_LE(4096u, o->tm.nbuckets);
	for (i = 0; i < N; i++) {
		struct orch_key k = { .run_id = r->id, .space = PTO_SPACE_HOST,
				      .off = (uint64_t)(uintptr_t)&buf[i] };
		struct orch_slotref v = orch_tm_lookup(o, &k);

		bad += !v.s || v.tid != h[i].task_id;
	}
	EXPECT_EQ(0u, bad);
	orch_close_run_submission(o, r);
	EXPECT_EQ(N, ot_drain(o));
	EXPECT_EQ(1, pto_run_done(r));
	EXPECT_EQ(0u, orch_tm_count(o));
	EXPECT_TRUE(ot_empty(o));
	pto_run_release(r);
	pto_args_fini(&a);
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

TEST_F(man, output_existing_with_null_data_is_not_allocated)
{
	struct pto_tensor t = { .nbytes = 64 };

	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &t, PTO_OUTPUT_EXISTING);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(0), NULL));
	EXPECT_EQ(0u, self->a.tensors[0].t.data);
	EXPECT_EQ(0u, ot_heap_used(self->o));
}

TEST_F(man, ring_selected_by_scope_depth)
{
	struct pto_task h[6];
	int d;

	for (d = 0; d < 6; d++) {
		h[d] = T1(0, 0, PTO_NO_DEP);
		EXPECT_EQ(d < 3 ? d : 3, orch_slot_at(self->o, h[d].slot)->ring);
		ASSERT_EQ(0, pto_scope_begin(self->o));
	}
	for (d = 0; d < 6; d++)
		ASSERT_EQ(0, pto_scope_end(self->o));
}

TEST_F(man, scope_depth_limit)
{
	int d;

	for (d = 0; d < PTO_MAX_SCOPE_DEPTH; d++)
		ASSERT_EQ(0, pto_scope_begin(self->o));
	EXPECT_EQ(-EOVERFLOW, pto_scope_begin(self->o));
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "scope nesting"));
	orch_fail_run_submission(self->o, self->r, -EOVERFLOW);
	EXPECT_EQ(0u, self->o->scope.depth);
}

TEST_F(man, scope_end_does_not_wait)
{
	struct pto_task h;

	ASSERT_EQ(0, pto_scope_begin(self->o));
	h = T1(0, 0, PTO_NO_DEP);
	ASSERT_EQ(0, pto_scope_end(self->o));	/* returns at once */
	EXPECT_EQ(ORCH_READY, ot_state(self->o, h));
	EXPECT_EQ(1, ot_run_one(self->o, 0, 0, NULL));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, h));
}

TEST_F(man, inner_ring_reclaims_while_outer_holds)
{
	struct pto_task outer = T1(0, 0, PTO_NO_DEP), in;
	int i;

	/* 20 inner tasks through a ring of 8 slots, outer never finishes. */
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, pto_scope_begin(self->o));
		in = T1(1, 1, PTO_NO_DEP);
		ASSERT_EQ(1, orch_slot_at(self->o, in.slot)->ring);
		ASSERT_EQ(0, pto_scope_end(self->o));
		ASSERT_EQ(1, ot_run_one(self->o, 1, 0, NULL));
		ASSERT_EQ(0u, orch_ring_live(self->o, 1));
	}
	EXPECT_EQ(1u, orch_ring_live(self->o, 0));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, outer));
}

TEST_F(man, window_full_times_out_with_message)
{
	int i;

	for (i = 0; i < 8; i++)
		T1(0, 0, PTO_NO_DEP);
	pto_args_reset(&self->a);
	EXPECT_EQ(-ETIMEDOUT, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
						    pto_on_worker(0), NULL));
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o), "task window full"));
	orch_fail_run_submission(self->o, self->r, -ETIMEDOUT);
}

TEST_F(man, heap_exhausted_times_out_with_message)
{
	struct pto_tensor t;

	ASSERT_EQ(0, pto_alloc(self->o, 600 * 1024, &t, NULL));
	EXPECT_EQ(-ETIMEDOUT, pto_alloc(self->o, 600 * 1024, &t, NULL));
	EXPECT_NE(NULL, strstr(pto_orch_error(self->o),
			       "HeapRing exhausted, increase heap_ring_size"));
	orch_fail_run_submission(self->o, self->r, -ETIMEDOUT);
}

struct later {
	pto_orch *o;
	unsigned ms;
	int what;	/* 0: run worker 0's task, 1: shutdown the rings */
};

static void *later_fn(void *arg)
{
	struct later *l = arg;

	ot_sleep_ms(l->ms);
	if (l->what == 0)
		ot_run_one(l->o, 0, 0, NULL);
	else
		orch_ring_shutdown(l->o);
	return NULL;
}

/*
 * The waiting alloc's timeout is 10 s here, not the fixture's 200 ms: the
 * releasing thread sleeps 50 ms, and on a loaded host it may get a CPU
 * 150 ms after that. Half of it bounds the wait: the release wakes it.
 */
TEST_F(man, backpressure_then_release_unblocks)
{
	struct later l = { self->o, 50, 0 };
	struct pto_tensor t;
	pthread_t th;
	uint64_t t0;

	self->o->cfg.timeout_ms = 10000;
	ASSERT_EQ(0, pto_scope_begin(self->o));
	T1(0, 0, PTO_NO_DEP);
	ASSERT_EQ(0, pto_alloc(self->o, 1000 * 1024, &t, NULL));
	ASSERT_EQ(0, pto_scope_end(self->o));
	/* Ring 1 is full (the alloc holds 1000 KiB of 1 MiB). The next
	 * alloc waits for the task to finish, which frees the ring. */
	ASSERT_EQ(0, pto_scope_begin(self->o));
	t0 = ot_now_ns();
	pthread_create(&th, NULL, later_fn, &l);
	EXPECT_EQ(0, pto_alloc(self->o, 1000 * 1024, &t, NULL));
	EXPECT_GE(ot_now_ns() - t0, 40 * 1000000ULL);
	/* Woken by the release, not by its timeout's last look. */
	EXPECT_LT(ot_now_ns() - t0, 5000 * 1000000ULL);
	pthread_join(th, NULL);
	ASSERT_EQ(0, pto_scope_end(self->o));
}

TEST_F(man, shutdown_unblocks_blocked_alloc)
{
	struct later l = { self->o, 30, 1 };
	struct pto_tensor t;
	pthread_t th;

	self->o->cfg.timeout_ms = 5000;
	ASSERT_EQ(0, pto_alloc(self->o, 1000 * 1024, &t, NULL));
	pthread_create(&th, NULL, later_fn, &l);
	EXPECT_EQ(-ESHUTDOWN, pto_alloc(self->o, 1000 * 1024, &t, NULL));
	pthread_join(th, NULL);
	orch_fail_run_submission(self->o, self->r, -ESHUTDOWN);
}

TEST_F(man, failed_producer_poisons_dependents)
{
	struct pto_task p = T1(0, 0, PTO_OUTPUT_EXISTING);
	struct pto_task c = T1(1, 0, PTO_INPUT);
	struct pto_task d = T1(2, 0, PTO_INOUT);	/* c's sibling reader */
	struct pto_task e;
	struct orch_slot *cs = orch_slot_at(self->o, c.slot);

	EXPECT_EQ(1, ot_run_one(self->o, 0, -EIO, NULL));
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, c));
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, d));
	EXPECT_NE(NULL, strstr(cs->failure_message, "injected"));
	/* Wiring onto a FAILED producer poisons at submit. */
	pto_args_reset(&self->a);
	pto_args_add_dep_wait(&self->a, p);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), &e));
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, e));
	/*
	 * Each poisoned slot carries the producer's error, not a generic
	 * one: a chain passes it on.
	 */
	EXPECT_EQ(-EIO, cs->failure_err);
	EXPECT_EQ(-EIO, orch_slot_at(self->o, d.slot)->failure_err);
	EXPECT_EQ(-EIO, orch_slot_at(self->o, e.slot)->failure_err);
	/* Nothing poisoned is ever dispatched. */
	EXPECT_EQ(0, ot_drain(self->o));
	orch_close_run_submission(self->o, self->r);
	EXPECT_EQ(-EIO, pto_run_wait(self->r, 1000));
	EXPECT_NE(NULL, strstr(pto_run_error(self->r), "injected"));
}

/*
 * Poisoning runs down a chain p -> c -> e: the completion of failed p
 * propagates c, whose propagation claims e and propagates it in turn.
 * Each poisoned slot drops its own (self) reference and the one it
 * holds on its producer, once: a propagation that skips a self release,
 * or drops the chain head's where the link's was due, leaves a slot
 * that is never consumed and a run that never ends.
 */
TEST_F(man, poisoning_releases_each_slot_of_a_chain_once)
{
	struct pto_task p = T1(0, 0, PTO_OUTPUT_EXISTING);
	struct pto_task c = sub_on(_metadata, self, 1, 2, (int[]){ 0, 1 },
				   (int[]){ PTO_INPUT, PTO_OUTPUT_EXISTING });
	struct pto_task e = T1(2, 1, PTO_INPUT);
	struct orch_slot *ps = orch_slot_at(self->o, p.slot);
	struct orch_slot *cs = orch_slot_at(self->o, c.slot);
	struct orch_slot *es = orch_slot_at(self->o, e.slot);

	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, e));
	EXPECT_EQ(1, ot_run_one(self->o, 0, -EIO, NULL));
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, c));
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, e));
	EXPECT_EQ(-EIO, es->failure_err);	/* passed on by c */
	/* Released: self and the consumer's; the scope's is held. */
	EXPECT_EQ(2, ps->fanout_total);
	EXPECT_EQ(2, ps->fanout_released);
	EXPECT_EQ(2, cs->fanout_total);
	EXPECT_EQ(2, cs->fanout_released);
	EXPECT_EQ(1, es->fanout_total);
	EXPECT_EQ(1, es->fanout_released);	/* self */
	EXPECT_EQ(0, ot_drain(self->o));
	orch_close_run_submission(self->o, self->r);
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, p));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, c));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, e));
	EXPECT_EQ(-EIO, pto_run_wait(self->r, 1000));
}

/*
 * A task with neither consumer nor producer takes the short completion
 * path (its self release under the completion's lock): a failure there
 * is still the run's, with its message.
 */
TEST_F(man, failed_lone_task_fails_the_run)
{
	struct pto_task t = T1(0, 0, PTO_NO_DEP);
	struct orch_slot *ts = orch_slot_at(self->o, t.slot);

	EXPECT_EQ(1, ot_run_one(self->o, 0, -EIO, NULL));
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, t));
	EXPECT_EQ(-EIO, ts->failure_err);
	EXPECT_EQ(1, ts->fanout_released);	/* self; the scope holds it */
	orch_close_run_submission(self->o, self->r);
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, t));
	EXPECT_EQ(-EIO, pto_run_wait(self->r, 1000));
	EXPECT_NE(NULL, strstr(pto_run_error(self->r), "injected"));
}

/* ---- groups -------------------------------------------------------- */

static struct pto_task group_on(struct __test_metadata *_metadata,
				FIXTURE_DATA(man) *self, int n, const int32_t *ids)
{
	struct pto_task_args m[4], *mp[4];
	struct pto_task h = { 0 };
	int i;

	for (i = 0; i < n; i++) {
		pto_args_init(&m[i]);
		pto_args_add_scalar(&m[i], (uint64_t)i);
		mp[i] = &m[i];
	}
	EXPECT_EQ(0, pto_submit_next_level_group(self->o, &NOOP, mp, (uint32_t)n,
						 NULL, ids, &h));
	for (i = 0; i < n; i++)
		pto_args_fini(&m[i]);
	return h;
}

TEST_F(man, group_completes_only_when_all_members_done)
{
	struct pto_task g = group_on(_metadata, self, 2, (int32_t[]){ 0, 1 }), c;
	struct orch_slot *gs = orch_slot_at(self->o, g.slot);
	struct orch_dispatch d0, d1;
	struct orch_dispatch_view v;

	pto_args_reset(&self->a);
	pto_args_add_dep(&self->a, g);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(2), &c));
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d0));
	ASSERT_EQ(1, orch_ready_pop(self->o, 1, &d1));	/* assigned */
	EXPECT_EQ(0u, d0.member);
	EXPECT_EQ(1u, d1.member);
	orch_dispatch_view(&d1, &v);
	EXPECT_EQ(1u, v.nscalars);
	EXPECT_EQ(1u, v.scalars[0]);	/* member's own args */
	EXPECT_EQ(2u, v.nmembers);
	EXPECT_EQ(2u, atomic_load(&gs->members_left));
	/* Each member's outcome counts once: one left after the first. */
	orch_member_done(self->o, &d0, 0, NULL);
	EXPECT_EQ(1u, atomic_load(&gs->members_left));
	EXPECT_EQ(ORCH_RUNNING, ot_state(self->o, g));
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c));
	orch_member_done(self->o, &d1, 0, NULL);
	EXPECT_EQ(0u, atomic_load(&gs->members_left));
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, g));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
}

TEST_F(man, group_failure_waits_for_running_peers)
{
	struct pto_task g = group_on(_metadata, self, 2, (int32_t[]){ 1, 2 }), c;
	struct orch_dispatch d0, d1;

	pto_args_reset(&self->a);
	pto_args_add_dep_wait(&self->a, g);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(0), &c));
	ASSERT_EQ(1, orch_ready_pop(self->o, 2, &d1));
	ASSERT_EQ(1, orch_ready_pop(self->o, 1, &d0));
	orch_member_done(self->o, &d0, -EIO, "member 0 broke");
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c));	/* peer still runs */
	orch_member_done(self->o, &d1, 0, NULL);
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, g));
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, c));
	orch_close_run_submission(self->o, self->r);
	EXPECT_EQ(-EIO, pto_run_wait(self->r, 1000));
	EXPECT_NE(NULL, strstr(pto_run_error(self->r), "member 0 broke"));
}

TEST_F(man, blocked_group_reserves_targets)
{
	struct pto_task s1 = T1(0, 0, PTO_NO_DEP), g, s2, s3, g2;
	struct orch_dispatch d, dg0, dg1;

	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d));	/* worker 0 busy */
	EXPECT_EQ(s1.task_id, d.task_id);
	g = group_on(_metadata, self, 2, (int32_t[]){ 0, 1 });
	s2 = T1(1, 1, PTO_NO_DEP);
	s3 = T1(2, 2, PTO_NO_DEP);
	g2 = group_on(_metadata, self, 1, (int32_t[]){ 2 });
	/* Worker 1 is idle but reserved by the blocked head group. */
	EXPECT_EQ(0, orch_ready_pop(self->o, 1, &dg1));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, s2));
	/* Worker 2 is no target: it takes its single, and the group behind
	 * the head is not scanned even though its target is idle. */
	ASSERT_EQ(1, ot_run_one(self->o, 2, 0, NULL));
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, s3));
	EXPECT_EQ(0, orch_ready_pop(self->o, 2, &dg1));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, g2));
	/* Worker 0 frees up: its next pop starts the whole group. */
	orch_member_done(self->o, &d, 0, NULL);
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &dg0));
	EXPECT_EQ(g.task_id, dg0.task_id);
	EXPECT_EQ(ORCH_RUNNING, ot_state(self->o, g));
	ASSERT_EQ(1, orch_ready_pop(self->o, 1, &dg1));
	EXPECT_EQ(g.task_id, dg1.task_id);
	EXPECT_EQ(ORCH_READY, ot_state(self->o, s2));	/* still queued */
	orch_member_done(self->o, &dg0, 0, NULL);
	orch_member_done(self->o, &dg1, 0, NULL);
	EXPECT_EQ(1, ot_run_one(self->o, 1, 0, NULL));
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, s2));
	EXPECT_EQ(1, ot_run_one(self->o, 2, 0, NULL));
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, g2));
}

/* Capacity 2 (a device core's pending payload): two singles at once, but
 * a group still waits for the worker to be fully idle. */
TEST_F(man, worker_capacity_two_pending_slot)
{
	struct orch_dispatch d1, d2, d3, dg;
	struct pto_task g;

	orch_set_worker_capacity(self->o, 0, 2);
	T1(0, 0, PTO_NO_DEP);
	T1(0, 1, PTO_NO_DEP);
	T1(0, 2, PTO_NO_DEP);
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d1));
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d2));	/* pending slot */
	EXPECT_EQ(0, orch_ready_pop(self->o, 0, &d3));	/* full */
	g = group_on(_metadata, self, 2, (int32_t[]){ 0, 1 });
	orch_member_done(self->o, &d1, 0, NULL);
	/* Room for a single, but the head group reserves worker 0 and
	 * cannot start while it still holds d2. */
	EXPECT_EQ(0, orch_ready_pop(self->o, 0, &d3));
	EXPECT_EQ(0, orch_ready_pop(self->o, 1, &dg));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, g));
	orch_member_done(self->o, &d2, 0, NULL);
	ASSERT_EQ(1, orch_ready_pop(self->o, 1, &dg));	/* both idle now */
	EXPECT_EQ(g.task_id, dg.task_id);
	EXPECT_EQ(ORCH_RUNNING, ot_state(self->o, g));
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d3));	/* its member */
	EXPECT_EQ(g.task_id, d3.task_id);
	/* Capacity left on worker 0 while it runs a member: the third
	 * single goes to the pending slot. */
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d1));
	EXPECT_NE(g.task_id, d1.task_id);
	orch_member_done(self->o, &d1, 0, NULL);
	orch_member_done(self->o, &d3, 0, NULL);
	orch_member_done(self->o, &dg, 0, NULL);
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, g));
}

TEST_F(man, group_rejects_duplicate_or_unknown_targets)
{
	struct pto_task_args m, *mp[2] = { &m, &m };

	pto_args_init(&m);
	EXPECT_EQ(-EINVAL, pto_submit_next_level_group(self->o, &NOOP, mp, 2, NULL,
						       (int32_t[]){ 1, 1 }, NULL));
	EXPECT_EQ(-EINVAL, pto_submit_next_level_group(self->o, &NOOP, mp, 2, NULL,
						       (int32_t[]){ 1, 77 }, NULL));
	EXPECT_EQ(0, ot_live_slots(self->o));
	pto_args_fini(&m);
	orch_fail_run_submission(self->o, self->r, -EINVAL);
}

TEST_F(man, sub_group_members_run_anywhere_complete_together)
{
	struct pto_task_args m[3], *mp[3] = { &m[0], &m[1], &m[2] };
	struct orch_dispatch d[3];
	struct pto_task h;
	int i;

	for (i = 0; i < 3; i++)
		pto_args_init(&m[i]);
	ASSERT_EQ(0, pto_submit_sub_group(self->o, &NOOP, mp, 3, &h));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, orch_ready_pop(self->o, 3, &d[i]));	/* SUB worker */
		EXPECT_EQ((uint32_t)i, d[i].member);
		if (i < 2)
			orch_member_done(self->o, &d[i], 0, NULL);
		EXPECT_EQ(ORCH_RUNNING, ot_state(self->o, h));
	}
	orch_member_done(self->o, &d[2], 0, NULL);
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, h));
	for (i = 0; i < 3; i++)
		pto_args_fini(&m[i]);
}

TEST_F(man, spmd_blocks_dispatch_independently)
{
	struct pto_tensor out = { .nbytes = 100 };
	struct orch_dispatch d[5];
	struct orch_dispatch_view v;
	struct pto_task h, c;
	uint64_t data;
	int i;

	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &out, PTO_OUTPUT);
	ASSERT_EQ(0, pto_submit_spmd(self->o, &NOOP, &self->a, NULL, PTO_WORKER_AIV, 5,
				     &h));
	data = self->a.tensors[0].t.data;
	EXPECT_NE(0u, data);
	EXPECT_EQ(1024u, ot_heap_used(self->o));	/* one shared output */
	EXPECT_EQ(1u, orch_tm_count(self->o));
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &(struct pto_tensor){ .data = data, .nbytes = 100 },
			    PTO_INPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(9), &c));
	/* 5 blocks on 3 AIV workers: 3 start, the rest as workers free up. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(1, orch_ready_pop(self->o, i, &d[i]));
	EXPECT_EQ(0, orch_ready_pop(self->o, 3, &d[3]));	/* SUB: c not ready */
	orch_member_done(self->o, &d[1], 0, NULL);
	ASSERT_EQ(1, orch_ready_pop(self->o, 1, &d[3]));
	orch_member_done(self->o, &d[0], 0, NULL);
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d[4]));
	for (i = 0; i < 5; i++) {
		orch_dispatch_view(&d[i], &v);
		EXPECT_EQ((uint32_t)i, v.member);	/* block index */
		EXPECT_EQ(5u, v.nmembers);
		EXPECT_EQ(data, v.tensors[0].t.data);
	}
	orch_member_done(self->o, &d[2], 0, NULL);
	orch_member_done(self->o, &d[3], 0, NULL);
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c));
	orch_member_done(self->o, &d[4], 0, NULL);
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, h));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
}

/* SPMD blocks need no tensors (a kernel of scalars and its block index
 * only): each block gets the scalars and an empty tensor array. The
 * blocks after the first once copied member 0's tensors from a NULL
 * array (memcpy of 0 bytes from NULL: undefined, UBSan stops on it). */
TEST_F(man, spmd_blocks_without_tensors)
{
	struct orch_dispatch d[2];
	struct orch_dispatch_view v;
	struct pto_task h;
	int i;

	pto_args_reset(&self->a);
	pto_args_add_scalar(&self->a, 42);
	ASSERT_EQ(0, pto_submit_spmd(self->o, &NOOP, &self->a, NULL, PTO_WORKER_AIV, 2,
				     &h));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, orch_ready_pop(self->o, i, &d[i]));
		orch_dispatch_view(&d[i], &v);
		EXPECT_EQ((uint32_t)i, v.member);
		EXPECT_EQ(2u, v.nmembers);
		EXPECT_EQ(0u, v.ntensors);
		ASSERT_EQ(1u, v.nscalars);
		EXPECT_EQ(42u, v.scalars[0]);
	}
	for (i = 0; i < 2; i++)
		orch_member_done(self->o, &d[i], 0, NULL);
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, h));
}

TEST_F(man, any_worker_of_kind)
{
	struct pto_task h;

	pto_args_reset(&self->a);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_kind(PTO_WORKER_AIV), &h));
	EXPECT_EQ(0, ot_run_one(self->o, 3, 0, NULL));	/* SUB: wrong kind */
	EXPECT_EQ(1, ot_run_one(self->o, 2, 0, NULL));
	EXPECT_EQ(-EINVAL, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
						 pto_on_kind(PTO_WORKER_MIX), NULL));
	orch_fail_run_submission(self->o, self->r, -EINVAL);
}

/*
 * Wake-up hint of orch_member_done_pop: the first consumer a completion
 * makes READY for the completing worker's kind is the one that worker
 * pops next, so nobody is kicked for it (a kick would wake an idle
 * worker to race it). A second released consumer still kicks, and goes
 * to the other worker.
 */
TEST_F(man, done_pop_keeps_released_consumer_without_kick)
{
	struct orch_dispatch d, next, d2;
	struct pto_task p, c1, c2, tail;
	struct pto_tensor t;
	uint64_t k0;

	pto_args_reset(&self->a);
	t = pto_tensor_host(self->buf[0], 64);
	pto_args_add_tensor(&self->a, &t, PTO_OUTPUT_EXISTING);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_kind(PTO_WORKER_AIV), &p));
	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &t, PTO_INPUT);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_kind(PTO_WORKER_AIV), &c1));
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d));
	EXPECT_EQ(p.task_id, d.task_id);
	k0 = orch_manual_kicks(self->o);
	ASSERT_EQ(1, orch_member_done_pop(self->o, &d, 0, NULL, &next));
	EXPECT_EQ(c1.task_id, next.task_id);	/* the same worker took it */
	EXPECT_EQ(0, next.widx);
	EXPECT_EQ(k0, orch_manual_kicks(self->o));	/* nobody woken */
	EXPECT_EQ(ORCH_RUNNING, ot_state(self->o, c1));

	/* c1 -> two consumers: one stays with worker 0, one is kicked. */
	pto_args_reset(&self->a);
	t = pto_tensor_host(self->buf[1], 64);
	pto_args_add_tensor(&self->a, &t, PTO_OUTPUT_EXISTING);
	pto_args_add_dep(&self->a, c1);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_kind(PTO_WORKER_AIV), &c2));
	pto_args_reset(&self->a);
	pto_args_add_dep(&self->a, c1);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_kind(PTO_WORKER_AIV), &tail));
	k0 = orch_manual_kicks(self->o);
	ASSERT_EQ(1, orch_member_done_pop(self->o, &next, 0, NULL, &d));
	EXPECT_EQ(c2.task_id, d.task_id);
	EXPECT_EQ(k0 + 1, orch_manual_kicks(self->o));
	ASSERT_EQ(1, orch_ready_pop(self->o, 1, &d2));
	EXPECT_EQ(tail.task_id, d2.task_id);
	orch_member_done(self->o, &d, 0, NULL);
	orch_member_done(self->o, &d2, 0, NULL);

	/* Plain orch_member_done (no pop follows) still kicks. */
	pto_args_reset(&self->a);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_kind(PTO_WORKER_AIV), &p));
	pto_args_add_dep(&self->a, p);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_kind(PTO_WORKER_AIV), &c1));
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d));
	k0 = orch_manual_kicks(self->o);
	orch_member_done(self->o, &d, 0, NULL);
	EXPECT_LT(k0, orch_manual_kicks(self->o));
	EXPECT_EQ(1, ot_run_one(self->o, 1, 0, NULL));
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, c1));
	orch_close_run_submission(self->o, self->r);
}

/*
 * A core's two tasks found done at once (the device's reap): the older
 * one completes with orch_member_done_keep - its slot completes and
 * releases its consumer, but the worker stays loaded - and the next
 * completion's _kept call makes the worker idle for both in one step.
 */
TEST_F(man, keep_then_kept_idles_the_worker_once_for_both)
{
	struct orch_dispatch d1, d2, d3, dc, next;
	struct pto_task c;

	orch_set_worker_capacity(self->o, 0, 2);
	T1(0, 0, PTO_OUTPUT_EXISTING);
	T1(0, 1, PTO_NO_DEP);
	T1(0, 2, PTO_NO_DEP);
	c = T1(1, 0, PTO_INPUT);		/* consumer of the first */
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d1));
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d2));
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c));
	orch_member_done_keep(self->o, &d1, 0, NULL);
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));	/* completed */
	EXPECT_EQ(0, orch_ready_pop(self->o, 0, &d3));	/* still loaded */
	ASSERT_EQ(1, orch_member_done_pop_kept(self->o, &d2, 0, NULL, &next, 1));
	/* Idle for both, then the pop: room for one more. */
	T1(0, 3, PTO_NO_DEP);
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d3));
	EXPECT_EQ(0, orch_ready_pop(self->o, 0, &d1));	/* full again */
	orch_member_done_keep(self->o, &next, 0, NULL);
	orch_member_done_kept(self->o, &d3, 0, NULL, 1);
	/* Idle: two singles fit again. */
	T1(0, 4, PTO_NO_DEP);
	T1(0, 5, PTO_NO_DEP);
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d1));
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d2));
	orch_member_done(self->o, &d1, 0, NULL);
	orch_member_done(self->o, &d2, 0, NULL);
	ASSERT_EQ(1, orch_ready_pop(self->o, 1, &dc));
	EXPECT_EQ(c.task_id, dc.task_id);
	orch_member_done(self->o, &dc, 0, NULL);
}

/* ---- acceptance vs completion -------------------------------------- */

/*
 * The saved kick is paid back when the completing worker's pop takes
 * something else: t (on worker 0) has consumers c (any AIV) and then e
 * (exact on worker 0). c is routed while worker 0's exact FIFO is still
 * empty, so its kick is saved; e is routed next, and the pop takes e
 * (exact first). c must not wait behind e with workers 1 and 2 idle.
 */
TEST_F(man, done_pop_kicks_for_a_consumer_its_pop_did_not_take)
{
	struct orch_dispatch d, next;
	struct pto_task t, c, e;
	uint64_t k0;

	t = T1(0, 0, PTO_OUTPUT_EXISTING);
	pto_args_reset(&self->a);
	pto_args_add_dep(&self->a, t);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_kind(PTO_WORKER_AIV), &c));
	e = T1(0, 0, PTO_INPUT);
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d));
	EXPECT_EQ(t.task_id, d.task_id);
	k0 = orch_manual_kicks(self->o);
	ASSERT_EQ(1, orch_member_done_pop(self->o, &d, 0, NULL, &next));
	EXPECT_EQ(e.task_id, next.task_id);
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
	EXPECT_EQ(k0 + 1, orch_manual_kicks(self->o));	/* for c */
	EXPECT_EQ(1, ot_run_one(self->o, 1, 0, NULL));	/* c */
	EXPECT_EQ(ORCH_RUNNING, ot_state(self->o, e));
	orch_member_done(self->o, &next, 0, NULL);
}

TEST_F(man, acceptance_fence_precedes_completion)
{
	struct orch_dispatch d;

	T1(0, 0, PTO_OUTPUT_EXISTING);
	T1(1, 0, PTO_INPUT);
	orch_close_run_submission(self->o, self->r);
	EXPECT_EQ(0, pto_run_accepted(self->r));
	EXPECT_EQ(-ETIMEDOUT, pto_run_wait_accepted(self->r, 10));
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d));
	EXPECT_EQ(0, pto_run_accepted(self->r));	/* consumer not launched */
	orch_member_done(self->o, &d, 0, NULL);
	ASSERT_EQ(1, orch_ready_pop(self->o, 1, &d));
	EXPECT_EQ(1, pto_run_accepted(self->r));
	EXPECT_EQ(0, pto_run_wait_accepted(self->r, 0));
	EXPECT_EQ(0, pto_run_done(self->r));
	EXPECT_EQ(-EBUSY, pto_run_result(self->r));
	orch_member_done(self->o, &d, 0, NULL);
	EXPECT_EQ(1, pto_run_done(self->r));
	EXPECT_EQ(0, pto_run_result(self->r));
}

/* ---- the publication window --------------------------------------- */

struct pub_ctx {
	struct orch_dispatch prod;
	int err;
	int fired;
	int state;		/* the consumer's, right after the producer's end */
	int32_t released;	/* its fanin_released then */
};

static int publish_hook(void *ctx, struct pto_orch *o, int fp, struct orch_slot *s)
{
	struct pub_ctx *p = ctx;

	if (fp == ORCH_TP_BEFORE_PUBLISH && !p->fired) {
		/* The consumer is wired (counted in the producer's list) but
		 * still BUILDING: finish the producer now. */
		p->fired = 1;
		if (atomic_load(&s->state) == ORCH_BUILDING && s->nproducers == 1)
			orch_member_done(o, &p->prod, p->err, p->err ? "late fail" : NULL);
		p->state = atomic_load(&s->state);
		p->released = s->fanin_released;
	}
	return 0;
}

TEST_F(man, producer_completes_between_wiring_and_publication)
{
	struct pub_ctx pc = { .err = 0 };
	struct pto_task p = T1(0, 0, PTO_OUTPUT_EXISTING), c;
	struct orch_slot *ps = orch_slot_at(self->o, p.slot);
	struct orch_dispatch d;

	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &pc.prod));
	orch_set_fail_hook(self->o, publish_hook, &pc);
	c = T1(1, 0, PTO_INPUT);
	orch_set_fail_hook(self->o, NULL, NULL);
	EXPECT_EQ(1, pc.fired);
	/*
	 * The release of a BUILDING slot only records itself: its count is
	 * not published yet, and publication decides. Made READY there,
	 * publication would find it no longer BUILDING and take it for a
	 * failure claim: propagate it (cancel its member, release its
	 * producer early), while the completion routes it to run anyway.
	 */
	EXPECT_EQ(ORCH_BUILDING, pc.state);
	EXPECT_EQ(1, pc.released);
	EXPECT_EQ(ORCH_COMPLETED, ot_state(self->o, p));
	EXPECT_EQ(1, ps->fanout_released);	/* self; c and the scope hold it */
	/* The release that landed while BUILDING was counted by publication:
	 * READY, and queued exactly once. */
	EXPECT_EQ(ORCH_READY, ot_state(self->o, c));
	EXPECT_EQ(ORCH_M_PENDING,
		  atomic_load(&orch_slot_at(self->o, c.slot)->members[0].mstate));
	ASSERT_EQ(1, orch_ready_pop(self->o, 1, &d));
	EXPECT_EQ(c.task_id, d.task_id);
	orch_member_done(self->o, &d, 0, NULL);
	EXPECT_EQ(0, orch_ready_pop(self->o, 1, &d));
	EXPECT_EQ(2, ps->fanout_released);	/* + c's retention */
}

TEST_F(man, producer_fails_between_wiring_and_publication)
{
	struct pub_ctx pc = { .err = -EIO };
	struct pto_task p = T1(0, 0, PTO_OUTPUT_EXISTING), c;
	struct orch_slot *ps = orch_slot_at(self->o, p.slot);

	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &pc.prod));
	orch_set_fail_hook(self->o, publish_hook, &pc);
	c = T1(1, 0, PTO_INPUT);
	orch_set_fail_hook(self->o, NULL, NULL);
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, p));
	/* Claimed in BUILDING, propagated once by the submitter: the
	 * producer's references are released exactly once (scope ref + the
	 * consumer's retention + self = total + 1 after scope end). */
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, c));
	EXPECT_EQ(2, ps->fanout_total);
	EXPECT_EQ(2, ps->fanout_released);	/* self + consumer's */
	EXPECT_EQ(0, ot_drain(self->o));
	orch_close_run_submission(self->o, self->r);
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, p));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, c));
	EXPECT_EQ(-EIO, pto_run_wait(self->r, 1000));
}

/*
 * "Accepted" counts a task that failed without running like one that was
 * dispatched (pto_run_accepted(3)): a consumer poisoned by its producer's
 * failure, and one wired onto the producer after it failed (claimed from
 * BUILDING), each leave the unlaunched count, so the run is accepted while
 * an unrelated task still runs, before it is done.
 */
TEST_F(man, poisoned_consumers_count_as_accepted)
{
	struct pto_task p, c, e;
	struct orch_dispatch x, d;

	T1(2, 5, PTO_NO_DEP);			/* x: runs throughout */
	p = T1(0, 0, PTO_OUTPUT_EXISTING);
	c = T1(1, 0, PTO_INPUT);
	ASSERT_EQ(1, orch_ready_pop(self->o, 2, &x));
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &d));
	EXPECT_EQ(p.task_id, d.task_id);
	orch_member_done(self->o, &d, -EIO, "p broke");
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, c));
	pto_args_reset(&self->a);
	pto_args_add_dep_wait(&self->a, p);
	ASSERT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(1), &e));
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, e));
	orch_close_run_submission(self->o, self->r);
	EXPECT_EQ(1, pto_run_accepted(self->r));
	EXPECT_EQ(0, pto_run_wait_accepted(self->r, 0));
	EXPECT_EQ(0, pto_run_done(self->r));	/* x still runs */
	orch_member_done(self->o, &x, 0, NULL);
	EXPECT_EQ(-EIO, pto_run_wait(self->r, 1000));
	EXPECT_EQ(0, ot_drain(self->o));	/* c and e never ran */
}

/*
 * The same for cancellation: a run whose construction failed cancels its
 * PENDING and READY tasks, and those count as accepted at once, while a
 * task already running finishes in its own time.
 */
TEST_F(man, cancelled_tasks_count_as_accepted)
{
	struct pto_task p, c, r;
	struct orch_dispatch x;

	p = T1(0, 0, PTO_OUTPUT_EXISTING);
	c = T1(1, 0, PTO_INPUT);		/* PENDING on p */
	r = T1(2, 1, PTO_NO_DEP);		/* READY, never popped */
	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &x));
	EXPECT_EQ(p.task_id, x.task_id);
	EXPECT_EQ(ORCH_PENDING, ot_state(self->o, c));
	EXPECT_EQ(ORCH_READY, ot_state(self->o, r));
	EXPECT_EQ(0, orch_fail_run_submission(self->o, self->r, -EINVAL));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, c));	/* cancelled */
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, r));
	EXPECT_EQ(ORCH_RUNNING, ot_state(self->o, p));
	EXPECT_EQ(1, pto_run_accepted(self->r));
	EXPECT_EQ(0, pto_run_done(self->r));
	orch_member_done(self->o, &x, 0, NULL);
	EXPECT_EQ(-EINVAL, pto_run_wait(self->r, 1000));
	EXPECT_EQ(0, ot_drain(self->o));
}

/*
 * A consumer claimed from BUILDING by a failing producer is propagated by
 * its submitter at publication, which clears failure_propagation_pending:
 * if the run's construction then fails, cancellation must not take the
 * slot over and release its references a second time.
 */
TEST_F(man, propagated_at_publication_is_not_cancelled_again)
{
	struct pub_ctx pc = { .err = -EIO };
	struct pto_task p = T1(0, 0, PTO_OUTPUT_EXISTING), c;
	struct orch_slot *ps = orch_slot_at(self->o, p.slot);
	struct orch_slot *cs;

	ASSERT_EQ(1, orch_ready_pop(self->o, 0, &pc.prod));
	orch_set_fail_hook(self->o, publish_hook, &pc);
	c = T1(1, 0, PTO_INPUT);
	orch_set_fail_hook(self->o, NULL, NULL);
	cs = orch_slot_at(self->o, c.slot);
	EXPECT_EQ(ORCH_FAILED, ot_state(self->o, c));
	EXPECT_FALSE(cs->failure_propagation_pending);
	EXPECT_EQ(0, orch_fail_run_submission(self->o, self->r, -EINVAL));
	/* Each reference released once: p's scope, c's retention and self;
	 * c's scope and self.
	 */
	EXPECT_EQ(2, ps->fanout_total);
	EXPECT_EQ(3, ps->fanout_released);
	EXPECT_EQ(1, cs->fanout_total);
	EXPECT_EQ(2, cs->fanout_released);
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, p));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, c));
	/* The run keeps its first error, the producer's. */
	EXPECT_EQ(-EIO, pto_run_wait(self->r, 1000));
}

/*
 * A submit whose slot a failing producer claimed from BUILDING, and that
 * then fails itself (here: growing a second producer's consumer list),
 * never publishes: the slot is FAILED with its propagation pending, and
 * the run's cancellation must take it over - release the reference it
 * took on the failed producer and its own - or neither slot is ever
 * consumed and the run never finishes.
 */
struct wire_fail_ctx {
	struct orch_dispatch p1;	/* if @fail_p1: popped, failed from the hook */
	bool fail_p1;
	int fired;
};

static int wire_fail_hook(void *ctx, struct pto_orch *o, int fp,
			  struct orch_slot *s)
{
	struct wire_fail_ctx *w = ctx;

	if (fp != ORCH_FP_WIRE || w->fired)
		return 0;
	w->fired = 1;
	/* s is wired onto p1 (retained) and still BUILDING. */
	if (w->fail_p1 && atomic_load(&s->state) == ORCH_BUILDING &&
	    s->nproducers == 1)
		orch_member_done(o, &w->p1, -EIO, "p1 broke");
	return 1;
}

/*
 * Submit a task retaining p1 and p2 whose wiring fails on p2 (its
 * consumer list is full and growing it fails), after taking its
 * reference on p1; @w->fail_p1: p1, popped, fails in between. Returns
 * the slot the submit was building (the failed submit wrote no handle
 * back: the next task id, after p2's consumers).
 */
static struct orch_slot *fail_second_wiring(struct __test_metadata *_metadata,
					    FIXTURE_DATA(man) *self,
					    struct wire_fail_ctx *w,
					    struct pto_task *p1, struct pto_task *p2)
{
	struct orch_slot *ss;
	struct pto_task s;
	int i;

	*p1 = T1(0, 0, PTO_OUTPUT_EXISTING);
	*p2 = T1(1, 1, PTO_OUTPUT_EXISTING);
	for (i = 0; i < ORCH_INL_EDGES; i++)	/* p2's consumer list is full */
		T1(2, 1, PTO_INPUT);
	if (w->fail_p1) {
		ASSERT_EQ(1, orch_ready_pop(self->o, 0, &w->p1));
		EXPECT_EQ(p1->task_id, w->p1.task_id);
	}
	pto_args_reset(&self->a);
	pto_args_add_dep(&self->a, *p1);
	pto_args_add_dep(&self->a, *p2);
	orch_set_fail_hook(self->o, wire_fail_hook, w);
	EXPECT_EQ(-ENOMEM, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
						 pto_on_worker(1), &s));
	orch_set_fail_hook(self->o, NULL, NULL);
	ASSERT_EQ(1, w->fired);
	ss = orch_slot_at(self->o, (p2->slot + ORCH_INL_EDGES + 1) %
				   self->o->rings[0].window);
	EXPECT_EQ(p2->task_id + ORCH_INL_EDGES + 1, ss->task_id);
	EXPECT_EQ(1u, ss->nproducers);		/* p1 */
	return ss;
}

/* After the cancellation: nothing left to run, the run over with @err,
 * every slot reclaimed. */
static void expect_cancelled_run_ended(struct __test_metadata *_metadata,
				       FIXTURE_DATA(man) *self, int err)
{
	EXPECT_EQ(0, ot_drain(self->o));
	EXPECT_EQ(1, pto_run_done(self->r));
	EXPECT_EQ(err, pto_run_result(self->r));
	EXPECT_TRUE(ot_empty(self->o));
}

TEST_F(man, submit_failing_after_a_producer_claimed_it_is_cancelled)
{
	struct wire_fail_ctx w = { .fail_p1 = true };
	struct pto_task p1, p2;
	struct orch_slot *p1s, *ss;

	ss = fail_second_wiring(_metadata, self, &w, &p1, &p2);
	p1s = orch_slot_at(self->o, p1.slot);
	EXPECT_EQ(ORCH_FAILED, atomic_load(&ss->state));
	EXPECT_TRUE(ss->failure_propagation_pending);
	EXPECT_EQ(2, p1s->fanout_total);	/* scope + s's retention */
	EXPECT_EQ(1, p1s->fanout_released);	/* self */
	EXPECT_EQ(0, orch_fail_run_submission(self->o, self->r, -ENOMEM));
	EXPECT_FALSE(ss->failure_propagation_pending);
	EXPECT_EQ(3, p1s->fanout_released);	/* + scope + s's */
	EXPECT_EQ(2, ss->fanout_released);	/* scope + self */
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, p1));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, p2));
	expect_cancelled_run_ended(_metadata, self, -EIO);
}

/*
 * The same failed submit with nothing claiming its slot: it is left
 * BUILDING, and only the run's cancellation can reclaim it - claim it,
 * release its reference on p1 and its own. Skipped, the slot holds p1
 * and itself for good, and the run never ends.
 */
TEST_F(man, submit_failing_while_building_is_cancelled)
{
	struct wire_fail_ctx w = { .fail_p1 = false };
	struct pto_task p1, p2;
	struct orch_slot *p1s, *ss;

	ss = fail_second_wiring(_metadata, self, &w, &p1, &p2);
	p1s = orch_slot_at(self->o, p1.slot);
	EXPECT_EQ(ORCH_BUILDING, atomic_load(&ss->state));
	EXPECT_EQ(2, p1s->fanout_total);	/* scope + s's retention */
	EXPECT_EQ(0, p1s->fanout_released);	/* p1 never ran */
	EXPECT_EQ(0, orch_fail_run_submission(self->o, self->r, -ENOMEM));
	/* Read after reclaim: a reclaimed slot keeps its counters until
	 * it is reused, and nothing is submitted meanwhile. */
	EXPECT_EQ(1, ss->fanout_total);		/* the scope's */
	EXPECT_EQ(2, ss->fanout_released);	/* scope + self */
	EXPECT_EQ(3, p1s->fanout_released);	/* scope + self + s's */
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, p1));
	EXPECT_EQ(ORCH_CONSUMED, ot_state(self->o, p2));
	expect_cancelled_run_ended(_metadata, self, -ENOMEM);
}

/* ---- a device-like backend: heap rings are GM objects --------------- */

#define GM_DEV 2	/* device tag: device index 1 + 1 */

static int gm_heap_map(void *be, int ring, uint64_t size, struct orch_heap *h)
{
	(void)be;
	memset(h, 0, sizeof(*h));
	h->base = aligned_alloc(PTO_HEAP_ALIGN, size);
	h->size = size;
	h->space = PTO_SPACE_GM;
	h->obj = 100 + (uint64_t)ring;	/* buffer object of this ring */
	h->obj_off = 4096;		/* where the ring starts in it */
	h->dev = GM_DEV;		/* in the GM of device 1 */
	return h->base ? 0 : -ENOMEM;
}

static void gm_heap_unmap(void *be, int ring, struct orch_heap *h)
{
	(void)be;
	(void)ring;
	free(h->base);
}

static int gm_start(void *be, struct pto_orch *o) { (void)be; (void)o; return 0; }
static int gm_stop(void *be, const struct timespec *d) { (void)be; (void)d; return 0; }
static void gm_kick(void *be, int32_t w, uint32_t k) { (void)be; (void)w; (void)k; }
static void gm_destroy(void *be) { (void)be; }

static const struct orch_backend_ops gm_ops = {
	.name = "gm-test", .heap_map = gm_heap_map, .heap_unmap = gm_heap_unmap,
	.start = gm_start, .stop = gm_stop, .kick = gm_kick, .destroy = gm_destroy,
};

TEST(gm_heap_outputs_are_keyed_by_object_and_offset)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 8 };
	struct pto_tensor out = { .nbytes = 10, .space = PTO_SPACE_GM }, view, at;
	struct pto_task_args a;
	struct pto_task p, c;
	struct pto_run *r;
	pto_orch *o;

	ASSERT_EQ(0, orch_create(&cfg, &gm_ops, NULL, &o));
	ASSERT_EQ(0, orch_begin_run(o, &r));
	pto_args_init(&a);
	pto_args_add_tensor(&a, &out, PTO_OUTPUT);
	ASSERT_EQ(0, pto_submit_next_level(o, &NOOP, &a, NULL, pto_on_worker(0), &p));
	out = a.tensors[0].t;
	EXPECT_EQ((uint64_t)(uintptr_t)o->rings[0].heap.base, out.data);
	EXPECT_EQ(PTO_SPACE_GM, out.space);
	EXPECT_EQ(100u, out.obj);
	EXPECT_EQ(4096u, out.offset);
	EXPECT_EQ(GM_DEV, out.dev);	/* the heap's device */
	/* alloc() slabs likewise, in the scope's ring. */
	ASSERT_EQ(0, pto_scope_begin(o));
	ASSERT_EQ(0, pto_alloc(o, 5000, &at, NULL));
	EXPECT_EQ(101u, at.obj);
	EXPECT_EQ(4096u, at.offset);
	EXPECT_EQ(GM_DEV, at.dev);
	ASSERT_EQ(0, pto_scope_end(o));
	/*
	 * Another mapping of the same GM bytes depends on the writer, also
	 * untagged (hand-built): the tag is not part of the key.
	 */
	view = out;
	view.data = 0xdead000;
	view.dev = 0;
	pto_args_reset(&a);
	pto_args_add_tensor(&a, &view, PTO_INPUT);
	ASSERT_EQ(0, pto_submit_next_level(o, &NOOP, &a, NULL, pto_on_worker(1), &c));
	EXPECT_EQ(ORCH_PENDING, ot_state(o, c));
	orch_close_run_submission(o, r);
	EXPECT_EQ(2, ot_drain(o));
	EXPECT_EQ(0, pto_run_wait(r, 1000));
	pto_run_release(r);
	pto_args_fini(&a);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

static struct pto_tensor gm_at(uint64_t obj, uint32_t dev)
{
	struct pto_tensor t = { .data = 0x1000, .nbytes = 64, .obj = obj,
				.space = PTO_SPACE_GM, .dev = dev };

	return t;
}

/*
 * On an orchestrator whose GM is device 1's, a GM tensor tagged with its
 * own device or untagged is accepted, and so is another device's tag on
 * a HOST tensor (the tag names a GM) and on an OUTPUT it allocates
 * (which gets device 1's tag).
 */
TEST(gm_tensors_of_the_own_device_or_untagged_are_accepted)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 8 };
	struct pto_tensor own = gm_at(0x10000, GM_DEV), untagged = gm_at(0x20000, 0);
	struct pto_tensor host = pto_tensor_host((void *)0x3000, 64);
	struct pto_tensor out = { .nbytes = 64, .space = PTO_SPACE_GM, .dev = 1 };
	struct pto_task_args a;
	struct pto_run *r;
	pto_orch *o;

	host.dev = 1;
	ASSERT_EQ(0, orch_create(&cfg, &gm_ops, NULL, &o));
	ASSERT_EQ(0, orch_begin_run(o, &r));
	pto_args_init(&a);
	pto_args_add_tensor(&a, &own, PTO_INPUT);
	pto_args_add_tensor(&a, &untagged, PTO_INOUT);
	pto_args_add_tensor(&a, &host, PTO_INPUT);
	pto_args_add_tensor(&a, &out, PTO_OUTPUT);
	EXPECT_EQ(0, pto_submit_next_level(o, &NOOP, &a, NULL, pto_on_worker(0), NULL))
		TH_LOG("%s", pto_orch_error(o));
	EXPECT_EQ(GM_DEV, a.tensors[3].t.dev);
	orch_close_run_submission(o, r);
	EXPECT_EQ(1, ot_drain(o));
	EXPECT_EQ(0, pto_run_wait(r, 1000));
	pto_run_release(r);
	pto_args_fini(&a);
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * A task naming @bad, a tensor submit must refuse, tagged tag[shape]: as a
 * single's second tensor (shape 0), a group's second member's only tensor
 * (1), an SPMD task's second tensor (2).
 */
struct refused {
	const struct pto_callable *c;
	struct pto_tensor bad;
	enum pto_tag tag[3];
	uintptr_t shape;
};

static int submit_refused(pto_orch *o, void *arg)
{
	struct refused *x = arg;
	struct pto_tensor own = gm_at(0x10000, GM_DEV);
	struct pto_task_args a, b, *args[2] = { &a, &b };
	static const int32_t ids[2] = { 0, 1 };
	int err;

	pto_args_init(&a);
	pto_args_init(&b);
	pto_args_add_tensor(&a, &own, PTO_INPUT);
	pto_args_add_tensor(x->shape == 1 ? &b : &a, &x->bad, x->tag[x->shape]);
	if (x->shape == 1)
		err = pto_submit_next_level_group(o, x->c, args, 2, NULL, ids,
						  NULL);
	else if (x->shape == 2)
		err = pto_submit_spmd(o, x->c, &a, NULL, PTO_WORKER_SUB, 3, NULL);
	else
		err = pto_submit_next_level(o, x->c, &a, NULL,
					    pto_on_worker(0), NULL);
	pto_args_fini(&a);
	pto_args_fini(&b);
	return err;
}

/* Shapes 0..@n-1 of @x on @ops: the run fails to build with @err and
 * msg[shape], with nothing claimed and nothing run. */
static void expect_refused(struct __test_metadata *_metadata,
			   const struct orch_backend_ops *ops,
			   struct refused *x, uintptr_t n, int err,
			   const char *const *msg)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 8 };
	struct pto_run *r;
	pto_orch *o;

	ASSERT_EQ(0, orch_create(&cfg, ops, NULL, &o));
	for (x->shape = 0; x->shape < n; x->shape++) {
		EXPECT_EQ(err, pto_run_start(o, submit_refused, x, &r))
			TH_LOG("shape %lu", (unsigned long)x->shape);
		EXPECT_STREQ(msg[x->shape], pto_orch_error(o));
		EXPECT_EQ(0, ot_drain(o));	/* nothing to run */
		EXPECT_EQ(err, pto_run_wait(r, 1000));
		pto_run_release(r);
		EXPECT_TRUE(ot_empty(o));	/* no slot was claimed */
	}
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * A GM tensor of device 0 on device 1's orchestrator names device 1's GM
 * at the same address: refused at submit with -EXDEV, naming both
 * devices; the run fails to build with nothing started.
 */
TEST(gm_tensor_of_another_device_is_refused_at_submit)
{
	static const char *const msg[3] = {
		"member 0 tensor 1 is GM of device 0, this orchestrator runs on device 1",
		"member 1 tensor 0 is GM of device 0, this orchestrator runs on device 1",
		"member 0 tensor 1 is GM of device 0, this orchestrator runs on device 1",
	};
	struct refused x = { &NOOP, gm_at(0x10000, 1),
			     { PTO_INPUT, PTO_OUTPUT_EXISTING, PTO_INOUT }, 0 };

	expect_refused(_metadata, &gm_ops, &x, 3, -EXDEV, msg);
}

/*
 * On a backend that runs no host callbacks (here gm_ops, whose default
 * workers are two SUB workers), a callable without fn is accepted
 * whatever the submit variant: a next-level task placed on a SUB worker
 * and a pto_submit_sub alike. The rule is the backend's, not the submit
 * variant's (it once refused the SUB submit only).
 */
static int submit_fnless(pto_orch *o, void *arg)
{
	static const struct pto_callable none = { .kernel_id = 1 };
	struct pto_task_args a;
	int err;

	(void)arg;
	pto_args_init(&a);
	pto_args_add_scalar(&a, 7);
	err = pto_submit_next_level(o, &none, &a, NULL, pto_on_worker(0), NULL);
	if (!err)
		err = pto_submit_sub(o, &none, &a, NULL);
	pto_args_fini(&a);
	return err;
}

TEST(fnless_callable_taken_alike_without_host_callbacks)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 8 };
	struct pto_run *r;
	pto_orch *o;

	ASSERT_EQ(0, orch_create(&cfg, &gm_ops, NULL, &o));
	ASSERT_EQ(2, orch_nworkers(o));
	ASSERT_EQ(0, pto_run_start(o, submit_fnless, NULL, &r))
		TH_LOG("\"%s\"", pto_orch_error(o));
	EXPECT_EQ(2, ot_drain(o));	/* both ran (the manual way) */
	EXPECT_EQ(0, pto_run_wait(r, 1000));
	pto_run_release(r);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/*
 * A hand-built dep whose retain is not 0 or 1 or whose reserved bytes are set,
 * a dep handle's pad and an argument tensor's pad bytes are refused at submit
 * with -EINVAL and a message naming them, before anything is claimed; each
 * byte in a single, a group member and an SPMD task.
 */
struct bad_dep {
	int shape;		/* 0 single, 1 group (member 1), 2 SPMD */
	/* 0: retain, 1-7: reserved[byte - 1], BAD_HPAD + k: the dep's
	 * handle's pad byte k, BAD_TPAD + k: tensor 0's pad[k] */
	unsigned int byte;
	uint8_t val;
	struct pto_task h;	/* the consumer's handle */
	uint64_t live[2], tid[2];	/* before and after its submit */
	int32_t fanout[2];
	uint32_t nconsumers[2];
	char msg[128];
};

#define BAD_HPAD 8
#define BAD_TPAD 16

static int submit_bad_dep(pto_orch *o, void *arg)
{
	static const int32_t ids[2] = { 0, 1 };
	struct bad_dep *x = arg;
	struct pto_task_args a, b, *args[2] = { &a, &b };
	struct orch_slot *ps;
	struct pto_dep *d;
	struct pto_task p;
	int err;

	pto_args_init(&a);
	pto_args_init(&b);
	err = pto_submit_next_level(o, &NOOP, &a, NULL, pto_on_worker(0), &p);
	if (err)
		goto out;
	ps = orch_slot_at(o, p.slot);
	pto_args_add_dep_wait(&a, p);
	pto_args_add_dep(&a, p);
	pto_args_add_dep(&b, p);
	pto_args_add_dep_wait(&b, p);
	d = &(x->shape == 1 ? &b : &a)->deps[1];
	if (x->byte >= BAD_TPAD) {
		/* An ordering key (NO_DEP: no TensorMap change). */
		struct pto_tensor t = { .data = 0x1000, .nbytes = 64,
					.space = PTO_SPACE_HOST };
		struct pto_task_args *ta = x->shape == 1 ? &b : &a;

		pto_args_add_tensor(ta, &t, PTO_NO_DEP);
		ta->tensors[0].pad[x->byte - BAD_TPAD] = x->val;
	} else if (x->byte >= BAD_HPAD)
		((uint8_t *)&d->h.pad)[x->byte - BAD_HPAD] = x->val;
	else if (x->byte)
		d->reserved[x->byte - 1] = x->val;
	else
		d->retain = x->val;
	x->live[0] = ot_live_slots(o);
	x->tid[0] = atomic_load(&o->next_task_id);
	x->fanout[0] = ps->fanout_total;
	x->nconsumers[0] = ps->nconsumers;
	if (x->shape == 1)
		err = pto_submit_next_level_group(o, &NOOP, args, 2, NULL, ids,
						  &x->h);
	else if (x->shape == 2)
		err = pto_submit_spmd(o, &NOOP, &a, NULL, PTO_WORKER_SUB, 2, &x->h);
	else
		err = pto_submit_next_level(o, &NOOP, &a, NULL,
					    pto_on_worker(1), &x->h);
	snprintf(x->msg, sizeof(x->msg), "%s", pto_orch_error(o));
	x->live[1] = ot_live_slots(o);
	x->tid[1] = atomic_load(&o->next_task_id);
	x->fanout[1] = ps->fanout_total;
	x->nconsumers[1] = ps->nconsumers;
out:
	pto_args_fini(&a);
	pto_args_fini(&b);
	return err;
}

TEST(hand_built_dep_with_bad_retain_or_reserved_bytes_is_refused)
{
	static const struct { unsigned int byte; uint8_t val; } cases[] = {
		{ 0, 2 }, { 0, 0xff }, { 1, 1 }, { 2, 0x80 }, { 3, 0x10 },
		{ 4, 1 }, { 5, 0x40 }, { 6, 2 }, { 7, 0xff },
		{ BAD_HPAD, 1 }, { BAD_HPAD + 3, 0x80 },
		{ BAD_TPAD, 1 }, { BAD_TPAD + 2, 0x20 }, { BAD_TPAD + 5, 0xff },
	};
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 8 };
	struct bad_dep x;
	struct pto_run *r;
	unsigned int i;
	char want[128];
	pto_orch *o;
	int shape;

	ASSERT_EQ(0, orch_create(&cfg, &gm_ops, NULL, &o));
	for (shape = 0; shape < 3; shape++) {
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			memset(&x, 0, sizeof(x));
			memset(&x.h, 0xa5, sizeof(x.h));
			x.shape = shape;
			x.byte = cases[i].byte;
			x.val = cases[i].val;
			if (x.byte >= BAD_TPAD)
				snprintf(want, sizeof(want),
					 "member %d tensor 0: pad[%u] is not zero",
					 shape == 1, x.byte - BAD_TPAD);
			else if (x.byte >= BAD_HPAD)
				snprintf(want, sizeof(want),
					 "member %d dep 1: task handle pad is not zero",
					 shape == 1);
			else if (x.byte)
				snprintf(want, sizeof(want),
					 "member %d dep 1: reserved[%u] is not zero",
					 shape == 1, x.byte - 1);
			else
				snprintf(want, sizeof(want),
					 "member %d dep 1: retain %u is neither 0 nor 1",
					 shape == 1, x.val);
			EXPECT_EQ(-EINVAL, pto_run_start(o, submit_bad_dep, &x, &r))
				TH_LOG("shape %d, byte %u = 0x%x", shape, x.byte,
				       x.val);
			EXPECT_STREQ(want, x.msg);
			EXPECT_EQ(1u, x.live[0]);	/* the producer */
			EXPECT_EQ(x.live[0], x.live[1]);
			EXPECT_EQ(x.tid[0], x.tid[1]);
			EXPECT_EQ(1, x.fanout[0]);	/* the scope's */
			EXPECT_EQ(x.fanout[0], x.fanout[1]);
			EXPECT_EQ(0u, x.nconsumers[0]);
			EXPECT_EQ(x.nconsumers[0], x.nconsumers[1]);
			EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, x.h.task_id);
			EXPECT_EQ(0xa5a5a5a5u, x.h.slot);
			/*
			 * The run is doomed: its producer is cancelled. A run
			 * that does not end holds its slots: stop here, or the
			 * next submit waits for the window until the harness
			 * kills the test.
			 */
			EXPECT_EQ(0, ot_drain(o));
			ASSERT_EQ(-EINVAL, pto_run_wait(r, 1000));
			pto_run_release(r);
			EXPECT_TRUE(ot_empty(o));
		}
		/* The control: the same deps, their bytes zero, submit; the
		 * consumer waits on the producer, then both run. */
		memset(&x, 0, sizeof(x));
		x.shape = shape;
		x.byte = 1;	/* reserved[0] = 0: retain as added */
		ASSERT_EQ(0, pto_run_start(o, submit_bad_dep, &x, &r))
			TH_LOG("shape %d: %s", shape, x.msg);
		EXPECT_STREQ("", x.msg);
		EXPECT_EQ(x.live[0] + 1, x.live[1]);
		EXPECT_EQ(x.tid[0] + 1, x.tid[1]);
		EXPECT_EQ(x.nconsumers[0] + 1, x.nconsumers[1]);
		EXPECT_EQ(x.fanout[0] + 1, x.fanout[1]);	/* retained */
		EXPECT_EQ(shape ? 3 : 2, ot_drain(o));
		ASSERT_EQ(0, pto_run_wait(r, 1000));
		pto_run_release(r);
		EXPECT_TRUE(ot_empty(o));
	}
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/* pto_args_add_dep() and pto_args_add_dep_wait() write a whole dep:
 * handle, retain 1 / 0, reserved bytes zero whatever the reused array
 * held. */
TEST(add_dep_zeroes_the_reserved_bytes)
{
	struct pto_task h = { .run_id = 3, .task_id = 9, .slot = 4 };
	struct pto_task_args a;
	unsigned int i, j;

	pto_args_init(&a);
	ASSERT_EQ(0, pto_args_add_dep(&a, h));
	ASSERT_EQ(0, pto_args_add_dep(&a, h));
	memset(a.deps, 0xa5, 2 * sizeof(*a.deps));
	pto_args_reset(&a);
	ASSERT_EQ(0, pto_args_add_dep(&a, h));
	ASSERT_EQ(0, pto_args_add_dep_wait(&a, h));
	ASSERT_EQ(2u, a.ndeps);
	for (j = 0; j < 2; j++) {
		EXPECT_EQ(0, memcmp(&h, &a.deps[j].h, sizeof(h)));
		EXPECT_EQ(j ? 0 : 1, a.deps[j].retain);
		for (i = 0; i < ARRAY_SIZE(a.deps[j].reserved); i++) {
			EXPECT_EQ(0, a.deps[j].reserved[i])
				TH_LOG("dep %u reserved[%u]", j, i);
		}
	}
	pto_args_fini(&a);
}

/* ---- kernels that address GM only (the device's rule, on the test GM) ---- */

#define K_ORDER 3	/* uses no tensor address: any space orders */
#define K_READS 5	/* addresses its tensors: GM only */

static const struct orch_backend_ops gm_kernel_ops = {
	.name = "gm-kernels", .heap_map = gm_heap_map, .heap_unmap = gm_heap_unmap,
	.start = gm_start, .stop = gm_stop, .kick = gm_kick, .destroy = gm_destroy,
	.kernels_need_heap_space = true, .tensorless_kernels = 1ULL << K_ORDER,
};

static const struct pto_callable KC_ORDER = { .fn = noop, .kernel_id = K_ORDER };
static const struct pto_callable KC_READS = { .fn = noop, .kernel_id = K_READS };

#define READS_GM ", and kernel 5 addresses its tensors in GM only (a kernel that uses no tensor address may take any tensor as an ordering key)"

/*
 * On a backend whose kernels address the heap's space only (the device:
 * GM), a HOST tensor - whatever its tag - given to a kernel that addresses
 * its tensors is refused at submit with -EINVAL and a reason, before
 * anything is claimed, for a single, a group member and SPMD alike.
 */
TEST(host_tensor_to_a_kernel_that_addresses_tensors_is_refused_at_submit)
{
	static const char *const msg[3] = {
		"member 0 tensor 1 is a HOST tensor" READS_GM,
		"member 1 tensor 0 is a HOST tensor" READS_GM,
		"member 0 tensor 1 is a HOST tensor" READS_GM,
	};
	struct refused x = { &KC_READS, pto_tensor_host((void *)0x3000, 64),
			     { PTO_NO_DEP, PTO_OUTPUT_EXISTING, PTO_INOUT }, 0 };

	expect_refused(_metadata, &gm_kernel_ops, &x, 3, -EINVAL, msg);
}

/*
 * On the same backend, a kernel that uses no tensor address takes HOST
 * tensors as ordering keys (they still order: RAW on the HOST key), and a
 * kernel that addresses its tensors takes GM tensors and an OUTPUT it has allocated (HOST-space as
 * asked, carved from the heap's GM). Everything runs.
 */
TEST(ordering_kernels_take_host_tensors_others_take_gm)
{
	struct pto_orch_config cfg = { .heap_ring_size = 1 << 20, .task_window = 8 };
	struct pto_tensor host = pto_tensor_host((void *)0x3000, 64);
	struct pto_tensor gm = gm_at(0x10000, GM_DEV);
	struct pto_tensor out = { .nbytes = 64, .space = PTO_SPACE_HOST };
	struct pto_task_args a;
	struct pto_task w, rd;
	struct pto_run *r;
	pto_orch *o;

	ASSERT_EQ(0, orch_create(&cfg, &gm_kernel_ops, NULL, &o));
	ASSERT_EQ(0, orch_begin_run(o, &r));
	pto_args_init(&a);
	pto_args_add_tensor(&a, &host, PTO_OUTPUT_EXISTING);
	ASSERT_EQ(0, pto_submit_next_level(o, &KC_ORDER, &a, NULL,
					   pto_on_worker(0), &w))
		TH_LOG("%s", pto_orch_error(o));
	pto_args_reset(&a);
	pto_args_add_tensor(&a, &host, PTO_INPUT);
	pto_args_add_tensor(&a, &gm, PTO_INPUT);
	ASSERT_EQ(0, pto_submit_spmd(o, &KC_ORDER, &a, NULL, PTO_WORKER_SUB, 2, &rd))
		TH_LOG("%s", pto_orch_error(o));
	EXPECT_EQ(ORCH_PENDING, ot_state(o, rd));	/* the HOST key orders */
	pto_args_reset(&a);
	pto_args_add_tensor(&a, &gm, PTO_INPUT);
	pto_args_add_tensor(&a, &out, PTO_OUTPUT);
	ASSERT_EQ(0, pto_submit_next_level(o, &KC_READS, &a, NULL,
					   pto_on_worker(1), NULL))
		TH_LOG("%s", pto_orch_error(o));
	EXPECT_EQ(PTO_SPACE_GM, a.tensors[1].t.space);	/* carved from GM */
	orch_close_run_submission(o, r);
	EXPECT_EQ(4, ot_drain(o));	/* 1 + 2 blocks + 1 */
	EXPECT_EQ(0, pto_run_wait(r, 1000));
	pto_run_release(r);
	pto_args_fini(&a);
	EXPECT_TRUE(ot_empty(o));
	EXPECT_EQ(0, pto_orch_close(o, 100));
	EXPECT_EQ(0, pto_orch_destroy(o));
}

/* The in-process backend has no device GM: any tag is accepted (a host
 * callback may touch any device's mapping). */
TEST_F(man, in_process_orchestrator_accepts_any_device_tag)
{
	struct pto_tensor d0 = gm_at(0x10000, 1), d1 = gm_at(0x10000, 2);

	pto_args_reset(&self->a);
	pto_args_add_tensor(&self->a, &d0, PTO_INPUT);
	pto_args_add_tensor(&self->a, &d1, PTO_INPUT);
	EXPECT_EQ(0, pto_submit_next_level(self->o, &NOOP, &self->a, NULL,
					   pto_on_worker(0), NULL));
}

/*
 * The device tag took the place of padding: struct pto_tensor keeps its
 * size and offsets, so a program built before it (tag 0: untagged) runs
 * against this library unchanged.
 */
TEST(tensor_layout_is_unchanged_by_the_device_tag)
{
	EXPECT_EQ(96u, sizeof(struct pto_tensor));
	EXPECT_EQ(40u, offsetof(struct pto_tensor, rank));
	EXPECT_EQ(60u, offsetof(struct pto_tensor, dev));
	EXPECT_EQ(64u, offsetof(struct pto_tensor, strides));
	EXPECT_EQ(104u, sizeof(struct pto_arg_tensor));
}

TEST_HARNESS_MAIN
