"""CPU cost of the hardware family's findings test (tests/hardware/test_findings.py), by env.

    python benchmarks/hardware_findings_cost.py [--env moe|cim|all]

Evaluates the declared findings of ``icmlgym/findings/hardware.py`` on their test units (0-9, smoke
tier) in this process and prints the CPU seconds (user + system, load-independent, unlike wall
time on a shared machine), the wall time, and each finding's verdict against its declaration. The
test runs the same evaluation on two worker processes, so its wall time on two quiet cores is about
half the CPU seconds plus the workers' start.
"""

from __future__ import annotations

import argparse
import os
import resource
import time


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    import torch

    from icmlgym.findings import family_findings
    from icmlgym.findings.testing import evaluate_declared

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", choices=("moe", "cim", "all"), default="all")
    a = ap.parse_args()
    torch.set_num_threads(1)
    findings = family_findings("hardware")
    if a.env != "all":
        findings = [f for f in findings if ("MoE" in f.treatment.env_id) == (a.env == "moe")]
    c, t = cpu_seconds(), time.time()
    results = evaluate_declared(findings, executor="inprocess")
    runs = len({(arm.label, arm.env_id, u) for f in findings for arm in f.arms for u in f.test_units})
    print(f"load average {os.getloadavg()[0]:.1f}; {a.env}: {len(findings)} findings, {runs} runs: "
          f"{cpu_seconds() - c:.1f} CPU-seconds, {time.time() - t:.1f} s wall")
    for fid, r in results.items():
        print(f"  {fid}: {r.verdict} (declared {r.finding.expected}), effect {r.effect.mean:+.5f}")


if __name__ == "__main__":
    main()
