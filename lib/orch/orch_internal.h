/* SPDX-License-Identifier: MIT */
/*
 * Everything lib/orch/'s files (and the unit tests) share; the backend
 * interface alone is orch/backend.h. Internal symbols carry orch_.
 */
#ifndef PTO_ORCH_INTERNAL_H
#define PTO_ORCH_INTERNAL_H

#include "orch/backend.h"
#include "orch/failpoint.h"
#include "orch/lock.h"
#include "orch/orch.h"
#include "orch/orch_trace.h"
#include "orch/ready.h"
#include "orch/ring.h"
#include "orch/run.h"
#include "orch/scope.h"
#include "orch/slot.h"
#include "orch/slot_store.h"
#include "orch/tensormap.h"

#endif
