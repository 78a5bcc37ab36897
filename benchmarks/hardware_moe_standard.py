"""The MoEQuantAlloc findings (v0 and v1) at the standard tier, on data draws 0-9.

    python benchmarks/hardware_moe_standard.py [--env v0|v1|all]

The findings are declared and tested at the smoke tier (one-shot allocation, 32 calibration and 64
held-out problems, 10 router fine-tuning steps). The standard tier is GEMQ's progressive loop group by
group (one layer's experts per step) with 64 calibration and 256 held-out problems and 20 router
fine-tuning steps. This script evaluates the same declarations there, in this process (one torch
thread), and prints each effect with its interval and verdict beside the smoke-tier declaration, and
the CPU seconds. Results: docs/hardware.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import time


def main() -> None:
    import torch

    from icmlgym.findings import family_findings
    from icmlgym.findings.evaluate import evaluate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", choices=("v0", "v1", "all"), default="all")
    a = ap.parse_args()
    torch.set_num_threads(1)
    findings = [f for f in family_findings("hardware") if "MoEQuantAlloc" in f.treatment.env_id
                and (a.env == "all" or f.treatment.env_id.endswith(a.env))]
    t0, load0 = time.time(), os.getloadavg()[0]
    results = evaluate(findings, units=list(range(10)), tier="standard", executor="inprocess")
    print("| finding | effect [95% CI] | p | verdict at standard | declared (smoke) |")
    print("|---|---|---|---|---|")
    for r in results:
        row = r.row()
        print(f"| {r.finding.id} | {row['effect']:+.4g} [{row['ci_low']:+.4g}, {row['ci_high']:+.4g}] | {row['p_value']:.3g} "
              f"| {r.verdict} | {r.finding.expected} |")
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"\n{len(findings)} findings, {ru.ru_utime + ru.ru_stime:.0f} CPU-s, {time.time() - t0:.0f} s wall, "
          f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
