#!/bin/sh
# The main job (make run): show the device, run the vector DAG on it and
# one throughput line. Runs inside the VM, or on a host with pto.ko loaded.
set -e
echo "== pto.ko loaded: $(cat /sys/class/pto/pto0/cores) cores on /dev/pto0"
ptoctl info -d 0
echo
echo "== vector: c = a + b; d = c + 1; e = c + 2; g = d * e; f = g + c (a = 2, b = 3)"
vector
echo
echo "== fanin: 64 producers x 64 consumers, all-to-all explicit dependencies"
fanin
