"""Comparators for SkillNeologism-v0 (no token, nearest existing token, in-context examples,
prefix tuning, LoRA and full fine-tuning; LoRA written here in numpy on the oracle's weight
gradient: ``peft`` is not a dependency) and MidtrainingSchedule-v0 (general only, continued
pre-training, early-high, late-high, a small grid)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.skills import Adam, BridgeScheduleAgent, SubmissionAgent


class NoTokenAgent(SubmissionAgent):
    """The new skill's slot left empty (the ``NOP`` token's row): what the model does unprompted."""

    wants_gradient = 0

    def start(self, info: dict[str, Any]) -> None:
        self.rows[:] = self.nop_rows()


class NearestTokenAgent(SubmissionAgent):
    """The nearest existing token by behaviour: tries every token of the slot's kind (and ``NOP``),
    one per step, and keeps the one whose likelihood on the step's fresh batch was highest."""

    wants_gradient = 0

    def start(self, info: dict[str, Any]) -> None:
        kinds, nop = self.vocab["kinds"], self.vocab["nop"]
        self.emb = np.asarray(self.vocab["embeddings"], np.float32)
        self.candidates = [[nop] + [i for i, k in enumerate(kinds) if k == s["kind"]] for s in self.new_skills]
        self.scores = [dict() for _ in self.new_skills]
        self.tried = 0
        self._submit(0)

    def _submit(self, j: int) -> None:
        for i, cands in enumerate(self.candidates):
            if j < len(cands):
                tok = cands[j]
            else:  # every candidate tried: keep the best
                tok = max(self.scores[i], key=self.scores[i].get)
            self.rows[i] = self.emb[tok]
        self.current = [cands[j] if j < len(cands) else None for cands in self.candidates]

    def observe(self, info: dict[str, Any]) -> None:
        for i, s in enumerate(self.new_skills):
            if self.current[i] is not None:
                self.scores[i][self.current[i]] = info["eval"]["likelihood"][s["name"]]
        self.tried += 1
        self._submit(self.tried)


class InContextAgent(SubmissionAgent):
    """In-context examples: as many demonstrations of the task as the context holds before every
    prompt, no token (slot empty), no gradient; their tokens are the env's ``context_tokens`` cost."""

    wants_gradient = 0

    def start(self, info: dict[str, Any]) -> None:
        self.rows[:] = self.nop_rows()
        self.demos = int(info["max_demos"])


class PrefixTuningAgent(SubmissionAgent):
    """Prefix tuning with the neologism's parameter count: one d-vector per skill added to the
    prompt's first position (Adam), the skill's slot left empty."""

    def __init__(self, lr: float = 0.05) -> None:
        super().__init__()
        self.lr = float(lr)

    def start(self, info: dict[str, Any]) -> None:
        self.rows[:] = self.nop_rows()
        self.opt = Adam(self.prefix.shape, self.lr)

    def learn(self, grad: dict[str, Any]) -> None:
        self.opt.step(self.prefix, grad["prefix"])


class LoRAAgent(SubmissionAgent):
    """LoRA (Hu et al. 2022) on every matrix of the transformer blocks, rank ``rank``, scale
    ``alpha / rank``, plus the new tokens' rows (as a practitioner trains added tokens beside the
    adapter). ``B`` starts at zero, ``A`` Gaussian; their gradients come from the oracle's weight
    gradient by the chain rule: ``dB = s G A^T``, ``dA = s B^T G``."""

    wants_gradient = 2

    def __init__(self, rank: int = 2, alpha: float = 4.0, lr: float = 5e-3, row_lr: float = 0.05) -> None:
        super().__init__()
        if rank < 1:
            raise ValueError(f"rank must be >= 1, got {rank}")
        self.rank, self.scale, self.lr, self.row_lr = int(rank), float(alpha) / int(rank), float(lr), float(row_lr)

    def start(self, info: dict[str, Any]) -> None:
        super().start(info)
        self.opt_rows = Adam(self.rows.shape, self.row_lr)
        self.mats = []
        for p in self.layout:
            shape = tuple(p["shape"])
            if p["name"].startswith("blocks.") and len(shape) == 2:
                out, inp = shape
                a = self.np_random.normal(0.0, 1.0 / np.sqrt(inp), size=(self.rank, inp)).astype(np.float32)
                b = np.zeros((out, self.rank), np.float32)
                self.mats.append({"offset": p["offset"], "shape": shape, "A": a, "B": b,
                                  "oA": Adam(a.shape, self.lr), "oB": Adam(b.shape, self.lr)})

    def learn(self, grad: dict[str, Any]) -> None:
        self.opt_rows.step(self.rows, grad["embeddings"])
        g = np.asarray(grad["weights"], np.float32)
        for m in self.mats:
            out, inp = m["shape"]
            gw = g[m["offset"] : m["offset"] + out * inp].reshape(out, inp)
            ga = self.scale * m["B"].T @ gw
            gb = self.scale * gw @ m["A"].T
            m["oA"].step(m["A"], ga)
            m["oB"].step(m["B"], gb)
            self.weights[m["offset"] : m["offset"] + out * inp] = (self.scale * m["B"] @ m["A"]).reshape(-1)


class FullFineTuneAgent(SubmissionAgent):
    """Full fine-tuning: Adam on every weight of the model (as a delta) plus the new tokens' rows."""

    wants_gradient = 2

    def __init__(self, lr: float = 1e-3, row_lr: float = 0.05) -> None:
        super().__init__()
        self.lr, self.row_lr = float(lr), float(row_lr)

    def start(self, info: dict[str, Any]) -> None:
        super().start(info)
        self.opt_rows = Adam(self.rows.shape, self.row_lr)
        self.opt_w = Adam(self.weights.shape, self.lr)

    def learn(self, grad: dict[str, Any]) -> None:
        self.opt_rows.step(self.rows, grad["embeddings"])
        self.opt_w.step(self.weights, grad["weights"])


class GeneralOnlyAgent(BridgeScheduleAgent):
    """General data in every chunk (the target is seen only in post-training)."""

    def __init__(self) -> None:
        super().__init__(tau=1.0, weight=0.0)


class ContinuedPretrainingAgent(BridgeScheduleAgent):
    """Continued pre-training: general data, then the specialised source alone from ``tau`` on."""

    def __init__(self, tau: float = 0.5) -> None:
        super().__init__(tau=tau, weight=1.0)


class GridScheduleAgent(BridgeScheduleAgent):
    """A small grid over (tau, weight): each point scored by one training episode (its own seeds,
    ``train(env, budget)``, budget in episodes), the best objective kept."""

    GRID: tuple[tuple[float, float], ...] = ((0.0, 0.25), (0.0, 0.5), (0.5, 0.25), (0.5, 0.5), (0.75, 0.25), (0.75, 0.5))

    def __init__(self) -> None:
        super().__init__()
        self.scores: dict[tuple[float, float], float] = {}

    def train(self, env, budget: int) -> None:
        self.scores = {}
        for tau, w in self.GRID[: max(1, int(budget))]:
            self.tau, self.weight = tau, w
            obs, info = env.reset(seed=int(self.np_random.integers(2**31)))
            done = False
            while not done:
                obs, r, term, trunc, info = env.step(self.act(obs, info))
                done = term or trunc
            self.scores[(tau, w)] = float(info["metrics"]["objective"])
        self.tau, self.weight = max(self.scores, key=self.scores.get)


__all__ = ["ContinuedPretrainingAgent", "FullFineTuneAgent", "GeneralOnlyAgent", "GridScheduleAgent", "InContextAgent", "LoRAAgent", "NearestTokenAgent", "NoTokenAgent", "PrefixTuningAgent"]
