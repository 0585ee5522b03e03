#!/bin/sh
# Build pto.ko from the current sources against the kernel build tree KDIR
# into MODDIR/pto, leaving kernel/ (the stock kernel's module) untouched.
#
# usage: scripts/ko-build.sh KDIR MODDIR [MAKE-VARIABLE=VALUE...]
#   the build's log is MODDIR/build.log; a failed build prints it
set -eu
[ $# -ge 2 ] || { sed -n '5,6p' "$0" >&2; exit 2; }
kdir=$1
# Kbuild's M= must be absolute: a relative MODDIR is the caller's.
moddir=$(mkdir -p "$2/pto" && cd "$2" && pwd)
shift 2
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# Kbuild finds the uapi header beside the module's folder (../uapi).
ln -sfn "$top/uapi" "$moddir/uapi"
# The sources and build files of kernel/ and its subfolders, not the
# stock build's products; -u: over an earlier copy (their times kept,
# so make rebuilds what changed)
(cd kernel && find . \( -name '*.[ch]' ! -name '*.mod.c' -o -name Kbuild \
	-o -name Makefile \) -print | cpio -pdmu --quiet "$moddir/pto")
make -C "$kdir" M="$moddir/pto" CONFIG_PTO=m CONFIG_PTO_WERROR=y \
	CONFIG_PTO_MOCK_FAULTS=y "$@" -j"$(nproc)" modules >"$moddir/build.log" 2>&1 || {
	cat "$moddir/build.log" >&2
	echo "ko-build: pto.ko does not build against $kdir" >&2
	exit 1
}
