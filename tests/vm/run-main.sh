#!/bin/sh
# The main job (make run): show the device, run the vector DAG on its mock
# cores with its run trace and a FULL args dump, read both back, the same
# on the resident route with its args dump, and one throughput line. Runs inside the VM, or on a host with pto.ko loaded.
set -e
out=${PTO_RUN_DIR:-/tmp/pto-run}
mkdir -p "$out"
echo "== pto.ko loaded: $(cat /sys/class/pto/pto0/cores) cores on /dev/pto0"
ptoctl info -d 0
echo
ptoctl run vector --trace "$out/vector.json" --dump-args full --dump-dir "$out"
echo
echo "== the run trace: ptoctl trace summary $out/vector.json"
ptoctl trace summary "$out/vector.json"
ptoctl trace svg "$out/vector.json" > "$out/vector.svg"
echo "== its swimlane: $out/vector.svg (open it in a browser)"
echo
echo "== the args dump: ptoctl dump $out"
ptoctl dump "$out"
echo
echo "== the same DAG on the resident route: the cores schedule it and meet"
echo "   at every task's boundaries for the args dump (ptoctl dump $out/resident)"
ptoctl run vector --route resident --dump-args full --dump-dir "$out/resident"
ptoctl dump "$out/resident" | head -4
echo
echo "== throughput: 4096 independent noop tasks on the mock cores"
pto-bench --device --no-peer --shape independent --min-log2 12 --max-log2 12
