/* SPDX-License-Identifier: MIT */
/*
 * pto/common.h - definitions shared by every public libpto header.
 */
#ifndef PTO_COMMON_H
#define PTO_COMMON_H

/* Marks a symbol as part of libpto's public ABI; everything else is hidden. */
#define PTO_API __attribute__((visibility("default")))

#endif
