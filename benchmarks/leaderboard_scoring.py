"""Benchmark: scoring a leaderboard store of 1,000,000 episode rows (50 tasks x 20 entries x 10 seeds
x 100 episodes) with 2,000 bootstrap resamples, against a plain pandas groupby-mean of the same rows.

    /work/venv/bin/python benchmarks/leaderboard_scoring.py            # full size
    /work/venv/bin/python benchmarks/leaderboard_scoring.py --quick    # 1/10 of the episodes

Prints the build time of the store (not part of the target), then the scoring times:
``Leaderboard.tables`` end to end from the SQL store (the per-task table: mean, s.e., bootstrap
CI, ranks, costs, Pareto front; and the suite table: IQM / mean / median with stratified
bootstrap CIs, rank intervals), its parts, best of three, wall and CPU time; and the ratio to
``df.groupby(["task", "entry"])["value"].mean()`` over the same 1,000,000 rows.
Target (issue 3): scoring under 10 s on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from icmlgym.catalog import task_label
from icmlgym.leaderboard import Leaderboard, scoring
from icmlgym.runner.record import EpisodeRecord, RunRecord

ENV = "icmlgym/Bandit-v0"


def build(path: Path, n_tasks: int, n_entries: int, n_seeds: int, n_episodes: int, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    tasks = [(ENV, {"horizon": 1000 + t}) for t in range(n_tasks)]
    skill = rng.normal(0, 1, n_entries)
    difficulty = rng.uniform(50, 300, n_tasks)
    frames = []
    with Leaderboard(path) as board:
        batch: list[RunRecord] = []
        for t, (env_id, kw) in enumerate(tasks):
            label = task_label(env_id, kw)
            for e in range(n_entries):
                for s in range(n_seeds):
                    vals = difficulty[t] * np.exp(-0.3 * skill[e]) + rng.normal(0, 10, n_episodes)
                    eps = [EpisodeRecord(i, -float(v), 1000, {"pseudo_regret": float(v)}, {"env_steps": 1000.0 + 10 * e}, 0.001) for i, v in enumerate(vals)]
                    batch.append(RunRecord(env_id=env_id, agent_name=f"agent{e:02d}", seed=s, tier="smoke", env_kwargs=kw, agent_source_hash="bench", episodes=eps, run_id=uuid.uuid4().hex))
                    frames.append(pd.DataFrame({"task": label, "entry": f"agent{e:02d}", "value": vals}))
                    if len(batch) == 200:
                        board.add(batch)
                        batch = []
        if batch:
            board.add(batch)
    refs = {task_label(e, k): (float(d * 2), 0.0) for (e, k), d in zip(tasks, difficulty)}
    return pd.concat(frames, ignore_index=True), {"tasks": tasks, "refs": refs}


CPU: dict[int, float] = {}


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    """Best wall time of ``repeat`` calls; the CPU time of that call is kept in CPU[id(result)]
    (the machine is shared, so wall time alone overstates the work under contention)."""
    best, out, cpu = float("inf"), None, 0.0
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = fn()
        wall, c = time.perf_counter() - t0, time.process_time() - c0
        if wall < best:
            best, out, cpu = wall, res, c
    CPU[id(out)] = cpu
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 episodes per run instead of 100")
    ap.add_argument("--boot", type=int, default=2000)
    ap.add_argument("--store", type=Path, default=None, help="reuse / write the store here")
    args = ap.parse_args()
    n_tasks, n_entries, n_seeds, n_eps = 50, 20, 10, (10 if args.quick else 100)
    tmp = tempfile.mkdtemp(prefix="icmlgym-bench-")
    path = args.store or Path(tmp) / "bench.db"
    if path.exists():
        raise SystemExit(f"{path} exists; the benchmark builds a fresh store")
    t0 = time.perf_counter()
    flat, meta = build(path, n_tasks, n_entries, n_seeds, n_eps)
    build_s = time.perf_counter() - t0
    rows = len(flat)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; python {platform.python_version()}")
    print(f"store: {rows:,} episode rows, {n_tasks} tasks x {n_entries} entries x {n_seeds} seeds; built with Leaderboard.add in {build_s:.1f} s ({path.stat().st_size / 2**20:.0f} MiB)")

    base_s, base = timed(lambda: flat.groupby(["task", "entry"])["value"].mean(), repeat=5)
    board = Leaderboard(path)
    tasks, refs = meta["tasks"], meta["refs"]
    load_s, runs = timed(lambda: board.run_scores(refs=refs, suite=tasks, tier="smoke"), repeat=3)
    task_mem_s, tm = timed(lambda: scoring.task_table(runs, n_boot=args.boot), repeat=3)
    suite_mem_s, sm = timed(lambda: scoring.suite_table(runs, n_boot=args.boot), repeat=3)
    total, both = timed(lambda: board.tables(suite=tasks, tier="smoke", refs=refs, n_boot=args.boot), repeat=3)
    board.close()
    task_df, suite_df = both
    assert len(task_df) == n_tasks * n_entries and len(suite_df) == n_entries
    total_cpu = CPU[id(both)]
    base_cpu = CPU[id(base)]
    print(f"pandas groupby-mean over the {rows:,} rows (baseline): {base_s * 1000:.1f} ms wall, {base_cpu * 1000:.1f} ms CPU")
    print(f"per-run scores from the store (SQL aggregation of episodes): {load_s:.2f} s wall, {CPU[id(runs)]:.2f} s CPU")
    print(f"task table in memory ({n_tasks * n_entries} groups, {args.boot} resamples): {task_mem_s:.2f} s wall, {CPU[id(tm)]:.2f} s CPU")
    print(f"suite table in memory ({n_entries} entries, stratified, {args.boot} resamples): {suite_mem_s:.2f} s wall, {CPU[id(sm)]:.2f} s CPU")
    print(f"end to end from the store, Leaderboard.tables (task table + suite table): {total:.2f} s wall, "
          f"{total_cpu:.2f} s CPU (target < 10 s: {'met' if total < 10 else 'NOT met'})")
    print(f"ratio to the pandas groupby-mean: {total / base_s:.0f}x wall ({total_cpu / max(base_cpu, 1e-9):.0f}x CPU) end to end; "
          f"{(task_mem_s + suite_mem_s) / base_s:.0f}x wall for the in-memory statistics")


if __name__ == "__main__":
    main()
