"""Vector twins of the linear-bandit agents (FairLinearBandit-v0): N seeds in lock step, bit for bit.

The single agents' per-round linear algebra is a handful of BLAS calls on a ``d x d``
matrix and a ``K x d`` arm matrix; :class:`VectorRidgeStatistics` does the same calls
for N seeds in one stacked ``np.matmul`` each. numpy's stacked matmul calls the same
BLAS kernel per matrix as the single 2-D call (``gemv`` for a matrix times a vector,
``dot`` for two vectors), so each seed's doubles are the single agent's; what is not
batched the same way stays per seed: a product of the arm matrix with a stacked
``(d, N)`` matrix (one ``gemm``, whose sums are ordered differently), ``X[active] @ theta``
on a subset of rows (a product on the full matrix then indexed gives other doubles),
and the exact refreshes (``inv``, ``einsum``), which run every 2,000 rounds.
``tests/fairbandit/test_vector.py`` checks the records against single runs.

- :class:`VectorFairLinBandit` (``FairLinBanditUCB`` / ``FairLinBanditPE``): the
  exploration rounds and the UCB base batched (the surviving arm sets differ per seed:
  seeds with as many surviving arms share one stacked product); the phased-elimination
  base keeps one :class:`PhasedEliminationCore` per seed, whose rounds :class:`PhaseQueues`
  reads in bulk (the cores run only at their phase ends).
- :class:`PerSeedLinearAgents`: N single agents, for agents whose work is per-seed
  optimisation (designs, Cholesky factors): the env and the runner's loop are batched; a
  subclass whose agents play phase queues (LinNash, phased elimination) has them read by
  :class:`PhaseQueues`, the others step their agents one by one.

The twins that solve designs give all their seeds one
:class:`~icmlgym.envs.fairbandit.design.SharedDesigns` (the twin's own, for its batch): the
seeds ask for the design of the same arms (all of them at the start, the same survivors
later) often, and each distinct problem is solved once.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from icmlgym.agents.fairbandit import FairLinBandit
from icmlgym.agents.linear_bandit import DEFAULT_HORIZON, DEFAULT_NOISE_SD, LinearBanditAgent, PhasedEliminationCore, oful_radius
from icmlgym.agents.protocol import AgentSpec
from icmlgym.agents.vector import PerSeedAgents, VectorBaseAgent
from icmlgym.envs.fairbandit.design import SharedDesigns


class VectorRidgeStatistics:
    """:class:`~icmlgym.agents.linear_bandit.RidgeStatistics` for N seeds over one arm matrix.

    ``Vinv`` is ``(N, d, d)``, ``b`` ``(N, d)``, ``w`` and ``counts`` ``(N, K)``; every seed
    adds one pull per round, so ``n`` is shared.
    """

    def __init__(self, arms: np.ndarray, num: int, reg: float = 1.0, refresh_every: int = 2000) -> None:
        if reg <= 0:
            raise ValueError(f"the ridge regulariser must be positive, got {reg}")
        self.X = arms
        self.num = num
        self.d = arms.shape[1]
        self.reg = float(reg)
        self.counts = np.zeros((num, arms.shape[0]))
        self.Vinv = np.broadcast_to(np.eye(self.d) / self.reg, (num, self.d, self.d)).copy()
        self.b = np.zeros((num, self.d))
        self.w = np.broadcast_to(np.einsum("ij,ij->i", arms, arms) / self.reg, (num, arms.shape[0])).copy()
        self.n = 0
        self.refresh_every = int(refresh_every)
        self._rows = np.arange(num)
        self._flat_counts = self.counts.reshape(-1)  # a view: row i starts at i * K
        self._offsets = self._rows * arms.shape[0]
        self._u_scaled = np.empty((num, self.d))
        self._outer = np.empty((num, self.d, self.d))
        self._xu = np.empty((num, arms.shape[0], 1))

    def add(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        x = np.take(self.X, arms, axis=0)  # (N, d)
        self._flat_counts[self._offsets + arms] += 1.0
        self.b += rewards[:, None] * x
        self.n += 1
        if self.n % self.refresh_every == 0:
            self.refresh()
            return
        u = np.matmul(self.Vinv, x[:, :, None])  # per seed: Vinv @ x (gemv)
        inv_denom = 1.0 / (1.0 + np.matmul(x[:, None, :], u)[:, 0, 0])  # per seed: x @ u (dot)
        u = u[:, :, 0]
        # the single update's (u[:, None] * inv_denom) * u, written into buffers
        np.multiply(u, inv_denom[:, None], out=self._u_scaled)
        np.multiply(self._u_scaled[:, :, None], u[:, None, :], out=self._outer)
        self.Vinv -= self._outer
        xu = np.matmul(self.X, u[:, :, None], out=self._xu)[:, :, 0]  # per seed: X @ u (gemv; X @ u.T would be one gemm)
        np.multiply(xu, xu, out=xu)
        xu *= inv_denom[:, None]
        self.w -= xu

    def refresh(self) -> None:
        for i in range(self.num):  # RidgeStatistics.refresh seed by seed (inv, einsum: kept exact per seed)
            V = self.reg * np.eye(self.d) + self.X.T @ (self.counts[i][:, None] * self.X)
            self.Vinv[i] = np.linalg.inv(V)
            self.w[i] = np.einsum("ij,jk,ik->i", self.X, self.Vinv[i], self.X)

    @property
    def theta(self) -> np.ndarray:
        return np.matmul(self.Vinv, self.b[:, :, None])[:, :, 0]


def first_of(info: dict[str, Any], key: str) -> Any:
    """A reset-info entry of sub-env 0 (a vector env gives one per sub-env; all are equal here)."""
    v = info[key]
    return np.asarray(v).reshape(-1)[0]


class VectorLinearBanditAgent(VectorBaseAgent):
    """:class:`~icmlgym.agents.linear_bandit.LinearBanditAgent` for N seeds: arms and horizon on the first ``act``."""

    def __init__(self, noise_sd: float = DEFAULT_NOISE_SD, delta: float | None = None) -> None:
        super().__init__()  # the arguments are checked by the twin building its single agent
        self.noise_sd = float(noise_sd)
        self.delta_arg = delta
        self._ready = False

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        self._ready = False
        self.t = 0
        self._rows = np.arange(self.num)

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        if not self._ready:
            arms = np.asarray(obs["arms"])
            self.X = np.array(arms[0], dtype=np.float64)  # every sub-env plays the same instance
            self.K, self.d = self.X.shape
            if "horizon" in info:
                self.T = int(first_of(info, "horizon"))
            elif self.spec is not None and "horizon" in self.spec.env_kwargs:
                self.T = int(self.spec.env_kwargs["horizon"])
            else:
                self.T = DEFAULT_HORIZON
            self.delta = self.delta_arg if self.delta_arg is not None else 1.0 / self.T
            self._setup()
            self._ready = True
        return self._choose()

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        self._observe(np.asarray(actions, dtype=np.int64), np.asarray(rewards, dtype=np.float64))
        self.t += 1

    def _setup(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _choose(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _observe(self, arms: np.ndarray, rewards: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class VectorUCBChoice:
    """:class:`~icmlgym.agents.linear_bandit.UCBCore`'s ``choose`` for N seeds, each with its own active arms.

    Seeds with the same number of active arms share one stacked ``(n, k, d) @ (n, d)`` product
    (each matrix the single core's contiguous ``X[active]``); all-arm seeds use ``X`` itself."""

    def __init__(self, stats: VectorRidgeStatistics, actives: list[np.ndarray], noise_sd: float, theta_norm: float,
                 delta: float, alpha: float = 1.0) -> None:
        self.stats = stats
        X = stats.X
        self.noise_sd, self.theta_norm, self.delta, self.alpha = noise_sd, theta_norm, delta, alpha
        self.arm_norm = float(np.sqrt((X**2).sum(axis=1).max()))
        K = X.shape[0]
        self.groups: list[tuple[np.ndarray, np.ndarray | None, np.ndarray | None]] = []  # (seeds, active (n, k), Xa)
        by_k: dict[int, list[int]] = {}
        for i, a in enumerate(actives):
            by_k.setdefault(len(a), []).append(i)
        for k, seeds in by_k.items():
            idx = np.asarray(seeds)
            if k == K:
                self.groups.append((idx, None, None))
            else:
                act = np.stack([np.asarray(actives[i], dtype=np.int64) for i in seeds])
                self.groups.append((idx, act, X[act]))  # (n, k, d), each (k, d) block contiguous
        self.all_arms = len(self.groups) == 1 and self.groups[0][1] is None

    def choose(self) -> np.ndarray:
        s = self.stats
        beta = self.alpha * oful_radius(s.n, s.d, self.noise_sd, s.reg, self.arm_norm, self.theta_norm, self.delta)
        theta = s.theta
        if self.all_arms:
            bonus = np.maximum(s.w, 0.0)
            np.sqrt(bonus, out=bonus)
            bonus *= beta
            ucb = np.matmul(s.X, theta[:, :, None])[:, :, 0]
            ucb += bonus
            return ucb.argmax(axis=1)
        out = np.empty(s.num, dtype=np.int64)
        for seeds, act, Xa in self.groups:
            th = theta[seeds][:, :, None]
            if act is None:
                ucb = np.matmul(s.X, th)[:, :, 0] + beta * np.sqrt(np.maximum(s.w[seeds], 0.0))
                out[seeds] = ucb.argmax(axis=1)
            else:
                w = np.take_along_axis(s.w[seeds], act, axis=1)
                ucb = np.matmul(Xa, th)[:, :, 0] + beta * np.sqrt(np.maximum(w, 0.0))
                out[seeds] = act[np.arange(len(seeds)), ucb.argmax(axis=1)]
        return out


class PhaseQueues:
    """The rounds of N per-seed phase queues (phased elimination, LinNash) read in bulk.

    Each seed's player (a single agent or a :class:`PhasedEliminationCore`) plays
    ``player.queue`` in order (``player.pos`` is the next entry), keeps the phase's pulls in
    ``player._pulled`` / ``player._rewards``, and its ``choose`` ends the phase on those and
    starts the next once the queue is used up. Between two phase ends (of any seed) every
    seed only reads its queue, so those rounds' actions are one ``(L, N)`` slab; pulls and
    rewards go into ``(T, N)`` buffers and reach a player, as the lists it would have built
    itself, when its phase ends. A player whose ``settled`` is true plays its one arm for the
    rest of the episode and is not asked again. The players' ``choose`` for round ``t0`` has run.
    ``ahead``, if given, is called with the seeds whose phases end in a round, after their
    pulls reached them and before their ``choose`` runs (to solve their next designs together).
    """

    def __init__(self, players: Sequence[Any], choose: Sequence[Callable[[], int]], t0: int, horizon: int,
                 ahead: Callable[[list[int]], None] | None = None) -> None:
        self.players, self.choose = list(players), list(choose)
        self.ahead = ahead
        n = len(self.players)
        self.horizon = int(horizon)
        self.arms = np.zeros((self.horizon, n), dtype=np.int64)
        self.rewards = np.zeros((self.horizon, n))
        self.start = np.full(n, t0, dtype=np.int64)  # first round of each seed's current phase
        self.base = np.zeros(n, dtype=np.int64)  # the round of queue[0]
        self.end = np.zeros(n, dtype=np.int64)  # the round after the queue's last entry
        self.settled = np.full(n, -1, dtype=np.int64)  # a settled seed's arm
        for i in range(n):
            self._follow(i, t0)
        self._slab(t0)

    def _follow(self, i: int, t: int) -> None:
        p = self.players[i]
        if getattr(p, "settled", False):
            self.settled[i] = int(p.queue[p.pos - 1])
            self.end[i] = self.horizon
        else:
            self.base[i] = t - (p.pos - 1)
            self.end[i] = self.base[i] + len(p.queue)

    def _slab(self, t: int) -> None:
        self.w0, self.w1 = t, min(int(self.end.min()), self.horizon)
        slab = np.empty((max(self.w1 - t, 1), len(self.players)), dtype=np.int64)
        for i, p in enumerate(self.players):
            if self.settled[i] >= 0:
                slab[:, i] = self.settled[i]
            else:
                slab[:, i] = p.queue[t - self.base[i]:t - self.base[i] + len(slab)]
        self.slab = slab

    def actions(self, t: int) -> np.ndarray:
        """Every seed's arm for round ``t`` (rounds come in order)."""
        if t >= self.w1:
            self._phase_ends(t)
        return self.slab[t - self.w0].copy()

    def block(self, t: int, limit: int) -> np.ndarray:
        """Every seed's arms for rounds ``t, t + 1, ...``, ``(B, N)``: up to the next phase end of any seed, at most
        ``limit`` (>= 1) rounds. No seed's arm in them depends on their rewards (see :meth:`observe_block`)."""
        if t >= self.w1:
            self._phase_ends(t)
        return self.slab[t - self.w0:min(self.w1, t + limit) - self.w0].copy()

    def _phase_ends(self, t: int) -> None:
        """End the phases that end at round ``t`` (their pulls up to round ``t - 1`` observed) and start the next."""
        ending = np.flatnonzero(self.end <= t).tolist()
        for i in ending:
            p, s = self.players[i], int(self.start[i])
            p._pulled, p._rewards = self.arms[s:t, i].tolist(), self.rewards[s:t, i].tolist()
            p.pos = len(p.queue)
        if self.ahead is not None:
            self.ahead(ending)
        for i in ending:
            self.choose[i]()  # ends the phase and starts the next (whose first entry is round t)
            self.start[i] = t
            self._follow(i, t)
        self._slab(t)

    def observe(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        """Round ``t``'s pulls and rewards, for the players' phase ends."""
        self.arms[t] = arms
        self.rewards[t] = rewards

    def observe_block(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        """Rounds ``t, ..., t + B - 1``'s pulls and rewards (``(B, N)`` each), as ``B`` :meth:`observe` calls."""
        self.arms[t:t + len(arms)] = arms
        self.rewards[t:t + len(arms)] = rewards


class VectorFairLinBandit(VectorLinearBanditAgent):
    """N seeds of :class:`~icmlgym.agents.fairbandit.FairLinBandit` (``FairLinBanditUCB``, ``FairLinBanditPE``)."""

    def __init__(self, **kwargs: Any) -> None:
        single = FairLinBandit(**kwargs)  # the single agent's defaults, checks and messages
        super().__init__(single.noise_sd, single.delta_arg)
        self.base, self.explore_rounds, self.uniform_mix = single.base, single.explore_rounds, single.uniform_mix
        self.reg, self.theta_norm = single.reg, single.theta_norm
        self.designs = SharedDesigns()  # this batch's: its seeds' phased-elimination cores ask it

    def _setup(self) -> None:
        t1 = self.explore_rounds or math.ceil(math.sqrt(self.d * self.T))
        self.t1 = min(int(t1), self.T)
        lam = self.designs.g_optimal(self.X)  # a function of the arms alone: the same for every seed
        queues = []
        for rng in self.rngs:  # the single agent's draws, in its order
            uniform = rng.random(self.t1) < self.uniform_mix
            queues.append(np.where(uniform, rng.integers(0, self.K, self.t1), rng.choice(self.K, self.t1, p=lam)))
        self.queue = np.ascontiguousarray(np.stack(queues).astype(np.int64).T)  # (t1, N)
        self.stats = VectorRidgeStatistics(self.X, self.num, self.reg)
        self.ucb: VectorUCBChoice | None = None
        self.pe: list[PhasedEliminationCore] | None = None
        self.phases: PhaseQueues | None = None
        self.arm_norm = float(np.sqrt((self.X**2).sum(axis=1).max()))

    def _start_base(self) -> None:
        s = self.stats
        s.refresh()
        radius = oful_radius(s.n, self.d, self.noise_sd, self.reg, self.arm_norm, self.theta_norm, self.delta)
        theta = s.theta
        actives, eps0s = [], []
        for i in range(self.num):  # FairLinBandit._start_base seed by seed
            width = radius * np.sqrt(np.maximum(s.w[i], 0.0))
            est = self.X @ theta[i]
            keep = est + width >= np.max(est - width)
            active = np.flatnonzero(keep)
            actives.append(active)
            eps0s.append(min(0.5, float(width[active].max()) / 2.0))
        if self.base == "ucb":
            self.ucb = VectorUCBChoice(s, actives, self.noise_sd, self.theta_norm, self.delta)
        else:
            self.pe = [PhasedEliminationCore(self.X, a, self.noise_sd, self.delta, eps0=max(e, 1e-3), designs=self.designs)
                       for a, e in zip(actives, eps0s)]
            self.designs.prefetch([self.X[a] for a in actives if len(a) > 1])  # every seed's first design, together
            for c in self.pe:
                c.choose()  # round t1: the first phase
            self.phases = PhaseQueues(self.pe, [c.choose for c in self.pe], self.t, self.T, ahead=self._next_designs)

    def _next_designs(self, seeds: list[int]) -> None:
        """End the phases of ``seeds`` and solve their next phases' designs together."""
        cores = [self.pe[i] for i in seeds]
        for c in cores:
            c._end_phase()
        self.designs.prefetch([c.X[c.active] for c in cores if len(c.active) > 1])

    def _choose(self) -> np.ndarray:
        if self.t < self.t1:
            return self.queue[self.t].copy()
        if self.ucb is None and self.pe is None:
            self._start_base()
        if self.ucb is not None:
            return self.ucb.choose()
        return self.phases.actions(self.t)

    def _observe(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        if self.t < self.t1 or self.phases is None:
            self.stats.add(arms, rewards)
        else:
            self.phases.observe(self.t, arms, rewards)

    def act_block(self, limit: int) -> np.ndarray | None:
        """The next rounds' arms, ``(B, N)`` with ``1 <= B <= limit``, where none depends on what those rounds return:
        the rest of the exploration queue, then phased elimination's rounds up to the next phase end of any seed.
        None before the first :meth:`act` (which reads the arms) and under the UCB base (each round's choice
        reads the last reward). See :mod:`icmlgym.agents.vector`."""
        if not self._ready:
            return None
        if self.t < self.t1:
            return self.queue[self.t:min(self.t1, self.t + limit)].copy()
        if self.ucb is None and self.pe is None:
            self._start_base()
        if self.ucb is not None:
            return None
        return self.phases.block(self.t, limit)

    def update_block(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        """The rounds of a block from :meth:`act_block` (``(B, N)`` arms and rewards), as ``B`` :meth:`update` calls."""
        arms, rewards = np.asarray(actions, dtype=np.int64), np.asarray(rewards, dtype=np.float64)
        n = 0
        while n < len(arms) and (self.t < self.t1 or self.phases is None):  # ridge updates: one round at a time
            self.stats.add(arms[n], rewards[n])
            self.t += 1
            n += 1
        if n < len(arms):
            self.phases.observe_block(self.t, arms[n:], rewards[n:])
            self.t += len(arms) - n


class VectorFairLinBanditUCB(VectorFairLinBandit):
    """N seeds of :class:`~icmlgym.agents.fairbandit.FairLinBanditUCB`."""

    def __init__(self, **kwargs: Any) -> None:
        if "base" in kwargs:
            raise TypeError("FairLinBanditUCB fixes base='ucb'; use FairLinBandit(base=...) to choose")
        super().__init__(base="ucb", **kwargs)


class VectorFairLinBanditPE(VectorFairLinBandit):
    """N seeds of :class:`~icmlgym.agents.fairbandit.FairLinBanditPE`."""

    def __init__(self, **kwargs: Any) -> None:
        if "base" in kwargs:
            raise TypeError("FairLinBanditPE fixes base='pe'; use FairLinBandit(base=...) to choose")
        super().__init__(base="pe", **kwargs)


class PerSeedLinearAgents(PerSeedAgents):
    """N single :class:`LinearBanditAgent` instances (subclasses set ``single``).

    Each seed's agent is the single agent itself (reset with its seed, fed its sub-env's
    observation on the first ``act``), so its choices are its single run's by construction;
    afterwards only its ``_choose`` / ``_observe`` run, without building per-seed observations,
    or, where ``_players`` names each agent's phase-queue player, :class:`PhaseQueues` reads
    their queues and runs the players at their phase ends only. All seeds' agents share
    the twin's :class:`~icmlgym.envs.fairbandit.design.SharedDesigns`."""

    single: type[LinearBanditAgent] = LinearBanditAgent

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.designs = SharedDesigns()

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        for a in self.agents:
            a.designs = self.designs
        self._started = False
        self.phases: PhaseQueues | None = None
        self.t = 0

    def _players(self) -> tuple[list[Any], list[Callable[[], int]]] | None:
        """Each agent's phase-queue player and its choose method, or None to step the agents."""
        return None

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        if not self._started:
            self._started = True
            arms = np.asarray(obs["arms"])
            info0 = {"horizon": int(first_of(info, "horizon"))} if "horizon" in info else {}
            first = np.array([a.act({"arms": arms[i]}, info0) for i, a in enumerate(self.agents)], dtype=np.int64)
            players = self._players()
            if players is not None:
                self.phases = PhaseQueues(*players, 0, self.agents[0].T)
            return first
        if self.phases is not None:
            return self.phases.actions(self.t)
        return np.array([a._choose() for a in self.agents], dtype=np.int64)

    def act_block(self, limit: int) -> np.ndarray | None:
        """The next rounds' arms from the players' phase queues (:meth:`PhaseQueues.block`), or None where the
        agents are stepped (and before the first :meth:`act`). See :mod:`icmlgym.agents.vector`."""
        return None if self.phases is None else self.phases.block(self.t, limit)

    def update_block(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        """The rounds of a block from :meth:`act_block`, as ``B`` :meth:`update` calls."""
        self.phases.observe_block(self.t, np.asarray(actions), np.asarray(rewards, dtype=np.float64))
        self.t += len(actions)

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        if self.phases is not None:
            self.phases.observe(self.t, np.asarray(actions), np.asarray(rewards, dtype=np.float64))
        else:
            for a, act, r in zip(self.agents, np.asarray(actions).tolist(), np.asarray(rewards, dtype=np.float64).tolist()):
                a.update(None, act, r, None, False, False, {})
        self.t += 1


__all__ = ["PerSeedLinearAgents", "PhaseQueues", "VectorFairLinBandit", "VectorFairLinBanditPE", "VectorFairLinBanditUCB", "VectorRidgeStatistics"]
