"""Start-up time of `import icmlgym`, `icmlgym --help` and `icmlgym list`, for one or more source trees.

Usage: python benchmarks/startup.py [--repeat N] TREE [TREE ...]

Each TREE is a checkout of icmlgym (it goes first on PYTHONPATH). Trees are measured interleaved,
command by command, so that a change in the machine's load hits them alike; the table gives the
minimum, median and maximum wall time over the repeats, the cumulative import time of the
`icmlgym` package from `python -X importtime`, whether pandas is imported, and the load average.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "import icmlgym": ["-c", "import icmlgym"],
    "icmlgym --help": ["-m", "icmlgym.cli", "--help"],
    "icmlgym list": ["-m", "icmlgym.cli", "list"],
}


def _env(tree: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": tree, "COLUMNS": "100"}


def wall(tree: str, args: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run; CPU time (user + system) is what a quiet machine's
    wall time would be close to, since waiting for a core does not count in it."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], env=_env(tree), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def import_time_ms(tree: str) -> tuple[float, bool]:
    """Cumulative `import icmlgym` time (ms) from -X importtime, and whether pandas was imported."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", "import icmlgym"], env=_env(tree), capture_output=True, text=True, check=True).stderr
    total = 0.0
    for line in err.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| icmlgym$", line)
        if m:
            total = int(m.group(1)) / 1000
    return total, bool(re.search(r"\| +pandas$", err, re.M))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    times: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    imports: dict[str, list[float]] = {t: [] for t in a.trees}
    pandas: dict[str, bool] = {}
    load = [os.getloadavg()[0]]
    for _ in range(a.repeat):
        for name, args in COMMANDS.items():
            for tree in a.trees:
                w, c = wall(tree, args)
                times.setdefault((tree, name), []).append(w)
                cpu.setdefault((tree, name), []).append(c)
        for tree in a.trees:
            ms, pd = import_time_ms(tree)
            imports[tree].append(ms)
            pandas[tree] = pd
        load.append(os.getloadavg()[0])
    print("| tree | command | wall min s | wall median s | wall max s | CPU median s |\n|---|---|---|---|---|---|")
    for (tree, name), v in times.items():
        print(f"| {tree} | `{name}` | {min(v):.2f} | {statistics.median(v):.2f} | {max(v):.2f} | {statistics.median(cpu[(tree, name)]):.2f} |")
    for tree, v in imports.items():
        print(f"| {tree} | `-X importtime` icmlgym cumulative (ms) | {min(v):.0f} | {statistics.median(v):.0f} | {max(v):.0f} | |")
        print(f"| {tree} | pandas imported by `import icmlgym` | {pandas[tree]} | | | |")
    print(f"\n1-minute load average during the run: {min(load):.1f} to {max(load):.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
