"""The paper's method: Dale's principle with log-normal magnitudes maintained by optimal transport.

:class:`RNNTrainerAgent` trains a :class:`icmlgym.nn.recurrent.RecurrentNetwork` on the
training trials ``icmlgym/CognitiveRNN-v0`` hands out at reset (supervised,
cross-entropy on the ground-truth action of every step, the response period weighted
up) for ``budget`` gradient steps of Adam, applying the constraint's projection after
each step, and submits the effective weights. The reference,
:class:`HeavyTailedDaleAgent`, uses :class:`icmlgym.nn.recurrent.DaleDistribution` with
a log-normal target; the baselines (:mod:`icmlgym.baselines.cognitive`) change only the
constraint (or add an L1 penalty), with the same initial gain, optimiser and data.

:class:`RNNPolicyAgent` plays the step-by-step task envs ``icmlgym/Cog*-v0``: it trains
the same network on trials it draws from the task's public generator, then runs it
online, one env step per network step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.catalog import require_extra


def _torch():
    require_extra("cognitive", what="the cognitive RNN agents")
    import torch

    return torch


def hold_response(targets: np.ndarray, response_mask: np.ndarray) -> np.ndarray:
    """Training targets: from the first non-fixate ground truth of the response period to its end,
    keep answering (the first answer is what is scored; a one-step go becomes a held go)."""
    out = targets.copy()
    answer = response_mask & (targets > 0)
    has = answer.any(axis=1)
    first = np.argmax(answer, axis=1)
    t = np.arange(targets.shape[1])[None, :]
    after = response_mask & (t >= first[:, None]) & has[:, None]
    out[after] = np.repeat(targets[np.arange(len(targets)), first], after.sum(1))
    return out


def make_constraint(name: str, shape: float = 1.0, frac_exc: float = 0.8, solver: str = "rank"):
    """A constraint by name: ``dale-lognormal`` (OT to a log-normal), ``dale-halfnormal`` (OT to a
    half-normal of equal second moment), ``dale`` (signs only, log-normal start), ``none``."""
    from icmlgym.nn import recurrent as rec

    if name == "dale-lognormal":
        return rec.DaleDistribution(frac_exc=frac_exc, target="lognormal", shape=shape, solver=solver)
    if name == "dale-halfnormal":
        return rec.DaleDistribution(frac_exc=frac_exc, target="halfnormal", shape=shape, solver=solver)
    if name == "dale":
        return rec.Dale(frac_exc=frac_exc, target="lognormal", shape=shape)
    if name == "none":
        return rec.Unconstrained()
    raise ValueError(f"unknown constraint {name!r}; known: 'dale-lognormal', 'dale-halfnormal', 'dale', 'none'")


def fit_network(
    net,
    inputs: np.ndarray,
    targets: np.ndarray,
    response_mask: np.ndarray,
    steps: int,
    rng: np.random.Generator,
    batch_size: int = 32,
    lr: float = 0.01,
    l1: float = 0.0,
    response_weight: float = 5.0,
) -> dict[str, int]:
    """Train ``net`` on the trials for ``steps`` Adam steps (minibatches drawn by ``rng``);
    returns the counters ``gradient_steps``, ``train_examples``, ``forward_flops``, ``backward_flops``
    (FLOPs counted by :func:`icmlgym.nn.counters.count_flops` from the dispatched ops)."""
    torch = _torch()
    from icmlgym.nn.counters import CostMeter, count_flops

    x_all = torch.as_tensor(inputs, dtype=torch.float32)
    y_all = torch.as_tensor(hold_response(targets, response_mask), dtype=torch.long)
    w_all = torch.as_tensor(np.where(targets < 0, 0.0, 1.0 + (response_weight - 1.0) * response_mask), dtype=torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    n = len(inputs)
    meter = CostMeter({"gradient_steps": 0, "train_examples": 0, "forward_flops": 0, "backward_flops": 0})
    for _ in range(int(steps)):
        idx = torch.as_tensor(rng.integers(0, n, size=min(batch_size, n)))
        x, y, w = x_all[idx], y_all[idx], w_all[idx]
        fwd, bwd = count_flops(net, (x,), backward=True)
        logits = net(x)
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.clamp(min=0).reshape(-1), reduction="none")
        loss = (ce * w.reshape(-1)).sum() / w.sum()
        if l1 > 0:
            loss = loss + l1 * net.w_rec.abs().sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        net.project_()
        meter.add("gradient_steps")
        meter.add("train_examples", len(idx))
        meter.add("forward_flops", fwd)
        meter.add("backward_flops", bwd)
    return {k: int(v) for k, v in meter.as_dict().items()}


class RNNTrainerAgent(BaseAgent):
    """Trains a constrained rate RNN on ``icmlgym/CognitiveRNN-v0``'s training trials; submits its weights.

    Args:
        constraint: see :func:`make_constraint`.
        shape: log-normal shape (s.d. of log-magnitude); heavier tails for larger values.
        l1: L1 penalty on the recurrent weights (0: none).
        n_hidden: units to use (None: the env's whole budget; fewer are zero-padded).
        lr, batch_size, response_weight: the optimiser's settings (the same for every variant).
        gain: RMS of the initial recurrent weights times sqrt(n_hidden) (matched across variants).
        solver: ``rank`` (exact 1-D OT) or ``pot`` (POT's exact solver) for the projection.
    """

    name = "cognitive-rnn"
    constraint_name = "none"

    def __init__(
        self,
        constraint: str | None = None,
        shape: float = 1.0,
        l1: float = 0.0,
        n_hidden: int | None = None,
        lr: float = 0.01,
        batch_size: int = 32,
        response_weight: float = 5.0,
        gain: float = 1.0,
        solver: str = "rank",
    ) -> None:
        super().__init__()
        self.constraint = constraint or self.constraint_name
        make_constraint(self.constraint, shape=shape, solver=solver)  # a bad name fails at construction
        self.shape, self.l1, self.n_hidden = float(shape), float(l1), n_hidden
        self.lr, self.batch_size, self.response_weight, self.gain, self.solver = float(lr), int(batch_size), float(response_weight), float(gain), solver
        self.weights: dict[str, np.ndarray] | None = None
        self.counters: dict[str, int] = {}
        self._seed = 0

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        if seed is not None and self.weights is None:
            self._seed = int(seed)

    def build(self, n_input: int, n_hidden: int, n_output: int, alpha: float, rate_max: float):
        _torch()
        from icmlgym.nn.recurrent import RecurrentNetwork
        from icmlgym.nn.runtime import seed_everything

        seed_everything(self._seed)
        return RecurrentNetwork(
            n_input, n_hidden, n_output, make_constraint(self.constraint, self.shape, solver=self.solver), alpha=alpha, rate_max=rate_max, gain=self.gain, seed=self._seed
        )

    def train(self, env, budget: int) -> None:
        """Reset ``env`` for its training trials, train for ``budget`` gradient steps, keep the weights."""
        _, info = env.reset()
        spec, data = info["network"], info["train_trials"]
        budget_units = int(spec["n_hidden"])
        n_hidden = int(self.n_hidden or budget_units)
        if n_hidden > budget_units:
            raise ValueError(f"n_hidden={n_hidden} exceeds the env's budget of {budget_units} units")
        net = self.build(spec["n_input"], n_hidden, spec["n_output"], spec["alpha"], spec["rate_max"])
        self.counters = fit_network(
            net, data["inputs"], data["targets"], data["response_mask"], max(0, int(budget)), self.np_random,
            batch_size=self.batch_size, lr=self.lr, l1=self.l1, response_weight=self.response_weight,
        )
        w = net.to_arrays()
        if n_hidden < budget_units:  # pad to the budget with silent units
            pad = budget_units - n_hidden
            w = {
                "w_in": np.pad(w["w_in"], ((0, pad), (0, 0))),
                "w_rec": np.pad(w["w_rec"], ((0, pad), (0, pad))),
                "b_rec": np.pad(w["b_rec"], (0, pad)),
                "w_out": np.pad(w["w_out"], ((0, 0), (0, pad))),
                "b_out": w["b_out"],
            }
        self.weights = w

    def act(self, obs: Any, info: dict[str, Any]) -> dict[str, np.ndarray]:
        if self.weights is None:
            raise RuntimeError(f"{type(self).__name__}: train(env, budget) has not run (the runner calls it before the episodes)")
        return self.weights


class HeavyTailedDaleAgent(RNNTrainerAgent):
    """Reference: Dale's principle, log-normal magnitudes maintained by exact 1-D optimal transport."""

    name = "cognitive-dale-lognormal"
    constraint_name = "dale-lognormal"


class RNNPolicyAgent(BaseAgent):
    """Plays a task env ``icmlgym/Cog*-v0`` with a Dale + log-normal RNN trained on generated trials.

    ``train(env, budget)``: ``budget`` training trials of the task (drawn from the task's
    public generator with the env's task arguments), ``budget // batch_size`` Adam
    steps. It counts the budget in trials where SB3's agents count env steps (one trial
    is 15 to 60 env steps), and it learns from the ground truth, not from rewards. ``act``: one network step per env step; the state is reset at each new trial.
    """

    name = "cognitive-rnn-policy"

    def __init__(self, constraint: str = "dale-lognormal", n_hidden: int = 32, batch_size: int = 32, lr: float = 0.01, alpha: float = 0.2, shape: float = 1.0) -> None:
        super().__init__()
        make_constraint(constraint)
        self.constraint, self.n_hidden, self.batch_size, self.lr, self.alpha, self.shape = constraint, int(n_hidden), int(batch_size), float(lr), float(alpha), float(shape)
        self.net = None
        self._state = None
        self._seed = 0

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        if self.net is None and seed is not None:
            self._seed = int(seed)
        self._state = None

    def train(self, env, budget: int) -> None:
        _torch()
        from icmlgym.envs.cognitive.tasks import make_task
        from icmlgym.nn.recurrent import RecurrentNetwork
        from icmlgym.nn.runtime import seed_everything

        kw = {**(self.spec.card.default_kwargs if self.spec and self.spec.card else {}), **(self.spec.env_kwargs if self.spec else {})}
        task = make_task(kw.get("task", "perceptual_decision"), **dict(kw.get("task_kwargs") or {}))
        n_trials = max(self.batch_size, int(budget))
        trials = task.batch(n_trials, self.np_random)
        seed_everything(self._seed)
        self.net = RecurrentNetwork(task.n_input, self.n_hidden, task.n_actions, make_constraint(self.constraint, self.shape), alpha=self.alpha, seed=self._seed)
        fit_network(self.net, trials.inputs, trials.targets, trials.response_mask, n_trials // self.batch_size, self.np_random, batch_size=self.batch_size, lr=self.lr)
        self._w = {k: v.astype(np.float64) for k, v in self.net.to_arrays().items()}

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        if self.net is None:
            raise RuntimeError("RNNPolicyAgent: train(env, budget) has not run")
        w = self._w
        if self._state is None or info.get("new_trial"):
            self._state = (np.zeros(self.n_hidden), np.zeros(self.n_hidden))
        h, r = self._state
        h = (1 - self.alpha) * h + self.alpha * (w["w_rec"] @ r + w["w_in"] @ np.asarray(obs, dtype=np.float64) + w["b_rec"])
        r = np.minimum(np.maximum(h, 0.0), self.net.rate_max)
        self._state = (h, r)
        return int(np.argmax(w["w_out"] @ r + w["b_out"]))


__all__ = ["HeavyTailedDaleAgent", "RNNPolicyAgent", "RNNTrainerAgent", "fit_network", "hold_response", "make_constraint"]
