// SPDX-License-Identifier: GPL-2.0
/*
 * The events channel (pto/events.h, Documentation/events.md): a listener
 * sees an induced retirement timeout (debugfs inject_stall on a core,
 * then its cluster's release) as a retirement timeout and a quarantine
 * of that core on device 0, reason "release", and the debugfs reset that
 * recovers it as a reset event. Without a listener the driver builds no
 * message: debugfs pto/events counts them skipped, not sent. `ptoctl
 * monitor` prints the same events, one line each. Needs root.
 */
#include <pto/events.h>
#include <pto/pto.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "pto_core_util.h"

#define DBG PTO_DBG0
#define EVENTS_DBG "/sys/kernel/debug/pto/events"
#define DEADLINE_MS 300
#define MAX_SEEN 64

struct seen {
	unsigned int n;
	struct pto_event ev[MAX_SEEN];
	char cause[MAX_SEEN][64];
};

static int record(const struct pto_event *ev, void *arg)
{
	struct seen *s = arg;

	if (s->n == MAX_SEEN)
		return 0;
	s->ev[s->n] = *ev;
	s->ev[s->n].cause = NULL;
	if (ev->cause)
		snprintf(s->cause[s->n], sizeof(s->cause[0]), "%s", ev->cause);
	s->n++;
	return 0;
}

static const struct pto_events_ops record_ops = {
	.device_error = record,
	.core_quarantine = record,
	.lane_quarantine = record,
	.reset = record,
	.retire_timeout = record,
};

/* How many events @core has among those seen. */
static unsigned int count_core(const struct seen *s, unsigned int core)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->n; i++)
		n += s->ev[i].core == core;
	return n;
}

/* The index of the first event of @type on @core, or -1. */
static int find(const struct seen *s, uint32_t type, unsigned int core)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->ev[i].type == type && s->ev[i].core == core)
			return (int)i;
	return -1;
}

/* Handle what arrives until an event of @type on @core was seen (10 s). */
static int wait_event_of(struct pto_events *evs, struct seen *s,
			 uint32_t type, unsigned int core)
{
	struct pollfd p = { .fd = pto_events_fd(evs), .events = POLLIN };

	return st_wait_until(poll(&p, 1, 0) < 0 || pto_events_handle(evs) < 0 ||
			     find(s, type, core) >= 0) && find(s, type, core) >= 0;
}

/* debugfs events' counter @key ("sent", "skipped"), or -1. */
static long long counter(const char *key)
{
	char line[128];
	long long v = -1;
	FILE *f = fopen(EVENTS_DBG, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = strtoll(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return v;
}

/*
 * Quarantine core 1 of the last cluster of device 0 (its AIV: it stalls,
 * the release waits out the deadline): returns the core, or -1. The
 * debugfs reset of recover() brings it back.
 */
static int quarantine_one(struct __test_metadata *_metadata,
			  struct pto_dev *d)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0 };
	struct pto_dev_info info;
	struct core_launch *l;
	unsigned int c, victim;

	if (pto_dev_info(d, &info))
		return -1;
	c = info.clusters - 1;
	victim = PTO_CORES_PER_CLUSTER * c + 1;
	st_cluster_cores(c, cores);
	if (st_param_set("retire_timeout_ms", "300") ||
	    core_cluster_acquire(d, 1ull << c))
		return -1;
	if (core_launch_cores(d, cores, &l)) {
		core_cluster_release(d, 1ull << c);
		return -1;
	}
	EXPECT_EQ(0, pto_noop_all(l));
	EXPECT_EQ(0, st_inject_stall(0, victim));
	EXPECT_EQ(0, core_cluster_release(d, 1ull << c));
	core_launch_free(l);
	return (int)victim;
}

static int recover(void)
{
	return st_write_file(DBG "reset", "1");
}

static int needs_root(void)
{
	return access(DBG "inject_stall", W_OK) ||
	       access(PTO_PARAMS "retire_timeout_ms", W_OK) ||
	       access(EVENTS_DBG, R_OK);
}

TEST(timeout_quarantine_and_reset_events)
{
	struct pto_events *evs;
	struct seen s = { 0 };
	long long sent0;
	struct pto_dev *d;
	int victim, i;

	if (needs_root())
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, pto_events_open(&record_ops, &s, &evs));
	ASSERT_LE(0, pto_events_fd(evs));
	/* Nothing yet: a handle with nothing waiting dispatches nothing. */
	EXPECT_EQ(0, pto_events_handle(evs));
	sent0 = counter("sent");
	ASSERT_LE(0, sent0);
	ASSERT_EQ(0, pto_dev_open(0, &d));
	victim = quarantine_one(_metadata, d);
	ASSERT_LE(0, victim);

	ASSERT_TRUE(wait_event_of(evs, &s, PTO_EVENT_CORE_QUARANTINE, victim));
	i = find(&s, PTO_EVENT_RETIRE_TIMEOUT, victim);
	ASSERT_LE(0, i);
	EXPECT_EQ(0, s.ev[i].device);
	EXPECT_EQ(PTO_RETIRE_BY_RELEASE, s.ev[i].reason);
	EXPECT_EQ(DEADLINE_MS, s.ev[i].timeout_ms);
	EXPECT_EQ(PTO_EVENT_NONE, s.ev[i].lane);
	i = find(&s, PTO_EVENT_CORE_QUARANTINE, victim);
	EXPECT_EQ(0, s.ev[i].device);
	EXPECT_EQ(PTO_RETIRE_BY_RELEASE, s.ev[i].reason);
	EXPECT_STREQ("no response", s.cause[i]);
	/* Its peers answered: no event names them. */
	EXPECT_EQ(2, s.n);
	EXPECT_EQ(2, count_core(&s, victim));

	ASSERT_EQ(0, recover());
	ASSERT_TRUE(wait_event_of(evs, &s, PTO_EVENT_RESET, victim));
	i = find(&s, PTO_EVENT_RESET, victim);
	EXPECT_EQ(0, s.ev[i].device);
	EXPECT_EQ(PTO_RETIRE_BY_RESET, s.ev[i].reason);
	EXPECT_EQ(PTO_EVENT_RESET_RECOVERED, s.ev[i].result);
	EXPECT_EQ(3, count_core(&s, victim));
	EXPECT_LE(sent0 + 3, counter("sent"));
	pto_events_close(evs);
	pto_dev_close(d);
}

TEST(no_listener_nothing_sent)
{
	long long sent0, skipped0;
	struct pto_dev *d;

	if (needs_root())
		SKIP(return, "needs root, debugfs and pto's parameters");
	sent0 = counter("sent");
	skipped0 = counter("skipped");
	ASSERT_LE(0, sent0);
	ASSERT_LE(0, skipped0);
	ASSERT_EQ(0, pto_dev_open(0, &d));
	ASSERT_LE(0, quarantine_one(_metadata, d));
	ASSERT_EQ(0, recover());
	/* Timeout, quarantine and reset (of this core, or more): skipped. */
	EXPECT_EQ(sent0, counter("sent"));
	EXPECT_LE(skipped0 + 3, counter("skipped"));
	pto_dev_close(d);
}

TEST(listener_api_errors)
{
	struct pto_events *evs = (struct pto_events *)1;

	EXPECT_EQ(-EINVAL, pto_events_open(&record_ops, NULL, NULL));
	EXPECT_EQ(-EINVAL, pto_events_fd(NULL));
	EXPECT_EQ(-EINVAL, pto_events_handle(NULL));
	pto_events_close(NULL);
	{
		struct pto_events_ops bad = record_ops;

		bad.reserved[2] = &bad;
		EXPECT_EQ(-EINVAL, pto_events_open(&bad, NULL, &evs));
		EXPECT_EQ(NULL, evs);
	}
	/* No callbacks: events are read and dropped. */
	ASSERT_EQ(0, pto_events_open(NULL, NULL, &evs));
	EXPECT_EQ(0, pto_events_handle(evs));
	pto_events_close(evs);
}

/* Read @fd into @buf (NUL-terminated) until @want appears or EOF / 10 s. */
static int read_until(int fd, char *buf, size_t size, size_t *len,
		      const char *want)
{
	return st_wait_until(({
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r = 0;

		if (poll(&p, 1, 0) > 0)
			r = read(fd, buf + *len, size - 1 - *len);
		if (r > 0)
			*len += r;
		buf[*len] = 0;
		r < 0 || (p.revents & POLLHUP && r == 0) || strstr(buf, want);
	})) && strstr(buf, want);
}

TEST(ptoctl_monitor_prints_events)
{
	char out[4096], want[3][128];
	size_t len = 0;
	struct pto_dev *d;
	int fds[2], victim, status, i;
	char *p;
	pid_t pid;

	if (needs_root())
		SKIP(return, "needs root, debugfs and pto's parameters");
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execlp("ptoctl", "ptoctl", "monitor", "-d", "0", "-n", "3",
		       "-t", "20000", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ASSERT_TRUE(read_until(fds[0], out, sizeof(out), &len,
			       "ptoctl monitor: listening\n"));
	ASSERT_EQ(0, pto_dev_open(0, &d));
	victim = quarantine_one(_metadata, d);
	ASSERT_LE(0, victim);
	ASSERT_EQ(0, recover());
	snprintf(want[0], sizeof(want[0]),
		 "pto0 core %d retire-timeout reason=release timeout_ms=%d\n",
		 victim, DEADLINE_MS);
	snprintf(want[1], sizeof(want[1]),
		 "pto0 core %d quarantine reason=release cause=\"no response\"\n",
		 victim);
	snprintf(want[2], sizeof(want[2]),
		 "pto0 core %d reset reason=reset result=recovered\n", victim);
	EXPECT_TRUE(read_until(fds[0], out, sizeof(out), &len, want[2]));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	for (i = 0; i < 3; i++)
		EXPECT_NE(NULL, strstr(out, want[i])) {
			TH_LOG("missing line: %s", want[i]);
		}
	for (p = strtok(out, "\n"); p; p = strtok(NULL, "\n"))
		printf("# ptoctl monitor: %s\n", p);
	close(fds[0]);
	pto_dev_close(d);
}

TEST_HARNESS_MAIN
