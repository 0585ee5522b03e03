// SPDX-License-Identifier: GPL-2.0
/*
 * Dump lanes through the raw ABI (<linux/pto_dump.h>): bind and its -EBUSY,
 * levels, captures read back through the read-only mapping, the
 * acknowledgement's validation, captures of another file's GM refused,
 * back-pressure timing out, a lane quarantined by its owner's death
 * mid-capture, then taken over by the next binder or recovered by the
 * reset, the lane's memory charged to the binder's memory cgroup, and
 * `ptoctl lanes` printing what DUMP_STATUS and debugfs `lanes` say. Runs
 * in the VM as root.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/pto_dump.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "st_cgroup.h"

#define LANE_DBG PTO_DBG0 "lanes"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int bind_lane(int fd, uint32_t lane, uint32_t level,
		     struct pto_dump_bind *b)
{
	memset(b, 0, sizeof(*b));
	b->lane = lane;
	b->level = level;
	return pto_sioctl(fd, PTO_IOCTL_DUMP_BIND, b);
}

/*
 * bind_lane(), retried on -EBUSY for up to 10 s: the previous program's
 * file may be released after its process was reaped (a mapping's last
 * reference is put from a work item), later still on PREEMPT_RT.
 */
static int bind_settled(int fd, uint32_t lane, uint32_t level,
			struct pto_dump_bind *b)
{
	int ret, ms;

	for (ms = 0; (ret = bind_lane(fd, lane, level, b)) == -EBUSY &&
		     ms < 10000; ms++)
		usleep(1000);
	return ret;
}

static int lane_cmd(int fd, unsigned long cmd, uint32_t lane)
{
	struct pto_dump_lane l = { .lane = lane };

	return pto_sioctl(fd, cmd, &l);
}

static int lane_status(int fd, uint32_t lane, struct pto_dump_status *s)
{
	memset(s, 0, sizeof(*s));
	s->lane = lane;
	return pto_sioctl(fd, PTO_IOCTL_DUMP_STATUS, s);
}

/* A buffer of @n i32 elements holding 1000 + i, mapped at *@map. */
static uint32_t alloc_pattern(int fd, uint64_t n, uint32_t **map)
{
	struct pto_bo_alloc a = { .size = n * 4 };
	uint64_t i;

	if (pto_sioctl(fd, PTO_IOCTL_BO_ALLOC, &a))
		return 0;
	*map = mmap(NULL, a.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    a.mmap_offset);
	if (*map == MAP_FAILED)
		return 0;
	for (i = 0; i < n; i++)
		(*map)[i] = 1000 + i;
	return a.handle;
}

static void tensor_req(struct pto_dump_capture *c, uint32_t lane,
		       uint32_t handle, uint64_t task, uint32_t n)
{
	memset(c, 0, sizeof(*c));
	c->lane = lane;
	c->handle = handle;
	c->task_id = task;
	c->func_id[0] = 1;
	c->func_id[1] = PTO_DUMP_FUNC_NONE;
	c->func_id[2] = PTO_DUMP_FUNC_NONE;
	c->kind = PTO_DUMP_KIND_TENSOR;
	c->dtype = PTO_DTYPE_I32;
	c->rank = 1;
	c->shape[0] = n;
	c->strides[0] = 1;
	c->timeout_ns = now_ns() + 5000000000ull;
}

FIXTURE(lane) {
	int fd;
	struct pto_info info;
};

FIXTURE_SETUP(lane)
{
	self->fd = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, self->fd);
	memset(&self->info, 0, sizeof(self->info));
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_GET_INFO, &self->info));
	ASSERT_TRUE(self->info.caps & PTO_CAP_DUMP);
	ASSERT_LE(2, self->info.lanes);
}

/* A test that failed half-way leaves no quarantined lane to the next. */
FIXTURE_TEARDOWN(lane)
{
	struct pto_dump_reset rs = { 0 };
	int fd = open(PTO_DEV0, O_RDWR);

	close(self->fd);
	if (fd >= 0)
		pto_sioctl(fd, PTO_IOCTL_DUMP_RESET, &rs);
	close(fd);
}

/* One binder per lane; a bad lane, level or flag is -EINVAL. */
TEST_F(lane, bind_busy_and_levels)
{
	struct pto_dump_bind b;
	struct pto_dump_status s;
	int other = open(PTO_DEV0, O_RDWR);
	uint32_t level;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, bind_settled(self->fd, 0, PTO_DUMP_FULL, &b));
	EXPECT_EQ(PTO_DUMP_MMAP_OFFSET(0), b.mmap_offset);
	EXPECT_EQ(PTO_DUMP_ARENA_OFFSET + b.arena_size, b.mmap_size);
	EXPECT_EQ(-EBUSY, bind_lane(self->fd, 0, PTO_DUMP_FULL, &b));
	EXPECT_EQ(-EBUSY, bind_lane(other, 0, PTO_DUMP_PARTIAL, &b));
	EXPECT_EQ(-EINVAL, bind_lane(other, self->info.lanes, 1, &b));
	EXPECT_EQ(-EINVAL, bind_lane(other, 1, PTO_DUMP_LEVEL_MAX + 1, &b));
	b.lane = 1;
	b.level = 1;
	b.flags = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(other, PTO_IOCTL_DUMP_BIND, &b));
	EXPECT_EQ(-EPERM, lane_cmd(other, PTO_IOCTL_DUMP_UNBIND, 0));

	/* Any file sees the status. */
	ASSERT_EQ(0, lane_status(other, 0, &s));
	EXPECT_EQ(PTO_LANE_BOUND, s.state);
	EXPECT_EQ(PTO_DUMP_FULL, s.level);
	EXPECT_EQ((uint32_t)getpid(), s.owner);
	EXPECT_EQ(0, s.pad1);
	/* An ABI 2.3 caller's 144-byte struct gets those fields, no more. */
	memset(&s, 0xff, sizeof(s));
	s.lane = 0;
	s.flags = 0;
	ASSERT_EQ(0, pto_sioctl(other, _IOWR(PTO_IOCTL_BASE, 0x15, char[144]),
				&s));
	EXPECT_EQ(PTO_DUMP_FULL, s.level);
	EXPECT_EQ(0, s.open_written);
	EXPECT_EQ(~0ull, s.refused);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 0));
	ASSERT_EQ(0, lane_status(other, 0, &s));
	EXPECT_EQ(PTO_LANE_FREE, s.state);

	for (level = PTO_DUMP_OFF; level <= PTO_DUMP_LEVEL_MAX; level++) {
		ASSERT_EQ(0, bind_lane(other, 0, level, &b));
		ASSERT_EQ(0, lane_status(self->fd, 0, &s));
		EXPECT_EQ(level, s.level);
		ASSERT_EQ(0, lane_cmd(other, PTO_IOCTL_DUMP_UNBIND, 0));
	}
	close(other);
}

/*
 * A strided tensor and a scalar at FULL, read back through the read-only
 * mapping after close: the records as requested, the payload gathered
 * element by element, the counters balanced.
 */
TEST_F(lane, capture_read_back)
{
	struct pto_dump_bind b;
	struct pto_dump_capture c;
	struct pto_dump_ack ack = { .lane = 0 };
	const struct pto_dump_state *st;
	const struct pto_dump_record *r;
	const uint8_t *m;
	uint32_t *buf, h, i, j, got;

	h = alloc_pattern(self->fd, 4096, &buf);
	ASSERT_NE(0, h);
	ASSERT_EQ(0, bind_lane(self->fd, 0, PTO_DUMP_FULL, &b));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, b.mmap_size, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->fd, b.mmap_offset));
	EXPECT_EQ(EACCES, errno);
	m = mmap(NULL, b.mmap_size, PROT_READ, MAP_SHARED, self->fd,
		 b.mmap_offset);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_NE(0, mprotect((void *)m, 4096, PROT_READ | PROT_WRITE));
	st = (const struct pto_dump_state *)m;
	EXPECT_EQ(PTO_DUMP_MAGIC, st->magic);

	tensor_req(&c, 0, h, 0x42, 0);
	c.rank = 2;
	c.shape[0] = 6;
	c.shape[1] = 10;
	c.strides[0] = 37;
	c.strides[1] = 3;
	c.start_offset = 2;
	c.bo_offset = 64;
	c.arg_index = 1;
	c.role = PTO_DUMP_ROLE_INOUT;
	c.stage = PTO_DUMP_AFTER_COMPLETION;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	EXPECT_EQ(PTO_DUMP_RES_COLLECTED, c.result);
	memset(&c, 0, sizeof(c));
	c.lane = 0;
	c.task_id = 0x42;
	c.kind = PTO_DUMP_KIND_SCALAR;
	c.dtype = PTO_DTYPE_I32;
	c.arg_index = 3;
	c.value = 0xdeadbeef;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	EXPECT_EQ(0, st->acct.ready_tail);	/* not yet published */
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_CLOSE, 0));
	EXPECT_EQ(-EPIPE, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));

	ASSERT_EQ(1, __atomic_load_n(&st->acct.ready_tail, __ATOMIC_ACQUIRE));
	ASSERT_EQ(2, st->ready_records[0]);
	EXPECT_EQ(PTO_LANE_CLOSED, st->state);
	EXPECT_EQ(2, st->acct.collected);
	EXPECT_EQ(st->acct.total, st->acct.collected + st->acct.dropped);
	EXPECT_EQ(1, st->acct.published_payloads);
	r = (const struct pto_dump_record *)(m + st->meta_offset +
					     st->ready[0] * PTO_DUMP_BUFFER_SIZE);
	EXPECT_EQ(0x42, r[0].task_id);
	EXPECT_EQ(1, r[0].arg_index);
	EXPECT_EQ(PTO_DUMP_ROLE_INOUT, r[0].role);
	EXPECT_EQ(PTO_DUMP_AFTER_COMPLETION, r[0].stage);
	EXPECT_EQ(PTO_DUMP_FUNC_NONE, r[0].func_id[2]);
	EXPECT_EQ(37, r[0].strides[0]);
	EXPECT_EQ(6 * 10 * 4, r[0].payload_size);
	EXPECT_TRUE(r[0].flags & PTO_DUMP_REC_PAYLOAD);
	EXPECT_FALSE(r[0].flags & PTO_DUMP_REC_CONTIGUOUS);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 10; j++) {
			memcpy(&got, m + st->arena_offset +
			       (r[0].data + (i * 10 + j) * 4) % st->arena_size,
			       4);
			EXPECT_EQ(buf[16 + 2 + i * 37 + j * 3], got);
		}
	EXPECT_EQ(PTO_DUMP_KIND_SCALAR, r[1].kind);
	EXPECT_EQ(0xdeadbeef, r[1].data);
	EXPECT_EQ(0, r[1].payload_size);

	ack.completed_payloads = 1;
	ack.returned_buffers = 1;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	EXPECT_EQ(1, st->acct.completed_payloads);
	EXPECT_EQ(PTO_DUMP_META_BUFFERS, st->free_count);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 0));
	/* The mapping keeps its own binding's bytes after unbind. */
	EXPECT_EQ(0xdeadbeef, r[1].data);
	munmap((void *)m, b.mmap_size);
}

/* Beyond what was published, or backwards: -EINVAL, nothing changes. */
TEST_F(lane, ack_beyond_published)
{
	struct pto_dump_bind b;
	struct pto_dump_capture c;
	struct pto_dump_status s0, s1;
	struct pto_dump_ack ack = { .lane = 0 };
	uint32_t *buf, h;

	h = alloc_pattern(self->fd, 1024, &buf);
	ASSERT_NE(0, h);
	ASSERT_EQ(0, bind_lane(self->fd, 0, PTO_DUMP_FULL, &b));
	tensor_req(&c, 0, h, 1, 1024);
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));

	ASSERT_EQ(0, lane_status(self->fd, 0, &s0));
	ack.completed_payloads = 1;	/* committed, not yet published */
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	ack.completed_payloads = 0;
	ack.returned_buffers = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	ack.flags = 1;
	ack.returned_buffers = 0;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	ASSERT_EQ(0, lane_status(self->fd, 0, &s1));
	EXPECT_EQ(0, memcmp(&s0, &s1, sizeof(s0)));

	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_CLOSE, 0));
	ack.flags = 0;
	ack.completed_payloads = 2;
	ack.returned_buffers = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	ack.completed_payloads = 1;
	ack.returned_buffers = 2;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	ack.returned_buffers = 1;
	EXPECT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	ack.completed_payloads = 0;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	ASSERT_EQ(0, lane_status(self->fd, 0, &s1));
	EXPECT_EQ(1, s1.acct.completed_payloads);
	EXPECT_EQ(1, s1.acct.ready_head);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 0));
}

/*
 * A capture names only the caller's own buffers, and only inside them:
 * another file's handle is -ENOENT, an extent past the end is refused
 * (accounted), another file's lane is -EPERM for capture and mmap.
 */
TEST_F(lane, capture_of_other_files_gm_refused)
{
	struct pto_dump_bind b;
	struct pto_dump_capture c;
	struct pto_dump_status s;
	int other = open(PTO_DEV0, O_RDWR);
	uint32_t *buf, *obuf, h, oh;

	ASSERT_LE(0, other);
	ASSERT_NE(0, alloc_pattern(other, 1024, &obuf));
	oh = alloc_pattern(other, 1024, &obuf);
	ASSERT_NE(0, oh);
	h = alloc_pattern(self->fd, 1024, &buf);
	ASSERT_NE(0, h);
	ASSERT_NE(h, oh);
	ASSERT_EQ(0, bind_lane(self->fd, 0, PTO_DUMP_FULL, &b));

	/* Handles are per file: the other's second buffer is none of ours. */
	tensor_req(&c, 0, oh, 1, 16);
	EXPECT_EQ(-ENOENT, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	tensor_req(&c, 0, h, 1, 1025);
	EXPECT_EQ(-EFAULT, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	tensor_req(&c, 0, h, 1, 2);
	c.strides[0] = 1023;
	c.start_offset = 1;
	EXPECT_EQ(-EFAULT, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	tensor_req(&c, 0, h, 1, 16);
	c.pad = 1;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	tensor_req(&c, 0, oh, 1, 16);
	EXPECT_EQ(-EPERM, pto_sioctl(other, PTO_IOCTL_DUMP_CAPTURE, &c));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, other,
				   b.mmap_offset));
	EXPECT_EQ(EPERM, errno);

	ASSERT_EQ(0, lane_status(self->fd, 0, &s));
	EXPECT_EQ(2, s.acct.dropped);
	EXPECT_EQ(0, s.acct.collected);
	EXPECT_EQ(s.acct.total, s.acct.collected + s.acct.dropped);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 0));
	close(other);
}

/* PARTIAL: marked only; HYBRID: every record, marked payloads; OFF. */
TEST_F(lane, level_selection)
{
	struct pto_dump_bind b;
	struct pto_dump_capture c;
	struct pto_dump_status s;
	uint32_t *buf, h;

	h = alloc_pattern(self->fd, 1024, &buf);
	ASSERT_NE(0, h);
	ASSERT_EQ(0, bind_lane(self->fd, 1, PTO_DUMP_PARTIAL, &b));
	tensor_req(&c, 1, h, 1, 16);
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	EXPECT_EQ(PTO_DUMP_RES_SKIPPED, c.result);
	c.flags = PTO_DUMP_CAP_MARKED;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	EXPECT_EQ(PTO_DUMP_RES_COLLECTED, c.result);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_CLOSE, 1));
	ASSERT_EQ(0, lane_status(self->fd, 1, &s));
	EXPECT_EQ(1, s.acct.total);
	EXPECT_EQ(1, s.acct.published_payloads);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 1));

	ASSERT_EQ(0, bind_lane(self->fd, 1, PTO_DUMP_HYBRID, &b));
	c.flags = 0;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	EXPECT_EQ(PTO_DUMP_RES_COLLECTED, c.result);
	c.flags = PTO_DUMP_CAP_MARKED;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_CLOSE, 1));
	ASSERT_EQ(0, lane_status(self->fd, 1, &s));
	EXPECT_EQ(2, s.acct.collected);
	EXPECT_EQ(1, s.acct.published_payloads);	/* the marked one only */
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 1));

	ASSERT_EQ(0, bind_lane(self->fd, 1, PTO_DUMP_OFF, &b));
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	EXPECT_EQ(PTO_DUMP_RES_REFUSED, c.result);
	ASSERT_EQ(0, lane_status(self->fd, 1, &s));
	EXPECT_EQ(1, s.acct.dropped);
	EXPECT_EQ(0, s.arena_write_pos);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 1));
}

/*
 * Clamp-sized captures (half the arena each) without acknowledgements:
 * the third would block. It times out as one refused record; after an
 * acknowledgement the next one goes through.
 */
TEST_F(lane, backpressure_timeout)
{
	struct pto_dump_bind b;
	struct pto_dump_capture c;
	struct pto_dump_status s;
	struct pto_dump_ack ack = { .lane = 0 };
	uint32_t *buf, h, n;

	ASSERT_EQ(0, bind_lane(self->fd, 0, PTO_DUMP_FULL, &b));
	n = b.arena_size / 2 / 4;
	h = alloc_pattern(self->fd, n, &buf);
	ASSERT_NE(0, h);
	tensor_req(&c, 0, h, 1, n);
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	c.timeout_ns = now_ns() + 50000000ull;
	EXPECT_EQ(-ETIMEDOUT, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	ASSERT_EQ(0, lane_status(self->fd, 0, &s));
	EXPECT_EQ(2, s.acct.collected);
	EXPECT_EQ(1, s.acct.dropped);
	EXPECT_EQ(0, s.open);
	EXPECT_EQ(1, s.acct.ready_tail);	/* published for the consumer */
	EXPECT_EQ(2, s.acct.published_payloads);

	ack.completed_payloads = 1;
	ack.returned_buffers = 1;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	c.timeout_ns = now_ns() + 5000000000ull;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	ASSERT_EQ(0, lane_status(self->fd, 0, &s));
	EXPECT_EQ(3, s.acct.collected);
	EXPECT_EQ(s.acct.total, s.acct.collected + s.acct.dropped);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 0));
}

/* @path's whole text into @text (NUL-terminated); its length or -1. */
static ssize_t read_text(const char *path, char *text, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, text, len - 1);
	close(fd);
	if (n >= 0)
		text[n] = 0;
	return n;
}

static int file_has(const char *path, const char *what)
{
	char text[8192];

	if (read_text(path, text, sizeof(text)) < 0)
		return -1;
	return strstr(text, what) != NULL;
}

/*
 * A child binds lane 1, captures, and is killed while its capture waits
 * on back-pressure: its file's release quarantines the lane (terminal
 * never closed) with its counters, lets the buffer it read go (nothing
 * copies any more), and the next bind, another file's, takes the lane
 * over fresh. A lane left so again is freed by the reset instead.
 */
TEST_F(lane, killed_mid_capture_taken_over_or_reset)
{
	struct pto_dump_reset rs = { 0 };
	struct pto_dump_status s;
	struct pto_dump_bind b;
	char owner[32];
	int status, i;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pto_dump_capture c;
		uint32_t *buf, h, n;
		int fd = open(PTO_DEV0, O_RDWR);

		if (fd < 0 || bind_lane(fd, 1, PTO_DUMP_FULL, &b))
			_exit(1);
		n = b.arena_size / 2 / 4;
		h = alloc_pattern(fd, n, &buf);
		if (!h)
			_exit(2);
		tensor_req(&c, 1, h, 7, n);
		c.timeout_ns = now_ns() + 600000000000ull;
		for (;;)
			pto_sioctl(fd, PTO_IOCTL_DUMP_CAPTURE, &c);
	}
	/* Two captures filled the arena; the third waits. */
	for (i = 0; i < 2000; i++) {
		ASSERT_EQ(0, lane_status(self->fd, 1, &s));
		if (s.acct.collected == 2 && s.acct.ready_tail == 1)
			break;
		usleep(5000);
	}
	ASSERT_EQ(2, s.acct.collected);
	usleep(50000);
	snprintf(owner, sizeof(owner), "%-8d", pid);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));

	ASSERT_EQ(0, lane_status(self->fd, 1, &s));
	EXPECT_EQ(PTO_LANE_QUARANTINED, s.state);
	EXPECT_EQ(PTO_LANE_Q_UNCLOSED, s.quarantine);
	EXPECT_EQ(0, s.open);
	EXPECT_EQ(2, s.acct.collected);
	EXPECT_EQ(1, s.acct.dropped);	/* the interrupted capture */
	EXPECT_EQ(s.acct.total, s.acct.collected + s.acct.dropped);
	EXPECT_EQ(1, file_has(LANE_DBG, "quarantined"));
	EXPECT_EQ(1, file_has(LANE_DBG, "unclosed"));
	/* The dead file's buffer is gone: the lane let it go at release. */
	EXPECT_EQ(0, file_has(PTO_DBG0 "bos", owner));

	/* The next binder takes the lane over and finds it fresh. */
	ASSERT_EQ(0, bind_lane(self->fd, 1, PTO_DUMP_FULL, &b));
	ASSERT_EQ(0, lane_status(self->fd, 1, &s));
	EXPECT_EQ(PTO_LANE_BOUND, s.state);
	EXPECT_EQ(0, s.quarantine);
	EXPECT_EQ(getpid(), (pid_t)s.owner);
	EXPECT_EQ(0, s.acct.total);
	EXPECT_EQ(0, s.acct.ready_tail);
	EXPECT_EQ(0, s.arena_write_pos);
	EXPECT_EQ(0, file_has(LANE_DBG, "quarantined"));
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 1));

	/* Left unclosed again (a bind and an exit): the reset frees it. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open(PTO_DEV0, O_RDWR);

		_exit(fd < 0 || bind_lane(fd, 1, PTO_DUMP_OFF, &b));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, lane_status(self->fd, 1, &s));
	EXPECT_EQ(PTO_LANE_QUARANTINED, s.state);
	EXPECT_EQ(PTO_LANE_Q_UNCLOSED, s.quarantine);
	rs.lanes = 1u << 1;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_RESET, &rs));
	EXPECT_EQ(1, rs.recovered);
	EXPECT_EQ(0, rs.remaining);
	ASSERT_EQ(0, lane_status(self->fd, 1, &s));
	EXPECT_EQ(PTO_LANE_FREE, s.state);
	ASSERT_EQ(0, bind_lane(self->fd, 1, PTO_DUMP_FULL, &b));
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 1));
	rs.lanes = 1u << self->info.lanes;
	EXPECT_EQ(-EINVAL, pto_sioctl(self->fd, PTO_IOCTL_DUMP_RESET, &rs));
}

/* A file that unbinds nothing but closed its lane leaves it free. */
TEST_F(lane, closed_lane_freed_at_release)
{
	struct pto_dump_bind b;
	struct pto_dump_status s;
	int other = open(PTO_DEV0, O_RDWR);

	ASSERT_LE(0, other);
	ASSERT_EQ(0, bind_lane(other, 1, PTO_DUMP_FULL, &b));
	ASSERT_EQ(0, lane_cmd(other, PTO_IOCTL_DUMP_CLOSE, 1));
	close(other);
	ASSERT_EQ(0, lane_status(self->fd, 1, &s));
	EXPECT_EQ(PTO_LANE_FREE, s.state);
	EXPECT_EQ(0, s.quarantine);
}

struct blocked {
	int fd;
	struct pto_dump_capture c;
	int ret;
};

static void *capture_thread(void *arg)
{
	struct blocked *b = arg;

	b->ret = pto_sioctl(b->fd, PTO_IOCTL_DUMP_CAPTURE, &b->c);
	return NULL;
}

/*
 * One producer per lane: while a capture waits on back-pressure, another
 * thread's capture, close and unbind are -EBUSY; the acknowledgement
 * wakes the waiter, which then commits.
 */
TEST_F(lane, second_capture_busy_while_one_waits)
{
	struct pto_dump_bind b;
	struct pto_dump_capture c;
	struct pto_dump_status s;
	struct pto_dump_ack ack = { .lane = 0 };
	struct blocked bl = { .fd = self->fd };
	uint32_t *buf, h, n;
	pthread_t t;
	int i;

	ASSERT_EQ(0, bind_lane(self->fd, 0, PTO_DUMP_FULL, &b));
	n = b.arena_size / 2 / 4;
	h = alloc_pattern(self->fd, n, &buf);
	ASSERT_NE(0, h);
	tensor_req(&c, 0, h, 1, n);
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	tensor_req(&bl.c, 0, h, 2, n);
	bl.c.timeout_ns = now_ns() + 60000000000ull;
	ASSERT_EQ(0, pthread_create(&t, NULL, capture_thread, &bl));
	for (i = 0; i < 2000; i++) {
		ASSERT_EQ(0, lane_status(self->fd, 0, &s));
		if (s.acct.ready_tail == 1)
			break;
		usleep(5000);
	}
	usleep(20000);
	tensor_req(&c, 0, h, 3, 16);
	EXPECT_EQ(-EBUSY, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	EXPECT_EQ(-EBUSY, lane_cmd(self->fd, PTO_IOCTL_DUMP_CLOSE, 0));
	EXPECT_EQ(-EBUSY, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 0));
	ack.completed_payloads = 2;
	ack.returned_buffers = 1;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_ACK, &ack));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, bl.ret);
	EXPECT_EQ(PTO_DUMP_RES_COLLECTED, bl.c.result);
	ASSERT_EQ(0, lane_status(self->fd, 0, &s));
	EXPECT_EQ(3, s.acct.collected);
	EXPECT_EQ(0, s.acct.dropped);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 0));
}

/*
 * A lane's memory is charged to the binder's memory cgroup: under a limit
 * below the arena the bind is -ENOMEM (not an OOM kill) and leaves nothing
 * charged or bound; without the limit the bind charges at least the arena,
 * and the unbind gives it back. Slack: the per-CPU charge batches.
 */
TEST_F(lane, arena_charged_to_memcg)
{
	const long long slack = 1 << 20;
	long long arena, base, cur;
	const char *skip = NULL;
	struct pto_dump_status s;
	struct pto_dump_bind b;
	char line[64];
	struct st_cg cg;
	int ret;

	ASSERT_EQ(0, st_read_line(PTO_PARAMS "dump_arena_mb", line,
				  sizeof(line)));
	arena = strtoll(line, NULL, 10) << 20;
	ret = st_cg_enter(&cg, "pto_lane_test", &skip);
	if (ret == 1)
		SKIP(return, "%s", skip);
	ASSERT_EQ(0, ret);
	base = st_cg_value(&cg, "memory.current");
	ASSERT_LE(0, base);
	snprintf(line, sizeof(line), "%lld", base + arena / 2);
	ASSERT_EQ(0, st_cg_write(&cg, "memory.max", line));

	EXPECT_EQ(-ENOMEM, bind_settled(self->fd, 0, PTO_DUMP_FULL, &b));
	ASSERT_EQ(0, lane_status(self->fd, 0, &s));
	EXPECT_EQ(PTO_LANE_FREE, s.state);
	cur = st_cg_value(&cg, "memory.current");
	EXPECT_GE(base + slack, cur) TH_LOG("charged %lld -> %lld", base, cur);

	ASSERT_EQ(0, st_cg_write(&cg, "memory.max", "max"));
	base = st_cg_value(&cg, "memory.current");
	ASSERT_EQ(0, bind_settled(self->fd, 0, PTO_DUMP_FULL, &b));
	cur = st_cg_value(&cg, "memory.current");
	EXPECT_LE(base + arena, cur) TH_LOG("bound: %lld -> %lld", base, cur);
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 0));
	cur = st_cg_value(&cg, "memory.current");
	EXPECT_GE(base + slack, cur) TH_LOG("unbound: %lld -> %lld", base, cur);
	EXPECT_EQ(0, st_cg_leave(&cg));
}

/* The line of @text starting with "@lane " into @line; 0 or -1. */
static int lane_line(const char *text, unsigned int lane, char *line,
		     size_t len)
{
	const char *p = strchr(text, '\n');	/* past the header */
	char key[16];
	size_t n;

	snprintf(key, sizeof(key), "%-4u ", lane);
	for (; p; p = strchr(p, '\n')) {
		p++;
		if (strncmp(p, key, strlen(key)))
			continue;
		n = strcspn(p, "\n");
		if (n >= len)
			return -1;
		memcpy(line, p, n);
		line[n] = 0;
		return 0;
	}
	return -1;
}

/*
 * `ptoctl lanes -d 0` prints debugfs `lanes` byte for byte (header and
 * every lane), lane 0's columns are its DUMP_STATUS values at level
 * partial in @state, and lane 1 shows free.
 */
static void check_ptoctl_lanes(struct __test_metadata *_metadata, int fd,
			       const char *want_state)
{
	static char dbg[8192], out[8192];
	char line[512], level[16], state[16], open_col[32], q[32];
	unsigned long long res, count, pos, pub, done, ref, aband, drop;
	struct pto_dump_status s;
	unsigned int lane;
	int owner;
	size_t n;
	FILE *f;

	ASSERT_EQ(0, lane_status(fd, 0, &s));
	f = popen("ptoctl lanes -d 0", "r");
	ASSERT_NE(NULL, f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	ASSERT_EQ(0, pclose(f)) TH_LOG("ptoctl lanes: %s", out);
	ASSERT_LT(0, read_text(LANE_DBG, dbg, sizeof(dbg)));
	EXPECT_STREQ(dbg, out);

	ASSERT_EQ(0, lane_line(out, 0, line, sizeof(line))) TH_LOG("%s", out);
	ASSERT_EQ(14, sscanf(line, "%u %d %15s %15s %llu/%llu %llu %llu %llu %llu %llu %llu %31s %31s",
			     &lane, &owner, level, state, &res, &count, &pos,
			     &pub, &done, &ref, &aband, &drop, open_col, q))
		TH_LOG("%s", line);
	EXPECT_EQ(s.owner, (uint32_t)owner);
	EXPECT_EQ(getpid(), owner);
	EXPECT_STREQ("partial", level);
	EXPECT_STREQ(want_state, state);
	EXPECT_EQ(s.reserved, res);
	EXPECT_EQ(s.count, count);
	EXPECT_EQ(s.arena_write_pos, pos);
	EXPECT_EQ(24 * 4, pos);
	EXPECT_EQ(s.acct.published_payloads, pub);
	EXPECT_EQ(s.acct.completed_payloads, done);
	EXPECT_EQ(s.refused, ref);
	EXPECT_EQ(1, ref);
	EXPECT_EQ(s.abandoned, aband);
	EXPECT_EQ(s.acct.dropped, drop);
	EXPECT_EQ(1, drop);
	EXPECT_STREQ("-", open_col);
	EXPECT_STREQ("-", q);

	ASSERT_EQ(0, lane_status(fd, 1, &s));
	ASSERT_EQ(PTO_LANE_FREE, s.state);
	ASSERT_EQ(0, lane_line(out, 1, line, sizeof(line)));
	ASSERT_EQ(4, sscanf(line, "%u %d %15s %15s", &lane, &owner, level,
			    state));
	EXPECT_EQ(0, owner);
	EXPECT_STREQ("-", level);
	EXPECT_STREQ("free", state);
}

/*
 * Lane 0 bound at PARTIAL with one marked tensor collected and one
 * refused (its extent beyond the buffer): `ptoctl lanes` while bound
 * (the record in the open buffer: 1/1, nothing published) and after
 * close (the buffer published: 0/0, one payload).
 */
TEST_F(lane, ptoctl_lanes_matches_status_and_debugfs)
{
	struct pto_dump_capture c;
	struct pto_dump_status s;
	struct pto_dump_bind b;
	uint32_t *buf, h;

	h = alloc_pattern(self->fd, 1024, &buf);
	ASSERT_NE(0, h);
	ASSERT_EQ(0, bind_settled(self->fd, 0, PTO_DUMP_PARTIAL, &b));
	tensor_req(&c, 0, h, 0x5a, 24);
	c.flags = PTO_DUMP_CAP_MARKED;
	ASSERT_EQ(0, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	ASSERT_EQ(PTO_DUMP_RES_COLLECTED, c.result);
	tensor_req(&c, 0, h, 0x5b, 2048);	/* beyond the 1024 elements */
	c.flags = PTO_DUMP_CAP_MARKED;
	ASSERT_EQ(-EFAULT, pto_sioctl(self->fd, PTO_IOCTL_DUMP_CAPTURE, &c));
	ASSERT_EQ(0, lane_status(self->fd, 0, &s));
	ASSERT_EQ(1, s.count);
	ASSERT_EQ(1, s.reserved);
	ASSERT_EQ(0, s.acct.published_payloads);
	ASSERT_EQ(1, s.refused);
	ASSERT_EQ(0, s.abandoned);
	check_ptoctl_lanes(_metadata, self->fd, "bound");

	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_CLOSE, 0));
	ASSERT_EQ(0, lane_status(self->fd, 0, &s));
	ASSERT_EQ(PTO_LANE_CLOSED, s.state);
	ASSERT_EQ(0, s.count);
	ASSERT_EQ(1, s.acct.published_payloads);
	check_ptoctl_lanes(_metadata, self->fd, "closed");
	ASSERT_EQ(0, lane_cmd(self->fd, PTO_IOCTL_DUMP_UNBIND, 0));
}

TEST_HARNESS_MAIN
