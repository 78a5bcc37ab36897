"""Efficient reasoning: SpecExit's early exit (EarlyExit-v0) and DREAM-R's step verification (SpeculativeReasoning-v0).

The independent unit is the run seed: it draws the exit head's initialisation and the
evaluation episodes' problems and sampling (the same problems for every arm of a unit).
Every arm runs 4 problems per run (``EPISODES``, the smoke tier's, at any tier: the standard
tier's 20 would make the findings five times dearer) at the smoke tier (the shipped overthinking reasoner and draft, the head
trained for 300 steps on 96 cached training traces and calibrated on 64 validation traces). Length reduction and accuracy are paired inside each episode: the env
decodes the never-exit continuation of the same prefix (``reference_*`` metrics).

SpeculativeReasoning-v0's arms run at the smoke tier too (4 problems per run, sequential cost
model); accuracy is paired against the target decoding the same problem alone.

The size of the reduction depends on our overthinking rate (the pair was fine-tuned with
redundant checks on half of the problems), not on the paper's models: the paper's 66% is not
ours to reproduce.
"""

from __future__ import annotations

from icmlgym.findings.claims import DOES_NOT_HOLD, HOLDS, NOT_AT_SCALE, Arm, Finding, Mean

E = "icmlgym/EarlyExit-v0"
SOURCE = "SpecExit: accelerating large reasoning models by speculative exit (ICML 2026)"

S = "icmlgym/SpeculativeReasoning-v0"
EPISODES = 4  # problems per run, whatever the tier (the smoke tier's)
DREAM = "DREAM-R: aligned drafts and trust-based verification for speculative reasoning (ICML 2026)"

TBVM = Arm("TBVM (every token's evidence twice the strongest alternative)", S, "tbvm", episodes=EPISODES)
SPECREASON = Arm("SpecReason-style score threshold (geometric-mean probability >= 0.7)", S, "specreason", episodes=EPISODES)
TBVM_SAPO = Arm("TBVM with the SAPO-aligned draft", S, "tbvm", env_kwargs={"draft": "sapo"}, episodes=EPISODES)
ACCEPT_ALL = Arm("always accept", S, "always-accept", episodes=EPISODES)

SPECEXIT = Arm("SpecExit (exit head on the draft's states)", E, "specexit", episodes=EPISODES)
DEER = Arm("DEER (trial-answer confidence)", E, "deer", episodes=EPISODES)

FINDINGS = [
    Finding(
        id="reasoning-specexit-shortens-generations",
        family="reasoning",
        claim="SpecExit shortens generations by a clear margin (here: at least 10% of the never-exit length from the same prefix).",
        source=SOURCE,
        treatment=SPECEXIT,
        control=0.0,
        measure=Mean("length_reduction"),
        direction="greater",
        unit="seed",
        min_effect=0.10,
        expected=HOLDS,
        note='observed +0.298 [0.216, 0.383] over seeds 0-9 (smoke): about 30% shorter than never exiting from the same prefix',
    ),
    Finding(
        id="reasoning-specexit-keeps-accuracy",
        family="reasoning",
        claim="SpecExit keeps accuracy within one point of never exiting (paired: the never-exit continuation of the same prefix).",
        source=SOURCE,
        treatment=SPECEXIT,
        control=-0.01,
        measure=Mean("accuracy_gain"),
        direction="greater",
        unit="seed",
        expected=NOT_AT_SCALE,
        note='observed -0.015 [-0.14, 0.135] (accuracy 0.025 below never exiting on average): 40 paired episodes cannot resolve one point',
    ),
    Finding(
        id="reasoning-deer-pays-probes",
        family="reasoning",
        claim="DEER pays probes (trial answers forced at step boundaries, as target passes); SpecExit pays none.",
        source=SOURCE,
        treatment=DEER,
        control=SPECEXIT,
        measure=Mean("probe_forwards"),
        direction="greater",
        unit="seed",
        expected=HOLDS,
        note='observed 12.3 [10.7, 13.9] probe passes per problem for DEER against 0 for SpecExit',
    ),
    Finding(
        id="reasoning-specexit-cheaper-than-deer",
        family="reasoning",
        claim="SpecExit needs no probes; DEER pays trial-answer probes: SpecExit's modelled latency (target passes, draft passes, probes) is lower than DEER's.",
        source=SOURCE,
        treatment=SPECEXIT,
        control=DEER,
        measure=Mean("modelled_latency"),
        direction="less",
        unit="seed",
        expected=HOLDS,
        note="observed 11.4 vs 29.4 target-pass units, -18.0 [-21.4, -14.5]: DEER's calibrated confidence threshold never exits (its trial answers are confident everywhere), so it pays probes on full-length generations",
    ),
    Finding(
        id="reasoning-always-accept-loses-accuracy",
        family="reasoning",
        claim="Accepting every draft step loses accuracy against the target alone (paired: the target decoding the same problem).",
        source=DREAM,
        treatment=ACCEPT_ALL,
        control=0.0,
        measure=Mean("accuracy_gain"),
        direction="less",
        unit="seed",
        expected=HOLDS,
        note='observed -0.425 [-0.6, -0.25] over seeds 0-9 (smoke): the weak draft alone loses about 40 points of accuracy',
    ),
    Finding(
        id="reasoning-tbvm-keeps-target-accuracy",
        family="reasoning",
        claim="TBVM keeps the target's accuracy within one point (paired: the target decoding the same problem).",
        source=DREAM,
        treatment=TBVM,
        control=-0.01,
        measure=Mean("accuracy_gain"),
        direction="greater",
        unit="seed",
        expected=NOT_AT_SCALE,
        note='observed +0.035 [-0.165, 0.21]: TBVM is no worse than the target alone on average, but 40 paired episodes cannot resolve one point',
    ),
    Finding(
        id="reasoning-tbvm-accepts-more-than-score-threshold",
        family="reasoning",
        claim="TBVM accepts more draft steps than a SpecReason-style score threshold.",
        source=DREAM,
        treatment=TBVM,
        control=SPECREASON,
        measure=Mean("acceptance_rate"),
        direction="greater",
        unit="seed",
        expected=DOES_NOT_HOLD,
        note='observed 0.233 vs 0.36, -0.127 [-0.181, -0.077]: at these fixed thresholds (ratio 2, score 0.7) TBVM is the stricter verifier; not compared at equal accuracy (no threshold sweep)',
    ),
    Finding(
        id="reasoning-sapo-raises-acceptance",
        family="reasoning",
        claim="SAPO (the draft fine-tuned by policy gradient on accepted-and-concise reward, KL to the original) raises the acceptance rate.",
        source=DREAM,
        treatment=TBVM_SAPO,
        control=TBVM,
        measure=Mean("acceptance_rate"),
        direction="greater",
        unit="seed",
        expected=NOT_AT_SCALE,
        note="observed 0.254 vs 0.233, +0.021 [-0.008, +0.058] over seeds 0-9 (smoke): the SAPO draft (150 REINFORCE steps) does not raise acceptance measurably; its own training reward did not rise (0.105 -> 0.074, first and last 20 steps); at the standard tier (sapo_budget standard: 600 steps of 32 lines) 0.223 vs 0.233, -0.009 [-0.040, 0.019], not at our scale either",
    ),
]
