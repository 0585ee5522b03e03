#!/bin/sh
# The main job (make run): show the device, run the vector DAG on its mock
# cores, and one throughput line. Runs inside the VM, or on a host with
# pto.ko loaded.
set -e
echo "== pto.ko loaded: $(cat /sys/class/pto/pto0/cores) cores on /dev/pto0"
ptoctl info -d 0
echo
ptoctl run vector
echo
echo "== throughput: 4096 independent noop tasks on the mock cores"
pto-bench --device --no-peer --shape independent --min-log2 12 --max-log2 12
