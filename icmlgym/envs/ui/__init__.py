"""UI-to-code as iterative visual optimisation (issue 25).

"UI2Code^N" (ICML 2026): UI-to-code in a closed loop of rendering, visual inspection and
refinement, trained with RVPO (Relative Visual Policy Optimization) from rankings of
rendered candidates. Env: ``icmlgym/UIRefine-v0``. The fast numpy renderer needs nothing
beyond the core install; the Chromium renderer needs the ``[ui]`` extra (Playwright) and
Debian's Chromium. Nothing heavy is imported here.
"""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

EXTRAS: dict[str, tuple[str, ...]] = {"ui": ("playwright", "PIL")}
PROVENANCE: tuple[str, ...] = ("playwright", "pillow")

PAPER = "UI2Code^N: iterative UI-to-code with Relative Visual Policy Optimization (ICML 2026)"

CARDS = [
    TaskCard(
        id="icmlgym/UIRefine-v0",
        family="ui",
        paper=PAPER,
        entry_point="icmlgym.envs.ui.ui_refine:UIRefineEnv",
        kind="single",
        primary_metric="score",
        direction="max",
        cost_units=("renders", "evaluator_calls", "invalid_actions", "env_steps"),
        tiers={
            "smoke": Tier(episodes=1, train_steps=600, seeds=3,
                          env_kwargs={"task": "polishing", "rounds": 8, "group_size": 4, "evaluator": "noisy"}),
            "standard": Tier(episodes=3, train_steps=3000, seeds=5,
                             env_kwargs={"task": "polishing", "rounds": 12, "group_size": 4, "evaluator": "noisy"}),
            "full": Tier(episodes=5, train_steps=20000, seeds=10,
                         env_kwargs={"task": "polishing", "rounds": 16, "group_size": 8, "evaluator": "noisy",
                                     "width": 256, "height": 192}),
        },
        extra=None,
        reference_agent=None,
        baselines=("random",),
        score_refs={},
        suites=("ui",),
        description="refine a page of a layout language towards a target screenshot; reward = change in a Design2Code-style score + SSIM",
    ),
]

AGENTS: dict[str, AgentInfo] = {}
