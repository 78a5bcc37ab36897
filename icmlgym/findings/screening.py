"""BOBA's findings (Screening-v0 / ScreeningCompounds-v0): bandits over meaningful library partitions.

Comparators are fair: uniform allocation visits the arms in a random order per seed (each arm
equally often in expectation), the no-partition uniform draws compounds uniformly from the
whole library (one arm: ``partition="random:1"``) with the same inference budget, and UCB1's
initial sweep runs in a random order. The unit is the run seed (it seeds the env's draws and
the agent); library, oracle and budgets come from the tier.
"""

from __future__ import annotations

from icmlgym.findings.claims import HOLDS, Arm, Finding, Mean

S = "icmlgym/Screening-v0"
C = "icmlgym/ScreeningCompounds-v0"
SOURCE = "BOBA (ICML 2026): bandit optimisation over building-block partitions for virtual screening"
RECALL = Mean("top_k_recall")
TEST_SEEDS = tuple(range(10))

BOBA = Arm("BOBA (Bayesian UCB, reagent arms)", S, "screening-boba")
UNIFORM = Arm("uniform (reagent arms, shuffled order)", S, "screening-round-robin")
NO_PARTITION = Arm("uniform draws from the whole library", S, "screening-round-robin", env_kwargs={"partition": "random:1"})
BOBA_RANDOM = Arm("BOBA on random partitions (same arm count)", S, "screening-boba", env_kwargs={"partition": "random"})
UCB1 = Arm("UCB1 (random sweep order)", S, "screening-boba-ucb1")

FINDINGS = [
    Finding(
        id="screening-ucb-beats-uniform",
        family="screening",
        claim="Optimism-under-uncertainty bandits are essential: UCB over reagent partitions recovers more of the "
        "top compounds than uniform allocation over the same partitions at equal inference cost.",
        source=SOURCE,
        treatment=BOBA,
        control=UNIFORM,
        measure=RECALL,
        direction="greater",
        unit="seed",
        min_effect=0.05,
        expected=HOLDS,
        test_units=TEST_SEEDS,
    ),
    Finding(
        id="screening-partitions-beat-no-partition",
        family="screening",
        claim="Partitioning the library is essential: a bandit over reagent partitions beats drawing "
        "compounds uniformly from the whole library at the same inference budget.",
        source=SOURCE,
        treatment=BOBA,
        control=NO_PARTITION,
        measure=RECALL,
        direction="greater",
        unit="seed",
        min_effect=0.05,
        expected=HOLDS,
        test_units=TEST_SEEDS,
    ),
    Finding(
        id="screening-meaningful-beats-random-partitions",
        family="screening",
        claim="Meaningful partitioning is essential: the same bandit over random partitions of equal count recovers less.",
        source=SOURCE,
        treatment=BOBA,
        control=BOBA_RANDOM,
        measure=RECALL,
        direction="greater",
        unit="seed",
        min_effect=0.05,
        expected=HOLDS,
        test_units=TEST_SEEDS,
    ),
    Finding(
        id="screening-recall-rises-with-inference",
        family="screening",
        claim="A tunable trade-off between screening performance and inference cost: more surrogate "
        "inferences per round (120 vs 40, evaluations fixed) recover more.",
        source=SOURCE,
        treatment=Arm("BOBA, 120 inferences per round", S, "screening-boba", env_kwargs={"inference_batch": 120}),
        control=Arm("BOBA, 40 inferences per round", S, "screening-boba", env_kwargs={"inference_batch": 40}),
        measure=RECALL,
        direction="greater",
        unit="seed",
        min_effect=0.05,
        expected=HOLDS,
        test_units=TEST_SEEDS,
    ),
    Finding(
        id="screening-full-library-highest-recall",
        family="screening",
        claim="Full-library inference each round (MolPAL) reaches the highest recall, at the highest inference cost.",
        source=SOURCE,
        treatment=Arm("full-library greedy", C, "screening-full-greedy"),
        control=BOBA,
        measure=RECALL,
        direction="greater",
        unit="seed",
        min_effect=0.05,
        expected=HOLDS,
        test_units=TEST_SEEDS,
    ),
    Finding(
        id="screening-prior-optimism-beats-ucb1",
        family="screening",
        claim="(Design note, not the paper's) With 120 arms and 100 rounds UCB1's initial sweep eats the "
        "budget; optimism from an empirical-Bayes prior (Bayesian UCB) avoids it.",
        source="DESIGN.md",
        treatment=BOBA,
        control=UCB1,
        measure=RECALL,
        direction="greater",
        unit="seed",
        min_effect=0.05,
        expected=HOLDS,
        test_units=TEST_SEEDS,
    ),
    Finding(
        id="screening-thompson-beats-ucb1",
        family="screening",
        claim="(Design note, not the paper's) Thompson sampling from the same posterior also avoids the sweep.",
        source="DESIGN.md",
        treatment=Arm("BOBA Thompson", S, "screening-boba-thompson"),
        control=UCB1,
        measure=RECALL,
        direction="greater",
        unit="seed",
        min_effect=0.05,
        expected=HOLDS,
        test_units=TEST_SEEDS,
    ),
]
