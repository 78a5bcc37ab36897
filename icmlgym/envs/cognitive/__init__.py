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

TASK_AGENTS: tuple[str, ...] = ("cognitive-rnn-policy", "random", "sb3-ppo")


# mean accuracy over seeds 0, 1, 2 at the smoke tier of `random` and of the reference agent, measured
# with `python benchmarks/cognitive_refs.py`. At smoke (2,048 training trials) the reference RNN has not
# learned delayed match-to-sample (below random, which answers by chance) or context integration.
SMOKE_REFS: dict[str, tuple[float, float]] = {
    "CogPerceptualDecision": (0.3000, 0.8667),
    "CogContextIntegration": (0.2833, 0.3167),
    "CogDelayedMatch": (0.6500, 0.4333),
    "CogGoNoGo": (0.6000, 1.0000),
    "CogDelayedComparison": (0.3000, 0.5667),
    "CogIntervalTiming": (0.0000, 0.7833),
}


def _task_card(env_name: str, task: str, description: str) -> TaskCard:
    return TaskCard(
        id=f"icmlgym/{env_name}-v0",
        family="cognitive",
        paper=PAPER,
        entry_point="icmlgym.envs.cognitive.task_env:CognitiveTaskEnv",
        # N seeds in one array (the runner's batched mode): gym.make_vec(..., vectorization_mode="vector_entry_point")
        vector_entry_point="icmlgym.envs.cognitive.vector:CognitiveTaskVectorEnv",
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
        reference_agent=TASK_AGENTS[0],
        baselines=TASK_AGENTS[1:],
        score_refs={"smoke": SMOKE_REFS[env_name]},
        suites=("cognitive",),
        description=description,
        default_kwargs={"task": task},
    )


CARDS = [_task_card(name, task, desc) for name, (task, desc) in TASK_ENVS.items()]

RNN_BASELINES: tuple[str, ...] = ("cognitive-dale", "cognitive-dale-halfnormal", "cognitive-unconstrained", "cognitive-l1", "random")

CARDS.append(
    TaskCard(
        id="icmlgym/CognitiveRNN-v0",
        family="cognitive",
        paper=PAPER,
        entry_point="icmlgym.envs.cognitive.rnn_env:CognitiveRNNEnv",
        kind="single",
        # generalisation to held-out conditions is the paper's question; test accuracy saturates on easy tasks
        primary_metric="heldout_accuracy",
        direction="max",
        cost_units=("eval_trials", "forward_flops"),
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"n_hidden": 32, "n_train_trials": 32, "n_eval_trials": 128}, train_steps=100, train_unit="gradient_steps", seeds=3),
            "standard": Tier(episodes=1, env_kwargs={"n_hidden": 64, "n_train_trials": 64, "n_eval_trials": 256}, train_steps=300, train_unit="gradient_steps", seeds=10),
            "full": Tier(episodes=1, env_kwargs={"n_hidden": 128, "n_train_trials": 128, "n_eval_trials": 1024}, train_steps=2000, train_unit="gradient_steps", seeds=10),
        },
        extra=None,  # the env runs the submitted network in numpy; the training agents need [cognitive]
        reference_agent="cognitive-dale-lognormal",
        baselines=RNN_BASELINES,
        # mean heldout_accuracy over seeds 0, 1, 2 at smoke (`python benchmarks/cognitive_refs.py`)
        score_refs={"smoke": (0.3620, 0.7995)},
        suites=("cognitive",),
        description="train an RNN from few trials under a unit budget; scored on fresh and held-out trials (accuracy, rank, dimension, readout, tail)",
    )
)

_TRAINER = "icmlgym.agents.cognitive"
AGENTS: dict[str, AgentInfo] = {
    "cognitive-rnn-policy": AgentInfo(
        f"{_TRAINER}:RNNPolicyAgent",
        extra="cognitive",
        description="a Dale + log-normal (OT-projected) RNN trained on generated trials of the task, then run step by step",
    ),
    "cognitive-dale-lognormal": AgentInfo(
        f"{_TRAINER}:HeavyTailedDaleAgent",
        extra="cognitive",
        description="Dale's principle, log-normal magnitudes maintained by exact 1-D optimal transport after every step",
    ),
    "cognitive-dale": AgentInfo(
        "icmlgym.baselines.cognitive:DaleAgent", extra="cognitive", description="Dale's principle, same log-normal start, no distribution constraint"
    ),
    "cognitive-dale-halfnormal": AgentInfo(
        "icmlgym.baselines.cognitive:LightTailedDaleAgent",
        extra="cognitive",
        description="Dale's principle, the same OT projection onto a half-normal of equal second moment",
    ),
    "cognitive-unconstrained": AgentInfo(
        "icmlgym.baselines.cognitive:UnconstrainedAgent", extra="cognitive", description="a free rate RNN, Gaussian start of the same gain"
    ),
    "cognitive-l1": AgentInfo(
        "icmlgym.baselines.cognitive:L1SparseAgent", extra="cognitive", description="a free rate RNN with an L1 penalty on its recurrent weights"
    ),
}
