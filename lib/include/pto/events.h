/* SPDX-License-Identifier: MIT */
/*
 * pto/events.h - the driver's events channel (Documentation/events.md):
 * device errors, quarantines, resets and retirement timeouts of every pto
 * device, as they happen. Open a listener, poll its fd, and let
 * pto_events_handle() call the callbacks of what arrived. Each call's
 * contract: its man page, e.g. pto_events_open(3). Built on libnl-genl-3:
 * a static link takes `pkg-config --static --libs libpto`.
 */
#ifndef PTO_EVENTS_H
#define PTO_EVENTS_H

#include <stdint.h>
#include <linux/pto.h>
#include <linux/pto_netlink.h>
#include <pto/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pto_events;

/* A field of struct pto_event the event does not carry. */
#define PTO_EVENT_NONE UINT32_MAX

/*
 * struct pto_event - one event, valid for the callback's duration only.
 * @type is PTO_EVENT_*; a field the event does not carry is
 * PTO_EVENT_NONE (@cause: NULL). @reason is PTO_RETIRE_BY_*, @error
 * PTO_EVENT_ERR_*, @result PTO_EVENT_RESET_* (<linux/pto_netlink.h>).
 */
struct pto_event {
	uint32_t type;
	uint32_t device;
	uint32_t core;
	uint32_t lane;
	uint32_t reason;
	uint32_t timeout_ms;
	uint32_t error;
	uint32_t result;
	const char *cause;
};

/*
 * struct pto_events_ops - a callback per event type, each may be NULL.
 * @arg is pto_events_open()'s; a negative return stops
 * pto_events_handle(), which returns it. @reserved: for later event
 * types, NULL (else -EINVAL).
 */
struct pto_events_ops {
	int (*device_error)(const struct pto_event *ev, void *arg);
	int (*core_quarantine)(const struct pto_event *ev, void *arg);
	int (*lane_quarantine)(const struct pto_event *ev, void *arg);
	int (*reset)(const struct pto_event *ev, void *arg);
	int (*retire_timeout)(const struct pto_event *ev, void *arg);
	void *reserved[4];	/* NULL */
};

/* Listen to the events of every device (-ENOENT: pto.ko not loaded). */
PTO_API int pto_events_open(const struct pto_events_ops *ops, void *arg,
			    struct pto_events **out);
/* The listener's fd: readable (poll) when events wait to be handled. */
PTO_API int pto_events_fd(const struct pto_events *evs);
/* Dispatch every event waiting; the number handled, or -errno. */
PTO_API int pto_events_handle(struct pto_events *evs);
/* Stop listening and free the listener. NULL: does nothing. */
PTO_API void pto_events_close(struct pto_events *evs);

#ifdef __cplusplus
}
#endif

#endif
