"""MidtrainingSchedule-v0: training tokens per second of one chunk against a plain torch loop, and
the claims that need several targets (near against far) measured over seeds.

- ``--speed``: one env step (a chunk: ``steps_per_chunk`` AdamW steps on a sampled mixture, then
  the held-out losses of every source) against a plain torch loop over the same model shape,
  batches generated in advance, the same optimiser; tokens per second of each (one torch thread,
  median over repeats). The difference is the env's overhead (sampling sources on the fly,
  the per-step learning rate, the evaluation at the chunk's end).
- ``--claims``: for each target (near, code, arith), the bridge against continued pre-training
  (target loss and general loss after post-training), and early-high against late-high, paired
  over seeds at a tier; prints the mean per-seed differences with 95% bootstrap intervals, and
  for each far target the bridge's gain over continued pre-training minus that gain on ``near``.
- ``--far-near``: the declared finding ``midtrain-gain-larger-far-than-near`` through
  :func:`icmlgym.findings.evaluate` (process executor, two workers) on units ``first..first+9``,
  with its parts: per target, the mean target loss of each arm and the gain of midtraining
  (general-only minus bridge) with a 95% bootstrap interval.

Run: python benchmarks/skills_midtraining.py --speed [--repeats 5]
     python benchmarks/skills_midtraining.py --claims [--seeds 10] [--tier smoke]
     python benchmarks/skills_midtraining.py --far-near [--first 0] [--tier smoke] [--far code|arith]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import icmlgym
from icmlgym.corpora import domains

ENV = "icmlgym/MidtrainingSchedule-v0"


def speed(repeats: int) -> dict:
    kw = icmlgym.card(ENV).tiers["smoke"].env_kwargs
    env = icmlgym.make(ENV, **{**kw, "n_chunks": 10**4}).unwrapped
    env.reset(seed=0)
    mix = np.array([0.7, 0.0, 0.3, 0.0], np.float32)
    tokens = env.steps_per_chunk * env.batch_size * env.seq_len
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        env.step(mix)
        ts.append(time.perf_counter() - t)
    env_tps = tokens / statistics.median(ts)
    # plain loop: same shapes, batches made beforehand, same optimiser and clipping
    from icmlgym.zoo.transformer import GPT

    torch.manual_seed(0)
    model = GPT(env.cfg)
    opt = torch.optim.AdamW(model.parameters(), env.lr, weight_decay=0.01, betas=(0.9, 0.98))
    rng = np.random.default_rng(0)
    batches = [torch.from_numpy(np.concatenate([domains.sample("general", rng, env.batch_size - env.batch_size * 3 // 10, env.seq_len),
                                                domains.sample("code", rng, env.batch_size * 3 // 10, env.seq_len)]))
               for _ in range(env.steps_per_chunk)]
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        for x in batches:
            opt.zero_grad(set_to_none=True)
            logits = model(x)
            F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1)).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        ts.append(time.perf_counter() - t)
    plain_tps = tokens / statistics.median(ts)
    return {"chunk_tokens": tokens, "env_tokens_per_s": round(env_tps), "plain_loop_tokens_per_s": round(plain_tps),
            "env_over_plain_time": round(plain_tps / env_tps, 2)}


def _interval(d: np.ndarray, rng: np.random.Generator) -> list[float]:
    boots = rng.choice(d, size=(10_000, len(d))).mean(1)
    return [round(float(np.percentile(boots, 2.5)), 4), round(float(np.percentile(boots, 97.5)), 4)]


def claims(seeds: int, tier: str) -> dict:
    out: dict = {}
    diffs: dict = {}
    rng = np.random.default_rng(0)
    for target in ("near", "code", "arith"):
        runs = {}
        for agent in ("midtrain-bridge", "midtrain-continued", "midtrain-early-high", "midtrain-late-high"):
            recs = icmlgym.run(ENV, agent, seeds=list(range(seeds)), tier=tier, env_kwargs={"target": target})
            runs[agent] = {m: np.array([r.metric(m)[0] for r in recs]) for m in ("target_loss", "general_loss")}
        row = {"distance_bits": round(float(domains.distance(target)), 3)}
        for m in ("target_loss", "general_loss"):
            d = runs["midtrain-continued"][m] - runs["midtrain-bridge"][m]  # > 0: the bridge is better
            row[f"continued_minus_bridge_{m}"] = [round(float(d.mean()), 4)] + _interval(d, rng)
        d = runs["midtrain-late-high"]["target_loss"] - runs["midtrain-early-high"]["target_loss"]
        row["late_minus_early_target_loss"] = [round(float(d.mean()), 4)] + _interval(d, rng)
        row["means"] = {a: {m: round(float(v.mean()), 4) for m, v in r.items()} for a, r in runs.items()}
        out[target] = row
        diffs[target] = {m: runs["midtrain-continued"][m] - runs["midtrain-bridge"][m] for m in ("target_loss", "general_loss")}
    for far in ("code", "arith"):  # the bridge's gain over continued pre-training, far minus near (paired by seed)
        for m in ("target_loss", "general_loss"):
            d = diffs[far][m] - diffs["near"][m]
            out[far][f"gain_over_continued_{m}_minus_near"] = [round(float(d.mean()), 4)] + _interval(d, rng)
    return out


def far_near(first: int, tier: str, far: str = "code") -> dict:
    from dataclasses import replace

    from icmlgym.findings import evaluate, family_findings
    from icmlgym.findings.skills import FarMinusNear

    (f,) = [x for x in family_findings("skills") if x.id == "midtrain-gain-larger-far-than-near"]
    if far != "code":  # the same comparison with another far target (not declared)
        both = ({"target": far}, {"target": "near"})
        f = replace(f, treatment=replace(f.treatment, variants=both), control=replace(f.control, variants=both),
                    measure=FarMinusNear("target_loss", far=far))
    units = list(range(first, first + 10))
    recs: list = []
    t0 = time.perf_counter()
    (r,) = evaluate([f], units=units, tier=tier, executor="process", workers=2, on_record=recs.append)
    wall = time.perf_counter() - t0
    loss = {(x.agent_name, x.env_kwargs["target"], x.seed): x.metric("target_loss")[0] for x in recs}
    rng = np.random.default_rng(0)
    parts = {}
    for target in (far, "near"):
        g = np.array([loss[("midtrain-general-only", target, u)] for u in units])
        b = np.array([loss[("midtrain-bridge", target, u)] for u in units])
        parts[target] = {"distance_bits": round(float(domains.distance(target)), 3), "general_only": round(float(g.mean()), 4),
                         "bridge": round(float(b.mean()), 4), "gain": [round(float((g - b).mean()), 4)] + _interval(g - b, rng)}
    e = r.effect
    return {"units": f"{units[0]}-{units[-1]}", "tier": tier, "far": far, "effect": [round(e.mean, 4), round(e.low, 4), round(e.high, 4)],
            "verdict": r.verdict, "declared": f.expected, "per_target": parts, "runs": len(recs), "wall_s": round(wall, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--claims", action="store_true")
    ap.add_argument("--far-near", action="store_true")
    ap.add_argument("--first", type=int, default=0, help="--far-near: the first of ten units")
    ap.add_argument("--far", default="code", choices=("code", "arith"), help="--far-near: the far target (code: the declared finding)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--tier", default="smoke")
    args = ap.parse_args()
    torch.set_num_threads(1)
    res: dict = {"load_average": os.getloadavg()[0]}
    if args.speed:
        res["speed"] = speed(args.repeats)
    if args.claims:
        res["claims"] = claims(args.seeds, args.tier)
    if args.far_near:
        res["far_near"] = far_near(args.first, args.tier, args.far)
    res["load_average_after"] = os.getloadavg()[0]
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
