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
from icmlgym.envs.cognitive.tasks import CognitiveTask, GoNoGo, IntervalTiming, TrialBatch
from icmlgym.envs.vector_seeds import checked_num_envs, sub_env_seeds

_METRICS = ("accuracy", "abort_rate", "reward_per_trial")
_U64 = np.dtype(np.uint64)


def trial_blocks(task: CognitiveTask, n: int, rngs: Sequence[np.random.Generator]) -> TrialBatch:
    """``n`` trials per generator in one batch: rows ``g * n`` to ``(g + 1) * n`` are ``task.batch(n, rngs[g])``.

    Each generator makes the draws :meth:`~icmlgym.envs.cognitive.tasks.CognitiveTask.batch` makes, in its
    order (the task's conditions, its durations, then the input noise for that block's longest trial); the
    noiseless inputs and the targets are then computed once for all blocks with the task's own ``_fill``,
    elementwise as ``batch`` computes them, so every block equals its ``batch`` call bit for bit on the
    block's steps (padded to the longest trial of all blocks; ``tests/cognitive/test_vector.py``). One call
    instead of ``len(rngs)`` calls of ``batch``: the same arrays, a tenth of the Python overhead.
    """
    if n < 1 or not len(rngs):
        raise ValueError(f"trial_blocks needs n >= 1 and at least one generator, got n={n} and {len(rngs)} generators")
    noisy = task.sigma > 0 and bool(task.noisy_periods)
    scale = np.float32(task.sigma / np.sqrt(task.dt))
    conds, lens, noises = [], [], []
    for rng in rngs:  # batch()'s draws, block by block
        cond = task._conditions(rng, n)
        task._derive(cond)
        dur = task._durations(rng, n, cond)
        block = task.steps(np.stack([dur[p] for p in task.period_names], axis=1))  # (n, P), steps() elementwise
        if noisy:
            noises.append(rng.standard_normal((n, int(block.sum(axis=1).max()), len(task.noisy_channels))).astype(np.float32) * scale)
        conds.append(cond)
        lens.append(block)
    cond = {k: np.concatenate([c[k] for c in conds]) for k in conds[0]}
    lens_all = np.concatenate(lens)
    ends = np.cumsum(lens_all, axis=1)
    starts = ends - lens_all
    lengths = ends[:, -1]
    t_max = int(lengths.max())
    t = np.arange(t_max)
    periods = {p: np.stack([starts[:, k], ends[:, k]], axis=1) for k, p in enumerate(task.period_names)}

    def where(period: str) -> np.ndarray:
        s, e = periods[period][:, 0:1], periods[period][:, 1:2]
        return (t[None, :] >= s) & (t[None, :] < e)

    total = n * len(rngs)
    inputs = np.zeros((total, t_max, task.n_input), dtype=np.float32)
    targets = np.zeros((total, t_max), dtype=np.int64)
    inputs[:, :, 0] = t[None, :] < periods[task.response_period][:, 0:1]
    task._fill(inputs, targets, where, cond, periods)
    if noisy:
        mask = np.zeros((total, t_max), dtype=bool)
        for p in task.noisy_periods:
            mask |= where(p)
        noise = np.zeros((total, t_max, len(task.noisy_channels)), dtype=np.float32)
        for g, block in enumerate(noises):
            noise[g * n : (g + 1) * n, : block.shape[1]] = block
        ch = list(task.noisy_channels)
        # a contiguous run of channels as a slice (the same additions; a list index copies out and scatters back)
        cols = slice(ch[0], ch[-1] + 1) if ch == list(range(ch[0], ch[-1] + 1)) else ch
        inputs[:, :, cols] += noise * mask[:, :, None]
    alive = t[None, :] < lengths[:, None]
    inputs *= alive[:, :, None]
    targets[~alive] = -1
    return TrialBatch(inputs, targets, where(task.response_period), lengths, periods, cond, task.name, task.dt)


class CognitiveTaskVectorEnv(VectorEnv):
    """``num_envs`` copies of one cognitive task env (same task arguments), each with its own trials.

    Args:
        num_envs: the number of sub-envs (seeds), at least 1.
        task, trials_per_episode, task_kwargs: as :class:`~icmlgym.envs.cognitive.task_env.CognitiveTaskEnv`.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}
    ragged_ends = True  # sub-envs end at different steps (see the module docstring)

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = checked_num_envs(num_envs)
        self.single = CognitiveTaskEnv(**kwargs)  # validates kwargs; the task and the spaces of every sub-env
        self.task = self.single.task
        self.trials_per_episode = self.single.trials_per_episode
        self.single_action_space = self.single.action_space
        self.single_observation_space = self.single.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._n_actions = int(self.task.n_actions)
        self._n_actions_u = np.uint64(self._n_actions)
        self._abort = self.task.rewards["abort"]
        self._rewards = self.task.rewards
        # the rules written elementwise here (the base class's, go/no-go's) are applied to all sub-envs at once;
        # a task with rules of its own (interval timing's graded reward, any subclass) is scored sub-env by sub-env
        cls = type(self.task)
        self._response_rule = {CognitiveTask.response_reward: "base", GoNoGo.response_reward: "go_nogo",
                               IntervalTiming.response_reward: "interval_timing"}.get(cls.response_reward, "")
        self._end_rule = {CognitiveTask.end_reward: "base", GoNoGo.end_reward: "go_nogo"}.get(cls.end_reward, "")
        self._rows = np.arange(self.num_envs)
        self._shape = (self.num_envs,)
        self._trials: TrialBatch | None = None
        self._ended = True
        self._reset_once = False

    # --- Gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        n, k = self.num_envs, self.trials_per_episode
        # what gym.Env.reset(seed=s) makes each single env's np_random, then its reset's task.batch(k, np_random)
        self._trials = b = trial_blocks(self.task, k, [seeding.np_random(s)[0] for s in sub_env_seeds(seed, n)])
        length = self._len = b.inputs.shape[1]
        # the period of every step: the index (in the task's period order) of the first period holding it, as
        # the single env's _period_now finds it; -1 where none does (names[-1] is ""). trial_blocks lays a
        # trial's periods end to end (each starts where the one before ends), so before the trial's end the
        # period holding step t is the number of periods that end at or before t (empty ones included)
        names = list(b.periods)
        self._period_names = np.array(names + [""], dtype=object)
        t = np.arange(length)[None, :]
        count = np.zeros((n * k, length), dtype=np.intp)
        for p in names:
            count += t >= b.periods[p][:, 1:2]
        self._pid = np.where(t < b.periods[names[-1]][:, 1:2], count, -1).reshape(-1)
        self._inputs = b.inputs.reshape(n * k * length, -1)
        self._targets = b.targets.reshape(-1)
        self._lengths = b.lengths.astype(np.int64).reshape(n, k)
        # [start, end) of every trial's periods as Python ints, for the rules called sub-env by sub-env
        self._period_lists = {p: se.tolist() for p, se in b.periods.items()} if not self._response_rule else {}
        # what a non-fixate action does at every step: 1 an abort (fixation period), 2 an answer (response period)
        fix = names.index("fixation") if "fixation" in names else -2
        self._code = np.where(self._pid == fix, 1, np.where(self._pid == names.index(self.task.response_period), 2, 0)).astype(np.int8)
        self._trial = np.zeros(n, dtype=np.int64)
        self._t = np.zeros(n, dtype=np.int64)
        self._base = self._rows * (k * length)  # the flat index of sub-env i's trial 0, step 0
        self._flat = self._base.copy()  # the flat index of every sub-env's current (trial, step)
        self._trial_len = self._lengths[:, 0].copy()  # every sub-env's current trial length
        self._steps = np.zeros(n, dtype=np.int64)
        self._done_trials = np.zeros(n, dtype=np.int64)
        self._correct = np.zeros((n, k), dtype=bool)
        self._aborted = np.zeros((n, k), dtype=bool)
        self._correct_cells, self._aborted_cells = self._correct.reshape(-1), self._aborted.reshape(-1)  # views by sub-env * k + trial
        self._rowk = self._rows * k
        self._reward = np.zeros(n)
        self._active = np.ones(n, dtype=bool)
        self._all_active = True
        self._terminated = np.zeros(n, dtype=bool)
        self._false = np.zeros(n, dtype=bool)
        self._false.flags.writeable = False
        self._metrics: dict[str, np.ndarray] | None = None
        self._metrics_out: dict[str, np.ndarray] | None = None
        self._terminated_out = self._false
        self._ended = False
        self._reset_once = True
        info = self._info(self._pid[self._flat], self._false, self._false)
        del info["new_trial"], info["trial_correct"]  # the single env's reset info has neither
        return self._inputs[self._flat], info

    def step(self, actions: Any):
        if not self._reset_once:
            raise RuntimeError("call reset() before step()")
        a = actions if type(actions) is np.ndarray else np.asarray(actions)
        if a.shape != self._shape or not self._in_range(a):
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        if self._ended:
            raise RuntimeError("step() called after the episodes ended; call reset()")
        active, flat, trial, t = self._active, self._flat, self._trial, self._t
        event = self._code[flat]  # 0 nothing, 1 an abort, 2 an answer (where the action is not fixate)
        event *= a != 0
        if not self._all_active:
            event *= active  # an ended sub-env's action is ignored
        reward = np.zeros(self.num_envs)
        trial_over = self._false
        if np.count_nonzero(event):
            aborts = event == 1
            if np.count_nonzero(aborts):
                reward[aborts] += self._abort
                self._aborted_cells[self._rowk[aborts] + trial[aborts]] = True
            answers = event == 2
            if np.count_nonzero(answers):
                trial_over = self._answer(answers, a, flat, reward)
        if self._all_active:
            self._steps += 1
            t += 1
            flat += 1
        else:
            self._steps += active
            t += active
            flat += active
        run_out = t >= self._trial_len  # an ended sub-env's t stays below its last trial's length
        if trial_over is not self._false:
            run_out &= ~trial_over
        if np.count_nonzero(run_out):
            self._run_out(run_out, reward)
            trial_over = run_out if trial_over is self._false else trial_over | run_out
        self._reward += reward
        if trial_over is self._false:
            correct_now = self._false
        else:
            correct_now = self._correct_cells[self._rowk + trial] & trial_over
            self._next_trial(trial_over)
            flat = self._flat
        info = self._info(self._pid[flat], trial_over, correct_now)
        if self._metrics_out is not None:
            info["metrics"] = dict(self._metrics_out)
        return self._inputs[flat], reward, self._terminated_out, self._false, info

    def close(self, **kwargs: Any) -> None:
        self.single.close()

    # --- helpers -----------------------------------------------------------------------
    def _answer(self, answers: np.ndarray, a: np.ndarray, flat: np.ndarray, reward: np.ndarray) -> np.ndarray:
        """Sub-envs ``answers`` answered (a non-fixate action in the response period): the task's response rule.

        Adds the rule's reward to ``reward``, records correctness, returns the sub-envs whose trial ends."""
        rows = answers.nonzero()[0]
        trial = self._trial
        if self._response_rule == "interval_timing":  # every answer ends the trial
            self._timed_answer(rows, reward)
            return answers
        if self._response_rule:  # every answer ends the trial; correct: the target action (go/no-go: a go trial)
            target = self._targets[flat[rows]]
            hit = a[rows] == target if self._response_rule == "base" else target == 1
            reward[rows] += np.where(hit, self._rewards["correct"], self._rewards["fail"])
            self._correct_cells[self._rowk[rows] + trial[rows]] = hit
            return answers
        over = np.zeros(self.num_envs, dtype=bool)
        for i in rows.tolist():  # the task's own rule, sub-env by sub-env
            j, ti = int(trial[i]), int(self._t[i])
            row = i * self.trials_per_episode + j
            periods = {p: (se[row][0], se[row][1]) for p, se in self._period_lists.items()}
            r, over[i], self._correct[i, j] = self.task.response_reward(int(a[i]), int(self._targets[flat[i]]), ti, periods, self._cond(i, j))
            reward[i] += r
        return over

    def _timed_answer(self, rows: np.ndarray, reward: np.ndarray) -> None:
        """Interval timing's rule for the goes of sub-envs ``rows``: the error of the produced interval against the
        task's margin, as :meth:`~icmlgym.envs.cognitive.tasks.IntervalTiming.response_reward` computes it (its
        float arithmetic elementwise; the graded reward's power in Python floats, as the single env takes it)."""
        task, trial = self.task, self._trial
        cell = rows * self.trials_per_episode + trial[rows]
        t_prod = (self._t[rows] - self._trials.periods["set"][cell, 0]) * task.dt  # ms from the set cue's onset
        prod = self._trials.conditions["production"][cell]
        err = np.abs(t_prod - prod)
        margin = task.margin(prod)
        hit = ~(err > margin)
        correct, fail = task.rewards["correct"], task.rewards["fail"]
        reward[rows] += [max(0.1, (1.0 - x) ** 1.5) * correct if h else fail for x, h in zip((err / margin).tolist(), hit.tolist())]
        self._correct_cells[self._rowk[rows] + trial[rows]] = hit

    def _run_out(self, rows_mask: np.ndarray, reward: np.ndarray) -> None:
        """Sub-envs ``rows_mask`` passed their trial's last step without an answer: the task's end rule."""
        rows = rows_mask.nonzero()[0]
        trial = self._trial
        if self._end_rule == "base":  # 0.0, wrong
            reward[rows] += 0.0
            self._correct_cells[self._rowk[rows] + trial[rows]] = False
        elif self._end_rule == "go_nogo":  # a missed go: the miss penalty, wrong; a withheld no-go: 0.0, correct
            go = self._trials.conditions["ground_truth"][rows * self.trials_per_episode + trial[rows]] == 1
            reward[rows] += np.where(go, self._rewards["miss"], 0.0)
            self._correct_cells[self._rowk[rows] + trial[rows]] = ~go
        else:
            for i in rows.tolist():
                j = int(trial[i])
                r, self._correct[i, j] = self.task.end_reward(self._cond(i, j))
                reward[i] += r

    def _next_trial(self, over: np.ndarray) -> None:
        """Sub-envs ``over`` finished a trial: count it, then the next trial's first step, or the episode's end."""
        self._done_trials += over
        rows = over.nonzero()[0]
        nxt = self._trial[rows] + 1
        done = nxt >= self.trials_per_episode
        if np.count_nonzero(done):  # some episodes end: the last observation repeats the trial's last step
            last = rows[done]
            self._t[last] = self._trial_len[last] - 1
            self._flat[last] = self._base[last] + self._trial[last] * self._len + self._t[last]
            self._end(last)
            keep = ~done
            rows, nxt = rows[keep], nxt[keep]
        self._trial[rows] = nxt
        self._t[rows] = 0
        self._flat[rows] = self._base[rows] + nxt * self._len
        self._trial_len[rows] = self._lengths[rows, nxt]

    def _end(self, rows: np.ndarray) -> None:
        """Sub-envs ``rows`` ended this step: their metrics, as the single env computes them."""
        if self._metrics is None:
            self._metrics = {m: np.full(self.num_envs, np.nan) for m in _METRICS}
        self._metrics["accuracy"][rows] = self._correct[rows].mean(axis=1)
        self._metrics["abort_rate"][rows] = self._aborted[rows].mean(axis=1)
        self._metrics["reward_per_trial"][rows] = self._reward[rows] / self.trials_per_episode
        self._active[rows] = False
        self._all_active = False
        self._terminated[rows] = True
        # what step returns until the next end: read-only copies (the same arrays every step, nothing to copy)
        self._metrics_out = {m: v.copy() for m, v in self._metrics.items()}
        self._terminated_out = self._terminated.copy()
        for v in (*self._metrics_out.values(), self._terminated_out):
            v.flags.writeable = False
        self._ended = not np.count_nonzero(self._active)

    def _cond(self, i: int, j: int) -> dict[str, Any]:
        """Trial ``j``'s variables of sub-env ``i`` (the single env's ``_cond``)."""
        row = i * self.trials_per_episode + j
        return {k: v[row] for k, v in self._trials.conditions.items()}

    def _info(self, pid: np.ndarray, new_trial: np.ndarray, trial_correct: np.ndarray) -> dict[str, Any]:
        return {
            "cost": {"env_steps": self._steps.copy(), "trials": self._done_trials.copy()},
            "trial": self._trial.copy(),
            "period": self._period_names[pid].tolist(),
            "new_trial": new_trial,
            "trial_correct": trial_correct,
        }

    def _in_range(self, a: np.ndarray) -> bool:
        """Every running sub-env's action an integer in ``[0, n_actions)`` (ended sub-envs' actions are ignored)."""
        if a.dtype == np.int64 and a.flags.c_contiguous:  # one comparison: negatives read as huge unsigned
            bad = np.ndarray(a.shape, _U64, a) >= self._n_actions_u  # a uint64 view (cheaper than a.view)
            return not (np.count_nonzero(bad) and np.count_nonzero(bad & self._active))
        if a.dtype.kind not in "iu":
            return False
        live = a[self._active]
        return live.size == 0 or (int(live.min()) >= 0 and int(live.max()) < self._n_actions)


__all__ = ["CognitiveTaskVectorEnv"]
