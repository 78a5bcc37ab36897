"""Visual persuasion (VPO) findings on ChoiceArena-v0: optimised edits, judged by the optimised
chooser and, separately, by held-out judges with other tastes (icmlgym.envs.arena.judges).

The unit is the run seed (it draws the product category, the target and the competitors).
``win_rate_gain`` is the edited photo's exact win rate minus the original's under the chooser
the agent queried; ``heldout_win_rate_gain`` the same averaged over 8 held-out judges (feature
weights moved by noise of half the mean absolute weight, other decision noise and position
bias). The first is what the optimiser was paid for; the second is transfer.
"""

from __future__ import annotations

from icmlgym.findings.claims import HOLDS, NOT_AT_SCALE, Arm, Finding, Mean

A = "icmlgym/ChoiceArena-v0"
SOURCE = "Visual persuasion: what influences decisions of vision-language models? (ICML 2026, arXiv 2602.15278)"
SEEDS = tuple(range(10))
VPO = Arm("VPO", A, "arena-vpo")
RANDOM = Arm("random edits", A, "random")
GREEDY = Arm("greedy coordinate edits", A, "arena-greedy")
OPTIMISED = Mean("win_rate_gain")
HELDOUT = Mean("heldout_win_rate_gain")

FINDINGS = [
    Finding(
        id="arena-vpo-shifts-choice-optimised-chooser",
        family="arena",
        claim="Iteratively optimised edits shift head-to-head choice probabilities significantly "
        "(judged by the chooser the optimiser queried).",
        source=SOURCE,
        treatment=VPO,
        control=0.0,
        measure=OPTIMISED,
        direction="greater",
        unit="seed",
        min_effect=0.02,
        expected=HOLDS,
        test_units=SEEDS,
    ),
    Finding(
        id="arena-vpo-shifts-choice-heldout-judges",
        family="arena",
        claim="The optimised edits transfer: they also raise the win rate under held-out judges with other tastes.",
        source=SOURCE,
        treatment=VPO,
        control=0.0,
        measure=HELDOUT,
        direction="greater",
        unit="seed",
        min_effect=0.02,
        expected=HOLDS,
        test_units=SEEDS,
    ),
    Finding(
        id="arena-vpo-beats-random-edits-optimised-chooser",
        family="arena",
        claim="Optimised edits beat random edits of the same budget (optimised chooser).",
        source=SOURCE,
        treatment=VPO,
        control=RANDOM,
        measure=OPTIMISED,
        direction="greater",
        unit="seed",
        min_effect=0.02,
        expected=HOLDS,
        test_units=SEEDS,
    ),
    Finding(
        id="arena-vpo-beats-random-edits-heldout-judges",
        family="arena",
        claim="Optimised edits beat random edits of the same budget under held-out judges.",
        source=SOURCE,
        treatment=VPO,
        control=RANDOM,
        measure=HELDOUT,
        direction="greater",
        unit="seed",
        min_effect=0.02,
        expected=HOLDS,
        test_units=SEEDS,
    ),
    Finding(
        id="arena-vpo-vs-greedy-optimised-chooser",
        family="arena",
        claim="VPO's optimiser beats a greedy coordinate search over the same edits (optimised chooser).",
        source=SOURCE,
        treatment=VPO,
        control=GREEDY,
        measure=OPTIMISED,
        direction="greater",
        unit="seed",
        min_effect=0.02,
        expected=NOT_AT_SCALE,
        test_units=SEEDS,
    ),
    Finding(
        id="arena-vpo-vs-greedy-heldout-judges",
        family="arena",
        claim="VPO's optimiser beats a greedy coordinate search over the same edits (held-out judges).",
        source=SOURCE,
        treatment=VPO,
        control=GREEDY,
        measure=HELDOUT,
        direction="greater",
        unit="seed",
        min_effect=0.02,
        expected=NOT_AT_SCALE,
        test_units=SEEDS,
    ),
]
