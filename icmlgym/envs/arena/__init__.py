"""Choice arenas: what moves a vision-language model's decisions (issue 9).

"Visual persuasion: what influences decisions of vision-language models?" (ICML 2026,
arXiv 2602.15278). Envs: ``icmlgym/ChoiceArena-v0`` (an optimiser edits a product
photo to be chosen more often) and ``icmlgym/ChoiceMarket-v0`` (sellers edit their
products on a shared grid). Nothing heavy is imported here.
"""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

# optional extras this family needs (extra -> modules that must import) and the distributions
# whose versions every run records; tests/core/test_extras.py checks them against pyproject.toml
EXTRAS: dict[str, tuple[str, ...]] = {"arena": ("PIL", "choix", "skimage")}
PROVENANCE: tuple[str, ...] = ("pillow", "choix", "scikit-image")

PAPER = "Visual persuasion: what influences decisions of vision-language models? (ICML 2026, arXiv 2602.15278)"

CARDS = [
    TaskCard(
        id="icmlgym/ChoiceArena-v0",
        family="arena",
        paper=PAPER,
        entry_point="icmlgym.envs.arena.choice_arena:ChoiceArenaEnv",
        kind="single",
        primary_metric="objective",
        direction="max",
        cost_units=("queries", "eval_queries", "chooser_errors", "edits", "env_steps"),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"image_size": 64, "edit_budget": 20, "queries_per_step": 24}, seeds=3),
            "standard": Tier(episodes=3, env_kwargs={"image_size": 96, "edit_budget": 24, "queries_per_step": 48}, seeds=5),
            "full": Tier(episodes=5, env_kwargs={"image_size": 224, "edit_budget": 40, "queries_per_step": 96}, seeds=10),
        },
        extra="arena",
        reference_agent="arena-vpo",
        baselines=("arena-no-edit", "random", "arena-greedy", "arena-cem", "arena-ucb"),
        # means over seeds 0-9 at the smoke tier of `random` and `arena-vpo`, measured with
        # `python benchmarks/arena_refs.py --seeds 10`
        score_refs={"smoke": (-0.354, 0.220)},
        suites=("arena",),
        description="edit a product photo to raise its head-to-head win rate with a VLM-like chooser (SSIM-penalised)",
    ),
    TaskCard(
        id="icmlgym/ChoiceMarket-v0",
        family="arena",
        paper=PAPER,
        entry_point="icmlgym.envs.arena.choice_market:ChoiceMarketEnv",
        kind="multi",
        primary_metric="mean_objective",
        direction="max",
        cost_units=("queries", "chooser_errors", "env_steps"),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"n_sellers": 4, "rounds": 8, "queries_per_round": 32}, seeds=3),
            "standard": Tier(episodes=3, env_kwargs={"n_sellers": 4, "rounds": 20, "queries_per_round": 64, "image_size": 96}, seeds=5),
            "full": Tier(episodes=5, env_kwargs={"n_sellers": 6, "rounds": 40, "queries_per_round": 128, "image_size": 224}, seeds=10),
        },
        extra="arena",
        reference_agent="arena-vpo",
        baselines=("arena-no-edit", "random", "arena-greedy", "arena-cem", "arena-ucb"),
        # means over seeds 0-9 at the smoke tier of `random` and `arena-vpo` (every seller runs
        # the same agent), measured with `python benchmarks/arena_refs.py --seeds 10`
        score_refs={"smoke": (-0.223, 0.070)},
        suites=("arena",),
        description="sellers edit their product photos on a shared grid; reward = share of a VLM-like shopper's choices",
    ),
]

AGENTS = {
    "arena-vpo": AgentInfo(
        "icmlgym.agents.arena:VisualPromptOptimizer",
        extra="arena",
        description="visual prompt optimization: propose edits with a Thompson bandit over edit types, keep what wins",
    ),
    "arena-no-edit": AgentInfo(
        "icmlgym.baselines.arena:NoEditAgent", extra="arena", description="never edits (magnitude 0)"
    ),
    "arena-greedy": AgentInfo(
        "icmlgym.baselines.arena:GreedyCoordinateAgent",
        extra="arena",
        description="greedy coordinate search: try +/- steps on each edit type in turn, keep improvements",
    ),
    "arena-cem": AgentInfo(
        "icmlgym.baselines.arena:CrossEntropyAgent",
        extra="arena",
        description="cross-entropy method over (edit type, magnitude) proposals, keep improvements",
    ),
    "arena-ucb": AgentInfo(
        "icmlgym.baselines.arena:UCBEditAgent",
        extra="arena",
        description="UCB1 over a grid of discrete edits (type x magnitude), keep improvements",
    ),
}
