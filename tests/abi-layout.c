// SPDX-License-Identifier: MIT
/*
 * The layout of every public struct of libpto (size, each field's offset and
 * size, implicit padding) and the driver's commands (type, number, direction,
 * struct size) with the ABI major libpto accepts. These are the ABI: a change
 * fails here first (Documentation/abi.md). A field taken from reserved space
 * moves the reserved array's line: update both and check the size held.
 * tests/abi-symbols builds this as C11 and C++11; TAP, one result per struct;
 * LP64 numbers.
 */
#include <stddef.h>
#include <stdio.h>
#include <linux/pto.h>
#include <linux/pto_dump.h>
#include <pto/events.h>
#include <pto/orch.h>
#include <pto/pto.h>
#include <pto/sched.h>
#include <pto/graph.h>

static int tests, failures;
static int mismatches;		/* of the struct being checked */
static size_t covered;		/* bytes of the fields listed so far */

static void field(const char *name, size_t off, size_t size, size_t want_off,
		  size_t want_size)
{
	covered += size;
	if (off == want_off && size == want_size)
		return;
	printf("# %s at %zu (%zu bytes), expected at %zu (%zu bytes)\n", name,
	       off, size, want_off, want_size);
	mismatches++;
}

/*
 * Every field must be listed: the fields' sizes plus @padding (implicit
 * padding the struct is known to have) add up to its size, so a new field
 * or new padding shows.
 */
static void done(const char *name, size_t size, size_t want_size,
		 size_t padding)
{
	if (size != want_size) {
		printf("# sizeof(struct %s) is %zu, expected %zu\n", name, size,
		       want_size);
		mismatches++;
	}
	if (covered + padding != size) {
		printf("# struct %s: fields %zu + implicit padding %zu bytes != size %zu"
		       " (a field not listed, or padding)\n", name, covered, padding,
		       size);
		mismatches++;
	}
	tests++;
	if (mismatches)
		failures++;
	printf("%s %d - struct %s: %zu bytes\n", mismatches ? "not ok" : "ok",
	       tests, name, want_size);
	mismatches = 0;
	covered = 0;
}

/*
 * An ioctl command: _IOWR(PTO_IOCTL_BASE, @nr, struct of @size bytes),
 * type 'x' and @nr inside pto's block 0x00-0x3F.
 */
static void command(const char *name, unsigned long cmd, unsigned int nr,
		    unsigned int size)
{
	int bad = 0;

	if (_IOC_TYPE(cmd) != 'x' || PTO_IOCTL_BASE != 'x') {
		printf("# %s: type %#x, expected 'x'\n", name,
		       (unsigned int)_IOC_TYPE(cmd));
		bad = 1;
	}
	if (_IOC_NR(cmd) != nr || nr > 0x3f) {
		printf("# %s: number %#x, expected %#x in 0x00-0x3f\n", name,
		       (unsigned int)_IOC_NR(cmd), nr);
		bad = 1;
	}
	if (_IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE)) {
		printf("# %s: not _IOWR\n", name);
		bad = 1;
	}
	if (_IOC_SIZE(cmd) != size) {
		printf("# %s: size %u, expected %u\n", name,
		       (unsigned int)_IOC_SIZE(cmd), size);
		bad = 1;
	}
	tests++;
	failures += bad;
	printf("%s %d - %s: _IOWR('x', 0x%02x, %u bytes)\n",
	       bad ? "not ok" : "ok", tests, name, nr, size);
}

#define COMMAND(c, nr, size) command(#c, c, nr, size)

#define FIELD(s, f, off, size)						\
	field(#s "." #f, offsetof(struct s, f), sizeof(((struct s *)0)->f), \
	      off, size)
#define DONE(s, size, padding) done(#s, sizeof(struct s), size, padding)

int main(void)
{
	/* ---- pto/pto.h ---- */
	FIELD(pto_dev_info, abi_major, 0, 4);
	FIELD(pto_dev_info, abi_minor, 4, 4);
	FIELD(pto_dev_info, index, 8, 4);
	FIELD(pto_dev_info, clusters, 12, 4);
	FIELD(pto_dev_info, cores, 16, 4);
	FIELD(pto_dev_info, lanes, 20, 4);
	FIELD(pto_dev_info, gm_size, 24, 8);
	FIELD(pto_dev_info, gm_align, 32, 4);
	FIELD(pto_dev_info, window_size, 36, 4);
	FIELD(pto_dev_info, caps, 40, 8);
	FIELD(pto_dev_info, core_type, 48, 108);
	FIELD(pto_dev_info, reserved0, 156, 4);
	FIELD(pto_dev_info, reserved, 160, 64);
	DONE(pto_dev_info, 224, 0);

	/* ---- pto/events.h ---- */
	FIELD(pto_event, type, 0, 4);
	FIELD(pto_event, device, 4, 4);
	FIELD(pto_event, core, 8, 4);
	FIELD(pto_event, lane, 12, 4);
	FIELD(pto_event, reason, 16, 4);
	FIELD(pto_event, timeout_ms, 20, 4);
	FIELD(pto_event, error, 24, 4);
	FIELD(pto_event, result, 28, 4);
	FIELD(pto_event, cause, 32, 8);
	DONE(pto_event, 40, 0);

	FIELD(pto_events_ops, device_error, 0, 8);
	FIELD(pto_events_ops, core_quarantine, 8, 8);
	FIELD(pto_events_ops, lane_quarantine, 16, 8);
	FIELD(pto_events_ops, reset, 24, 8);
	FIELD(pto_events_ops, retire_timeout, 32, 8);
	FIELD(pto_events_ops, reserved, 40, 32);
	DONE(pto_events_ops, 72, 0);

	/* ---- pto/orch.h ---- */
	FIELD(pto_tensor, data, 0, 8);
	FIELD(pto_tensor, nbytes, 8, 8);
	FIELD(pto_tensor, obj, 16, 8);
	FIELD(pto_tensor, offset, 24, 8);
	FIELD(pto_tensor, space, 32, 4);
	FIELD(pto_tensor, dtype, 36, 4);
	FIELD(pto_tensor, rank, 40, 4);
	FIELD(pto_tensor, shape, 44, 16);
	FIELD(pto_tensor, dev, 60, 4);
	FIELD(pto_tensor, strides, 64, 32);
	DONE(pto_tensor, 96, 0);

	FIELD(pto_arg_tensor, t, 0, 96);
	FIELD(pto_arg_tensor, tag, 96, 1);
	FIELD(pto_arg_tensor, dump, 97, 1);
	FIELD(pto_arg_tensor, pad, 98, 6);
	DONE(pto_arg_tensor, 104, 0);

	FIELD(pto_task, run_id, 0, 8);
	FIELD(pto_task, task_id, 8, 8);
	FIELD(pto_task, slot, 16, 4);
	FIELD(pto_task, pad, 20, 4);
	DONE(pto_task, 24, 0);

	/* An element of args' dep array: pto_args_add_dep() fills it, but
	 * the array is public, so the bytes after retain are named reserved
	 * space (zero, checked at submit), not implicit padding. */
	FIELD(pto_dep, h, 0, 24);
	FIELD(pto_dep, retain, 24, 1);
	FIELD(pto_dep, reserved, 25, 7);
	DONE(pto_dep, 32, 0);

	FIELD(pto_task_args, tensors, 0, 8);
	FIELD(pto_task_args, scalars, 8, 8);
	FIELD(pto_task_args, scalar_dump, 16, 8);
	FIELD(pto_task_args, deps, 24, 8);
	FIELD(pto_task_args, ntensors, 32, 4);
	FIELD(pto_task_args, cap_tensors, 36, 4);
	FIELD(pto_task_args, nscalars, 40, 4);
	FIELD(pto_task_args, cap_scalars, 44, 4);
	FIELD(pto_task_args, ndeps, 48, 4);
	FIELD(pto_task_args, cap_deps, 52, 4);
	DONE(pto_task_args, 56, 0);

	FIELD(pto_task_ctx, tensors, 0, 8);
	FIELD(pto_task_ctx, scalars, 8, 8);
	FIELD(pto_task_ctx, ntensors, 16, 4);
	FIELD(pto_task_ctx, nscalars, 20, 4);
	FIELD(pto_task_ctx, member, 24, 4);
	FIELD(pto_task_ctx, nmembers, 28, 4);
	FIELD(pto_task_ctx, worker_id, 32, 4);
	FIELD(pto_task_ctx, pad, 36, 4);
	FIELD(pto_task_ctx, task_id, 40, 8);
	FIELD(pto_task_ctx, user, 48, 8);
	FIELD(pto_task_ctx, errmsg, 56, 8);
	FIELD(pto_task_ctx, errmsg_len, 64, 8);
	DONE(pto_task_ctx, 72, 0);

	FIELD(pto_callable, fn, 0, 8);
	FIELD(pto_callable, user, 8, 8);
	FIELD(pto_callable, kernel_id, 16, 8);
	DONE(pto_callable, 24, 0);

	FIELD(pto_call_config, reserved0, 0, 4);	/* was block_dim */
	FIELD(pto_call_config, flags, 4, 4);
	FIELD(pto_call_config, reserved, 8, 24);
	DONE(pto_call_config, 32, 0);

	FIELD(pto_worker_desc, id, 0, 4);
	FIELD(pto_worker_desc, kind, 4, 4);
	FIELD(pto_worker_desc, reserved, 8, 24);
	DONE(pto_worker_desc, 32, 0);

	FIELD(pto_target, worker_id, 0, 4);
	FIELD(pto_target, kind, 4, 4);
	DONE(pto_target, 8, 0);

	FIELD(pto_orch_config, heap_ring_size, 0, 8);
	FIELD(pto_orch_config, task_window, 8, 4);
	FIELD(pto_orch_config, timeout_ms, 12, 4);
	FIELD(pto_orch_config, run_depth, 16, 4);
	FIELD(pto_orch_config, nworkers, 20, 4);
	FIELD(pto_orch_config, workers, 24, 8);
	FIELD(pto_orch_config, trace_bytes, 32, 8);
	FIELD(pto_orch_config, reserved, 40, 88);
	DONE(pto_orch_config, 128, 0);

	/* ---- pto/sched.h ---- */
	FIELD(pto_sched_config, threads, 0, 4);
	FIELD(pto_sched_config, clusters, 4, 4);
	FIELD(pto_sched_config, spin_us, 8, 4);
	FIELD(pto_sched_config, wake_delay_us, 12, 4);
	FIELD(pto_sched_config, sub_threads, 16, 4);
	FIELD(pto_sched_config, reserved0, 20, 4);
	FIELD(pto_sched_config, reserved, 24, 40);
	DONE(pto_sched_config, 64, 0);

	FIELD(pto_sched_stats, tasks, 0, 8);
	FIELD(pto_sched_stats, errors, 8, 8);
	FIELD(pto_sched_stats, doorbells, 16, 8);
	FIELD(pto_sched_stats, sleeps, 24, 8);
	FIELD(pto_sched_stats, retired, 32, 8);
	FIELD(pto_sched_stats, quarantined, 40, 8);
	FIELD(pto_sched_stats, retire_ns, 48, 8);
	FIELD(pto_sched_stats, captures, 56, 8);
	FIELD(pto_sched_stats, reserved, 64, 64);
	DONE(pto_sched_stats, 128, 0);

	FIELD(pto_hbg_stats, tasks, 0, 8);
	FIELD(pto_hbg_stats, errors, 8, 8);
	FIELD(pto_hbg_stats, elapsed_ns, 16, 8);
	FIELD(pto_hbg_stats, completed, 24, 4);
	FIELD(pto_hbg_stats, err_task, 28, 4);
	FIELD(pto_hbg_stats, err_status, 32, 4);
	FIELD(pto_hbg_stats, bad_task, 36, 4);
	FIELD(pto_hbg_stats, bad_field, 40, 4);
	FIELD(pto_hbg_stats, reserved0, 44, 4);
	FIELD(pto_hbg_stats, reserved, 48, 32);
	DONE(pto_hbg_stats, 80, 0);
	/* ---- linux/pto_dump.h: the dump lanes ---- */
	FIELD(pto_dump_record, task_id, 0, 8);
	FIELD(pto_dump_record, run_id, 8, 8);
	FIELD(pto_dump_record, func_id, 16, 12);
	FIELD(pto_dump_record, arg_index, 28, 4);
	FIELD(pto_dump_record, role, 32, 4);
	FIELD(pto_dump_record, stage, 36, 4);
	FIELD(pto_dump_record, kind, 40, 4);
	FIELD(pto_dump_record, dtype, 44, 4);
	FIELD(pto_dump_record, rank, 48, 4);
	FIELD(pto_dump_record, flags, 52, 4);
	FIELD(pto_dump_record, shape, 56, 16);
	FIELD(pto_dump_record, strides, 72, 32);
	FIELD(pto_dump_record, start_offset, 104, 8);
	FIELD(pto_dump_record, data, 112, 8);
	FIELD(pto_dump_record, payload_size, 120, 4);
	FIELD(pto_dump_record, pad, 124, 4);
	DONE(pto_dump_record, PTO_DUMP_RECORD_SIZE, 0);

	FIELD(pto_dump_acct, published_payloads, 0, 8);
	FIELD(pto_dump_acct, completed_payloads, 8, 8);
	FIELD(pto_dump_acct, total, 16, 8);
	FIELD(pto_dump_acct, collected, 24, 8);
	FIELD(pto_dump_acct, dropped, 32, 8);
	FIELD(pto_dump_acct, truncated, 40, 8);
	FIELD(pto_dump_acct, ready_tail, 48, 8);
	FIELD(pto_dump_acct, ready_head, 56, 8);
	DONE(pto_dump_acct, 64, 0);

	FIELD(pto_dump_state, magic, 0, 4);
	FIELD(pto_dump_state, version, 4, 4);
	FIELD(pto_dump_state, level, 8, 4);
	FIELD(pto_dump_state, state, 12, 4);
	FIELD(pto_dump_state, meta_buffers, 16, 4);
	FIELD(pto_dump_state, records_per_buffer, 20, 4);
	FIELD(pto_dump_state, record_size, 24, 4);
	FIELD(pto_dump_state, quarantine, 28, 4);
	FIELD(pto_dump_state, meta_offset, 32, 8);
	FIELD(pto_dump_state, arena_offset, 40, 8);
	FIELD(pto_dump_state, arena_size, 48, 8);
	FIELD(pto_dump_state, arena_write_pos, 56, 8);
	FIELD(pto_dump_state, acct, 64, 64);
	FIELD(pto_dump_state, ready, 128, 32);
	FIELD(pto_dump_state, ready_records, 160, 32);
	FIELD(pto_dump_state, free_count, 192, 4);
	FIELD(pto_dump_state, pad, 196, 4);
	DONE(pto_dump_state, 200, 0);

	FIELD(pto_dump_bind, lane, 0, 4);
	FIELD(pto_dump_bind, level, 4, 4);
	FIELD(pto_dump_bind, flags, 8, 8);
	FIELD(pto_dump_bind, mmap_offset, 16, 8);
	FIELD(pto_dump_bind, mmap_size, 24, 8);
	FIELD(pto_dump_bind, arena_size, 32, 8);
	DONE(pto_dump_bind, 40, 0);

	FIELD(pto_dump_capture, lane, 0, 4);
	FIELD(pto_dump_capture, handle, 4, 4);
	FIELD(pto_dump_capture, flags, 8, 8);
	FIELD(pto_dump_capture, run_id, 16, 8);
	FIELD(pto_dump_capture, task_id, 24, 8);
	FIELD(pto_dump_capture, func_id, 32, 12);
	FIELD(pto_dump_capture, arg_index, 44, 4);
	FIELD(pto_dump_capture, role, 48, 4);
	FIELD(pto_dump_capture, stage, 52, 4);
	FIELD(pto_dump_capture, kind, 56, 4);
	FIELD(pto_dump_capture, dtype, 60, 4);
	FIELD(pto_dump_capture, rank, 64, 4);
	FIELD(pto_dump_capture, shape, 68, 16);
	FIELD(pto_dump_capture, pad0, 84, 4);
	FIELD(pto_dump_capture, strides, 88, 32);
	FIELD(pto_dump_capture, start_offset, 120, 8);
	FIELD(pto_dump_capture, bo_offset, 128, 8);
	FIELD(pto_dump_capture, value, 136, 8);
	FIELD(pto_dump_capture, timeout_ns, 144, 8);
	FIELD(pto_dump_capture, result, 152, 4);
	FIELD(pto_dump_capture, pad, 156, 4);
	DONE(pto_dump_capture, 160, 0);

	FIELD(pto_dump_ack, lane, 0, 4);
	FIELD(pto_dump_ack, flags, 4, 4);
	FIELD(pto_dump_ack, completed_payloads, 8, 8);
	FIELD(pto_dump_ack, returned_buffers, 16, 8);
	DONE(pto_dump_ack, 24, 0);

	FIELD(pto_dump_lane, lane, 0, 4);
	FIELD(pto_dump_lane, flags, 4, 4);
	DONE(pto_dump_lane, 8, 0);

	FIELD(pto_dump_status, lane, 0, 4);
	FIELD(pto_dump_status, flags, 4, 4);
	FIELD(pto_dump_status, state, 8, 4);
	FIELD(pto_dump_status, level, 12, 4);
	FIELD(pto_dump_status, quarantine, 16, 4);
	FIELD(pto_dump_status, owner, 20, 4);
	FIELD(pto_dump_status, open, 24, 4);
	FIELD(pto_dump_status, pad, 28, 4);
	FIELD(pto_dump_status, count, 32, 8);
	FIELD(pto_dump_status, reserved, 40, 8);
	FIELD(pto_dump_status, arena_size, 48, 8);
	FIELD(pto_dump_status, arena_write_pos, 56, 8);
	FIELD(pto_dump_status, acct, 64, 64);
	FIELD(pto_dump_status, open_bytes, 128, 8);
	FIELD(pto_dump_status, open_written, 136, 8);
	FIELD(pto_dump_status, refused, 144, 8);
	FIELD(pto_dump_status, abandoned, 152, 8);
	FIELD(pto_dump_status, open_task_id, 160, 8);
	FIELD(pto_dump_status, open_arg_index, 168, 4);
	FIELD(pto_dump_status, pad1, 172, 4);
	DONE(pto_dump_status, 176, 0);

	FIELD(pto_dump_reset, lanes, 0, 4);
	FIELD(pto_dump_reset, flags, 4, 4);
	FIELD(pto_dump_reset, recovered, 8, 4);
	FIELD(pto_dump_reset, remaining, 12, 4);
	DONE(pto_dump_reset, 16, 0);

	/* ---- linux/pto.h: the driver's commands ---- */
	tests++;
	if (PTO_ABI_MAJOR != 2)
		failures++;
	printf("%s %d - PTO_ABI_MAJOR is 2 (is %d)\n",
	       PTO_ABI_MAJOR != 2 ? "not ok" : "ok", tests, PTO_ABI_MAJOR);
	COMMAND(PTO_IOCTL_GET_INFO, 0x00, 64);
	COMMAND(PTO_IOCTL_BO_ALLOC, 0x01, 40);
	COMMAND(PTO_IOCTL_BO_FREE, 0x02, 8);
	COMMAND(PTO_IOCTL_BO_INFO, 0x03, 40);
	COMMAND(PTO_IOCTL_CLUSTER_ACQUIRE, 0x04, 16);
	COMMAND(PTO_IOCTL_CLUSTER_RELEASE, 0x05, 16);
	COMMAND(PTO_IOCTL_CORE_LAUNCH, 0x06, 40);
	COMMAND(PTO_IOCTL_DOORBELL, 0x07, 24);
	COMMAND(PTO_IOCTL_CORE_STATS, 0x08, 72);
	COMMAND(PTO_IOCTL_CORE_RETIRE, 0x09, 56);
	COMMAND(PTO_IOCTL_RETIRE_STATUS, 0x0a, 72);
	COMMAND(PTO_IOCTL_CORE_RESET, 0x0b, 32);
	COMMAND(PTO_IOCTL_DUMP_BIND, 0x10, 40);
	COMMAND(PTO_IOCTL_DUMP_CAPTURE, 0x11, 160);
	COMMAND(PTO_IOCTL_DUMP_ACK, 0x12, 24);
	COMMAND(PTO_IOCTL_DUMP_CLOSE, 0x13, 8);
	COMMAND(PTO_IOCTL_DUMP_UNBIND, 0x14, 8);
	COMMAND(PTO_IOCTL_DUMP_STATUS, 0x15, 176);
	COMMAND(PTO_IOCTL_DUMP_RESET, 0x16, 16);

	printf("1..%d\n", tests);
	return failures != 0;
}
