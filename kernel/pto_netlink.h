/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto - the events channel (pto_netlink.c): generic netlink family "pto",
 * multicast group "events" (Documentation/events.md). Each call sends one
 * event, or counts it as skipped when no one listens; none fails.
 */
#ifndef _PTO_NETLINK_H_
#define _PTO_NETLINK_H_

#include <linux/types.h>
#include <linux/pto_netlink.h>

struct pto_device;

#if IS_ENABLED(CONFIG_NET)
int pto_nl_init(void);
void pto_nl_fini(void);
void pto_nl_debugfs(void);
void pto_nl_device_error(struct pto_device *pdev, u32 error);
void pto_nl_core_quarantine(struct pto_device *pdev, unsigned int core,
			    u32 reason, const char *cause);
void pto_nl_lane_quarantine(struct pto_device *pdev, unsigned int core,
			    unsigned int lane, u32 reason, const char *cause);
void pto_nl_retire_timeout(struct pto_device *pdev, unsigned int core,
			   u32 reason, unsigned int timeout_ms);
void pto_nl_reset(struct pto_device *pdev, const unsigned long *recovered,
		  const unsigned long *left);
#else
/* Without networking (a UML KUnit kernel) there is no channel. */
static inline int pto_nl_init(void) { return 0; }
static inline void pto_nl_fini(void) { }
static inline void pto_nl_debugfs(void) { }
static inline void pto_nl_device_error(struct pto_device *pdev, u32 error) { }
static inline void pto_nl_core_quarantine(struct pto_device *pdev,
					  unsigned int core, u32 reason,
					  const char *cause) { }
static inline void pto_nl_lane_quarantine(struct pto_device *pdev,
					  unsigned int core, unsigned int lane,
					  u32 reason, const char *cause) { }
static inline void pto_nl_retire_timeout(struct pto_device *pdev,
					 unsigned int core, u32 reason,
					 unsigned int timeout_ms) { }
static inline void pto_nl_reset(struct pto_device *pdev,
				const unsigned long *recovered,
				const unsigned long *left) { }
#endif

#endif /* _PTO_NETLINK_H_ */
