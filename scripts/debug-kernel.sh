#!/bin/sh
# Build the VM's debug kernel, and pto.ko and pto_kunit.ko for it into MODDIR.
#
# usage: scripts/debug-kernel.sh MODDIR
#   prints three lines: the bzImage, MODDIR/pto.ko, MODDIR/pto_kunit.ko
#
# The stock Debian kernel the VM boots has none of the checkers that catch
# a driver's memory and locking bugs. This one is the Debian
# linux-source-6.1 tree (scripts/ksrc.sh) configured from tinyconfig plus
# tests/vm/debug-kernel.config: KASAN, lockdep, DEBUG_ATOMIC_SLEEP,
# kmemleak, UBSAN, and KUnit for pto_kunit.ko. Built once per fragment
# (its settings, not its comments; about 5 minutes on 2 CPUs) into the
# cache outside the repository, under a lock, into a temporary folder
# renamed when complete, so a failed or concurrent build never leaves a
# half-built kernel behind.
# pto.ko and its KUnit suites' module (CONFIG_PTO_KUNIT_TEST=m) are built
# from the current sources into MODDIR (the caller's own folder: kernel/
# keeps the stock kernel's module).
set -eu
[ $# = 1 ] || { sed -n '2,5p' "$0" >&2; exit 2; }
moddir=$1
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
src=$(scripts/ksrc.sh)
cache="${PTO_CACHE:-/var/tmp/pto-cache}"
frag="$top/tests/vm/debug-kernel.config"
settings() { grep -E '^(CONFIG_|# CONFIG_.* is not set)' "$frag"; }
key=$( (settings; cat "$src/Makefile") | sha256sum | cut -c1-12)
out="$cache/debug-kernel-$key"
jobs=$(nproc)
# Every setting of the fragment a build must end up with: an option that
# olddefconfig drops (a missing dependency) fails before the long build.
want=$(settings | sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=y$/\1/p')

# A failed build: its log's tail, the reason, and nothing left behind.
fail() {
	tail -30 "$out.log" >&2
	echo "debug-kernel: $1 (log: $out.log)" >&2
	rm -rf "$tmp"
	exit 1
}

build() {
	tmp="$out.tmp.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	echo "debug-kernel: building $out (once per config, ~5 min)" >&2
	make -C "$src" O="$tmp" tinyconfig >"$out.log" 2>&1 &&
	"$src/scripts/kconfig/merge_config.sh" -m -O "$tmp" "$tmp/.config" \
		"$frag" >>"$out.log" 2>&1 &&
	make -C "$src" O="$tmp" olddefconfig >>"$out.log" 2>&1 ||
		fail "configuration failed"
	for opt in $want; do
		grep -q "^$opt=y" "$tmp/.config" ||
			fail "$opt=y did not survive olddefconfig"
	done
	make -C "$src" O="$tmp" -j"$jobs" bzImage modules >>"$out.log" 2>&1 ||
		fail "build failed"
	mv "$tmp" "$out"
	# Other fragments' kernels (~1 GB each) are kept while in use (two
	# checkouts on different fragments must not rebuild each other's),
	# and removed once unused for two days.
	find "$cache" -maxdepth 1 -name 'debug-kernel-*' ! -name '*.tmp.*' \
		! -path "$out" ! -path "$out.log" -mtime +1 \
		-exec rm -rf {} + 2>/dev/null || true
}

. scripts/cache-once.sh
cache_once "$out" "$cache/debug-kernel.lock" build
touch "$out"

scripts/ko-build.sh "$out" "$moddir" CONFIG_PTO_KUNIT_TEST=m >&2 || {
	echo "debug-kernel: pto.ko does not build against $out" >&2
	exit 1
}
kunit_ko="$moddir/pto/tests/pto_kunit.ko"
[ -f "$kunit_ko" ] || {
	echo "debug-kernel: no $kunit_ko (CONFIG_PTO_KUNIT_TEST=m)" >&2
	exit 1
}
echo "$out/arch/x86/boot/bzImage"
echo "$moddir/pto/pto.ko"
echo "$kunit_ko"
