"""Models on constrained hardware: mixed-precision experts (GEMQ) and compute-in-memory noise (DWP).

``icmlgym/MoEQuantAlloc-v0`` (:mod:`~icmlgym.envs.hardware.moe_env`): a bit-width per expert of
the zoo's mixture-of-experts transformer under a memory cap, quantised for real (group-wise
round-to-nearest, :mod:`~icmlgym.envs.hardware.quant`), with router fine-tuning.
docs/hardware.md has the models, the claims and the findings table.
"""

from icmlgym.catalog import AgentInfo, Resources, TaskCard, Tier

EXTRAS: dict[str, tuple[str, ...]] = {"hardware": ("torch", "scipy")}
PROVENANCE: tuple[str, ...] = ("torch", "scipy")

GEMQ_PAPER = ("GEMQ: global expert-level mixed-precision quantisation of mixture-of-experts models with router "
              "fine-tuning (ICML 2026)")

MOE_BASELINES: tuple[str, ...] = ("gemq-no-ft", "moe-layerwise", "moe-frequency", "moe-uniform", "random")

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
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"avg_bits": 2.5, "rounds": 1, "n_calib": 32, "n_eval": 64}, seeds=3),
            "standard": Tier(episodes=1, env_kwargs={"avg_bits": 2.5, "rounds": 2, "n_calib": 64, "n_eval": 256,
                                                     "router_ft_steps": 20}, seeds=5),
            "full": Tier(episodes=1, env_kwargs={"avg_bits": 2.5, "rounds": 3, "n_calib": 128, "n_eval": 512,
                                                 "router_ft_steps": 40}, seeds=10),
        },
        resources=Resources(num_cpus=1, memory_mb=800),
        reference_agent="gemq",
        baselines=MOE_BASELINES,
        # mean held-out loss over seeds 0-2 at the smoke tier of `random` (it stays at the lowest width: a random
        # allocation is nearly always over the cap) and of `gemq`: `python /tmp/hw_run.py` in docs/hardware.md
        score_refs={"smoke": (0.3251, 0.3195)},
        suites=("hardware",),
        description="bit-width per expert of the zoo MoE under a memory cap: real RTN quantisation, router shift, router fine-tuning",
    ),
]

AGENTS = {
    "gemq": AgentInfo("icmlgym.agents.hardware:GEMQAgent",
                      description="global MILP on the second-order loss estimate + router fine-tuning, re-estimated each round"),
    "gemq-no-ft": AgentInfo("icmlgym.agents.hardware:GEMQAgent", kwargs={"router_ft": False},
                            description="GEMQ without router fine-tuning"),
    "moe-layerwise": AgentInfo("icmlgym.baselines.hardware:LayerwiseAgent",
                               description="per-layer budget, experts ranked by their layer-local output error"),
    "moe-frequency": AgentInfo("icmlgym.baselines.hardware:FrequencyAgent",
                               description="global MILP on routing frequency x relative weight error"),
    "moe-uniform": AgentInfo("icmlgym.baselines.hardware:UniformBitsAgent",
                             description="every expert at the largest offered width within the cap"),
}
