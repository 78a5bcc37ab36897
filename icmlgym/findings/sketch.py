"""Findings of Cohen, Gribelyuk, Nelson & Stemmer, "Adaptively robust sketches for resettable
streams" (ICML 2026), on SketchAttack-v0.

The unit is the run seed (it draws the defender's secret randomness and the attacker's key
order); one episode per run. Budgets: 3,000 keys, updates and queries, errors normalised by
max(prefix max of F, 500), a break is a prefix-max error above epsilon = 0.5. "Holds" for a
defender always names its attacker set: each attacker is its own finding.

Attackers: ``sketch-probe-reset`` (insert, query, reset over-counted keys), ``sketch-probe-average``
(averages 5 queries per reading; defeats per-query noise) and ``sketch-probe-refresh`` (knows
the Binary Tree Mechanism: spends updates on resets of an unused key so that the tree re-draws
its low-level noise, and averages the readings).
"""

from __future__ import annotations

from icmlgym.findings.claims import HOLDS, Arm, Finding, Mean

E = "icmlgym/SketchAttack-v0"
SOURCE = "Cohen, Gribelyuk, Nelson & Stemmer, Adaptively robust sketches for resettable streams (ICML 2026)"
BASE = {"n_keys": 3000, "update_budget": 3000, "query_budget": 3000, "min_scale": 500, "epsilon": 0.5}
SEEDS = tuple(range(10))
SUCCESS = Mean("success")
ERROR = Mean("prefix_max_error")


def _arm(label: str, agent: str, **kw) -> Arm:
    agent_kwargs = kw.pop("agent_kwargs", {})
    return Arm(label, E, agent, env_kwargs={**BASE, **kw}, agent_kwargs=agent_kwargs, episodes=1)


ATTACKERS = {
    "probe-reset": "sketch-probe-reset",
    "probe-average": "sketch-probe-average",
    "probe-refresh": "sketch-probe-refresh",
}

FINDINGS = [
    Finding(
        id="sketch-adaptive-breaks-sampling-sketch",
        family="sketch",
        claim="An adaptive adversary breaks a (non-robust) sampling sketch of a resettable stream that an "
        "oblivious stream of the same budget does not (Bernoulli sampling at 1,800 words).",
        source=SOURCE,
        treatment=_arm("probe-reset vs Bernoulli", "sketch-probe-reset", defender="bernoulli", space=1800),
        control=_arm("oblivious random stream vs Bernoulli", "sketch-oblivious-random", defender="bernoulli", space=1800),
        measure=SUCCESS,
        direction="greater",
        unit="seed",
        min_effect=0.5,
        expected=HOLDS,
        test_units=SEEDS,
    ),
    Finding(
        id="sketch-dp-tree-survives-where-bernoulli-breaks",
        family="sketch",
        claim="The sketch whose sampling randomness is protected by the Binary Tree Mechanism survives the "
        "attack at a space where the unprotected sampler breaks (3,000 words, epsilon_dp = 8; attacker: probe-reset).",
        source=SOURCE,
        treatment=_arm("probe-reset vs Bernoulli", "sketch-probe-reset", defender="bernoulli", space=3000),
        control=_arm("probe-reset vs dp-tree", "sketch-probe-reset", defender="dp-tree", space=3000),
        measure=SUCCESS,
        direction="greater",
        unit="seed",
        min_effect=0.5,
        expected=HOLDS,
        test_units=SEEDS,
    ),
    *[
        Finding(
            id=f"sketch-dp-tree-error-below-epsilon-vs-{name}",
            family="sketch",
            claim=f"dp-tree keeps its prefix-max error below epsilon = 0.5 against the adaptive attacker "
            f"{name} (3,000 words, epsilon_dp = 8). Attacker set: {{{name}}}.",
            source=SOURCE,
            treatment=_arm(f"{name} vs dp-tree (error)", agent, defender="dp-tree", space=3000),
            control=0.5,
            measure=ERROR,
            direction="less",
            unit="seed",
            min_effect=0.1,
            expected=HOLDS,
            test_units=SEEDS,
        )
        for name, agent in ATTACKERS.items()
    ],
    Finding(
        id="sketch-linear-descent-breaks-linear-sketch",
        family="sketch",
        claim="(Background, Cohen et al. ICML 2022) a linear sketch with a median estimator falls to an adaptive "
        "attack with queries of the order of its size; an oblivious stream does not move it (256 rows, sum).",
        source="Cohen et al. (ICML 2022)",
        treatment=_arm("linear descent vs linear sketch", "sketch-linear-descent", defender="linear", statistic="sum", space=256,
                       update_budget=6000, query_budget=6000),
        control=_arm("oblivious random vs linear sketch", "sketch-oblivious-random", defender="linear", statistic="sum", space=256,
                     update_budget=6000, query_budget=6000),
        measure=SUCCESS,
        direction="greater",
        unit="seed",
        min_effect=0.5,
        expected=HOLDS,
        test_units=SEEDS,
    ),
]
