"""Cognitive tasks and heavy-tailed, Dale-constrained recurrent networks (ICML 2026).

Six NeuroGym-style tasks as Gymnasium envs, ``icmlgym/Cog<Name>-v0`` (any RL agent
plays them step by step), and ``icmlgym/CognitiveRNN-v0``, a training benchmark: an
agent gets a few training trials and a parameter budget (hidden units), returns a
trained recurrent network, and the env scores it on fresh trials and held-out
conditions (unseen coherences, longer delays), with the paper's analyses (effective
rank, participation ratio, linear readout of task variables, tail index).
"""

from icmlgym.catalog import AgentInfo, TaskCard, Tier

# optional extras this family needs (extra -> modules that must import) and the distributions
# whose versions every run records; tests/core/test_extras.py checks them against pyproject.toml
EXTRAS: dict[str, tuple[str, ...]] = {"cognitive": ("torch", "ot")}
PROVENANCE: tuple[str, ...] = ("torch", "pot")

PAPER = (
    "Heavy-tailed synaptic statistics in biologically constrained RNNs trained by optimal transport "
    "(ICML 2026); tasks after NeuroGym (Molano-Mazon et al. 2022)"
)

# env name -> (task name, one-line description)
TASK_ENVS: dict[str, tuple[str, str]] = {
    "CogPerceptualDecision": ("perceptual_decision", "integrate a noisy two-channel stimulus, report the stronger (NeuroGym PerceptualDecisionMaking)"),
    "CogContextIntegration": ("context_integration", "two noisy modalities and a context cue: report the cued one (NeuroGym ContextDecisionMaking)"),
    "CogDelayedMatch": ("delayed_match", "hold a sample through a delay, report match / non-match (NeuroGym DelayMatchSample)"),
    "CogGoNoGo": ("go_nogo", "go or no-go cue, delay, respond only after go (NeuroGym GoNogo)"),
    "CogDelayedComparison": ("delayed_comparison", "compare two frequencies across a delay (NeuroGym DelayComparison)"),
    "CogIntervalTiming": ("interval_timing", "measure an interval, reproduce it after the set cue (NeuroGym ReadySetGo)"),
}

TASK_AGENTS: tuple[str, ...] = ("random", "sb3-ppo")


def _task_card(env_name: str, task: str, description: str) -> TaskCard:
    return TaskCard(
        id=f"icmlgym/{env_name}-v0",
        family="cognitive",
        paper=PAPER,
        entry_point="icmlgym.envs.cognitive.task_env:CognitiveTaskEnv",
        kind="single",
        primary_metric="accuracy",
        direction="max",
        cost_units=("env_steps", "trials"),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"trials_per_episode": 20}, train_steps=2048, seeds=3),
            "standard": Tier(episodes=3, env_kwargs={"trials_per_episode": 50}, train_steps=20_000, seeds=5),
            "full": Tier(episodes=5, env_kwargs={"trials_per_episode": 100}, train_steps=100_000, seeds=10),
        },
        extra=None,
        reference_agent=None,
        baselines=TASK_AGENTS,
        suites=("cognitive",),
        description=description,
        default_kwargs={"task": task},
    )


CARDS = [_task_card(name, task, desc) for name, (task, desc) in TASK_ENVS.items()]

AGENTS: dict[str, AgentInfo] = {}
