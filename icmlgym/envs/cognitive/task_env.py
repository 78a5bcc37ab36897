"""A cognitive task as a Gymnasium env, one time step of ``dt`` ms per env step.

Description:
    One of the six NeuroGym-style tasks of :mod:`icmlgym.envs.cognitive.tasks`
    (perceptual decision making, context-dependent integration, delayed
    match-to-sample, go/no-go, delayed comparison, interval timing), as used to
    train recurrent networks in the ICML 2026 paper on heavy-tailed, Dale-constrained
    RNNs. An episode is a block of ``trials_per_episode`` trials; the agent sees
    the noisy input channels of the current trial step by step and acts: fixate
    until the response period, then choose. Useful to any RL agent on its own.

Action Space:
    ``Discrete(n_actions)``: 0 = fixate, then the task's choices (for example
    ``choice1``, ``choice2``; ``match``/``non-match``; ``go``). Every action is
    accepted; a non-fixate action in the fixation period costs the abort penalty.

Observation Space:
    ``Box(-inf, inf, (n_input,), float32)``: the fixation cue (1 until the response
    period), the stimulus channels (with Gaussian noise of s.d. ``sigma / sqrt(dt)``)
    and any context or cue channels; see the task's ``input_names``.

Rewards:
    NeuroGym's: abort -0.1 per non-fixate step in the fixation period; correct +1;
    wrong 0 (go/no-go: a go on a no-go trial -0.5, a missed go -0.5; interval
    timing: ``max(0.1, (1 - err / margin) ** 1.5)`` within the margin, else 0).

Starting State:
    The first step of the first of ``trials_per_episode`` trials drawn at reset.

Episode End:
    A trial ends at the first non-fixate action of its response period (the answer)
    or when its last step has passed; the episode terminates when the last trial
    ends. Never truncated by the env.

Arguments:
    ``task``: one of ``perceptual_decision``, ``context_integration``,
    ``delayed_match``, ``go_nogo``, ``delayed_comparison``, ``interval_timing``;
    ``trials_per_episode`` (default 20); ``task_kwargs``: the task's own
    arguments (``dt``, ``sigma``, ``timing``, ``cohs``, ...).

Metrics:
    ``accuracy`` (fraction of trials answered correctly), ``abort_rate`` (trials
    with a fixation break), ``reward_per_trial``. Cost: ``env_steps``, ``trials``.

Version History:
    v0: first version.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.envs.cognitive.tasks import CognitiveTask, TrialBatch, make_task


class CognitiveTaskEnv(gym.Env):
    """One NeuroGym-style cognitive task as a step-per-``dt`` Gymnasium env."""

    metadata = {"render_modes": []}

    def __init__(self, task: str = "perceptual_decision", trials_per_episode: int = 20, task_kwargs: dict[str, Any] | None = None) -> None:
        if int(trials_per_episode) < 1:
            raise ValueError(f"trials_per_episode must be >= 1, got {trials_per_episode}")
        self.task: CognitiveTask = make_task(task, **dict(task_kwargs or {}))
        self.trials_per_episode = int(trials_per_episode)
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(self.task.n_input,), dtype=np.float32)
        self.action_space = spaces.Discrete(self.task.n_actions)
        self._batch: TrialBatch | None = None
        self._ended = False

    # --- helpers -----------------------------------------------------------------------
    def _obs(self) -> np.ndarray:
        return self._batch.inputs[self._trial, self._t].copy()

    def _period_now(self) -> str:
        b = self._batch
        for p, se in b.periods.items():
            if se[self._trial, 0] <= self._t < se[self._trial, 1]:
                return p
        return ""

    def _cond(self) -> dict[str, Any]:
        return {k: v[self._trial] for k, v in self._batch.conditions.items()}

    def _info(self) -> dict[str, Any]:
        return {"cost": {"env_steps": self._steps, "trials": self._done_trials}, "trial": self._trial, "period": self._period_now()}

    # --- Gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._batch = self.task.batch(self.trials_per_episode, self.np_random)
        self._trial, self._t, self._steps, self._done_trials = 0, 0, 0, 0
        self._correct = np.zeros(self.trials_per_episode, dtype=bool)
        self._aborted = np.zeros(self.trials_per_episode, dtype=bool)
        self._reward = 0.0
        self._ended = False
        return self._obs(), self._info()

    def step(self, action: Any):
        if self._batch is None:
            raise RuntimeError("call reset() before step()")
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space}")
        if self._ended:
            raise RuntimeError("step() called after the episode ended; call reset()")
        a = int(action)
        b, i, t = self._batch, self._trial, self._t
        periods = {p: (int(se[i, 0]), int(se[i, 1])) for p, se in b.periods.items()}
        period = self._period_now()
        reward, trial_over, new_trial_info = 0.0, False, {}
        if period == "fixation" and a != 0:
            reward += self.task.rewards["abort"]
            self._aborted[i] = True
        elif period == self.task.response_period and a != 0:
            r, trial_over, correct = self.task.response_reward(a, int(b.targets[i, t]), t, periods, self._cond())
            reward += r
            self._correct[i] = correct
        self._steps += 1
        self._t += 1
        if not trial_over and self._t >= b.lengths[i]:
            r, correct = self.task.end_reward(self._cond())
            reward += r
            self._correct[i] = correct
            trial_over = True
        self._reward += reward
        terminated = False
        if trial_over:
            self._done_trials += 1
            new_trial_info = {"new_trial": True, "trial_correct": bool(self._correct[i])}
            if self._trial + 1 >= self.trials_per_episode:
                terminated = True
                self._t = int(b.lengths[i]) - 1  # the last observation repeats the trial's last step
            else:
                self._trial += 1
                self._t = 0
        info = {**self._info(), **new_trial_info}
        self._ended = terminated
        if terminated:
            info["metrics"] = {
                "accuracy": float(self._correct.mean()),
                "abort_rate": float(self._aborted.mean()),
                "reward_per_trial": float(self._reward / self.trials_per_episode),
            }
        return self._obs(), float(reward), terminated, False, info


__all__ = ["CognitiveTaskEnv"]
