"""Craft family: Craftax-Classic vectorised steps per second (JAX; CPU here, GPU where one is lent).

    python benchmarks/craft_craftax.py [--envs 64,512] [--steps 256] [--task collect_wood/hard]

For each batch size: build ``gym.make_vec("icmlgym/Craft-v0", vectorization_mode="vector_entry_point")``,
reset, then time ``rollout`` (``lax.scan`` over ``--steps`` steps of random motor actions, with
the Craft task's success check and same-step autoreset inside the scan). The first rollout is
compile + run; the best of three later ones is the steady state. Prints JAX's device.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", default="64,512")
    p.add_argument("--steps", type=int, default=256)
    p.add_argument("--task", default="collect_wood/hard")
    args = p.parse_args()
    import gymnasium as gym
    import jax

    import icmlgym  # noqa: F401

    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind} ({jax.default_backend()}), {os.cpu_count()} CPU cores")
    rng = np.random.default_rng(0)
    for n in (int(x) for x in args.envs.split(",")):
        t0 = time.perf_counter()
        venv = gym.make_vec("icmlgym/Craft-v0", num_envs=n, vectorization_mode="vector_entry_point", task=args.task)
        venv.reset(seed=0)
        t_reset = time.perf_counter() - t0
        acts = rng.integers(0, 17, (args.steps, n))
        t0 = time.perf_counter()
        out = venv.unwrapped.rollout(acts)
        t_first = time.perf_counter() - t0
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            out = venv.unwrapped.rollout(acts)
            best = min(best, time.perf_counter() - t0)
        episodes = int((out["terminated"] | out["truncated"]).sum())
        print(f"num_envs={n:5d}  reset+compile={t_reset:6.1f}s  first rollout (compile+run)={t_first:6.1f}s  "
              f"steady={n * args.steps / best:10.0f} steps/s  ({episodes} episodes ended in the last rollout)")


if __name__ == "__main__":
    main()
