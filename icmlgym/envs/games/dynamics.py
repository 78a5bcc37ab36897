"""FTRL dynamics on normal-form games: discrete-time (batched over runs) and continuous-time.

Discrete time (:func:`run_ftrl`): every player plays ``x_t = Q(eta_t * S_t)`` where
``S_t`` is the sum of its past payoff vectors ``u_i(., x_{-i,s})`` and ``Q`` the
choice map of the regularizer — softmax for the entropic regularizer (Hedge /
exponential weights), Euclidean projection onto the simplex for the quadratic one.
``optimistic=True`` adds the last payoff vector once more (optimistic FTRL).
``M`` independent runs (different initial scores) advance together as arrays.

Continuous time (:func:`integrate_replicator`, :func:`integrate_ftrl`): the
replicator ODE ``dx_ia/dt = x_ia (u_i(a, x_{-i}) - u_i(x))`` and the FTRL ODE in
score space ``dy_i/dt = u_i(., Q(y)_{-i})``, integrated with scipy's ``solve_ivp``.
Entropic continuous FTRL *is* the replicator dynamics (``x = softmax(y)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import numpy as np
from scipy.integrate import solve_ivp

from icmlgym.envs.games.normal_form import NormalFormGame

Regularizer = Literal["entropic", "euclidean"]


# ------------------------------------------------------------------ choice maps
def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax (the entropic choice map), stable for large scores."""
    # the ufuncs' reductions (what ndarray.max/sum call, without their Python wrappers): the same values
    z = z - np.maximum.reduce(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.add.reduce(e, axis=-1, keepdims=True)


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Row-wise Euclidean projection onto the probability simplex (Duchi et al. 2008)."""
    v = np.asarray(v, dtype=np.float64)
    flat = v.reshape(-1, v.shape[-1])
    n = flat.shape[1]
    u = -np.sort(-flat, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    k = np.arange(1, n + 1)
    cond = u - css / k > 0
    rho = n - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(len(flat)), rho] / (rho + 1)
    return np.maximum(flat - theta[:, None], 0.0).reshape(v.shape)


def choice_map(regularizer: Regularizer) -> Callable[[np.ndarray], np.ndarray]:
    """``Q`` for a regularizer name: ``entropic`` -> softmax, ``euclidean`` -> simplex projection."""
    if regularizer == "entropic":
        return softmax
    if regularizer == "euclidean":
        return project_simplex
    raise ValueError(f"unknown regularizer {regularizer!r}; use 'entropic' or 'euclidean'")


def step_size(eta: float, schedule: str, t: int) -> float:
    """The learning rate at round ``t`` (1-based): ``constant`` eta, ``sqrt`` eta/sqrt(t), ``linear`` eta/t."""
    if schedule == "constant":
        return eta
    if schedule == "sqrt":
        return eta / np.sqrt(t)
    if schedule == "linear":
        return eta / t
    raise ValueError(f"unknown step-size schedule {schedule!r}; use 'constant', 'sqrt' or 'linear'")


# ------------------------------------------------------------- joint quantities
def joint_distribution(strategies: Sequence[np.ndarray]) -> np.ndarray:
    """The product distribution over pure profiles, C-order: shape ``(P,)`` or ``(M, P)`` for a batch."""
    xs = [np.asarray(x, dtype=np.float64) for x in strategies]
    batched = xs[0].ndim == 2
    if not batched:
        xs = [x[None] for x in xs]
    joint = xs[0]
    for x in xs[1:]:
        joint = (joint[:, :, None] * x[:, None, :]).reshape(joint.shape[0], -1)
    return joint if batched else joint[0]


def random_strategies(game: NormalFormGame, n_runs: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Mixed strategies drawn uniformly from each player's simplex (Dirichlet(1, ..., 1))."""
    return [rng.dirichlet(np.ones(n), size=n_runs) for n in game.n_actions]


# ------------------------------------------------------------- discrete time
@dataclass
class FTRLResult:
    """What :func:`run_ftrl` returns (arrays with a leading run axis ``M``).

    Attributes:
        final: per player, the last mixed strategy, ``(M, n_i)``.
        record_times: the rounds at which strategies were recorded.
        history: per player, recorded strategies, ``(K, M, n_i)`` (empty when ``record_every=0``).
        tail_joint: the product distribution averaged over the last ``tail`` fraction of rounds, ``(M, P)``.
        average_strategies: per player, the time-averaged mixed strategy, ``(M, n_i)``.
        regret: external regret of every player over the run (expected payoffs), ``(M, N)``.
        rounds: the number of rounds played.
    """

    final: list[np.ndarray]
    record_times: np.ndarray
    history: list[np.ndarray]
    tail_joint: np.ndarray
    average_strategies: list[np.ndarray]
    regret: np.ndarray
    rounds: int


def run_ftrl(
    game: NormalFormGame,
    rounds: int,
    eta: float = 0.1,
    regularizer: Regularizer = "entropic",
    n_runs: int = 1,
    init_scores: Sequence[np.ndarray] | None = None,
    init_strategies: Sequence[np.ndarray] | None = None,
    seed: int | np.random.Generator | None = None,
    schedule: str = "constant",
    optimistic: bool = False,
    record_every: int = 0,
    tail: float = 0.2,
) -> FTRLResult:
    """Run full-information FTRL for every player of ``game`` for ``rounds`` rounds, ``n_runs`` runs at once.

    Args:
        game: the game.
        rounds: number of rounds ``T`` (>= 1).
        eta: base learning rate (> 0); the round-``t`` rate follows ``schedule``.
        regularizer: ``entropic`` (Hedge) or ``euclidean`` (projected FTRL).
        n_runs: independent runs ``M`` advanced together.
        init_scores: per player, initial scores ``(M, n_i)`` (the dual state ``S_0``).
        init_strategies: per player, initial mixed strategies ``(M, n_i)``; for the entropic
            regularizer they become scores ``log(x) / eta`` (so round 1 plays them exactly).
            Default: uniform random points of the simplices drawn from ``seed``.
        seed: seed of the random initial strategies.
        schedule: ``constant``, ``sqrt`` or ``linear`` step sizes.
        optimistic: optimistic FTRL (the last payoff vector counted twice in the scores).
        record_every: keep the strategies every this many rounds (0: keep none).
        tail: the fraction of final rounds whose joint distribution is averaged into ``tail_joint``.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    if eta <= 0:
        raise ValueError(f"eta must be positive, got {eta}")
    if not 0.0 < tail <= 1.0:
        raise ValueError(f"tail must lie in (0, 1], got {tail}")
    Q = choice_map(regularizer)
    n = game.n_players
    if init_scores is not None:
        scores = [np.array(s, dtype=np.float64, ndmin=2) for s in init_scores]
    else:
        if init_strategies is None:
            init_strategies = random_strategies(game, n_runs, np.random.default_rng(seed) if not isinstance(seed, np.random.Generator) else seed)
        xs0 = [np.array(x, dtype=np.float64, ndmin=2) for x in init_strategies]
        if regularizer == "entropic":
            scores = [np.log(np.clip(x, 1e-300, None)) / step_size(eta, schedule, 1) for x in xs0]
        else:
            scores = [x / step_size(eta, schedule, 1) for x in xs0]
    if len(scores) != n or any(s.shape[1] != k for s, k in zip(scores, game.n_actions)):
        raise ValueError(f"initial scores/strategies must be one (M, n_i) array per player, actions {game.n_actions}")
    m = scores[0].shape[0]
    tail_start = rounds - max(1, int(round(tail * rounds)))
    tail_joint = np.zeros((m, game.n_profiles))
    # all players' scores in one (N, M, n_max) array, padded with a very negative score that
    # both choice maps send to probability 0, so each round needs one choice-map call
    na = game.n_actions
    width = max(na)
    pad = -1e30
    S = np.full((n, m, width), pad)
    for i, s in enumerate(scores):
        S[i, :, : na[i]] = s
    U = np.zeros((n, m, width))
    last_U = np.zeros((n, m, width))
    sum_X = np.zeros((n, m, width))
    played = np.zeros((n, m))
    S0 = S.copy()
    history: list[np.ndarray] = []
    times = []
    for t in range(1, rounds + 1):
        e = step_size(eta, schedule, t)
        X = Q(e * (S + last_U)) if optimistic and t > 1 else Q(e * S)
        xs = [X[i, :, : na[i]] for i in range(n)]
        if record_every and (t - 1) % record_every == 0:
            times.append(t - 1)
            history.append(X.copy())
        us = game.expected_payoffs(xs)
        for i in range(n):
            U[i, :, : na[i]] = us[i]
        S += U
        sum_X += X
        played += np.einsum("imk,imk->im", X, U)
        if optimistic:
            last_U = U.copy()
        if t - 1 >= tail_start:
            tail_joint += joint_distribution(xs)
    cum_u = S - S0
    regret = np.column_stack([cum_u[i, :, : na[i]].max(axis=1) - played[i] for i in range(n)])
    return FTRLResult(
        final=[X[i, :, : na[i]].copy() for i in range(n)],
        record_times=np.asarray(times, dtype=int),
        history=[
            np.stack([h[i, :, : na[i]] for h in history]) if history else np.zeros((0, m, na[i])) for i in range(n)
        ],
        tail_joint=tail_joint / (rounds - tail_start),
        average_strategies=[sum_X[i, :, : na[i]] / rounds for i in range(n)],
        regret=regret,
        rounds=rounds,
    )


# ------------------------------------------------------------ continuous time
def _split(flat: np.ndarray, n_actions: Sequence[int]) -> list[np.ndarray]:
    return np.split(np.asarray(flat, dtype=np.float64), np.cumsum(n_actions)[:-1])


def replicator_field(game: NormalFormGame, state: np.ndarray) -> np.ndarray:
    """The multi-population replicator vector field at a concatenated state ``(x_1, ..., x_N)``."""
    xs = _split(state, game.n_actions)
    us = game.expected_payoffs(xs)
    return np.concatenate([x * (u - x @ u) for x, u in zip(xs, us)])


@dataclass
class ODETrajectory:
    """A solved trajectory: times ``t`` (K,), and per player the mixed strategies ``(K, n_i)``."""

    t: np.ndarray
    strategies: list[np.ndarray]
    success: bool
    message: str


def integrate_replicator(
    game: NormalFormGame,
    x0: Sequence[np.ndarray],
    t_final: float,
    t_eval: np.ndarray | None = None,
    method: str = "RK45",
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> ODETrajectory:
    """Integrate the replicator ODE from mixed strategies ``x0`` (one per player) up to ``t_final``."""
    y0 = np.concatenate([np.asarray(x, dtype=np.float64) for x in x0])
    if len(y0) != sum(game.n_actions):
        raise ValueError(f"x0 must hold one mixed strategy per player with actions {game.n_actions}")
    sol = solve_ivp(lambda t, y: replicator_field(game, y), (0.0, t_final), y0, t_eval=t_eval, method=method, rtol=rtol, atol=atol)
    parts = np.split(sol.y.T, np.cumsum(game.n_actions)[:-1], axis=1)
    return ODETrajectory(sol.t, parts, bool(sol.success), str(sol.message))


def integrate_ftrl(
    game: NormalFormGame,
    y0: Sequence[np.ndarray],
    t_final: float,
    regularizer: Regularizer = "entropic",
    t_eval: np.ndarray | None = None,
    method: str = "RK45",
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> ODETrajectory:
    """Integrate continuous-time FTRL in score space, ``dy_i/dt = u_i(., Q(y)_{-i})``, from scores ``y0``.

    Returns the mixed strategies ``Q(y(t))``. For ``regularizer="entropic"`` this is the
    replicator dynamics started at ``softmax(y0)``; scores never saturate, so
    trajectories that approach the boundary stay accurate.
    """
    Q = choice_map(regularizer)
    n_actions = game.n_actions
    z0 = np.concatenate([np.asarray(y, dtype=np.float64) for y in y0])
    if len(z0) != sum(n_actions):
        raise ValueError(f"y0 must hold one score vector per player with actions {n_actions}")

    def rhs(t: float, z: np.ndarray) -> np.ndarray:
        xs = [Q(y[None])[0] for y in _split(z, n_actions)]
        return np.concatenate(game.expected_payoffs(xs))

    sol = solve_ivp(rhs, (0.0, t_final), z0, t_eval=t_eval, method=method, rtol=rtol, atol=atol)
    ys = np.split(sol.y.T, np.cumsum(n_actions)[:-1], axis=1)
    return ODETrajectory(sol.t, [Q(y) for y in ys], bool(sol.success), str(sol.message))
