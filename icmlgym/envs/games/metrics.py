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


def cce_program(G: np.ndarray) -> tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray]:
    """The parts of :func:`cce_distance`'s linear program that depend on the game only: ``(A_ub, A_eq, c)``.

    Built once per game and handed to :func:`cce_distance` (``program=``) for many
    distributions (a repeated game's episodes or seeds); the program is the same either way."""
    p = G.shape[1]
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
    a_eq = sparse.hstack([sparse.csr_matrix(np.ones((1, p))), sparse.csr_matrix((1, p))], format="csr")
    c = np.concatenate([np.zeros(p), 0.5 * np.ones(p)])
    return a_ub, a_eq, c


def cce_distance(
    game: NormalFormGame,
    sigma: np.ndarray,
    G: np.ndarray | None = None,
    program: tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray] | None = None,
) -> float:
    """Total-variation distance from ``sigma`` to the set of coarse correlated equilibria (a linear program).

    Solves ``min_rho 1/2 ||sigma - rho||_1`` subject to ``rho`` a distribution with
    ``G rho <= 0`` (HiGHS via ``scipy.optimize.linprog``). The CCE set is never empty
    (it contains every Nash equilibrium), so the program is always feasible. ``program``:
    :func:`cce_program` of ``G``, when the caller keeps it (built here otherwise).
    """
    G = deviation_gain_matrix(game) if G is None else G
    sigma = np.asarray(sigma, dtype=np.float64)
    p = len(sigma)
    if cce_gap(game, sigma, G) <= 1e-12:
        return 0.0
    a_ub, a_eq, c = cce_program(G) if program is None else program
    b_ub = np.concatenate([-sigma, sigma, np.zeros(G.shape[0])])
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


def coverage_mask(dist: np.ndarray, tol: float = 1e-2) -> np.ndarray:
    """The fewest profiles holding at least ``1 - tol`` of a distribution's mass (``(P,)`` or ``(M, P)``).

    Heaviest profiles first, ties by index. Unlike a per-profile mass threshold this does not
    come out empty when play is spread over many profiles (uniform play on 1,000 profiles
    covers 990 of them, not none).
    """
    if not 0.0 <= tol < 1.0:
        raise ValueError(f"tol must lie in [0, 1), got {tol}")
    d = np.atleast_2d(np.asarray(dist, dtype=np.float64))
    order = np.argsort(-d, axis=1, kind="stable")
    sorted_mass = np.take_along_axis(d, order, axis=1)
    before = np.cumsum(sorted_mass, axis=1) - sorted_mass  # mass of the heavier profiles
    total = d.sum(axis=1, keepdims=True)
    keep_sorted = (before < (1.0 - tol) * total - 1e-12) & (sorted_mass > 0)
    mask = np.zeros_like(keep_sorted)
    np.put_along_axis(mask, order, keep_sorted, axis=1)
    return mask if np.ndim(dist) == 2 else mask[0]


def tail_support(game: NormalFormGame, tail_joint: np.ndarray, tol: float = 1e-2) -> list[Profile]:
    """The tail support: the fewest profiles holding at least ``1 - tol`` of the tail distribution."""
    return [game.profile_at(k) for k in np.flatnonzero(coverage_mask(tail_joint, tol))]


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


class PlayStatistics:
    """Accumulates a repeated game's play and turns it into the family's episode metrics.

    Feed it one profile distribution per round (:meth:`add`): a one-hot for realised
    pure play, or the product of the players' mixed strategies. It keeps the
    time-averaged distribution, the distribution over the final ``tail`` fraction of
    rounds, and per-window distributions at ``n_checkpoints`` checkpoints (for
    the mass on each sink component over time).

    Args:
        game: the game.
        horizon: the number of rounds.
        sinks: the sink components of the game's preference graph.
        n_checkpoints: windows over which sink mass is recorded.
        tail: fraction of final rounds that define the tail distribution.
        absorption_threshold: sink mass that counts as absorbed (see :func:`absorption`).
        support_tol: the tail support is the fewest profiles holding ``1 - support_tol`` of the tail mass.
    """

    def __init__(
        self,
        game: NormalFormGame,
        horizon: int,
        sinks: Sequence[frozenset],
        n_checkpoints: int = 50,
        tail: float = 0.2,
        absorption_threshold: float = 0.9,
        support_tol: float = 1e-2,
    ) -> None:
        self.game = game
        self.horizon = int(horizon)
        self.sinks = list(sinks)
        self.G = deviation_gain_matrix(game)
        self._program: tuple | None = None  # cce_distance's program, once a metric needs it
        self.n_checkpoints = max(1, min(int(n_checkpoints), self.horizon))
        self.window = int(np.ceil(self.horizon / self.n_checkpoints))
        self.tail_start = self.horizon - max(1, int(round(tail * self.horizon)))
        self.absorption_threshold = absorption_threshold
        self.support_tol = support_tol
        self._sink_index = np.zeros((game.n_profiles, max(1, len(self.sinks))))
        for k, s in enumerate(self.sinks):
            for p in s:
                self._sink_index[game.profile_index(p), k] = 1.0
        # add_product's block of deferred rounds: the factors of each round's product distribution and its payoffs, and
        # rows 1.. of _sums for the products (row 0 takes each running sum in turn). A reduction along axis 0
        # of a C-ordered block adds row after row, the running sums' order, when a row has 2 or more entries.
        n_last = game.n_actions[-1]
        p = game.n_profiles
        self._block = max(1, min(self.window, 256, (1 << 21) // (8 * p))) if p > 1 else 1
        self._left = np.empty((self._block, p // n_last))
        self._right = np.empty((self._block, n_last))
        self._sums = np.empty((self._block + 1, p))
        self._pays = np.empty((self._block + 1, game.n_players))
        self._k = 0
        self.reset()

    def reset(self) -> None:
        p = self.game.n_profiles
        self.t = 0
        self.total = np.zeros(p)
        self.tail_total = np.zeros(p)
        self.window_total = np.zeros(p)
        self.window_count = 0
        self.curve: list[np.ndarray] = []
        self.curve_times: list[int] = []
        self.payoff_sum = np.zeros(self.game.n_players)
        self._k = 0

    def load(
        self,
        t: int,
        total: np.ndarray,
        tail_total: np.ndarray,
        curve: Sequence[np.ndarray],
        curve_times: Sequence[int],
        payoff_sum: np.ndarray,
    ) -> None:
        """Set the state to ``t`` rounds whose sums are given (copied): one seed of a vector env that keeps
        every seed's sums as arrays, so that :meth:`metrics` computes that seed's metrics."""
        self.reset()
        self.t = int(t)
        self.total = np.array(total, dtype=np.float64)
        self.tail_total = np.array(tail_total, dtype=np.float64)
        self.curve = list(curve)
        self.curve_times = list(curve_times)
        self.payoff_sum = np.array(payoff_sum, dtype=np.float64)

    def add(self, dist: np.ndarray | None = None, index: int | None = None, payoffs: np.ndarray | None = None) -> None:
        """Record one round: a profile distribution ``dist`` or a realised profile ``index``."""
        self._flush()
        if index is not None:
            self.total[index] += 1.0
            self.window_total[index] += 1.0
            if self.t >= self.tail_start:
                self.tail_total[index] += 1.0
        else:
            self.total += dist
            self.window_total += dist
            if self.t >= self.tail_start:
                self.tail_total += dist
        if payoffs is not None:
            self.payoff_sum += payoffs
        self.t += 1
        self.window_count += 1
        if self.window_count == self.window or self.t == self.horizon:
            self.curve.append(self.window_total @ self._sink_index / self.window_count)
            self.curve_times.append(self.t)
            self.window_total[:] = 0.0
            self.window_count = 0

    def add_product(self, left: np.ndarray, right: np.ndarray, payoffs: np.ndarray) -> None:
        """``add(dist=outer(left, right).ravel(), payoffs=payoffs)``, the same sums bit for bit.

        The product distribution of a round of mixed play is the outer product of the first
        ``N - 1`` players' product (``left``) and the last player's mixed strategy (``right``).
        The factors are kept, and the products and running sums are taken a block of rounds
        at a time (up to a window, or the tail's start): one product and one reduction per
        block and sum instead of one of each per round."""
        k = self._k
        self._left[k] = left
        self._right[k] = right
        self._pays[k + 1] = payoffs
        self._k = k + 1
        self.t += 1
        self.window_count += 1
        end = self.window_count == self.window or self.t == self.horizon
        if end or self._k == self._block or self.t == self.tail_start:
            self._flush()
        if end:
            self.curve.append(self.window_total @ self._sink_index / self.window_count)
            self.curve_times.append(self.t)
            self.window_total[:] = 0.0
            self.window_count = 0

    def _flush(self) -> None:
        """Add the block's deferred products to the running sums (in round order)."""
        k = self._k
        if k == 0:
            return
        self._k = 0
        pays = self._pays[: k + 1]
        pays[0] = self.payoff_sum
        self.payoff_sum = np.add.reduce(pays, axis=0)  # n_players >= 2 entries a row: row after row
        rows = self._sums[: k + 1]
        if self._sums.shape[1] == 1:  # one profile: a reduction of one column would sum pairwise
            for i in range(k):
                self._add_dist(np.multiply.outer(self._left[i], self._right[i]).reshape(-1), self.t - k + i)
            return
        np.multiply(self._left[:k, :, None], self._right[:k, None, :], out=rows[1:].reshape(k, *self._left.shape[1:], -1))
        in_tail = self.t - 1 >= self.tail_start  # the block never straddles the tail's start
        for name in ("total", "window_total", "tail_total") if in_tail else ("total", "window_total"):
            rows[0] = getattr(self, name)
            setattr(self, name, np.add.reduce(rows, axis=0))

    def _add_dist(self, dist: np.ndarray, round_index: int) -> None:
        self.total += dist
        self.window_total += dist
        if round_index >= self.tail_start:
            self.tail_total += dist

    def _cce_program(self) -> tuple:
        """:func:`cce_program` of the game, built on first use and kept (every episode's metrics share it)."""
        if self._program is None:
            self._program = cce_program(self.G)
        return self._program

    def sink_mass_curve(self) -> np.ndarray:
        """``(K, n_sinks)``: mass of each window's play on each sink component."""
        self._flush()
        if not self.curve:
            return np.zeros((0, len(self.sinks)))
        return np.stack(self.curve)[:, : len(self.sinks)]

    def metrics(self) -> dict[str, float]:
        """The episode's scalar metrics (see the env docstrings for their definitions)."""
        self._flush()
        t = max(self.t, 1)
        sigma = self.total / t
        tail = self.tail_total / max(self.t - self.tail_start, 1)
        regret = external_regret(self.game, sigma, t, self.G)
        curve = self.sink_mass_curve()
        k, when = absorption(curve, np.asarray(self.curve_times), self.absorption_threshold)
        support = tail_support(self.game, tail, self.support_tol)
        n_viol, max_gain = closure_violation_stats(self.game, support)
        from icmlgym.envs.games.preference_graph import leak as vertex_leak

        out = {
            "external_regret": float(np.mean(regret) / t),
            "max_external_regret": float(np.max(regret) / t),
            "cce_gap": cce_gap(self.game, sigma, self.G),
            "cce_distance": cce_distance(self.game, sigma, self.G, self._cce_program()),
            "n_sinks": float(len(self.sinks)),
            "sink_mass_final": float(curve[-1].sum()) if len(curve) else 0.0,
            "absorbed": float(k >= 0),
            "absorbing_sink": float(k),
            "time_to_absorption": float(when) if k >= 0 else float(self.t),
            "tail_support_size": float(len(support)),
            "closure_violations": float(n_viol),
            "closure_violation_max_gain": float(max_gain),
            "leak_span": vertex_leak(self.game, support) if support else 0.0,
            "leak_drift": leak_drift(self.game, tail, support, self.G) if support else 0.0,
            "average_payoff": float(np.mean(self.payoff_sum) / t),
        }
        for i, r in enumerate(regret):
            out[f"external_regret_player_{i}"] = float(r / t)
        return out
