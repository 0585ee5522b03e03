# Sourced by the scripts that make something once into the cache
# (scripts/debug-kernel.sh, scripts/rt-kernel.sh).
#
# cache_once OUT LOCK FN: run FN, which makes the folder OUT (into a
# temporary one renamed when complete), unless OUT exists; under the lock
# file LOCK, so concurrent callers make it once and none sees it half made.
cache_once() {
	[ -d "$1" ] && return 0
	mkdir -p "$(dirname "$2")"
	exec 9>"$2"
	flock 9
	[ -d "$1" ] || "$3"
	exec 9>&-
}
