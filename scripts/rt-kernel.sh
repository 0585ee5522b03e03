#!/bin/sh
# Fetch Debian's PREEMPT_RT kernel (linux-image-rt-amd64) and its headers
# (linux-headers-rt-amd64) into the cache, and build pto.ko for it into
# MODDIR.
#
# usage: scripts/rt-kernel.sh MODDIR
#   prints two lines: the rt kernel's vmlinuz, MODDIR/pto/pto.ko
#
# The packages come from the Debian archive through apt (apt-get download)
# and are unpacked into the cache outside the repository, not installed:
# an installed rt kernel would become the host's newest boot entry, and its
# headers the newest /usr/src/linux-headers-*-amd64 (scripts/kdir.sh skips
# the rt ones, but an older checkout would build against them). Unpacked
# once per kernel ABI, under a lock, into a temporary folder renamed when
# complete.
set -eu
[ $# = 1 ] || { sed -n '5,6p' "$0" >&2; exit 2; }
moddir=$(mkdir -p "$1" && cd "$1" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
cache="${PTO_CACHE:-/var/tmp/pto-cache}"

# The ABI the meta-package names (linux-image-6.1.0-57-rt-amd64 -> 6.1.0-57).
img=$(apt-cache depends linux-image-rt-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9.]*-[0-9]*-rt-amd64\)$/\1/p' | head -n 1)
[ -n "$img" ] || { echo "rt-kernel: apt knows no linux-image-rt-amd64" >&2; exit 1; }
abi=${img#linux-image-}
base=${abi%-rt-amd64}
out="$cache/rt-kernel-$abi"

# A failed unpack: the reason, and nothing left behind.
fail() {
	echo "rt-kernel: $1" >&2
	rm -rf "$tmp"
	exit 1
}

unpack() {
	tmp="$out.tmp.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp/deb"
	echo "rt-kernel: fetching $img and its headers into $out" >&2
	# apt's sandbox user cannot write into root's cache folder, so apt
	# downloads as the caller and warns that it does: drop that warning.
	(cd "$tmp/deb" && apt-get download -q "$img" "linux-headers-$abi" \
		"linux-headers-$base-common-rt" 2>&1 | grep -v 'unsandboxed' >&2) ||
		true
	for p in "linux-headers-$abi" "linux-headers-$base-common-rt" "$img"; do
		ls "$tmp/deb/${p}"_*.deb >/dev/null 2>&1 ||
			fail "apt-get download $p failed"
	done
	for d in "$tmp"/deb/linux-headers-*.deb; do
		dpkg-deb -x "$d" "$tmp" || fail "cannot unpack $d"
	done
	# Only the image's kernel: the VM's initramfs carries no modules.
	dpkg-deb --fsys-tarfile "$tmp"/deb/"$img"_*.deb | tar -x -C "$tmp" ./boot/ ||
		fail "cannot unpack $img"
	rm -rf "$tmp/deb"
	# The headers name their common half and kbuild by absolute path
	# (/usr/src, ../../lib/linux-kbuild-6.1): point them at the unpacked
	# common half and the installed linux-kbuild-6.1 (a build package).
	sed -i "s|/usr/src/|$out/usr/src/|" "$tmp/usr/src/linux-headers-$abi/Makefile"
	[ -d /usr/lib/linux-kbuild-6.1 ] ||
		fail "no /usr/lib/linux-kbuild-6.1 (scripts/bootstrap.sh build)"
	mkdir -p "$tmp/usr/lib"
	ln -s /usr/lib/linux-kbuild-6.1 "$tmp/usr/lib/linux-kbuild-6.1"
	grep -q '^CONFIG_PREEMPT_RT=y' "$tmp/usr/src/linux-headers-$abi/.config" ||
		fail "$img is not a PREEMPT_RT kernel"
	mv "$tmp" "$out"
}

. scripts/cache-once.sh
cache_once "$out" "$cache/rt-kernel.lock" unpack
scripts/ko-build.sh "$out/usr/src/linux-headers-$abi" "$moddir" >&2
echo "$out/boot/vmlinuz-$abi"
echo "$moddir/pto/pto.ko"
