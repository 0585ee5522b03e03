/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pto - the events channel: a generic netlink family PTO_GENL_NAME with one
 * multicast group, PTO_GENL_MCGRP_EVENTS (Documentation/events.md). The
 * driver sends to it only while someone listens; it takes no commands.
 * Each message's command is the event (PTO_EVENT_*), its attributes
 * (PTO_EA_*) name the device, the core or lane and the reason. New events
 * and attributes are added at the end; a listener skips those it does not
 * know.
 */
#ifndef _UAPI_LINUX_PTO_NETLINK_H
#define _UAPI_LINUX_PTO_NETLINK_H

#define PTO_GENL_NAME "pto"
#define PTO_GENL_VERSION 1
#define PTO_GENL_MCGRP_EVENTS "events"

/**
 * enum pto_genl_event - the command of each event message
 * @PTO_EVENT_UNSPEC: never sent.
 * @PTO_EVENT_DEVICE_ERROR: a device error (DEVICE, ERROR).
 * @PTO_EVENT_CORE_QUARANTINE: a core was quarantined (DEVICE, CORE,
 *	REASON, CAUSE): it stays out of use until a reset recovers it.
 * @PTO_EVENT_LANE_QUARANTINE: a dump lane was quarantined when its file
 *	was released (DEVICE, LANE, REASON = PTO_RETIRE_BY_RELEASE, CAUSE);
 *	no CORE: a lane is the device's.
 * @PTO_EVENT_RESET: a reset ran on a quarantined core (DEVICE, CORE,
 *	REASON, RESULT).
 * @PTO_EVENT_RETIRE_TIMEOUT: a core missed its retirement deadline
 *	(DEVICE, CORE, REASON, TIMEOUT_MS); a CORE_QUARANTINE follows.
 */
enum pto_genl_event {
	PTO_EVENT_UNSPEC,
	PTO_EVENT_DEVICE_ERROR,
	PTO_EVENT_CORE_QUARANTINE,
	PTO_EVENT_LANE_QUARANTINE,
	PTO_EVENT_RESET,
	PTO_EVENT_RETIRE_TIMEOUT,
	__PTO_EVENT_MAX,
};
#define PTO_EVENT_MAX (__PTO_EVENT_MAX - 1)

/**
 * enum pto_genl_attr - the attributes of an event
 * @PTO_EA_UNSPEC: never sent.
 * @PTO_EA_DEVICE: u32, the device's index (N of /dev/ptoN).
 * @PTO_EA_CORE: u32, the core's id on the device.
 * @PTO_EA_LANE: u32, the dump lane's index on the device (struct
 *	pto_dump_bind.lane of <linux/pto_dump.h>).
 * @PTO_EA_REASON: u32, what retired the core or quarantined the lane:
 *	PTO_RETIRE_BY_* of <linux/pto.h>.
 * @PTO_EA_CAUSE: NUL-terminated string, why the core or lane was left
 *	(for a person to read; not a stable value).
 * @PTO_EA_TIMEOUT_MS: u32, the retirement deadline that passed, in ms.
 * @PTO_EA_ERROR: u32, the device error: PTO_EVENT_ERR_*.
 * @PTO_EA_RESULT: u32, a reset's outcome for the core: PTO_EVENT_RESET_*.
 */
enum pto_genl_attr {
	PTO_EA_UNSPEC,
	PTO_EA_DEVICE,
	PTO_EA_CORE,
	PTO_EA_LANE,
	PTO_EA_REASON,
	PTO_EA_CAUSE,
	PTO_EA_TIMEOUT_MS,
	PTO_EA_ERROR,
	PTO_EA_RESULT,
	__PTO_EA_MAX,
};
#define PTO_EA_MAX (__PTO_EA_MAX - 1)

/* PTO_EA_ERROR: a fatal error; every core is retired in an emergency. */
#define PTO_EVENT_ERR_FATAL 1

/* PTO_EA_RESULT: the core answered and is back in use, or still is not. */
#define PTO_EVENT_RESET_RECOVERED 1
#define PTO_EVENT_RESET_QUARANTINED 2

#endif /* _UAPI_LINUX_PTO_NETLINK_H */
