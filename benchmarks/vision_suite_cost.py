"""CPU seconds of the main job's runs of one vision env: every agent x seeds 0-2 at the smoke tier, each run
with the per-process caches cleared first (as in the main job's fresh worker processes).

Run: ``python benchmarks/vision_suite_cost.py kd|kd1|lat ['{"env": "kwargs"}']`` (set ``ICMLGYM_HOME`` to an
empty folder for a cold disk cache).
"""

from __future__ import annotations

import json
import sys
import time

import torch

import icmlgym
from icmlgym.agents import vision as av
from icmlgym.catalog import card
from icmlgym.envs.vision import lavid

ENVS = {"lat": "icmlgym/LatentActionTransfer-v0", "kd": "icmlgym/LanguageToVisualKD-v0", "kd1": "icmlgym/LanguageToVisualKD-v1"}


def main() -> None:
    torch.set_num_threads(1)
    env = ENVS[sys.argv[1]]
    kw = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    for e, a in ((ENVS["lat"], "lam-no-align"), (ENVS["kd"], "kd-ce-only")):  # imports and first-call costs outside the timing
        icmlgym.run(e, a, seeds=[99])
    c = card(env)
    total = 0.0
    for agent in (c.reference_agent, *c.baselines):
        t = time.process_time()
        for s in range(3):
            lavid._DATA_CACHE.clear()
            lavid._TEACHER_CACHE.clear()
            av._TRAINED.clear()
            rec = icmlgym.run(env, agent, seeds=[s], env_kwargs=kw)[0]
            if rec.status != "ok":
                raise SystemExit(rec.error)
        dt = time.process_time() - t
        total += dt
        print(f"{agent}: {dt:.2f} s CPU for 3 runs", flush=True)
    print(f"TOTAL {env} {kw}: {total:.1f} s CPU")


if __name__ == "__main__":
    main()
