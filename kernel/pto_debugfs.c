// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - debugfs: /sys/kernel/debug/pto/ptoN/. Not a stable ABI; errors are
 * ignored (the driver works without debugfs). See Documentation/debugfs.md.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/pid.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include "pto_capture_core.h"
#include "pto_core.h"
#include "pto_bo.h"
#include "pto_debugfs.h"
#include "pto_graph_capture.h"
#include "pto_lane.h"
#include "pto_reset.h"
#include "pto_retire.h"

static struct dentry *pto_debugfs_root;

static int info_show(struct seq_file *m, void *unused)
{
	struct pto_device *pdev = m->private;

	seq_printf(m, "device:   %u\n", pdev->index);
	seq_printf(m, "clusters: %u\n", pdev->clusters);
	seq_printf(m, "cores:    %u (%u AIC, %u AIV)\n", pdev->cores,
		   pdev->clusters, pdev->clusters * 2);
	seq_printf(m, "lanes:    %u\n", pdev->lanes);
	seq_printf(m, "gm_size:  %llu\n", pdev->gm.size);
	seq_printf(m, "gm_free:  %llu\n", pto_gm_avail(&pdev->gm));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(info);

static int bos_show(struct seq_file *m, void *unused)
{
	struct pto_device *pdev = m->private;
	struct pto_bo *bo;

	seq_puts(m, "owner    handle  dev_addr            size                refs\n");
	spin_lock(&pdev->bos_lock);
	list_for_each_entry(bo, &pdev->bos, node)
		seq_printf(m, "%-8d %-7u 0x%016llx  %-18llu  %u\n", bo->owner,
			   bo->handle, bo->dev_addr, bo->size,
			   kref_read(&bo->ref));
	spin_unlock(&pdev->bos_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bos);

static int lanes_show(struct seq_file *m, void *unused)
{
	pto_lanes_debugfs_show(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lanes);

static int capture_show(struct seq_file *m, void *unused)
{
	pto_capture_debugfs_show(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(capture);

static const char *const pto_state_names[] = {
	[PTO_CORE_UNLAUNCHED] = "unlaunched",
	[PTO_CORE_HANDSHAKE] = "handshake",
	[PTO_CORE_READY] = "ready",
	[PTO_CORE_RUNNING] = "running",
	[PTO_CORE_EXITING] = "exiting",
	[PTO_CORE_GATED] = "gated",
	[PTO_CORE_QUARANTINED] = "quarantined",
};

/*
 * The mock faults set on @core (debugfs inject_stall / inject_badid): a
 * stall stays set until a reset or the debugfs reset clears it (armed, or
 * holding back the EXIT of a quarantined core), a bad id until the core's
 * next handshake.
 */
static const char *pto_inject_name(struct pto_core *core)
{
	bool stall = test_bit(PTO_CORE_F_STALL, &core->flags);
	bool badid = test_bit(PTO_CORE_F_BADID, &core->flags);

	if (stall && badid)
		return "stall,badid";
	return stall ? "stall" : badid ? "badid" : "-";
}

/* Racy snapshot by design: counters and registers change under it. */
static int cores_show(struct seq_file *m, void *unused)
{
	struct pto_device *pdev = m->private;
	unsigned int i;

	seq_puts(m, "core type state       owner  parked tasks      errors     parks      doorbells  wakeups    last_cond  inject\n");
	/* win_lock, not core_lock: never waits behind a launch or release. */
	down_read(&pdev->win_lock);
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];
		struct pto_file *pf =
			pdev->cluster_owner[i / PTO_CORES_PER_CLUSTER];
		int st = READ_ONCE(core->state);

		if (test_bit(PTO_CORE_F_QUARANTINE, &core->flags))
			st = PTO_CORE_QUARANTINED;
		seq_printf(m, "%-4u %-4s %-11s %-6d %-6u %-10lld %-10lld %-10lld %-10lld %-10lld 0x%08x %s\n",
			   i, core->type == PTO_CORE_AIC ? "AIC" : "AIV",
			   pto_state_names[st], pf ? pid_nr(pf->tgid) : 0,
			   pto_ureg_read(core, PTO_REG_PARKED),
			   atomic64_read(&core->tasks),
			   atomic64_read(&core->errors),
			   atomic64_read(&core->parks),
			   atomic64_read(&core->doorbells),
			   atomic64_read(&core->wakeups),
			   READ_ONCE(core->last_cond), pto_inject_name(core));
	}
	up_read(&pdev->win_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(cores);

static int windows_show(struct seq_file *m, void *unused)
{
	struct pto_device *pdev = m->private;
	unsigned int i;

	seq_puts(m, "core fast_path(0x18) ctrl(0x20) data_main_base(0xa0) cond(0x4c8) parked(0x500) wake_req(0x504)\n");
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];

		seq_printf(m, "%-4u 0x%-15x 0x%-8x 0x%08x           0x%08x  %-13u %u\n",
			   i, pto_kreg_read(core, PTO_KREG_FAST_PATH_ENABLE),
			   pto_kreg_read(core, PTO_KREG_CTRL),
			   pto_ureg_read(core, PTO_REG_DATA_MAIN_BASE),
			   pto_ureg_read(core, PTO_REG_COND),
			   pto_ureg_read(core, PTO_REG_PARKED),
			   pto_ureg_read(core, PTO_REG_WAKE_REQ));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(windows);

static int handshake_show(struct seq_file *m, void *unused)
{
	struct pto_device *pdev = m->private;
	unsigned int i;

	seq_puts(m, "line phys_id type done gen        payload[0]         payload[1]\n");
	for (i = 0; i < pdev->cores; i++) {
		struct pto_worker_line *w = &pdev->workers[i];

		seq_printf(m, "%-4u %-7u %-4u %-4u %-10u 0x%016llx 0x%016llx\n",
			   i, READ_ONCE(w->phys_id), READ_ONCE(w->core_type),
			   READ_ONCE(w->done), READ_ONCE(w->gen),
			   READ_ONCE(w->payload[0]), READ_ONCE(w->payload[1]));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(handshake);

static int gates_show(struct seq_file *m, void *unused)
{
	struct pto_device *pdev = m->private;
	unsigned int i;

	seq_puts(m, "core gate\n");
	for (i = 0; i < pdev->cores; i++)
		seq_printf(m, "%-4u %s\n", i,
			   READ_ONCE(pdev->gates[i].gate) == PTO_GATE_RELEASE ?
			   "released" : "armed");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gates);

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
/*
 * Longest write of a core number: room for any u32 spelling (0x, leading
 * zeros, a newline). kstrtouint_from_user() parses only the first 34
 * bytes of a longer write and ignores the rest, so without this bound a
 * number followed by anything beyond them would be taken.
 */
#define PTO_INJECT_WRITE_MAX 32

/* "N" from user space: apply the mock fault @inject to core N. */
static ssize_t inject_core_write(struct file *file, const char __user *buf,
				 size_t len,
				 int (*inject)(struct pto_device *pdev,
					       unsigned int core))
{
	unsigned int core;
	int ret;

	if (len > PTO_INJECT_WRITE_MAX)
		return -EINVAL;
	ret = kstrtouint_from_user(buf, len, 0, &core);
	if (ret)
		return ret;
	ret = inject(file->private_data, core);
	return ret ? ret : len;
}

/* Write-only (0200): "N" makes core N ignore its next EXIT (mock fault). */
static ssize_t inject_stall_write(struct file *file, const char __user *buf,
				  size_t len, loff_t *ppos)
{
	return inject_core_write(file, buf, len, pto_core_inject_stall);
}

/* Write-only (0200): "N": core N reports a bad id at its next handshake. */
static ssize_t inject_badid_write(struct file *file, const char __user *buf,
				  size_t len, loff_t *ppos)
{
	return inject_core_write(file, buf, len, pto_core_inject_badid);
}

static const struct file_operations inject_badid_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = inject_badid_write,
	.llseek = noop_llseek,
};

/*
 * Write-only (0200): "STEP MS": the next core of any graph's args
 * capture to reach STEP (claimed, arrive_before, arrive_after,
 * release_after) sleeps MS ms there, once; "none 0" clears it.
 */
static ssize_t cap_stall_write(struct file *file, const char __user *buf,
			       size_t len, loff_t *ppos)
{
	static const char *const steps[PTO_CAPF_COUNT] = {
		"none", "claimed", "arrive_before", "arrive_after",
		"release_after",
	};
	struct pto_device *pdev = file->private_data;
	char kbuf[PTO_INJECT_WRITE_MAX + 1], name[16];
	unsigned int ms, i;

	if (len > PTO_INJECT_WRITE_MAX)
		return -EINVAL;
	if (copy_from_user(kbuf, buf, len))
		return -EFAULT;
	kbuf[len] = 0;
	if (sscanf(kbuf, "%15s %u", name, &ms) != 2 || ms > 60000)
		return -EINVAL;
	for (i = 0; i < PTO_CAPF_COUNT; i++)
		if (!strcmp(name, steps[i]))
			break;
	if (i == PTO_CAPF_COUNT)
		return -EINVAL;
	WRITE_ONCE(pdev->cap_faults.stall_ms, ms);
	atomic_set(&pdev->cap_faults.stall_step, i);
	return len;
}

/*
 * Write-only (0200): "N": the capture supervisors' next N answers are
 * computed but never written (0 clears).
 */
static ssize_t cap_ack_drop_write(struct file *file, const char __user *buf,
				  size_t len, loff_t *ppos)
{
	struct pto_device *pdev = file->private_data;
	unsigned int n;
	int ret;

	if (len > PTO_INJECT_WRITE_MAX)
		return -EINVAL;
	ret = kstrtouint_from_user(buf, len, 0, &n);
	if (ret)
		return ret;
	if (n > INT_MAX)
		return -EINVAL;
	atomic_set(&pdev->cap_faults.drop_acks, n);
	return len;
}

static const struct file_operations cap_stall_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = cap_stall_write,
	.llseek = noop_llseek,
};

static const struct file_operations cap_ack_drop_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = cap_ack_drop_write,
	.llseek = noop_llseek,
};

static const struct file_operations inject_stall_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = inject_stall_write,
	.llseek = noop_llseek,
};

#endif

/*
 * Write-only (0200): any write recovers the quarantined cores that now
 * answer, among those whose cluster no file owns, then drops the fault
 * injections not yet fired of those clusters' cores.
 */
static ssize_t reset_write(struct file *file, const char __user *buf,
			   size_t len, loff_t *ppos)
{
	int ret = pto_cores_reset_debugfs(file->private_data);

	return ret < 0 ? ret : len;
}

static const struct file_operations reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = reset_write,
	.llseek = noop_llseek,
};

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
/* Write-only (0200): any write is a fatal device error (mock fault). */
static ssize_t fatal_write(struct file *file, const char __user *buf,
			   size_t len, loff_t *ppos)
{
	pto_device_fatal(file->private_data);
	return len;
}

static const struct file_operations fatal_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = fatal_write,
	.llseek = noop_llseek,
};
#endif

static const char *const pto_reason_names[] = {
	[PTO_RETIRE_BY_NONE] = "-",
	[PTO_RETIRE_BY_IOCTL] = "ioctl",
	[PTO_RETIRE_BY_RELEASE] = "release",
	[PTO_RETIRE_BY_LAUNCH] = "launch",
	[PTO_RETIRE_BY_FATAL] = "fatal",
	[PTO_RETIRE_BY_UNLOAD] = "unload",
	[PTO_RETIRE_BY_RESET] = "reset",
};

/*
 * Per core: the generation, the READY / REQUESTED bits of that generation,
 * the last request's nonce and the core's response, what the last
 * retirement did (closed, released, quarantined), who ran it and how long
 * it took. Racy snapshot of the words, without core_lock (a reset or a
 * launch may hold it for a whole deadline).
 */
static int retirement_show(struct seq_file *m, void *unused)
{
	struct pto_device *pdev = m->private;
	unsigned int i;

	seq_puts(m, "core gen        ready requested nonce      response   closed released quarantined gate     by      core_us    set_us\n");
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];
		int bits = atomic_read(&core->rbits);
		u32 res = READ_ONCE(core->r_result);
		u32 by = READ_ONCE(core->r_reason);

		seq_printf(m, "%-4u %-10u %-5u %-9u 0x%08x 0x%08x %-6u %-8u %-11u %-8s %-7s %-10llu %llu\n",
			   i, READ_ONCE(core->gen), !!(bits & PTO_RB_READY),
			   !!(bits & PTO_RB_REQUESTED),
			   READ_ONCE(core->nonce), READ_ONCE(core->resp),
			   !!(res & PTO_RETIRE_CLOSED),
			   !!(res & PTO_RETIRE_RELEASED),
			   test_bit(PTO_CORE_F_QUARANTINE, &core->flags),
			   READ_ONCE(pdev->gates[i].gate) == PTO_GATE_RELEASE ?
			   "released" : "armed",
			   by < ARRAY_SIZE(pto_reason_names) ?
			   pto_reason_names[by] : "?",
			   READ_ONCE(core->r_core_ns) / NSEC_PER_USEC,
			   READ_ONCE(core->r_set_ns) / NSEC_PER_USEC);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(retirement);

void pto_debugfs_init(void)
{
	pto_debugfs_root = debugfs_create_dir(PTO_NAME, NULL);
	pto_fail_debugfs_init(pto_debugfs_root);
}

void pto_debugfs_fini(void)
{
	debugfs_remove_recursive(pto_debugfs_root);
	pto_debugfs_root = NULL;
}

void pto_debugfs_add_device(struct pto_device *pdev)
{
	char name[16];

	snprintf(name, sizeof(name), PTO_NAME "%u", pdev->index);
	pdev->debugfs = debugfs_create_dir(name, pto_debugfs_root);
	debugfs_create_file("info", 0400, pdev->debugfs, pdev, &info_fops);
	debugfs_create_file("bos", 0400, pdev->debugfs, pdev, &bos_fops);
	debugfs_create_file("lanes", 0400, pdev->debugfs, pdev, &lanes_fops);
	debugfs_create_file("capture", 0400, pdev->debugfs, pdev,
			    &capture_fops);
	debugfs_create_file("cores", 0400, pdev->debugfs, pdev, &cores_fops);
	debugfs_create_file("windows", 0400, pdev->debugfs, pdev,
			    &windows_fops);
	debugfs_create_file("handshake", 0400, pdev->debugfs, pdev,
			    &handshake_fops);
	debugfs_create_file("gates", 0400, pdev->debugfs, pdev, &gates_fops);
	debugfs_create_file("reset", 0200, pdev->debugfs, pdev, &reset_fops);
#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
	debugfs_create_file("inject_stall", 0200, pdev->debugfs, pdev,
			    &inject_stall_fops);
	debugfs_create_file("cap_stall", 0200, pdev->debugfs, pdev,
			    &cap_stall_fops);
	debugfs_create_file("cap_ack_drop", 0200, pdev->debugfs, pdev,
			    &cap_ack_drop_fops);
	debugfs_create_file("inject_badid", 0200, pdev->debugfs, pdev,
			    &inject_badid_fops);
	debugfs_create_file("fatal", 0200, pdev->debugfs, pdev, &fatal_fops);
#endif
	debugfs_create_file("retirement", 0400, pdev->debugfs, pdev,
			    &retirement_fops);
}

void pto_debugfs_remove_device(struct pto_device *pdev)
{
	debugfs_remove_recursive(pdev->debugfs);
	pdev->debugfs = NULL;
}
