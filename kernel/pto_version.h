/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pto's release version, defined here only: the module's MODULE_VERSION,
 * libpto's soname major and pkg-config version, ptoctl --version and
 * dkms.conf's PACKAGE_VERSION are all this string (the Makefile reads it;
 * tests/install-check checks that they agree). Documentation/install.md.
 */
#ifndef PTO_VERSION_H
#define PTO_VERSION_H

#define PTO_VERSION "1.0.0"

#endif
