"""Metrics of play in a game: regret, coarse correlated equilibria, sink mass, closure and leak.

Most quantities are linear in a distribution ``sigma`` over pure profiles (the
empirical distribution of realised play, or the time average of the players'
product distributions). They go through one matrix, :func:`deviation_gain_matrix`
``G`` with one row per (player ``i``, action ``b``) and one column per profile
``a``: ``G[(i, b), a] = u_i(b, a_{-i}) - u_i(a)``. Then

- external regret of player ``i`` over ``T`` rounds = ``T * max_b (G sigma)[(i, b)]``;
- ``sigma`` is a coarse correlated equilibrium (CCE) iff ``G sigma <= 0``;
- the *leak drift* of a set ``S`` is ``max over b outside span_i(S) of (G sigma)[(i, b)]``:
  the rate at which FTRL scores of actions outside the set's span grow relative to
  what is played.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from icmlgym.envs.games.normal_form import NormalFormGame, Profile
from icmlgym.envs.games.preference_graph import closure_violations, span


def deviation_gain_matrix(game: NormalFormGame) -> np.ndarray:
    """``G`` of shape ``(sum_i n_i, P)``: ``G[(i, b), a] = u_i(b, a_{-i}) - u_i(a)`` (rows player-major)."""
    rows = []
    for i, n in enumerate(game.n_actions):
        u = game.payoffs[i]
        for b in range(n):
            rows.append((np.broadcast_to(np.take(u, [b], axis=i), u.shape) - u).ravel())
    return np.vstack(rows)


def row_offsets(game: NormalFormGame) -> np.ndarray:
    """Where each player's rows start in :func:`deviation_gain_matrix` (length ``N + 1``)."""
    return np.concatenate([[0], np.cumsum(game.n_actions)])


def per_player_max(game: NormalFormGame, values: np.ndarray) -> np.ndarray:
    """The maximum of ``values`` (one per row of ``G``) within each player's block."""
    off = row_offsets(game)
    return np.array([values[off[i] : off[i + 1]].max() for i in range(game.n_players)])


def external_regret(game: NormalFormGame, sigma: np.ndarray, rounds: int, G: np.ndarray | None = None) -> np.ndarray:
    """External regret per player of play whose time-averaged profile distribution is ``sigma``."""
    G = deviation_gain_matrix(game) if G is None else G
    return rounds * per_player_max(game, G @ np.asarray(sigma, dtype=np.float64))


def cce_gap(game: NormalFormGame, sigma: np.ndarray, G: np.ndarray | None = None) -> float:
    """The largest gain any player gets from a fixed deviation against ``sigma`` (0 at a CCE)."""
    G = deviation_gain_matrix(game) if G is None else G
    return float(max(0.0, (G @ np.asarray(sigma, dtype=np.float64)).max()))


def cce_distance(game: NormalFormGame, sigma: np.ndarray, G: np.ndarray | None = None) -> float:
    """Total-variation distance from ``sigma`` to the set of coarse correlated equilibria (a linear program).

    Solves ``min_rho 1/2 ||sigma - rho||_1`` subject to ``rho`` a distribution with
    ``G rho <= 0`` (HiGHS via ``scipy.optimize.linprog``). The CCE set is never empty
    (it contains every Nash equilibrium), so the program is always feasible.
    """
    G = deviation_gain_matrix(game) if G is None else G
    sigma = np.asarray(sigma, dtype=np.float64)
    p = len(sigma)
    if cce_gap(game, sigma, G) <= 1e-12:
        return 0.0
    eye = sparse.identity(p, format="csr")
    # variables: rho (P) then d (P) with d >= |sigma - rho|
    a_ub = sparse.vstack(
        [
            sparse.hstack([-eye, -eye]),
            sparse.hstack([eye, -eye]),
            sparse.hstack([sparse.csr_matrix(G), sparse.csr_matrix((G.shape[0], p))]),
        ],
        format="csr",
    )
    b_ub = np.concatenate([-sigma, sigma, np.zeros(G.shape[0])])
    a_eq = sparse.hstack([sparse.csr_matrix(np.ones((1, p))), sparse.csr_matrix((1, p))], format="csr")
    c = np.concatenate([np.zeros(p), 0.5 * np.ones(p)])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=[(0, None)] * (2 * p), method="highs")
    if res.status != 0:
        raise RuntimeError(f"CCE distance LP failed: {res.message}")
    return float(max(0.0, res.fun))


def set_mass(joint: np.ndarray, game: NormalFormGame, sets: Sequence[Iterable[Profile]]) -> np.ndarray:
    """Mass of a profile distribution (``(P,)`` or ``(..., P)``) on each set: shape ``(..., len(sets))``."""
    joint = np.asarray(joint, dtype=np.float64)
    out = []
    for s in sets:
        idx = [game.profile_index(p) for p in s]
        out.append(joint[..., idx].sum(axis=-1))
    return np.stack(out, axis=-1) if out else np.zeros(joint.shape[:-1] + (0,))


def absorption(mass_curve: np.ndarray, times: np.ndarray, threshold: float = 0.9) -> tuple[int, float]:
    """Which set absorbs play and from when.

    Args:
        mass_curve: ``(K, S)`` mass on each of ``S`` sets at ``K`` checkpoints.
        times: the ``K`` checkpoint times.
        threshold: a set has absorbed play from the first checkpoint after which its
            mass stays at or above ``threshold`` up to the last checkpoint.

    Returns:
        ``(index, time)``; ``(-1, nan)`` when no set holds the threshold at the end.
    """
    mass_curve = np.asarray(mass_curve)
    if mass_curve.size == 0 or mass_curve.shape[1] == 0:
        return -1, float("nan")
    k = int(np.argmax(mass_curve[-1]))
    if mass_curve[-1, k] < threshold:
        return -1, float("nan")
    below = np.flatnonzero(mass_curve[:, k] < threshold)
    first = 0 if len(below) == 0 else int(below[-1]) + 1
    return k, float(times[first])


def tail_support(game: NormalFormGame, tail_joint: np.ndarray, tol: float = 1e-3) -> list[Profile]:
    """Profiles carrying at least ``tol`` of the tail distribution."""
    return [game.profile_at(k) for k in np.flatnonzero(np.asarray(tail_joint) >= tol)]


def closure_violation_stats(game: NormalFormGame, support: Sequence[Profile], gain_tol: float = 0.0) -> tuple[int, float]:
    """How far a support is from closed: (number of profitable deviations leaving it, largest gain)."""
    v = closure_violations(game, support, gain_tol)
    return len(v), max((g for *_, g in v), default=0.0)


def leak_drift(game: NormalFormGame, sigma: np.ndarray, profiles: Iterable[Profile], G: np.ndarray | None = None) -> float:
    """Aggregate payoff drift out of a set's span under ``sigma``.

    ``max(0, max_i max_{b not in span_i(S)} sum_a sigma(a) (u_i(b, a_{-i}) - u_i(a)))``:
    how fast FTRL's score of an action outside the span grows against the played
    payoff when play is distributed as ``sigma``. The paper calls a set *leakless*
    when this aggregate drift away from it is never positive; we evaluate it at the
    observed tail distribution only (an approximation, see docs/games.md).
    """
    G = deviation_gain_matrix(game) if G is None else G
    sp = span(profiles, game.n_players)
    off = row_offsets(game)
    gains = G @ np.asarray(sigma, dtype=np.float64)
    worst = 0.0
    for i, n in enumerate(game.n_actions):
        outside = [b for b in range(n) if b not in sp[i]]
        if outside:
            worst = max(worst, float(gains[off[i] + np.array(outside)].max()))
    return worst
