/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by pto's selftests (kselftest harness, run in the VM),
 * and their main(): TEST_HARNESS_MAIN runs the tests its options select
 * (st_main.h). Include after kselftest_harness.h.
 */
#ifndef PTO_SELFTEST_H
#define PTO_SELFTEST_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/pto.h>
#include "st_main.h"

#define PTO_DEV0 "/dev/pto0"
#define PTO_DBG0 "/sys/kernel/debug/pto/pto0/"
#define PTO_DBG_FMT "/sys/kernel/debug/pto/pto%u/%s"	/* device, file */
#define PTO_PARAMS "/sys/module/pto/parameters/"
#define PTO_KO "/lib/modules/pto.ko"	/* in the VM image */

/*
 * Slack for comparing a time a core measured (its ktime, in the kernel
 * thread) with one this process measured (CLOCK_MONOTONIC): the two are
 * read on different vCPUs, and the guest's clocks on two vCPUs under TCG
 * were seen 5 ms apart (a 300 ms spin seen to end after 295 ms). Twice
 * that, and less than the shortest spin it is used with (20 ms), which
 * a larger slack would make a check of nothing.
 */
#define ST_CLOCK_SLACK_NS 10000000ull

/*
 * @n iterations of a load or stress loop, scaled by PTO_TEST_SCALE (a
 * percentage, default 100; at least 1). The VM runner sets it for the
 * debug kernel (tests/vm/run --debug-kernel), where KASAN and lockdep make
 * every ioctl and wake-up many times slower, so fixed-size loops would
 * run into the harness's timeout without testing anything more.
 */
static inline unsigned long st_scaled(unsigned long n)
{
	const char *e = getenv("PTO_TEST_SCALE");
	unsigned long pct = e ? strtoul(e, NULL, 10) : 100;

	n = n * (pct ? pct : 100) / 100;
	return n ? n : 1;
}

/* ioctl returning 0 or -errno, so ASSERT_EQ(-EINVAL, ...) reads well. */
static inline int pto_sioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/* Same command number with another struct size (old / new user space). */
#define PTO_IOWR_SIZED(cmd, size) \
	_IOC(_IOC_READ | _IOC_WRITE, _IOC_TYPE(cmd), _IOC_NR(cmd), (size))

/* Add the PTO_CORES_PER_CLUSTER cores of cluster @c to core mask @cores. */
static inline void st_cluster_add(unsigned int c, uint64_t *cores)
{
	unsigned int i;

	for (i = c * PTO_CORES_PER_CLUSTER;
	     i < (c + 1) * PTO_CORES_PER_CLUSTER; i++)
		cores[i / 64] |= 1ull << (i % 64);
}

/* The PTO_CORES_PER_CLUSTER cores of cluster @c, as a core mask. */
static inline void st_cluster_cores(unsigned int c, uint64_t *cores)
{
	memset(cores, 0, PTO_CORE_MASK_WORDS * sizeof(*cores));
	st_cluster_add(c, cores);
}

/*
 * Read whatever wake-ups @fd (an eventfd or a pto device's) holds,
 * without blocking (blocking or not, @fd is only read while poll()
 * says it is readable).
 */
static inline void st_drain_fd(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t v;

	while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) &&
	       read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

static inline int st_bo_alloc(int fd, uint64_t size, struct pto_bo_alloc *out)
{
	memset(out, 0, sizeof(*out));
	out->size = size;
	return pto_sioctl(fd, PTO_IOCTL_BO_ALLOC, out);
}

/* Write @val to a sysfs / debugfs file in one write(). 0 or -1. */
static inline int st_write_file(const char *path, const char *val)
{
	ssize_t len = (ssize_t)strlen(val);
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, val, len) == len ? 0 : -1;
	close(fd);
	return ret;
}

/* The first line of a file, without its newline. 0 or -1. */
static inline int st_read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	if (!f || !fgets(buf, (int)n, f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Line @core of a debugfs table (after its header line). 0 or -1. */
static inline int st_dbg_line(const char *file, unsigned int core, char *buf,
			      size_t n)
{
	FILE *f = fopen(file, "r");
	unsigned int i;
	int ret = -1;

	if (!f)
		return -1;
	for (i = 0; i <= core + 1; i++)
		if (!fgets(buf, (int)n, f))
			goto out;
	ret = 0;
out:
	fclose(f);
	return ret;
}

/*
 * Core @core of device @dev as debugfs "cores" shows it: its state
 * ("unlaunched", "quarantined", ...), its cluster's owner (a tgid, 0 for
 * none) and the mock faults set on it ("-", "stall", "badid",
 * "stall,badid"). @owner and @inject may be NULL. 0 or -1.
 */
static inline int st_core_row(unsigned int dev, unsigned int core,
			      char *state, size_t n, int *owner,
			      char *inject, size_t m)
{
	char path[64], line[256], word[32], inj[32];
	int own;

	snprintf(path, sizeof(path), PTO_DBG_FMT, dev, "cores");
	if (st_dbg_line(path, core, line, sizeof(line)) ||
	    sscanf(line, "%*s %*s %31s %d %*s %*s %*s %*s %*s %*s %*s %31s",
		   word, &own, inj) != 3)
		return -1;
	snprintf(state, n, "%s", word);
	if (owner)
		*owner = own;
	if (inject)
		snprintf(inject, m, "%s", inj);
	return 0;
}

/* The state of core @core of device @dev (st_core_row()). 0 or -1. */
static inline int st_core_state(unsigned int dev, unsigned int core,
				char *state, size_t n)
{
	return st_core_row(dev, core, state, n, NULL, NULL, 0);
}

/*
 * Parameters and mock faults a test changes are put back however it ends
 * (Documentation/testing.md, "Module parameters in selftests"): the child
 * records each change in memory shared with the harness's parent, which
 * restores it before the next fork and at exit. st_param_set(),
 * st_module_unload() / st_module_reload(), st_inject_stall() and
 * st_inject_badid(); call them from the test's own thread.
 */
#define ST_RESTORE_MAX 16
#define ST_PARAM_PATH (sizeof(PTO_PARAMS) + 256)	/* + a d_name */

struct st_restore {
	pid_t parent;			/* the harness's main process */
	pid_t child;			/* the test that recorded something */
	unsigned int n;			/* entries recorded in param[] */
	int reload;			/* pto.ko unloaded: load it with args */
	int failed;			/* a restore failed: the program fails */
	char args[1024];
	struct {
		char name[48];
		char old[64];
	} param[ST_RESTORE_MAX];
	unsigned int ninject;		/* entries recorded in inject[] */
	struct {
		unsigned int dev;
		unsigned int core;
	} inject[ST_RESTORE_MAX];
};

static struct st_restore *st_saved;

static inline int st_module_load(const char *args)
{
	int fd = open(PTO_KO, O_RDONLY);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, args, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static inline int st_module_loaded(void)
{
	return access("/sys/module/pto", F_OK) == 0;
}

/* Write pto's parameter @name. 0 or -1. */
static inline int st_param_write(const char *name, const char *val)
{
	char path[ST_PARAM_PATH];

	snprintf(path, sizeof(path), PTO_PARAMS "%s", name);
	return st_write_file(path, val);
}

/*
 * Wait (bounded) until the test that recorded changes is gone. After a
 * timeout the 6.1 harness SIGKILLs the test's process group, but its
 * waitpid() returns EINTR (SIGALRM) and the child is never reaped: it
 * may still be exiting, holding /dev/ptoN open. Reap it here (ECHILD: the
 * harness did), and give its process group (a test's own children) the
 * same bound, so pto.ko is no longer in use when it is reloaded.
 */
static inline void st_reap_test(struct st_restore *r)
{
	int i;

	if (r->child <= 0)
		return;
	for (i = 0; i < 500; i++) {
		pid_t w = waitpid(r->child, NULL, WNOHANG);

		if ((w == r->child || (w < 0 && errno == ECHILD)) &&
		    kill(-r->child, 0) && errno == ESRCH)
			break;
		usleep(10000);
	}
	r->child = 0;
}

/* delete_module, retried while a dying test still holds the module. */
static inline void st_module_unload_now(void)
{
	int i;

	for (i = 0; i < 500 && st_module_loaded(); i++) {
		if (!syscall(SYS_delete_module, "pto", O_NONBLOCK) ||
		    errno != EBUSY)
			break;
		usleep(10000);
	}
}

/* Write @val to debugfs file @name of device @dev. 0 or -1. */
static inline int st_dbg_write(unsigned int dev, const char *name,
			       const char *val)
{
	char path[64];

	snprintf(path, sizeof(path), PTO_DBG_FMT, dev, name);
	return st_write_file(path, val);
}

/*
 * Undo the recorded fault injections: one debugfs reset per device, then
 * every injected core must be unlaunched (not quarantined, and not still
 * retiring for a test whose reaping gave up: its release would quarantine
 * it after the reset), with no fault left set and no owner of its
 * cluster. The reset skips the clusters a file owns, whose cores may read
 * "unlaunched" (idle) while a fault stays armed on them: a file of a
 * dying test that outlived its reaping, or one a process outside the
 * test's process group holds.
 */
static inline void st_restore_injected(struct st_restore *r)
{
	char state[32], inject[32];
	unsigned int i, j;
	int owner;

	for (i = 0; i < r->ninject; i++) {
		for (j = 0; j < i; j++)
			if (r->inject[j].dev == r->inject[i].dev)
				break;
		if (j == i && st_dbg_write(r->inject[i].dev, "reset", "1")) {
			fprintf(stderr, "# pto_selftest: cannot reset pto%u\n",
				r->inject[i].dev);
			r->failed = 1;
		}
	}
	for (i = 0; i < r->ninject; i++) {
		if (st_core_row(r->inject[i].dev, r->inject[i].core, state,
				sizeof(state), &owner, inject, sizeof(inject))) {
			strcpy(state, "unknown");
			strcpy(inject, "unknown");
			owner = -1;
		}
		if (strcmp(state, "unlaunched") || strcmp(inject, "-") ||
		    owner) {
			fprintf(stderr, "# pto_selftest: pto%u core %u %s, fault %s, cluster owner %d after the reset\n",
				r->inject[i].dev, r->inject[i].core, state,
				inject, owner);
			r->failed = 1;
		}
	}
	r->ninject = 0;
}

/* Put back everything recorded; the harness's parent process only. */
static inline void st_restore_all(void)
{
	struct st_restore *r = st_saved;
	unsigned int i;

	if (!r || getpid() != r->parent)
		return;
	st_reap_test(r);
	if (r->reload) {
		st_module_unload_now();
		if (st_module_load(r->args)) {
			fprintf(stderr, "# pto_selftest: cannot reload pto.ko with '%s'\n",
				r->args);
			r->failed = 1;
		}
		r->reload = 0;
	}
	for (i = r->n; i-- > 0;) {
		if (st_param_write(r->param[i].name, r->param[i].old)) {
			fprintf(stderr, "# pto_selftest: cannot restore parameter %s=%s\n",
				r->param[i].name, r->param[i].old);
			r->failed = 1;
		}
	}
	r->n = 0;
	st_restore_injected(r);
}

static inline void st_restore_at_exit(void)
{
	st_restore_all();
	if (st_saved && getpid() == st_saved->parent && st_saved->failed) {
		/* The tests have reported: a non-zero exit fails the program. */
		fflush(NULL);
		_exit(1);
	}
}

static void __attribute__((constructor)) st_restore_init(void)
{
	void *m = mmap(NULL, sizeof(*st_saved), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return;
	st_saved = m;
	st_saved->parent = getpid();
	pthread_atfork(st_restore_all, NULL, NULL);
	atexit(st_restore_at_exit);
}

/*
 * Set pto's parameter @name to @val until the test ends (see above).
 * 0, or -1 when it cannot be read or written (not root?).
 */
static inline int st_param_set(const char *name, const char *val)
{
	struct st_restore *r = st_saved;
	char path[ST_PARAM_PATH];
	unsigned int i;

	if (!r || strlen(name) >= sizeof(r->param[0].name))
		return -1;
	for (i = 0; i < r->n; i++)
		if (!strcmp(r->param[i].name, name))
			break;
	if (i == r->n) {	/* first change in this test: keep the old value */
		snprintf(path, sizeof(path), PTO_PARAMS "%s", name);
		if (i == ST_RESTORE_MAX ||
		    st_read_line(path, r->param[i].old, sizeof(r->param[i].old)))
			return -1;
		strcpy(r->param[i].name, name);
		r->child = getpid();
		__atomic_store_n(&r->n, i + 1, __ATOMIC_RELEASE);
	}
	return st_param_write(name, val);
}

/*
 * Write @text, which names core @core, to debugfs inject_<@fault> of
 * device @dev, recorded as an injection on that core first (see above),
 * whether the driver takes it or not. 0 or -1 (errno from the write).
 */
static inline int st_inject_text(unsigned int dev, const char *fault,
				 unsigned int core, const char *text)
{
	struct st_restore *r = st_saved;
	char name[32];
	unsigned int i;

	if (!r)
		return -1;
	for (i = 0; i < r->ninject; i++)
		if (r->inject[i].dev == dev && r->inject[i].core == core)
			break;
	if (i == r->ninject) {	/* recorded before the write */
		if (i == ST_RESTORE_MAX)
			return -1;
		r->inject[i].dev = dev;
		r->inject[i].core = core;
		r->child = getpid();
		__atomic_store_n(&r->ninject, i + 1, __ATOMIC_RELEASE);
	}
	snprintf(name, sizeof(name), "inject_%s", fault);
	return st_dbg_write(dev, name, text);
}

/*
 * Arm mock fault @fault ("stall", "badid": debugfs inject_<fault>) on
 * core @core of device @dev until the test ends (see above). 0 or -1.
 */
static inline int st_inject(unsigned int dev, const char *fault,
			    unsigned int core)
{
	char num[16];

	snprintf(num, sizeof(num), "%u", core);
	return st_inject_text(dev, fault, core, num);
}

/* Core @core of device @dev ignores its next EXIT (quarantined). */
static inline int st_inject_stall(unsigned int dev, unsigned int core)
{
	return st_inject(dev, "stall", core);
}

/* Core @core of device @dev reports a bad id at its next handshake. */
static inline int st_inject_badid(unsigned int dev, unsigned int core)
{
	return st_inject(dev, "badid", core);
}

/* Every parameter of the loaded pto.ko as "k=v k=v". 0 or -1. */
static inline int st_module_params(char *buf, size_t len)
{
	DIR *d = opendir(PTO_PARAMS);
	struct dirent *de;
	size_t off = 0;
	char path[ST_PARAM_PATH], val[64];

	if (!d)
		return -1;
	buf[0] = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PTO_PARAMS "%s", de->d_name);
		if (st_read_line(path, val, sizeof(val)))
			continue;	/* write-only */
		off += snprintf(buf + off, len - off, "%s%s=%s", off ? " " : "",
				de->d_name, val);
		if (off >= len) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

/*
 * Unload pto.ko, keeping its parameters: it is loaded back with them by
 * st_module_reload() or, if the test ends first, by the harness's parent.
 * 0 or -errno (-EBUSY: a file of pto is open).
 */
static inline int st_module_unload(void)
{
	struct st_restore *r = st_saved;
	int was = r ? r->reload : 0;

	/* The parameters the program started with, not a test's reload's. */
	if (!r || (!was && st_module_params(r->args, sizeof(r->args))))
		return -EINVAL;
	r->child = getpid();
	__atomic_store_n(&r->reload, 1, __ATOMIC_RELEASE);
	if (syscall(SYS_delete_module, "pto", O_NONBLOCK)) {
		int err = -errno;

		r->reload = was;
		return err;
	}
	return 0;
}

/* Load pto.ko back as st_module_unload() found it. 0 or -errno. */
static inline int st_module_reload(void)
{
	int ret;

	if (!st_saved || !st_saved->reload)
		return -EINVAL;
	ret = st_module_load(st_saved->args);
	if (!ret)
		st_saved->reload = 0;
	return ret;
}

/*
 * Fork @child (it writes one byte to the fd it is given once it runs),
 * SIGKILL it @us later and reap it: 0 if the signal ended it, -1 if it
 * ended by itself, -errno if a step failed.
 */
static inline int st_kill_mid_run(void (*child)(int ready_fd), unsigned int us)
{
	int pfd[2], status;
	pid_t pid;
	char c;

	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(pfd[0]);
		child(pfd[1]);
		_exit(9);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1)
		c = 0;
	close(pfd[0]);
	usleep(us);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return c && WIFSIGNALED(status) ? 0 : -1;
}

#endif
