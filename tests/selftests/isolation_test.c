// SPDX-License-Identifier: GPL-2.0
/*
 * Isolation between two unprivileged users: an owner and an intruder, of
 * different uids, both in the group the device node is given to. Neither
 * reads or writes the other's GM through payloads, handles, mmap offsets
 * or stale mappings, touches the other's cores, or leaves a core or a dump
 * lane unusable for the other once its own file is closed. Needs root to
 * set up the node and the users; the checks run as the two users.
 */
#include <grp.h>
#include <setjmp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <linux/pto_dump.h>
#include <linux/pto_graph.h>
#include <pto/pto.h>
#include "kselftest_harness.h"
#include "pto_selftest.h"
#include "pto_core_util.h"

#define ISO_GID 4242		/* the device node's group */
#define ISO_OWNER_UID 4001
#define ISO_INTRUDER_UID 4002
#define ISO_BO_SIZE (64u << 10)
#define ISO_SECRET 0xa5u
#define ISO_STALE 0x5au

/* The phases the two processes step through (struct iso_shared.phase). */
enum {
	ISO_START,
	ISO_OWNER_READY,	/* the owner's buffer and cluster 0 launched */
	ISO_PROBED,		/* the intruder's probes done, stale bo armed */
	ISO_REALLOCATED,	/* the owner allocated a buffer after the free */
	ISO_INTRUDER_GONE,	/* the intruder's second write done, exiting */
	ISO_REAPED,		/* the parent reaped the intruder */
};

/* Shared by the parent and both children (an anonymous shared map). */
struct iso_shared {
	int phase;
	uint32_t handle;	/* the owner's buffer */
	uint64_t dev_addr, mmap_offset;
	uint64_t stale_addr;	/* the intruder's freed, still mapped buffer */
	uint32_t graph;		/* the owner's graph handle, running */
	uint32_t nlanes;
	char why[2][128];	/* [0] the owner's failure, [1] the intruder's */
};

static struct iso_shared *iso;

static void iso_set(int phase)
{
	__atomic_store_n(&iso->phase, phase, __ATOMIC_RELEASE);
}

static int iso_wait(int phase)
{
	return st_wait_until(__atomic_load_n(&iso->phase, __ATOMIC_ACQUIRE) >=
			     phase);
}

/* Record the first failure of @who (0 owner, 1 intruder): nonzero. */
#define ISO_FAIL(who, ...) ({						\
	if (!iso->why[who][0])						\
		snprintf(iso->why[who], sizeof(iso->why[who]), __VA_ARGS__); \
	1;								\
})

/* Become @uid, in ISO_GID, with room for a few buffers' locked memory. */
static int iso_become(uid_t uid)
{
	struct rlimit rl = { 64 << 20, 64 << 20 };
	gid_t g = ISO_GID;

	return setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(1, &g) ||
	       setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ||
	       !geteuid();
}

static int iso_all(const volatile uint8_t *m, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i] != v)
			return 0;
	return 1;
}

/* ---- the intruder's probes: each 0, or nonzero with iso->why[1] set ---- */

struct iso_ctx {
	struct pto_dev *d;
	int fd;
};

/*
 * The owner's handle means nothing in another file: unknown there, or
 * (the same number) the intruder's own buffer, never the owner's.
 */
static int iso_probe_handles(struct iso_ctx *c)
{
	struct pto_bo_info bi = { .handle = iso->handle };
	struct pto_bo_free bf = { .handle = iso->handle };
	int ret = pto_sioctl(c->fd, PTO_IOCTL_BO_INFO, &bi);

	if (!ret && bi.dev_addr == iso->dev_addr)
		return ISO_FAIL(1, "BO_INFO of the owner's handle");
	if (ret && ret != -ENOENT)
		return ISO_FAIL(1, "BO_INFO: %d", ret);
	if (ret && pto_sioctl(c->fd, PTO_IOCTL_BO_FREE, &bf) != -ENOENT)
		return ISO_FAIL(1, "BO_FREE of the owner's handle");
	return 0;
}

/* Nor its mmap offset (at most the intruder's own), nor its windows. */
static int iso_probe_mmap(struct iso_ctx *c)
{
	void *m = mmap(NULL, ISO_BO_SIZE, PROT_READ, MAP_SHARED, c->fd,
		       iso->mmap_offset);

	if (m != MAP_FAILED && iso_all(m, ISO_BO_SIZE, ISO_SECRET))
		return ISO_FAIL(1, "mmap of the owner's buffer offset");
	if (m != MAP_FAILED)
		munmap(m, ISO_BO_SIZE);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, c->fd,
		 PTO_WINDOW_MMAP_OFFSET(0));
	if (m != MAP_FAILED || errno != EPERM)
		return ISO_FAIL(1, "mmap of the owner's core window");
	return 0;
}

/* No ioctl acts on the owner's cores or cluster. */
static int iso_probe_cores(struct iso_ctx *c)
{
	struct pto_cluster_acquire ca = { .clusters = 1 };
	struct pto_doorbell db = { .cores = { 1 } };
	struct pto_core_retire rt = { .cores = { 1 } };

	if (pto_sioctl(c->fd, PTO_IOCTL_CLUSTER_ACQUIRE, &ca) != -EBUSY)
		return ISO_FAIL(1, "CLUSTER_ACQUIRE of the owner's cluster");
	if (pto_sioctl(c->fd, PTO_IOCTL_CLUSTER_RELEASE, &ca) != -EPERM)
		return ISO_FAIL(1, "CLUSTER_RELEASE of the owner's cluster");
	if (pto_sioctl(c->fd, PTO_IOCTL_DOORBELL, &db) != -EPERM)
		return ISO_FAIL(1, "DOORBELL of the owner's core");
	if (pto_sioctl(c->fd, PTO_IOCTL_CORE_RETIRE, &rt) != -EPERM)
		return ISO_FAIL(1, "CORE_RETIRE of the owner's core");
	return 0;
}

/* COPY @src to @dst (device addresses, @n int32) on the intruder's core. */
static int iso_copy(struct core_launch *l, uint64_t src, uint64_t dst,
		    uint32_t n)
{
	struct pto_payload p = { .func_id = PTO_FUNC_COPY };
	uint32_t shape[1] = { n };
	uint64_t str[1] = { 1 };

	pto_tensor_set(&p.t[PTO_ARG_A], src, PTO_DTYPE_I32, 1, shape, str);
	pto_tensor_set(&p.t[PTO_ARG_OUT], dst, PTO_DTYPE_I32, 1, shape, str);
	return pto_run1(l, &l->core[0], &p);
}

/* Payloads naming the owner's GM: refused (EADDR), nothing moved. */
static int iso_probe_payloads(struct iso_ctx *c)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0 };
	uint32_t n = ISO_BO_SIZE / 4;
	struct pto_bo_alloc own;
	struct core_launch *l;
	int bad = 0, r[3];

	st_cluster_cores(1, cores);
	if (st_bo_alloc(c->fd, ISO_BO_SIZE, &own))
		return ISO_FAIL(1, "BO_ALLOC");
	if (core_cluster_acquire(c->d, 2) || core_launch_cores(c->d, cores, &l))
		return ISO_FAIL(1, "acquire and launch of cluster 1");
	r[0] = iso_copy(l, iso->dev_addr, own.dev_addr, n);	/* read */
	r[1] = iso_copy(l, own.dev_addr, iso->dev_addr, n);	/* write */
	/* A straddle: starts in the intruder's buffer, ends past it. */
	r[2] = iso_copy(l, own.dev_addr + ISO_BO_SIZE / 2, own.dev_addr, n);
	if (r[0] != PTO_TASK_EADDR || r[1] != PTO_TASK_EADDR ||
	    r[2] != PTO_TASK_EADDR)
		bad = ISO_FAIL(1, "COPY across files: status %d %d %d", r[0],
			       r[1], r[2]);
	if (core_cluster_release(c->d, 2) && !bad)
		bad = ISO_FAIL(1, "release of cluster 1");
	core_launch_free(l);
	return bad;
}

/* ---- graphs: one task, uploaded at the start of a buffer ---- */

static uint64_t iso_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct pto_tensor_desc iso_vec(uint64_t addr, uint32_t n)
{
	struct pto_tensor_desc t = { .addr = addr, .dtype = PTO_DTYPE_I32,
				     .rank = 1 };

	t.shape[0] = n;
	t.strides[0] = 1;
	return t;
}

/* Task @t on the AIV0 of one cluster: @func over @src (0: none) to @dst. */
static void iso_task(struct pto_graph_task *t, uint32_t func, uint64_t src,
		     uint64_t dst, uint64_t scalar)
{
	memset(t, 0, sizeof(*t));
	t->active_mask = PTO_GRAPH_AIV0;
	t->func_id[1] = func;
	t->scalar[0] = scalar;
	if (src) {
		t->t[PTO_ARG_A].t = iso_vec(src, 64);
		t->t[PTO_ARG_A].role = PTO_GRAPH_ROLE_IN;
	}
	if (dst) {
		t->t[PTO_ARG_OUT].t = iso_vec(dst, 64);
		t->t[PTO_ARG_OUT].role = PTO_GRAPH_ROLE_OUT;
	}
}

/* Upload @t as a graph at @map (device @addr) and launch it: 0 or -errno. */
static int iso_graph(int fd, void *map, uint64_t addr, uint64_t clusters,
		     const struct pto_graph_task *t, struct pto_graph_launch *l)
{
	struct pto_graph_hdr h = {
		.magic = PTO_GRAPH_MAGIC, .version = PTO_GRAPH_VERSION,
		.task_count = 1, .task_size = sizeof(*t),
		.size = (sizeof(h) + sizeof(*t) + 7) & ~7ull,
	};
	uint64_t t0 = iso_now();
	int ret;

	memcpy(map, &h, sizeof(h));
	memcpy((char *)map + sizeof(h), t, sizeof(*t));
	/* -EBUSY while a core just launched is not READY yet. */
	do {
		memset(l, 0, sizeof(*l));
		l->graph_addr = addr;
		l->graph_size = h.size;
		l->clusters = clusters;
		ret = pto_sioctl(fd, PTO_IOCTL_GRAPH_LAUNCH, l);
	} while (ret == -EBUSY && iso_now() - t0 < 2000000000ull &&
		 !usleep(1000));
	return ret;
}

/* Wait for graph @handle until 10 s from now: 0 once it ended cleanly. */
static int iso_graph_wait(int fd, uint32_t handle)
{
	struct pto_graph_wait w = { .handle = handle };

	w.timeout_ns = iso_now() + 10000000000ull;
	if (pto_sioctl(fd, PTO_IOCTL_GRAPH_WAIT, &w))
		return -1;
	return w.completed == 1 && w.err_task == PTO_GRAPH_TASK_NONE ? 0 : -1;
}

/*
 * Graphs naming the owner's GM, as tensors or as the graph itself, are
 * refused before any core runs; the owner's cluster is not the
 * intruder's to run a graph on, and the owner's graph handle means
 * nothing in the intruder's file.
 */
static int iso_probe_graphs(struct iso_ctx *c)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0 };
	struct pto_graph_wait w = { .handle = iso->graph };
	struct pto_graph_launch l;
	struct pto_graph_task t;
	struct pto_bo_alloc own;
	struct core_launch *cl;
	void *m;
	int bad = 0, r[4];

	st_cluster_cores(1, cores);
	if (st_bo_alloc(c->fd, ISO_BO_SIZE, &own))
		return ISO_FAIL(1, "BO_ALLOC");
	m = mmap(NULL, ISO_BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
		 own.mmap_offset);
	if (m == MAP_FAILED)
		return ISO_FAIL(1, "mmap");
	if (core_cluster_acquire(c->d, 2) || core_launch_cores(c->d, cores, &cl))
		return ISO_FAIL(1, "acquire and launch of cluster 1");
	iso_task(&t, PTO_FUNC_COPY, iso->dev_addr, own.dev_addr + 8192, 0);
	r[0] = iso_graph(c->fd, m, own.dev_addr, 2, &t, &l);	/* read */
	if (r[0] != -EINVAL || l.bad_field != PTO_GRAPH_FIELD_TENSOR_ADDR)
		bad = ISO_FAIL(1, "graph reading the owner's GM: %d field %u",
			       r[0], l.bad_field);
	iso_task(&t, PTO_FUNC_FILL, 0, iso->dev_addr, 7);
	r[1] = iso_graph(c->fd, m, own.dev_addr, 2, &t, &l);	/* write */
	if (!bad && (r[1] != -EINVAL ||
		     l.bad_field != PTO_GRAPH_FIELD_TENSOR_ADDR))
		bad = ISO_FAIL(1, "graph writing the owner's GM: %d field %u",
			       r[1], l.bad_field);
	/* The graph itself in the owner's buffer (its bytes are 0xa5). */
	iso_task(&t, PTO_FUNC_FILL, 0, own.dev_addr + 8192, 7);
	r[2] = iso_graph(c->fd, m, iso->dev_addr, 2, &t, &l);
	if (!bad && (r[2] != -EINVAL || l.bad_field != PTO_GRAPH_FIELD_ADDR))
		bad = ISO_FAIL(1, "graph at the owner's GM: %d field %u", r[2],
			       l.bad_field);
	/* A valid graph of its own, on the owner's cluster. */
	r[3] = iso_graph(c->fd, m, own.dev_addr, 1, &t, &l);
	if (!bad && r[3] != -EPERM)
		bad = ISO_FAIL(1, "graph on the owner's cluster: %d", r[3]);
	w.timeout_ns = iso_now() + 100000000ull;
	if (!bad && pto_sioctl(c->fd, PTO_IOCTL_GRAPH_WAIT, &w) != -ENOENT)
		bad = ISO_FAIL(1, "GRAPH_WAIT of the owner's graph");
	/* Its own graph runs. */
	if (!bad && (iso_graph(c->fd, m, own.dev_addr, 2, &t, &l) ||
		     iso_graph_wait(c->fd, l.handle) ||
		     !iso_all((uint8_t *)m + 8192, 1, 7)))
		bad = ISO_FAIL(1, "its own graph on cluster 1");
	if (core_cluster_release(c->d, 2) && !bad)
		bad = ISO_FAIL(1, "release of cluster 1");
	core_launch_free(cl);
	munmap(m, ISO_BO_SIZE);
	return bad;
}

/* The owner's lane 0 is not the intruder's to bind, feed or end. */
static int iso_probe_lanes(struct iso_ctx *c)
{
	struct pto_dump_bind b = { .lane = 0 };
	struct pto_dump_capture cap = { .lane = 0, .kind = PTO_DUMP_KIND_SCALAR,
					.dtype = PTO_DTYPE_I32, .value = 1 };
	struct pto_dump_lane dl = { .lane = 0 };

	if (pto_sioctl(c->fd, PTO_IOCTL_DUMP_BIND, &b) != -EBUSY ||
	    pto_sioctl(c->fd, PTO_IOCTL_DUMP_CAPTURE, &cap) != -EPERM ||
	    pto_sioctl(c->fd, PTO_IOCTL_DUMP_CLOSE, &dl) != -EPERM ||
	    pto_sioctl(c->fd, PTO_IOCTL_DUMP_UNBIND, &dl) != -EPERM)
		return ISO_FAIL(1, "the owner's lane 0 answered the intruder");
	return 0;
}

/*
 * Extension point: each resource kind the driver adds that one file can
 * name in another's (captures, graph launches, ...) adds its probe here.
 */
static int (*const iso_probes[])(struct iso_ctx *c) = {
	iso_probe_handles,
	iso_probe_mmap,
	iso_probe_cores,
	iso_probe_payloads,
	iso_probe_graphs,
	iso_probe_lanes,
};

static sigjmp_buf iso_jmp;

static void iso_sigbus(int sig)
{
	siglongjmp(iso_jmp, 1);
}

/* Does reading @p raise SIGBUS? */
static int iso_faults(volatile uint32_t *p)
{
	struct sigaction sa = { .sa_handler = iso_sigbus }, old;
	int faulted = 1;

	sigaction(SIGBUS, &sa, &old);
	if (!sigsetjmp(iso_jmp, 1)) {
		(void)*p;
		faulted = 0;
	}
	sigaction(SIGBUS, &old, NULL);
	return faulted;
}

/*
 * A window mapped while the intruder owned cluster 1 is dead once it
 * released it (SIGBUS), whoever owns the cluster next.
 */
static int iso_stale_window(struct iso_ctx *c)
{
	volatile uint32_t *w;

	if (core_cluster_acquire(c->d, 2))
		return ISO_FAIL(1, "acquire of cluster 1");
	w = mmap(NULL, 4096, PROT_READ, MAP_SHARED, c->fd,
		 PTO_WINDOW_MMAP_OFFSET(3));
	if (w == MAP_FAILED)
		return ISO_FAIL(1, "mmap of its own window");
	(void)*w;
	if (core_cluster_release(c->d, 2))
		return ISO_FAIL(1, "release of cluster 1");
	if (!iso_faults(w))
		return ISO_FAIL(1, "a released window still maps");
	munmap((void *)w, 4096);
	return 0;
}

/* A graph hanging on cluster 2 and lane 1 bound, both left to the exit. */
static int iso_hang_and_leave(struct iso_ctx *c)
{
	struct pto_dump_bind b = { .lane = 1, .level = PTO_DUMP_FULL };
	struct pto_graph_wait w = { 0 };
	struct pto_graph_launch l;
	struct pto_graph_task t;
	struct pto_bo_alloc g;
	void *m;
	int r;

	if (st_bo_alloc(c->fd, 4096, &g))
		return ISO_FAIL(1, "BO_ALLOC");
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
		 g.mmap_offset);
	if (m == MAP_FAILED)
		return ISO_FAIL(1, "mmap");
	iso_task(&t, PTO_FUNC_HANG, 0, 0, 2000000000ull);	/* max_spin_ms */
	r = iso_graph(c->fd, m, g.dev_addr, 4, &t, &l);
	if (r)
		return ISO_FAIL(1, "hanging graph on cluster 2: %d field %u", r,
				l.bad_field);
	w.handle = l.handle;
	if (pto_sioctl(c->fd, PTO_IOCTL_GRAPH_WAIT, &w) != -ETIMEDOUT)
		return ISO_FAIL(1, "the hanging graph ended");
	/*
	 * A second file binds it: a file with a graph running gets no
	 * capture (the resident route has none). Both close at the exit.
	 */
	if (iso->nlanes > 1 &&
	    pto_sioctl(open(PTO_DEV0, O_RDWR), PTO_IOCTL_DUMP_BIND, &b))
		return ISO_FAIL(1, "bind of lane 1");
	return 0;
}

static int intruder(void)
{
	uint64_t cores2[PTO_CORE_MASK_WORDS] = { 0 };
	struct pto_bo_alloc stale;
	struct pto_bo_free bf;
	struct core_launch *l;
	struct iso_ctx c;
	volatile uint8_t *m;
	unsigned int i;

	if (iso_become(ISO_INTRUDER_UID))
		return ISO_FAIL(1, "setuid");
	if (pto_dev_open(0, &c.d))
		return ISO_FAIL(1, "open as uid %d: %s", ISO_INTRUDER_UID,
				strerror(errno));
	c.fd = pto_dev_fd(c.d);
	if (!iso_wait(ISO_OWNER_READY))
		return ISO_FAIL(1, "the owner never got ready");
	for (i = 0; i < ARRAY_SIZE(iso_probes); i++)
		if (iso_probes[i](&c))
			return 1;
	if (iso_stale_window(&c))
		return 1;
	/* A freed buffer still mapped: its GM stays its own until unmap. */
	if (st_bo_alloc(c.fd, ISO_BO_SIZE, &stale))
		return ISO_FAIL(1, "BO_ALLOC");
	m = mmap(NULL, ISO_BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd,
		 stale.mmap_offset);
	bf = (struct pto_bo_free){ .handle = stale.handle };
	if (m == MAP_FAILED || pto_sioctl(c.fd, PTO_IOCTL_BO_FREE, &bf))
		return ISO_FAIL(1, "map and free");
	memset((void *)m, ISO_STALE, ISO_BO_SIZE);
	iso->stale_addr = stale.dev_addr;
	iso_set(ISO_PROBED);
	if (!iso_wait(ISO_REALLOCATED))
		return ISO_FAIL(1, "the owner never reallocated");
	memset((void *)m, ISO_STALE, ISO_BO_SIZE);
	/* Cluster 2 launched and left to the close at exit. */
	st_cluster_cores(2, cores2);
	if (core_cluster_acquire(c.d, 4) || core_launch_cores(c.d, cores2, &l))
		return ISO_FAIL(1, "acquire and launch of cluster 2");
	if (iso_hang_and_leave(&c))
		return 1;
	iso_set(ISO_INTRUDER_GONE);
	/* Exit closes the file: cluster 2 is released, its graph killed. */
	return 0;
}

/* ---- the owner ---- */

static int iso_bo_is(int fd, uint32_t handle, uint64_t dev_addr)
{
	struct pto_bo_info bi = { .handle = handle };

	return !pto_sioctl(fd, PTO_IOCTL_BO_INFO, &bi) &&
	       bi.dev_addr == dev_addr && bi.size == ISO_BO_SIZE;
}

/* The owner's second file, which binds lane 0, and a buffer of it. */
static int owner_lane_fd = -1;
static struct pto_bo_alloc owner_lane_bo;

/*
 * Lane 0 bound (by a second file: a file with a graph running gets no
 * capture), and a graph spinning on cluster 0 (in a buffer of its own:
 * the cores write its tasks' Out fields): the intruder's probes see both.
 */
static int owner_graph_and_lane(struct pto_dev *d)
{
	struct pto_dump_bind b = { .lane = 0, .level = PTO_DUMP_FULL };
	struct pto_graph_launch l;
	struct pto_graph_task t;
	struct pto_bo_alloc g;
	void *m;

	owner_lane_fd = open(PTO_DEV0, O_RDWR);
	if (owner_lane_fd < 0 ||
	    st_bo_alloc(owner_lane_fd, 4096, &owner_lane_bo) ||
	    pto_sioctl(owner_lane_fd, PTO_IOCTL_DUMP_BIND, &b))
		return ISO_FAIL(0, "bind of lane 0");
	if (st_bo_alloc(pto_dev_fd(d), 4096, &g))
		return ISO_FAIL(0, "BO_ALLOC");
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		 pto_dev_fd(d), g.mmap_offset);
	if (m == MAP_FAILED)
		return ISO_FAIL(0, "mmap");
	iso_task(&t, PTO_FUNC_SPIN_NS, 0, 0, 200000000);
	if (iso_graph(pto_dev_fd(d), m, g.dev_addr, 1, &t, &l))
		return ISO_FAIL(0, "graph on cluster 0");
	iso->graph = l.handle;
	return 0;
}

/*
 * After the intruder's exit killed its graph: the owner's graph ended
 * untouched, its lane 0 still collects, lane 1 and cluster 2 are the
 * owner's to take and run a graph on.
 */
static int owner_after(struct pto_dev *d, uint32_t handle,
		       volatile uint8_t *y, uint64_t y_addr)
{
	struct pto_dump_capture cap = { .lane = 0,
					.handle = owner_lane_bo.handle,
					.dtype = PTO_DTYPE_I32, .rank = 1,
					.shape = { 16 }, .strides = { 1 } };
	struct pto_dump_bind b = { .lane = 1 };
	struct pto_dump_lane dl = { .lane = 0 };
	struct pto_graph_launch l;
	struct pto_graph_task t;
	int fd = pto_dev_fd(d);

	if (iso_graph_wait(fd, iso->graph))
		return ISO_FAIL(0, "the owner's graph did not end cleanly");
	cap.timeout_ns = iso_now() + 1000000000ull;
	if (pto_sioctl(owner_lane_fd, PTO_IOCTL_DUMP_CAPTURE, &cap) ||
	    cap.result != PTO_DUMP_RES_COLLECTED)
		return ISO_FAIL(0, "capture on lane 0: result %u", cap.result);
	if (pto_sioctl(owner_lane_fd, PTO_IOCTL_DUMP_CLOSE, &dl) ||
	    pto_sioctl(owner_lane_fd, PTO_IOCTL_DUMP_UNBIND, &dl))
		return ISO_FAIL(0, "close of lane 0");
	if (iso->nlanes > 1) {
		dl.lane = 1;
		if (pto_sioctl(fd, PTO_IOCTL_DUMP_BIND, &b) ||
		    pto_sioctl(fd, PTO_IOCTL_DUMP_UNBIND, &dl))
			return ISO_FAIL(0, "lane 1 not taken over");
	}
	/* Cluster 2 is acquired and launched by the caller. */
	iso_task(&t, PTO_FUNC_FILL, 0, y_addr, 7);
	if (iso_graph(fd, (void *)(y + 8192), y_addr + 8192, 4, &t, &l) ||
	    iso_graph_wait(fd, l.handle) || !iso_all(y, 1, 7))
		return ISO_FAIL(0, "a graph on cluster 2 after the intruder");
	return 0;
}

static int owner_checks(struct pto_dev *d, volatile uint8_t *m)
{
	uint64_t cores2[PTO_CORE_MASK_WORDS] = { 0 };
	struct pto_bo_alloc again;
	struct core_launch *l;
	volatile uint8_t *y;
	int bad = 0;

	if (!iso_wait(ISO_PROBED))
		return ISO_FAIL(0, "the intruder never probed");
	if (st_bo_alloc(pto_dev_fd(d), ISO_BO_SIZE, &again))
		return ISO_FAIL(0, "BO_ALLOC after the free");
	if (again.dev_addr < iso->stale_addr + ISO_BO_SIZE &&
	    iso->stale_addr < again.dev_addr + ISO_BO_SIZE)
		return ISO_FAIL(0, "got the GM of a freed, still mapped buffer");
	y = mmap(NULL, ISO_BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 pto_dev_fd(d), again.mmap_offset);
	if (y == MAP_FAILED || !iso_all(y, ISO_BO_SIZE, 0))
		return ISO_FAIL(0, "a new buffer not zeroed");
	iso_set(ISO_REALLOCATED);
	if (!iso_wait(ISO_REAPED))
		return ISO_FAIL(0, "the intruder never ended");
	if (!iso_all(y, ISO_BO_SIZE, 0))
		bad = ISO_FAIL(0, "the intruder's stale mapping wrote here");
	if (!iso_all(m, ISO_BO_SIZE, ISO_SECRET))
		bad = ISO_FAIL(0, "the owner's buffer changed");
	if (!bad && !iso_bo_is(pto_dev_fd(d), iso->handle, iso->dev_addr))
		bad = ISO_FAIL(0, "the owner's handle lost its buffer");
	/* The cluster the intruder left at its exit works for the owner. */
	st_cluster_cores(2, cores2);
	if (core_cluster_acquire(d, 4) || core_launch_cores(d, cores2, &l))
		return ISO_FAIL(0, "cluster 2 unusable after the intruder");
	if (pto_noop_all(l))
		bad = ISO_FAIL(0, "cluster 2 does not run");
	if (!bad)
		bad = owner_after(d, iso->handle, y, again.dev_addr);
	core_cluster_release(d, 4);
	core_launch_free(l);
	munmap((void *)y, ISO_BO_SIZE);
	return bad;
}

static int owner(void)
{
	uint64_t cores[PTO_CORE_MASK_WORDS] = { 0x7 };
	struct pto_bo_alloc a;
	struct core_launch *l;
	struct pto_dev *d;
	volatile uint8_t *m;
	int bad;

	if (iso_become(ISO_OWNER_UID))
		return ISO_FAIL(0, "setuid");
	if (pto_dev_open(0, &d))
		return ISO_FAIL(0, "open as uid %d: %s", ISO_OWNER_UID,
				strerror(errno));
	if (st_bo_alloc(pto_dev_fd(d), ISO_BO_SIZE, &a))
		return ISO_FAIL(0, "BO_ALLOC");
	m = mmap(NULL, ISO_BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 pto_dev_fd(d), a.mmap_offset);
	if (m == MAP_FAILED)
		return ISO_FAIL(0, "mmap");
	memset((void *)m, ISO_SECRET, ISO_BO_SIZE);
	if (core_cluster_acquire(d, 1) || core_launch_cores(d, cores, &l))
		return ISO_FAIL(0, "acquire and launch of cluster 0");
	if (owner_graph_and_lane(d))
		return 1;
	iso->handle = a.handle;
	iso->dev_addr = a.dev_addr;
	iso->mmap_offset = a.mmap_offset;
	iso_set(ISO_OWNER_READY);
	bad = owner_checks(d, m);
	/* The owner's own cores still run after the intruder's probes. */
	if (pto_noop_all(l) && !bad)
		bad = ISO_FAIL(0, "the owner's cores stopped running");
	core_cluster_release(d, 1);
	core_launch_free(l);
	pto_dev_close(d);
	return bad;
}

static pid_t iso_spawn(int (*fn)(void))
{
	pid_t pid = fork();

	if (!pid)
		_exit(fn());
	return pid;
}

/*
 * The shared phase map, and the node put in a group both users are in,
 * as a udev rule would; @st keeps the node's owner and mode for
 * iso_node_restore(). 0, or -1 with errno.
 */
static int iso_node_share(struct stat *st)
{
	if (stat(PTO_DEV0, st))
		return -1;
	iso = mmap(NULL, sizeof(*iso), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (iso == MAP_FAILED)
		return -1;
	if (chown(PTO_DEV0, 0, ISO_GID) || chmod(PTO_DEV0, 0660))
		return -1;
	return 0;
}

static void iso_node_restore(const struct stat *st)
{
	if (chown(PTO_DEV0, st->st_uid, st->st_gid) ||
	    chmod(PTO_DEV0, st->st_mode & 07777))
		perror("isolation_test: restoring " PTO_DEV0);
}

static uint32_t iso_lanes(void)
{
	struct pto_dump_reset rs = { 0 };
	struct pto_info info = { 0 };
	int fd = open(PTO_DEV0, O_RDWR);

	if (fd < 0)
		return 0;
	pto_sioctl(fd, PTO_IOCTL_GET_INFO, &info);
	pto_sioctl(fd, PTO_IOCTL_DUMP_RESET, &rs);	/* lanes others left */
	close(fd);
	return info.lanes;
}

TEST(two_users_isolated)
{
	char clusters[16] = "";
	struct stat st;
	pid_t po, pi;
	int so = -1, si = -1;

	if (geteuid())
		SKIP(return, "needs root to set up the users");
	/* Clusters 0 and 2 the owner's, 1 the intruder's, 2 after it too. */
	st_read_line("/sys/module/pto/parameters/clusters", clusters,
		     sizeof(clusters));
	if (atoi(clusters) < 3)
		SKIP(return, "needs three clusters (one boots with clusters=1)");
	ASSERT_EQ(0, iso_node_share(&st));
	iso->nlanes = iso_lanes();
	po = iso_spawn(owner);
	pi = iso_spawn(intruder);
	ASSERT_LT(0, po);
	ASSERT_LT(0, pi);
	EXPECT_EQ(pi, waitpid(pi, &si, 0));
	iso_set(ISO_REAPED);
	EXPECT_EQ(po, waitpid(po, &so, 0));
	iso_node_restore(&st);
	EXPECT_TRUE(WIFEXITED(si) && !WEXITSTATUS(si))
		TH_LOG("intruder: %s", iso->why[1]);
	EXPECT_TRUE(WIFEXITED(so) && !WEXITSTATUS(so))
		TH_LOG("owner: %s", iso->why[0]);
}

/* ---- dump lanes left unclosed ---- */

static int iso_lane_status(int fd, uint32_t lane, struct pto_dump_status *s)
{
	memset(s, 0, sizeof(*s));
	s->lane = lane;
	return pto_sioctl(fd, PTO_IOCTL_DUMP_STATUS, s);
}

/*
 * As @uid: bind every one of @lanes lanes (an all-zero bind, level OFF),
 * then, if @tidy, close and unbind each; otherwise leave them to the exit.
 * Exits 0, or nonzero with iso->why[who] set.
 */
static int iso_bind_lanes(int who, uid_t uid, uint32_t lanes, int tidy)
{
	struct pto_dump_status s;
	struct pto_dump_bind b;
	struct pto_dump_lane l;
	uint32_t i;
	int fd, ret;

	if (iso_become(uid))
		return ISO_FAIL(who, "setuid");
	fd = open(PTO_DEV0, O_RDWR);
	if (fd < 0)
		return ISO_FAIL(who, "open as uid %d: %s", uid, strerror(errno));
	for (i = 0; i < lanes; i++) {
		memset(&b, 0, sizeof(b));
		b.lane = i;
		ret = pto_sioctl(fd, PTO_IOCTL_DUMP_BIND, &b);
		if (ret)
			return ISO_FAIL(who, "uid %d: bind of lane %u: %d", uid,
					i, ret);
		if (iso_lane_status(fd, i, &s) || s.state != PTO_LANE_BOUND ||
		    s.owner != (uint32_t)getpid() || s.acct.total)
			return ISO_FAIL(who, "uid %d: lane %u not fresh", uid, i);
	}
	for (i = 0; tidy && i < lanes; i++) {
		memset(&l, 0, sizeof(l));
		l.lane = i;
		if (pto_sioctl(fd, PTO_IOCTL_DUMP_CLOSE, &l) ||
		    pto_sioctl(fd, PTO_IOCTL_DUMP_UNBIND, &l))
			return ISO_FAIL(who, "uid %d: close of lane %u", uid, i);
	}
	return 0;	/* exit releases the file, lanes unclosed unless @tidy */
}

static uint32_t iso_nlanes;

static int iso_lanes_owner(void)
{
	return iso_bind_lanes(0, ISO_OWNER_UID, iso_nlanes, 0);
}

static int iso_lanes_next(void)
{
	return iso_bind_lanes(1, ISO_INTRUDER_UID, iso_nlanes, 1);
}

/*
 * One user binds every lane and exits without closing any: each lane
 * waits quarantined (terminal never closed) with nothing producing, and
 * another user's bind takes each over; no reset is needed.
 */
TEST(lanes_left_unclosed_go_to_the_next_user)
{
	struct pto_dump_reset rs = { 0 };
	struct pto_info info = { 0 };
	struct pto_dump_status s;
	struct stat st;
	int fd, so = -1, si = -1;
	uint32_t i;
	pid_t p;

	if (geteuid())
		SKIP(return, "needs root to set up the users");
	fd = open(PTO_DEV0, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_GET_INFO, &info));
	ASSERT_LE(1, info.lanes);
	iso_nlanes = info.lanes;
	ASSERT_EQ(0, pto_sioctl(fd, PTO_IOCTL_DUMP_RESET, &rs));
	ASSERT_EQ(0, iso_node_share(&st));

	p = iso_spawn(iso_lanes_owner);
	ASSERT_LT(0, p);
	EXPECT_EQ(p, waitpid(p, &so, 0));
	EXPECT_TRUE(WIFEXITED(so) && !WEXITSTATUS(so))
		TH_LOG("first user: %s", iso->why[0]);
	for (i = 0; i < info.lanes; i++) {
		ASSERT_EQ(0, iso_lane_status(fd, i, &s));
		EXPECT_EQ(PTO_LANE_QUARANTINED, s.state);
		EXPECT_EQ(PTO_LANE_Q_UNCLOSED, s.quarantine);
		EXPECT_EQ((uint32_t)p, s.owner);
	}
	p = iso_spawn(iso_lanes_next);
	ASSERT_LT(0, p);
	EXPECT_EQ(p, waitpid(p, &si, 0));
	EXPECT_TRUE(WIFEXITED(si) && !WEXITSTATUS(si))
		TH_LOG("next user: %s", iso->why[1]);
	for (i = 0; i < info.lanes; i++) {
		ASSERT_EQ(0, iso_lane_status(fd, i, &s));
		EXPECT_EQ(PTO_LANE_FREE, s.state);
	}
	iso_node_restore(&st);
	memset(&rs, 0, sizeof(rs));
	pto_sioctl(fd, PTO_IOCTL_DUMP_RESET, &rs);
	close(fd);
}

TEST_HARNESS_MAIN
