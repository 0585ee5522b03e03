#!/bin/bash
# make dkms-install / make dkms-remove: the module's sources (kernel/ and
# uapi/ and dkms.conf, nothing else) as /usr/src/pto-VERSION, then dkms add,
# build and install; remove undoes all of it. A failed install removes what
# it added, so it leaves nothing behind. Documentation/install.md.
#
# usage: packaging/dkms.sh install|remove DESTDIR VERSION [KVER]
# With a DESTDIR (a scratch root: tests/install-check) dkms keeps its source,
# build and install trees under it and runs no depmod; KVER (default: the
# running kernel) names the kernel to build for, whose headers are the
# machine's /lib/modules/KVER/build.
set -eu
action=$1 destdir=$2 version=$3 kver=${4:-}
top=$(cd "$(dirname "$0")/.." && pwd)
src="$destdir/usr/src/pto-$version"
dkms=(dkms)
if [ -n "$destdir" ]; then
	kver=${kver:-$(uname -r)}
	dkms+=(--sourcetree "$destdir/usr/src" --dkmstree "$destdir/var/lib/dkms"
	       --installtree "$destdir/lib/modules" --no-depmod)
fi
kflag=()
[ -z "$kver" ] || kflag=(-k "$kver")

added() { [ -n "$("${dkms[@]}" status "pto/$version" 2>/dev/null)" ]; }

remove() {
	if added; then
		"${dkms[@]}" remove "pto/$version" --all
	fi
	rm -rf "$src"
}

case "$action" in
install)
	# dkms.conf names the version too: it must be this one.
	grep -qx "PACKAGE_VERSION=\"$version\"" "$top/dkms.conf" || {
		echo "dkms-install: dkms.conf's PACKAGE_VERSION is not $version (kernel/pto_version.h)" >&2
		exit 1
	}
	if added || [ -e "$src" ]; then
		echo "dkms-install: pto/$version is installed already (make dkms-remove first)" >&2
		exit 1
	fi
	trap 'remove' ERR
	mkdir -p "$destdir/usr/src" "$destdir/var/lib/dkms"
	[ -z "$destdir" ] || mkdir -p "$destdir/lib/modules/$kver"
	# Sources only: no objects or other build products of a local build.
	(cd "$top" && find kernel uapi -type f \( -name Kbuild -o -name Kconfig -o \
		-name Makefile -o -name .kunitconfig -o -name '*.h' -o \
		\( -name '*.c' ! -name '*.mod.c' \) \)) | while read -r f; do
		install -D -m 0644 "$top/$f" "$src/$f"
	done
	install -m 0644 "$top/dkms.conf" "$src/dkms.conf"
	"${dkms[@]}" add "pto/$version"
	"${dkms[@]}" build "pto/$version" "${kflag[@]+"${kflag[@]}"}"
	"${dkms[@]}" install "pto/$version" "${kflag[@]+"${kflag[@]}"}"
	;;
remove)
	remove
	;;
*)
	echo "usage: $0 install|remove DESTDIR VERSION [KVER]" >&2
	exit 2
	;;
esac
