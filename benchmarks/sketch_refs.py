"""Score references of SketchAttack-v0 at the smoke tier (card.score_refs["smoke"]).

The primary metric is ``success``; its smoke-tier references are the mean success rate of the
random-stream baseline (sketch-oblivious-random) and of the reference attack
(sketch-probe-reset) against the default defender (bernoulli), seeds 0..9 x the tier's 2
episodes. Also prints every smoke-tier agent's success rate and error, and the CPU time of the
smoke benchmark (all agents x 3 seeds).

    python benchmarks/sketch_refs.py
"""

from __future__ import annotations

import time

import numpy as np

import icmlgym

ENV_ID = "icmlgym/SketchAttack-v0"


def main() -> None:
    card = icmlgym.card(ENV_ID)
    for agent in card.agents:
        recs = icmlgym.run(ENV_ID, agent, seeds=list(range(10)), tier="smoke")
        s = [x for r in recs for x in r.metric("success")]
        e = [x for r in recs for x in r.metric("prefix_max_error")]
        print(f"{agent:26s} success {np.mean(s):.3f}  prefix-max error {np.mean(e):.3f}", flush=True)
    t0 = time.process_time()
    for agent in card.agents:
        icmlgym.run(ENV_ID, agent, seeds=3, tier="smoke")
    print(f"smoke benchmark (all agents x 3 seeds): {time.process_time() - t0:.1f} s CPU")


if __name__ == "__main__":
    main()
