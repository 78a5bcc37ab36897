"""SpecExit (the paper's early-exit method) and the cores the reasoning baselines share.

SpecExit reads an exit signal from the draft model's hidden state, which speculative
decoding computes anyway: no probe of the target. Our head is a small MLP on the draft's
last-layer state at a line boundary plus the cheap statistics the env exposes; it predicts
(a) whether an answer written now is right (the exit signal, trained on the env's traces'
``exit_correct`` labels) and (b) the fraction of the final length already generated
(progress, an auxiliary target as in the authors' implementation, which predicts
confidence, progress and remaining length). It exits when (a) clears a threshold
calibrated on validation traces: the most eager threshold whose simulated accuracy on those
traces stays within ``tolerance`` of never exiting.

Shared cores: :func:`calibrate` (threshold search on validation traces, used by every
calibrated baseline) and :class:`ExitHead` (reused on the target's hidden state by a baseline).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from icmlgym.agents.protocol import BaseAgent

CONTINUE, EXIT, PROBE, READ_TARGET = 0, 1, 2, 3
STAT_FEATURES = (0, 1, 2, 3, 4, 6, 7)  # every statistic but "target state read" (an action's trace, not a signal)


def simulate(traces: Sequence[dict[str, Any]], fires: Callable[[dict[str, Any]], np.ndarray]) -> tuple[float, float]:
    """Accuracy and mean tokens if a rule exits at the first boundary where ``fires(trace)`` is true.

    The answer written at an exit is right when the trace's ``exit_correct`` says so; a rule that
    never fires keeps the trace's own end.
    """
    acc, tok = [], []
    for tr in traces:
        hit = np.flatnonzero(fires(tr))
        if hit.size:
            b = int(hit[0])
            acc.append(float(tr["exit_correct"][b]))
            tok.append(float(tr["tokens"][b]))
        else:
            acc.append(float(tr["final_correct"]))
            tok.append(float(tr["final_tokens"]))
    return float(np.mean(acc)), float(np.mean(tok))


def calibrate(traces: Sequence[dict[str, Any]], score: Callable[[dict[str, Any]], np.ndarray],
              tolerance: float = 0.01, candidates: Sequence[float] | None = None) -> float:
    """The lowest threshold ``t`` (exit when ``score >= t``) whose simulated accuracy is within ``tolerance`` of never exiting.

    Thresholds are tried from the most eager; ``inf`` (never exit) when none qualifies.
    """
    base = float(np.mean([tr["final_correct"] for tr in traces]))
    scores = [np.asarray(score(tr), np.float64) for tr in traces]
    if candidates is None:
        candidates = np.unique(np.concatenate(scores))
    by_id = {id(tr): s for tr, s in zip(traces, scores)}
    for t in sorted(candidates):
        acc, _ = simulate(traces, lambda tr, t=t: by_id[id(tr)] >= t)
        if acc >= base - tolerance:
            return float(t)
    return float("inf")


class Adam:
    """Adam with decoupled weight decay, in a few lines of torch.

    ``torch.optim``'s first optimiser in a process imports ``torch._dynamo`` (about 8 s on a
    busy core), more than the whole head's training; this has the interface
    :func:`icmlgym.nn.train.train_loop` uses (``zero_grad``, ``step``).
    """

    def __init__(self, params: Any, lr: float, weight_decay: float = 0.0, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        import torch

        self.params = [p for p in params if p.requires_grad]
        self.lr, self.wd, self.betas, self.eps = lr, weight_decay, betas, eps
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        import torch

        self.t += 1
        b1, b2 = self.betas
        with torch.no_grad():
            for p, m, v in zip(self.params, self.m, self.v):
                if p.grad is None:
                    continue
                m.mul_(b1).add_(p.grad, alpha=1 - b1)
                v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                p.mul_(1 - self.lr * self.wd)
                denom = (v / (1 - b2**self.t)).sqrt_().add_(self.eps)
                p.addcdiv_(m / (1 - b1**self.t), denom, value=-self.lr)


def mlp_flops(batch: int, n_in: int, hidden: int, n_out: int) -> tuple[int, int]:
    """Forward and backward FLOPs of one step of a one-hidden-layer MLP on ``batch`` rows, as
    ``FlopCounterMode`` counts them (matrix products only; the inputs need no gradient)."""
    fwd = 2 * batch * (n_in * hidden + hidden * n_out)
    bwd = 2 * batch * n_in * hidden + 4 * batch * hidden * n_out
    return fwd, bwd


class ExitHead:
    """An MLP from boundary features to (exit-is-right logit, progress); standardised inputs."""

    def __init__(self, hidden: int = 64, lr: float = 3e-3, weight_decay: float = 1e-3, seed: int = 0) -> None:
        self.hidden, self.lr, self.weight_decay, self.seed = hidden, lr, weight_decay, seed
        self.net = None

    def fit(self, x: np.ndarray, exit_ok: np.ndarray, progress: np.ndarray, steps: int) -> "ExitHead":
        """Train ``steps`` Adam steps on batches of 128 rows (the run's meter counts steps, examples and FLOPs).

        The loop is :func:`icmlgym.nn.train.train_loop`'s (same batches, clipping and order of
        operations), without its ``FlopCounterMode``: entering that mode imports ``torch._dynamo``
        (about 6 s per process on a busy core, most of a smoke run), and an MLP's FLOPs are known in
        closed form (:func:`mlp_flops`).
        """
        import torch

        from icmlgym.nn.counters import CostMeter
        from icmlgym.nn.runtime import current

        self.mean, self.std = x.mean(0), x.std(0) + 1e-6
        gen = torch.Generator().manual_seed(int(self.seed))
        torch.manual_seed(int(self.seed))
        self.net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], self.hidden), torch.nn.GELU(), torch.nn.Linear(self.hidden, 2))
        X = torch.tensor((x - self.mean) / self.std, dtype=torch.float32)
        Y = torch.tensor(exit_ok, dtype=torch.float32)
        P = torch.tensor(progress, dtype=torch.float32)
        opt = Adam(self.net.parameters(), self.lr, weight_decay=self.weight_decay)
        n = len(X)
        ctx = current()
        meter = ctx.meter if ctx is not None else CostMeter()
        bce, mse = torch.nn.functional.binary_cross_entropy_with_logits, torch.nn.functional.mse_loss
        self.net.train()
        for step in range(max(1, int(steps))):
            idx = torch.randint(0, n, (min(128, n),), generator=gen)
            opt.zero_grad()
            out = self.net(X[idx])
            loss = bce(out[:, 0], Y[idx]) + mse(torch.sigmoid(out[:, 1]), P[idx])
            loss.backward()
            value = float(loss.detach())
            if not np.isfinite(value):
                raise FloatingPointError(f"exit head training loss is {value} at step {step}")
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
            opt.step()
            fwd, bwd = mlp_flops(len(idx), x.shape[1], self.hidden, 2)
            for name, value in (("gradient_steps", 1), ("train_examples", len(idx)), ("forward_flops", fwd), ("backward_flops", bwd)):
                meter.add(name, value)
        self.net.eval()
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Probability that an answer written now is right, per row."""
        import torch

        with torch.no_grad():
            out = self.net(torch.tensor((np.atleast_2d(x) - self.mean) / self.std, dtype=torch.float32))
        return torch.sigmoid(out[:, 0]).numpy().astype(np.float64)


def features(draft_or_target: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """Head inputs: a hidden state (rows) and the cheap statistics but the read flag."""
    return np.concatenate([np.atleast_2d(draft_or_target), np.atleast_2d(stats)[:, STAT_FEATURES]], axis=1)


class HeadExitAgent(BaseAgent):
    """Exit when an :class:`ExitHead` on a hidden state says an answer now is right (threshold from validation traces).

    Args:
        source: "draft" (SpecExit: the draft's state, no extra target work) or "target"
            (reads the target's state at every boundary first).
        n_train, n_val: traces decoded from the train / val split (cached by the env).
        tolerance: accuracy the threshold may give up on validation traces against never exiting.
        hidden: MLP width.
    """

    name = "specexit"

    def __init__(self, source: str = "draft", n_train: int = 96, n_val: int = 64, tolerance: float = 0.01, hidden: int = 64) -> None:
        super().__init__()
        if source not in ("draft", "target"):
            raise ValueError(f"source must be 'draft' or 'target', got {source!r}")
        if n_train < 1 or n_val < 1 or not 0 <= tolerance < 1 or hidden < 1:
            raise ValueError(f"need n_train, n_val, hidden >= 1 and 0 <= tolerance < 1; got {n_train}, {n_val}, {tolerance}, {hidden}")
        self.source, self.n_train, self.n_val, self.tolerance, self.hidden = source, int(n_train), int(n_val), float(tolerance), int(hidden)
        self.head: ExitHead | None = None
        self.threshold = float("inf")

    def _x(self, tr: dict[str, Any]) -> np.ndarray:
        return features(tr[f"{self.source}_hidden"], tr["stats"])

    def train(self, env: Any, budget: int) -> None:
        base = env.unwrapped
        train = base.traces(self.n_train, "train", seed=0)
        val = base.traces(self.n_val, "val", seed=1)
        x = np.concatenate([self._x(tr) for tr in train])
        ok = np.concatenate([tr["exit_correct"] for tr in train])
        progress = np.concatenate([np.minimum(tr["tokens"] / max(tr["final_tokens"], 1.0), 1.0) for tr in train])
        self.head = ExitHead(self.hidden, seed=int(self.np_random.integers(2**31 - 1))).fit(x, ok, progress, int(budget))
        self.threshold = calibrate(val, lambda tr: self.head.predict(self._x(tr)), self.tolerance)

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        if self.head is None:
            raise RuntimeError(f"{type(self).__name__} must be trained first (train(env, budget))")
        if self.source == "target" and obs["stats"][5] == 0:
            return READ_TARGET
        p = float(self.head.predict(features(obs[f"{self.source}_hidden"], obs["stats"]))[0])
        return EXIT if p >= self.threshold else CONTINUE


class SpecExitAgent(HeadExitAgent):
    """SpecExit: the exit head on the draft's hidden states (zero probes, no extra target work)."""

    name = "specexit"

    def __init__(self, n_train: int = 96, n_val: int = 64, tolerance: float = 0.01, hidden: int = 64) -> None:
        super().__init__("draft", n_train, n_val, tolerance, hidden)


__all__ = ["ExitHead", "HeadExitAgent", "SpecExitAgent", "calibrate", "features", "mlp_flops", "simulate"]


# ----------------------------------------------------------------------------- speculative reasoning (DREAM-R)

ACCEPT, REJECT, TOKEN = 0, 1, 2  # SpeculativeReasoning-v0's actions


class TBVMAgent(BaseAgent):
    """DREAM-R's TBVM: accept a draft step only when positive evidence clearly dominates, at every token.

    For each token of the draft's step the evidence for it is the target's probability of that
    token, the evidence against is the target's highest probability of any other token; the
    step is accepted when the ratio is at least ``ratio`` at every token (one doubtful token,
    e.g. a wrong digit, rejects the step: no error propagates into later steps).

    Args:
        ratio: how clearly the evidence for must dominate (2: twice the strongest alternative).
    """

    name = "tbvm"

    def __init__(self, ratio: float = 2.0) -> None:
        super().__init__()
        if not ratio > 0:
            raise ValueError(f"ratio must be > 0, got {ratio}")
        self.ratio = float(ratio)

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        m = obs["mask"] > 0
        p, against = obs["target_probs"][m].astype(np.float64), obs["target_runner_up"][m].astype(np.float64)
        return ACCEPT if np.all(p >= self.ratio * against) else REJECT


__all__ += ["TBVMAgent"]
