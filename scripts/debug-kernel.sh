#!/bin/sh
# Build the VM's debug kernel and pto.ko for it; print "BZIMAGE KO".
#
# The stock Debian kernel the VM boots has none of the checkers that catch
# a driver's memory and locking bugs. This one is the Debian
# linux-source-6.1 tree (scripts/ksrc.sh) configured from tinyconfig plus
# tests/vm/debug-kernel.config: KASAN, lockdep, DEBUG_ATOMIC_SLEEP and
# kmemleak. Built once per config (about 10 minutes on 2 CPUs) into the
# cache outside the repository; pto.ko is rebuilt against it from the
# current sources into build/debug-ko/pto (kernel/ keeps the stock kernel's).
# tests/vm/run --debug-kernel uses both.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
src=$(scripts/ksrc.sh)
cache="${PTO_CACHE:-/var/tmp/pto-cache}"
frag="$top/tests/vm/debug-kernel.config"
# Keyed by the fragment's settings (not its comments) and the tree.
key=$( (grep -v '^#' "$frag"; cat "$src/Makefile") | sha256sum | cut -c1-12)
out="$cache/debug-kernel-$key"
jobs=$(nproc)

if [ ! -f "$out/.pto-built" ]; then
	echo "debug-kernel: building $out (once per config, ~10 min)" >&2
	rm -rf "$out"
	mkdir -p "$out"
	{
		make -C "$src" O="$out" tinyconfig &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$out" \
			"$out/.config" "$frag" &&
		make -C "$src" O="$out" olddefconfig &&
		make -C "$src" O="$out" -j"$jobs" bzImage modules
	} >"$out.log" 2>&1 || {
		tail -30 "$out.log" >&2
		echo "debug-kernel: build failed (log: $out.log)" >&2
		exit 1
	}
	# Every checker of the fragment must have survived olddefconfig.
	for opt in KASAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK MODULES \
		   GENERIC_ALLOCATOR UBSAN DEBUG_LIST PID_NS; do
		grep -q "^CONFIG_$opt=y" "$out/.config" || {
			echo "debug-kernel: CONFIG_$opt is not set in $out/.config" >&2
			exit 1
		}
	done
	touch "$out/.pto-built"
fi

# Kbuild finds the uapi header beside the module's folder (../uapi).
ko="$top/build/debug-ko/pto"
mkdir -p "$ko"
ln -sfn "$top/uapi" "$top/build/debug-ko/uapi"
cp kernel/Kbuild kernel/*.[ch] "$ko/"
mkdir -p "$ko/tests"
cp kernel/tests/*.[ch] "$ko/tests/" 2>/dev/null || true
make -C "$out" M="$ko" CONFIG_PTO=m CONFIG_PTO_WERROR=y -j"$jobs" modules \
	>"$ko/build.log" 2>&1 || {
	cat "$ko/build.log" >&2
	echo "debug-kernel: pto.ko does not build against $out" >&2
	exit 1
}
echo "$out/arch/x86/boot/bzImage $ko/pto.ko"
