# Counting a tier's TAP results, sourced by tests/unit/run, tests/vm/run,
# tests/headers and tests/abi-symbols (bash; the last two count the TAP
# lines of their own checks). Output is parsed, not trusted: a program
# that exits non-zero without a failing "not ok" line, never finishes, or
# reports no test at all counts as one failure. A skipped test ("ok N #
# SKIP reason") is not a pass: it is counted apart.

tap_pass=0
tap_fail=0
tap_skip=0

# tap_count WHO STATUS [STATUS-TEXT] <OUTPUT
# Add one program's results, its TAP output on stdin. STATUS is its exit
# status, empty if it did not finish; WHO names it and STATUS-TEXT spells
# the status (default STATUS) in the "# ..." line that explains a failure
# no "not ok" line reported.
tap_count() {
	local who=$1 rc=$2 rc_text=${3:-$2} out p s f

	out=$(cat)
	p=$(grep -E '^ok [0-9]+' <<<"$out" | grep -cv '# SKIP')
	s=$(grep -cE '^ok [0-9]+.*# SKIP' <<<"$out")
	f=$(grep -cE '^not ok [0-9]+' <<<"$out")
	if [ -z "$rc" ]; then
		echo "# $who did not finish"
		f=$((f + 1))
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "# $who exited $rc_text without reporting a failure"
		f=1
	elif [ "$p" = 0 ] && [ "$f" = 0 ] && [ "$s" = 0 ]; then
		echo "# $who reported no test"
		f=1
	fi
	tap_pass=$((tap_pass + p))
	tap_fail=$((tap_fail + f))
	tap_skip=$((tap_skip + s))
}

# tap_summary TIER [SKIP-NOTE]
# The tier's lines: the skipped count (if any; SKIP-NOTE is added inside
# its parentheses), then "TIER: N passed, N failed", which also goes to
# $PTO_RESULTS for make check. Returns 0 when nothing failed.
tap_summary() {
	local tier=$1 note=${2:-}

	[ "$tap_skip" = 0 ] ||
		echo "# $tier: $tap_skip skipped (not counted as passed$note)"
	echo "$tier: $tap_pass passed, $tap_fail failed"
	[ -n "${PTO_RESULTS:-}" ] && echo "$tier $tap_pass $tap_fail" >>"$PTO_RESULTS"
	[ "$tap_fail" = 0 ]
}
