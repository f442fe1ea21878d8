#!/usr/bin/env python3
"""Where the mix's processes ran on the host: every thread of every tenant (a command line with
tenant.py, labelled by its --kind, or --name where given) and of the node (xq-node.jar), sampled
from /proc every PERIOD ms until SIGTERM. Prints one line per thread that ran in the interval:

    EPOCH_MS LABEL PID TID COMM TICKS CPU

(TICKS: its user and system clock ticks in the interval; CPU: the core it was last seen on).

Why (session 80): an eager decoder's median under XQ stepped from native's 18 ms to 33 ms from the
third second of a run on, with the company running or stopped, and the host's tick (a process of
its own) did not slow; its interposer's measure counts host launch gaps and device waits alike.
Whether the decoder's launching thread lost its core or shared it with a busy thread at the step
tells the host from the device.

    python3 bench/gpu/proc-watch.py [PERIOD_MS] > procs.txt          (sample; default 500)
    python3 bench/gpu/proc-watch.py --report procs.txt [--label decode] [--from MS --to MS]

--report: for each tenant label (or the one given), per second, its busiest thread's share of a
core, the cores it ran on, and the busiest other watched thread seen on one of those cores in that
second (label/comm and its share): the host's side of a latency step, beside the tenant's own
requests (its JSON's t_ms and lat_ms)."""
import os
import re
import signal
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def label_of(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    args = [a.decode("utf-8", "replace") for a in argv if a]
    if any(a.endswith("tenant.py") for a in args):
        for key in ("--name", "--kind"):
            if key in args and args.index(key) + 1 < len(args):
                return args[args.index(key) + 1]
        return "tenant"
    if any(a.endswith("xq-node.jar") for a in args):
        return "node"
    return None


def thread_stat(pid, tid):
    """(comm, utime+stime ticks, last core) of one thread, or None once it is gone."""
    try:
        with open("/proc/%s/task/%s/stat" % (pid, tid)) as f:
            s = f.read()
    except OSError:
        return None
    # comm may hold spaces and parentheses: split after the last ')'
    comm = s[s.index("(") + 1:s.rindex(")")]
    rest = s[s.rindex(")") + 2:].split()
    # rest[0] is field 3 (state): utime 14, stime 15, processor 39
    return comm.replace(" ", "_"), int(rest[11]) + int(rest[12]), int(rest[36])


def sample(period_ms):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    labels, prev = {}, {}
    rescan = 0.0
    while not stop:
        now = time.time()
        if now >= rescan:
            # new processes appear as a mix starts each mode: look for them every second
            for pid in os.listdir("/proc"):
                if pid.isdigit() and pid not in labels:
                    lab = label_of(pid)
                    labels[pid] = lab
            rescan = now + 1.0
        ms = int(now * 1000)
        out = []
        for pid, lab in list(labels.items()):
            if lab is None:
                continue
            try:
                tids = os.listdir("/proc/%s/task" % pid)
            except OSError:
                labels[pid] = None
                continue
            for tid in tids:
                st = thread_stat(pid, tid)
                if st is None:
                    continue
                comm, ticks, cpu = st
                key = (pid, tid)
                d = ticks - prev.get(key, ticks)
                prev[key] = ticks
                if d > 0:
                    out.append("%d %s %s %s %s %d %d" % (ms, lab, pid, tid, comm, d, cpu))
        if out:
            sys.stdout.write("\n".join(out) + "\n")
            sys.stdout.flush()
        time.sleep(max(0.0, period_ms / 1000.0 - (time.time() - now)))


def report(path, only, lo, hi):
    rows = []
    opener = open
    if path.endswith(".gz"):
        import gzip
        opener = gzip.open
    with opener(path, "rt") as f:
        for line in f:
            p = line.split()
            if len(p) != 7 or not p[0].isdigit():
                continue
            ms = int(p[0])
            if (lo is not None and ms < lo) or (hi is not None and ms > hi):
                continue
            rows.append((ms, p[1], p[2], p[3], p[4], int(p[5]), int(p[6])))
    if not rows:
        print("proc-watch: no samples in %s" % path)
        return 1
    t0 = rows[0][0]
    # per second: ticks by thread, and the cores each thread was seen on
    by_sec = {}
    for ms, lab, pid, tid, comm, d, cpu in rows:
        sec = (ms - t0) // 1000
        e = by_sec.setdefault(sec, {}).setdefault((lab, pid, tid, comm), [0, set()])
        e[0] += d
        e[1].add(cpu)
    # one block per process (two decoders share a label, not a pid)
    procs = sorted({(r[1], r[2]) for r in rows if (r[1] != "node" if only is None else r[1] == only)})
    for lab, pid in procs:
        print("%s, pid %s (first sample at %d ms; per second: its busiest thread's share of a core, its cores; "
              "the busiest other watched thread on those cores)" % (lab, pid, t0))
        for sec in sorted(by_sec):
            ths = by_sec[sec]
            mine = [(v[0], k, v[1]) for k, v in ths.items() if k[0] == lab and k[1] == pid]
            if not mine:
                continue
            ticks, k, cores = max(mine, key=lambda x: x[0])
            other = [(v[0], o) for o, v in ths.items() if o[0:3] != k[0:3] and v[1] & cores]
            ob = max(other, key=lambda x: x[0]) if other else None
            print("  %3d s  %-16s %5.0f %%  cores %-12s  beside: %s" % (
                sec, k[3][:16], 100.0 * ticks / HZ, ",".join(str(c) for c in sorted(cores)),
                "%s/%s %.0f %%" % (ob[1][0], ob[1][3][:16], 100.0 * ob[0] / HZ) if ob else "-"))
    return 0


def main(argv):
    if argv and argv[0] == "--report":
        if len(argv) < 2:
            print(__doc__, file=sys.stderr)
            return 2
        path, only, lo, hi = argv[1], None, None, None
        rest = argv[2:]
        while rest:
            if rest[0] == "--label" and len(rest) > 1:
                only = rest[1]
            elif rest[0] == "--from" and len(rest) > 1:
                lo = int(rest[1])
            elif rest[0] == "--to" and len(rest) > 1:
                hi = int(rest[1])
            else:
                print("proc-watch: unknown argument '%s'; allowed: --label NAME, --from MS, --to MS" % rest[0],
                      file=sys.stderr)
                return 2
            rest = rest[2:]
        return report(path, only, lo, hi)
    period = 500
    if argv:
        if not re.fullmatch(r"[0-9]+", argv[0]) or not 50 <= int(argv[0]) <= 10000:
            print("proc-watch: period '%s' is not allowed; allowed: 50 to 10000 (ms)" % argv[0], file=sys.stderr)
            return 2
        period = int(argv[0])
    sample(period)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
