// SPDX-License-Identifier: GPL-2.0-only
/*
 * pto - module entry: parameters, mock devices, char devices and sysfs.
 */
#include <linux/cdev.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include "pto_drv.h"
#include "pto_core.h"
#include "pto_debugfs.h"
#include "pto_file.h"
#include "pto_lane.h"
#include "pto_netlink.h"
#include "pto_version.h"

static unsigned int devices = 1;
module_param(devices, uint, 0444);
MODULE_PARM_DESC(devices, "number of mock devices (1..8, default 1)");

static unsigned int clusters = 4;
module_param(clusters, uint, 0444);
MODULE_PARM_DESC(clusters,
		 "clusters per device, each 1 AIC + 2 AIV (1..36, default 4)");

static unsigned int gm_mb = 256;
module_param(gm_mb, uint, 0444);
MODULE_PARM_DESC(gm_mb, "global memory per device in MiB (1..4096, default 256)");

static unsigned int lanes = 3;
module_param(lanes, uint, 0444);
MODULE_PARM_DESC(lanes, "dump lanes per device (1..5, default 3)");

#if IS_ENABLED(CONFIG_PTO_MOCK_FAULTS)
static unsigned int mock_init_fail_ms;
module_param(mock_init_fail_ms, uint, 0444);
MODULE_PARM_DESC(mock_init_fail_ms,
		 "mock only, for the init-failure test: once every device node exists, wait this many ms and fail the load with -ENODEV (default 0: off)");

static unsigned int pto_mock_init_fail_ms(void)
{
	return mock_init_fail_ms;
}
#else
static unsigned int pto_mock_init_fail_ms(void)
{
	return 0;
}
#endif

/*
 * Module init exposes the nodes before it is done, and a failed init frees
 * everything without waiting: an open is refused (-ENXIO) until pto_live,
 * set last. The cdev is cdev_alloc()'d, so a racing chrdev_open() holds a
 * reference the core kernel frees. pto_devs[] is stable from pto_live until
 * module exit, which runs only when no file is open (fops.owner).
 */
static dev_t pto_devt;
static struct class *pto_class;
static struct cdev *pto_cdev;
static struct pto_device **pto_devs;
static unsigned int pto_ndevs;
static bool pto_live;

/* The device of minor @minor, or NULL while the module is not live. */
struct pto_device *pto_device_lookup(unsigned int minor)
{
	/* Acquire: pairs with the release store ending pto_init(). */
	if (!smp_load_acquire(&pto_live) || minor >= pto_ndevs)
		return NULL;
	return pto_devs[minor];
}

#define PTO_ATTR_U(_name, _expr)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct pto_device *pdev = dev_get_drvdata(dev);			\
									\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)(_expr));	\
}									\
static DEVICE_ATTR_RO(_name)

PTO_ATTR_U(clusters, pdev->clusters);
PTO_ATTR_U(cores, pdev->cores);
PTO_ATTR_U(aic_cores, pdev->clusters);
PTO_ATTR_U(aiv_cores, pdev->clusters * 2);
PTO_ATTR_U(lanes, pdev->lanes);
PTO_ATTR_U(gm_size, pdev->gm.size);

static struct attribute *pto_dev_attrs[] = {
	&dev_attr_clusters.attr,
	&dev_attr_cores.attr,
	&dev_attr_aic_cores.attr,
	&dev_attr_aiv_cores.attr,
	&dev_attr_lanes.attr,
	&dev_attr_gm_size.attr,
	NULL,
};
ATTRIBUTE_GROUPS(pto_dev);

static char *pto_devnode(struct device *dev, umode_t *mode)
{
	if (mode)
		*mode = 0660;
	return NULL;
}

static int pto_check_params(void)
{
	if (devices < 1 || devices > PTO_MAX_DEVICES) {
		pr_err("pto: devices=%u out of range 1..%u\n", devices,
		       PTO_MAX_DEVICES);
		return -EINVAL;
	}
	if (clusters < 1 || clusters > PTO_MAX_CLUSTERS) {
		pr_err("pto: clusters=%u out of range 1..%u\n", clusters,
		       PTO_MAX_CLUSTERS);
		return -EINVAL;
	}
	if (gm_mb < 1 || gm_mb > PTO_MAX_GM_MB) {
		pr_err("pto: gm_mb=%u out of range 1..%u\n", gm_mb,
		       PTO_MAX_GM_MB);
		return -EINVAL;
	}
	if (lanes < 1 || lanes > PTO_MAX_LANES) {
		pr_err("pto: lanes=%u out of range 1..%u\n", lanes,
		       PTO_MAX_LANES);
		return -EINVAL;
	}
	return 0;
}

static void pto_device_destroy(struct pto_device *pdev)
{
	pto_lanes_fini(pdev);
	pto_cores_fini(pdev);
	pto_gm_fini(&pdev->gm);
	kfree(pdev);
}

static struct pto_device *pto_device_create(unsigned int index)
{
	struct pto_device *pdev;
	int ret;

	pdev = kzalloc(sizeof(*pdev), GFP_KERNEL);
	if (!pdev)
		return ERR_PTR(-ENOMEM);
	pdev->index = index;
	pdev->clusters = clusters;
	pdev->cores = clusters * PTO_CORES_PER_CLUSTER;
	pdev->lanes = lanes;
	spin_lock_init(&pdev->bos_lock);
	INIT_LIST_HEAD(&pdev->bos);
	mutex_init(&pdev->cap_lock);
	INIT_LIST_HEAD(&pdev->cap_runs);

	ret = pto_gm_init(&pdev->gm, (u64)gm_mb << 20);
	if (ret)
		goto err_free;
	ret = pto_cores_init(pdev);
	if (ret)
		goto err_gm;
	ret = pto_lanes_init(pdev);
	if (ret)
		goto err_cores;
	return pdev;

err_cores:
	pto_cores_fini(pdev);
err_gm:
	pto_gm_fini(&pdev->gm);
err_free:
	kfree(pdev);
	return ERR_PTR(ret);
}

/* The nodes of every device; opens are refused until live. */
static int pto_expose_all(void)
{
	unsigned int n;
	int ret;

	pto_cdev = cdev_alloc();
	if (!pto_cdev)
		return -ENOMEM;
	pto_cdev->ops = &pto_fops;
	pto_cdev->owner = THIS_MODULE;
	ret = cdev_add(pto_cdev, pto_devt, pto_ndevs);
	if (ret) {
		kobject_put(&pto_cdev->kobj);	/* frees the unadded cdev */
		pto_cdev = NULL;
		return ret;
	}
	for (n = 0; n < pto_ndevs; n++) {
		struct pto_device *pdev = pto_devs[n];
		struct device *dev;

		dev = device_create_with_groups(pto_class, NULL,
						MKDEV(MAJOR(pto_devt), n), pdev,
						pto_dev_groups, PTO_NAME "%u",
						n);
		if (IS_ERR(dev))
			return PTR_ERR(dev);
		pdev->dev = dev;
	}
	return 0;
}

static void pto_destroy_all(void)
{
	unsigned int n;

	WRITE_ONCE(pto_live, false);
	for (n = 0; n < pto_ndevs; n++) {
		struct pto_device *pdev = pto_devs[n];

		pto_debugfs_remove_device(pdev);
		if (pdev->dev)
			device_destroy(pto_class, MKDEV(MAJOR(pto_devt), n));
		pdev->dev = NULL;
	}
	if (pto_cdev)
		cdev_del(pto_cdev);
	pto_cdev = NULL;
	while (pto_ndevs)
		pto_device_destroy(pto_devs[--pto_ndevs]);
	kfree(pto_devs);
	pto_devs = NULL;
}

static int __init pto_init(void)
{
	struct pto_device *pdev;
	unsigned int n;
	int ret;

	ret = pto_check_params();
	if (ret)
		return ret;

	ret = alloc_chrdev_region(&pto_devt, 0, devices, PTO_NAME);
	if (ret)
		return ret;
	pto_class = class_create(THIS_MODULE, PTO_NAME);
	if (IS_ERR(pto_class)) {
		ret = PTR_ERR(pto_class);
		goto err_region;
	}
	pto_class->devnode = pto_devnode;
	pto_debugfs_init();

	pto_devs = kcalloc(devices, sizeof(*pto_devs), GFP_KERNEL);
	if (!pto_devs) {
		ret = -ENOMEM;
		goto err_class;
	}
	while (pto_ndevs < devices) {
		pdev = pto_device_create(pto_ndevs);
		if (IS_ERR(pdev)) {
			ret = PTR_ERR(pdev);
			goto err_devs;
		}
		pto_devs[pto_ndevs++] = pdev;
	}
	ret = pto_expose_all();
	if (ret)
		goto err_devs;
	if (pto_mock_init_fail_ms()) {
		/* Mock fault injection: a failure once every node exists. */
		msleep(pto_mock_init_fail_ms());
		ret = -ENODEV;
		goto err_devs;
	}
	ret = pto_nl_init();
	if (ret)
		goto err_devs;
	/*
	 * debugfs last, once the init can no longer fail. A failed init
	 * frees the module without waiting for its references, and a debugfs
	 * file keeps pointing at the module's file_operations while it is
	 * open: a close after the failure would call into freed module
	 * memory (the debugfs proxy's release). Only the device node is
	 * guarded by pto_live; debugfs is not needed before it is set.
	 */
	for (n = 0; n < pto_ndevs; n++)
		pto_debugfs_add_device(pto_devs[n]);
	pto_nl_debugfs();
	/* Release: every device and pto_devs[] precede a successful open. */
	smp_store_release(&pto_live, true);
	pr_info("pto: %u mock device(s), %u clusters, %u MiB GM, %u lanes each\n",
		devices, clusters, gm_mb, lanes);
	return 0;

err_devs:
	pto_destroy_all();
err_class:
	pto_debugfs_fini();
	class_destroy(pto_class);
err_region:
	unregister_chrdev_region(pto_devt, devices);
	return ret;
}

static void __exit pto_exit(void)
{
	pto_destroy_all();
	pto_nl_fini();
	pto_debugfs_fini();
	class_destroy(pto_class);
	unregister_chrdev_region(pto_devt, devices);
}

module_init(pto_init);
module_exit(pto_exit);

MODULE_DESCRIPTION("PTO-style NPU driver with a mock device backend");
MODULE_LICENSE("GPL");
MODULE_VERSION(PTO_VERSION);
