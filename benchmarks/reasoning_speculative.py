"""Our speculative decoding against plain target decoding, side by side (the reasoning family's substrate).

For the same problems (test split of the reasoning corpus) and the same sampling settings,
decodes each full generation (question to end of text or block size) with:

- ``plain``: the target alone with its KV cache, one pass per token
  (:class:`~icmlgym.envs.reasoning.speculative.SpeculativeDecoder` with ``k = 0``);
- ``generate``: the zoo's own ``GPT.generate`` (KV cache; greedy rows only), the reference loop;
- ``speculative k``: the draft proposes ``k`` tokens, the target verifies them in one pass.

Reports generated tokens per second (wall clock, one torch thread, median over repeats), the
acceptance rate (accepted / proposed draft tokens), target and draft passes per token, and
the cost model's speed-up (target passes + draft passes x draft/target parameters, against
one target pass per token). At this size a pass of either model is dominated by per-call
overhead (Python, kernel launch), not by its FLOPs, so the wall clock does not follow the
cost model: that gap is the point of measuring both.

Run: python benchmarks/reasoning_speculative.py [--problems 40 --repeats 3 --ks 2,4,6 --temperatures 0,1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
import torch

from icmlgym.corpora.reasoning import generate
from icmlgym.envs.reasoning.pair import line_tokens, zoo_pair
from icmlgym.envs.reasoning.speculative import SpeculativeDecoder


def run(pair, prompts, k: int, temperature: float, seed: int) -> dict[str, float]:
    ids = line_tokens(pair.tokenizer)
    rng = np.random.default_rng(seed)
    tokens = tp = dp = prop = acc = 0
    t0 = time.perf_counter()
    for p in prompts:
        dec = SpeculativeDecoder(pair.target, pair.draft, p, k, temperature, rng, ids["newline"], ids["eos"])
        dec.decode_line(stop_at_newline=False)
        c = dec.counters
        tokens += dec.generated
        tp, dp, prop, acc = tp + c.target_forwards - 1, dp + max(c.draft_forwards - 1, 0), prop + c.proposed, acc + c.accepted  # prefill passes excluded
    secs = time.perf_counter() - t0
    return {"seconds": secs, "tokens": tokens, "target_passes": tp, "draft_passes": dp, "proposed": prop, "accepted": acc}


def run_generate(pair, prompts) -> dict[str, float]:
    eos = pair.tokenizer.eos_id
    tokens = 0
    t0 = time.perf_counter()
    for p in prompts:
        tokens += len(pair.target.generate(p, pair.target.config.block_size - len(p), 0.0, stop=eos))
    return {"seconds": time.perf_counter() - t0, "tokens": tokens}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ks", default="2,4,6")
    ap.add_argument("--temperatures", default="0,1")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    torch.set_num_threads(1)
    pair = zoo_pair(device=args.device)
    tok = pair.tokenizer
    prompts = [tok.encode(p.prompt, bos=True) for p in generate(args.problems, 123, "test", levels=(1, 2))]
    ks = [int(k) for k in args.ks.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f}; {len(prompts)} problems; draft/target parameters {pair.draft_cost:.3f}; device {args.device}")
    print("| decoding | temperature | tokens/s | vs plain | acceptance | target passes/token | draft passes/token | modelled speed-up |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for temp in (float(t) for t in args.temperatures.split(",")):
        plain = [run(pair, prompts, 0, temp, 0) for _ in range(args.repeats)]
        plain_tps = statistics.median(r["tokens"] / r["seconds"] for r in plain)
        pr = plain[0]
        print(f"| plain (target, KV cache) | {temp:g} | {plain_tps:,.0f} | 1.00x | - | {pr['target_passes'] / pr['tokens']:.2f} | 0 | 1.00x |")
        if temp == 0:
            gen = [run_generate(pair, prompts) for _ in range(args.repeats)]
            gtps = statistics.median(r["tokens"] / r["seconds"] for r in gen)
            print(f"| GPT.generate (reference loop) | 0 | {gtps:,.0f} | {gtps / plain_tps:.2f}x | - | 1.00 | 0 | 1.00x |")
        for k in ks:
            res = [run(pair, prompts, k, temp, 0) for _ in range(args.repeats)]
            tps = statistics.median(r["tokens"] / r["seconds"] for r in res)
            r = res[0]
            model_cost = (r["target_passes"] + pair.draft_cost * r["draft_passes"]) / r["tokens"]
            row = {"k": k, "temperature": temp, "tokens_per_s": tps, "plain_tokens_per_s": plain_tps,
                   "acceptance": r["accepted"] / r["proposed"], "target_passes_per_token": r["target_passes"] / r["tokens"],
                   "draft_passes_per_token": r["draft_passes"] / r["tokens"], "modelled_speedup": 1.0 / model_cost}
            rows.append(row)
            print(f"| speculative k={k} | {temp:g} | {tps:,.0f} | {tps / plain_tps:.2f}x | {row['acceptance']:.3f} | "
                  f"{row['target_passes_per_token']:.2f} | {row['draft_passes_per_token']:.2f} | {row['modelled_speedup']:.2f}x |")
    print(json.dumps({"load_average_end": os.getloadavg()[0], "rows": rows}))


if __name__ == "__main__":
    main()
