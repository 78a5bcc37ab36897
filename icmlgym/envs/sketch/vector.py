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
one ``(N, n_keys)`` array with one running total per seed; a step of every seed is a few
whole-array operations, with the op looked up per row (no index arrays per op), and the per-key
``f`` is the single env's elementwise (for ``lp``, ``float(v) ** q`` per element, Python's
``pow``, as the single sketch computes it). For cardinality and sum the totals are integers,
kept in int64 (the single sketches' doubles hold the same integers exactly, below 2**53). Two
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

# by op (increment 0, reset 1, query 2; 3 a no-op, an ended row's): the updates and queries it uses,
# whether it adds its amount to the key, whether the key keeps its value
_NOOP = 3
_USES = np.array([[1, 1, 0, 0], [0, 0, 1, 0]], dtype=np.int64)
_ADDS = np.array([1, 0, 0, 0], dtype=np.int64)
_KEEPS = np.array([1, 0, 1, 1], dtype=np.int64)

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
        self._budgets = np.array([[self.update_budget], [self.query_budget]], dtype=np.int64)
        self._noop = np.array([_NOOP, 0, 0], dtype=np.int64)  # what an ended row's action becomes
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
        # a stacked defender's totals of cardinality or sum are sums of integers: int64 holds them
        # exactly, as the single sketches' doubles do (below 2**53); lp's and the objects' are doubles
        exact_ints = self.kind != "objects" and self.statistic != "lp"
        self.truth_total = np.zeros(n, dtype=np.int64 if exact_ints else np.float64)
        self.defenders: list[Any] = []
        if self.kind == "bernoulli":
            keys = np.arange(nk, dtype=np.int64)
            self.sampled = np.concatenate([hash_below(keys, salt, self.p) for salt in secrets])
            self.held_count = np.zeros(n, dtype=np.int64)
            # for cardinality a held key's f is 1: the sketch's total is its count of held keys
            self.def_total = self.held_count if self.statistic == "cardinality" else np.zeros_like(self.truth_total)
        elif self.kind == "exact":
            self.nonzero = self.truth_total if self.statistic == "cardinality" else np.zeros(n, dtype=np.int64)
        else:
            self.defenders = [self.single._make_defender(salt) for salt in secrets]
        self.published = np.zeros(n)
        self.used = np.zeros((2, n), dtype=np.int64)  # updates and queries used, the cost counters
        self.scale = np.full(n, self.min_scale)  # max(the prefix maximum of the truth, min_scale): the error's normaliser
        self.error = np.zeros(n)
        self.max_space = self._space(self._rows).astype(np.int64)  # for a stacked defender: the most keys held
        self.terminated = np.zeros(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self.metrics = {k: np.zeros(n) for k in METRICS}
        self._terminated_out, self._truncated_out = _frozen(self.terminated), _frozen(self.truncated)
        self._metrics_out: dict[str, np.ndarray] = {}
        self._live = np.ones(n, dtype=bool)  # the rows whose episode has not ended
        self._n_live = n
        self._any_ended = False
        self._t = 0  # steps of every live row
        self._check_at = min(self.update_budget, self.query_budget)  # no budget can be spent before this step
        self._success_at = np.full(n, self.epsilon)  # an ended row's is inf: it cannot end again
        self._queried = False
        self._obs = np.zeros((n, 3))
        self._obs[:, 1] = self.update_budget
        self._obs[:, 2] = self.query_budget
        self._obs_left = self._obs[:, 1:].T  # (2, n) view: the updates and queries left
        self._started = True
        return self._obs.copy(), self._info()

    def _info(self) -> dict[str, Any]:
        used = self.used.copy()
        return {"cost": {"updates": used[0], "queries": used[1]}}

    # ------------------------------------------------------------------ the defender
    def _space(self, rows: np.ndarray | slice) -> np.ndarray:
        if self.kind == "bernoulli":
            return self.held_count[rows]
        if self.kind == "exact":
            return self.nonzero[rows]
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
        if self._any_ended and not self._n_live:
            raise RuntimeError("step() called after every episode ended; call reset()")
        if a.dtype != np.int64:
            a = a.astype(np.int64)
        # op, key and amount each in [0, bound): a negative value reads as a huge unsigned one; an ended row's action is ignored
        bad = a.view(np.uint64) >= self._bounds
        if np.count_nonzero(bad) and (not self._any_ended or np.count_nonzero(bad[self._live])):
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        self._t += 1
        reward = self._step_objects(a) if self.kind == "objects" else self._step_stacked(a)
        # an ended row's state no longer changes, so its observation comes out as at its end
        obs = self._obs
        np.maximum(self.published, 0.0, out=obs[:, 0])
        np.subtract(self._budgets, self.used, out=self._obs_left)
        ended = None
        if self._queried:  # the error moves only on a query
            self._queried = False
            success = self.error > self._success_at
            if np.count_nonzero(success):
                ended = success
        if self._t >= self._check_at:  # a budget may be spent (each row spends at most one of each a step)
            left = np.minimum(self.update_budget - self.used[0], self.query_budget - self.used[1])
            spent = left <= 0
            spent &= self._live
            if np.count_nonzero(spent):
                ended = spent if ended is None else ended | spent
            rest = left[self._live & ~spent]
            self._check_at = self._t + (int(rest.min()) if len(rest) else 1)
        if ended is not None:
            self._end(ended)
        info: dict[str, Any] = self._info()
        if self._any_ended:
            info["metrics"] = self._metrics_out
        return obs.copy(), reward, self._terminated_out, self._truncated_out, info

    def _step_stacked(self, a: np.ndarray) -> np.ndarray:
        """One step of every live row of a stacked defender (``bernoulli``, ``exact``) in whole-array
        operations, with no per-op index arrays; returns the rewards.

        An ended row's action becomes a no-op (op 3). A key's new value is ``old + amount``
        (increment), 0 (reset) or ``old`` (a query, a no-op); each total takes ``f(new) - f(old)``:
        the increment's gain, ``0.0 - f(old)`` for a reset (``x + (0.0 - y) == x - y``), 0 otherwise
        (adding 0.0 changes no total, which is never -0.0); for cardinality and sum these are
        integers, exact. The answer, error and reward are computed for every row and kept for the
        rows that queried (a query row's truth, and so its normaliser, did not move); the error is
        ``max(error, err)`` and the reward its growth, which is ``err - error`` when ``err > error``
        and 0.0 otherwise, as the single env gives them."""
        if self._any_ended:
            a = np.where(self._live[:, None], a, self._noop)
        op = a[:, 0]
        uses = _USES.take(op, axis=1)
        self.used += uses
        is_q = op == OP_QUERY
        n_q = np.count_nonzero(is_q)
        cardinality = self.statistic == "cardinality"
        if n_q < self._n_live:
            flat = self._base + a[:, 1]
            old = self.values[flat]
            new = a[:, 2] + 1
            new *= _ADDS.take(op)
            new += old
            new *= _KEEPS.take(op)
            self.values[flat] = new
            dpos = (new > 0).view(np.int8) - (old > 0).view(np.int8)  # a nonzero (held) key more or fewer
            if cardinality:
                gain = dpos  # f(new) - f(old), f = float(v > 0)
            elif self.statistic == "sum":
                gain = new - old
            else:  # Python's pow per element: only where the value moved (f(v) - f(v) is 0.0)
                gain = np.zeros(self.num_envs)
                moved = np.flatnonzero(new != old)
                gain[moved] = self._f(new[moved]) - self._f(old[moved])
            self.truth_total += gain
            if self.kind == "bernoulli":
                s = self.sampled[flat]  # a sampled key holds exactly its true value
                self.held_count += dpos * s
                if not cardinality:
                    self.def_total += gain * s
                np.maximum(self.max_space, self.held_count, out=self.max_space)
            else:
                if not cardinality:
                    self.nonzero += dpos
                np.maximum(self.max_space, self.nonzero, out=self.max_space)
            np.maximum(self.scale, self.truth_total, out=self.scale)
        if not n_q:
            return np.zeros(self.num_envs)
        self._queried = True
        if self.kind == "exact":  # the answer is the truth: no error
            np.copyto(self.published, self.truth_total, where=is_q)
            return np.zeros(self.num_envs)
        est = self.def_total / self.p
        err = np.abs(est - self.truth_total)
        err /= self.scale
        if n_q < self.num_envs:
            err *= is_q
            np.copyto(self.published, est, where=is_q)
        else:
            self.published = est
        error = np.maximum(self.error, err)
        reward = error - self.error
        self.error = error
        return reward

    def _step_objects(self, a: np.ndarray) -> np.ndarray:
        """One step of the live rows of per-seed defender objects; returns the rewards."""
        if self._any_ended:
            live = np.flatnonzero(self._live)
            al = a[live]
        else:
            live, al = self._rows, a
        op = al[:, 0]
        reward = np.zeros(self.num_envs)
        is_query = op == OP_QUERY
        n_query = np.count_nonzero(is_query)
        if n_query:
            self._queried = True
            rq = live[is_query]
            self.used[1, rq] += 1
            pub = self._estimate(rq)
            self.published[rq] = pub
            err = np.abs(pub - self.truth_total[rq]) / self.scale[rq]
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
            self.used[0, ru] += 1
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
            np.maximum(self.scale, self.truth_total, out=self.scale)
            self.max_space[ru] = np.maximum(self.max_space[ru], self._space(ru))
        return reward

    def _end(self, ended: np.ndarray) -> None:
        """Freeze the sub-envs that ``ended`` (a mask over all of them): their flags and end-of-episode metrics."""
        re = np.flatnonzero(ended)
        success = self.error[re] > self.epsilon
        self.terminated[re] = success
        self.truncated[re] = ~success
        self._live[re] = False
        self._n_live = int(np.count_nonzero(self._live))
        self._any_ended = True
        self._success_at[re] = np.inf
        m = self.metrics
        m["success"][re] = success
        m["prefix_max_error"][re] = self.error[re]
        # the single env's failure step is the step the attack succeeded, which ends the episode
        m["steps_to_failure"][re] = self._t
        # a stacked defender holds 2 words a key (bernoulli: key and value; exact: the same)
        m["defender_space"][re] = self.max_space[re] if self.kind == "objects" else 2 * self.max_space[re]
        m["true_value"][re] = self.truth_total[re]
        m["published"][re] = self.published[re]
        m["updates"][re] = self.used[0, re]
        m["queries"][re] = self.used[1, re]
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
