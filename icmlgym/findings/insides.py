"""The insides findings: layer-transition OOD detection (LayerOOD-v0) and APORIA (HallucinationLabeling-v0).

HallucinationLabeling-v0: the unit is the run seed (it draws the episode's prompts; both arms
see the same episodes and, for APORIA-LP against logistic regression, the same random
annotations). Every arm runs at the smoke tier (2 episodes of 30 prompts x 8 responses, 40
annotations). The geometry claim is one-sample: the env reports, per episode, the mean over
prompts of the hallucinated responses' spread minus the genuine ones' (``spread_gap``);
tests/insides/test_hallucination_findings.py also pairs it over prompts. APORIA-LP against
self-consistency is reported in docs/insides.md, not declared: its 10-seed verdict depends on
the seeds (holds on 0-9, not at our scale on 1000-1009).

LayerOOD-v0 (SAE transitions against last-layer detectors):
The independent unit is the run seed: it draws the detector's initialisation and the
split of the training texts into fitting and calibration parts, and the evaluation
episodes' inputs (the same for both arms). Every arm runs at the smoke tier (one-class:
no OOD labels; 150 SAE steps per layer; 2 episodes of 64 inputs each).
"""

from __future__ import annotations

from icmlgym.findings.claims import DOES_NOT_HOLD, HOLDS, Arm, Finding, Mean

E = "icmlgym/LayerOOD-v0"
SOURCE = "Layer-transition OOD detection with sparse-autoencoder codes of consecutive layers (ICML 2026)"

TRANSITIONS = Arm("SAE codes + layer transitions (trained SAEs)", E, "ood-sae-transitions")
RANDOM_SAE = Arm("SAE codes + layer transitions (random-feature SAEs)", E, "ood-sae-transitions-random")
MAHALANOBIS = Arm("Mahalanobis on the last layer", E, "ood-mahalanobis-last")
KNN = Arm("kNN on the sentence embedding", E, "ood-knn-last")

FINDINGS = [
    Finding(
        id="insides-transitions-beat-last-layer-mahalanobis",
        family="insides",
        claim="SAE codes of consecutive layers and their transitions separate OOD text better than a last-layer Mahalanobis detector.",
        source=SOURCE,
        treatment=TRANSITIONS,
        control=MAHALANOBIS,
        measure=Mean("auroc"),
        direction="greater",
        unit="seed",
        expected=DOES_NOT_HOLD,
        note="observed -0.050 AUROC [-0.062, -0.037] over seeds 0-9 (0.614 vs 0.664): the paper's advantage does not appear on the small encoder, one-class",
    ),
    Finding(
        id="insides-trained-sae-beats-random-features",
        family="insides",
        claim="Trained SAEs carry the domain signature: the transition detector over trained SAEs beats the same detector over random-feature SAEs.",
        source=SOURCE,
        treatment=TRANSITIONS,
        control=RANDOM_SAE,
        measure=Mean("auroc"),
        direction="greater",
        unit="seed",
        expected=HOLDS,
        note="observed +0.029 [+0.018, +0.042] (0.614 vs 0.585): trained SAEs do beat random-feature ones, by a small margin",
    ),
    Finding(
        id="insides-transitions-beat-knn",
        family="insides",
        claim="SAE layer transitions separate OOD text better than kNN on the last layer's sentence embedding.",
        source=SOURCE,
        treatment=TRANSITIONS,
        control=KNN,
        measure=Mean("auroc"),
        direction="greater",
        unit="seed",
        expected=DOES_NOT_HOLD,
        note="observed -0.323 [-0.345, -0.305] (0.614 vs 0.937): kNN on the sentence embedding is by far the best detector here",
    ),
]

H = "icmlgym/HallucinationLabeling-v0"
APORIA_SOURCE = "APORIA: hallucinations as retrieval instability in the geometry of repeated responses (ICML 2026)"
APORIA_LP = Arm("APORIA-LP (40 random annotations)", H, "aporia-lp")
LOGREG = Arm("logistic regression on raw embeddings (same 40 annotations)", H, "hal-logreg")
SELF_CONSISTENCY = Arm("self-consistency (no labels)", H, "hal-self-consistency")

FINDINGS += [
    Finding(
        id="insides-genuine-responses-cluster-tighter",
        family="insides",
        claim="Genuine responses to a prompt cluster more tightly than hallucinated ones (mean pairwise cosine distance, hallucinated minus genuine, > 0).",
        source=APORIA_SOURCE,
        treatment=SELF_CONSISTENCY,
        control=0.0,
        measure=Mean("spread_gap"),
        direction="greater",
        unit="seed",
        expected=HOLDS,
        note="observed +0.327 [+0.309, +0.347] over seeds 0-9: hallucinated responses spread far more (a property of the data, any agent reports it); paired over prompts in tests/insides/test_hallucination_findings.py",
    ),
    Finding(
        id="insides-aporia-lp-beats-logreg",
        family="insides",
        claim="APORIA-LP with about 40 labels beats logistic regression on the raw embeddings with the same labels (F1 of the hallucinated class).",
        source=APORIA_SOURCE,
        treatment=APORIA_LP,
        control=LOGREG,
        measure=Mean("f1"),
        direction="greater",
        unit="seed",
        expected=HOLDS,
        note="observed +0.601 [+0.525, +0.668] (0.679 vs 0.077): with 40 labels in 384 dimensions the regression (C=1) predicts almost only the majority class",
    ),
    Finding(
        id="insides-aporia-lp-f1-above-0.9",
        family="insides",
        claim="APORIA-LP with about 40 labels reaches an F1 above 0.9.",
        source=APORIA_SOURCE,
        treatment=APORIA_LP,
        control=0.9,
        measure=Mean("f1"),
        direction="greater",
        unit="seed",
        expected=DOES_NOT_HOLD,
        note="observed 0.679, -0.221 [-0.257, -0.185] below 0.9: high, but not the paper's level on our synthetic answers",
    ),
]
