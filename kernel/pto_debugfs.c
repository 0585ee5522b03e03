// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - debugfs: /sys/kernel/debug/pto/ptoN/. Not a stable ABI; errors are
 * ignored (the driver works without debugfs). See Documentation/debugfs.rst.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "pto_drv.h"

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

void pto_debugfs_init(void)
{
	pto_debugfs_root = debugfs_create_dir(PTO_NAME, NULL);
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
}

void pto_debugfs_remove_device(struct pto_device *pdev)
{
	debugfs_remove_recursive(pdev->debugfs);
	pdev->debugfs = NULL;
}
