"""SketchAttack-v0 for N seeds at once: the episodes of N attackers against N defenders in arrays.

``gym.make_vec("icmlgym/SketchAttack-v0", num_envs=N, vectorization_mode="vector_entry_point")``
builds :class:`SketchAttackVectorEnv`. Sub-env ``i`` behaves exactly as a
:class:`~icmlgym.envs.sketch.attack_env.SketchAttackEnv` reset with ``seed[i]``: it draws
its defender's secret seed from the same generator, and every observation, reward, flag,
cost counter and end-of-episode metric is the single env's, bit for bit
(``tests/sketch/test_vector.py``).

**Ragged ends.** A sub-env ends when its attack succeeds (terminated) or when its update or
query budget is spent (truncated), so the seeds end at different steps: the class declares
``ragged_ends = True`` (see :mod:`icmlgym.runner.batched`). After sub-env ``i`` ends, ``step``
ignores action ``i``, returns reward 0.0 for it and keeps its flags, observation, cost
counters and metrics as they were at its end. Autoreset is disabled (reset explicitly, as the
runner does per episode).

**What is stacked.** The true vector (the single env's :class:`ExactSketch`) of all seeds is
one ``(N, n_keys)`` array with one running total per seed; an update or reset of every seed is
a few array operations, and the per-key ``f`` is the single env's elementwise (for ``lp``,
``float(v) ** q`` per element, Python's ``pow``, as the single sketch computes it). Two
defender kinds are stacked the same way:

- ``bernoulli``: each seed's sampled keys are one row of an ``(N, n_keys)`` mask hashed at reset
  with :func:`~icmlgym.envs.sketch.sketches.hash_below` (the single sketch's
  ``hash_unit(key, salt) < p``, equal value by value); a sampled key holds exactly its true
  value, so the sketch's running total takes the truth's ``f`` gains of its sampled keys, in the
  single sketch's order (adding or subtracting 0.0 for the others, which changes no total);
- ``exact``: its state is the true vector's (the same operations give the same totals).

Every other defender (``bottomk``, ``sample-hold``, ``switching``, ``dp-median``, ``dp-tree``,
``linear``, ``theta``, and any defender with output ``rounding``) is one single-env defender
object per seed, built by the single env's own ``make_defender`` call and stepped seed by seed:
their state is per-seed generators (sample-and-hold's geometric draws, the tree's Laplace
noise, the DP median's choices), order-dependent float sums (bottom-k's evictions), per-seed
stable columns (linear) or an external library object (Theta), which arrays would not
reproduce draw for draw. The env's own bookkeeping (budgets, errors, metrics) stays in arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from icmlgym.envs.sketch.attack_env import OP_INCREMENT, OP_QUERY, OP_RESET, SketchAttackEnv
from icmlgym.envs.sketch.sketches import BernoulliSketch, ExactSketch, hash_below
from icmlgym.envs.vector_seeds import checked_num_envs, sub_env_seeds

METRICS = ("success", "prefix_max_error", "steps_to_failure", "defender_space", "true_value", "published", "updates", "queries")


def f_of_counts(statistic: str, q: float, v: np.ndarray) -> np.ndarray:
    """The per-key ``f`` of a statistic on an array of integer values, elementwise what the single
    sketches and attackers compute on Python ints (``float(v > 0)``, ``float(v)``; for ``lp``
    ``float(v) ** q`` per element, Python's ``pow``, which numpy's vectorised power need not equal)."""
    if statistic == "cardinality":
        return (v > 0).astype(np.float64)
    if statistic == "sum":
        return v.astype(np.float64)
    return np.array([float(x) ** q for x in v.tolist()], dtype=np.float64)


class SketchAttackVectorEnv(VectorEnv):
    """``num_envs`` SketchAttack-v0 envs with the same arguments, each with its own defender."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}
    ragged_ends = True

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = n = checked_num_envs(num_envs)
        self.single = s = SketchAttackEnv(**kwargs)  # validates kwargs; its _make_defender builds the defenders
        self.n_keys, self.max_increment = s.n_keys, s.max_increment
        self.update_budget, self.query_budget = s.update_budget, s.query_budget
        self.epsilon, self.min_scale, self.statistic, self.q = s.epsilon, s.min_scale, s.statistic, s.q
        self.single_action_space = s.action_space
        self.single_observation_space = s.observation_space
        self.action_space = batch_space(self.single_action_space, n)
        self.observation_space = batch_space(self.single_observation_space, n)
        probe = s._make_defender(0)
        self.kind = "bernoulli" if type(probe) is BernoulliSketch else "exact" if type(probe) is ExactSketch else "objects"
        self.p = probe.p if self.kind == "bernoulli" else 1.0
        self._rows = np.arange(n)
        self._base = self._rows * self.n_keys  # seed i's keys start at i * n_keys in the flat true vector
        self._shape = (n, 3)
        self._bounds = np.array([3, self.n_keys, self.max_increment], dtype=np.uint64)
        self._live = np.zeros(n, dtype=bool)
        self._started = False

    def _f(self, v: np.ndarray) -> np.ndarray:
        return f_of_counts(self.statistic, self.q, v)

    def _gain(self, old: np.ndarray, new: np.ndarray) -> np.ndarray:
        """``f(new) - f(old)`` for ``new > old >= 0``, elementwise as the single sketch computes it
        (cardinality ``1.0 - float(old > 0)``; sum ``float(new) - float(old)``, exact for integers)."""
        if self.statistic == "cardinality":
            return (old == 0).astype(np.float64)
        if self.statistic == "sum":
            return (new - old).astype(np.float64)
        return self._f(new) - self._f(old)

    # ------------------------------------------------------------------ reset
    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        n, nk = self.num_envs, self.n_keys
        secrets = []
        for sd in sub_env_seeds(seed, n):
            rng, _ = seeding.np_random(sd)  # the single env's np_random after reset(seed=sd)
            secrets.append(int(rng.integers(2**62)))
        self.values = np.zeros(n * nk, dtype=np.int64)  # the true vectors, flat: seed i's key k at i * nk + k
        self.truth_total = np.zeros(n)
        self.defenders: list[Any] = []
        if self.kind == "bernoulli":
            keys = np.arange(nk, dtype=np.int64)
            self.sampled = np.concatenate([hash_below(keys, salt, self.p) for salt in secrets])
            self.def_total = np.zeros(n)
            self.held_count = np.zeros(n, dtype=np.int64)
        elif self.kind == "exact":
            self.nonzero = np.zeros(n, dtype=np.int64)
        else:
            self.defenders = [self.single._make_defender(salt) for salt in secrets]
        self.published = np.zeros(n)
        self.updates_left = np.full(n, self.update_budget, dtype=np.int64)
        self.queries_left = np.full(n, self.query_budget, dtype=np.int64)
        self.prefix_max_true = np.zeros(n)
        self.error = np.zeros(n)
        self.steps = np.zeros(n, dtype=np.int64)
        self.max_space = self._space(self._rows).astype(np.int64)
        self.terminated = np.zeros(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self.metrics = {k: np.zeros(n) for k in METRICS}
        self._terminated_out, self._truncated_out = _frozen(self.terminated), _frozen(self.truncated)
        self._metrics_out: dict[str, np.ndarray] = {}
        self._live = np.ones(n, dtype=bool)  # the rows whose episode has not ended
        self._n_live = n
        self._any_ended = False
        self._obs = np.zeros((n, 3))
        self._obs[:, 1] = self.update_budget
        self._obs[:, 2] = self.query_budget
        self._started = True
        return self._obs.copy(), self._info()

    def _info(self) -> dict[str, Any]:
        return {"cost": {"updates": self.update_budget - self.updates_left, "queries": self.query_budget - self.queries_left}}

    # ------------------------------------------------------------------ the defender
    def _space(self, rows: np.ndarray | slice) -> np.ndarray:
        if self.kind == "bernoulli":
            return 2 * self.held_count[rows]
        if self.kind == "exact":
            return 2 * self.nonzero[rows]
        return np.array([self.defenders[i].space_words() for i in rows.tolist()], dtype=np.int64)

    def _estimate(self, rows: np.ndarray) -> np.ndarray:
        return np.array([float(self.defenders[i].estimate()) for i in rows.tolist()], dtype=np.float64)

    def _defender_increment(self, rows: np.ndarray, flat: np.ndarray, d: np.ndarray) -> None:
        """Increment ``flat`` (keys of ``rows``) by ``d`` in each row's defender object."""
        for i, key, delta in zip(rows.tolist(), (flat - rows * self.n_keys).tolist(), d.tolist()):
            self.defenders[i].update(key, delta)

    def _defender_reset(self, rows: np.ndarray, flat: np.ndarray, old_true: np.ndarray) -> None:
        """Reset ``flat`` (keys of ``rows``) in each row's defender object; ``old_true`` are the truth's values before."""
        for i, key, value in zip(rows.tolist(), (flat - rows * self.n_keys).tolist(), old_true.tolist()):
            self.defenders[i].reset(key, value=value)

    # ------------------------------------------------------------------ step
    def step(self, actions: Any):
        if not self._started:
            raise RuntimeError("step() called before reset(); call reset()")
        a = actions if type(actions) is np.ndarray else np.asarray(actions)
        if a.shape != self._shape or a.dtype.kind not in "iu":
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        if self._any_ended and not self._live.any():
            raise RuntimeError("step() called after every episode ended; call reset()")
        if a.dtype != np.int64:
            a = a.astype(np.int64)
        # op, key and amount each in [0, bound): a negative value reads as a huge unsigned one; an ended row's action is ignored
        bad = a.view(np.uint64) >= self._bounds
        if np.count_nonzero(bad) and (not self._any_ended or np.count_nonzero(bad[self._live])):
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        reward = self._step_objects(a) if self.kind == "objects" else self._step_stacked(a)
        # an ended row's state no longer changes, so its observation comes out as at its end
        obs = self._obs
        np.maximum(self.published, 0.0, out=obs[:, 0])
        obs[:, 1] = self.updates_left
        obs[:, 2] = self.queries_left
        success = self.error > self.epsilon
        ended = success | (self.updates_left <= 0) | (self.queries_left <= 0)
        if self._any_ended:
            ended &= self._live
        if np.count_nonzero(ended):
            self._end(ended, success)
        info: dict[str, Any] = {"cost": {"updates": self.update_budget - self.updates_left, "queries": self.query_budget - self.queries_left}}
        if self._any_ended:
            info["metrics"] = self._metrics_out
        return obs.copy(), reward, self._terminated_out, self._truncated_out, info

    def _step_stacked(self, a: np.ndarray) -> np.ndarray:
        """One step of every live row of a stacked defender (``bernoulli``, ``exact``) in whole-array
        operations, masked by op, with no per-op index arrays; returns the rewards.

        Each row's doubles are the single env's: a key's new value is ``old + amount`` (increment), 0
        (reset) or ``old`` (a query, an ended row); every total takes ``f(new) - f(old)``, which is
        the increment's gain, ``0.0 - f(old)`` for a reset (``x + (0.0 - y) == x - y``) and ``0.0``
        otherwise (adding 0.0 changes no total: a total is never -0.0); the query's answer, error
        and reward are computed for every row and kept for the rows that queried. A query row's
        prefix maximum is the one it had before the step (the row's truth did not move)."""
        op = a[:, 0]
        is_q = op == OP_QUERY
        if self._any_ended:
            live = self._live
            is_q &= live
            self.steps += live
        else:
            live = None
            self.steps += 1
        n_q = np.count_nonzero(is_q)
        if n_q:
            self.queries_left -= is_q
        if n_q < self._n_live:
            is_inc = op == OP_INCREMENT
            is_rst = op == OP_RESET
            if live is not None:
                is_inc &= live
                is_rst &= live
            if n_q or live is not None:
                self.updates_left -= is_inc | is_rst
            else:  # every row updates
                self.updates_left -= 1
            flat = self._base + a[:, 1]
            old = self.values[flat]
            new = a[:, 2] + 1
            new *= is_inc
            new += old
            if np.count_nonzero(is_rst):
                new *= ~is_rst
            self.values[flat] = new
            dpos = (new > 0).view(np.int8) - (old > 0).view(np.int8)  # a held or nonzero key's count: +1, -1 or 0
            if self.statistic == "cardinality":
                delta = dpos.astype(np.float64)  # f(new) - f(old), f = float(v > 0)
            elif self.statistic == "sum":
                delta = (new - old).astype(np.float64)  # exact for integers
            else:  # Python's pow per element: only where the value moved (f(v) - f(v) is 0.0)
                delta = np.zeros(self.num_envs)
                moved = np.flatnonzero(new != old)
                delta[moved] = self._f(new[moved]) - self._f(old[moved])
            self.truth_total += delta
            if self.kind == "bernoulli":
                s = self.sampled[flat]  # a sampled key holds exactly its true value
                self.def_total += delta * s
                self.held_count += dpos * s
                space = 2 * self.held_count
            else:
                self.nonzero += dpos
                space = 2 * self.nonzero
            np.maximum(self.prefix_max_true, self.truth_total, out=self.prefix_max_true)
            np.maximum(self.max_space, space, out=self.max_space)
        if not n_q:
            return np.zeros(self.num_envs)
        est = self.def_total / self.p if self.kind == "bernoulli" else self.truth_total
        err = np.abs(est - self.truth_total) / np.maximum(self.prefix_max_true, self.min_scale)
        better = err > self.error
        if n_q < self.num_envs:
            better &= is_q
        reward = np.where(better, err - self.error, 0.0)
        np.copyto(self.error, err, where=better)
        if n_q < self.num_envs:
            np.copyto(self.published, est, where=is_q)
        else:
            self.published[:] = est
        return reward

    def _step_objects(self, a: np.ndarray) -> np.ndarray:
        """One step of the live rows of per-seed defender objects; returns the rewards."""
        if self._any_ended:
            live = np.flatnonzero(self._live)
            al = a[live]
        else:
            live, al = self._rows, a
        op = al[:, 0]
        if self._any_ended:
            self.steps[live] += 1
        else:
            self.steps += 1
        reward = np.zeros(self.num_envs)
        is_query = op == OP_QUERY
        n_query = np.count_nonzero(is_query)
        if n_query:
            rq = live[is_query]
            self.queries_left[rq] -= 1
            pub = self._estimate(rq)
            self.published[rq] = pub
            err = np.abs(pub - self.truth_total[rq]) / np.maximum(self.prefix_max_true[rq], self.min_scale)
            old_err = self.error[rq]
            better = err > old_err
            if np.count_nonzero(better):
                rb = rq[better]
                reward[rb] = err[better] - old_err[better]
                self.error[rb] = err[better]
        if n_query < len(live):
            upd = ~is_query
            ru = live[upd]
            au = al[upd]
            self.updates_left[ru] -= 1
            inc = au[:, 0] == OP_INCREMENT
            n_inc = np.count_nonzero(inc)
            flat = ru * self.n_keys + au[:, 1]
            if n_inc:
                r, fl, d = (ru, flat, au[:, 2] + 1) if n_inc == len(ru) else (ru[inc], flat[inc], au[inc, 2] + 1)
                old = self.values[fl]
                new = old + d
                self.values[fl] = new
                gain = self._gain(old, new)
                self.truth_total[r] += gain
                self._defender_increment(r, fl, d)
            if n_inc < len(ru):
                rs = ~inc
                r, fl = ru[rs], flat[rs]
                old = self.values[fl]
                loss = self._f(old)
                self.truth_total[r] -= loss
                self.values[fl] = 0
                self._defender_reset(r, fl, old)
            # the other rows' truth and space did not change since their last update, which took
            # these maxima already: the whole-array maximum equals the updated rows' one
            np.maximum(self.prefix_max_true, self.truth_total, out=self.prefix_max_true)
            self.max_space[ru] = np.maximum(self.max_space[ru], self._space(ru))
        return reward

    def _end(self, ended: np.ndarray, success: np.ndarray) -> None:
        """Freeze the sub-envs that ``ended`` (a mask over all of them): their flags and end-of-episode metrics."""
        re = np.flatnonzero(ended)
        self.terminated[re] = success[re]
        self.truncated[re] = ~success[re]
        self._live[re] = False
        self._n_live = int(np.count_nonzero(self._live))
        self._any_ended = True
        m = self.metrics
        m["success"][re] = success[re]
        m["prefix_max_error"][re] = self.error[re]
        # the single env's failure step is the step the attack succeeded, which ends the episode
        m["steps_to_failure"][re] = self.steps[re]
        m["defender_space"][re] = self.max_space[re]
        m["true_value"][re] = self.truth_total[re]
        m["published"][re] = self.published[re]
        m["updates"][re] = self.update_budget - self.updates_left[re]
        m["queries"][re] = self.query_budget - self.queries_left[re]
        # the returned flags and metrics change only here: fresh read-only copies, reused until the next end
        self._terminated_out, self._truncated_out = _frozen(self.terminated), _frozen(self.truncated)
        self._metrics_out = {k: _frozen(v) for k, v in m.items()}

    def close(self, **kwargs: Any) -> None:
        self.defenders = []


def _frozen(a: np.ndarray) -> np.ndarray:
    out = a.copy()
    out.flags.writeable = False
    return out


__all__ = ["SketchAttackVectorEnv", "f_of_counts"]
