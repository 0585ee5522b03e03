#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-task counts of a pto-bench run profiled by scripts/vm-callgrind.sh.

usage: scripts/cg-tasks.py OUTDIR PROGRAM
  OUTDIR   what vm-callgrind.sh unpacked (one run: callgrind.out.<pid>-01,
           the orch thread, and -02, the scheduler thread); run it with
           CALLGRIND_OPTS=--dump-instr=yes so that the locked instructions
           can be counted
  PROGRAM  the binary that ran (objdump -d of it finds the locked ones)

Tasks are counted as the calls of submit_impl. Rows (as in
tools/bench/RESULTS.md):
  submit                  submit_impl inclusive, less the READY flush and
                          routing under it, per submit (orch thread)
  orch locked             lock-prefixed instructions, memory xchg and
                          fences executed by the orch thread, per task
  sched_send              per task (scheduler thread)
  completion              orch_on_task_complete inclusive, less the
                          consumption flush under it, per task
  release_ref / call      orch_release_ref (with the batched consumption),
                          less the flush under it, per call
  consume flush           orch_consume_flush inclusive, per task
  loop calls              every call out of sched_thread_main but the
                          idle ones (reaps, clock, sleep, the lock-free
                          "anything to pop?" asks), per task (what is
                          inlined into the loop is not in it)
  sched total             every instruction of the scheduler thread, idle
                          steps included, per task
  sched locked            as orch locked, scheduler thread, per task
Valgrind runs the threads one at a time: the scheduler thread's rows move
between runs of one binary (how completions pair up, idle steps); the
orch thread's do not.
"""
import collections
import glob
import re
import subprocess
import sys


def parse(path):
    """Self cost per function, inclusive cost of its calls, call counts,
    executions per instruction address, and the call edges."""
    names = {}

    def name(kind, s):
        m = re.match(r'\((\d+)\)(?: (.*))?', s)
        if not m:
            return s
        if m.group(2) is not None:
            names[(kind, m.group(1))] = m.group(2)
        return names[(kind, m.group(1))]

    self_cost = collections.Counter()
    call_cost = collections.Counter()
    calls = collections.Counter()
    edges = collections.Counter()
    per_addr = collections.Counter()
    npos, fn, cfn, pending = 1, None, None, None
    last = []
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('positions:'):
            npos = len(line.split()) - 1
            last = [0] * npos
        elif line.startswith('fn='):
            fn = name('fn', line[3:])
        elif line.startswith('cfn='):
            cfn = name('fn', line[4:])
        elif line.startswith(('fl=', 'fi=', 'fe=')):
            name('fl', line[3:])
        elif line.startswith(('cfl=', 'cfi=')):
            name('fl', line[4:])
        elif line.startswith(('ob=', 'cob=')):
            name('ob', line.split('=', 1)[1])
        elif line.startswith('calls='):
            pending = (cfn, int(line[6:].split()[0]))
        elif line and line[0] in '0123456789+-*':
            parts = line.split()
            for i in range(npos):
                p = parts[i]
                if p == '*':
                    continue
                last[i] = last[i] + int(p, 0) if p[0] in '+-' else int(p, 0)
            cost = int(parts[npos]) if len(parts) > npos else 0
            if pending:
                callee, n = pending
                pending = None
                calls[callee] += n
                edges[(fn, callee)] += cost
                if callee != fn:
                    call_cost[fn] += cost
            else:
                self_cost[fn] += cost
                per_addr[last[0]] += cost
    return self_cost, call_cost, calls, edges, per_addr


def locked_addrs(program):
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', program],
                         capture_output=True, text=True, check=True).stdout
    found = set()
    for line in out.splitlines():
        m = re.match(r'\s*([0-9a-f]+):\s+(\S+)(.*)', line)
        if not m:
            continue
        op, args = m.group(2), m.group(3)
        if op == 'lock' or op.endswith('fence') or \
           (op.startswith('xchg') and '(' in args):
            found.add(int(m.group(1), 16))
    return found


IDLE = {'clock_gettime', 'pto_rc_reap', 'pto_rc_reap.part.0',
        'orch_ready_any_kind', 'pto_launch_arm', 'poll', 'read', 'ioctl', 'orch_ready_steal',
        'orch_ready_hungry_kinds'}
ROUTE = ('orch_ready_flush', 'orch_enqueue_ready_many')
ROUTERS = ('orch_ready_defer', 'orch_ready_check', 'claim_slot', 'submit_impl',
           'publish')


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    outdir, program = sys.argv[1:]
    f1 = glob.glob(outdir + '/callgrind.out.*-01')
    f2 = glob.glob(outdir + '/callgrind.out.*-02')
    if len(f1) != 1 or len(f2) != 1:
        sys.exit('%s: want the profiles of one run (one -01, one -02 file)' % outdir)
    locked = locked_addrs(program)
    rows = []

    sc, cc, calls, edges, addr = parse(f1[0])
    incl = lambda f: sc[f] + cc[f]
    n = calls['submit_impl']
    route = sum(c for (a, b), c in edges.items() if b in ROUTE and a in ROUTERS)
    rows.append(('submit', (incl('submit_impl') - route) / n))
    rows.append(('orch locked', sum(c for a, c in addr.items() if a in locked) / n))

    sc, cc, calls, edges, addr = parse(f2[0])
    incl = lambda f: sc[f] + cc[f]
    flush_under = lambda fns: sum(c for (a, b), c in edges.items()
                                  if b == 'orch_consume_flush' and a in fns)
    rows.append(('sched_send', incl('sched_send') / n))
    rows.append(('completion', (incl('orch_on_task_complete') -
                                flush_under(('orch_on_task_complete', 'orch_release_ref',
                                             'consumed'))) / n))
    if calls['orch_release_ref']:
        rr = incl('orch_release_ref') - edges[('orch_release_ref', 'consumed')] - \
            flush_under(('orch_release_ref',))
        if calls['consumed']:
            rr += incl('consumed') - flush_under(('consumed',))
        rows.append(('release_ref / call', rr / calls['orch_release_ref']))
    rows.append(('consume flush', incl('orch_consume_flush') / n))
    rows.append(('loop calls', sum(c for (a, b), c in edges.items()
                                   if a == 'sched_thread_main' and b not in IDLE) / n))
    rows.append(('sched total', sum(sc.values()) / n))
    rows.append(('sched locked', sum(c for a, c in addr.items() if a in locked) / n))
    print('tasks %d' % n)
    for k, v in rows:
        print('%-20s %8.1f' % (k, v))


if __name__ == '__main__':
    main()
