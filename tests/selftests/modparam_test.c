// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters: out-of-range values refuse to load with a message
 * naming the parameter, and the module reloads cleanly afterwards with the
 * parameters it had (st_module_unload(): reloaded too if a test fails
 * before it does). Needs /lib/modules/pto.ko (the VM image has it) and no
 * other open file of pto.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"

static int klog_has(const char *needle)
{
	static char log[1 << 17];
	int n = klogctl(3, log, sizeof(log) - 1);

	if (n < 0)
		return 0;
	log[n] = 0;
	return strstr(log, needle) != NULL;
}

TEST(bad_values_refuse_to_load)
{
	static const struct { const char *arg, *msg; } bad[] = {
		{ "devices=0", "pto: devices=0 out of range" },
		{ "devices=9", "pto: devices=9 out of range" },
		{ "clusters=0", "pto: clusters=0 out of range" },
		{ "clusters=37", "pto: clusters=37 out of range" },
		{ "gm_mb=0", "pto: gm_mb=0 out of range" },
		{ "gm_mb=4097", "pto: gm_mb=4097 out of range" },
		{ "lanes=0", "pto: lanes=0 out of range" },
		{ "lanes=6", "pto: lanes=6 out of range" },
		/* The kernel's message for a parameter's own setter. */
		{ "retire_timeout_ms=60001",
		  "pto: `60001' invalid for parameter `retire_timeout_ms'" },
	};
	size_t i;

	ASSERT_EQ(0, st_module_unload()) TH_LOG("pto busy: is a file open?");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, st_module_load(bad[i].arg))
			TH_LOG("%s", bad[i].arg);
		EXPECT_TRUE(klog_has(bad[i].msg)) TH_LOG("no '%s'", bad[i].msg);
		EXPECT_NE(0, access(PTO_DEV0, F_OK));
	}
	ASSERT_EQ(0, st_module_reload()) TH_LOG("reload with '%s'", st_saved->args);
	EXPECT_EQ(0, access(PTO_DEV0, F_OK));
}

/*
 * retire_timeout_ms is at most 60 s, also written at run time: the
 * retirement's waits are uninterruptible, and one past the hung-task
 * detector's 120 s would be reported as a hung task.
 */
TEST(retire_timeout_is_bounded_at_run_time)
{
	char buf[64];

	if (access(PTO_PARAMS "retire_timeout_ms", W_OK))
		SKIP(return, "needs root and pto's parameters");
	ASSERT_EQ(0, st_param_set("retire_timeout_ms", "60000"));
	errno = 0;
	EXPECT_EQ(-1, st_param_write("retire_timeout_ms", "60001"));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, st_param_write("retire_timeout_ms", "4294967295"));
	ASSERT_EQ(0, st_read_line(PTO_PARAMS "retire_timeout_ms", buf,
				  sizeof(buf)));
	EXPECT_STREQ("60000", buf);
}

/*
 * The mock's sleeps are bounded too: mock_close_delay_ms (slept
 * uninterruptibly, in a reset under core_lock) at 10 s, doze_us and
 * doze_max_us at 120 s.
 */
TEST(mock_sleeps_are_bounded)
{
	static const struct { const char *name, *max, *over; } p[] = {
		{ "mock_close_delay_ms", "10000", "10001" },
		{ "doze_us", "120000000", "120000001" },
		{ "doze_max_us", "120000000", "120000001" },
	};
	char path[128], buf[64];
	unsigned int i;

	if (access(PTO_PARAMS "mock_close_delay_ms", W_OK))
		SKIP(return, "needs root and pto's mock parameters");
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, st_param_set(p[i].name, p[i].max));
		errno = 0;
		EXPECT_EQ(-1, st_param_write(p[i].name, p[i].over));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-1, st_param_write(p[i].name, "4294967295"));
		snprintf(path, sizeof(path), PTO_PARAMS "%s", p[i].name);
		ASSERT_EQ(0, st_read_line(path, buf, sizeof(buf)));
		EXPECT_STREQ(p[i].max, buf);
	}
}

TEST(every_device_reports_its_index)
{
	char path[32];
	unsigned int n;

	for (n = 0; n < 8; n++) {
		struct pto_info info = { 0 };
		int fd;

		snprintf(path, sizeof(path), "/dev/pto%u", n);
		fd = open(path, O_RDWR);
		if (fd < 0) {
			ASSERT_EQ(ENOENT, errno);
			break;
		}
		ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_GET_INFO, &info));
		EXPECT_EQ(n, info.device);
		close(fd);
	}
	ASSERT_LE(1, n);
}

/*
 * A load that fails after the device nodes exist (mock_init_fail_ms)
 * hands out no open file of the device it frees: every open during the
 * init is -ENXIO, and no debugfs file exists before the init can no
 * longer fail (the loader frees a failed module without waiting for an
 * open debugfs file's close). The child opens the node and debugfs
 * "info" in a loop from before the load until after it failed, so a slow
 * load or a slow child cannot miss the window.
 */
TEST(failed_init_refuses_opens)
{
	volatile int *stop;
	int st[2], status;
	long opened = 0, refused = 0, n[3];
	char c;
	pid_t pid;

	stop = mmap(NULL, sizeof(*stop), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, stop);
	*stop = 0;
	ASSERT_EQ(0, st_module_unload()) TH_LOG("pto busy: is a file open?");
	ASSERT_EQ(0, pipe(st));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int dbg = -1;

		/* Open /dev/pto0 as fast as possible until told to stop. */
		alarm(60);
		n[0] = 0;
		n[1] = 0;
		n[2] = 0;
		if (write(st[1], "x", 1) != 1)
			_exit(1);
		while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
			int fd = open(PTO_DEV0, O_RDWR);

			if (fd >= 0) {
				n[0]++;
				close(fd);
			} else if (errno == ENXIO) {
				n[1]++;
			}
			fd = open(PTO_DBG0 "info", O_RDONLY);
			if (fd >= 0) {
				n[2]++;
				if (dbg < 0)
					dbg = fd;	/* closed after the failure */
				else
					close(fd);
			}
		}
		if (dbg >= 0)
			close(dbg);
		_exit(write(st[1], n, sizeof(n)) == sizeof(n) ? 0 : 1);
	}
	close(st[1]);
	ASSERT_EQ(1, read(st[0], &c, 1));	/* the child is opening */
	EXPECT_EQ(-ENODEV, st_module_load("devices=2 mock_init_fail_ms=1500"));
	EXPECT_NE(0, access(PTO_DEV0, F_OK));
	__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(sizeof(n), read(st[0], n, sizeof(n)));
	opened = n[0];
	refused = n[1];
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	printf("# opens during the failing init: %ld succeeded, %ld refused, %ld of debugfs\n",
	       opened, refused, n[2]);
	EXPECT_EQ(0, opened);
	EXPECT_EQ(0, n[2]) TH_LOG("debugfs existed before the init could fail");
	EXPECT_LT(0, refused) TH_LOG("the node never appeared: nothing tested");
	ASSERT_EQ(0, st_module_reload()) TH_LOG("reload with '%s'", st_saved->args);
	EXPECT_EQ(0, access(PTO_DEV0, F_OK));
	munmap((void *)stop, sizeof(*stop));
}

TEST_HARNESS_MAIN
