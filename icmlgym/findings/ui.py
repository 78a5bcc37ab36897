"""UI2Code^N's findings (UIRefine-v0): iterative refinement and relative (ranking) rewards.

The unit is the run seed (it draws the target page, the start page, the evaluator's noise and
the agent's seed). Comparators spend what the claim fixes: the single pass and the iterative
loop see the same target in HTML mode; RVPO and absolute-reward training run the same policy,
the same update and the same training budget in renders (the smoke tier's ``train_steps``),
and act in the same env (``group_size`` candidates per round, the same noisy evaluator).
"""

from __future__ import annotations

from icmlgym.findings.claims import DOES_NOT_HOLD, HOLDS, NOT_AT_SCALE, Arm, Finding, Mean

ENV = "icmlgym/UIRefine-v0"
SOURCE = "UI2Code^N (ICML 2026): iterative UI-to-code with Relative Visual Policy Optimization"
SCORE = Mean("score")
TEST_SEEDS = tuple(range(10))
DRAFT = {"task": "drafting", "action_mode": "html", "group_size": 1, "evaluator": "exact"}

FINDINGS = [
    Finding(
        id="ui-iterative-beats-single-pass",
        family="ui",
        claim="Iterative refinement from rendered feedback beats single-pass UI-to-code generation.",
        source=SOURCE,
        treatment=Arm("draft + 15 rounds of render-guided refinement", ENV, "ui-iterative", env_kwargs={**DRAFT, "rounds": 16}),
        control=Arm("single pass (the same one-shot draft)", ENV, "ui-single-pass", env_kwargs={**DRAFT, "rounds": 16}),
        measure=SCORE,
        direction="greater",
        unit="seed",
        min_effect=0.005,
        expected=HOLDS,
        test_units=TEST_SEEDS,
    ),
    Finding(
        id="ui-score-rises-with-rounds",
        family="ui",
        claim="The score keeps rising with more refinement rounds (16 rounds against 4).",
        source=SOURCE,
        treatment=Arm("iterative, 16 rounds", ENV, "ui-iterative", env_kwargs={**DRAFT, "rounds": 16}),
        control=Arm("iterative, 4 rounds", ENV, "ui-iterative", env_kwargs={**DRAFT, "rounds": 4}),
        measure=SCORE,
        direction="greater",
        unit="seed",
        min_effect=0.0,
        expected=HOLDS,
        test_units=TEST_SEEDS,
        note="the loop keeps the best page under an exact evaluator, so the score cannot fall with rounds: "
        "the claim tested is that it still rises",
    ),
    Finding(
        id="ui-rvpo-beats-absolute-under-noise",
        family="ui",
        claim="Under a noisy absolute evaluator, a policy trained from rankings of rendered candidates (RVPO) "
        "reaches a higher true score than the same policy trained on absolute rewards, at equal renders.",
        source=SOURCE,
        treatment=Arm("RVPO (ranks of G=4 candidates)", ENV, "ui-rvpo"),
        control=Arm("absolute-reward training (same policy, same renders)", ENV, "ui-absolute"),
        measure=SCORE,
        direction="greater",
        unit="seed",
        min_effect=0.0,
        expected=NOT_AT_SCALE,
        test_units=TEST_SEEDS,
        note="part of any advantage is by construction: the round offset cancels in a ranking but not in "
        "a difference of absolute scores",
    ),
]

__all__ = ["DOES_NOT_HOLD", "FINDINGS"]
