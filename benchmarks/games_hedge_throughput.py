"""Hedge throughput on a 3-player x 10-action game for 10,000 rounds: icmlgym vs a plain numpy loop.

Run: ``/work/venv/bin/python benchmarks/games_hedge_throughput.py [--rounds 10000] [--repeats 3]``

Measures rounds per second (best of ``repeats``) of
  1. a plain numpy implementation of the same updates (per round: one ``np.einsum`` per
     player for the payoff vector against the others' mixed strategies, exponential weights);
  2. ``icmlgym.envs.games.dynamics.run_ftrl`` with one run (the library's full bookkeeping:
     regret, tail distribution, time averages);
  3. ``run_ftrl`` with 64 runs advanced together (rounds x runs per second);
  4. ``icmlgym.run("icmlgym/RepeatedGame-v0", "games-hedge")``: the PettingZoo env with three
     ``games-hedge`` agents through the runner (env checks, metrics, agent protocol);
and checks that 1 and 2 end at the same strategies. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from icmlgym.envs.games.dynamics import run_ftrl
from icmlgym.envs.games.normal_form import random_game

ETA = 0.1


def plain_numpy_hedge(payoffs: np.ndarray, x0: list[np.ndarray], rounds: int) -> list[np.ndarray]:
    scores = [np.log(x) / ETA for x in x0]
    subs = ["abc,b,c->a", "abc,a,c->b", "abc,a,b->c"]
    xs = list(x0)
    for t in range(rounds):
        if t > 0:
            xs = []
            for s in scores:
                w = np.exp(ETA * (s - s.max()))
                xs.append(w / w.sum())
        us = [
            np.einsum(subs[0], payoffs[0], xs[1], xs[2]),
            np.einsum(subs[1], payoffs[1], xs[0], xs[2]),
            np.einsum(subs[2], payoffs[2], xs[0], xs[1]),
        ]
        scores = [s + u for s, u in zip(scores, us)]
    return xs


def best_of_interleaved(fns: dict, repeats: int) -> dict:
    """Best wall time of each function; the functions alternate within each repeat so that
    load changes on a shared machine hit all of them alike."""
    best = {k: float("inf") for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    T = args.rounds
    game = random_game(10, 3, seed=0)
    rng = np.random.default_rng(0)
    x0 = [rng.dirichlet(np.ones(10)) for _ in range(3)]

    plain = plain_numpy_hedge(np.asarray(game.payoffs), x0, T)
    ours = run_ftrl(game, T, eta=ETA, init_strategies=[x[None] for x in x0])
    diff = max(float(np.abs(a - b[0]).max()) for a, b in zip(plain, ours.final))
    assert diff < 1e-9, f"plain numpy and run_ftrl disagree by {diff}"

    x64 = [rng.dirichlet(np.ones(10), size=64) for _ in range(3)]
    import icmlgym

    def env_run():
        (rec,) = icmlgym.run(
            "icmlgym/RepeatedGame-v0", "games-hedge", seeds=1, env_kwargs={"n_players": 3, "n_actions": 10, "horizon": T}
        )
        assert rec.status == "ok", rec.error

    t = best_of_interleaved(
        {
            "plain": lambda: plain_numpy_hedge(np.asarray(game.payoffs), x0, T),
            "ours": lambda: run_ftrl(game, T, eta=ETA, init_strategies=[x[None] for x in x0]),
            "batch": lambda: run_ftrl(game, T, eta=ETA, init_strategies=x64),
            "env": env_run,
        },
        args.repeats,
    )
    t_plain, t_ours, t_batch, t_env = t["plain"], t["ours"], t["batch"], t["env"]

    rows = [
        ("plain numpy loop (einsum + exp weights)", T / t_plain, 1.0),
        ("run_ftrl, 1 run", T / t_ours, t_plain / t_ours),
        ("run_ftrl, 64 runs (rounds x runs / s)", 64 * T / t_batch, 64 * t_plain / t_batch),
        ("RepeatedGame-v0 + 3 games-hedge agents via icmlgym.run", T / t_env, t_plain / t_env),
    ]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"3 players x 10 actions, {T} rounds, best of {args.repeats}; max |plain - run_ftrl| = {diff:.1e}")
    print("| implementation | rounds/s | ratio vs plain numpy |")
    print("|---|---|---|")
    for name, rate, ratio in rows:
        print(f"| {name} | {rate:,.0f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
