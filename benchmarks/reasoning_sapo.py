"""SAPO at a larger RL budget: the declared finding "SAPO raises TBVM's acceptance", re-run with a longer-trained draft.

The finding ``reasoning-sapo-raises-acceptance`` (icmlgym/findings/reasoning.py) compares TBVM
with the SAPO draft against TBVM with the original draft, paired per seed (every arm of a seed
sees the same problems), at the smoke SAPO budget (150 REINFORCE steps of 16 lines). This script
evaluates the same finding with the SAPO draft trained at ``--budget`` (``SAPO_BUDGETS`` in
icmlgym/envs/reasoning/pair.py; trained and cached on first use: see the zoo card it prints) and
prints the findings table row, the draft's card and the accuracy of both arms.

Run: python benchmarks/reasoning_sapo.py --budget standard-half [--units 10]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import numpy as np
import torch

from icmlgym.envs.reasoning.pair import SAPO_BUDGETS
from icmlgym.findings import evaluate
from icmlgym.findings.reasoning import FINDINGS
from icmlgym.findings.table import markdown


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", default="standard", choices=sorted(SAPO_BUDGETS))
    ap.add_argument("--units", type=int, default=10)
    args = ap.parse_args()
    torch.set_num_threads(1)
    from icmlgym.zoo import sapo as _sapo  # noqa: F401  (registers the member)
    from icmlgym.zoo.registry import load

    t0 = time.perf_counter()
    draft = load("reasoner-overthink-draft-sapo", "smoke", overrides=SAPO_BUDGETS[args.budget])
    card = draft.card
    print(f"SAPO draft ({args.budget}): {time.perf_counter() - t0:.0f} s to load or train; train_seconds {card.get('train_seconds')}, "
          f"load {card.get('load_average')}, quality {card.get('quality')}, training {card.get('training')}")
    base = next(f for f in FINDINGS if f.id == "reasoning-sapo-raises-acceptance")
    treatment = dataclasses.replace(base.treatment, label=f"TBVM with the SAPO draft ({args.budget} budget)",
                                    env_kwargs={"draft": "sapo", "sapo_budget": args.budget})
    finding = dataclasses.replace(base, treatment=treatment)
    t0 = time.perf_counter()
    res = evaluate(finding, units=range(args.units), tier="smoke")
    print(f"load average {os.getloadavg()[0]:.1f}; evaluation {time.perf_counter() - t0:.0f} s")
    print(markdown(res))
    r = res[0]
    print(f"acceptance per unit: SAPO {np.round(r.treatment, 3).tolist()} base {np.round(r.control, 3).tolist()}")


if __name__ == "__main__":
    main()
