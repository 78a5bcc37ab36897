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

try:  # the HiGHS build that linprog(method="highs") runs, called without linprog's checks and conversions
    from scipy.optimize._highspy import _core as _highs
except ImportError:  # a scipy without it: every LP goes through linprog
    _highs = None


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


class CCESolver:
    """:func:`cce_distance`'s linear program for one game, solved by HiGHS with linprog's model and options.

    ``linprog(c, A_ub, b_ub, A_eq, b_eq, bounds=[(0, None)] * 2P, method="highs")`` spends most
    of a small LP validating and converting its inputs and building a HiGHS object. This keeps
    the model linprog hands HiGHS (the same column-wise matrix, costs, bounds and row bounds,
    the same options: presolve on, dual simplex, no output) with only the row bounds that hold
    ``sigma`` changing between solves, and reads the objective value as linprog does. A solve
    that HiGHS does not report optimal, or whose solution fails linprog's own feasibility check,
    is solved again through linprog, so that its value or error is linprog's.

    Args:
        G: the game's :func:`deviation_gain_matrix`.
        program: :func:`cce_program` of ``G``, when the caller has it.
    """

    def __init__(self, G: np.ndarray, program: tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray] | None = None) -> None:
        self.G = G
        self.program = cce_program(G) if program is None else program
        self._lp = None  # the HiGHS model and solver, built on the first solve (they do not pickle)
        self._solver = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_lp": None, "_solver": None}

    def _build(self) -> None:
        a_ub, a_eq, c = self.program
        # linprog's conversions: coo copies of both blocks, stacked and made column-wise
        a = sparse.csc_array(sparse.vstack((sparse.coo_array(a_ub, dtype=float, copy=True),
                                             sparse.coo_array(a_eq, dtype=float, copy=True))))
        n_col, n_row = len(c), a.shape[0]
        lp = _highs.HighsLp()
        lp.num_col_ = n_col
        lp.num_row_ = n_row
        lp.a_matrix_.num_col_ = n_col
        lp.a_matrix_.num_row_ = n_row
        lp.a_matrix_.format_ = _highs.MatrixFormat.kColwise
        lp.col_cost_ = np.array(c, dtype=np.float64)
        lp.col_lower_ = np.zeros(n_col)
        lp.col_upper_ = np.full(n_col, _highs.kHighsInf)
        lp.row_lower_ = np.concatenate([np.full(n_row - 1, -_highs.kHighsInf), [1.0]])
        lp.a_matrix_.start_ = a.indptr
        lp.a_matrix_.index_ = a.indices
        lp.a_matrix_.value_ = a.data
        options = _highs.HighsOptions()
        options.presolve = "on"
        options.highs_debug_level = _highs.HighsDebugLevel.kHighsDebugLevelNone
        options.log_to_console = False
        options.output_flag = False
        options.simplex_strategy = _highs.simplex_constants.SimplexStrategy.kSimplexStrategyDual
        solver = _highs._Highs()
        solver.passOptions(options)
        self._lp, self._solver = lp, solver

    def distance(self, sigma: np.ndarray) -> float:
        """:func:`cce_distance` of ``sigma`` (a float64 distribution over the game's profiles)."""
        b_ub = np.concatenate([-sigma, sigma, np.zeros(self.G.shape[0])])
        if _highs is not None:
            if self._lp is None:
                self._build()
            value = self._solve(b_ub)
            if value is not None:
                return float(max(0.0, value))
        return self._linprog(b_ub)

    def _solve(self, b_ub: np.ndarray) -> float | None:
        """HiGHS's objective value for the row bounds ``b_ub`` (and 1 for the mass), or None where linprog
        would not report success (then :meth:`_linprog` gives its value or error)."""
        lp, h = self._lp, self._solver
        rhs = np.concatenate((b_ub, [1.0]))
        lp.row_upper_ = rhs
        # passModel clears the previous solve (model, basis, solution), so each solve starts afresh
        if h.passModel(lp) == _highs.HighsStatus.kError or h.run() == _highs.HighsStatus.kError:
            return None
        if h.getModelStatus() != _highs.HighsModelStatus.kOptimal:
            return None
        solution = h.getSolution()
        x = np.array(solution.col_value)
        value = h.getInfo().objective_function_value
        slack = rhs - solution.row_value
        n_ub = len(b_ub)
        tol = np.sqrt(1e-9) * 10  # linprog's _check_result on its default tol
        if np.isnan(x).any() or np.isnan(value) or np.isnan(slack).any():
            return None
        if not np.all(x >= -tol) or (slack[:n_ub] < -tol).any() or (np.abs(slack[n_ub:]) > tol).any():
            return None
        return value

    def _linprog(self, b_ub: np.ndarray) -> float:
        a_ub, a_eq, c = self.program
        res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=[(0, None)] * len(c), method="highs")
        if res.status != 0:
            raise RuntimeError(f"CCE distance LP failed: {res.message}")
        return float(max(0.0, res.fun))


def cce_distance(
    game: NormalFormGame,
    sigma: np.ndarray,
    G: np.ndarray | None = None,
    program: tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray] | CCESolver | None = None,
) -> float:
    """Total-variation distance from ``sigma`` to the set of coarse correlated equilibria (a linear program).

    Solves ``min_rho 1/2 ||sigma - rho||_1`` subject to ``rho`` a distribution with
    ``G rho <= 0`` (HiGHS, as ``scipy.optimize.linprog(method="highs")`` runs it: :class:`CCESolver`).
    The CCE set is never empty (it contains every Nash equilibrium), so the program is always
    feasible. ``program``: :func:`cce_program` of ``G`` or a :class:`CCESolver` of it, when the
    caller keeps one (built here otherwise).
    """
    G = deviation_gain_matrix(game) if G is None else G
    sigma = np.asarray(sigma, dtype=np.float64)
    if cce_gap(game, sigma, G) <= 1e-12:
        return 0.0
    solver = program if isinstance(program, CCESolver) else CCESolver(G, program)
    return solver.distance(sigma)


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


class SupportMetrics:
    """The tail support's closure and leak metrics from index tables of the game, on a mask of profiles.

    For a support given as a boolean mask over the C-ordered profiles, :meth:`closure`,
    :meth:`leak_span` and :meth:`leak_drift` give :func:`closure_violation_stats`,
    :func:`icmlgym.envs.games.preference_graph.leak` and :func:`leak_drift` of the support's
    profiles, the same doubles: every gain they compare or maximise is an entry
    ``u_i(b, a_{-i}) - u_i(a)`` of ``G`` (the same subtraction of the same payoffs), and a
    maximum does not depend on the order it is taken in (``max_b u_b - u_a`` is
    ``max_b (u_b - u_a)``: rounding is monotone). The loops over profiles, players and actions
    become a few array operations on the tables built here once per game.

    Args:
        game: the game.
        G: its :func:`deviation_gain_matrix`.
    """

    def __init__(self, game: NormalFormGame, G: np.ndarray) -> None:
        n_actions = np.array(game.n_actions)
        p = game.n_profiles
        self.G = G
        self.offsets = row_offsets(game)[:-1]  # the first row of each player in G
        self.actions = np.stack(np.unravel_index(np.arange(p), game.n_actions), axis=1)  # (P, players)
        player = np.repeat(np.arange(game.n_players), n_actions)  # of each row of G
        action = np.concatenate([np.arange(n) for n in game.n_actions])
        strides = np.concatenate([np.cumprod(n_actions[::-1])[::-1][1:], [1]])
        # target[(i, b), a]: the profile that player i's switch to b leads to from profile a
        self.target = np.arange(p)[None, :] + (action[:, None] - self.actions[:, player].T) * strides[player][:, None]
        self._rows = np.arange(len(G))

    def closure(self, mask: np.ndarray, gain_tol: float = 0.0) -> tuple[int, float]:
        """:func:`closure_violation_stats`: profitable deviations from the support that leave it, and the largest gain."""
        leaving = (self.G > gain_tol) & mask[None, :] & ~mask[self.target]
        n = int(np.count_nonzero(leaving))
        return n, float(self.G[leaving].max()) if n else 0.0

    def outside_span(self, mask: np.ndarray) -> np.ndarray:
        """The rows ``(i, b)`` of ``G`` whose action ``b`` player ``i`` never plays in the support (outside its span)."""
        inside = np.zeros(len(self.G), dtype=bool)
        inside[(self.offsets + self.actions[mask]).ravel()] = True
        return ~inside

    def leak_span(self, mask: np.ndarray, outside: np.ndarray) -> float:
        """:func:`~icmlgym.envs.games.preference_graph.leak` of the support (``outside``: :meth:`outside_span`)."""
        if not outside.any():
            return 0.0
        in_span = ~outside[self.offsets + self.actions].any(axis=1)  # the profiles of the span (a subgame)
        return max(0.0, float(self.G[np.ix_(outside, in_span)].max()))

    def leak_drift(self, gains: np.ndarray, outside: np.ndarray) -> float:
        """:func:`leak_drift` of the support, from ``gains = G @ tail`` (``outside``: :meth:`outside_span`)."""
        return max(0.0, float(gains[outside].max())) if outside.any() else 0.0


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
        self._cce: CCESolver | None = None  # cce_distance's program and solver, once a metric needs them
        self._support: SupportMetrics | None = None  # the closure and leak metrics' tables, likewise
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

    def _cce_solver(self) -> CCESolver:
        """:class:`CCESolver` of the game, built on first use and kept (every episode's metrics share it)."""
        if self._cce is None:
            self._cce = CCESolver(self.G)
        return self._cce

    def _support_metrics(self) -> SupportMetrics:
        """:class:`SupportMetrics` of the game, built on first use and kept."""
        if self._support is None:
            self._support = SupportMetrics(self.game, self.G)
        return self._support

    def sink_mass_curve(self) -> np.ndarray:
        """``(K, n_sinks)``: mass of each window's play on each sink component."""
        self._flush()
        if not self.curve:
            return np.zeros((0, len(self.sinks)))
        return np.stack(self.curve)[:, : len(self.sinks)]

    def metrics(self) -> dict[str, float]:
        """The episode's scalar metrics (see the env docstrings for their definitions)."""
        self._flush()
        curve = self.sink_mass_curve()
        return self.metrics_many(
            self.t, self.total[None], self.tail_total[None], curve[None], self.curve_times, self.payoff_sum[None]
        )[0]

    def metrics_many(
        self,
        t: int,
        totals: np.ndarray,
        tail_totals: np.ndarray,
        curves: np.ndarray,
        curve_times: Sequence[int],
        payoff_sums: np.ndarray,
    ) -> list[dict[str, float]]:
        """:meth:`metrics` of ``N`` plays of ``t`` rounds of this game from their sums (one row each), the same doubles.

        ``totals`` and ``tail_totals`` are ``(N, P)``, ``curves`` ``(N, K, n_sinks)`` (the sink mass
        of each window, :meth:`sink_mass_curve` of each play, windows ending at ``curve_times``),
        ``payoff_sums`` ``(N, players)``. :meth:`metrics` is this with one row; a vector env's seeds are its rows.
        What goes across rows is row by row the one-row computation (the tail supports' sort,
        cumulative sums and comparisons); sums over a row and the BLAS products go seed by seed."""
        rounds = max(int(t), 1)
        n_tail = max(int(t) - self.tail_start, 1)
        supports = coverage_mask(tail_totals / n_tail, self.support_tol).reshape(len(totals), -1)
        tables = self._support_metrics()
        times = np.asarray(curve_times)
        out = []
        for i in range(len(totals)):
            sigma = totals[i] / rounds
            gains = self.G @ sigma  # external_regret's, cce_gap's and cce_distance's G @ sigma, taken once
            regret = rounds * per_player_max(self.game, gains)
            curve = curves[i]
            k, when = absorption(curve, times, self.absorption_threshold)
            support = supports[i]
            n_viol, max_gain = tables.closure(support)
            gap = float(max(0.0, gains.max()))
            if support.any():
                outside = tables.outside_span(support)
                leak_span = tables.leak_span(support, outside)
                drift = tables.leak_drift(self.G @ (tail_totals[i] / n_tail), outside)
            else:
                leak_span = drift = 0.0
            m = {
                "external_regret": float(np.mean(regret) / rounds),
                "max_external_regret": float(np.max(regret) / rounds),
                "cce_gap": gap,
                "cce_distance": 0.0 if gap <= 1e-12 else self._cce_solver().distance(sigma),  # cce_distance's
                "n_sinks": float(len(self.sinks)),
                "sink_mass_final": float(curve[-1].sum()) if len(curve) else 0.0,
                "absorbed": float(k >= 0),
                "absorbing_sink": float(k),
                "time_to_absorption": float(when) if k >= 0 else float(t),
                "tail_support_size": float(np.count_nonzero(support)),
                "closure_violations": float(n_viol),
                "closure_violation_max_gain": float(max_gain),
                "leak_span": leak_span,
                "leak_drift": drift,
                "average_payoff": float(np.mean(payoff_sums[i]) / rounds),
            }
            for j, r in enumerate(regret):
                m[f"external_regret_player_{j}"] = float(r / rounds)
            out.append(m)
        return out
