// SPDX-License-Identifier: MIT
/*
 * libpto's events listener (pto/events.h): a generic netlink socket
 * joined to the driver's "events" group (Documentation/events.md),
 * through libnl-genl-3. Self-contained - it calls nothing else of
 * libpto - so lib/libpto.a keeps it in a member of its own, and a static
 * program that does not listen needs no libnl (Makefile).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <pto/events.h>

struct pto_events {
	struct nl_sock *sk;
	struct pto_events_ops ops;
	void *arg;
	int family;
	int handled;
	int cb_err;	/* a callback's negative return, or 0 */
};

/* Events arrive in bursts (a retirement of every core): room for them. */
#define PTO_EVENTS_RCVBUF (256 * 1024)

static int nl_to_errno(int err)
{
	switch (err < 0 ? -err : err) {
	case NLE_AGAIN:		return -EAGAIN;
	case NLE_INTR:		return -EINTR;
	case NLE_NOMEM:		return -ENOMEM;
	case NLE_OBJ_NOTFOUND:	return -ENOENT;
	case NLE_PERM:
	case NLE_NOACCESS:	return -EPERM;
	case NLE_INVAL:		return -EINVAL;
	case NLE_MSG_TRUNC:
	case NLE_MSG_OVERFLOW:	return -EMSGSIZE;
	case NLE_AF_NOSUPPORT:	return -EAFNOSUPPORT;
	default:		return -EIO;
	}
}

static struct nla_policy pto_event_policy[PTO_EA_MAX + 1] = {
	[PTO_EA_DEVICE] = { .type = NLA_U32 },
	[PTO_EA_CORE] = { .type = NLA_U32 },
	[PTO_EA_LANE] = { .type = NLA_U32 },
	[PTO_EA_REASON] = { .type = NLA_U32 },
	[PTO_EA_CAUSE] = { .type = NLA_STRING },
	[PTO_EA_TIMEOUT_MS] = { .type = NLA_U32 },
	[PTO_EA_ERROR] = { .type = NLA_U32 },
	[PTO_EA_RESULT] = { .type = NLA_U32 },
};

static uint32_t attr_u32(struct nlattr **tb, int type)
{
	return tb[type] ? nla_get_u32(tb[type]) : PTO_EVENT_NONE;
}

/* libnl's NL_CB_VALID callback: one message, one event. */
static int pto_events_msg(struct nl_msg *msg, void *data)
{
	struct pto_events *evs = data;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	int (*cb)(const struct pto_event *, void *) = NULL;
	struct nlattr *tb[PTO_EA_MAX + 1];
	struct pto_event ev;
	int ret;

	if (nlh->nlmsg_type != evs->family ||
	    genlmsg_parse(nlh, 0, tb, PTO_EA_MAX, pto_event_policy) < 0 ||
	    !tb[PTO_EA_DEVICE])
		return NL_SKIP;
	switch (gh->cmd) {
	case PTO_EVENT_DEVICE_ERROR:	cb = evs->ops.device_error; break;
	case PTO_EVENT_CORE_QUARANTINE:	cb = evs->ops.core_quarantine; break;
	case PTO_EVENT_LANE_QUARANTINE:	cb = evs->ops.lane_quarantine; break;
	case PTO_EVENT_RESET:		cb = evs->ops.reset; break;
	case PTO_EVENT_RETIRE_TIMEOUT:	cb = evs->ops.retire_timeout; break;
	default:			return NL_SKIP;	/* a newer event */
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = gh->cmd;
	ev.device = nla_get_u32(tb[PTO_EA_DEVICE]);
	ev.core = attr_u32(tb, PTO_EA_CORE);
	ev.lane = attr_u32(tb, PTO_EA_LANE);
	ev.reason = attr_u32(tb, PTO_EA_REASON);
	ev.timeout_ms = attr_u32(tb, PTO_EA_TIMEOUT_MS);
	ev.error = attr_u32(tb, PTO_EA_ERROR);
	ev.result = attr_u32(tb, PTO_EA_RESULT);
	ev.cause = tb[PTO_EA_CAUSE] ? nla_get_string(tb[PTO_EA_CAUSE]) : NULL;
	evs->handled++;
	if (!cb)
		return NL_OK;
	ret = cb(&ev, evs->arg);
	if (ret < 0) {
		evs->cb_err = ret;
		return NL_STOP;
	}
	return NL_OK;
}

PTO_API int pto_events_open(const struct pto_events_ops *ops, void *arg,
			    struct pto_events **out)
{
	struct pto_events *evs;
	unsigned int i;
	int grp, ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	for (i = 0; ops && i < sizeof(ops->reserved) / sizeof(ops->reserved[0]); i++)
		if (ops->reserved[i])
			return -EINVAL;
	evs = calloc(1, sizeof(*evs));
	if (!evs)
		return -ENOMEM;
	if (ops)
		evs->ops = *ops;
	evs->arg = arg;
	evs->sk = nl_socket_alloc();
	if (!evs->sk) {
		free(evs);
		return -ENOMEM;
	}
	/* Multicast events carry no sequence number of ours. */
	nl_socket_disable_seq_check(evs->sk);
	ret = nl_socket_modify_cb(evs->sk, NL_CB_VALID, NL_CB_CUSTOM,
				  pto_events_msg, evs);
	if (!ret)
		ret = genl_connect(evs->sk);
	if (!ret) {
		evs->family = genl_ctrl_resolve(evs->sk, PTO_GENL_NAME);
		ret = evs->family < 0 ? evs->family : 0;
	}
	if (!ret) {
		grp = genl_ctrl_resolve_grp(evs->sk, PTO_GENL_NAME,
					    PTO_GENL_MCGRP_EVENTS);
		ret = grp < 0 ? grp : nl_socket_add_membership(evs->sk, grp);
	}
	if (!ret)
		ret = nl_socket_set_buffer_size(evs->sk, PTO_EVENTS_RCVBUF, 0);
	if (!ret)
		ret = nl_socket_set_nonblocking(evs->sk);
	if (ret) {
		pto_events_close(evs);
		return nl_to_errno(ret);
	}
	*out = evs;
	return 0;
}

PTO_API int pto_events_fd(const struct pto_events *evs)
{
	return evs ? nl_socket_get_fd(evs->sk) : -EINVAL;
}

PTO_API int pto_events_handle(struct pto_events *evs)
{
	int ret;

	if (!evs)
		return -EINVAL;
	evs->handled = 0;
	evs->cb_err = 0;
	/* Non-blocking: each call reads what one recvmsg() returns. */
	do {
		ret = nl_recvmsgs_default(evs->sk);
	} while (ret >= 0 && !evs->cb_err);
	if (evs->cb_err)
		return evs->cb_err;
	if (ret < 0 && -ret != NLE_AGAIN)
		return ret == -NLE_NOMEM ? -ENOBUFS : nl_to_errno(ret);
	return evs->handled;
}

PTO_API void pto_events_close(struct pto_events *evs)
{
	if (!evs)
		return;
	nl_socket_free(evs->sk);	/* closes the socket */
	free(evs);
}
