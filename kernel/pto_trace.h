/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tracepoints of the pto system (tracefs events/pto/): a mock core taking
 * and finishing a task, doorbells, parks and wake-ups, every retirement
 * write per core, quarantines, and dump-lane reservations, commits and
 * abandons. Documentation/tracing.md lists the
 * fields; the run trace of the library is a separate, user-space record.
 */
#if !defined(PTO_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define PTO_TRACE_H

#include <linux/tracepoint.h>
#include "pto_core.h"
#include "pto_retire.h"
#include "pto_producer.h"

#undef TRACE_SYSTEM
#define TRACE_SYSTEM pto
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pto_trace

DECLARE_EVENT_CLASS(pto_core_event,
	TP_PROTO(const struct pto_core *core),
	TP_ARGS(core),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, core)
	),
	TP_fast_assign(
		__entry->dev = core->pdev->index;
		__entry->core = core->id;
	),
	TP_printk("dev=%u core=%u", __entry->dev, __entry->core)
);

/* A doorbell rang this core (CORE_DOORBELL). */
DEFINE_EVENT(pto_core_event, pto_doorbell,
	TP_PROTO(const struct pto_core *core), TP_ARGS(core));
/* The core published PARKED and sleeps until a doorbell or a stop. */
DEFINE_EVENT(pto_core_event, pto_core_park,
	TP_PROTO(const struct pto_core *core), TP_ARGS(core));
/* The parked core woke up. */
DEFINE_EVENT(pto_core_event, pto_core_wake,
	TP_PROTO(const struct pto_core *core), TP_ARGS(core));

/* The core took task @id (its ACK). */
TRACE_EVENT(pto_task_start,
	TP_PROTO(const struct pto_core *core, u32 id, u32 func),
	TP_ARGS(core, id, func),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, core)
		__field(u32, id)
		__field(u32, func)
	),
	TP_fast_assign(
		__entry->dev = core->pdev->index;
		__entry->core = core->id;
		__entry->id = id;
		__entry->func = func;
	),
	TP_printk("dev=%u core=%u id=%u func=%u", __entry->dev,
		  __entry->core, __entry->id, __entry->func)
);

/* The core finished task @id with @status (PTO_TASK_*), before its FIN. */
TRACE_EVENT(pto_task_end,
	TP_PROTO(const struct pto_core *core, u32 id, u32 status,
		 u64 start_ns, u64 end_ns),
	TP_ARGS(core, id, status, start_ns, end_ns),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, core)
		__field(u32, id)
		__field(u32, status)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->dev = core->pdev->index;
		__entry->core = core->id;
		__entry->id = id;
		__entry->status = status;
		__entry->ns = end_ns - start_ns;
	),
	TP_printk("dev=%u core=%u id=%u status=%u ns=%llu", __entry->dev,
		  __entry->core, __entry->id, __entry->status, __entry->ns)
);

/* One retirement write (or read-back) of @core, as the recording sink. */
TRACE_EVENT(pto_retire,
	TP_PROTO(const struct pto_core *core, enum pto_rw what, u32 val),
	TP_ARGS(core, what, val),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, core)
		__field(u32, what)
		__field(u32, val)
	),
	TP_fast_assign(
		__entry->dev = core->pdev->index;
		__entry->core = core->id;
		__entry->what = what;
		__entry->val = val;
	),
	TP_printk("dev=%u core=%u step=%s val=0x%x", __entry->dev,
		  __entry->core,
		  __print_symbolic(__entry->what,
			{ PTO_RW_NONCE, "nonce" }, { PTO_RW_EXIT, "exit" },
			{ PTO_RW_IDLE, "idle" }, { PTO_RW_CLOSE, "close" },
			{ PTO_RW_READBACK, "readback" },
			{ PTO_RW_DRAIN, "drain" }, { PTO_RW_GATE, "gate" },
			{ PTO_RW_QUARANTINE, "quarantine" },
			{ PTO_RW_UNQUARANTINE, "unquarantine" }),
		  __entry->val)
);

/* Retirement left @core quarantined, for @why. */
TRACE_EVENT(pto_quarantine,
	TP_PROTO(const struct pto_core *core, const char *why),
	TP_ARGS(core, why),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, core)
		__string(why, why)
	),
	TP_fast_assign(
		__entry->dev = core->pdev->index;
		__entry->core = core->id;
		__assign_str(why, why);
	),
	TP_printk("dev=%u core=%u why=%s", __entry->dev, __entry->core,
		  __get_str(why))
);

/*
 * A dump-lane reservation opened (@r: record @index of buffer @buf, @bytes
 * of payload at arena position @pos), committed or abandoned.
 */
DECLARE_EVENT_CLASS(pto_lane_event,
	TP_PROTO(const struct pto_producer *p, const struct pto_reservation *r),
	TP_ARGS(p, r),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, lane)
		__field(u64, task)
		__field(u32, arg)
		__field(u32, stage)
		__field(u32, buf)
		__field(u32, index)
		__field(u64, pos)
		__field(u64, bytes)
	),
	TP_fast_assign(
		__entry->dev = p->dev;
		__entry->lane = p->lane;
		__entry->task = r->arg.rec.task_id;
		__entry->arg = r->arg.rec.arg_index;
		__entry->stage = r->arg.rec.stage;
		__entry->buf = r->buf;
		__entry->index = r->index;
		__entry->pos = r->pos;
		__entry->bytes = r->copy_bytes;
	),
	TP_printk("dev=%u lane=%u task=0x%llx arg=%u stage=%u buf=%u index=%u pos=%llu bytes=%llu",
		  __entry->dev, __entry->lane, __entry->task, __entry->arg,
		  __entry->stage, __entry->buf, __entry->index, __entry->pos,
		  __entry->bytes)
);

DEFINE_EVENT(pto_lane_event, pto_lane_reserve,
	TP_PROTO(const struct pto_producer *p, const struct pto_reservation *r),
	TP_ARGS(p, r));
DEFINE_EVENT(pto_lane_event, pto_lane_commit,
	TP_PROTO(const struct pto_producer *p, const struct pto_reservation *r),
	TP_ARGS(p, r));
DEFINE_EVENT(pto_lane_event, pto_lane_abandon,
	TP_PROTO(const struct pto_producer *p, const struct pto_reservation *r),
	TP_ARGS(p, r));

#endif /* PTO_TRACE_H */

#include <trace/define_trace.h>
