// SPDX-License-Identifier: MIT
/*
 * ptoctl monitor: one line per event of the driver's events channel
 * (pto/events.h, Documentation/events.md), until interrupted, COUNT
 * events or MS milliseconds. A thin user of the library's listener.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pto/events.h>
#include <pto/pto.h>
#include "ptoctl.h"

struct monitor {
	unsigned int device;	/* PTO_EVENT_NONE: every device */
	unsigned long seen;
};

static const char *const reason_names[] = {
	[PTO_RETIRE_BY_NONE] = "none",
	[PTO_RETIRE_BY_IOCTL] = "ioctl",
	[PTO_RETIRE_BY_RELEASE] = "release",
	[PTO_RETIRE_BY_LAUNCH] = "launch",
	[PTO_RETIRE_BY_FATAL] = "fatal",
	[PTO_RETIRE_BY_UNLOAD] = "unload",
	[PTO_RETIRE_BY_RESET] = "reset",
};

static const char *reason_name(uint32_t r)
{
	return r < sizeof(reason_names) / sizeof(reason_names[0]) ?
	       reason_names[r] : "unknown";
}

/* "ptoN[ core C[ lane L]] ": the event's place; 0 if not this device. */
static int print_place(struct monitor *m, const struct pto_event *ev)
{
	if (m->device != PTO_EVENT_NONE && ev->device != m->device)
		return 0;
	m->seen++;
	printf("pto%u", ev->device);
	if (ev->core != PTO_EVENT_NONE)
		printf(" core %u", ev->core);
	if (ev->lane != PTO_EVENT_NONE)
		printf(" lane %u", ev->lane);
	return 1;
}

static void print_cause(const struct pto_event *ev)
{
	if (ev->cause)
		printf(" cause=\"%s\"", ev->cause);
	printf("\n");
}

static int on_device_error(const struct pto_event *ev, void *arg)
{
	if (print_place(arg, ev))
		printf(" device-error error=%s\n",
		       ev->error == PTO_EVENT_ERR_FATAL ? "fatal" : "unknown");
	return 0;
}

static int on_quarantine(const struct pto_event *ev, void *arg)
{
	if (print_place(arg, ev)) {
		printf(" %s reason=%s", ev->type == PTO_EVENT_LANE_QUARANTINE ?
		       "lane-quarantine" : "quarantine", reason_name(ev->reason));
		print_cause(ev);
	}
	return 0;
}

static int on_reset(const struct pto_event *ev, void *arg)
{
	if (print_place(arg, ev))
		printf(" reset reason=%s result=%s\n", reason_name(ev->reason),
		       ev->result == PTO_EVENT_RESET_RECOVERED ? "recovered" :
		       ev->result == PTO_EVENT_RESET_QUARANTINED ? "quarantined" :
		       "unknown");
	return 0;
}

static int on_retire_timeout(const struct pto_event *ev, void *arg)
{
	if (print_place(arg, ev))
		printf(" retire-timeout reason=%s timeout_ms=%u\n",
		       reason_name(ev->reason), ev->timeout_ms);
	return 0;
}

static int parse_num(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || *s == '-' ? -EINVAL : 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int ptoctl_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct pto_events_ops ops = {
		.device_error = on_device_error,
		.core_quarantine = on_quarantine,
		.lane_quarantine = on_quarantine,
		.reset = on_reset,
		.retire_timeout = on_retire_timeout,
	};
	struct monitor m = { .device = PTO_EVENT_NONE };
	unsigned long count = 0, timeout = 0, v = 0;
	struct pto_events *evs;
	long long end = 0;
	int c, ret = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:n:t:", opts, NULL)) != -1) {
		if ((c == 'd' || c == 'n' || c == 't') && parse_num(optarg, &v)) {
			fprintf(stderr, "ptoctl monitor: bad -%c '%s'\n", c, optarg);
			c = '?';
		}
		switch (c) {
		case 'd': m.device = (unsigned int)v; break;
		case 'n': count = v; break;
		case 't': timeout = v; break;
		default:
			if (c == ':')
				fprintf(stderr, "ptoctl monitor: -%c needs a value\n", optopt);
			else if (c == '?' && optopt)
				fprintf(stderr, "ptoctl monitor: unknown option -%c\n", optopt);
			fprintf(stderr, "usage: ptoctl %s\n", PTOCTL_MONITOR_USAGE);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ptoctl monitor: unexpected argument '%s'\nusage: ptoctl %s\n",
			argv[optind], PTOCTL_MONITOR_USAGE);
		return -EINVAL;
	}
	ret = pto_events_open(&ops, &m, &evs);
	if (ret) {
		fprintf(stderr, "ptoctl monitor: %s%s\n", pto_strerror(ret),
			ret == -ENOENT ? " (is pto.ko loaded?)" : "");
		return ret;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* On stderr, for a script that waits until the listener is in place. */
	fprintf(stderr, "ptoctl monitor: listening\n");
	if (timeout)
		end = now_ms() + (long long)timeout;
	while (!count || m.seen < count) {
		struct pollfd p = { .fd = pto_events_fd(evs), .events = POLLIN };
		int wait = timeout ? (int)(end - now_ms()) : -1;

		if (timeout && wait <= 0)
			break;
		ret = poll(&p, 1, wait);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			ret = -errno;
			break;
		}
		ret = ret ? pto_events_handle(evs) : 0;
		if (ret == -ENOBUFS) {
			/* Events were lost; the listener goes on. */
			fprintf(stderr, "ptoctl monitor: events lost (overrun)\n");
			ret = 0;
		}
		if (ret < 0)
			break;
		ret = 0;
	}
	if (ret < 0)
		fprintf(stderr, "ptoctl monitor: %s\n", pto_strerror(ret));
	else if (count && m.seen < count)
		ret = -ETIMEDOUT;	/* fewer events than asked for */
	pto_events_close(evs);
	return ret;
}
