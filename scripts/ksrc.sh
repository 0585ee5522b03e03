#!/bin/sh
# Print (extracting on first use) the Debian linux-source-6.1 tree kept in
# the cache outside the repository. Used for the kselftest harness header and
# the KUnit (UML) build.
set -eu
cache="${PTO_CACHE:-/var/tmp/pto-cache}"
tree="$cache/linux-source-6.1"
if [ ! -f "$tree/.pto-extracted" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)
	[ -n "$tarball" ] || { echo "ksrc: linux-source-6.1 not installed" >&2; exit 1; }
	mkdir -p "$cache"
	rm -rf "$tree"
	tar -C "$cache" -xf "$tarball"
	touch "$tree/.pto-extracted"
fi
echo "$tree"
