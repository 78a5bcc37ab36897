"""Training-step time of CIMRobustTraining-v0 against a plain torch loop with the same noise sampling.

    python benchmarks/hardware_cim_step.py [--steps 200] [--batch 32] [--K 4] [--repeats 3]

One thread, digits, MLP 64 -> 64 -> 10. Both sides do per step what the env does: draw a
minibatch and K multiplicative weight-noise realisations, compute the clean and K noisy forward
passes once (with the graph) and the per-sample statistics from them, then one Adam step on the K noisy losses
weighted per sample (all weights 1, the noise-injection action). ``env`` is ``env.step``
(action validation, statistics, observation); ``plain`` the same arithmetic written as a
bare loop. Deployment (the perturbation grid at the episode's end) is timed separately.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F


def plain(x, y, steps: int, batch: int, K: int, sigma: float, seed: int) -> float:
    gen = torch.Generator().manual_seed(seed)
    w1 = torch.empty(64, x.shape[1]).uniform_(-0.125, 0.125, generator=gen).requires_grad_(True)
    b1 = torch.zeros(64, requires_grad=True)
    w2 = torch.empty(10, 64).uniform_(-0.125, 0.125, generator=gen).requires_grad_(True)
    b2 = torch.zeros(10, requires_grad=True)
    opt = torch.optim.Adam([w1, b1, w2, b2], lr=3e-3)

    def f(a, v1, v2):
        return F.relu(a @ v1.T + b1) @ v2.T + b2

    t = time.perf_counter()
    for _ in range(steps):
        idx = torch.randint(0, len(y), (batch,), generator=gen)
        bx, by = x[idx], y[idx]
        eps = [(torch.randn(w1.shape, generator=gen), torch.randn(w2.shape, generator=gen)) for _ in range(K)]
        # one forward each (with the graph), the statistics from the detached outputs, as the env does
        clean = f(bx, w1, w2)
        noisy = [f(bx, w1 * (1 + sigma * e1), w2 * (1 + sigma * e2)) for e1, e2 in eps]
        with torch.no_grad():
            F.cross_entropy(clean.detach(), by, reduction="none")
            torch.stack([n.detach().argmax(1) for n in noisy], 1)
            torch.stack([F.cross_entropy(n.detach(), by, reduction="none") for n in noisy], 1)
        opt.zero_grad()
        loss = sum(F.cross_entropy(n, by, reduction="none").sum() for n in noisy)
        (loss / (K * batch)).backward()
        opt.step()
    return (time.perf_counter() - t) / steps


def env_steps(steps: int, batch: int, K: int, seed: int) -> tuple[float, float]:
    import icmlgym

    env = icmlgym.make("icmlgym/CIMRobustTraining-v0", train_steps=steps, batch_size=batch, K=K).unwrapped
    env.reset(seed=seed)
    a = np.zeros((batch, 1 + K), np.float32)
    a[:, 1:] = 1.0
    a = a.reshape(-1)
    t = time.perf_counter()
    for _ in range(steps - 1):
        env.step(a)
    per_step = (time.perf_counter() - t) / (steps - 1)
    t = time.perf_counter()
    env.step(a)  # the last step trains and deploys on the grid
    return per_step, time.perf_counter() - t


def main() -> None:
    from icmlgym.envs.hardware.cim_env import load_data

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--K", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(1)
    x, y, *_ = load_data("digits")
    p = [plain(x, y, a.steps, a.batch, a.K, 0.5, r) for r in range(a.repeats)]
    e = [env_steps(a.steps, a.batch, a.K, r) for r in range(a.repeats)]
    pe, ee, dep = statistics.median(p), statistics.median(s for s, _ in e), statistics.median(d for _, d in e)
    print(f"load average {os.getloadavg()[0]:.1f}; batch {a.batch}, K {a.K}, {a.steps} steps, median of {a.repeats}")
    print("| loop | ms per training step | x plain |")
    print("|---|---|---|")
    print(f"| plain torch | {1000 * pe:.2f} | 1.00 |")
    print(f"| CIMRobustTraining-v0 step | {1000 * ee:.2f} | {ee / pe:.2f} |")
    print(f"deployment on the grid (last step): {dep:.2f} s")


if __name__ == "__main__":
    main()
