"""CPU seconds of the reasoning family's smoke benchmark, per run and per env, as the process executor spends them.

``icmlgym benchmark --suite reasoning`` forks each run from a warm server that has imported the
env and agent modules; on a loaded machine its wall times say more about the load than about the
code. This script does the same (imports once, then forks one child per (env, agent, seed) run at
the smoke tier, one at a time) and reads each child's CPU time (user + system, from ``wait4``),
which the load barely changes. Prints one row per agent (mean CPU seconds per run over the seeds)
and the total per env.

Run: python benchmarks/reasoning_smoke_cost.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import os

import icmlgym
from icmlgym.catalog import AGENTS, card

ENVS = ("icmlgym/EarlyExit-v0", "icmlgym/SpeculativeReasoning-v0")


def _cpu_of_child(env_id: str, agent: str, seed: int) -> float:
    pid = os.fork()
    if pid == 0:  # the child: one run, as a forked worker does
        code = 0
        try:
            rec = icmlgym.run(env_id, agent, seeds=[seed], tier="smoke")[0]
            code = 0 if rec.status == "ok" else 3
        except BaseException:
            code = 4
        os._exit(code)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{env_id} {agent} seed {seed} failed")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    import importlib

    import torch

    torch.set_num_threads(1)
    for env_id in ENVS:  # the warm server's imports
        c = card(env_id)
        importlib.import_module(c.entry_point.split(":")[0])
        for a in c.agents:
            if a in AGENTS:
                importlib.import_module(AGENTS[a].entry_point.split(":")[0])
    print(f"load average {os.getloadavg()[0]:.1f}; smoke tier, seeds 0-{args.seeds - 1}; CPU seconds per run")
    for env_id in ENVS:
        c = card(env_id)
        total = 0.0
        print(f"\n{env_id} ({c.tier('smoke').episodes} episodes per run)\n\n| agent | CPU s per run |\n|---|---|")
        for agent in c.agents:
            cpu = [_cpu_of_child(env_id, agent, s) for s in range(args.seeds)]
            total += sum(cpu)
            print(f"| `{agent}` | {sum(cpu) / len(cpu):.2f} |", flush=True)
        print(f"| **all {len(c.agents)} agents x {args.seeds} seeds** | **{total:.1f}** |")


if __name__ == "__main__":
    main()
