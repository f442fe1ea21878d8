#!/usr/bin/env python3
"""What each interposed process's launching threads waited for, per mix and mode (XQ_LOG=2 runs).

Usage: python3 bench/gpu/waits.py DIR...  (mix-run.sh result folders: logs-K/MIX/MODE/TENANT.log[.gz])

Prints, for every tenant log that has them, the interposer's exit lines on waits: by what held a
call first (the gate, a limit, a guard, the process's deferred launches), by entry point (calls
that waited and the time in all), and the kernel launches that could not be deferred, by why
(session 64 on). A call that cannot be deferred waits for every deferred launch of its process:
where a best-effort tenant gains less than expected, these say which of its calls held its thread.
The times include any stop of the paired reading that found a call waiting.
"""
import glob
import gzip
import os
import sys

KEYS = ("waits to launch by what held the call first: ", "waits to launch by entry point (calls that waited, the time in all): ",
        "kernel launches that could not be deferred: ")


def lines(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", errors="replace") as fh:
        for line in fh:
            for k in KEYS:
                i = line.find(k)
                if i >= 0:
                    yield k.split(":")[0].strip(), line[i + len(k):].strip()


def main(args):
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    for d in args:
        for path in sorted(glob.glob(os.path.join(d, "**", "logs-*", "*", "*", "*.log*"), recursive=True)):
            found = list(lines(path))
            if not found:
                continue
            parts = path.split(os.sep)
            print("== %s %s %s (%s)" % (parts[-3], parts[-2], os.path.basename(path).split(".")[0], parts[-4]))
            for what, text in found:
                print("   %s: %s" % (what, text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
