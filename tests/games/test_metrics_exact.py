"""The episode metrics' fast paths give the doubles of the computations they replace.

- :class:`CCESolver` hands HiGHS the model and options ``scipy.optimize.linprog(method="highs")``
  hands it, and its distances equal linprog's bit for bit (one solver reused in any order);
  where HiGHS fails or linprog's own check would fail, linprog itself answers.
- :class:`SupportMetrics` equals ``closure_violation_stats``, ``preference_graph.leak`` and
  ``leak_drift`` on random supports of games with ties.
- :meth:`PlayStatistics.metrics` equals the per-function computation it replaced (``REFERENCE``),
  and :meth:`PlayStatistics.metrics_many`'s rows equal one-row calls.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

pytest.importorskip("networkx", reason="the games family needs the [games] extra: pip install 'icmlgym[games]'")

from scipy.optimize import _linprog_highs, linprog  # noqa: E402

from icmlgym.envs.games import metrics  # noqa: E402
from icmlgym.envs.games.generators import make_game  # noqa: E402
from icmlgym.envs.games.metrics import (  # noqa: E402
    CCESolver,
    PlayStatistics,
    SupportMetrics,
    absorption,
    cce_distance,
    cce_gap,
    cce_program,
    closure_violation_stats,
    deviation_gain_matrix,
    external_regret,
    leak_drift,
    tail_support,
)
from icmlgym.envs.games.normal_form import NormalFormGame  # noqa: E402
from icmlgym.envs.games.preference_graph import leak, sink_components  # noqa: E402

GAMES = [("random", 2, 3), ("random", 3, 3), ("zero_sum", 2, 4), ("coordination", 3, 2), ("potential", 2, 5),
         ("covariant", 3, 3), ("shapley", 2, 3), ("leaky_hexagon", 3, 2), ("random", 4, 2)]


def _game(name: str, players: int, actions: int, seed: int = 3) -> NormalFormGame:
    return make_game(name, n_players=players, n_actions=actions, seed=seed)


def _linprog_distance(sigma: np.ndarray, program: tuple) -> float:
    """cce_distance's linear program through linprog, as it was solved before :class:`CCESolver`."""
    a_ub, a_eq, c = program
    b_ub = np.concatenate([-sigma, sigma, np.zeros(a_ub.shape[0] - 2 * len(sigma))])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=[(0, None)] * len(c), method="highs")
    assert res.status == 0, res.message
    return float(max(0.0, res.fun))


def _sigmas(rng: np.random.Generator, p: int, n: int) -> list[np.ndarray]:
    out = []
    for k in range(n):
        s = rng.dirichlet(np.full(p, [0.05, 0.3, 1.0][k % 3]))
        if k % 4 == 3:  # exact zeros (-0.0 in the program's row bounds) and repeated values
            s = np.round(s, 1) + 0.0
            s = s / s.sum() if s.sum() > 0 else np.full(p, 1.0 / p)
        out.append(s)
    return out


def test_the_model_and_options_are_linprogs(monkeypatch) -> None:
    game = _game("random", 3, 3)
    G = deviation_gain_matrix(game)
    sigma = np.random.default_rng(0).dirichlet(np.ones(game.n_profiles))
    seen = []
    wrapper = _linprog_highs._highs_wrapper
    monkeypatch.setattr(_linprog_highs, "_highs_wrapper", lambda *a: seen.append(a) or wrapper(*a))
    want = _linprog_distance(sigma, cce_program(G))
    c, start, index, value, lhs, rhs, lb, ub, _, options = seen[0]
    solver = CCESolver(G)
    assert solver.distance(sigma) == want
    lp = solver._lp
    for ours, theirs in [(lp.col_cost_, c), (lp.a_matrix_.start_, start), (lp.a_matrix_.index_, index),
                         (lp.a_matrix_.value_, value), (lp.row_lower_, lhs), (lp.row_upper_, rhs),
                         (lp.col_lower_, lb), (lp.col_upper_, ub)]:
        ours = np.asarray(ours)
        assert ours.shape == theirs.shape and np.array_equal(ours, theirs) and np.array_equal(np.signbit(ours), np.signbit(theirs))
    set_by_linprog = {k: v for k, v in options.items() if v is not None and k != "sense"}
    assert set(set_by_linprog) == {"presolve", "highs_debug_level", "log_to_console", "output_flag", "simplex_strategy"}
    opts = solver._solver.getOptions()
    assert set_by_linprog["presolve"] is True and opts.presolve == "on"
    for k in ("highs_debug_level", "log_to_console", "output_flag", "simplex_strategy"):
        assert getattr(opts, k) == set_by_linprog[k], k


@pytest.mark.parametrize("name, players, actions", GAMES)
def test_distances_are_linprogs_bit_for_bit(name: str, players: int, actions: int) -> None:
    game = _game(name, players, actions)
    G = deviation_gain_matrix(game)
    program = cce_program(G)
    rng = np.random.default_rng(players * 10 + actions)
    sigmas = _sigmas(rng, game.n_profiles, 12)
    want = [_linprog_distance(s, program) for s in sigmas]
    assert any(w > 0 for w in want)
    solver = CCESolver(G, program)
    for order in (range(len(sigmas)), rng.permutation(len(sigmas))):  # one solver, solves in any order
        for i in order:
            got = solver.distance(sigmas[i])
            assert type(got) is float and got == want[i], (i, got, want[i])
    # cce_distance: 0 at a CCE without an LP, else the solver's value, with or without a kept program
    for s, w in zip(sigmas[:3], want):
        expected = 0.0 if cce_gap(game, s, G) <= 1e-12 else w
        assert cce_distance(game, s) == cce_distance(game, s, G, program) == cce_distance(game, s, G, solver) == expected


def test_linprog_answers_where_highs_does_not_report_success(monkeypatch) -> None:
    game = _game("random", 3, 3)
    G = deviation_gain_matrix(game)
    sigma = np.random.default_rng(1).dirichlet(np.ones(game.n_profiles))
    want = _linprog_distance(sigma, cce_program(G))
    calls = []
    real = metrics.linprog
    monkeypatch.setattr(metrics, "linprog", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert CCESolver(G).distance(sigma) == want and not calls
    solver = CCESolver(G)
    monkeypatch.setattr(solver, "_solve", lambda b_ub: None)  # not optimal, or outside linprog's tolerance
    assert solver.distance(sigma) == want and len(calls) == 1
    monkeypatch.setattr(metrics, "_highs", None)  # a scipy without the bindings
    assert CCESolver(G).distance(sigma) == want and len(calls) == 2
    monkeypatch.setattr(metrics, "linprog", lambda *a, **k: type("R", (), {"status": 2, "message": "infeasible"})())
    with pytest.raises(RuntimeError, match="CCE distance LP failed: infeasible"):
        CCESolver(G).distance(sigma)


def test_a_solver_copies_and_pickles_without_its_highs_objects() -> None:
    game = _game("random", 2, 3)
    solver = CCESolver(deviation_gain_matrix(game))
    sigma = np.array([1.0, 0, 0, 0, 0, 0, 0, 0, 0])
    d = solver.distance(sigma)
    for other in (copy.deepcopy(solver), pickle.loads(pickle.dumps(solver))):
        assert other._lp is None and other.distance(sigma) == d


def _integer_game(rng: np.random.Generator, shape: tuple[int, ...]) -> NormalFormGame:
    """Small integer payoffs: many ties, zero gains and equal maxima."""
    return NormalFormGame(rng.integers(-2, 3, size=(len(shape),) + shape).astype(np.float64))


@pytest.mark.parametrize("shape", [(2, 2), (3, 4), (2, 3, 2), (3, 3, 3), (2, 2, 2, 2)])
def test_support_metrics_are_the_profile_loops(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(sum(shape))
    for rep in range(8):
        game = _integer_game(rng, shape) if rep % 2 else NormalFormGame(rng.normal(size=(len(shape),) + shape))
        G = deviation_gain_matrix(game)
        tables = SupportMetrics(game, G)
        for _ in range(6):
            mask = rng.random(game.n_profiles) < rng.choice([0.1, 0.4, 0.9])
            mask[rng.integers(game.n_profiles)] = True
            support = [game.profile_at(k) for k in np.flatnonzero(mask)]
            tail = rng.dirichlet(np.ones(game.n_profiles))
            outside = tables.outside_span(mask)
            for tol in (0.0, 0.5, -0.5):
                assert tables.closure(mask, tol) == closure_violation_stats(game, support, tol)
            got = (tables.leak_span(mask, outside), tables.leak_drift(G @ tail, outside))
            want = (leak(game, support), leak_drift(game, tail, support, G))
            assert got == want and [type(v) for v in got] == [type(v) for v in want]


REFERENCE_KEYS = ("cce_distance", "closure_violations", "leak_span", "leak_drift", "tail_support_size")


def _reference_metrics(st: PlayStatistics) -> dict[str, float]:
    """PlayStatistics.metrics as it was computed before the fast paths: one function per metric, linprog's LP."""
    st._flush()
    t = max(st.t, 1)
    sigma = st.total / t
    tail = st.tail_total / max(st.t - st.tail_start, 1)
    regret = external_regret(st.game, sigma, t, st.G)
    curve = st.sink_mass_curve()
    k, when = absorption(curve, np.asarray(st.curve_times), st.absorption_threshold)
    support = tail_support(st.game, tail, st.support_tol)
    n_viol, max_gain = closure_violation_stats(st.game, support)
    gap = cce_gap(st.game, sigma, st.G)
    out = {
        "external_regret": float(np.mean(regret) / t),
        "max_external_regret": float(np.max(regret) / t),
        "cce_gap": gap,
        "cce_distance": 0.0 if gap <= 1e-12 else _linprog_distance(sigma, cce_program(st.G)),
        "n_sinks": float(len(st.sinks)),
        "sink_mass_final": float(curve[-1].sum()) if len(curve) else 0.0,
        "absorbed": float(k >= 0),
        "absorbing_sink": float(k),
        "time_to_absorption": float(when) if k >= 0 else float(st.t),
        "tail_support_size": float(len(support)),
        "closure_violations": float(n_viol),
        "closure_violation_max_gain": float(max_gain),
        "leak_span": leak(st.game, support) if support else 0.0,
        "leak_drift": leak_drift(st.game, tail, support, st.G) if support else 0.0,
        "average_payoff": float(np.mean(st.payoff_sum) / t),
    }
    for i, r in enumerate(regret):
        out[f"external_regret_player_{i}"] = float(r / t)
    return out


def _play(st: PlayStatistics, rng: np.random.Generator, horizon: int) -> None:
    game = st.game
    st.reset()
    conc = rng.choice([0.05, 0.5, 3.0])
    for _ in range(horizon):
        if rng.random() < 0.3:
            st.add(index=int(rng.integers(game.n_profiles)), payoffs=rng.random(game.n_players))
        else:
            xs = [rng.dirichlet(np.full(n, conc)) for n in game.n_actions]
            left = xs[0]
            for x in xs[1:-1]:
                left = np.multiply.outer(left, x).ravel()
            st.add_product(left, xs[-1], rng.random(game.n_players))


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    return list(a) == list(b) and all(type(a[k]) is type(b[k]) and (a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]))
                                      and np.signbit(a[k]) == np.signbit(b[k]) for k in a)


@pytest.mark.parametrize("name, players, actions", GAMES)
def test_metrics_are_the_reference_and_metrics_many_rows_are_metrics(name: str, players: int, actions: int) -> None:
    game = _game(name, players, actions, seed=5)
    rng = np.random.default_rng(players + 7 * actions)
    horizon = int(rng.integers(20, 90))
    st = PlayStatistics(game, horizon, sink_components(game), n_checkpoints=int(rng.integers(2, 9)))
    rows = []
    for _ in range(5):  # episodes of one statistics object: its kept solver and tables
        _play(st, rng, horizon)
        m = st.metrics()
        assert _same(m, _reference_metrics(st)), {k: (m[k], v) for k, v in _reference_metrics(st).items() if m[k] != v}
        rows.append((st.total.copy(), st.tail_total.copy(), st.sink_mass_curve(), list(st.curve_times), st.payoff_sum.copy(), m))
    assert {r[-1]["cce_distance"] > 0 for r in rows} == {True}
    assert all(r[3] == rows[0][3] for r in rows)
    many = st.metrics_many(horizon, np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows]),
                           np.stack([r[2] for r in rows]), rows[0][3], np.stack([r[4] for r in rows]))
    assert all(_same(a, r[-1]) for a, r in zip(many, rows))
