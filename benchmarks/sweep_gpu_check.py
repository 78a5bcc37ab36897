"""GPU check for a machine with CUDA: Ray asks for a GPU per run, the record names the device,
and GPU-seconds are metered. Not runnable without a GPU (it says so and exits 2).

    python benchmarks/sweep_gpu_check.py [--seeds 4] [--agent sb3-ppo]

Runs ``--agent`` (a torch agent) on icmlgym/Bandit-v0 at the smoke tier with ``device="cuda"``
and with ``device="cpu"`` on a local Ray instance, prints each record's device and cost, and
checks that: every CUDA run is ``ok`` with ``device.type == "cuda"``, a device name, the CUDA and
driver versions and a positive ``gpu_seconds`` that equals the sum over its episodes; every CPU
run has no ``gpu_seconds``; and the leaderboard groups the two by device.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--agent", default="sb3-ppo")
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("no CUDA device visible to torch: this check needs a GPU machine", file=sys.stderr)
        return 2
    from icmlgym.leaderboard import Leaderboard
    from icmlgym.runner.api import make_tasks
    from icmlgym.runner.ray_executor import RayExecutor

    tasks = make_tasks("icmlgym/Bandit-v0", args.agent, seeds=args.seeds, device="cuda") + make_tasks(
        "icmlgym/Bandit-v0", args.agent, seeds=args.seeds, device="cpu"
    )
    ex = RayExecutor()
    print("cluster:", ex._cluster())
    records = list(ex.imap(tasks))
    ex.close()
    problems = []
    for r in sorted(records, key=lambda r: (r.device.get("requested", ""), r.seed)):
        print(json.dumps({"seed": r.seed, "status": r.status, "device": r.device, "cost": r.cost, "wall": round(r.wall_time, 2), "error": r.error[:200]}))
        if r.device.get("requested") == "cuda":
            if r.status != "ok" or r.device.get("type") != "cuda" or not r.device.get("name") or "cuda" not in r.device:
                problems.append(f"seed {r.seed} on cuda: {r.status}, device {r.device}")
            gpu = r.cost.get("gpu_seconds", 0.0)
            if gpu <= 0 or abs(gpu - sum(e.cost.get("gpu_seconds", 0.0) for e in r.episodes)) > 1e-6:
                problems.append(f"seed {r.seed} on cuda: gpu_seconds {gpu}")
        elif "gpu_seconds" in r.cost:
            problems.append(f"seed {r.seed} on cpu has gpu_seconds")
    with tempfile.TemporaryDirectory() as tmp, Leaderboard(Path(tmp) / "lb.db") as board:
        board.add(records)
        table = board.table(env="icmlgym/Bandit-v0", by_device=True)
        print(table[["entry", "seeds", "mean"]].to_string())
        if len(table) != 2:
            problems.append(f"expected 2 entries by device, got {list(table['entry'])}")
    print("OK" if not problems else "PROBLEMS:\n" + "\n".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    raise SystemExit(main())
