/* SPDX-License-Identifier: MIT */
/*
 * pto/common.h - definitions shared by every public libpto header.
 */
#ifndef PTO_COMMON_H
#define PTO_COMMON_H

/* Marks a symbol as part of libpto's public ABI; everything else is hidden. */
#define PTO_API __attribute__((visibility("default")))

/*
 * A zero initializer for the headers' static inline helpers, valid C and
 * C++ (tests/headers): C++ before C++20 has no designated initializers,
 * C before C23 no empty braces, and g++ -Wextra warns about { 0 }.
 */
#ifdef __cplusplus
#define PTO_ZERO_INIT {}
#else
#define PTO_ZERO_INIT { 0 }
#endif

#endif
