"""Bandit-v0: a K-armed Bernoulli bandit, the smallest worked example of the conventions."""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

# optional extras this family needs (extra -> modules that must import) and the distributions
# whose versions every run records; tests/core/test_extras.py checks them against pyproject.toml
EXTRAS: dict[str, tuple[str, ...]] = {}
PROVENANCE: tuple[str, ...] = ()

CARDS = [
    TaskCard(
        id="icmlgym/Bandit-v0",
        family="bandit",
        paper="(worked example) Auer, Cesa-Bianchi & Fischer 2002, Finite-time analysis of the multiarmed bandit problem",
        entry_point="icmlgym.envs.bandit.bernoulli_bandit:BernoulliBanditEnv",
        # N seeds in one array (the runner's batched mode): gym.make_vec(..., vectorization_mode="vector_entry_point")
        vector_entry_point="icmlgym.envs.bandit.vector:BernoulliBanditVectorEnv",
        kind="single",
        primary_metric="pseudo_regret",
        direction="min",
        cost_units=("env_steps",),
        tiers={
            "smoke": Tier(episodes=2, env_kwargs={"horizon": 1000}, train_steps=2000, seeds=3),
            "standard": Tier(episodes=5, env_kwargs={"horizon": 10_000}, train_steps=20_000, seeds=5),
            "full": Tier(episodes=10, env_kwargs={"horizon": 100_000}, train_steps=200_000, seeds=10),
        },
        reference_agent="bandit-thompson",
        baselines=("ucb1", "epsilon-greedy", "random"),
        # random: horizon x mean gap of the default instance (exact expectation);
        # reference: Thompson sampling, mean over seeds 0-19 (smoke) / 0-9 (standard) of
        # `icmlgym.run("icmlgym/Bandit-v0", "bandit-thompson", seeds=20, tier=...)` (re-measured when the
        # agent's Beta samples moved to blocks, icmlgym.baselines.draws: was 33.93 / 67.05)
        score_refs={"smoke": (346.106, 34.25), "standard": (3461.06, 69.80)},
        suites=("smoke", "bandits"),
        description="10-armed Bernoulli bandit, cumulative pseudo-regret",
    )
]

AGENTS = {
    "bandit-thompson": AgentInfo(
        "icmlgym.baselines.bandit:BernoulliThompsonAgent",
        description="Thompson sampling with Beta(1, 1) priors (Bernoulli rewards)",
    ),
}
