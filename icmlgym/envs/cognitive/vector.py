"""The cognitive task envs ``icmlgym/Cog*-v0`` for N seeds at once: one array step instead of N Python steps.

``gym.make_vec("icmlgym/CogGoNoGo-v0", num_envs=N, vectorization_mode="vector_entry_point")``
builds :class:`CognitiveTaskVectorEnv` (the task a kwarg, as in the single env). Sub-env
``i`` behaves exactly as a :class:`~icmlgym.envs.cognitive.task_env.CognitiveTaskEnv`
reset with ``seed[i]``: at reset it draws its block of trials with the single env's call,
``task.batch(trials_per_episode, rng)`` from a generator seeded the same way, and the
vector env keeps the N blocks padded in one array. A step reads every sub-env's period
and target at its own (trial, step) position, applies the abort penalty elementwise and
calls the task's own :meth:`~icmlgym.envs.cognitive.tasks.CognitiveTask.response_reward`
and :meth:`~icmlgym.envs.cognitive.tasks.CognitiveTask.end_reward` for the sub-envs whose
trial ends (a few per step), in the single env's order of additions. So every
observation, reward, metric and cost counter is bit for bit the single env's
(``tests/cognitive/test_vector.py``).

A trial ends at the agent's answer, so sub-envs end at different steps
(``ragged_ends = True``, the batched runner's contract): after sub-env ``i`` ends,
``step`` ignores action ``i``, returns reward 0.0 and its last observation for it, keeps
``terminated[i]`` True, and ``info["metrics"][k][i]`` and ``info["cost"][k][i]`` stay
at the values of its ending step (``info["metrics"]`` appears at the first end; NaN for
sub-envs still running). Autoreset is disabled (reset explicitly, as the runner does per
episode). ``info`` follows Gymnasium's vector convention: ``cost`` counters, ``trial``,
``new_trial`` and ``trial_correct`` are arrays of shape (N,), ``period`` a list of N
period names.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from icmlgym.envs.cognitive.task_env import CognitiveTaskEnv
from icmlgym.envs.cognitive.tasks import TrialBatch
from icmlgym.envs.vector_seeds import sub_env_seeds

_METRICS = ("accuracy", "abort_rate", "reward_per_trial")


class CognitiveTaskVectorEnv(VectorEnv):
    """``num_envs`` copies of one cognitive task env (same task arguments), each with its own trials.

    Args:
        num_envs: the number of sub-envs (seeds), at least 1.
        task, trials_per_episode, task_kwargs: as :class:`~icmlgym.envs.cognitive.task_env.CognitiveTaskEnv`.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}
    ragged_ends = True  # sub-envs end at different steps (see the module docstring)

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        self.num_envs = int(num_envs)
        self.single = CognitiveTaskEnv(**kwargs)  # validates kwargs; the task and the spaces of every sub-env
        self.task = self.single.task
        self.trials_per_episode = self.single.trials_per_episode
        self.single_action_space = self.single.action_space
        self.single_observation_space = self.single.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._n_actions = int(self.task.n_actions)
        self._abort = self.task.rewards["abort"]
        self._rows = np.arange(self.num_envs)
        self._shape = (self.num_envs,)
        self._batches: list[TrialBatch] = []
        self._ended = True
        self._reset_once = False

    # --- Gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        n, k = self.num_envs, self.trials_per_episode
        self._batches = []
        for s in sub_env_seeds(seed, n):
            rng, _ = seeding.np_random(s)  # what gym.Env.reset(seed=s) makes the single env's np_random
            self._batches.append(self.task.batch(k, rng))
        length = max(b.inputs.shape[1] for b in self._batches)
        self._len = length
        inputs = np.zeros((n, k, length, self.task.n_input), dtype=np.float32)
        targets = np.zeros((n, k, length), dtype=np.int64)
        # the period of every step: the index in the task's period dict of the first period holding it
        # (the single env's _period_now), -1 where none does; names[-1] is ""
        period_names = list(self._batches[0].periods)
        self._period_names = np.array(period_names + [""], dtype=object)
        pid = np.full((n, k, length), -1, dtype=np.int8)
        t = np.arange(length)
        for i, b in enumerate(self._batches):
            tb = b.inputs.shape[1]
            inputs[i, :, :tb] = b.inputs
            targets[i, :, :tb] = b.targets
            for p in reversed(period_names):  # the first matching period wins, as in the single env's loop
                se = b.periods[p]
                pid[i][(t[None, :] >= se[:, 0:1]) & (t[None, :] < se[:, 1:2])] = period_names.index(p)
        self._inputs = inputs.reshape(n * k * length, -1)
        self._targets = targets.reshape(-1)
        self._pid = pid.reshape(-1)
        self._lengths = np.stack([b.lengths for b in self._batches]).reshape(-1)  # (n * k,)
        self._fix = period_names.index("fixation") if "fixation" in period_names else -2
        self._resp = period_names.index(self.task.response_period)
        self._trial = np.zeros(n, dtype=np.int64)
        self._t = np.zeros(n, dtype=np.int64)
        self._base = self._rows * (k * length)  # the flat index of sub-env i's trial 0, step 0
        self._steps = np.zeros(n, dtype=np.int64)
        self._done_trials = np.zeros(n, dtype=np.int64)
        self._correct = np.zeros((n, k), dtype=bool)
        self._aborted = np.zeros((n, k), dtype=bool)
        self._reward = np.zeros(n)
        self._active = np.ones(n, dtype=bool)
        self._terminated = np.zeros(n, dtype=bool)
        self._false = np.zeros(n, dtype=bool)
        self._false.flags.writeable = False
        self._metrics: dict[str, np.ndarray] | None = None
        self._ended = False
        self._reset_once = True
        flat = self._base
        info = self._info(flat, np.zeros(n, dtype=bool), np.zeros(n, dtype=bool))
        del info["new_trial"], info["trial_correct"]  # the single env's reset info has neither
        return self._inputs[flat], info

    def step(self, actions: Any):
        if not self._reset_once:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(actions)
        active = self._active
        if a.shape != self._shape or a.dtype.kind not in "iu" or not self._in_range(a, active):
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        if self._ended:
            raise RuntimeError("step() called after the episodes ended; call reset()")
        k, length = self.trials_per_episode, self._len
        trial, t = self._trial, self._t
        flat = self._base + trial * length + t
        pid = self._pid[flat]
        moves = active & (a != 0)
        reward = np.zeros(self.num_envs)
        aborts = moves & (pid == self._fix)
        if aborts.any():
            reward[aborts] += self._abort
            self._aborted[self._rows[aborts], trial[aborts]] = True
        trial_over = np.zeros(self.num_envs, dtype=bool)
        for i in np.flatnonzero(moves & (pid == self._resp)).tolist():  # answers: the task's own rule, sub-env by sub-env
            b, j, ti = self._batches[i], int(trial[i]), int(t[i])
            periods = {p: (int(se[j, 0]), int(se[j, 1])) for p, se in b.periods.items()}
            r, over, correct = self.task.response_reward(int(a[i]), int(self._targets[flat[i]]), ti, periods, self._cond(i, j))
            reward[i] += r
            self._correct[i, j] = correct
            trial_over[i] = over
        self._steps += active
        t += active
        run_out = active & ~trial_over & (t >= self._lengths[self._rows * k + trial])
        for i in np.flatnonzero(run_out).tolist():
            j = int(trial[i])
            r, correct = self.task.end_reward(self._cond(i, j))
            reward[i] += r
            self._correct[i, j] = correct
        trial_over |= run_out
        self._reward += reward
        correct_now = self._correct[self._rows, trial] & trial_over
        if trial_over.any():
            self._done_trials += trial_over
            last = trial_over & (trial + 1 >= k)
            more = trial_over & ~last
            trial += more
            t[more] = 0
            if last.any():
                t[last] = self._lengths[self._rows[last] * k + trial[last]] - 1  # the last observation repeats
                self._end(last)
        flat = self._base + trial * length + t
        info = self._info(flat, trial_over, correct_now)
        if self._metrics is not None:
            info["metrics"] = {m: v.copy() for m, v in self._metrics.items()}
        return self._inputs[flat], reward, self._terminated.copy(), self._false, info

    def close(self, **kwargs: Any) -> None:
        self.single.close()

    # --- helpers -----------------------------------------------------------------------
    def _end(self, last: np.ndarray) -> None:
        """Sub-envs ``last`` ended this step: their metrics, as the single env computes them."""
        if self._metrics is None:
            self._metrics = {m: np.full(self.num_envs, np.nan) for m in _METRICS}
        rows = np.flatnonzero(last)
        self._metrics["accuracy"][rows] = self._correct[rows].mean(axis=1)
        self._metrics["abort_rate"][rows] = self._aborted[rows].mean(axis=1)
        self._metrics["reward_per_trial"][rows] = self._reward[rows] / self.trials_per_episode
        self._active[rows] = False
        self._terminated[rows] = True
        self._ended = not self._active.any()

    def _cond(self, i: int, j: int) -> dict[str, Any]:
        """Trial ``j``'s variables of sub-env ``i`` (the single env's ``_cond``)."""
        return {k: v[j] for k, v in self._batches[i].conditions.items()}

    def _info(self, flat: np.ndarray, new_trial: np.ndarray, trial_correct: np.ndarray) -> dict[str, Any]:
        return {
            "cost": {"env_steps": self._steps.copy(), "trials": self._done_trials.copy()},
            "trial": self._trial.copy(),
            "period": self._period_names[self._pid[flat]].tolist(),
            "new_trial": new_trial,
            "trial_correct": trial_correct,
        }

    def _in_range(self, a: np.ndarray, active: np.ndarray) -> bool:
        """Every running sub-env's action an integer in ``[0, n_actions)`` (ended sub-envs' actions are ignored)."""
        if a.size == 0:
            return True
        if a.dtype == np.int64:
            return not np.count_nonzero(active & (a.view(np.uint64) >= np.uint64(self._n_actions)))
        live = a[active]
        return live.size == 0 or (int(live.min()) >= 0 and int(live.max()) < self._n_actions)


__all__ = ["CognitiveTaskVectorEnv"]
