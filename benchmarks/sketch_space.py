"""Space a defender needs to survive the adaptive attack, as the stream length grows.

For each stream length T (update budget = query budget = n_keys = T, errors normalised by
max(prefix max of F, T/8), epsilon = 0.5) and each defender, scan the space budget over a
geometric grid (words, up to 2T: holding every key) and report the smallest budget at which
the reference attack (sketch-probe-reset) fails on every seed, with the words the defender
actually held. Then fit: log(space) against log(T) (polynomial exponent) and against
log(log T) (polylog exponent).

    python benchmarks/sketch_space.py                 # T = 500 .. 8000, 3 seeds
    python benchmarks/sketch_space.py --lengths 400 800 1600 3200 --seeds 2
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np

import icmlgym

ENV_ID = "icmlgym/SketchAttack-v0"


def survives(defender: str, T: int, space: int, seeds: int) -> tuple[bool, float, float]:
    kw = {"defender": defender, "n_keys": T, "space": space, "update_budget": T, "query_budget": T, "min_scale": T / 8, "epsilon": 0.5}
    recs = icmlgym.run(ENV_ID, "sketch-probe-reset", seeds=list(range(seeds)), env_kwargs=kw, episodes=1)
    for r in recs:
        if r.status != "ok":
            raise RuntimeError(r.error)
    succ = [x for r in recs for x in r.metric("success")]
    err = [x for r in recs for x in r.metric("prefix_max_error")]
    words = [x for r in recs for x in r.metric("defender_space")]
    return (max(succ) == 0.0), float(max(err)), float(np.mean(words))


def min_space(defender: str, T: int, seeds: int) -> dict:
    grid = sorted({int(round(2 * T * f)) for f in (0.02, 0.03, 0.05, 0.07, 0.1, 0.14, 0.2, 0.28, 0.4, 0.57, 0.8, 1.0)})
    for space in grid:
        ok, err, words = survives(defender, T, space, seeds)
        if ok:
            return {"defender": defender, "T": T, "space_budget": space, "space_words": words, "max_error": err}
    return {"defender": defender, "T": T, "space_budget": math.inf, "space_words": math.inf, "max_error": err}


def fit(rows: list[dict]) -> dict:
    T = np.array([r["T"] for r in rows], dtype=float)
    s = np.array([r["space_words"] for r in rows], dtype=float)
    if not np.all(np.isfinite(s)):
        return {"poly_exponent": math.nan, "polylog_exponent": math.nan}
    poly = np.polyfit(np.log(T), np.log(s), 1)[0]
    polylog = np.polyfit(np.log(np.log2(T)), np.log(s), 1)[0]
    return {"poly_exponent": float(poly), "polylog_exponent": float(polylog)}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lengths", type=int, nargs="+", default=[500, 1000, 2000, 4000, 8000])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--defenders", nargs="+", default=["bernoulli", "dp-tree"])
    args = ap.parse_args(argv)
    t0 = time.time()
    out = {}
    for d in args.defenders:
        rows = [min_space(d, T, args.seeds) for T in args.lengths]
        out[d] = {"rows": rows, **fit(rows)}
        for r in rows:
            print(f"{d:10s} T={r['T']:6d} min space budget={r['space_budget']}  words held={r['space_words']:.0f}  max error={r['max_error']:.3f}", flush=True)
        print(f"{d:10s} fit: space ~ T^{out[d]['poly_exponent']:.2f}  ~ (log T)^{out[d]['polylog_exponent']:.2f}", flush=True)
    print(f"machine: {platform.processor() or platform.machine()}, {__import__('os').cpu_count()} cores; {time.time() - t0:.0f} s")
    return out


if __name__ == "__main__":
    main()
