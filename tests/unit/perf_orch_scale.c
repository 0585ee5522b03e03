// SPDX-License-Identifier: MIT
/*
 * The scale tests at full size, built -O2 without sanitizers (the unit
 * tier runs it beside the sanitized test_orch_scale): 1,000,000 tasks
 * each way, memory per live slot, RSS after destroy (orch_scale.h).
 */
#define SCALE_N 1000000u
#define SCALE_RSS 1
#include "orch_scale.h"

TEST_HARNESS_MAIN
