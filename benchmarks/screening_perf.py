"""Screening performance: enumeration + fingerprints, opening a 2 x 10^10 library, env steps per second.

    python benchmarks/screening_perf.py [--n 3000]

1. Product enumeration + Morgan fingerprint (1024 bits, radius 2) per second:
   ``VirtualLibrary.fingerprints`` (building blocks parsed once, products built from the
   parsed molecules, packed bits) against a plain per-compound RDKit loop over the same
   compounds (parse the reagent SMILES, run the reaction, write and re-read the product
   SMILES, fingerprint). Same compounds, same process, cold caches; ratio = plain / ours.
2. Open time and resident memory of the 2.2 x 10^10 quinazolinone library of
   ../shared/data/screening (embedded 2.7 x 10^9 library when the folder is absent), and the
   memory held after touching 10,000 products.
3. Screening-v0 steps per second at the smoke tier (BOBA, warm ground-truth cache), and
   ScreeningCompounds-v0 full-library rounds per second.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/screening"


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=3000, help="compounds for the enumeration benchmark")
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}")

    from icmlgym.envs.screening.library import (
        AMIDE_SMARTS,
        VirtualLibrary,
        amide_reaction,
        plain_rdkit_products,
        quinazolinone_reaction,
    )

    # 1. enumeration + fingerprints
    if DATA.is_dir():
        bbs = {"amines": DATA / "primary_amines.smi", "acids": DATA / "carboxylic_acids.smi"}
        make = lambda: VirtualLibrary.from_files(bbs, [amide_reaction()])  # noqa: E731
        label = "58.3M amides (shared data)"
    else:
        from icmlgym.envs.screening.embedded import embedded_library

        make = lambda: embedded_library(reactions=("amide",))  # noqa: E731
        label = "9.0M embedded amides"
    lib = make()
    idx = np.random.default_rng(0).choice(lib.size, size=args.n, replace=False)
    _, tup = lib.decode(idx)
    am, ac = lib.building_blocks["amines"].smiles, lib.building_blocks["acids"].smiles
    pairs = [(am[a], ac[b]) for a, b, *_ in tup]
    t = time.perf_counter()
    fps, ok = lib.fingerprints(idx)
    ours = time.perf_counter() - t
    t = time.perf_counter()
    plain = plain_rdkit_products(pairs, AMIDE_SMARTS)
    base = time.perf_counter() - t
    agree = np.mean([p is not None and np.array_equal(np.unpackbits(f), p) for f, p in zip(fps, plain)])
    print(
        f"[enumerate+fp] {label}, {args.n} random compounds: ours {args.n / ours:,.0f}/s, "
        f"plain RDKit loop {args.n / base:,.0f}/s, ratio {base / ours:.2f}x; identical fingerprints {agree:.1%}; "
        f"failed products {int((~ok).sum())}"
    )

    # 2. open a 2 x 10^10 library
    r0 = rss_mb()
    t = time.perf_counter()
    if DATA.is_dir():
        big = VirtualLibrary.from_files(
            {"aminobenzoic_acids": DATA / "aminobenzoic_acids.smi", "amines": DATA / "primary_amines.smi", "acids": DATA / "carboxylic_acids.smi"},
            [quinazolinone_reaction()],
        )
    else:
        from icmlgym.envs.screening.embedded import embedded_library

        big = embedded_library()
    t_open = time.perf_counter() - t
    r1 = rss_mb()
    touch = np.random.default_rng(1).integers(0, big.size, 10_000)
    t = time.perf_counter()
    big.fingerprints(touch)
    t_touch = time.perf_counter() - t
    r2 = rss_mb()
    print(
        f"[open] {big!r}: open {t_open:.2f} s, resident memory +{r1 - r0:.0f} MiB (building blocks); "
        f"10,000 products touched in {t_touch:.1f} s: +{r2 - r1:.1f} MiB resident, "
        f"{big.memory_bytes() / 2**20:.1f} MiB of product caches; failed products {big.n_failed}"
    )

    # 3. env steps per second at the smoke tier
    import icmlgym
    from icmlgym.agents.protocol import AgentSpec
    from icmlgym.agents.screening import BOBAAgent
    from icmlgym.runner import rollout

    kw = icmlgym.card("icmlgym/Screening-v0").tier("smoke").env_kwargs
    env = icmlgym.make("icmlgym/Screening-v0", **kw).unwrapped  # builds (or reads) the cached ground truth
    agent = BOBAAgent()
    steps = 0
    t = time.perf_counter()
    spec = AgentSpec("icmlgym/Screening-v0", env.observation_space, env.action_space)
    for ep in range(10):  # the runner's rollout: episode ep of run seed 0
        steps += rollout(env, agent, 0, spec, episode=ep).length
    dt = time.perf_counter() - t
    print(f"[env] Screening-v0 smoke tier (30,000 compounds, 40 inferences + 4 evaluations per step), BOBA: "
          f"{steps / dt:,.0f} steps/s ({steps} steps, 10 episodes)")
    cenv = icmlgym.make("icmlgym/ScreeningCompounds-v0", **{k: v for k, v in kw.items() if k != "inference_batch"}).unwrapped
    cenv.reset(seed=0)
    t = time.perf_counter()
    for _ in range(20):
        cenv.step({"op": 1, "compound": 0})
    dt = time.perf_counter() - t
    print(f"[env] ScreeningCompounds-v0 smoke tier full-library rounds: {20 / dt:,.1f} rounds/s "
          f"({30_000 * 20 / dt:,.0f} surrogate inferences/s)")


if __name__ == "__main__":
    main()
