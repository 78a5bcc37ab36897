"""Sweep of short runs: the local process pool against Ray, and a projection to a cluster.

    python benchmarks/sweep_ray_vs_process.py [--runs 200] [--workers 2] [--repeats 3] [--pg-url URL]

A sweep of ``--runs`` runs of icmlgym/Bandit-v0 at the smoke tier (4 agents x seeds) runs
three ways in the same process: a plain loop calling ``execute`` one run after another (the
work itself), the process pool (``ProcessExecutor``: a fresh forkserver child per run) and Ray
(``RayExecutor`` on a local instance: pooled workers). For each it reports the wall time, the
per-run overhead ``(wall x workers - work) / runs`` with work = the plain loop's time for the same
runs (what a run costs beyond its work when the workers are kept busy), split into the run's
time inside its worker (a fresh process pays its cold start there) and the rest (scheduling and
transport) and the driver's CPU time per run (the serial part: submitting and
collecting a run; it bounds a single driver's throughput). It also times adding a record to
the leaderboard store (SQLite, and PostgreSQL with ``--pg-url``), which the driver does once per
run when it streams records to a store. Every executor must give the plain loop's metrics, bit
for bit, or the script stops.

Figures are medians over ``--repeats``; the machine and the figures go to stdout as JSON and as
the Markdown that docs/performance.md quotes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from icmlgym.runner.api import make_tasks
from icmlgym.runner.executors import ProcessExecutor
from icmlgym.runner.loop import execute
from icmlgym.runner.provenance import cpu_model

AGENTS = ("random", "ucb1", "epsilon-greedy", "bandit-thompson")
ENV = "icmlgym/Bandit-v0"


def sweep_tasks(n: int):
    per = -(-n // len(AGENTS))
    tasks = [t for a in AGENTS for t in make_tasks(ENV, a, seeds=per)]
    return tasks[:n]


def metrics(records) -> dict:
    return {(r.agent_name, r.seed): r.metric("pseudo_regret") for r in records}


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def store_add_seconds(url: str, records) -> float:
    from icmlgym.leaderboard import Leaderboard

    with Leaderboard(url) as board:
        t0 = time.perf_counter()
        for r in records:
            board.add(r)
        return (time.perf_counter() - t0) / len(records)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pg-url", default=os.environ.get("ICMLGYM_PG_URL"), help="also time adds to this PostgreSQL store (a fresh database is best)")
    args = ap.parse_args()
    if args.runs < 1 or args.workers < 1 or args.repeats < 1:
        ap.error("--runs, --workers and --repeats must be >= 1")

    tasks = sweep_tasks(args.runs)
    n = len(tasks)
    rows: dict[str, list[dict]] = {"loop": [], "process": [], "ray_cold": [], "ray_warm": []}
    ray_init, ray_close = [], []
    reference = None
    from icmlgym.runner.ray_executor import RayExecutor

    for _ in range(args.repeats):
        recs, wall, cpu = timed(lambda: [execute(t) for t in tasks])
        reference = reference or metrics(recs)
        assert metrics(recs) == reference
        work = sum(r.wall_time for r in recs)
        rows["loop"].append({"wall": wall, "work": work, "driver_cpu": cpu})

        ex = ProcessExecutor(workers=args.workers)
        recs, wall, cpu = timed(lambda: list(ex.imap(tasks)))
        assert metrics(recs) == reference, "process pool metrics differ from the plain loop"
        rows["process"].append({"wall": wall, "work": sum(r.wall_time for r in recs), "driver_cpu": cpu})

        rex, t_init, _ = timed(lambda: RayExecutor(workers=args.workers))
        ray_init.append(t_init)
        for label in ("ray_cold", "ray_warm"):  # cold: the first sweep starts and warms the workers
            recs, wall, cpu = timed(lambda: list(rex.imap(tasks)))
            assert metrics(recs) == reference, "Ray metrics differ from the plain loop"
            rows[label].append({"wall": wall, "work": sum(r.wall_time for r in recs), "driver_cpu": cpu})
        _, t_close, _ = timed(rex.close)
        ray_close.append(t_close)
        last_records = recs

    def med(label: str, key: str) -> float:
        return statistics.median(r[key] for r in rows[label])

    work = med("loop", "work")
    out = {
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(), "load_avg_1m": os.getloadavg()[0]},
        "runs": n, "workers": args.workers, "repeats": args.repeats,
        "work_s_per_run": work / n,
        "ray_init_s": statistics.median(ray_init), "ray_shutdown_s": statistics.median(ray_close),
    }
    for label in rows:
        wall = med(label, "wall")
        workers = 1 if label == "loop" else args.workers
        out[label] = {
            "wall_s": wall,
            # against the same runs done warm in one process: everything a run costs beyond its work
            "overhead_ms_per_run": 1e3 * (wall * workers - work) / n,
            # the runs' own wall time inside their workers: in a fresh process it includes the
            # cold start (first imports, provenance) that a pooled worker pays once
            "in_worker_ms_per_run": 1e3 * med(label, "work") / n,
            # against that in-worker time: the executor's own cost (scheduling, transport)
            "transport_ms_per_run": 1e3 * (wall * workers - med(label, "work")) / n,
            "driver_cpu_ms_per_run": 1e3 * med(label, "driver_cpu") / n,
            "speedup_vs_loop": med("loop", "wall") / wall,
        }
    out["ratio_ray_warm_over_process"] = out["ray_warm"]["wall_s"] / out["process"]["wall_s"]
    out["ratio_ray_cold_over_process"] = out["ray_cold"]["wall_s"] / out["process"]["wall_s"]

    with tempfile.TemporaryDirectory() as tmp:
        out["sqlite_add_ms_per_run"] = 1e3 * store_add_seconds(str(Path(tmp) / "lb.db"), last_records)
    if args.pg_url:
        out["postgres_add_ms_per_run"] = 1e3 * store_add_seconds(args.pg_url, last_records)

    print(json.dumps(out, indent=2))
    print()
    print(f"Ray start {out['ray_init_s']:.1f} s, shutdown {out['ray_shutdown_s']:.1f} s (once per sweep, not in the walls below); "
          f"store add per record: SQLite {out['sqlite_add_ms_per_run']:.1f} ms"
          + (f", PostgreSQL {out['postgres_add_ms_per_run']:.1f} ms" if 'postgres_add_ms_per_run' in out else ""))
    print()
    print("| executor | wall (s) | speed-up vs loop | overhead per run (ms) | run time in worker (ms) | scheduling + transport per run (ms) | driver CPU per run (ms) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, name in (("loop", "plain loop (1 core)"), ("process", f"process pool ({args.workers})"),
                        ("ray_cold", f"Ray, first sweep ({args.workers})"), ("ray_warm", f"Ray, warm ({args.workers})")):
        r = out[label]
        print(f"| {name} | {r['wall_s']:.2f} | {r['speedup_vs_loop']:.2f} | {r['overhead_ms_per_run']:.1f} | "
              f"{r['in_worker_ms_per_run']:.1f} | {r['transport_ms_per_run']:.1f} | {r['driver_cpu_ms_per_run']:.2f} |")


if __name__ == "__main__":
    main()
