"""Images per second of LanguageToVisualKD-v0's student training step against a plain torch loop.

Run: ``python benchmarks/vision_student_speed.py [--epochs 5] [--repeats 3]``

At the smoke size (48 classes x 6 training images of 16 x 16, batch 64, one torch thread):
``env.step`` with each soft-target source (an epoch: flips, forward, cross-entropy + the
distillation loss, backward, Adam, then the validation pass) against the limit, a plain torch
loop over the same student and batches with cross-entropy only and no validation. Best of
``--repeats``; the visual teacher is trained before timing (its cost is reported once).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

from icmlgym.envs.vision import kd_student as ks
from icmlgym.envs.vision.lavid import TEACHERS, LanguageToVisualKDEnv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    env = LanguageToVisualKDEnv(epochs=10_000)
    env.reset(seed=0)
    n = len(env.x["train"])
    t0 = time.perf_counter()
    env.step(np.array([TEACHERS.index("visual-kd"), 3, 2, 0]))
    teacher_s = time.perf_counter() - t0
    rows = []
    for teacher in TEACHERS:
        best = np.inf
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for _ in range(args.epochs):
                env.step(np.array([TEACHERS.index(teacher), 3, 2, 0]))
            best = min(best, time.perf_counter() - t0)
        rows.append((f"env.step, {teacher}", n * args.epochs / best))
    net = ks.Student(len(env.class_names), 36)
    net(env.x["train"][:2])
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    x, y = env.x["train"], torch.as_tensor(env.y["train"])
    best = np.inf
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for _ in range(args.epochs):
            for idx in torch.randperm(n).split(64):
                loss = F.cross_entropy(net(x[idx])[0], y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        best = min(best, time.perf_counter() - t0)
    limit = n * args.epochs / best
    print(f"{n} training images of 3x16x16, batch 64, 1 thread; load average {os.getloadavg()[0]:.1f}; "
          f"visual teacher training (30 epochs, once per data set) {teacher_s:.1f} s")
    print("| training step | images/s | vs plain torch |")
    print("|---|---|---|")
    print(f"| plain torch loop, cross-entropy only (the limit) | {limit:,.0f} | 1.00 |")
    for name, rate in rows:
        print(f"| {name} (+ validation pass) | {rate:,.0f} | {rate / limit:.2f} |")


if __name__ == "__main__":
    main()
