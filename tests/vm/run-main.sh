#!/bin/sh
# The main job inside the VM (make run): show the device pto.ko created.
set -e
echo "pto.ko loaded: $(cat /sys/class/pto/pto0/cores) cores on /dev/pto0"
ptoctl info -d 0
