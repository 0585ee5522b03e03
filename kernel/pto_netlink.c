// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - the events channel: a generic netlink family "pto" whose multicast
 * group "events" tells administrators of device errors, quarantines,
 * resets and retirement timeouts (Documentation/events.md). A message is
 * built only when the group has a listener; the counters (debugfs
 * "events") tell sent from skipped. The family takes no commands.
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <net/genetlink.h>
#include <linux/pto.h>
#include "pto_drv.h"
#include "pto_netlink.h"

enum { PTO_NL_GRP_EVENTS };

static const struct genl_multicast_group pto_nl_mcgrps[] = {
	[PTO_NL_GRP_EVENTS] = { .name = PTO_GENL_MCGRP_EVENTS },
};

static struct genl_family pto_nl_family __ro_after_init = {
	.name = PTO_GENL_NAME,
	.version = PTO_GENL_VERSION,
	.maxattr = PTO_EA_MAX,
	.module = THIS_MODULE,
	.mcgrps = pto_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(pto_nl_mcgrps),
};

/* Events sent, skipped for want of a listener, and lost (no memory). */
static atomic64_t pto_nl_sent, pto_nl_skipped, pto_nl_failed;
static bool pto_nl_registered;

/* One event's attributes; a field of ~0 (or a NULL cause) is not sent. */
struct pto_nl_event {
	u32 core, lane, reason, timeout_ms, error, result;
	const char *cause;
};

#define PTO_NL_NONE U32_MAX

static int pto_nl_put(struct sk_buff *skb, int type, u32 val)
{
	return val == PTO_NL_NONE ? 0 : nla_put_u32(skb, type, val);
}

/*
 * GFP_ATOMIC: quarantine is reported from retirement's passes, which the
 * fatal path runs without core_lock in whatever context it was raised.
 */
static void pto_nl_send(struct pto_device *pdev, u8 cmd,
			const struct pto_nl_event *ev)
{
	struct sk_buff *skb;
	void *hdr;

	if (!READ_ONCE(pto_nl_registered) ||
	    !genl_has_listeners(&pto_nl_family, &init_net, PTO_NL_GRP_EVENTS)) {
		atomic64_inc(&pto_nl_skipped);
		return;
	}
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_ATOMIC);
	if (!skb)
		goto fail;
	hdr = genlmsg_put(skb, 0, 0, &pto_nl_family, 0, cmd);
	if (!hdr)
		goto fail_free;
	if (nla_put_u32(skb, PTO_EA_DEVICE, pdev->index) ||
	    pto_nl_put(skb, PTO_EA_CORE, ev->core) ||
	    pto_nl_put(skb, PTO_EA_LANE, ev->lane) ||
	    pto_nl_put(skb, PTO_EA_REASON, ev->reason) ||
	    pto_nl_put(skb, PTO_EA_TIMEOUT_MS, ev->timeout_ms) ||
	    pto_nl_put(skb, PTO_EA_ERROR, ev->error) ||
	    pto_nl_put(skb, PTO_EA_RESULT, ev->result) ||
	    (ev->cause && nla_put_string(skb, PTO_EA_CAUSE, ev->cause)))
		goto fail_free;
	genlmsg_end(skb, hdr);
	/* -ESRCH: the last listener left since the check; nothing lost. */
	if (genlmsg_multicast(&pto_nl_family, skb, 0, PTO_NL_GRP_EVENTS,
			      GFP_ATOMIC) == -ESRCH)
		atomic64_inc(&pto_nl_skipped);
	else
		atomic64_inc(&pto_nl_sent);
	return;
fail_free:
	nlmsg_free(skb);
fail:
	atomic64_inc(&pto_nl_failed);
}

#define PTO_NL_EVENT_INIT {						\
	.core = PTO_NL_NONE, .lane = PTO_NL_NONE, .reason = PTO_NL_NONE,\
	.timeout_ms = PTO_NL_NONE, .error = PTO_NL_NONE,		\
	.result = PTO_NL_NONE,						\
}

void pto_nl_device_error(struct pto_device *pdev, u32 error)
{
	struct pto_nl_event ev = PTO_NL_EVENT_INIT;

	ev.error = error;
	pto_nl_send(pdev, PTO_EVENT_DEVICE_ERROR, &ev);
}

void pto_nl_core_quarantine(struct pto_device *pdev, unsigned int core,
			    u32 reason, const char *cause)
{
	struct pto_nl_event ev = PTO_NL_EVENT_INIT;

	ev.core = core;
	ev.reason = reason;
	ev.cause = cause;
	pto_nl_send(pdev, PTO_EVENT_CORE_QUARANTINE, &ev);
}

/* For the lanes' own quarantine, when a lane can be left on its own. */
void pto_nl_lane_quarantine(struct pto_device *pdev, unsigned int core,
			    unsigned int lane, u32 reason, const char *cause)
{
	struct pto_nl_event ev = PTO_NL_EVENT_INIT;

	ev.core = core;
	ev.lane = lane;
	ev.reason = reason;
	ev.cause = cause;
	pto_nl_send(pdev, PTO_EVENT_LANE_QUARANTINE, &ev);
}

void pto_nl_retire_timeout(struct pto_device *pdev, unsigned int core,
			   u32 reason, unsigned int timeout_ms)
{
	struct pto_nl_event ev = PTO_NL_EVENT_INIT;

	ev.core = core;
	ev.reason = reason;
	ev.timeout_ms = timeout_ms;
	pto_nl_send(pdev, PTO_EVENT_RETIRE_TIMEOUT, &ev);
}

/* A reset's outcome: one event per core it @recovered or @left. */
void pto_nl_reset(struct pto_device *pdev, const unsigned long *recovered,
		  const unsigned long *left)
{
	struct pto_nl_event ev = PTO_NL_EVENT_INIT;
	unsigned int i;

	ev.reason = PTO_RETIRE_BY_RESET;
	for (i = 0; i < pdev->cores; i++) {
		if (test_bit(i, recovered))
			ev.result = PTO_EVENT_RESET_RECOVERED;
		else if (test_bit(i, left))
			ev.result = PTO_EVENT_RESET_QUARANTINED;
		else
			continue;
		ev.core = i;
		pto_nl_send(pdev, PTO_EVENT_RESET, &ev);
	}
}

static int pto_nl_events_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "sent:    %lld\n", atomic64_read(&pto_nl_sent));
	seq_printf(m, "skipped: %lld\n", atomic64_read(&pto_nl_skipped));
	seq_printf(m, "failed:  %lld\n", atomic64_read(&pto_nl_failed));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pto_nl_events);

/* In the module's debugfs directory, beside the devices' (pto_debugfs.c). */
void pto_nl_debugfs(void)
{
	struct dentry *root = debugfs_lookup(PTO_NAME, NULL);

	if (!root)
		return;
	debugfs_create_file("events", 0400, root, NULL, &pto_nl_events_fops);
	dput(root);
}

int pto_nl_init(void)
{
	int ret = genl_register_family(&pto_nl_family);

	if (!ret)
		WRITE_ONCE(pto_nl_registered, true);
	return ret;
}

void pto_nl_fini(void)
{
	WRITE_ONCE(pto_nl_registered, false);
	genl_unregister_family(&pto_nl_family);
}
