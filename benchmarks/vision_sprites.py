"""Frames per second of the sprite world (LatentActionTransfer-v0) against a plain numpy renderer.

Run: ``python benchmarks/vision_sprites.py [--frames 20000] [--repeats 3]``

Renders ``--frames`` random states of one context three ways and prints frames per second
(best of ``--repeats``): the vectorised renderer the env uses
(:func:`icmlgym.corpora.sprites.render`, one fancy-indexing write per object for the whole
batch), the plain per-frame numpy renderer (:func:`icmlgym.corpora.sprites.render_loop`:
copy the background, write two slices; the two give identical frames, checked here), and the
env's clip server (:meth:`LatentActionTransferEnv.clips`: dynamics plus rendering, 8-frame
clips over the six training contexts), plus env steps per second of an episode. One thread;
the machine's load average is printed with the results.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from icmlgym.corpora import sprites
from icmlgym.envs.vision.latent_action import LatentActionTransferEnv


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    n = args.frames
    rng = np.random.default_rng(0)
    ctx = sprites.context(2)
    agent, distractor = sprites.random_states(n, rng)
    assert np.array_equal(sprites.render(ctx, agent[:500], distractor[:500]), sprites.render_loop(ctx, agent[:500], distractor[:500]))
    t_vec = best(lambda: sprites.render(ctx, agent, distractor), args.repeats)
    t_loop = best(lambda: sprites.render_loop(ctx, agent, distractor), args.repeats)
    env = LatentActionTransferEnv()
    env.reset(seed=0)
    t_clips = best(lambda: env.clips(n, seed=1), args.repeats)

    def episode() -> int:
        steps = 0
        for s in range(20):
            env.reset(seed=s)
            done = False
            while not done:
                _, _, done, _, _ = env.step(int(rng.integers(5)))
                steps += 1
        return steps

    t0 = time.perf_counter()
    steps = episode()
    t_steps = time.perf_counter() - t0
    t0 = time.perf_counter()
    for s in range(20):
        env.reset(seed=s)
    t_reset = (time.perf_counter() - t0) / 20
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{n} frames of {sprites.SIZE}x{sprites.SIZE}x3, context 2; load average {load:.1f}")
    print("| what | frames/s | vs plain numpy |")
    print("|---|---|---|")
    print(f"| vectorised renderer (the env's) | {n / t_vec:,.0f} | {t_loop / t_vec:.1f}x |")
    print(f"| plain numpy renderer (per frame) | {n / t_loop:,.0f} | 1.0x |")
    print(f"| clip server (dynamics + render, 8-frame clips, 6 contexts) | {(n // 8 * 8) / t_clips:,.0f} | {(n // 8 * 8) / t_clips * t_loop / n:.1f}x |")
    print(f"| env steps (default episode: 32 queries + 6 demo steps; reset excluded) | {steps / (t_steps - 20 * t_reset):,.0f} steps/s | |")
    print(f"| env reset (64 + 8 labelled transitions, 32 queries, a demo) | {1 / t_reset:,.0f} resets/s | |")


if __name__ == "__main__":
    main()
