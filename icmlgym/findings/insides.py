"""Layer-transition OOD detection (LayerOOD-v0): SAE transitions against last-layer detectors.

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
