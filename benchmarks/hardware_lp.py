"""Solve time of GEMQ's global allocation program (scipy ``milp``, HiGHS) for 64 to 4,096 experts.

    python benchmarks/hardware_lp.py [--experts 64,256,1024,4096] [--widths 2,3,4,8] [--bits 2.5] [--repeats 3]

Synthetic instances shaped like the env's: per expert a random size (1x-4x) and a
second-order loss estimate that falls with bits like RTN's error (x 4^-b per bit, times a
log-normal sensitivity per expert), the budget at ``--bits`` average bits. Reports the median
wall time of :func:`icmlgym.agents.hardware.allocate_milp` over ``--repeats`` instances, the
number of binaries, and the average bits of the solution.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def instance(n: int, widths: list[int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sens = rng.lognormal(0.0, 1.5, n)
    cost = sens[:, None] * 4.0 ** (-np.asarray(widths, dtype=float))[None, :]
    sizes = rng.integers(1, 5, n).astype(float) * 18_432
    return cost, sizes


def main() -> None:
    from icmlgym.agents.hardware import allocate_milp

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experts", default="64,256,1024,4096")
    ap.add_argument("--widths", default="2,3,4,8")
    ap.add_argument("--bits", type=float, default=2.5)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    widths = [int(w) for w in a.widths.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f}; widths {widths}; budget {a.bits} average bits")
    print("| experts | binaries | median solve (s) | min (s) | average bits of the solution |")
    print("|---|---|---|---|---|")
    for n in (int(x) for x in a.experts.split(",")):
        times, avg = [], []
        for r in range(a.repeats):
            cost, sizes = instance(n, widths, r)
            t = time.perf_counter()
            bits = allocate_milp(cost, sizes, widths, a.bits * sizes.sum())
            times.append(time.perf_counter() - t)
            avg.append(float(np.dot(sizes, bits) / sizes.sum()))
        print(f"| {n:,} | {n * len(widths):,} | {statistics.median(times):.3f} | {min(times):.3f} | {np.mean(avg):.3f} |")


if __name__ == "__main__":
    main()
