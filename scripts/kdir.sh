#!/bin/sh
# Print the kernel build directory pto.ko is built against: the running
# kernel's build dir if it exists, else the newest installed Debian
# linux-headers-* (resolved, never hard-coded). The PREEMPT_RT headers
# (*-rt-amd64) are never the default: `make vm-rt` builds against them on
# purpose (scripts/rt-kernel.sh), and an installed rt kernel sorts last.
set -eu
r=$(uname -r)
if [ -d "/lib/modules/$r/build" ]; then
	echo "/lib/modules/$r/build"
	exit 0
fi
h=$(for d in /usr/src/linux-headers-*-amd64; do
	case "$d" in *-rt-amd64) continue ;; esac
	[ -d "$d" ] && echo "$d"
done | sort -V | tail -n 1)
[ -n "$h" ] || { echo "kdir: no linux-headers-*-amd64 installed" >&2; exit 1; }
echo "$h"
