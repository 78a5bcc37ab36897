"""Games family: N-player games under no-regret learning — preference graphs vs FTRL.

Paper: "What preferences can — and cannot — predict in multi-agent online
learning" (ICML 2026). Envs: ``icmlgym/RepeatedGame-v0`` (PettingZoo Parallel),
``icmlgym/RepeatedGameVsFTRL-v0`` (one learner against FTRL opponents) and
``icmlgym/StabilityPrediction-v0`` (predict from the preference graph where FTRL
play ends up; the leaderboard scores prediction accuracy). Library code:
``normal_form`` (games and generators), ``preference_graph``, ``dynamics``,
``metrics``, ``stability``, ``basins``, ``counterexample``. See docs/games.md.
"""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

# optional extras this family needs (extra -> modules that must import) and the distributions
# whose versions every run records; tests/core/test_extras.py checks them against pyproject.toml
EXTRAS: dict[str, tuple[str, ...]] = {"games": ("networkx",)}
PROVENANCE: tuple[str, ...] = ("networkx",)

PAPER = "What preferences can — and cannot — predict in multi-agent online learning (ICML 2026)"

CARDS = [
    TaskCard(
        id="icmlgym/RepeatedGame-v0",
        family="games",
        paper=PAPER,
        entry_point="icmlgym.envs.games.repeated_game:RepeatedGameEnv",
        # N seeds' rounds as (N, players, actions) arrays (the runner's batched mode; full information)
        vector_entry_point="icmlgym.envs.games.repeated_vector:RepeatedGameVectorEnv",
        kind="multi",
        primary_metric="external_regret",
        direction="min",
        cost_units=("rounds",),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"n_players": 3, "n_actions": 3, "horizon": 300}, seeds=3),
            "standard": Tier(episodes=3, env_kwargs={"n_players": 3, "n_actions": 5, "horizon": 5000}, seeds=5),
            "full": Tier(episodes=5, env_kwargs={"n_players": 3, "n_actions": 10, "horizon": 20_000}, seeds=10),
        },
        extra="games",
        reference_agent="games-hedge",
        baselines=(
            "games-ftrl-euclidean",
            "games-optimistic-ftrl",
            "games-fictitious-play",
            "games-best-response",
            "games-regret-matching",
            "random",
        ),
        # (random, games-hedge) means over seeds 0, 1, 2 at smoke tier, measured with
        # `python benchmarks/games_refs.py --seeds 0 1 2`
        score_refs={"smoke": (0.0814, 0.0322)},
        suites=("games",),
        description="N players repeat a normal-form game (full information or bandit feedback); regret, CCE distance, sink absorption",
    ),
    TaskCard(
        id="icmlgym/RepeatedGameVsFTRL-v0",
        family="games",
        paper=PAPER,
        entry_point="icmlgym.envs.games.vs_ftrl:RepeatedGameVsFTRLEnv",
        # N seeds in one array (the runner's batched mode): gym.make_vec(..., vectorization_mode="vector_entry_point")
        vector_entry_point="icmlgym.envs.games.vs_ftrl_vector:RepeatedGameVsFTRLVectorEnv",
        kind="single",
        primary_metric="learner_regret",
        direction="min",
        cost_units=("env_steps", "opponent_updates"),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"horizon": 500}, train_steps=1000, seeds=3),
            "standard": Tier(episodes=3, env_kwargs={"horizon": 5000}, train_steps=50_000, seeds=5),
            "full": Tier(episodes=5, env_kwargs={"horizon": 20_000}, train_steps=200_000, seeds=10),
        },
        extra="games",
        reference_agent="games-exp3",
        baselines=("ucb1", "epsilon-greedy", "random"),
        # (random, games-exp3) means over seeds 0, 1, 2: `python benchmarks/games_refs.py --seeds 0 1 2`
        score_refs={"smoke": (0.1788, 0.0753)},
        suites=("games",),
        description="one bandit learner against Hedge opponents in a random 3x3 game; learner's external regret",
    ),
    TaskCard(
        id="icmlgym/StabilityPrediction-v0",
        family="games",
        paper=PAPER,
        entry_point="icmlgym.envs.games.stability_prediction:StabilityPredictionEnv",
        # N seeds' basin experiments as one stacked FTRL run (the runner's batched mode)
        vector_entry_point="icmlgym.envs.games.stability_vector:StabilityPredictionVectorEnv",
        kind="single",
        primary_metric="prediction_accuracy",
        direction="max",
        cost_units=("games", "dynamics_rounds"),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"n_games": 6, "n_inits": 24, "rounds": 1000}, seeds=3),
            "standard": Tier(episodes=2, env_kwargs={"n_games": 50, "n_inits": 64, "rounds": 3000}, seeds=5),
            "full": Tier(episodes=5, env_kwargs={"n_games": 200, "n_inits": 128, "rounds": 5000}, seeds=10),
        },
        extra="games",
        reference_agent="games-sink-predictor",
        baselines=("games-nash-predictor", "random"),
        # (random, games-sink-predictor) means over seeds 0, 1, 2: `python benchmarks/games_refs.py --seeds 0 1 2`
        score_refs={"smoke": (0.4815, 0.8333)},
        suites=("games", "games-basins"),
        description="predict from the preference graph which profiles FTRL play ends up on; accuracy against basin experiments",
    ),
]

# the basin suite: the same prediction task over the game classes of the paper
SUITES = {
    "games-basins": [
        ("icmlgym/StabilityPrediction-v0", {"game": "random", "n_players": 2, "n_actions": 3}),
        ("icmlgym/StabilityPrediction-v0", {"game": "random", "n_players": 3, "n_actions": 2}),
        ("icmlgym/StabilityPrediction-v0", {"game": "covariant", "rho": -0.5, "n_players": 3, "n_actions": 2}),
        ("icmlgym/StabilityPrediction-v0", {"game": "covariant", "rho": -0.9, "n_players": 2, "n_actions": 3}),
        ("icmlgym/StabilityPrediction-v0", {"game": "potential", "n_players": 3, "n_actions": 2}),
        ("icmlgym/StabilityPrediction-v0", {"game": "zero_sum", "n_players": 2, "n_actions": 3}),
        ("icmlgym/StabilityPrediction-v0", {"game": "coordination", "n_players": 2, "n_actions": 3}),
    ],
}

AGENTS = {
    "games-hedge": AgentInfo(
        "icmlgym.agents.games:FTRLAgent",
        extra="games",
        description="FTRL with the entropic regularizer: Hedge with full information, EXP3-style with bandit feedback",
    ),
    "games-ftrl-euclidean": AgentInfo(
        "icmlgym.agents.games:FTRLAgent",
        extra="games",
        description="FTRL with the Euclidean regularizer (projection onto the simplex)",
        kwargs={"regularizer": "euclidean"},
    ),
    "games-exp3": AgentInfo(
        "icmlgym.agents.games:Exp3Agent",
        extra="games",
        description="EXP3: bandit FTRL with the entropic regularizer and importance-weighted payoff estimates",
    ),
    "games-sink-predictor": AgentInfo(
        "icmlgym.agents.games:SinkPredictorAgent",
        extra="games",
        description="labels the profiles of the preference graph's sink components (StabilityPrediction-v0)",
    ),
    "games-optimistic-ftrl": AgentInfo(
        "icmlgym.baselines.games:OptimisticFTRLAgent", extra="games", description="optimistic Hedge (full information)"
    ),
    "games-fictitious-play": AgentInfo(
        "icmlgym.baselines.games:FictitiousPlayAgent",
        extra="games",
        description="fictitious play: best response to the average payoff vector (full information)",
    ),
    "games-best-response": AgentInfo(
        "icmlgym.baselines.games:BestResponseAgent",
        extra="games",
        description="best-response dynamics: best response to the last payoff vector (full information)",
    ),
    "games-regret-matching": AgentInfo(
        "icmlgym.baselines.games:RegretMatchingAgent",
        extra="games",
        description="regret matching (Hart & Mas-Colell 2000, full information)",
    ),
    "games-nash-predictor": AgentInfo(
        "icmlgym.baselines.games:StrictNashPredictorAgent",
        extra="games",
        description="labels only profiles without outgoing arrows (pure strict Nash equilibria)",
    ),
}
