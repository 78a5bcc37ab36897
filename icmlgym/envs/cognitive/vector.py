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
from icmlgym.envs.cognitive.tasks import CognitiveTask, Duration, GoNoGo, IntervalTiming, TrialBatch, sample_duration
from icmlgym.envs.vector_seeds import checked_num_envs, sub_env_seeds

_METRICS = ("accuracy", "abort_rate", "reward_per_trial")
_U64 = np.dtype(np.uint64)


def trial_blocks(task: CognitiveTask, n: int, rngs: Sequence[np.random.Generator]) -> TrialBatch:
    """``n`` trials per generator in one batch: rows ``g * n`` to ``(g + 1) * n`` are ``task.batch(n, rngs[g])``.

    Each generator makes the draws :meth:`~icmlgym.envs.cognitive.tasks.CognitiveTask.batch` makes, in its
    order (the task's conditions, its durations, then the input noise for that block's longest trial); the
    generators take their turns period by period (a generator's own draws stay in its order, and it shares
    nothing with the others), and what follows from the draws elementwise (the derived variables, the steps
    of the durations, the noiseless inputs and the targets, by the task's own ``_derive``, ``steps`` and
    ``_fill``) is computed once for all blocks, so every block equals its ``batch`` call bit for bit on the
    block's steps (padded to the longest trial of all blocks; ``tests/cognitive/test_vector.py``). A task
    whose durations depend on its trial variables (its own ``_durations``) draws them block by block.
    """
    if n < 1 or not len(rngs):
        raise ValueError(f"trial_blocks needs n >= 1 and at least one generator, got n={n} and {len(rngs)} generators")
    noisy = task.sigma > 0 and bool(task.noisy_periods)
    g_n = len(rngs)
    if type(task).plain_durations():  # the durations need no trial variables
        cond = task._conditions_many(rngs, n)
        task._derive(cond)
        dur = {p: _durations_of(task._timing[p], rngs, n) for p in task.period_names}
    else:
        conds, durs = [task._conditions(rng, n) for rng in rngs], []
        for rng, c in zip(rngs, conds):
            task._derive(c)
            durs.append(task._durations(rng, n, c))
        cond = {k: np.concatenate([c[k] for c in conds]) for k in conds[0]}
        dur = {p: np.concatenate([d[p] for d in durs]) for p in task.period_names}
    lens_all = task.steps(np.stack([dur[p] for p in task.period_names], axis=1))  # (g_n * n, P), steps() elementwise
    ends = np.cumsum(lens_all, axis=1)
    starts = ends - lens_all
    lengths = ends[:, -1]
    t_max = int(lengths.max())
    t = np.arange(t_max)
    periods = {p: np.stack([starts[:, k], ends[:, k]], axis=1) for k, p in enumerate(task.period_names)}

    def where(period: str) -> np.ndarray:
        s, e = periods[period][:, 0:1], periods[period][:, 1:2]
        return (t[None, :] >= s) & (t[None, :] < e)

    total = n * g_n
    inputs = np.zeros((total, t_max, task.n_input), dtype=np.float32)
    targets = np.zeros((total, t_max), dtype=np.int64)
    inputs[:, :, 0] = t[None, :] < periods[task.response_period][:, 0:1]
    task._fill(inputs, targets, where, cond, periods)
    if noisy:
        ch = list(task.noisy_channels)
        noise = np.zeros((total, t_max, len(ch)), dtype=np.float32)
        for g, (rng, steps) in enumerate(zip(rngs, lengths.reshape(g_n, n).max(axis=1).tolist())):
            noise[g * n : (g + 1) * n, :steps] = rng.standard_normal((n, steps, len(ch)))  # the cast astype(float32) makes
        noise *= np.float32(task.sigma / np.sqrt(task.dt))
        mask = np.zeros((total, t_max), dtype=bool)
        for p in task.noisy_periods:
            mask |= where(p)
        for j, c in enumerate(ch):  # channel by channel: the same float32 products and sums (see add_channels)
            inputs[:, :, c] += noise[:, :, j] * mask
    alive = t[None, :] < lengths[:, None]
    inputs *= alive[:, :, None]
    targets[~alive] = -1
    return TrialBatch(inputs, targets, where(task.response_period), lengths, periods, cond, task.name, task.dt)


def _durations_of(spec: Duration, rngs: Sequence[np.random.Generator], n: int) -> np.ndarray:
    """``sample_duration(spec, rng, n)`` of every generator in turn, concatenated (a fixed duration drawn once;
    truncated exponentials in lock step: :func:`_trunc_exp_many`)."""
    if isinstance(spec, tuple) and spec and spec[0] == "truncexp":
        return _trunc_exp_many(rngs, n, *spec[1:]).reshape(-1)
    if isinstance(spec, (int, float, np.integer, np.floating)):
        return np.full(n * len(rngs), float(spec))
    return np.concatenate([sample_duration(spec, rng, n) for rng in rngs])


def _trunc_exp_many(rngs: Sequence[np.random.Generator], n: int, mean: float, lo: float, hi: float) -> np.ndarray:
    """``(len(rngs), n)``: row ``g`` is ``tasks._trunc_exp(rngs[g], n, mean, lo, hi)``, every generator's rejection
    rounds in lock step: round by round each generator redraws its rejected entries, in their order, with one
    call of the size ``_trunc_exp`` calls (so the same values and the same state after), and the acceptance
    tests run once for all generators."""
    out = np.empty((len(rngs), n))
    for g, rng in enumerate(rngs):
        out[g] = rng.exponential(mean, size=n)
    redo = (out < lo) | (out >= hi)
    while True:
        counts = np.count_nonzero(redo, axis=1).tolist()
        if not any(counts):
            return out
        x = np.concatenate([rngs[g].exponential(mean, size=c) for g, c in enumerate(counts) if c])
        out[redo] = x  # row by row, each row's rejected entries in order
        redo[redo] = (x < lo) | (x >= hi)


class CognitiveTaskVectorEnv(VectorEnv):
    """``num_envs`` copies of one cognitive task env (same task arguments), each with its own trials.

    At reset every sub-env's trials are laid end to end in one array of *positions* (a trial's steps in
    order, then the next trial's, and after the last trial one terminal position that repeats its last
    step), and every position's outcome for every action is tabled: the reward, whether the trial ends,
    whether it was correct, the next position, the trial an abort marks. A step is then a handful of
    gathers at ``position * n_actions + action``, whatever happens in it. Rules that cannot be tabled
    exactly (interval timing's graded reward, taken in Python floats as the single env takes it; a task
    with rules of its own) are marked in a ``lazy`` table and applied at the step to the sub-envs that
    meet them.

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
        self._rewards = self.task.rewards
        # the rules written elementwise here (the base class's, go/no-go's) are tabled for every position;
        # interval timing's answers are scored at the step; a task with rules of its own (any subclass) calls
        # them sub-env by sub-env wherever they apply (answers and trial ends), as the single env does
        cls = type(self.task)
        self._response_rule = {CognitiveTask.response_reward: "base", GoNoGo.response_reward: "go_nogo",
                               IntervalTiming.response_reward: "interval_timing"}.get(cls.response_reward, "")
        self._end_rule = {CognitiveTask.end_reward: "base", GoNoGo.end_reward: "go_nogo"}.get(cls.end_reward, "")
        self._own_rules = not (self._response_rule and self._end_rule)
        self._shape = (self.num_envs,)
        self._trials: TrialBatch | None = None
        self._ended = True
        self._reset_once = False

    # --- Gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        n, k = self.num_envs, self.trials_per_episode
        # what gym.Env.reset(seed=s) makes each single env's np_random, then its reset's task.batch(k, np_random)
        self._trials = b = trial_blocks(self.task, k, [seeding.np_random(s)[0] for s in sub_env_seeds(seed, n)])
        self._tabulate(b)
        self._pos = self._first[::k].copy()  # every sub-env at trial 0, step 0
        self._pos_a = self._pos * self._n_actions
        self._count = 0  # steps taken (a sub-env's env_steps: this, up to its end)
        self._end_step = np.full(n, np.iinfo(np.int64).max)
        self._n_correct = np.zeros(n, dtype=np.int64)
        self._aborted_cells = np.zeros(n * k + 1, dtype=bool)  # by sub-env * k + trial; the last entry takes non-aborts
        self._reward = np.zeros(n)
        self._active = np.ones(n, dtype=bool)
        self._terminated = np.zeros(n, dtype=bool)
        self._false = np.zeros(n, dtype=bool)
        self._false.flags.writeable = False
        self._metrics: dict[str, np.ndarray] | None = None
        self._metrics_out: dict[str, np.ndarray] | None = None
        self._terminated_out = self._false
        self._ended = False
        self._reset_once = True
        zeros = np.zeros(n, dtype=np.int64)
        info = {"cost": {"env_steps": zeros.copy(), "trials": zeros.copy()}, "trial": zeros, "period": self._period_of[self._pos].tolist()}
        return self._obs_of[self._pos], info

    def step(self, actions: Any):
        if not self._reset_once:
            raise RuntimeError("call reset() before step()")
        a = self._actions(actions if type(actions) is np.ndarray else np.asarray(actions))
        if a is None:
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        if self._ended:
            raise RuntimeError("step() called after the episodes ended; call reset()")
        at = self._pos_a + a  # every sub-env's (position, action) entry
        reward = self._reward_at[at]
        over = self._over_at[at]
        correct = self._correct_at[at]
        nxt = self._next_at[at]
        ends = self._ends_at[at]
        if self._lazy_at is not None:
            lazy = self._lazy_at[at]
            if np.count_nonzero(lazy):
                self._apply_rules(lazy.nonzero()[0], a, reward, over, correct, nxt, ends)
        self._aborted_cells[self._abort_cell_at[at]] = True
        self._reward += reward
        self._n_correct += correct
        self._pos = nxt
        self._pos_a = nxt * self._n_actions
        self._count += 1
        if np.count_nonzero(ends):
            self._end(ends.nonzero()[0])
        info = {
            "cost": {"env_steps": np.minimum(self._end_step, self._count), "trials": self._done_of[nxt]},
            "trial": self._trial_of[nxt],
            "period": self._period_of[nxt].tolist(),
            "new_trial": over,
            "trial_correct": correct,
        }
        if self._metrics_out is not None:
            info["metrics"] = dict(self._metrics_out)
        return self._obs_of[nxt], reward, self._terminated_out, self._false, info

    def close(self, **kwargs: Any) -> None:
        self.single.close()

    # --- helpers -----------------------------------------------------------------------
    def _tabulate(self, b: TrialBatch) -> None:
        """The positions of every sub-env's trials and each position's outcome for every action (see the class)."""
        n, k, na = self.num_envs, self.trials_per_episode, self._n_actions
        steps = b.inputs.shape[1]
        lens = b.lengths.astype(np.int64)
        slots = lens.copy()
        slots[k - 1 :: k] += 1  # the terminal position after each sub-env's last trial
        cell = np.repeat(np.arange(n * k), slots)  # every position's trial, sub-env * k + trial
        first = np.cumsum(slots) - slots  # every trial's first position
        self._first, self._after = first, first + lens  # after: the position that follows the trial's last step
        pos = np.arange(len(cell))
        t = pos - first[cell]
        terminal = t == lens[cell]
        t -= terminal  # the terminal position repeats the last step
        self._cell_of, self._t_of = cell, t
        src = cell * steps + t
        self._obs_of = b.inputs.reshape(-1, b.inputs.shape[2])[src]
        self._target_of = b.targets.reshape(-1)[src]
        # the period of every step: the index (in the task's period order) of the first period holding it, as the
        # single env's _period_now finds it. trial_blocks lays a trial's periods end to end (each starts where the
        # one before ends), so within the trial the period holding step t is the number of periods that end at or
        # before it (empty ones included)
        names = list(b.periods)
        pid = np.zeros(len(cell), dtype=np.intp)
        for p in names:
            pid += t >= b.periods[p][cell, 1]
        self._period_of = np.array(names, dtype=object)[pid]
        trial = cell % k
        self._trial_of = trial
        self._done_of = trial + terminal  # trials done: at the terminal position, all k
        # what a non-fixate action does: an abort (fixation period), an answer (response period); nothing at the end.
        # The tables start as "nothing happens" (reward 0.0, the next step) and the few entries where something does
        # are written: aborts, answers, trial ends, each reward added in the single env's order (abort, answer, end)
        fix = names.index("fixation") if "fixation" in names else -1
        resp = names.index(self.task.response_period)
        last = (t == lens[cell] - 1) & ~terminal  # the trial runs out after this step (unless answered)
        size = len(cell) * na
        reward, over, correct = np.zeros(size), np.zeros(size, dtype=bool), np.zeros(size, dtype=bool)
        nxt = np.repeat(pos + ~terminal, na)
        abort_cell = np.full(size, n * k)
        moves = np.arange(1, na)
        at = np.flatnonzero((pid == fix) & ~terminal)
        aborts = (at[:, None] * na + moves).reshape(-1)
        reward[aborts] = 0.0 + self._rewards["abort"]
        abort_cell[aborts] = np.repeat(cell[at], na - 1)
        at = np.flatnonzero((pid == resp) & (pid != fix) & ~terminal)  # fixation first, as the single env checks it
        answers = (at[:, None] * na + moves).reshape(-1)  # every tabled answer ends the trial
        over[answers] = True
        nxt[answers] = np.repeat(self._after[cell[at]], na - 1)
        answer_target = np.repeat(self._target_of[at], na - 1)
        at = np.flatnonzero(last)
        run_outs = (at[:, None] * na + np.arange(na)).reshape(-1)
        run_outs = run_outs[~np.repeat(pid[at] == resp, na) | (run_outs % na == 0)]  # not where a move answers
        over[run_outs] = True
        lazy = None
        if self._own_rules:  # answers and trial ends by the task's own methods, at the step
            lazy = np.zeros(size, dtype=bool)
            lazy[answers] = lazy[run_outs] = True
        else:
            if self._response_rule == "interval_timing":
                lazy = np.zeros(size, dtype=bool)
                lazy[answers] = True  # the graded reward at the step (its power in Python floats)
            else:
                hit = answers % na == answer_target if self._response_rule == "base" else answer_target == 1
                reward[answers] += np.where(hit, self._rewards["correct"], self._rewards["fail"])
                correct[answers] = hit
            if self._end_rule == "base":  # 0.0, wrong
                reward[run_outs] += 0.0
            else:  # go/no-go: a missed go the miss penalty, wrong; a withheld no-go 0.0, correct
                go = b.conditions["ground_truth"][cell[run_outs // na]] == 1
                reward[run_outs] += np.where(go, self._rewards["miss"], 0.0)
                correct[run_outs] = ~go
        self._lazy_at = lazy
        self._reward_at, self._over_at, self._correct_at, self._next_at = reward, over, correct, nxt
        self._ends_at = over & np.repeat(trial == k - 1, na)
        self._abort_cell_at = abort_cell
        self._last_of = last
        # [start, end) of every trial's periods as Python ints, for the rules called sub-env by sub-env
        self._period_lists = {p: se.tolist() for p, se in b.periods.items()} if self._own_rules else {}

    def _apply_rules(self, rows: np.ndarray, a: np.ndarray, reward: np.ndarray, over: np.ndarray, correct: np.ndarray,
                     nxt: np.ndarray, ends: np.ndarray) -> None:
        """The untabled outcomes of sub-envs ``rows`` this step, written into the step's arrays."""
        pos = self._pos[rows]
        cell = self._cell_of[pos]
        if not self._own_rules:  # interval timing's goes (every go ends the trial: the tables' next and ends hold)
            task = self.task
            t_prod = (self._t_of[pos] - self._trials.periods["set"][cell, 0]) * task.dt  # ms from the set cue's onset
            prod = self._trials.conditions["production"][cell]
            err = np.abs(t_prod - prod)
            margin = task.margin(prod)
            hit = ~(err > margin)
            ok, fail = task.rewards["correct"], task.rewards["fail"]
            reward[rows] += [max(0.1, (1.0 - x) ** 1.5) * ok if h else fail for x, h in zip((err / margin).tolist(), hit.tolist())]
            correct[rows] = hit
            return
        names, resp, k = self._period_of, self.task.response_period, self.trials_per_episode
        for i, p, c in zip(rows.tolist(), pos.tolist(), cell.tolist()):  # the single env's step, rule by rule
            ai, ti = int(a[i]), int(self._t_of[p])
            cond = {key: v[c] for key, v in self._trials.conditions.items()}
            r, trial_over, ok = 0.0, False, False
            if names[p] == "fixation" and ai != 0:
                r += self._rewards["abort"]
            elif names[p] == resp and ai != 0:
                periods = {q: (se[c][0], se[c][1]) for q, se in self._period_lists.items()}
                rr, trial_over, ok = self.task.response_reward(ai, int(self._target_of[p]), ti, periods, cond)
                r += rr
            if not trial_over and self._last_of[p]:
                rr, ok = self.task.end_reward(cond)
                r += rr
                trial_over = True
            reward[i], over[i], correct[i] = r, trial_over, bool(ok) and trial_over
            nxt[i] = self._after[c] if trial_over else p + 1
            ends[i] = trial_over and c % k == k - 1

    def _end(self, rows: np.ndarray) -> None:
        """Sub-envs ``rows`` ended this step: their metrics, as the single env computes them."""
        n, k = self.num_envs, self.trials_per_episode
        if self._metrics is None:
            self._metrics = {m: np.full(n, np.nan) for m in _METRICS}
        self._metrics["accuracy"][rows] = self._n_correct[rows] / k  # the mean of k booleans: their count over k
        self._metrics["abort_rate"][rows] = self._aborted_cells[: n * k].reshape(n, k)[rows].mean(axis=1)
        self._metrics["reward_per_trial"][rows] = self._reward[rows] / k
        self._active[rows] = False
        self._terminated[rows] = True
        self._end_step[rows] = self._count
        # what step returns until the next end: read-only copies (the same arrays every step, nothing to copy)
        self._metrics_out = {m: v.copy() for m, v in self._metrics.items()}
        self._terminated_out = self._terminated.copy()
        for v in (*self._metrics_out.values(), self._terminated_out):
            v.flags.writeable = False
        self._ended = not np.count_nonzero(self._active)

    def _actions(self, a: np.ndarray) -> np.ndarray | None:
        """The actions as table offsets (int64), those of ended sub-envs ignored (read as 0); None when some running
        sub-env's action is not an integer in ``[0, n_actions)`` or the shape is wrong."""
        if a.shape != self._shape:
            return None
        if a.dtype == np.int64 and a.flags.c_contiguous:  # one comparison: negatives read as huge unsigned
            bad = np.ndarray(a.shape, _U64, a) >= self._n_actions_u  # a uint64 view (cheaper than a.view)
            if not np.count_nonzero(bad):
                return a
        elif a.dtype.kind in "iu":
            bad = (a < 0) | (a >= self._n_actions)
            if not np.count_nonzero(bad):
                return a.astype(np.int64)
        else:
            return None
        if np.count_nonzero(bad & self._active):
            return None
        return np.where(bad, 0, a).astype(np.int64)


__all__ = ["CognitiveTaskVectorEnv"]
