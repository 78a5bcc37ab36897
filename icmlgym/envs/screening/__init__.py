"""Screening family: bandit-guided screening of ultra-large virtual libraries (BOBA, ICML 2026).

Cards and agent names only; nothing heavy is imported here (RDKit loads when an env is made).
"""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

# optional extras this family needs (extra -> modules that must import) and the distributions
# whose versions every run records; tests/core/test_extras.py checks them against pyproject.toml
EXTRAS: dict[str, tuple[str, ...]] = {"chem": ("rdkit", "sklearn"), "dock": ("dockstring", "openbabel", "rdkit")}
PROVENANCE: tuple[str, ...] = ("rdkit", "scikit-learn", "dockstring")

PAPER = "BOBA: bandit-guided surrogate optimization for screening ultra-large libraries (ICML 2026)"

# Smoke: 120 amines x 250 acids = 30,000 amides of the embedded library, 2D similarity oracle,
# 100 rounds of 40 inferences and 4 evaluations. Standard: 400 x 500 = 200,000 amides.
# Full: the whole embedded library (3000 amines, 3000 acids, 300 aminobenzoic acids; amide and
# quinazolinone reactions: 2.7 x 10^9 compounds), no exact ground truth: it reports best-found
# and hits over the standard tier's top-100 threshold (hit_threshold, measured with
# `python benchmarks/screening_refs.py --threshold`).
SMOKE_LIBRARY = {"kind": "embedded", "n_amines": 120, "n_acids": 250, "reactions": ["amide"]}
STANDARD_LIBRARY = {"kind": "embedded", "n_amines": 400, "n_acids": 500, "reactions": ["amide"]}
FULL_LIBRARY = {"kind": "embedded", "n_amines": 3000, "n_acids": 3000, "n_aminobenzoic_acids": 300}
STANDARD_TOP100_THRESHOLD = 0.38  # raw Tanimoto to DEFAULT_QUERY, the 100th best of the standard library

SMOKE = {"library": SMOKE_LIBRARY, "inference_batch": 40, "eval_batch": 4, "eval_budget": 400}
STANDARD = {"library": STANDARD_LIBRARY, "inference_batch": 100, "eval_batch": 10, "eval_budget": 2000}
FULL = {
    "library": FULL_LIBRARY,
    "inference_batch": 200,
    "eval_batch": 10,
    "eval_budget": 5000,
    "hit_threshold": STANDARD_TOP100_THRESHOLD,
}

CARDS = [
    TaskCard(
        id="icmlgym/Screening-v0",
        family="screening",
        paper=PAPER,
        entry_point="icmlgym.envs.screening.screening_env:ScreeningEnv",
        kind="single",
        primary_metric="top_k_recall",
        direction="max",
        cost_units=("surrogate_inferences", "evaluations", "enumerations"),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs=SMOKE, train_steps=256, seeds=3),
            "standard": Tier(episodes=1, env_kwargs=STANDARD, train_steps=20_000, seeds=5),
            "full": Tier(episodes=1, env_kwargs=FULL, train_steps=50_000, seeds=5),
        },
        extra="chem",
        reference_agent="screening-boba",
        baselines=(
            "screening-boba-thompson",
            "screening-boba-ucb1",
            "screening-round-robin",
            "screening-epsilon-greedy",
            "random",
            "sb3-ppo",
        ),
        # mean top-100 recall over seeds 0-9 at smoke tier of `random` (0.094) and the reference
        # `screening-boba` (0.398), measured with `python benchmarks/screening_refs.py --quick`
        score_refs={"smoke": (0.094, 0.398)},
        suites=("screening",),
        description="pick a library partition per round; the env infers a batch with its surrogate and "
        "evaluates the top predicted compounds; recall of the true top-100",
    ),
    TaskCard(
        id="icmlgym/ScreeningCompounds-v0",
        family="screening",
        paper=PAPER,
        entry_point="icmlgym.envs.screening.screening_env:ScreeningCompoundsEnv",
        kind="single",
        primary_metric="top_k_recall",
        direction="max",
        cost_units=("surrogate_inferences", "evaluations", "enumerations"),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={k: v for k, v in SMOKE.items() if k != "inference_batch"}, seeds=3),
            "standard": Tier(episodes=1, env_kwargs={k: v for k, v in STANDARD.items() if k != "inference_batch"}, seeds=5),
            "full": Tier(
                episodes=1,
                env_kwargs={k: v for k, v in FULL.items() if k != "inference_batch"},
                seeds=5,
            ),
        },
        extra="chem",
        reference_agent="screening-full-greedy",
        baselines=("screening-reagent-thompson", "screening-random-compounds"),
        # mean top-100 recall over seeds 0-9 at smoke tier of `screening-random-compounds` (0.012) and
        # `screening-full-greedy` (1.0), measured with `python benchmarks/screening_refs.py`
        score_refs={"smoke": (0.012, 1.0)},
        suites=("screening",),
        description="compound-level access to the same library, oracle and meters: evaluate a compound "
        "(reagent Thompson sampling) or run a full-library inference round (MolPAL-style greedy)",
    ),
]

AGENTS = {
    "screening-boba": AgentInfo(
        "icmlgym.agents.screening:BOBAAgent",
        extra="chem",
        description="BOBA: Bayesian UCB over library partitions (empirical-Bayes Gaussian prior, no initial sweep)",
    ),
    "screening-boba-thompson": AgentInfo(
        "icmlgym.agents.screening:BOBAThompsonAgent",
        extra="chem",
        description="BOBA with Gaussian Thompson sampling over partitions",
    ),
    "screening-boba-ucb1": AgentInfo(
        "icmlgym.agents.screening:BOBAUCB1Agent",
        extra="chem",
        description="BOBA with UCB1 over partitions (sweeps every arm first)",
    ),
    "screening-round-robin": AgentInfo(
        "icmlgym.baselines.screening:RoundRobinAgent",
        extra="chem",
        description="uniform allocation over partitions (round robin)",
    ),
    "screening-epsilon-greedy": AgentInfo(
        "icmlgym.baselines.screening:PartitionEpsilonGreedyAgent",
        extra="chem",
        description="epsilon-greedy over partitions, no initial sweep",
    ),
    "screening-reagent-thompson": AgentInfo(
        "icmlgym.baselines.screening:ReagentThompsonAgent",
        extra="chem",
        description="Thompson sampling over reagents (Klarich et al., JCIM 2024) on ScreeningCompounds-v0",
    ),
    "screening-random-compounds": AgentInfo(
        "icmlgym.baselines.screening:RandomCompoundAgent",
        extra="chem",
        description="uniformly random compounds (compound-level random baseline, ScreeningCompounds-v0)",
    ),
    "screening-full-greedy": AgentInfo(
        "icmlgym.baselines.screening:FullLibraryGreedyAgent",
        extra="chem",
        description="MolPAL-style greedy with full-library surrogate inference each round (ScreeningCompounds-v0)",
    ),
}

# The partition axis is an env argument: these suites run the same agents along each axis
# (`icmlgym benchmark --suite screening-partitions`) to compare meaningful and random partitions.
SUITES = {
    "screening-partitions": [
        ("icmlgym/Screening-v0", {"partition": "reagent:amines"}),
        ("icmlgym/Screening-v0", {"partition": "reagent:acids"}),
        ("icmlgym/Screening-v0", {"partition": "cluster:20:amines"}),
        ("icmlgym/Screening-v0", {"partition": "random"}),
    ],
}
