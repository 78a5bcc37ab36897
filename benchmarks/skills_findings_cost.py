"""CPU cost of the skills family's smoke findings, as CI's replication step runs them.

Evaluates the family's findings declared at the smoke tier on units 1000-1009 through
:func:`icmlgym.findings.evaluate` on the process executor (two workers, as
``icmlgym findings --all --tier smoke --workers 2`` does), and reports the wall time and the CPU
seconds of the whole tree: this driver, the workers' fork server and every worker it forked
(the fork server reaps its workers, so their CPU is in its ``cutime``/``cstime``). ``--inprocess``
runs the same plan in this process instead (the runs' own CPU, without forks).

Run: python benchmarks/skills_findings_cost.py [--units 1000-1009] [--inprocess] [--exclude ID,...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time


def _proc_cpu(pid: int) -> float:
    """utime + stime + cutime + cstime of ``pid`` (seconds)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", default="1000-1009", help="first-last")
    ap.add_argument("--inprocess", action="store_true")
    ap.add_argument("--exclude", default="", help="finding ids to leave out (comma-separated), e.g. to compare with an older set")
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.units.split("-"))
    import torch

    torch.set_num_threads(1)
    from multiprocessing import forkserver

    from icmlgym.findings import evaluate, family_findings

    fs = [f for f in family_findings("skills") if "smoke" in f.tiers and f.id not in args.exclude.split(",")]
    t0, c0 = time.perf_counter(), time.process_time()
    kw = {"executor": "inprocess"} if args.inprocess else {"executor": "process", "workers": 2}
    results = evaluate(fs, units=list(range(lo, hi + 1)), tier="smoke", **kw)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    server = getattr(forkserver._forkserver, "_forkserver_pid", None)
    workers_cpu = _proc_cpu(server) if server else 0.0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "findings": {r.finding.id: [round(r.effect.mean, 4), r.verdict] for r in results},
        "runs": len({(a.env_id, a.agent, json.dumps({**a.env_kwargs, **v}, sort_keys=True), json.dumps(dict(a.agent_kwargs), sort_keys=True))
                     for f in fs for a in f.arms for v in a.variants}) * (hi - lo + 1),
        "wall_s": round(wall, 1),
        "driver_cpu_s": round(cpu, 1),
        "fork_server_and_workers_cpu_s": round(workers_cpu, 1),
        "other_children_cpu_s": round(children.ru_utime + children.ru_stime, 1),
        "total_cpu_s": round(cpu + workers_cpu + children.ru_utime + children.ru_stime, 1),
        "load_average": os.getloadavg()[0],
    }, indent=1))


if __name__ == "__main__":
    main()
