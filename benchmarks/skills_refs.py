"""The smoke score references of the skills cards: mean primary metric over seeds 0, 1, 2 at the
smoke tier of ``random`` and of each card's reference agent (what ``score_refs`` records).

Run: python benchmarks/skills_refs.py [ENV_ID ...]
"""

from __future__ import annotations

import sys

import numpy as np

import icmlgym
from icmlgym.envs.skills import CARDS


def main() -> None:
    ids = sys.argv[1:] or [c.id for c in CARDS]
    for env_id in ids:
        card = icmlgym.card(env_id)
        out = []
        for agent in ("random", card.reference_agent):
            recs = icmlgym.run(env_id, agent, seeds=[0, 1, 2], tier="smoke")
            bad = [r.error for r in recs if r.status != "ok"]
            if bad:
                raise SystemExit(f"{env_id} {agent}: {bad[0]}")
            out.append(float(np.mean([r.metric(card.primary_metric)[0] for r in recs])))
        print(f"{env_id}: ({out[0]:.4f}, {out[1]:.4f})")


if __name__ == "__main__":
    main()
