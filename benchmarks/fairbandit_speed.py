"""Time per round of every FairLinearBandit-v0 agent through the env and the runner.

Usage: python benchmarks/fairbandit_speed.py [--T 10000] [--K 1000] [--d 10] [--repeats 3]

A full run (T = 10,000, K = 1,000, d = 10 by default) of each agent with
``icmlgym.run`` (in-process executor), against plain numpy LinUCB loops in the
same process on the same instance and noise:

- ``plain incremental``: the same algorithm as fairbandit-linucb (Sherman–Morrison
  inverse and rank-one updates of every arm's ``||x||_{V^-1}``), no env, no runner;
  the ratio against it is the cost of the env + runner + agent protocol;
- ``plain naive``: the textbook loop that recomputes ``x^T V^-1 x`` for all arms
  every round (O(K d^2)).

Times are the best of ``--repeats`` runs (the machine is shared).
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np

import icmlgym
from icmlgym.envs.fairbandit.fair_linear_bandit import FairLinearBanditEnv

AGENTS = [
    "fairbandit-linucb",
    "fairbandit-fairlin-pe",
    "fairbandit-fairlin-ucb",
    "fairbandit-linnash",
    "fairbandit-lints",
    "fairbandit-pe",
    "fairbandit-etc",
    "random",
]


def _radius(t: int, d: int, sd: float, arm_norm: float, delta: float) -> float:
    return sd * math.sqrt(2 * math.log(1 / delta) + d * math.log(1 + t * arm_norm**2 / d)) + 1.0


def plain_linucb(X: np.ndarray, means: np.ndarray, noise: np.ndarray, incremental: bool) -> tuple[float, float]:
    """Plain LinUCB loop; returns (seconds, average regret) for a sanity check against the agent."""
    T, d = len(noise), X.shape[1]
    sd, delta = math.sqrt(0.5), 1.0 / T
    arm_norm = float(np.sqrt((X**2).sum(axis=1).max()))
    t0 = time.perf_counter()
    Vinv = np.eye(d)
    b = np.zeros(d)
    w = np.einsum("ij,ij->i", X, X)
    total = 0.0
    for t in range(T):
        theta = Vinv @ b
        if not incremental:
            w = np.einsum("ij,jk,ik->i", X, Vinv, X)
        a = int(np.argmax(X @ theta + _radius(t, d, sd, arm_norm, delta) * np.sqrt(np.maximum(w, 0.0))))
        r = means[a] + noise[t]
        total += means[a]
        x = X[a]
        u = Vinv @ x
        denom = 1.0 + x @ u
        Vinv -= np.outer(u, u) / denom
        if incremental:
            xu = X @ u
            w -= xu * xu / denom
        b += r * x
    return time.perf_counter() - t0, float(means.max() - total / T)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=10_000)
    ap.add_argument("--K", type=int, default=1_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    kw = {"horizon": args.T, "n_arms": args.K, "dim": args.d}
    env = FairLinearBanditEnv(**kw)
    env.reset(seed=0)
    X, means, noise = env.arms, env.means, env._draws.copy()
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, numpy {np.__version__}")
    print(f"T={args.T}, K={args.K}, d={args.d}; best of {args.repeats}\n")
    plain = {}
    for label, inc in (("plain incremental", True), ("plain naive", False)):
        runs = [plain_linucb(X, means, noise, inc) for _ in range(args.repeats)]
        plain[label] = min(r[0] for r in runs)
        print(f"{label:24s} {1e6 * plain[label] / args.T:8.1f} us/round   avg regret {runs[0][1]:.4f}")
    print()
    print("| agent | us/round (env + runner) | ratio vs plain incremental LinUCB | ratio vs plain naive LinUCB | nash_regret |")
    print("|---|---|---|---|---|")
    for agent in AGENTS:
        best = math.inf
        for _ in range(args.repeats):
            rec = icmlgym.run("icmlgym/FairLinearBandit-v0", agent, seeds=[0], env_kwargs=kw)[0]
            if rec.status != "ok":
                raise RuntimeError(rec.error)
            best = min(best, rec.episodes[0].wall_time)
        per = best / args.T
        print(
            f"| {agent} | {1e6 * per:.1f} | {per * args.T / plain['plain incremental']:.2f} | "
            f"{per * args.T / plain['plain naive']:.2f} | {rec.metric('nash_regret')[0]:.4f} |"
        )


if __name__ == "__main__":
    main()
