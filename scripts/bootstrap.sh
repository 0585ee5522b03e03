#!/bin/sh
# Install the Debian packages pto's build and tests need, only when missing.
# Called by the make targets; safe to run again. Nothing is downloaded from
# anywhere but the Debian archive configured on this machine.
#
# usage: scripts/bootstrap.sh [build|install|vm|kunit|bench|valgrind|all]
set -eu

want="${1:-all}"
build_pkgs="gcc make libc6-dev linux-headers-amd64 bc flex bison libelf-dev libssl-dev pkg-config xz-utils groff-base man-db manpages-dev librsvg2-bin zlib1g-dev libnl-genl-3-dev"
vm_pkgs="linux-image-amd64 qemu-system-x86 busybox-static cpio gzip"
# spin: the protocol models (tests/model/run).
kunit_pkgs="linux-source-6.1 python3 rsync spin"
bench_pkgs="libstarpu-dev"
valgrind_pkgs="valgrind"
# make dkms-install and the install tier (tests/install-check).
install_pkgs="dkms"

case "$want" in
build) pkgs="$build_pkgs $kunit_pkgs" ;;
install) pkgs="$build_pkgs $install_pkgs" ;;
vm) pkgs="$build_pkgs $kunit_pkgs $vm_pkgs $install_pkgs" ;;
kunit) pkgs="$build_pkgs $kunit_pkgs" ;;
bench) pkgs="$build_pkgs $kunit_pkgs $vm_pkgs $bench_pkgs" ;;
valgrind) pkgs="$build_pkgs $kunit_pkgs $vm_pkgs $valgrind_pkgs" ;;
all) pkgs="$build_pkgs $kunit_pkgs $vm_pkgs $install_pkgs $bench_pkgs" ;;
*) echo "bootstrap: unknown set '$want'" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "bootstrap: missing Debian packages:$missing (run as root or install them)" >&2
	exit 1
fi
echo "bootstrap: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
