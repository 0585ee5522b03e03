#!/bin/bash
# Count instructions of a program run in the test VM, per function and
# per thread, with callgrind: the device path (scheduler threads, mock
# cores) exists only there, and under TCG a guest instruction costs
# roughly the same everywhere, so counts are what to compare between
# builds - timings in the VM drift by a third within a boot.
#
# usage: scripts/vm-callgrind.sh OUTDIR PROGRAM [ARGS...]
#   PROGRAM is copied into the image (a static build: build/static/...).
#   OUTDIR receives callgrind.out.<pid>-<thread> files; read them with
#   callgrind_annotate --inclusive=yes FILE.
#   CALLGRIND_OPTS adds callgrind options (e.g. --dump-instr=yes, to
#   count executed instructions per address; --toggle-collect=FN).
# Valgrind serializes the program's threads, so counts per task are
# right but the number of idle loop steps is not what a free run makes.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { sed -n '2,16p' "$0"; exit 2; }
out=$1; prog=$2; shift 2
command -v valgrind.bin >/dev/null || "$top/scripts/bootstrap.sh" valgrind
vg=/usr/libexec/valgrind
script=$(mktemp /tmp/vmcg.XXXXXX.sh)
trap 'rm -f "$script"' EXIT
cat > "$script" <<EOS
#!/bin/sh
mkdir -p /vg /tmp/cg
cp /callgrind-amd64-linux /vgpreload_core-amd64-linux.so /default.supp /vg/
cd /tmp/cg
VALGRIND_LIB=/vg valgrind.bin --tool=callgrind --separate-threads=yes \\
	${CALLGRIND_OPTS:-} \\
	/$(basename "$prog") $* >&2
echo BEGIN64
tar czf - . | base64
echo END64
EOS
chmod +x "$script"
mkdir -p "$out"
"$top/tests/vm/run" --timeout 900 --add "$prog" --add "$script" \
	--add-dyn "$(command -v valgrind.bin)" \
	--add "$vg/callgrind-amd64-linux" \
	--add "$vg/vgpreload_core-amd64-linux.so" \
	--add "$vg/default.supp" -- "/$(basename "$script")" |
	awk '/^BEGIN64/{p=1; next} /^END64/{p=0} p' | tr -d '\r' |
	base64 -d | tar xzf - -C "$out"
ls "$out"
