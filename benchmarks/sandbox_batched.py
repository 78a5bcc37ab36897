"""The channel's cost per env step when an isolated entry's seeds share one vector env (``--isolate --batch-seeds``).

    python benchmarks/sandbox_batched.py [--seeds 1,8,32] [--steps 1000] [--rounds 3]

Bandit-v0 (``horizon=--steps``), UCB1, one episode; for each number of seeds N, interleaved
in each round: the batched run in process (``runner.batched.execute_batch`` without
isolation) and the same batch isolated (``runner.evaluator.evaluate_batch``: one sandbox,
one round trip per step for all N seeds; N = 1 is a single isolated run). Reports the
wall time per env step per seed of the episode loop (the records' ``wall_time`` less the
sandbox start, divided by the steps), the channel's overhead per seed-step, and the load
average. Wall time of the whole run is dominated at small N by the sandbox start
(see ``sandbox_channel.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _tasks(n: int, steps: int, isolated: bool):
    from icmlgym.runner.loop import RunTask
    from icmlgym.runner.sandbox import SandboxOptions
    from icmlgym.runner.submission import identify

    iso = identify("ucb1", None, SandboxOptions(mode="auto")) if isolated else None
    return [RunTask("icmlgym/Bandit-v0", "ucb1", s, "smoke", {"horizon": steps}, {}, 1, isolation=iso) for s in range(n)]


def per_seed_step(n: int, steps: int, isolated: bool) -> float:
    """Seconds per env step per seed of the episodes (sandbox start excluded)."""
    from icmlgym.runner.batched import execute_batch
    from icmlgym.runner.evaluator import evaluate

    tasks = _tasks(n, steps, isolated)
    if not isolated:
        recs = execute_batch(tasks) if n > 1 else [__import__("icmlgym.runner.loop", fromlist=["execute"]).execute(tasks[0])]
        return sum(e.wall_time for r in recs for e in r.episodes) / (steps * n)
    recs = execute_batch(tasks) if n > 1 else [evaluate(tasks[0])]
    assert all(r.status == "ok" for r in recs), recs[0].error
    assert n == 1 or recs[0].isolation.get("batched") == n
    return sum(e.wall_time for r in recs for e in r.episodes) / (steps * n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1,8,32")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    ns = [int(x) for x in args.seeds.split(",")]
    load0 = os.getloadavg()[0]
    out: dict[tuple[int, str], list[float]] = {}
    for _ in range(args.rounds):
        for n in ns:
            for isolated in (False, True):
                out.setdefault((n, "isolated" if isolated else "in process"), []).append(per_seed_step(n, args.steps, isolated))
    load1 = os.getloadavg()[0]
    print(f"Bandit-v0, horizon {args.steps}, UCB1, {args.rounds} rounds; load average before {load0:.2f}, after {load1:.2f} (cores: {os.cpu_count()})")
    print(f"{'seeds':>6}{'in process us':>16}{'isolated us':>14}{'overhead us':>14}   (per env step per seed, median)")
    for n in ns:
        a = statistics.median(out[(n, 'in process')]) * 1e6
        b = statistics.median(out[(n, 'isolated')]) * 1e6
        print(f"{n:>6}{a:>16.1f}{b:>14.1f}{b - a:>14.1f}")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)")
