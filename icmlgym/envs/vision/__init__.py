"""Vision learned from video and from language: Olaf-World (latent action transfer) and LaViD.

``icmlgym/LanguageToVisualKD-v0`` (:mod:`~icmlgym.envs.vision.lavid`): a vision-only student
trained on generated fine-grained product images, distilling a language-only teacher's
conceptual signatures (multiple-choice answers by the shipped sentence encoder) or other soft
targets, chosen per epoch by the agent.

``icmlgym/LatentActionTransfer-v0`` (:mod:`~icmlgym.envs.vision.latent_action`): latent action
models pre-trained on unlabelled clips of a sprite world (:mod:`icmlgym.corpora.sprites`),
evaluated in an unseen visual context with a few labelled transitions. docs/vision.md has the
findings.
"""

from icmlgym.catalog import AgentInfo, Resources, TaskCard, Tier

EXTRAS: dict[str, tuple[str, ...]] = {"vision": ("torch",)}
# LanguageToVisualKD-v0's live language answers (a question bank other than the shipped one) need the
# [text] extra's sentence encoder; the shipped answers need nothing more.
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

LAVID = ("LaViD: a language-only teacher's conceptual signatures (multiple-choice answers) distilled into a vision-only "
         "student without paired data (ICML 2026); DKD (Zhao et al. 2022), MLKD (Jin et al. 2023), logit standardisation (Sun et al. 2024)")

KD_BASELINES: tuple[str, ...] = ("lavid-ls", "kd-ce-only", "kd-label-smoothing", "kd-shuffled-signatures", "kd-oracle-signatures",
                                 "kd-visual", "kd-dkd", "kd-mlkd", "random")

CARDS.append(
    TaskCard(
        id="icmlgym/LanguageToVisualKD-v0",
        family="vision",
        paper=LAVID,
        entry_point="icmlgym.envs.vision.lavid:LanguageToVisualKDEnv",
        kind="single",
        primary_metric="test_accuracy",
        direction="max",
        cost_units=("student_epochs", "teacher_epochs"),
        extra="vision",
        tiers={
            # smoke: 16 classes (2 objects x 4 colours x 2 materials), ~0.5 s of CPU per run; standard: the 48 classes of the
            # default data set with more images and epochs (docs/vision.md has both tiers' findings)
            "smoke": Tier(episodes=1, env_kwargs={"n_objects": 2, "n_colours": 4, "n_materials": 2, "per_class": 6, "val_per_class": 2,
                                                  "epochs": 30, "teacher_epochs": 30}, seeds=3),
            "standard": Tier(episodes=1, env_kwargs={"per_class": 10, "epochs": 60, "teacher_epochs": 60}, seeds=5),
            "full": Tier(episodes=1, env_kwargs={"per_class": 20, "epochs": 60, "teacher_epochs": 100, "n_objects": 8, "n_colours": 8,
                                                 "n_materials": 5}, seeds=10),
        },
        reference_agent="lavid",
        baselines=KD_BASELINES,
        # mean test_accuracy over seeds 0-2 at the smoke tier of `random` and of the reference agent:
        # `icmlgym.run("icmlgym/LanguageToVisualKD-v0", AGENT, seeds=3)`
        score_refs={"smoke": (0.2312, 0.2562)},
        suites=("vision",),
        description="train a vision-only student on fine-grained product images, distilling language signatures or other soft targets per epoch",
        resources=Resources(num_cpus=1, memory_mb=1500),
    )
)

KD_BASELINES_V1: tuple[str, ...] = (*KD_BASELINES[:-1], "kd-makd", "random")

CARDS.append(
    TaskCard(
        id="icmlgym/LanguageToVisualKD-v1",
        family="vision",
        paper=LAVID + "; MaKD's peer: distillation from a vision-language teacher (a CLIP-style model trained here on other classes)",
        entry_point="icmlgym.envs.vision.lavid_v1:LanguageToVisualKDV1Env",
        kind="single",
        primary_metric="test_accuracy",
        direction="max",
        cost_units=("student_epochs", "teacher_epochs"),
        extra="vision",
        tiers=CARDS[-1].tiers,  # v0's tiers: v1 only adds a soft-target source
        reference_agent="lavid",
        baselines=KD_BASELINES_V1,
        # mean test_accuracy over seeds 0-2 at the smoke tier of `random` and of the reference agent:
        # `icmlgym.run("icmlgym/LanguageToVisualKD-v1", AGENT, seeds=3)`
        score_refs={"smoke": (0.2563, 0.2562)},
        suites=("vision",),
        description="LanguageToVisualKD-v0 plus a vision-language teacher (MaKD) trained on classes the student never sees",
        resources=Resources(num_cpus=1, memory_mb=1500),
    )
)

SUITES = {
    "vision-adaptation": [("icmlgym/LatentActionTransfer-v0", {"n_labels": n}) for n in (0, 8, 64)],
}

AGENTS = {
    "seq-delta-repa": AgentInfo("icmlgym.agents.vision:SeqDeltaREPAAgent",
                                description="LAM with continuous latents aligned (sequence level) to a frozen SSL encoder's feature differences"),
    "lapo": AgentInfo("icmlgym.baselines.vision:LAPOAgent", description="LAM with vector-quantised latents (inverse + forward dynamics), no alignment"),
    "lam-no-align": AgentInfo("icmlgym.baselines.vision:NoAlignAgent", description="Seq-Delta-REPA's LAM without the alignment loss"),
    "lavid": AgentInfo("icmlgym.agents.vision:LaViDAgent",
                       description="every epoch: cross-entropy + the language signatures on the auxiliary head (weight 1, T 4)"),
    "lavid-ls": AgentInfo("icmlgym.agents.vision:LaViDAgent", kwargs={"standardise": True},
                          description="LaViD with logit standardisation"),
    "kd-ce-only": AgentInfo("icmlgym.baselines.vision:SoftTargetAgent", kwargs={"teacher": "none"}, description="cross-entropy only"),
    "kd-label-smoothing": AgentInfo("icmlgym.baselines.vision:SoftTargetAgent", kwargs={"teacher": "smoothing", "temperature": 1.0},
                                    description="label smoothing (0.1): soft targets without semantics"),
    "kd-shuffled-signatures": AgentInfo("icmlgym.baselines.vision:SoftTargetAgent", kwargs={"teacher": "shuffled"},
                                        description="LaViD's loss on signatures of permuted classes"),
    "kd-oracle-signatures": AgentInfo("icmlgym.baselines.vision:SoftTargetAgent", kwargs={"teacher": "oracle"},
                                      description="the renderer's attributes (object, colour, material) as one-hot signatures: the upper bound"),
    "kd-visual": AgentInfo("icmlgym.baselines.vision:SoftTargetAgent", kwargs={"teacher": "visual-kd"},
                           description="Hinton KD from a double-width visual teacher trained here"),
    "kd-dkd": AgentInfo("icmlgym.baselines.vision:SoftTargetAgent", kwargs={"teacher": "dkd"}, description="decoupled KD from the visual teacher"),
    "kd-mlkd": AgentInfo("icmlgym.baselines.vision:SoftTargetAgent", kwargs={"teacher": "mlkd"},
                         description="multi-level logit distillation from the visual teacher (no strong augmentation)"),
    "kd-makd": AgentInfo("icmlgym.baselines.vision:SoftTargetAgent", kwargs={"teacher": "vlm"},
                         description="MaKD (LanguageToVisualKD-v1 only): KD from the vision-language teacher's image-to-caption similarities"),
    "bc-labels": AgentInfo("icmlgym.baselines.vision:LabelBCAgent", description="behaviour cloning: an MLP from transition to action on the labels only"),
}
