"""Fair linear bandits: Nash and p-means regret (FairLinBandit, ICML 2026; LinNash, NeurIPS 2023)."""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

# optional extras this family needs (extra -> modules that must import) and the distributions
# whose versions every run records; tests/core/test_extras.py checks them against pyproject.toml
EXTRAS: dict[str, tuple[str, ...]] = {"fair": ("sklearn",)}
PROVENANCE: tuple[str, ...] = ("scikit-learn",)

CARDS = [
    TaskCard(
        id="icmlgym/FairLinearBandit-v0",
        family="fairbandit",
        paper="Sarkar, Pandey & Ray Chowdhury, Improved Algorithms for Nash Welfare in Linear Bandits (ICML 2026, arXiv 2601.22969)",
        entry_point="icmlgym.envs.fairbandit.fair_linear_bandit:FairLinearBanditEnv",
        kind="single",
        # gym.make_vec(..., vectorization_mode="vector_entry_point"): N seeds in one array (--batch-seeds)
        vector_entry_point="icmlgym.envs.fairbandit.vector:FairLinearBanditVectorEnv",
        primary_metric="nash_regret",
        direction="min",
        cost_units=("env_steps",),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"horizon": 5000, "n_arms": 100, "dim": 10}, seeds=3),
            "standard": Tier(episodes=1, env_kwargs={"horizon": 10_000, "n_arms": 100, "dim": 10}, seeds=5),
            "full": Tier(episodes=1, env_kwargs={"horizon": 10_000, "n_arms": 1000, "dim": 10}, seeds=10),
        },
        extra=None,  # the synthetic default needs numpy only; data instances call require_extra("fair")
        # both FairLinBandit variants are the paper's method; the UCB base is the stronger one here
        reference_agent="fairbandit-fairlin-ucb",
        baselines=(
            "fairbandit-fairlin-pe",
            "fairbandit-linnash",
            "fairbandit-linucb",
            "fairbandit-lints",
            "fairbandit-pe",
            "fairbandit-etc",
            "random",
        ),
        # mean nash_regret over seeds 0, 1, 2 at the smoke tier of `random` and of the reference
        # agent, measured with `python benchmarks/fairbandit_refs.py`
        score_refs={"smoke": (0.5324, 0.1368)},
        suites=("smoke", "bandits", "fairbandit"),
        description="finite-armed linear bandit (K x d arms, Gaussian/Bernoulli/clipped noise); Nash and p-means regret",
    )
]

AGENTS = {
    "fairbandit-fairlin-pe": AgentInfo(
        "icmlgym.agents.fairbandit:FairLinBanditPE",
        description="FairLinBandit with Phased Elimination as the base (arXiv 2601.22969)",
    ),
    "fairbandit-fairlin-ucb": AgentInfo(
        "icmlgym.agents.fairbandit:FairLinBanditUCB",
        description="FairLinBandit with LinUCB as the base (arXiv 2601.22969)",
    ),
    "fairbandit-linnash": AgentInfo(
        "icmlgym.baselines.fairbandit:LinNashAgent",
        description="LinNash (Sawarni, Pal & Barman 2023): John-ellipsoid/D-optimal exploration, then Nash-width phased elimination",
    ),
    "fairbandit-linucb": AgentInfo(
        "icmlgym.baselines.fairbandit:LinUCBAgent",
        description="LinUCB / OFUL with the self-normalised confidence radius (Abbasi-Yadkori et al. 2011)",
    ),
    "fairbandit-lints": AgentInfo(
        "icmlgym.baselines.fairbandit:LinTSAgent",
        description="linear Thompson sampling (Agrawal & Goyal 2013), Gaussian posterior",
    ),
    "fairbandit-pe": AgentInfo(
        "icmlgym.baselines.fairbandit:PhasedEliminationAgent",
        description="phased elimination with G-optimal designs (Lattimore & Szepesvari 2020, ch. 22)",
    ),
    "fairbandit-etc": AgentInfo(
        "icmlgym.baselines.fairbandit:ExploreThenCommitAgent",
        description="explore-then-commit: G-optimal exploration for d^(1/3) T^(2/3) rounds, then the greedy arm",
    ),
}
