"""Teaching a model new skills (ICML 2026): the papers' methods and the cores the baselines share.

Skill neologisms (SkillNeologism-v0):

:class:`SubmissionAgent` keeps what SkillNeologism-v0 takes (new token rows, prefixes, a weight
delta, demonstrations), starts it from the reset info, asks the env's gradient oracle when it
learns, and applies :meth:`SubmissionAgent.learn` to every gradient that comes back.
:class:`NeologismAgent` is the paper's method: Adam on the new tokens' embedding rows only.

Midtraining (MidtrainingSchedule-v0): :class:`BridgeScheduleAgent` (the paper's bridge: the
specialised source introduced at a fraction ``tau`` of the run with weight ``weight`` beside
general data) is also the schedule core the baselines parameterise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent


class Adam:
    """Adam on one numpy array (in place on the caller's parameter)."""

    def __init__(self, shape: tuple[int, ...], lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        if not lr > 0:
            raise ValueError(f"learning rate must be positive, got {lr}")
        self.lr, self.b1, self.b2, self.eps = float(lr), betas[0], betas[1], eps
        self.m = np.zeros(shape, np.float64)
        self.v = np.zeros(shape, np.float64)
        self.t = 0

    def step(self, param: np.ndarray, grad: np.ndarray) -> None:
        self.t += 1
        g = np.asarray(grad, np.float64)
        self.m = self.b1 * self.m + (1 - self.b1) * g
        self.v = self.b2 * self.v + (1 - self.b2) * g * g
        mhat = self.m / (1 - self.b1**self.t)
        vhat = self.v / (1 - self.b2**self.t)
        param -= (self.lr * mhat / (np.sqrt(vhat) + self.eps)).astype(param.dtype)


class SubmissionAgent(BaseAgent):
    """The state an agent submits to SkillNeologism-v0, and the loop that learns it from the oracle.

    Subclasses set :meth:`start` (initial state from the reset info) and :meth:`learn`
    (use one gradient); ``wants_gradient`` says what to ask the oracle: 0 nothing, 1 the gradient
    of the rows and prefixes, 2 also of the weights."""

    wants_gradient = 1

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._ready = False

    def _begin(self, info: dict[str, Any]) -> None:
        space = self.action_space
        self.bound = float(info["bound"])
        self.vocab = info["vocabulary"]
        self.new_skills = info["new_skills"]
        self.layout = info["parameters"]
        self.rows = np.zeros(space["embeddings"].shape, np.float32)
        self.prefix = np.zeros(space["prefix"].shape, np.float32)
        self.weights = np.zeros(space["weights"].shape, np.float32)
        self.demos = 0
        self.start(info)
        self._ready = True

    def start(self, info: dict[str, Any]) -> None:
        """Set the initial submission (default: each new row at the mean of its kind's skill tokens)."""
        self.rows[:] = self.kind_means()

    def kind_means(self) -> np.ndarray:
        emb = np.asarray(self.vocab["embeddings"], np.float32)
        kinds = self.vocab["kinds"]
        return np.stack([emb[[i for i, k in enumerate(kinds) if k == s["kind"]]].mean(0) for s in self.new_skills])

    def nop_rows(self) -> np.ndarray:
        emb = np.asarray(self.vocab["embeddings"], np.float32)
        return np.repeat(emb[self.vocab["nop"]][None], len(self.new_skills), axis=0)

    def learn(self, grad: dict[str, Any]) -> None:
        """Use one oracle gradient (``embeddings``, ``prefix``, ``weights``)."""

    def observe(self, info: dict[str, Any]) -> None:
        """See a step's info (its ``eval``) before acting."""

    def act(self, obs: Any, info: dict[str, Any]) -> dict[str, Any]:
        if "vocabulary" in info:
            self._begin(info)
        if not self._ready:
            raise RuntimeError(f"{type(self).__name__} acts before seeing the reset info of SkillNeologism-v0")
        if "gradient" in info:
            self.learn(info["gradient"])
        if "eval" in info:
            self.observe(info)
        b = self.bound
        return {
            "embeddings": np.clip(self.rows, -b, b).astype(np.float32),
            "prefix": np.clip(self.prefix, -b, b).astype(np.float32),
            "weights": np.clip(self.weights, -b, b).astype(np.float32),
            "demos": int(self.demos),
            "gradient": int(self.wants_gradient),
        }


class NeologismAgent(SubmissionAgent):
    """The paper's method: new vocabulary tokens whose embedding rows alone are optimised (Adam),
    the model frozen. Each row gets only its own skill's gradient, so the tokens are learned
    independently; they start at the mean embedding of the existing skill tokens of their kind."""

    def __init__(self, lr: float = 0.05) -> None:
        super().__init__()
        self.lr = float(lr)

    def start(self, info: dict[str, Any]) -> None:
        super().start(info)
        self.opt_rows = Adam(self.rows.shape, self.lr)

    def learn(self, grad: dict[str, Any]) -> None:
        self.opt_rows.step(self.rows, grad["embeddings"])


class BridgeScheduleAgent(BaseAgent):
    """Midtraining as distributional bridging: general data only before chunk ``tau * n_chunks``,
    then the specialised target source at ``weight`` beside general data at ``1 - weight``."""

    def __init__(self, tau: float = 0.5, weight: float = 0.3) -> None:
        super().__init__()
        if not 0 <= tau <= 1 or not 0 <= weight <= 1:
            raise ValueError(f"tau and weight must lie in [0, 1], got tau={tau}, weight={weight}")
        self.tau, self.weight = float(tau), float(weight)

    def mixture(self, chunk: int, n_chunks: int, sources: list[str], target: str) -> np.ndarray:
        a = np.zeros(len(sources), np.float32)
        g, t = sources.index("general"), sources.index(target)
        if chunk >= self.tau * n_chunks and self.weight > 0:
            a[t] = self.weight
            a[g] += 1.0 - self.weight
        else:
            a[g] = 1.0
        return a

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        if "sources" in info:
            self._sources, self._target, self._n = list(info["sources"]), info["target"], int(info["n_chunks"])
        chunk = int(round(float(obs[0]) * self._n))
        return self.mixture(chunk, self._n, self._sources, self._target)


__all__ = ["Adam", "BridgeScheduleAgent", "NeologismAgent", "SubmissionAgent"]
