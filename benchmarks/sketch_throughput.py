"""Updates per second of each resettable-stream sketch against datasketches' Theta sketch.

The same insert-only stream (N random 64-bit-range integer keys, unit increments) goes to
every sketch through its batched numpy path (``update_many``) and, for the scalar path, a
Python loop of ``update``; Theta gets a Python loop of ``update`` (its Python binding has no
array path; datasketches 5.2.0). Ratios are sketch throughput / Theta throughput in the same
run (best of 5 repeats each, since the machine is shared). Every sketch gets the same word
budget, 2 * 4096 (Theta's lg_k = 12 holds up to about 1.5 * 4096 entries).

    python benchmarks/sketch_throughput.py            # N = 1,000,000
    python benchmarks/sketch_throughput.py --n 200000
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from icmlgym.envs.sketch.sketches import DEFENDERS, make_defender


def best_of(fn, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--scalar-n", type=int, default=100_000)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2**40, args.n, dtype=np.int64)
    skeys = keys[: args.scalar_n].tolist()
    all_keys = keys.tolist()
    n_keys = args.n  # the universe the rate is computed from
    space = 2 * 4096
    from datasketches import update_theta_sketch

    def theta_loop():
        sk = update_theta_sketch(12)
        up = sk.update
        for k in all_keys:
            up(k)

    theta_rate = args.n / best_of(theta_loop)
    out: dict[str, dict[str, float]] = {"theta (datasketches, loop)": {"updates_per_s": theta_rate, "ratio": 1.0}}
    print(f"datasketches theta, python loop: {theta_rate / 1e6:.2f} M updates/s", flush=True)
    for name in DEFENDERS:
        statistic = "sum" if name == "linear" else "cardinality"
        kw = {"m": 64} if name == "linear" else {}
        n_batch = args.n if name not in ("theta", "linear") else args.scalar_n

        def batched():
            sk = make_defender(name, statistic, n_keys=n_keys, space=space, horizon=args.n, seed=1, **kw)
            sk.update_many(keys[:n_batch])

        def scalar():
            sk = make_defender(name, statistic, n_keys=n_keys, space=space, horizon=args.n, seed=1, **kw)
            up = sk.update
            for k in skeys[: args.scalar_n // 10]:
                up(k, 1)

        b = n_batch / best_of(batched)
        s = (args.scalar_n // 10) / best_of(scalar)
        out[name] = {"updates_per_s": b, "ratio": b / theta_rate, "scalar_updates_per_s": s, "scalar_ratio": s / theta_rate}
        print(f"{name:12s} batched {b / 1e6:8.2f} M/s  ({b / theta_rate:6.2f}x theta)   scalar loop {s / 1e6:6.3f} M/s ({s / theta_rate:5.2f}x)", flush=True)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}")
    return out


if __name__ == "__main__":
    main()
