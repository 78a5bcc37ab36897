"""Models on constrained hardware: mixed-precision experts (GEMQ) and compute-in-memory noise (DWP).

``icmlgym/CIMRobustTraining-v0`` (:mod:`~icmlgym.envs.hardware.cim_env`): one training run of a
small network whose sample weights the agent sets from statistics under K weight-noise
realisations, deployed under mismatch, additive noise and PCM drift (:mod:`~icmlgym.envs.hardware.cim`).

``icmlgym/MoEQuantAlloc-v0`` (:mod:`~icmlgym.envs.hardware.moe_env`): a bit-width per expert of
the zoo's mixture-of-experts transformer under a memory cap (``-v1``: the same on an MoE whose layers
differ sharply in quantisation sensitivity, :mod:`icmlgym.zoo.outlier_moe`), quantised for real (group-wise
round-to-nearest, :mod:`~icmlgym.envs.hardware.quant`), with router fine-tuning; ``mode="group"``
sets one group of experts per step (GEMQ's progressive "next group" action).
docs/hardware.md has the models, the claims and the findings table.
"""

from icmlgym.catalog import AgentInfo, Resources, TaskCard, Tier

EXTRAS: dict[str, tuple[str, ...]] = {"hardware": ("torch", "scipy"), "quant": ("torch", "hqq"), "cim": ("torch", "aihwkit")}
PROVENANCE: tuple[str, ...] = ("torch", "scipy")

GEMQ_PAPER = ("GEMQ: global expert-level mixed-precision quantisation of mixture-of-experts models with router "
              "fine-tuning (ICML 2026)")

DWP_PAPER = ("DWP: training for compute-in-memory accelerators by weighting samples by their prediction disagreement "
             "under diverse weight-noise realisations (ICML 2026)")

CIM_BASELINES: tuple[str, ...] = ("cim-standard", "cim-noise-1", "cim-noise-k", "cim-loss-weighted", "random")

MOE_BASELINES: tuple[str, ...] = ("gemq-no-ft", "moe-layerwise", "moe-frequency", "moe-uniform", "random")

MOE_TIERS = {
    "smoke": Tier(episodes=1, env_kwargs={"avg_bits": 2.5, "rounds": 1, "n_calib": 32, "n_eval": 64}, seeds=3),
    # standard / full: GEMQ's progressive loop group by group (one layer's experts per step), one / two passes
    "standard": Tier(episodes=1, env_kwargs={"avg_bits": 2.5, "mode": "group", "rounds": 1, "n_calib": 64,
                                             "n_eval": 256, "router_ft_steps": 20}, seeds=5),
    "full": Tier(episodes=1, env_kwargs={"avg_bits": 2.5, "mode": "group", "rounds": 2, "n_calib": 128,
                                         "n_eval": 512, "router_ft_steps": 40}, seeds=10),
}

CARDS = [
    TaskCard(
        id="icmlgym/MoEQuantAlloc-v0",
        family="hardware",
        paper=GEMQ_PAPER,
        entry_point="icmlgym.envs.hardware.moe_env:MoEQuantAllocEnv",
        kind="single",
        primary_metric="heldout_loss",
        direction="min",
        cost_units=("quantisations", "router_ft_steps"),
        extra="hardware",
        tiers=MOE_TIERS,
        resources=Resources(num_cpus=1, memory_mb=800),
        reference_agent="gemq",
        baselines=MOE_BASELINES,
        # mean held-out loss over seeds 0-2 at the smoke tier of `random` (it stays at the lowest width: a random
        # allocation is nearly always over the cap) and of `gemq`: `icmlgym.run(ID, AGENT, seeds=3)`
        score_refs={"smoke": (0.3251, 0.3195)},
        suites=("hardware",),
        description="bit-width per expert of the zoo MoE under a memory cap: real RTN quantisation, router shift, router fine-tuning",
    ),
    TaskCard(
        id="icmlgym/MoEQuantAlloc-v1",
        family="hardware",
        paper=GEMQ_PAPER,
        entry_point="icmlgym.envs.hardware.moe_env:MoEQuantAllocEnv",
        kind="single",
        primary_metric="heldout_loss",
        direction="min",
        cost_units=("quantisations", "router_ft_steps"),
        extra="hardware",
        tiers=MOE_TIERS,
        resources=Resources(num_cpus=1, memory_mb=800),
        reference_agent="gemq",
        baselines=MOE_BASELINES,
        default_kwargs={"model": "reasoner-moe-outlier"},
        # mean held-out loss over seeds 0-2 at the smoke tier of `random` (lowest widths) and `gemq`:
        # `icmlgym.run(ID, AGENT, seeds=3)`
        score_refs={"smoke": (1.7488, 0.4130)},
        suites=("hardware",),
        description="v0's task on an MoE whose layers differ sharply in quantisation sensitivity "
                    "(outlier weight columns in layer 0's experts; same function as v0's model)",
    ),
    TaskCard(
        id="icmlgym/CIMRobustTraining-v0",
        family="hardware",
        paper=DWP_PAPER,
        entry_point="icmlgym.envs.hardware.cim_env:CIMRobustTrainingEnv",
        kind="single",
        primary_metric="robust_accuracy",
        direction="max",
        cost_units=("train_steps", "noisy_forwards"),
        extra="hardware",
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"data": "digits", "train_steps": 80}, seeds=3),
            "standard": Tier(episodes=1, env_kwargs={"data": "digits", "train_steps": 400, "eval_realisations": 5}, seeds=5),
            "full": Tier(episodes=1, env_kwargs={"data": "digits", "train_steps": 1500, "hidden": 128, "eval_realisations": 10}, seeds=10),
        },
        resources=Resources(num_cpus=1, memory_mb=600),
        reference_agent="dwp",
        baselines=CIM_BASELINES,
        # mean robust_accuracy over seeds 0-2 at the smoke tier of `random` and `dwp` (icmlgym.run(ID, AGENT, seeds=3)):
        # random sample weights already train a robust digits MLP, so the two are close
        score_refs={"smoke": (0.9337, 0.9347)},
        suites=("hardware",),
        description="one training run on noisy CIM weights (sample weights per step), deployed under mismatch, noise and a year of PCM drift",
    ),
]

SUITES = {
    "cim-data-types": [("icmlgym/CIMRobustTraining-v0", {"data": d}) for d in ("digits", "products", "signals")],
    # HQQ uniform (the baseline) = `moe-uniform` on the HQQ backend (extra [quant])
    "moe-backends": [("icmlgym/MoEQuantAlloc-v0", {"backend": b}) for b in ("rtn", "hqq")],
    # extra [cim]: aihwkit-style hardware-aware training = `cim-noise-1` on the second entry (aihwkit's ADD_NORMAL
    # weight modifier, std 0.1 of max|W|, its web-composer preset); the third deploys on aihwkit's PCM drift model
    "cim-backends": [("icmlgym/CIMRobustTraining-v0", {}),
                     ("icmlgym/CIMRobustTraining-v0", {"train_noise_type": "aihwkit", "train_noise": 0.1}),
                     ("icmlgym/CIMRobustTraining-v0", {"backend": "aihwkit"})],
}

AGENTS = {
    "gemq": AgentInfo("icmlgym.agents.hardware:GEMQAgent",
                      description="global MILP on the second-order loss estimate + router fine-tuning, re-estimated each round"),
    "gemq-no-ft": AgentInfo("icmlgym.agents.hardware:GEMQAgent", kwargs={"router_ft": False},
                            description="GEMQ without router fine-tuning"),
    "moe-layerwise": AgentInfo("icmlgym.baselines.hardware:LayerwiseAgent",
                               description="per-layer budget, experts ranked by their layer-local output error"),
    "moe-frequency": AgentInfo("icmlgym.baselines.hardware:FrequencyAgent",
                               description="global MILP on routing frequency x relative weight error"),
    "dwp": AgentInfo("icmlgym.agents.hardware:DWPAgent",
                     description="K noisy losses per sample, weighted by the sample's prediction disagreement under the K realisations"),
    "cim-standard": AgentInfo("icmlgym.baselines.hardware:StandardTrainingAgent", description="clean loss only (standard training)"),
    "cim-noise-1": AgentInfo("icmlgym.baselines.hardware:NoiseInjectionAgent", kwargs={"realisations": 1},
                             description="noise injection on one realisation, uniform weights"),
    "cim-noise-k": AgentInfo("icmlgym.baselines.hardware:NoiseInjectionAgent",
                             description="noise injection on all K realisations, uniform weights"),
    "cim-loss-weighted": AgentInfo("icmlgym.baselines.hardware:LossWeightedAgent",
                                   description="K noisy losses weighted by the sample's mean noisy loss (hard examples)"),
    "moe-uniform": AgentInfo("icmlgym.baselines.hardware:UniformBitsAgent",
                             description="every expert at the largest offered width within the cap"),
}
