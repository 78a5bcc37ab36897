"""Efficient reasoning: early exit from a chain of thought (SpecExit) and speculative reasoning (DREAM-R).

``icmlgym/EarlyExit-v0`` (:mod:`~icmlgym.envs.reasoning.early_exit`): one reasoning problem per
episode decoded by real speculative decoding (:mod:`~icmlgym.envs.reasoning.speculative`, KV
caches) with the zoo's overthinking reasoner and its draft; the agent continues or exits at each
line boundary. ``icmlgym/SpeculativeReasoning-v0`` (:mod:`~icmlgym.envs.reasoning.spec_reasoning`):
the draft writes each reasoning step, the target scores it in one pass, the agent accepts it or lets
the target write it. docs/reasoning.md has the cost models and the findings.
"""

from icmlgym.catalog import AgentInfo, Resources, TaskCard, Tier

EXTRAS: dict[str, tuple[str, ...]] = {"reasoning": ("torch",)}
PROVENANCE: tuple[str, ...] = ("torch",)

SPECEXIT_PAPER = ("SpecExit: accelerating large reasoning models by speculative exit (ICML 2026); "
                  "peers DEER (dynamic early exit by trial answers), SVIP, Kangaroo")

DREAM_PAPER = ("DREAM-R: aligned drafts and trust-based verification for speculative reasoning (ICML 2026); "
               "peers SpecReason, token-level speculative decoding")
SPEC_BASELINES: tuple[str, ...] = ("specreason", "token-speculative", "always-accept", "always-reject", "random")

EXIT_BASELINES: tuple[str, ...] = ("never-exit", "token-budget", "deer", "deer-consistency", "target-head", "draft-entropy", "random")

CARDS = [
    TaskCard(
        id="icmlgym/EarlyExit-v0",
        family="reasoning",
        paper=SPECEXIT_PAPER,
        entry_point="icmlgym.envs.reasoning.early_exit:EarlyExitEnv",
        kind="single",
        primary_metric="score",
        direction="max",
        cost_units=("target_forwards", "draft_forwards", "probe_forwards"),
        extra="reasoning",
        tiers={
            "smoke": Tier(episodes=4, env_kwargs={}, train_steps=300, train_unit="gradient_steps", seeds=3),
            "standard": Tier(episodes=20, env_kwargs={}, train_steps=1000, train_unit="gradient_steps", seeds=5),
            "full": Tier(episodes=100, env_kwargs={}, train_steps=2000, train_unit="gradient_steps", seeds=10),
        },
        reference_agent="specexit",
        baselines=EXIT_BASELINES,
        # random and the reference (specexit): mean score over seeds 0-2 x 4 episodes of
        # `icmlgym.run("icmlgym/EarlyExit-v0", AGENT, seeds=3, episodes=4)`; never-exit scores 0.521 there (docs/reasoning.md)
        score_refs={"smoke": (0.173, 0.502)},
        suites=("reasoning",),
        description="continue or exit at each step boundary of speculative decoding; accuracy against generated tokens",
        resources=Resources(num_cpus=1, device=True),
    ),
    TaskCard(
        id="icmlgym/SpeculativeReasoning-v0",
        family="reasoning",
        paper=DREAM_PAPER,
        entry_point="icmlgym.envs.reasoning.spec_reasoning:SpeculativeReasoningEnv",
        kind="single",
        primary_metric="score",
        direction="max",
        cost_units=("target_forwards", "draft_forwards", "steps"),
        extra="reasoning",
        tiers={
            "smoke": Tier(episodes=4, env_kwargs={}, seeds=3),
            # the standard tier's SAPO draft is SAPO's standard RL budget (trained on first use)
            "standard": Tier(episodes=20, env_kwargs={"sapo_budget": "standard"}, seeds=5),
            "full": Tier(episodes=100, env_kwargs={}, seeds=10),
        },
        reference_agent="tbvm",
        baselines=SPEC_BASELINES,
        # random and the reference (tbvm): mean score over seeds 0-9 x 4 episodes of
        # `icmlgym.run("icmlgym/SpeculativeReasoning-v0", AGENT, seeds=10, episodes=4)` (sequential cost
        # model; 40 episodes: random mixes lossless token-level steps in, and 12 episodes put it above tbvm)
        score_refs={"smoke": (0.229, 0.323)},
        suites=("reasoning",),
        description="accept, reject (the target writes the step) or verify token by token each draft-written reasoning step; accuracy against target passes",
        resources=Resources(num_cpus=1, device=True),
    ),
]

AGENTS: dict[str, AgentInfo] = {
    "specexit": AgentInfo("icmlgym.agents.reasoning:SpecExitAgent", extra="reasoning",
                          description="exit head (MLP) on the draft's hidden state, trained on traces, threshold from validation; zero probes"),
    "never-exit": AgentInfo("icmlgym.baselines.reasoning:NeverExitAgent", description="plain speculative decoding: always continue"),
    "token-budget": AgentInfo("icmlgym.baselines.reasoning:TokenBudgetAgent",
                              description="exit after a token budget calibrated on validation traces"),
    "deer": AgentInfo("icmlgym.baselines.reasoning:DEERAgent", kwargs={"mode": "confidence"},
                      description="DEER: a trial answer at every boundary (probe), exit when its confidence clears a calibrated threshold"),
    "deer-consistency": AgentInfo("icmlgym.baselines.reasoning:DEERAgent", kwargs={"mode": "consistency"},
                                  description="DEER's answer-consistency variant: exit when two consecutive trial answers agree"),
    "target-head": AgentInfo("icmlgym.baselines.reasoning:TargetHeadExitAgent", extra="reasoning",
                             description="SpecExit's head on the target's hidden state (reads it at every boundary)"),
    "tbvm": AgentInfo("icmlgym.agents.reasoning:TBVMAgent",
                      description="DREAM-R's TBVM: accept a step when the target's probability of every token is at least twice its strongest alternative"),
    "specreason": AgentInfo("icmlgym.baselines.reasoning:SpecReasonAgent",
                            description="SpecReason-style: accept when the target's geometric-mean probability of the step is >= 0.7"),
    "token-speculative": AgentInfo("icmlgym.baselines.reasoning:TokenSpeculativeAgent",
                                   description="token-level speculative decoding (lossless): every drafted step verified token by token"),
    "always-accept": AgentInfo("icmlgym.baselines.reasoning:AlwaysAcceptAgent", description="keep every draft step"),
    "always-reject": AgentInfo("icmlgym.baselines.reasoning:AlwaysRejectAgent", description="the target writes every step"),
    "draft-entropy": AgentInfo("icmlgym.baselines.reasoning:DraftEntropyAgent",
                               description="exit when the draft's next-token entropy is below a calibrated threshold (SVIP-style)"),
}
