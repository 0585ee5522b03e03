// SPDX-License-Identifier: GPL-2.0-only
/* The pto tracepoints' definitions (pto_trace.h). */
#define CREATE_TRACE_POINTS
#include "pto_trace.h"
