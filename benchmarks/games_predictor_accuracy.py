"""Prediction accuracy of the preference-graph predictors over the ``games-basins`` suite.

Run: ``/work/venv/bin/python benchmarks/games_predictor_accuracy.py [--seeds 0 1 2] [--n-games 10]``

For every member of the suite (StabilityPrediction-v0 over one game class), the mean
``prediction_accuracy`` of ``games-sink-predictor``, ``games-nash-predictor`` and ``random``
over the seeds, at smoke-tier basin settings with ``n_games`` games per episode.
Prints a markdown table (the figures quoted in docs/games.md).
"""

from __future__ import annotations

import argparse

import numpy as np

import icmlgym
from icmlgym.catalog import suite

AGENTS = ("games-sink-predictor", "games-nash-predictor", "random")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--n-games", type=int, default=10)
    args = ap.parse_args()
    icmlgym.envs.register_all()
    print("| game class | " + " | ".join(AGENTS) + " |")
    print("|---|" + "---|" * len(AGENTS))
    for env_id, kwargs in suite("games-basins"):
        kw = {**kwargs, "n_games": args.n_games}
        row = []
        for agent in AGENTS:
            recs = icmlgym.run(env_id, agent, seeds=args.seeds, tier="smoke", env_kwargs=kw)
            bad = [r.error for r in recs if r.status != "ok"]
            if bad:
                raise RuntimeError(f"{env_id} {kw} {agent}: {bad[0]}")
            row.append(float(np.mean([r.metric("prediction_accuracy")[0] for r in recs])))
        label = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "card defaults (random, 2 players, 3 actions)"
        print(f"| {label} | " + " | ".join(f"{v:.3f}" for v in row) + " |")


if __name__ == "__main__":
    main()
