"""Numerical stability of subgames (faces of the strategy space) under Hedge / entropic FTRL.

A subgame ``F = prod_i F_i`` is a face of the product of simplices. It is
*Lyapunov stable* when play that starts close to ``F`` stays close, and
*unstable* when some starts, however close, are carried far away. We test this
with perturbation probes, all run as one batch of discrete-time Hedge:

- *leak probes*: for every pure profile ``p`` of ``F``, every player ``i`` and every
  action ``b`` outside ``F_i``: start at ``p`` with mass ``delta`` on ``b`` and
  mass ``delta**k`` on every other action (scores ``-L`` and ``-k L`` with
  ``L = log(1/delta)``), so that a profitable exit at ``p`` (gain ``g``) grows to
  order one before the in-face perturbations do (``k`` is chosen from the game's
  payoff range so that ``k g_min >= 4 range``);
- *random probes*: uniformly random interior points of ``F`` with mass ``delta``
  spread over the actions outside it.

The probes use no knowledge of the preference graph: every profile and every
exit is tried. The *excursion* of a run is the largest mass the play puts
outside ``F`` over the run; ``F`` is classified unstable when some excursion
exceeds ``escape`` (0.5). Exits with gain below ``g_min = 2 L / (eta T)`` cannot
reach mass 1/2 within the horizon, so the comparison with preferential
stability uses that gain tolerance (:func:`resolvable_gain`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from icmlgym.envs.games.dynamics import softmax
from icmlgym.envs.games.normal_form import NormalFormGame
from icmlgym.envs.games.preference_graph import subgame_profiles


@dataclass
class ProbeResult:
    """Excursions of the probes of one subgame (max mass outside the face over each run)."""

    subgame: tuple[tuple[int, ...], ...]
    leak_excursions: np.ndarray
    random_excursions: np.ndarray
    final_outside_mass: np.ndarray

    @property
    def max_excursion(self) -> float:
        both = np.concatenate([self.leak_excursions, self.random_excursions])
        return float(both.max()) if both.size else 0.0

    def stable(self, escape: float = 0.5) -> bool:
        return self.max_excursion < escape


def resolvable_gain(delta: float, eta: float, rounds: int) -> float:
    """The smallest exit gain a leak probe can resolve: mass ``delta`` grows to 1/2 in ``eta * rounds`` time."""
    return 2.0 * np.log(1.0 / delta) / (eta * rounds)


def _probe_scores(
    game: NormalFormGame, face: Sequence[Sequence[int]], delta: float, k: float, n_random: int, rng: np.random.Generator
) -> tuple[list[list[np.ndarray]], int]:
    big = np.log(1.0 / delta)
    starts: list[list[np.ndarray]] = []
    for p in sorted(subgame_profiles(face)):
        for i in range(game.n_players):
            for b in range(game.n_actions[i]):
                if b in face[i]:
                    continue
                scores = []
                for j, n in enumerate(game.n_actions):
                    y = np.full(n, -k * big)
                    y[p[j]] = 0.0
                    if j == i:
                        y[b] = -big
                    scores.append(y)
                starts.append(scores)
    n_leak = len(starts)
    for _ in range(n_random):
        scores = []
        for j, n in enumerate(game.n_actions):
            x = np.zeros(n)
            inside = list(face[j])
            outside = [b for b in range(n) if b not in face[j]]
            x[inside] = rng.dirichlet(np.ones(len(inside))) * (1.0 - delta if outside else 1.0)
            if outside:
                x[outside] = delta / len(outside)
            scores.append(np.log(x))
        starts.append(scores)
    return starts, n_leak


def probe_subgames(
    game: NormalFormGame,
    faces: Sequence[Sequence[Sequence[int]]],
    delta: float = 1e-4,
    eta: float = 0.5,
    rounds: int = 2000,
    n_random: int = 8,
    seed: int = 0,
) -> list[ProbeResult]:
    """Run the leak and random probes of every face in ``faces`` as one Hedge batch.

    Args:
        game: the game.
        faces: subgames as per-player action subsets.
        delta: the initial mass put outside the face.
        eta: Hedge's step size (time ``eta * rounds`` in continuous-time units).
        rounds: number of rounds.
        n_random: random interior probes per face.
        seed: seed of the random probes.
    """
    rng = np.random.default_rng(seed)
    span_ = float(game.payoffs.max() - game.payoffs.min()) or 1.0
    g_min = resolvable_gain(delta, eta, rounds)
    k = max(3.0, 4.0 * span_ / g_min)
    all_scores: list[list[np.ndarray]] = []
    meta = []
    for face in faces:
        face = tuple(tuple(sorted(set(int(a) for a in f))) for f in face)
        starts, n_leak = _probe_scores(game, face, delta, k, n_random, rng)
        meta.append((face, len(all_scores), n_leak, len(starts)))
        all_scores.extend(starts)
    if not all_scores:
        return []
    scores = [np.stack([s[j] for s in all_scores]) / eta for j in range(game.n_players)]
    masks = []
    for j, n in enumerate(game.n_actions):
        m = np.zeros((len(all_scores), n), dtype=bool)
        for face, start, _, count in meta:
            outside = [b for b in range(n) if b not in face[j]]
            m[start : start + count, outside] = True
        masks.append(m)
    excursion = np.zeros(len(all_scores))
    for _ in range(rounds):
        xs = [softmax(eta * s) for s in scores]
        # mass outside the face = 1 - prod_j (mass of player j inside the face)
        inside = np.ones(len(all_scores))
        for x, m in zip(xs, masks):
            inside *= 1.0 - np.where(m, x, 0.0).sum(axis=1)
        np.maximum(excursion, 1.0 - inside, out=excursion)
        us = game.expected_payoffs(xs)
        scores = [s + u for s, u in zip(scores, us)]
    final = np.ones(len(all_scores))
    for s, m in zip(scores, masks):
        final *= 1.0 - np.where(m, softmax(eta * s), 0.0).sum(axis=1)
    out = []
    for face, start, n_leak, count in meta:
        out.append(
            ProbeResult(
                face,
                excursion[start : start + n_leak],
                excursion[start + n_leak : start + count],
                1.0 - final[start : start + count],
            )
        )
    return out
