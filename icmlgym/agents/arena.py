"""The paper's method for the choice arenas: visual prompt optimization (VPO).

"Visual persuasion" (ICML 2026, arXiv 2602.15278) optimises images for a VLM
chooser by proposing plausible edits, applying them, and keeping what wins in
counterbalanced head-to-head queries. Our VPO loop proposes edits with a
Thompson-sampling bandit over edit directions ("lighting up", "background
cleaner", ...), sizes each proposal with a per-direction step that grows after
a win and shrinks after a loss, and keeps an incumbent: a proposal is kept only
if its estimated score (win rate minus the drift penalty) beats the
incumbent's, whose estimate is pooled over every re-evaluation. Where the
paper's proposer is a language model, ours is the bandit: no prior knowledge of
which edits the chooser likes.

:class:`IncumbentAgent` is the keep-what-wins machinery the arena baselines share.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent


class IncumbentAgent(BaseAgent):
    """Keep-what-wins optimiser over the arena's edit vector (ChoiceArena-v0 or one ChoiceMarket-v0 seller).

    Subclasses implement :meth:`propose` (an edit index and an absolute magnitude,
    given the incumbent edit vector) and may use :meth:`feedback`. This class
    handles the rest, using only the observation: it scores each state as
    ``win_rate - drift_penalty * (1 - ssim)``, keeps a proposal only if it beats the
    incumbent, reverts a losing proposal (unless the next proposal overwrites the
    same edit), pools repeated estimates of the incumbent, and spends the last step
    of the budget making sure the episode ends on the incumbent.

    Args:
        drift_penalty: the penalty weight used to score states (the env's default 0.5;
            taken from the env kwargs when the spec has them).
    """

    def __init__(self, drift_penalty: float | None = None) -> None:
        super().__init__()
        self._lam_arg = drift_penalty

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.lam = float(self._lam_arg if self._lam_arg is not None else spec.env_kwargs.get("drift_penalty", 0.5))
        self.n_edits = int(spec.action_space["edit"].n)
        self.theta_inc: np.ndarray | None = None
        self.value_inc = 0.0
        self.n_inc = 0
        self.ssim_inc = 1.0
        self._last: tuple[str, int, float] | None = None  # (kind, edit, magnitude)

    # -- to override
    def propose(self, theta_inc: np.ndarray) -> tuple[int, float]:
        raise NotImplementedError

    def feedback(self, edit: int, magnitude: float, gain: float, accepted: bool) -> None:
        """Called after each proposal with its score gain over the incumbent."""

    def prefers_edit(self) -> int | None:
        """The edit the next proposal will touch, if known in advance (lets a loss be overwritten)."""
        return None

    # -- machinery
    @staticmethod
    def _horizon(obs: dict[str, np.ndarray]) -> int:
        return int(obs["history"].shape[0] if "history" in obs else obs["shares"].shape[0])

    def _value(self, obs: dict[str, np.ndarray]) -> float:
        """The observed win estimate: ChoiceArena's ``win_rate``, or ChoiceMarket's own share last round."""
        if "win_rate" in obs:
            return float(obs["win_rate"][0])
        done = int(round((1.0 - float(obs["budget_left"][0])) * self._horizon(obs)))
        return float(obs["shares"][done - 1, 0]) if done > 0 else 1.0 / obs["shares"].shape[1]

    def _score(self, win: float, ssim: float) -> float:
        return win - self.lam * (1.0 - ssim)

    @staticmethod
    def _action(edit: int, magnitude: float) -> dict[str, Any]:
        return {"edit": int(edit), "magnitude": np.array([np.clip(magnitude, -1.0, 1.0)], dtype=np.float32)}

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> dict[str, Any]:
        theta = np.asarray(obs["theta"], dtype=np.float32)
        if self.theta_inc is None:
            self.theta_inc = theta.copy()
            self.value_inc = self._value(obs)
            self.n_inc = 1
            self.ssim_inc = float(obs["ssim"][0])
        steps_left = int(round(float(obs["budget_left"][0]) * self._horizon(obs)))
        diff = np.flatnonzero(theta != self.theta_inc)
        if len(diff):
            e = int(diff[0])
            nxt = self.prefers_edit()
            if steps_left <= 1 or nxt != e:
                self._last = ("revert", e, float(self.theta_inc[e]))
                return self._action(e, self.theta_inc[e])
        elif steps_left <= 1:
            # the last step re-evaluates the incumbent instead of risking an unverified edit
            self._last = ("revert", 0, float(self.theta_inc[0]))
            return self._action(0, self.theta_inc[0])
        e, m = self.propose(self.theta_inc.copy())
        self._last = ("propose", int(e), float(np.clip(m, -1.0, 1.0)))
        return self._action(e, m)

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        if self._last is None or self.theta_inc is None:
            return
        kind, e, m = self._last
        win = self._value(next_obs)
        ssim = float(next_obs["ssim"][0])
        theta = np.asarray(next_obs["theta"], dtype=np.float32)
        if kind == "revert" or np.array_equal(theta, self.theta_inc):
            self.value_inc = (self.value_inc * self.n_inc + win) / (self.n_inc + 1)
            self.n_inc += 1
            return
        gain = self._score(win, ssim) - self._score(self.value_inc, self.ssim_inc)
        accepted = gain > 0
        if accepted:
            self.theta_inc = theta.copy()
            self.value_inc, self.n_inc, self.ssim_inc = win, 1, ssim
        self.feedback(e, m, gain, accepted)


class VisualPromptOptimizer(IncumbentAgent):
    """VPO: a Thompson bandit over edit types proposes edits; keep what wins.

    Each edit type is an arm whose value is the score gain its proposals bring
    (Gaussian posterior: prior ``N(0, prior_std^2)``, noise ``noise_std``). The chosen
    type moves from the incumbent by its current step in its current direction; a
    kept proposal grows the step, a rejected one flips the direction and, after
    both directions lost, shrinks the step.

    Args:
        step: initial step of each edit type (magnitude units).
        grow, shrink: step multipliers after a kept proposal / after both directions lost.
        min_step: smallest step.
        prior_std, noise_std: the bandit's Gaussian prior and noise scales (score units).
        drift_penalty: see :class:`IncumbentAgent`.
    """

    name = "arena-vpo"

    def __init__(
        self,
        step: float = 0.5,
        grow: float = 1.3,
        shrink: float = 0.5,
        min_step: float = 0.1,
        prior_std: float = 0.1,
        noise_std: float = 0.1,
        drift_penalty: float | None = None,
    ) -> None:
        super().__init__(drift_penalty=drift_penalty)
        if not 0 < min_step <= step <= 1:
            raise ValueError(f"need 0 < min_step <= step <= 1, got min_step={min_step}, step={step}")
        if grow < 1 or not 0 < shrink < 1:
            raise ValueError(f"need grow >= 1 and 0 < shrink < 1, got {grow}, {shrink}")
        if prior_std <= 0 or noise_std <= 0:
            raise ValueError(f"prior_std and noise_std must be positive, got {prior_std}, {noise_std}")
        self.step0, self.grow, self.shrink, self.min_step = step, grow, shrink, min_step
        self.prior_std, self.noise_std = prior_std, noise_std

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.gain_sum = np.zeros(self.n_edits)
        self.n_tried = np.zeros(self.n_edits)
        self.steps = np.full(self.n_edits, self.step0)
        self.direction = np.ones(self.n_edits)
        self.losses = np.zeros(self.n_edits, dtype=int)  # consecutive losses of the current step
        self._next: int | None = None
        self._edit = 0

    def _target(self, e: int, theta_inc: np.ndarray) -> float:
        return float(np.clip(theta_inc[e] + self.direction[e] * self.steps[e], -1.0, 1.0))

    def _sample_edit(self) -> int:
        assert self.theta_inc is not None
        prec = 1 / self.prior_std**2 + self.n_tried / self.noise_std**2
        mean = (self.gain_sum / self.noise_std**2) / prec
        draws = mean + self.np_random.standard_normal(self.n_edits) / np.sqrt(prec)
        for e in range(self.n_edits):
            if self._target(e, self.theta_inc) == self.theta_inc[e]:
                self.direction[e] *= -1  # at a bound: the only way is back
                if self._target(e, self.theta_inc) == self.theta_inc[e]:
                    draws[e] = -np.inf
        return int(np.argmax(draws))

    def prefers_edit(self) -> int | None:
        self._next = self._sample_edit()
        return self._next

    def propose(self, theta_inc: np.ndarray) -> tuple[int, float]:
        e = self._next if self._next is not None else self._sample_edit()
        self._next = None
        self._edit = e
        return e, self._target(e, theta_inc)

    def feedback(self, edit: int, magnitude: float, gain: float, accepted: bool) -> None:
        e = self._edit
        self.gain_sum[e] += gain
        self.n_tried[e] += 1
        if accepted:
            self.steps[e] = min(1.0, self.steps[e] * self.grow)
            self.losses[e] = 0
        else:
            self.direction[e] *= -1
            self.losses[e] += 1
            if self.losses[e] >= 2:
                self.steps[e] = max(self.min_step, self.steps[e] * self.shrink)
                self.losses[e] = 0
