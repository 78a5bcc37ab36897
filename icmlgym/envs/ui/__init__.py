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
            "smoke": Tier(episodes=1, train_steps=240, seeds=3,
                          env_kwargs={"task": "polishing", "rounds": 8, "group_size": 4, "evaluator": "noisy"}),
            "standard": Tier(episodes=3, train_steps=3000, seeds=5,
                             env_kwargs={"task": "polishing", "rounds": 12, "group_size": 4, "evaluator": "noisy"}),
            "full": Tier(episodes=5, train_steps=20000, seeds=10,
                         env_kwargs={"task": "polishing", "rounds": 16, "group_size": 8, "evaluator": "noisy",
                                     "width": 256, "height": 192}),
        },
        extra=None,
        reference_agent="ui-rvpo",
        baselines=("random", "ui-absolute", "ui-greedy", "ui-random-edits"),
        # means over seeds 0-9 at the smoke tier of `random` and `ui-rvpo`, measured with
        # `python benchmarks/ui_refs.py --seeds 10` (the polishing start page scores about 0.95:
        # the span between them is small, so normalised scores are noisy)
        score_refs={"smoke": (0.9482, 0.9512)},
        suites=("ui",),
        description="refine a page of a layout language towards a target screenshot; reward = change in a Design2Code-style score + SSIM",
    ),
]

AGENTS = {
    "ui-rvpo": AgentInfo(
        "icmlgym.agents.ui:RVPOAgent",
        description="RVPO: a log-linear edit policy trained from rankings of G rendered candidates (group-relative advantages)",
    ),
    "ui-absolute": AgentInfo(
        "icmlgym.baselines.ui:AbsoluteRewardAgent",
        description="the same policy trained on the evaluator's absolute scores (judged gain over the edited page, running scale)",
    ),
    "ui-greedy": AgentInfo(
        "icmlgym.baselines.ui:GreedyHillClimbAgent",
        description="greedy hill climbing with the evaluator: keep-current plus applicable edits, the best judged wins",
    ),
    "ui-random-edits": AgentInfo(
        "icmlgym.baselines.ui:RandomEditAgent",
        description="uniformly random edits on existing blocks (applicable ops only)",
    ),
    "ui-single-pass": AgentInfo(
        "icmlgym.baselines.ui:SinglePassAgent",
        description="one-shot predictor: segments the target screenshot into a page and submits it as HTML once (action_mode='html')",
    ),
    "ui-iterative": AgentInfo(
        "icmlgym.agents.ui:IterativeRefineAgent",
        description="UI2Code^N loop in HTML mode: the single-pass draft, then render-guided edits kept when the evaluator says they help",
    ),
    "ui-vlm": AgentInfo(
        "icmlgym.agents.ui:VLMAgent",
        description="a vision-language model behind an OpenAI-compatible endpoint writes the page as HTML (action_mode='html')",
    ),
}
