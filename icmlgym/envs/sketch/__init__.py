"""Sketches of resettable streams under adaptive attack (Cohen, Gribelyuk, Nelson & Stemmer, ICML 2026).

One env, ``icmlgym/SketchAttack-v0``, whose defender is a kwarg. Two
leaderboard tracks through the ordinary leaderboard:

- attackers, ranked by success rate against each defender: one suite per
  defender, ``sketch-vs-<defender>`` (the env with ``defender=<name>``);
- defenders, ranked by their worst error over every registered attacker at
  matched space: :func:`icmlgym.envs.sketch.tracks.defender_table` over the
  leaderboard's episodes (suite ``sketch-defenders`` runs them all).
"""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

# optional extras this family needs (extra -> modules that must import) and the distributions
# whose versions every run records; tests/core/test_extras.py checks them against pyproject.toml
EXTRAS: dict[str, tuple[str, ...]] = {"sketch": ("datasketches",)}
PROVENANCE: tuple[str, ...] = ("datasketches",)

ENV_ID = "icmlgym/SketchAttack-v0"

# defender -> the env kwargs of its track (the linear sketch does not estimate cardinality)
DEFENDER_TRACKS: dict[str, dict] = {
    "exact": {"defender": "exact"},
    "bernoulli": {"defender": "bernoulli"},
    "bottomk": {"defender": "bottomk"},
    "sample-hold": {"defender": "sample-hold"},
    "switching": {"defender": "switching"},
    "dp-median": {"defender": "dp-median"},
    "dp-tree": {"defender": "dp-tree"},
    "theta": {"defender": "theta"},
    "linear": {"defender": "linear", "statistic": "sum"},
}

ATTACKERS: tuple[str, ...] = (
    "sketch-probe-reset",
    "sketch-probe-average",
    "sketch-probe-refresh",
    "sketch-linear-descent",
    "sketch-oblivious-random",
    "sketch-oblivious-worst",
    "random",
)

CARDS = [
    TaskCard(
        id=ENV_ID,
        family="sketch",
        paper="Cohen, Gribelyuk, Nelson & Stemmer, Adaptively robust sketches for resettable streams (ICML 2026, arXiv 2601.21989)",
        entry_point="icmlgym.envs.sketch.attack_env:SketchAttackEnv",
        # N seeds in arrays (the runner's batched mode, episodes ending apart): gym.make_vec(..., vectorization_mode="vector_entry_point")
        vector_entry_point="icmlgym.envs.sketch.vector:SketchAttackVectorEnv",
        kind="single",
        primary_metric="success",
        direction="max",
        cost_units=("updates", "queries"),
        tiers={
            # smoke = the env's defaults (3000 keys, updates and queries; 3000 words)
            "smoke": Tier(episodes=2, env_kwargs={}, seeds=3),
            "standard": Tier(episodes=5, env_kwargs={"n_keys": 10_000, "space": 6000, "update_budget": 10_000, "query_budget": 10_000}, seeds=5),
            "full": Tier(episodes=10, env_kwargs={"n_keys": 50_000, "space": 20_000, "update_budget": 50_000, "query_budget": 50_000}, seeds=10),
        },
        extra="sketch",
        reference_agent="sketch-probe-reset",
        baselines=tuple(a for a in ATTACKERS if a != "sketch-probe-reset"),
        # success rate against the default defender (bernoulli), smoke tier, seeds 0..9 x 2 episodes,
        # measured with `python benchmarks/sketch_refs.py`: random (and both oblivious streams) 0.000,
        # reference (sketch-probe-reset) 1.000.
        score_refs={"smoke": (0.0, 1.0)},
        suites=("smoke",),
        description="adaptive attacks on sketches of resettable streams; defender chosen by kwarg",
        default_kwargs={},
    )
]

SUITES = {f"sketch-vs-{name}": [(ENV_ID, kwargs)] for name, kwargs in DEFENDER_TRACKS.items()}
SUITES["sketch-defenders"] = [(ENV_ID, kwargs) for kwargs in DEFENDER_TRACKS.values()]

AGENTS = {
    "sketch-probe-reset": AgentInfo(
        "icmlgym.agents.sketch:ProbeResetAttack",
        description="adaptive probe-and-reset: insert a key, query, reset it if the answer rose more than the truth, keep it otherwise",
    ),
    "sketch-probe-average": AgentInfo(
        "icmlgym.agents.sketch:ProbeAverageAttack",
        description="probe-and-reset reading each answer as the mean of 5 queries (defeats per-query noise)",
    ),
    "sketch-probe-refresh": AgentInfo(
        "icmlgym.agents.sketch:ProbeRefreshAttack",
        description="probe-and-reset that knows the Binary Tree Mechanism: spends updates (resets of an unused key) to re-draw the tree's noise and averages the readings",
    ),
    "sketch-linear-descent": AgentInfo(
        "icmlgym.agents.sketch:LinearDescentAttack",
        description="attack on linear (CountSketch-style) median estimators: keep and re-add keys the estimate under-counts",
    ),
    "sketch-oblivious-random": AgentInfo(
        "icmlgym.baselines.sketch:ObliviousRandomStream",
        description="oblivious random stream: random increments and resets, queries spread evenly",
    ),
    "sketch-oblivious-worst": AgentInfo(
        "icmlgym.baselines.sketch:ObliviousWorstCaseStream",
        description="fixed worst-case oblivious stream: sliding-window churn, a heavy key for sum/lp",
    ),
}
