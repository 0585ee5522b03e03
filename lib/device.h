/* SPDX-License-Identifier: MIT */
/*
 * Internal: what the device handle (device.c) offers the rest of libpto
 * beyond the public pto/pto.h. Internal symbols carry the dev_ prefix.
 */
#ifndef PTO_LIB_DEVICE_H
#define PTO_LIB_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <pto/pto.h>

/*
 * Clusters an orchestrator on this device handle has taken. The kernel's
 * ownership is per open file, so two orchestrators sharing one pto_dev
 * would both "own" a cluster, and one's release would retire the other's
 * cores under it. The claim keeps them apart: -EBUSY if any of @clusters
 * is claimed on @dev already. Thread safety: any thread.
 */
int dev_claim_clusters(struct pto_dev *dev, uint64_t clusters);
/* Is this a process other than the one that opened @dev (a fork)? */
bool dev_forked(const struct pto_dev *dev);
void dev_unclaim_clusters(struct pto_dev *dev, uint64_t clusters);
/* The handle of @dev's live buffer whose device address is @dev_addr
 * (a GM tensor's obj); 0 or -ENOENT. Thread safety: any thread. */
int dev_bo_find(struct pto_dev *dev, uint64_t dev_addr, uint32_t *handle);

#endif
