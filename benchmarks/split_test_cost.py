"""CPU seconds of the split family's tests (or any command), worker processes included.

    python benchmarks/split_test_cost.py                       # python -m pytest -q -p no:cacheprovider tests/split
    python benchmarks/split_test_cost.py --warm DIR            # reuse ICMLGYM_HOME=DIR instead of a fresh one
    python benchmarks/split_test_cost.py -- icmlgym findings split --seed-list 1000,...,1009 --no-store --workers 2

The findings fixture runs through the process executor, whose workers are forked by a fork
server that the test process never waits for, so neither pytest's per-family report nor
``/usr/bin/time`` sees their CPU. This script makes itself a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``), so every orphaned descendant is re-parented to it and
reaped here: the CPU it prints is that of the whole process tree. Wall time on the shared
machine says more about the other sessions than about the tests; the load average at the
start and the end is printed with it. A fresh ``ICMLGYM_HOME`` (the default) is a cold cache,
as in CI: zoo classifiers, corpora and attack results are all built inside the run.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import subprocess
import sys
import tempfile
import time

PR_SET_CHILD_SUBREAPER = 36


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warm", metavar="DIR", help="ICMLGYM_HOME to reuse (default: a fresh, empty one)")
    ap.add_argument("command", nargs="*", help="command to measure (after --); default: the family's tests")
    args = ap.parse_args()
    cmd = args.command or [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/split"]
    home = args.warm or tempfile.mkdtemp(prefix="split-test-cost-")
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed: this measurement needs Linux")
    load0, t0 = os.getloadavg()[0], time.time()
    rc = subprocess.call(cmd, env={**os.environ, "ICMLGYM_HOME": home})
    while True:  # reap the orphans (fork server, workers) so that their CPU is counted
        try:
            os.wait()
        except ChildProcessError:
            break
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"exit {rc}; wall {time.time() - t0:.1f} s; CPU {r.ru_utime + r.ru_stime:.1f} s (user {r.ru_utime:.1f}, "
          f"sys {r.ru_stime:.1f}), every descendant; load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
          f"ICMLGYM_HOME={home}")
    sys.exit(rc)


if __name__ == "__main__":
    main()
