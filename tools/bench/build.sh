#!/bin/sh
# Build the StarPU 1.3 peer of pto-bench (needs libstarpu-dev).
# usage: tools/bench/build.sh   -> tools/bench/pto-bench-starpu
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec gcc -std=gnu11 -O2 -g -Wall -Wextra -o "$here/pto-bench-starpu" \
	"$here/starpu_peer.c" $(pkg-config --cflags --libs starpu-1.3)
