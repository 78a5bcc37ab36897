"""Early-exit comparators for EarlyExit-v0: never exit, a token budget, DEER (trial answers), draft entropy, a target-state head.

Every calibrated baseline picks its threshold on validation traces with the same rule as
SpecExit (:func:`icmlgym.agents.reasoning.calibrate`: the most eager threshold whose
simulated accuracy stays within ``tolerance`` of never exiting), so they are compared at
(about) equal accuracy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import BaseAgent
from icmlgym.agents.reasoning import CONTINUE, EXIT, PROBE, TOKEN, HeadExitAgent, calibrate


class NeverExitAgent(BaseAgent):
    """Plain speculative decoding: always continue (the model ends when it writes its answer)."""

    name = "never-exit"

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        return CONTINUE


class _Calibrated(BaseAgent):
    """A rule with one threshold chosen on validation traces."""

    def __init__(self, n_val: int = 64, tolerance: float = 0.01) -> None:
        super().__init__()
        if n_val < 1 or not 0 <= tolerance < 1:
            raise ValueError(f"need n_val >= 1 and 0 <= tolerance < 1; got {n_val}, {tolerance}")
        self.n_val, self.tolerance = int(n_val), float(tolerance)
        self.threshold: float | None = None

    def score(self, tr: dict[str, Any]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def train(self, env: Any, budget: int) -> None:
        self.threshold = calibrate(env.unwrapped.traces(self.n_val, "val", seed=1), self.score, self.tolerance)

    def _threshold(self) -> float:
        if self.threshold is None:
            raise RuntimeError(f"{type(self).__name__} must be calibrated first (train(env, budget))")
        return self.threshold


class TokenBudgetAgent(_Calibrated):
    """Exit at the first boundary after ``budget`` generated tokens (the budget calibrated on validation traces unless given)."""

    name = "token-budget"

    def __init__(self, budget: int | None = None, n_val: int = 64, tolerance: float = 0.01) -> None:
        super().__init__(n_val, tolerance)
        if budget is not None and budget < 0:
            raise ValueError(f"budget must be >= 0 tokens, got {budget}")
        self.threshold = None if budget is None else float(budget)

    def score(self, tr: dict[str, Any]) -> np.ndarray:
        return tr["tokens"]

    def train(self, env: Any, budget: int) -> None:
        if self.threshold is None:
            super().train(env, budget)

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        return EXIT if obs["stats"][1] >= self._threshold() else CONTINUE


class DEERAgent(_Calibrated):
    """DEER: at every boundary force a trial answer (a probe); exit when it is confident.

    ``mode="confidence"``: the mean probability of the trial answer's tokens clears a threshold
    calibrated on validation traces. ``mode="consistency"``: the trial answer equals the previous
    boundary's (answer consistency; no threshold).
    """

    name = "deer"

    def __init__(self, mode: str = "confidence", n_val: int = 64, tolerance: float = 0.01) -> None:
        super().__init__(n_val, tolerance)
        if mode not in ("confidence", "consistency"):
            raise ValueError(f"mode must be 'confidence' or 'consistency', got {mode!r}")
        self.mode = mode
        if mode == "consistency":
            self.threshold = 0.5

    def score(self, tr: dict[str, Any]) -> np.ndarray:
        return tr["trial"][:, 1] if self.mode == "confidence" else tr["trial"][:, 3]

    def train(self, env: Any, budget: int) -> None:
        if self.mode == "confidence":
            super().train(env, budget)

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        trial = obs["trial"]
        if trial[0] == 0:
            return PROBE
        value = trial[1] if self.mode == "confidence" else trial[3]
        return EXIT if value >= self._threshold() else CONTINUE


class DraftEntropyAgent(_Calibrated):
    """SVIP-style: exit when the draft is sure of what comes next (low entropy of its next token), threshold calibrated."""

    name = "draft-entropy"

    def score(self, tr: dict[str, Any]) -> np.ndarray:
        return -tr["stats"][:, 2]

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        return EXIT if -obs["stats"][2] >= self._threshold() else CONTINUE


class TargetHeadExitAgent(HeadExitAgent):
    """SpecExit's head on the target's hidden state (reads it at every boundary: extra target passes)."""

    name = "target-head"

    def __init__(self, n_train: int = 96, n_val: int = 64, tolerance: float = 0.01, hidden: int = 64) -> None:
        super().__init__("target", n_train, n_val, tolerance, hidden)


__all__ = ["DEERAgent", "DraftEntropyAgent", "NeverExitAgent", "TargetHeadExitAgent", "TokenBudgetAgent"]


# ----------------------------------------------------------------------------- SpeculativeReasoning-v0

class AlwaysAcceptAgent(BaseAgent):
    """Keep every draft step (the draft alone, verified by nobody)."""

    name = "always-accept"

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        return 0


class AlwaysRejectAgent(BaseAgent):
    """Reject every draft step: the target writes everything (target-only accuracy, plus the wasted drafts)."""

    name = "always-reject"

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        return 1


class SpecReasonAgent(BaseAgent):
    """SpecReason-style: accept a step when the target's score of it clears a threshold.

    The score is the target's geometric-mean probability of the step's tokens (SpecReason asks
    the target for a 0-9 utility score and accepts at 7 or more: ``threshold`` 0.7 is its analogue).
    """

    name = "specreason"

    def __init__(self, threshold: float = 0.7) -> None:
        super().__init__()
        if not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be in [0, 1], got {threshold}")
        self.threshold = float(threshold)

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        m = obs["mask"] > 0
        score = float(np.exp(np.mean(np.log(np.maximum(obs["target_probs"][m].astype(np.float64), 1e-12)))))
        return 0 if score >= self.threshold else 1


class TokenSpeculativeAgent(BaseAgent):
    """Token-level speculative decoding (lossless): verify every drafted step token by token.

    The target's pass over the draft's step keeps the drafted tokens by rejection sampling and
    resamples the first rejected one from the residual; the rest of the step follows in rounds of
    4 draft tokens. The text is distributed exactly as the target's own sampling: the accuracy of
    the target alone, at a speed-up that comes only from drafted tokens the target agrees with.
    """

    name = "token-speculative"

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        return TOKEN


__all__ += ["AlwaysAcceptAgent", "AlwaysRejectAgent", "SpecReasonAgent", "TokenSpeculativeAgent"]
