"""Skill neologisms (SkillNeologism-v1): new tokens teach a frozen model new skills without forgetting.

The independent unit is the run seed: it draws every training, evaluation and final batch, the
same for both arms of a comparison (the frozen model is the shipped ``skill-chain-lm``, seed 0,
whose held-out skills exist in pre-training only as two-token chains). The new skills are
``shift4`` (a map) and ``rot3`` (a permutation). Every arm runs at the smoke tier (50 oracle
steps of 16 prompts per skill; final measurement on 64 prompts per task). On v0's model
(``skill-lm``, which never computed its held-out skills) the same claims were measured once and
are reported in docs/skills.md.

Midtraining (MidtrainingSchedule-v0): the unit is the run seed (initialisation, every batch,
the held-out sets), the same for both arms; smoke tier, target ``code`` (far). The far-against-near
claim runs each arm on two targets per seed (``code`` and ``near``, as variants of one unit): its
measure is the far target's loss minus the near one's, so the paired effect is the gain of
midtraining over no midtraining on ``code`` minus that gain on ``near``. The same comparisons on
``arith`` and against continued pre-training are measured by ``benchmarks/skills_midtraining.py``
(docs/skills.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from icmlgym.findings.claims import DOES_NOT_HOLD, HOLDS, NOT_AT_SCALE, Arm, Finding, Mean, Measure

E = "icmlgym/SkillNeologism-v1"
SOURCE = "Skill neologisms: teaching a language model new skills with new vocabulary tokens (ICML 2026)"

NEOLOGISM = Arm("neologism (new token rows only)", E, "skills-neologism")
NO_TOKEN = Arm("no token (slot empty)", E, "skills-no-token")
FULL_FT = Arm("full fine-tuning (+ new rows)", E, "skills-full-ft")
LORA = Arm("LoRA rank 2 (+ new rows)", E, "skills-lora")

FINDINGS = [
    Finding(
        id="skills-neologism-lifts-new-skill",
        family="skills",
        claim="A neologism lifts the new skill well above the model without a token.",
        source=SOURCE,
        treatment=NEOLOGISM,
        control=NO_TOKEN,
        measure=Mean("new_skill_accuracy"),
        direction="greater",
        unit="seed (training and evaluation batches)",
        min_effect=0.1,
        expected=HOLDS,
        note="v1 (chain model), seeds 0-9: +0.413 [0.398, 0.428], the mean of shift4 (learned) and rot3 (0: the model never learned the rotation chains); on v0's model +0.001 [0, 0.002], not at our scale (docs/skills.md)",
    ),
    Finding(
        id="skills-full-ft-forgets-neologism-does-not",
        family="skills",
        claim="Fine-tuning loses some accuracy on old skills; a neologism loses none.",
        source=SOURCE,
        treatment=FULL_FT,
        control=NEOLOGISM,
        measure=Mean("forgetting"),
        direction="greater",
        unit="seed (training and evaluation batches)",
        expected=HOLDS,
    ),
    Finding(
        id="skills-lora-forgets-neologism-does-not",
        family="skills",
        claim="LoRA loses some accuracy on old skills; a neologism loses none.",
        source=SOURCE,
        treatment=LORA,
        control=NEOLOGISM,
        measure=Mean("forgetting"),
        direction="greater",
        unit="seed (training and evaluation batches)",
        expected=HOLDS,
    ),
    Finding(
        id="skills-neologisms-compose-zero-shot",
        family="skills",
        claim="Two independently trained neologisms used together beat either alone on the composed skill.",
        source=SOURCE,
        treatment=NEOLOGISM,
        control=0.0,
        measure=Mean("pair_gain"),
        direction="greater",
        unit="seed (training and evaluation batches)",
        expected=NOT_AT_SCALE,
        note="pair_gain = exact match with both new tokens minus the better of the two with one token; v1 seeds 0-9: -0.002 [-0.005, 0]: the rot3 neologism learns nothing (the model has no rotation chain), so the pair cannot do the composed task; on a probe model trained with a permutation-first curriculum (docs/skills.md) rot3 is learned and the pair gains 0-0.08",
    ),
]

# -- midtraining (MidtrainingSchedule-v0) --------------------------------------------------------
M = "icmlgym/MidtrainingSchedule-v0"
MID_SOURCE = "Midtraining as distributional bridging (ICML 2026)"
_FAR = {"target": "code"}
BRIDGE = Arm("bridge: tau 0.5, weight 0.3 (code)", M, "midtrain-bridge", env_kwargs=_FAR)
CONTINUED = Arm("continued pre-training from tau 0.5 (code)", M, "midtrain-continued", env_kwargs=_FAR)
EARLY_HIGH = Arm("early-high: tau 0, weight 0.5 (code)", M, "midtrain-early-high", env_kwargs=_FAR)
LATE_HIGH = Arm("late-high: tau 0.75, weight 0.5 (code)", M, "midtrain-late-high", env_kwargs=_FAR)
# far against near: each unit runs an arm on both targets (the code runs are the ones above)
_FAR_AND_NEAR = ({"target": "code"}, {"target": "near"})
BRIDGE_BOTH = Arm("bridge: tau 0.5, weight 0.3 (code, near)", M, "midtrain-bridge", variants=_FAR_AND_NEAR)
GENERAL_BOTH = Arm("no midtraining: general data only (code, near)", M, "midtrain-general-only", variants=_FAR_AND_NEAR)


@dataclass(frozen=True)
class FarMinusNear(Measure):
    """Per unit: ``metric`` with the far target minus ``metric`` with the near one (the arm's
    variants name the target). Over two arms the paired effect is a difference of differences."""

    metric: str
    far: str = "code"
    near: str = "near"

    def value(self, runs: Sequence[Sequence[Any]], variants: Sequence[Mapping[str, Any]]) -> float:
        by = {v["target"]: Mean(self.metric).value([g], [v]) for g, v in zip(runs, variants)}
        return by[self.far] - by[self.near]

    def describe(self) -> str:
        return f"{self.metric}[{self.far}] - {self.metric}[{self.near}]"


FINDINGS += [
    Finding(
        id="midtrain-bridge-beats-continued-in-domain",
        family="skills",
        claim="Midtraining (specialised data mixed into general data) beats continued pre-training on the specialised data alone, in-domain, for a far domain.",
        source=MID_SOURCE,
        treatment=BRIDGE,
        control=CONTINUED,
        measure=Mean("target_loss"),
        direction="less",
        unit="seed (initialisation and every batch)",
        expected=DOES_NOT_HOLD,
        note="at smoke the bridge's target loss is 0.11 nats above continued pre-training's (2.10 vs 1.98): more target tokens win in-domain here",
    ),
    Finding(
        id="midtrain-bridge-forgets-less-than-continued",
        family="skills",
        claim="Midtraining forgets less general knowledge than continued pre-training on the specialised data alone (far domain).",
        source=MID_SOURCE,
        treatment=BRIDGE,
        control=CONTINUED,
        measure=Mean("general_loss"),
        direction="less",
        unit="seed (initialisation and every batch)",
        expected=HOLDS,
    ),
    Finding(
        id="midtrain-late-high-does-not-recover-early",
        family="skills",
        claim="Late introduction with a high weight does not recover what early introduction gives (the plasticity window).",
        source=MID_SOURCE,
        treatment=LATE_HIGH,
        control=EARLY_HIGH,
        measure=Mean("target_loss"),
        direction="greater",
        unit="seed (initialisation and every batch)",
        expected=HOLDS,
        tiers=("standard", "full"),
        note="two more arms of whole training runs: declared at the standard tier only (the issue's plan), results in docs/skills.md",
    ),
    Finding(
        id="midtrain-gain-larger-far-than-near",
        family="skills",
        claim="Midtraining benefits are largest for domains distant from general pre-training: the in-domain gain of midtraining over no midtraining is larger for a far domain (code) than for a near one.",
        source=MID_SOURCE,
        treatment=GENERAL_BOTH,
        control=BRIDGE_BOTH,
        measure=FarMinusNear("target_loss"),
        direction="greater",
        unit="seed (initialisation and every batch; both targets)",
        min_effect=0.1,
        expected=HOLDS,
        note="effect = (general-only - bridge target loss on code) - (the same on near), nats after the same post-training "
             "(distance to general, bigram JS: code 1.00, near 0.23 bits); seeds 0-9: +0.632 [0.594, 0.676] (gain 0.68 on code, "
             "0.05 on near); against continued pre-training instead of no midtraining the in-domain gain is not larger "
             "for code (docs/skills.md)",
    ),
]
