"""Speed of the cognitive family: the batched trial generator, and an RNN training step.

1. Trials per second of :meth:`CognitiveTask.batch` for each task (1,024 trials a call).
2. Milliseconds per training step (forward, backward, Adam, the constraint's projection)
   of :class:`icmlgym.nn.recurrent.RecurrentNetwork` under each constraint, against a
   plain torch loop of the same shapes and equations (no module, no constraint); the
   ratio is the cost of the constraint machinery (the OT projection sorts the
   magnitudes of both populations every step).

    python benchmarks/cognitive_speed.py            # torch on 1 thread

Times are CPU time of this process (``time.process_time``), so that a busy shared
machine does not inflate them; on an idle machine wall time is the same.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from icmlgym.agents.cognitive import make_constraint
from icmlgym.envs.cognitive.tasks import TASKS, make_task
from icmlgym.nn.recurrent import RecurrentNetwork


def trials_per_second(name: str, n: int = 1024, repeats: int = 5) -> float:
    task = make_task(name)
    rng = np.random.default_rng(0)
    task.batch(n, rng)
    t0 = time.process_time()
    for _ in range(repeats):
        task.batch(n, rng)
    return n * repeats / (time.process_time() - t0)


def _time(step, repeats: int) -> float:
    for _ in range(3):
        step()
    t0 = time.process_time()
    for _ in range(repeats):
        step()
    return (time.process_time() - t0) / repeats * 1e3


def plain_loop_ms(x: torch.Tensor, y: torch.Tensor, n_hidden: int, n_out: int, repeats: int, alpha: float = 0.2) -> float:
    """The same rate RNN as bare tensors and a hand-written loop."""
    g = torch.Generator().manual_seed(0)
    n_in = x.shape[-1]
    w_in = (torch.randn(n_hidden, n_in, generator=g) / n_in**0.5).requires_grad_()
    w_rec = (torch.randn(n_hidden, n_hidden, generator=g) / n_hidden**0.5).requires_grad_()
    b = torch.zeros(n_hidden, requires_grad=True)
    w_out = (torch.randn(n_out, n_hidden, generator=g) / n_hidden**0.5).requires_grad_()
    b_out = torch.zeros(n_out, requires_grad=True)
    opt = torch.optim.Adam([w_in, w_rec, b, w_out, b_out], lr=0.01)

    def step():
        drive = x @ w_in.T + b
        h = x.new_zeros(x.shape[0], n_hidden)
        r = h
        rates = []
        for t in range(x.shape[1]):
            h = (1 - alpha) * h + alpha * (r @ w_rec.T + drive[:, t])
            r = torch.clamp(torch.relu(h), max=100.0)
            rates.append(r)
        logits = torch.stack(rates, 1) @ w_out.T + b_out
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, n_out), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    return _time(step, repeats)


def module_ms(x: torch.Tensor, y: torch.Tensor, n_hidden: int, n_out: int, constraint: str, repeats: int) -> float:
    net = RecurrentNetwork(x.shape[-1], n_hidden, n_out, make_constraint(constraint), seed=0)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)

    def step():
        logits = net(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, n_out), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        net.project_()

    return _time(step, repeats)


def main() -> None:
    torch.set_num_threads(1)
    print("batched trial generator (1,024 trials per call):")
    for name in TASKS:
        print(f"  {name:22s} {trials_per_second(name):>12,.0f} trials per CPU second")
    task = make_task("perceptual_decision")
    b = task.batch(32, 0)
    x = torch.as_tensor(b.inputs)
    y = torch.as_tensor(np.maximum(b.targets, 0))
    print(f"training step, batch 32 x {x.shape[1]} steps (perceptual_decision), CPU ms per step:")
    for n_hidden in (64, 256):
        reps = 40 if n_hidden == 64 else 20
        plain = plain_loop_ms(x, y, n_hidden, task.n_actions, reps)
        row = [f"  n_hidden={n_hidden}: plain torch loop {plain:.2f}"]
        for c in ("none", "dale", "dale-lognormal"):
            ms = module_ms(x, y, n_hidden, task.n_actions, c, reps)
            row.append(f"{c} {ms:.2f} ({ms / plain:.2f}x)")
        print(", ".join(row))


if __name__ == "__main__":
    main()
