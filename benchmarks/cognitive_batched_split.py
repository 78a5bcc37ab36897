"""Where a 64-seed batch of a cognitive task env spends its time (the batched runner, agent ``random``).

    python benchmarks/cognitive_batched_split.py [--envs CogContextIntegration-v0,...] [--repeats 7]

Times one ``execute_batch`` of 64 seeds at the smoke tier ``--repeats`` times and reports the
fastest, split into the vector env's ``reset`` (and, inside it, ``trial_blocks``: every seed's
trials), its ``step`` calls, the vector agent's ``reset`` and ``act``, and the rest (the runner's
loop, records, hashing). The parts are timed by wrapping the methods, which adds a little to each.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
from typing import Any, Callable

DEFAULT_ENVS = ("CogPerceptualDecision-v0", "CogContextIntegration-v0", "CogIntervalTiming-v0")


def _timed(acc: dict[str, float], key: str, f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            acc[key] = acc.get(key, 0.0) + time.perf_counter() - t0

    return g


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", default=",".join(DEFAULT_ENVS), help="env names without the namespace, comma-separated")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    from icmlgym.baselines import vector as agents
    from icmlgym.envs.cognitive import vector
    from icmlgym.runner.api import make_tasks
    from icmlgym.runner.batched import execute_batch

    acc: dict[str, float] = {}
    env_cls, agent_cls = vector.CognitiveTaskVectorEnv, agents.VectorRandomAgent
    env_cls.reset = _timed(acc, "env reset", env_cls.reset)
    env_cls.step = _timed(acc, "env step", env_cls.step)
    vector.trial_blocks = _timed(acc, "trial_blocks", vector.trial_blocks)  # inside env reset
    agent_cls.reset = _timed(acc, "agent reset", agent_cls.reset)
    agent_cls.act = _timed(acc, "agent act", agent_cls.act)
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; uptime: {uptime}")
    print("| env | batch ms (fastest of repeats) | env reset (of it trial_blocks) | env step | agent reset + act | rest |")
    print("|---|---|---|---|---|---|")
    for name in args.envs.split(","):
        tasks = make_tasks(f"icmlgym/{name}", "random", seeds=64, tier="smoke")
        execute_batch(tasks[:2])
        best: tuple[float, dict[str, float]] | None = None
        for _ in range(args.repeats):
            acc.clear()
            t0 = time.perf_counter()
            execute_batch(tasks)
            total = time.perf_counter() - t0
            if best is None or total < best[0]:
                best = (total, dict(acc))
        total, a = best
        ms = {k: 1e3 * v for k, v in a.items()}
        rest = 1e3 * total - ms["env reset"] - ms["env step"] - ms["agent reset"] - ms["agent act"]
        print(f"| {name} | {1e3 * total:.1f} | {ms['env reset']:.1f} ({ms['trial_blocks']:.1f}) | {ms['env step']:.1f} | "
              f"{ms['agent reset'] + ms['agent act']:.1f} | {rest:.1f} |", flush=True)


if __name__ == "__main__":
    main()
