"""Inference time of the quantised MoE against full precision (MoEQuantAlloc-v0's model).

    python benchmarks/hardware_quant.py [--bits 2,3,4,8] [--problems 64] [--repeats 5] [--size smoke|standard]

One torch thread. The model: the zoo's ``reasoner-moe`` (smoke: the shipped weights; standard:
an untrained model of the standard shapes, 4 layers x 8 experts, width 96; speed does not depend
on the values). Forward passes over ``--problems`` held-out problems (teacher forcing, the env's
held-out evaluation), three ways:

- ``fp32``: the model as trained;
- ``fake-quant``: expert weights replaced by their dequantised values (what the env computes
  with; same kernels, so the same speed: checks that quantising costs nothing at run time);
- ``packed``: every expert linear replaced by :class:`~icmlgym.envs.hardware.quant.QuantizedLinear`
  (uint8 codes + float16 group scale/minimum, dequantised on every call): a weight-only
  quantised model in pure torch, whose outputs must equal the fake-quant model's.

Also the expert memory (packed bytes) against float16, and the time to quantise every expert.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time

import torch


def timed(fn, repeats: int) -> float:
    fn()  # warm-up
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main() -> None:
    from icmlgym.corpora.reasoning import DOMAINS, generate
    from icmlgym.envs.hardware.moe_model import split_tokens
    from icmlgym.envs.hardware.quant import QuantizedLinear, fake_quantize, linear_bytes
    from icmlgym.zoo.builtin import _make_gpt, encode_problems
    from icmlgym.zoo.registry import get, load

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bits", default="2,3,4,8")
    ap.add_argument("--problems", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--size", default="smoke", choices=("smoke", "standard"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.size == "smoke":
        model = load("reasoner-moe", "smoke").model.eval()
    else:
        torch.manual_seed(0)
        model = _make_gpt(get("reasoner-moe").configs["standard"]).eval()
    x, _ = split_tokens(encode_problems(generate(a.problems, 1, "test", DOMAINS, (1, 2)), model.config.block_size))
    tokens = int((x != 0).sum())
    experts = [ex for blk in model.blocks for ex in blk.mlp.experts]
    fp16 = sum(linear_bytes(lin.out_features, lin.in_features, None) for ex in experts for lin in (ex.fc, ex.out))
    print(f"load average {os.getloadavg()[0]:.1f}; model {a.size}: {len(model.blocks)} layers x {len(model.blocks[0].mlp.experts)} experts; "
          f"{a.problems} problems, {tokens} tokens; one thread; median of {a.repeats}")
    with torch.no_grad():
        t_fp = timed(lambda: model(x), a.repeats)
        print("| model | bits | forward (ms) | tokens/s | x fp32 time | expert memory (bytes) | x float16 | quantise all (ms) | max abs diff packed vs fake |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(f"| fp32 | 32 | {1000 * t_fp:.1f} | {tokens / t_fp:,.0f} | 1.00 | {fp16 * 2:,.0f} | 2.00 | | |")
        for b in (int(v) for v in a.bits.split(",")):
            fake = copy.deepcopy(model)
            t = time.perf_counter()
            for ex in (e for blk in fake.blocks for e in blk.mlp.experts):
                for lin in (ex.fc, ex.out):
                    lin.weight.copy_(fake_quantize(lin.weight, b))
                    lin.bias.copy_(lin.bias.half().float())
            t_q = time.perf_counter() - t
            packed = copy.deepcopy(model)
            for ex in (e for blk in packed.blocks for e in blk.mlp.experts):
                ex.fc, ex.out = QuantizedLinear(ex.fc, b), QuantizedLinear(ex.out, b)
            diff = float((packed(x) - fake(x)).abs().max())
            mem = sum(lin.nbytes() for ex in (e for blk in packed.blocks for e in blk.mlp.experts) for lin in (ex.fc, ex.out))
            for name, m in (("fake-quant", fake), ("packed", packed)):
                t_m = timed(lambda m=m: m(x), a.repeats)
                print(f"| {name} | {b} | {1000 * t_m:.1f} | {tokens / t_m:,.0f} | {t_m / t_fp:.2f} | {mem:,.0f} | {mem / fp16:.3f} | "
                      f"{1000 * t_q:.1f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
