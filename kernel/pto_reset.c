// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - host recovery: the reset ioctl (CAP_SYS_ADMIN) and the debugfs
 * reset take quarantined cores over and run retirement's passes on them
 * again (Documentation/retirement.md).
 */
#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include "pto_core.h"
#include "pto_netlink.h"
#include "pto_reset.h"
#include "pto_retire.h"

/*
 * Recover quarantined cores (the reset ioctl and debugfs), never one whose
 * cluster a file other than @pf owns (@pf NULL: no file may). Retirement's
 * passes run again as recovery: a core that answers now returns, one that
 * does not stays quarantined. @mask NULL: every eligible core. Returns the
 * number recovered, or -EBUSY if @mask names another file's core.
 */
VISIBLE_IF_KUNIT int pto_cores_reset_quarantined(struct pto_device *pdev,
				struct pto_file *pf, const unsigned long *mask,
				unsigned int *remaining)
{
	struct pto_retire_ctx *ctx;
	unsigned int i, n = 0, left = 0;

	ctx = kmalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	pto_retire_init(ctx, pdev, PTO_RR_RESET);
	ctx->recovery = true;
	/*
	 * The ioctl's wait for core_lock (another reset, a release or a
	 * launch may hold it for a whole deadline) ends on a fatal signal;
	 * debugfs (@pf NULL) waits.
	 */
	if (pf) {
		if (mutex_lock_killable(&pdev->core_lock)) {
			kfree(ctx);
			return -EINTR;
		}
	} else {
		mutex_lock(&pdev->core_lock);
	}
	/*
	 * Validate the whole mask before touching any core: a refused reset
	 * (-EBUSY) has no effect at all.
	 */
	for (i = 0; mask && i < pdev->cores; i++) {
		struct pto_file *owner =
			pdev->cluster_owner[i / PTO_CORES_PER_CLUSTER];

		if (test_bit(i, mask) && owner && owner != pf) {
			mutex_unlock(&pdev->core_lock);
			kfree(ctx);
			return -EBUSY;
		}
	}
	for (i = 0; i < pdev->cores; i++) {
		struct pto_core *core = &pdev->core[i];
		struct pto_file *owner =
			pdev->cluster_owner[i / PTO_CORES_PER_CLUSTER];

		if ((mask && !test_bit(i, mask)) || (owner && owner != pf) ||
		    !test_bit(PTO_CORE_F_QUARANTINE, &core->flags))
			continue;
		pto_retire_adopt(ctx, core);
		clear_bit(PTO_CORE_F_STALL, &core->flags);
		wake_up_all(&core->wq);
	}
	/*
	 * A recovered core's window page, which kept what the owner it was
	 * quarantined under left in it (see pto_cluster_clear_windows), is
	 * cleared before the core is unquarantined and can be mapped again
	 * (pto_retire_unquarantine(), pass 4).
	 */
	pto_retire_run(ctx);
	pto_retire_finish(ctx);
	for_each_set_bit(i, ctx->acked, PTO_MAX_CORES) {
		pr_info("pto%u: reset: core %u recovered\n", pdev->index, i);
		n++;
	}
	pto_nl_reset(pdev, ctx->acked, ctx->left);
	left = bitmap_weight(ctx->left, PTO_MAX_CORES);
	mutex_unlock(&pdev->core_lock);
	kfree(ctx);
	if (remaining)
		*remaining = left;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cores_reset_quarantined);

/*
 * The debugfs reset: recover the quarantined cores of clusters no file
 * owns that now answer, then drop those clusters' injections not yet
 * fired (pto_cores_inject_clear). 0 or -errno.
 */
int pto_cores_reset_debugfs(struct pto_device *pdev)
{
	int ret = pto_cores_reset_quarantined(pdev, NULL, NULL, NULL);

	if (ret < 0)
		return ret;
	pto_cores_inject_clear(pdev);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_cores_reset_debugfs);

/* Host recovery, privileged: see pto_cores_reset_quarantined(). */
int pto_ioctl_core_reset(struct pto_file *pf, void *data)
{
	struct pto_core_reset *args = data;
	struct pto_device *pdev = pf->pdev;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	unsigned int remaining = 0;
	bool all = true;
	unsigned int w;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (args->flags & ~PTO_RESET_FLAGS_VALID)
		return -EINVAL;
	for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
		if (args->cores[w])
			all = false;
	if (!all) {
		ret = pto_core_mask(pdev, args->cores, mask);
		if (ret)
			return ret;
	}
	ret = pto_cores_reset_quarantined(pdev, pf, all ? NULL : mask,
					  &remaining);
	if (ret < 0)
		return ret;
	args->recovered = ret;
	args->remaining = remaining;
	return 0;
}
