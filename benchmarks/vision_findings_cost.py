"""CPU cost of the LaViD side of tests/vision/test_findings.py: the smoke LaViD findings on the process executor.

The findings test runs the latent-action findings in its own process and, meanwhile, the LaViD
findings (LanguageToVisualKD-v0/v1) on the process executor with two workers. This evaluates the
same LaViD findings the same way on seeds 0-9 (or ``--units``) and reports the wall time and the
CPU of the whole tree: this driver, the workers' fork server and every worker it forked (the
fork server reaps its workers, so their CPU is in its ``cutime``/``cstime``). ``--without ID``
leaves a finding out (e.g. ``vision-lavid-beats-makd``, to measure what it adds).

Run: python benchmarks/vision_findings_cost.py [--units 0-9] [--without FINDING_ID]
"""

from __future__ import annotations

import argparse
import json
import os
import time


def _proc_cpu(pid: int) -> float:
    """utime + stime + cutime + cstime of ``pid`` (seconds)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", default="0-9", help="first-last")
    ap.add_argument("--without", default="", help="a finding id to leave out")
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.units.split("-"))
    import torch

    torch.set_num_threads(1)
    from multiprocessing import forkserver

    from icmlgym.findings import evaluate, family_findings

    fs = [f for f in family_findings("vision") if "smoke" in f.tiers and "LanguageToVisualKD" in f.control.env_id and f.id != args.without]
    t0, c0 = time.perf_counter(), time.process_time()
    results = evaluate(fs, units=list(range(lo, hi + 1)), tier="smoke", executor="process", workers=2)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    server = getattr(forkserver._forkserver, "_forkserver_pid", None)
    workers_cpu = _proc_cpu(server) if server else 0.0
    print(json.dumps({
        "findings": {r.finding.id: [round(r.effect.mean, 4), r.verdict] for r in results},
        "wall_s": round(wall, 1), "driver_cpu_s": round(cpu, 1), "fork_server_and_workers_cpu_s": round(workers_cpu, 1),
        "load_average": os.getloadavg()[0],
    }, indent=1))


if __name__ == "__main__":
    main()
