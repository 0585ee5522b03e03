# tests/docs-check's name check: reads the tree's file list (FILES=1),
# the code's words (WORDS=1), the Makefile's targets (TARGETS=1), then
# the Documentation files; prints "DOC<TAB>LINE: what is missing" for a
# source path that is neither in the tree nor built, and for a C-looking
# name in backquotes that the code does not have.
FNR == 1 { part++ }
part == 1 { file[$0] = 1; n = split($0, c, "/"); base[c[n]] = 1
	    sub(/\.[a-z]+$/, "", c[n]); base[c[n]] = 1
	    d = $0; while (sub(/\/[^\/]*$/, "", d)) dir[d] = 1; next }
part == 2 { word[$0] = 1; next }
part == 3 { if (match($0, /^[^ :=$#]+:/)) target[substr($0, 1, RLENGTH - 1)] = 1
	    next }
function glob_re(g,   r) {
	r = g
	gsub(/\./, "\\.", r)
	gsub(/\*/, "[^/]*", r)
	return "^" r "$"
}
function path_exists(p,   re, f) {
	if (p in file || p in dir || p in target || (p ".c") in file ||
	    p ~ /^lib\/libpto\.(a|so|so\.[0-9]+)$/)
		return 1
	if (p !~ /[*[]/)
		return 0
	re = glob_re(p)
	for (f in file)
		if (f ~ re)
			return 1
	return 0
}
function word_exists(w,   k, pre) {
	if (w ~ /\*$/) {
		pre = substr(w, 1, length(w) - 1)
		for (k in word)
			if (index(k, pre) == 1)
				return 1
		return 0
	}
	return (w in word) || (w in base)
}
{
	s = $0
	while (match(s, /(^|[^A-Za-z0-9_.\/~-])(kernel|lib|tools|tests|examples|uapi|man|scripts)\/[A-Za-z0-9_.*\/[,-]*[]A-Za-z0-9_*]/)) {
		p = substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
		sub(/^[^a-z]/, "", p)
		if (!path_exists(p))
			printf "%s\t%d: no %s in the tree\n", FILENAME, FNR, p
	}
	s = $0
	while (match(s, /`[^`]+`/)) {
		q = substr(s, RSTART + 1, RLENGTH - 2)
		s = substr(s, RSTART + RLENGTH)
		while (match(q, /(^|[^A-Za-z0-9_])(pto|PTO|core|orch|sched)_[A-Za-z0-9_]*\*?/)) {
			w = substr(q, RSTART, RLENGTH)
			q = substr(q, RSTART + RLENGTH)
			sub(/^[^A-Za-z]/, "", w)
			if (!word_exists(w))
				printf "%s\t%d: `%s` is nowhere in the code\n", FILENAME, FNR, w
		}
	}
}
