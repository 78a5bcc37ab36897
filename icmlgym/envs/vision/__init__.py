"""Vision learned from video and from language: Olaf-World (latent action transfer) and LaViD.

``icmlgym/LatentActionTransfer-v0`` (:mod:`~icmlgym.envs.vision.latent_action`): latent action
models pre-trained on unlabelled clips of a sprite world (:mod:`icmlgym.corpora.sprites`),
evaluated in an unseen visual context with a few labelled transitions. docs/vision.md has the
findings.
"""

from icmlgym.catalog import AgentInfo, Resources, TaskCard, Tier

EXTRAS: dict[str, tuple[str, ...]] = {"vision": ("torch",)}
PROVENANCE: tuple[str, ...] = ("torch",)

OLAF = ("Olaf-World: latent actions from unlabelled video aligned with a frozen self-supervised encoder "
        "(Seq-Delta-REPA) for cross-context transfer (ICML 2026); LAPO (Schmidt & Jiang, 2024)")

LAT_BASELINES: tuple[str, ...] = ("lapo", "lam-no-align", "bc-labels", "random")

CARDS = [
    TaskCard(
        id="icmlgym/LatentActionTransfer-v0",
        family="vision",
        paper=OLAF,
        entry_point="icmlgym.envs.vision.latent_action:LatentActionTransferEnv",
        kind="single",
        primary_metric="action_accuracy",
        direction="max",
        cost_units=("labelled_transitions",),
        extra="vision",
        tiers={
            "smoke": Tier(episodes=1, env_kwargs={"n_labels": 8, "n_queries": 32, "demo_len": 6}, train_steps=2000, train_unit="frames", seeds=3),
            "standard": Tier(episodes=2, env_kwargs={"n_labels": 8, "n_queries": 64, "demo_len": 8}, train_steps=12000, train_unit="frames", seeds=5),
            "full": Tier(episodes=4, env_kwargs={"n_labels": 8, "n_queries": 128, "demo_len": 8}, train_steps=48000, train_unit="frames", seeds=10),
        },
        reference_agent="seq-delta-repa",
        baselines=LAT_BASELINES,
        # mean action_accuracy over seeds 0-2 at the smoke tier of `random` and of the reference agent:
        # `icmlgym.run("icmlgym/LatentActionTransfer-v0", AGENT, seeds=3)`
        score_refs={"smoke": (0.2188, 0.7396)},
        suites=("vision",),
        description="pre-train latent actions on unlabelled sprite-world clips; map them to real actions in an unseen context",
        resources=Resources(num_cpus=1, memory_mb=1500),
    )
]

SUITES = {
    "vision-adaptation": [("icmlgym/LatentActionTransfer-v0", {"n_labels": n}) for n in (0, 8, 64)],
}

AGENTS = {
    "seq-delta-repa": AgentInfo("icmlgym.agents.vision:SeqDeltaREPAAgent",
                                description="LAM with continuous latents aligned (sequence level) to a frozen SSL encoder's feature differences"),
    "lapo": AgentInfo("icmlgym.baselines.vision:LAPOAgent", description="LAM with vector-quantised latents (inverse + forward dynamics), no alignment"),
    "lam-no-align": AgentInfo("icmlgym.baselines.vision:NoAlignAgent", description="Seq-Delta-REPA's LAM without the alignment loss"),
    "bc-labels": AgentInfo("icmlgym.baselines.vision:LabelBCAgent", description="behaviour cloning: an MLP from transition to action on the labels only"),
}
