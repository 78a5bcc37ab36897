"""Ex-ante p-means and Nash regret: the expectation over the algorithm's randomness inside the mean.

Sawarni, Pal & Barman (NeurIPS 2023) and the FairLinBandit paper define the Nash regret as
``mu* - (prod_t E[mu_{a_t}])^(1/T)``: per round, the expected reward of the arm played,
the expectation taken over the algorithm's (and the noise's) randomness, then the geometric
mean over rounds. The p-means regret replaces the geometric mean by the p-mean. A single run
cannot measure it; the leaderboard estimates ``E[mu_{a_t}]`` by the mean over the stored runs
of one instance (different seeds), per block of rounds (FairLinearBandit-v0 stores the block
means ``expected_reward[rounds=a-b]``), and takes the p-mean over rounds with each block's
value repeated over its rounds. Blocks are single rounds early and over the first 48 rounds
of short horizons, so the value is exact there. Later, averaging within a block can only raise
the p-mean (p <= 1) of the estimated expectations; with a handful of runs it also removes
most of the per-round sampling noise, which the p-mean would otherwise turn into an upward
bias of the regret (tests/fairbandit/test_exante.py measures both on a known play
distribution). docs/fairbandit.md has the definitions and a worked example.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from icmlgym.envs.fairbandit.pmeans import parse_block_metric, pmeans_regret
from icmlgym.runner.record import RunRecord


def per_round_expectation(records: Sequence[RunRecord]) -> tuple[np.ndarray, float]:
    """``(E[mu_{a_t}] for t = 1..T, optimum)`` from runs of one instance and horizon.

    Each run's episodes are pooled (an episode is one draw of the algorithm's randomness)."""
    blocks: dict[tuple[int, int], list[float]] = {}
    optima: set[float] = set()
    n = 0
    for rec in records:
        for ep in rec.episodes:
            found = False
            for name, v in ep.metrics.items():
                b = parse_block_metric(name)
                if b is not None:
                    blocks.setdefault(b, []).append(float(v))
                    found = True
            if not found:
                raise ValueError(f"run {rec.run_id} ({rec.env_id}, seed {rec.seed}) has no expected_reward[rounds=a-b] metrics")
            optima.add(round(float(ep.metrics["optimum"]), 12))
            n += 1
    if n == 0:
        raise ValueError("ex-ante regret needs at least one run")
    if len(optima) != 1:
        raise ValueError(f"ex-ante regret pools runs of one instance; these runs have optima {sorted(optima)}")
    counts = {len(v) for v in blocks.values()}
    if counts != {n}:
        raise ValueError("ex-ante regret pools runs of one horizon; these runs report different round blocks")
    spans = sorted(blocks)
    if spans[0][0] != 1 or any(b[0] != a[1] + 1 for a, b in zip(spans, spans[1:])):
        raise ValueError(f"the round blocks do not tile 1..T: {spans[:5]}...")
    means = np.array([np.mean(blocks[s]) for s in spans])
    lengths = np.array([b - a + 1 for a, b in spans])
    return np.repeat(means, lengths), optima.pop()


def ex_ante_pmeans_regret(records: Sequence[RunRecord], p: float) -> float:
    """The ex-ante p-means regret (p = 0: Nash regret) of runs of one instance; see the module docstring."""
    r, optimum = per_round_expectation(records)
    return float(pmeans_regret(r, optimum, p if p != -math.inf else -math.inf))


def ex_ante_from_board(board, env: str, agent: str, p: float, **filters) -> float:
    """:func:`ex_ante_pmeans_regret` of the stored ``ok`` runs of ``agent`` on ``env`` matching ``filters``
    (e.g. ``task=`` one instance and horizon; pass filters that select a single instance)."""
    recs = board.records(env=env, agent=agent, status="ok", **filters)
    return ex_ante_pmeans_regret(recs, p)
