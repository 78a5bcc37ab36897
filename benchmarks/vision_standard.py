"""The vision findings' arms at a budget tier, seed by seed, with the paired effects of whatever has finished.

Run: ``python benchmarks/vision_standard.py --env lat|kd|kd1 [--tier standard] [--agents a,b] [--seeds 10] [--log FILE]``

``icmlgym findings vision --tier standard`` runs every arm of every finding and prints only at the
end; on a loaded machine that can take an hour. This runs the same arms (the declared findings'
agents and env arguments, the same runner, in process so a seed's pre-training is shared by its
``n_labels`` = 0 and 8 runs) one seed at a time, appends each run to ``--log`` (JSON lines) as it
finishes (a run already in the log is not repeated), and prints each finding's paired effect over the seeds done so far (``--report``
reprints them from the log alone). With ``--agents`` only the findings whose two arms are both
listed run.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from icmlgym.findings import family_findings
from icmlgym.findings.stats import paired_effect, verdict

ENVS = {"lat": "icmlgym/LatentActionTransfer-v0", "kd": "icmlgym/LanguageToVisualKD-v0", "kd1": "icmlgym/LanguageToVisualKD-v1"}


def _arm_key(arm) -> str:
    return f"{arm.env_id.split('/')[-1]} {arm.agent} {json.dumps(dict(arm.env_kwargs), sort_keys=True)}"


def report(findings, rows: list[dict]) -> None:
    val = {(r["arm"], r["seed"]): r["metrics"] for r in rows if r["status"] == "ok"}
    print("| finding | units | treatment | control | effect [95% CI] | p | verdict on these units | declared at this tier |")
    print("|---|---|---|---|---|---|---|---|")
    for f in findings:
        t, c, m = _arm_key(f.treatment), _arm_key(f.control), f.measure.metric
        seeds = sorted(s for (a, s) in val if a == t and (c, s) in val)
        if not seeds:
            continue
        tv = np.array([np.mean(val[(t, s)][m]) for s in seeds])
        cv = np.array([np.mean(val[(c, s)][m]) for s in seeds])
        e = paired_effect(tv - cv, f.direction)
        v = verdict(e, f.direction, f.min_effect) if len(seeds) >= 10 else f"(only {len(seeds)} units)"
        print(f"| {f.id} | {len(seeds)} (seeds {seeds[0]}-{seeds[-1]}) | {tv.mean():.3f} | {cv.mean():.3f} | "
              f"{e.mean:+.3f} [{e.low:.3f}, {e.high:.3f}] | {e.p_value:.3f} | {v} | {f.expected} |")
    cpu: dict[str, float] = {}
    for r in rows:
        cpu[r["arm"]] = cpu.get(r["arm"], 0.0) + r["cpu"]
    print("CPU s per arm (pre-training shared between a seed's arms is charged to the first):",
          {k: round(v, 1) for k, v in cpu.items()})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env", choices=sorted(ENVS), required=True)
    ap.add_argument("--tier", default="standard")
    ap.add_argument("--agents", default="", help="comma-separated; default: every agent of the env's findings")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--log", default="vision-standard.jsonl")
    ap.add_argument("--report", action="store_true", help="only print the effects from --log")
    args = ap.parse_args()
    keep = set(filter(None, args.agents.split(",")))
    findings = [f for f in family_findings("vision") if ENVS[args.env] in (f.treatment.env_id, f.control.env_id) and args.tier in f.tiers
                and (not keep or {f.treatment.agent, f.control.agent} <= keep)]
    if not args.report:
        import torch

        import icmlgym

        torch.set_num_threads(1)
        arms = {}
        for f in findings:
            for a in (f.treatment, f.control):
                arms.setdefault(_arm_key(a), a)
        done = set()
        if os.path.exists(args.log):
            with open(args.log) as fh:
                done = {(r["arm"], r["seed"]) for r in map(json.loads, filter(str.strip, fh)) if r.get("tier") == args.tier and r["status"] == "ok"}
        with open(args.log, "a") as log:
            for seed in range(args.seeds):
                for key, a in arms.items():
                    if (key, seed) in done:  # logged already (the runs are deterministic): not rerun
                        continue
                    t0 = time.process_time()
                    rec = icmlgym.run(a.env_id, a.agent, seeds=[seed], tier=args.tier, env_kwargs=dict(a.env_kwargs))[0]
                    metrics = {f.measure.metric: rec.metric(f.measure.metric) for f in findings if rec.status == "ok"}
                    row = {"tier": args.tier, "arm": key, "seed": seed, "status": rec.status, "cpu": round(time.process_time() - t0, 2),
                           "metrics": metrics}
                    log.write(json.dumps(row) + "\n")
                    log.flush()
                    print(json.dumps(row), flush=True)
    with open(args.log) as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    report(findings, [r for r in rows if r.get("tier") == args.tier])


if __name__ == "__main__":
    main()
