"""Craft family: steps per second through our Crafter backend against raw ``crafter.Env`` stepping,
and reset (world generation) time with and without numba.

    python benchmarks/craft_speed.py [--steps 3000] [--repeats 3]

Every variant plays the same uniformly random motor actions (seeded) for ``--steps``
steps in one episode (Crafter's episode length is switched off in all of them), after
one warm-up reset; the best of ``--repeats`` runs is reported. Ratios are time(ours) /
time(raw crafter) in the same process; the target is <= 1.2x.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np


def _time_loop(step, reset, n: int) -> float:
    """Seconds spent in ``step`` over ``n`` steps; an episode that ends (death) is reset untimed."""
    total = 0.0
    clock = time.perf_counter
    for a in np.random.default_rng(0).integers(0, 17, n):
        t0 = clock()
        out = step(int(a))
        total += clock() - t0
        if out.dead if hasattr(out, "dead") else (out[2] or (len(out) == 5 and out[3])):
            reset()
    return total


def stepping(n: int, repeats: int) -> dict[str, float]:
    import crafter
    import gymnasium as gym

    import icmlgym  # noqa: F401
    from icmlgym.envs.craft.crafter_backend import CrafterBackend
    from icmlgym.envs.craft.wrappers import MotorOnly

    raw = crafter.Env(seed=0, length=None)
    backend = CrafterBackend()
    env = gym.make("icmlgym/Craft-v0", task="collect_diamond/hard", max_steps=10**7)
    motor = MotorOnly(gym.make("icmlgym/Craft-v0", task="collect_diamond/hard", max_steps=10**7))
    out: dict[str, list[float]] = {"raw_crafter": [], "backend": [], "craft_env": [], "motor_only": []}
    for _ in range(repeats):
        raw.reset()
        out["raw_crafter"].append(_time_loop(raw.step, raw.reset, n))
        backend.reset(0)
        out["backend"].append(_time_loop(backend.step, lambda: backend.reset(0), n))
        env.reset(seed=0)
        out["craft_env"].append(_time_loop(lambda a: env.step({"motor": a}), lambda: env.reset(seed=0), n))
        motor.reset(seed=0)
        out["motor_only"].append(_time_loop(motor.step, lambda: motor.reset(seed=0), n))
    best = {k: min(v) for k, v in out.items()}
    res = {f"{k}_steps_per_s": n / v for k, v in best.items()}
    for k in ("backend", "craft_env", "motor_only"):
        res[f"{k}_ratio"] = best[k] / best["raw_crafter"]
    return res


def reset_times(repeats: int) -> dict[str, float]:
    import crafter
    import gymnasium as gym

    import icmlgym  # noqa: F401

    raw = crafter.Env(seed=0)
    raw.reset()  # numba's cached compile loads on the first reset
    env = gym.make("icmlgym/Craft-v0")
    env.reset(seed=0)
    t_raw, t_env = [], []
    for i in range(repeats):
        t0 = time.perf_counter()
        raw.reset()
        t_raw.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        env.reset(seed=i + 1)
        t_env.append(time.perf_counter() - t0)
    return {"raw_reset_s": float(np.median(t_raw)), "craft_env_reset_s": float(np.median(t_env))}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--resets-only", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.resets_only:
        print(json.dumps(reset_times(args.repeats)))
        return
    res = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores", "steps": args.steps}
    res.update(stepping(args.steps, args.repeats))
    res.update(reset_times(5))
    try:
        import numba

        res["numba"] = numba.__version__
        # NUMBA_DISABLE_JIT=1 runs opensimplex's kernels as plain Python: the reset cost without numba
        env = dict(os.environ, NUMBA_DISABLE_JIT="1")
        out = subprocess.run([sys.executable, __file__, "--resets-only", "--repeats", "3"], env=env,
                             capture_output=True, text=True, check=True)
        no_numba = json.loads(out.stdout.strip().splitlines()[-1])
        res["raw_reset_s_without_numba"] = no_numba["raw_reset_s"]
        res["craft_env_reset_s_without_numba"] = no_numba["craft_env_reset_s"]
    except ImportError:
        res["numba"] = "not installed"
    for k, v in res.items():
        print(f"{k:36s} {v:.4g}" if isinstance(v, float) else f"{k:36s} {v}")


if __name__ == "__main__":
    main()
