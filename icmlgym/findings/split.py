"""Split inference against model inversion (SplitInference-v0): the Golden Partition Zone claims.

The independent unit is the classifier: ``model_seed`` (its initialisation and training
batches, and the attack seeds derived from it), the same for both arms of a comparison.
Every arm runs at the smoke tier (zoo MLP, 4 hidden blocks of width 64 plus logits, the
black-box inverse-network attacker with 150 Adam steps). The R_c^2 and the logits claims are
declared on two data types, scikit-learn's digits and the generated 1-D signals (ids ending
``-signals``); the noise defence's cost on signals is measured by ``benchmarks/split_findings.py``
only (its tuning probes would take the family's tests past their time budget). The paper's ratio (R_c^2 split
over shallow split, "over 4x") is not a difference: the findings check the ordering and
docs/split.md reports the ratio of the means we measure (``python benchmarks/split_findings.py``).

"The error jump follows the R_c^2 drop, not the dimension" is declared on all three data types
(product images through the constant-width CNN, 8 channels): the ``split-oracle`` arm attacks
every block of a classifier; per classifier, the statistic is whether the R_c^2 criterion's block
is the block where the attacker's error rises most, minus the same for a null predictor (:class:`HitGap`):
a uniformly drawn block (``-not-chance``: a dimension-based predictor has no preference among
blocks of one width) or the block where the dimension falls (``-not-dimension``: the logits).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from icmlgym.findings.claims import (
    DOES_NOT_HOLD,
    HOLDS,
    NOT_AT_SCALE,
    Arm,
    Finding,
    Mean,
    Measure,
    tier_twins,
)

E = "icmlgym/SplitInference-v0"
SOURCE = "Golden Partition Zone: where to split between edge and cloud against model inversion (ICML 2026)"


def _arms(data: str, **env_kwargs) -> dict[str, Arm]:
    kw = {"data": data, **env_kwargs}
    return {
        "rc2": Arm(f"R_c^2 criterion ({data})", E, "split-rc2", env_kwargs=kw, unit_kwarg="model_seed"),
        "shallow": Arm(f"shallowest split ({data})", E, "split-shallowest", env_kwargs=kw, unit_kwarg="model_seed"),
        "logits": Arm(f"logits ({data})", E, "split-deepest", env_kwargs=kw, unit_kwarg="model_seed"),
        "features": Arm(f"last hidden block ({data})", E, "split-shallowest", env_kwargs=kw,
                        agent_kwargs={"where": "penultimate"}, unit_kwarg="model_seed"),
        "noise": Arm(f"shallowest + noise matched to the R_c^2 split ({data})", E, "split-shallow-noise",
                     env_kwargs=kw, unit_kwarg="model_seed"),
        "oracle": Arm(f"every block attacked ({data}{', ' + env_kwargs['arch'] if 'arch' in env_kwargs else ''})", E,
                      "split-oracle", env_kwargs=kw, unit_kwarg="model_seed"),
    }


DIGITS = _arms("digits")
SIGNALS = _arms("signals")
PRODUCTS = _arms("products", arch="cnn", width=8)  # the MLP does not learn the 48 product classes (docs/split.md)


@dataclass(frozen=True)
class HitGap(Measure):
    """Per classifier: how often ``predictor`` names the block of the largest error rise, minus how often ``null`` does.

    Reads the env metrics ``jump_at_<name>`` (1, 0, or 1/k for k tied blocks;
    :mod:`icmlgym.envs.split.criteria`) of an episode that attacked every block.
    """

    predictor: str = "rc2"
    null: str = "dimension"

    def value(self, runs, variants) -> float:
        return Mean(f"jump_at_{self.predictor}").value(runs, variants) - Mean(f"jump_at_{self.null}").value(runs, variants)

    def describe(self) -> str:
        return f"jump_at_{self.predictor} - jump_at_{self.null}"


_NULLS = {
    "chance": (("a block drawn uniformly among the candidates (what a dimension-based predictor amounts to when "
                "every hidden block has the same dimension)"), "chance"),
    "dimension": ("the block where the output dimension falls most (with constant width: the logits)", "dimension"),
}


def _jump_finding(data: str, arms: dict[str, Arm], null: str, expected: str, suffix: str = "") -> Finding:
    """The error jump at the R_c^2 block versus ``null`` (a key of :data:`_NULLS`), on one data type."""
    what, name = _NULLS[null]
    return Finding(
        id=f"split-jump-follows-rc2-not-{null}{suffix}",
        family="split",
        claim=("With the constant-width architecture, the error jump follows the R_c^2 drop, not the dimension: the block "
               f"where the attacker's error rises most is the R_c^2 criterion's block more often than it is {what} ({data})."),
        source=SOURCE,
        treatment=arms["oracle"],
        control=0.0,
        measure=HitGap("rc2", name),
        direction="greater",
        unit="classifier (model_seed)",
        min_effect=0.2,
        expected=expected,
        note="per classifier: hit of the R_c^2 block on the block of the largest error rise minus the null's hit "
             "(1, 0, or 1/k among k tied blocks); at least 0.2 (2 classifiers in 10) counts",
    )


DIGITS_FINDINGS = [
    Finding(
        id="split-rc2-beats-shallow",
        family="split",
        claim="Splitting where R_c^2 / total variance drops most gives several times the reconstruction error of a shallow split (paper: over 4x), with no probes.",
        source=SOURCE,
        treatment=DIGITS["rc2"],
        control=DIGITS["shallow"],
        measure=Mean("recon_error"),
        direction="greater",
        unit="classifier (model_seed)",
        expected=HOLDS,
    ),
    Finding(
        id="split-logits-beat-features",
        family="split",
        claim="Decision-level representations (logits) resist inversion more than feature-level ones (paper: 66% more).",
        source=SOURCE,
        treatment=DIGITS["logits"],
        control=DIGITS["features"],
        measure=Mean("recon_error"),
        direction="greater",
        unit="classifier (model_seed)",
        expected=HOLDS,
    ),
    Finding(
        id="split-shallow-noise-costs-accuracy",
        family="split",
        claim="A noise defence that brings a shallow split to the R_c^2 split's reconstruction error costs accuracy.",
        source=SOURCE,
        treatment=DIGITS["noise"],
        control=0.0,
        measure=Mean("accuracy_lost"),
        direction="greater",
        unit="classifier (model_seed)",
        expected=HOLDS,
    ),
]


def _on_signals(f: Finding, treatment: str, control: str) -> Finding:
    return replace(f, id=f"{f.id}-signals", claim=f.claim + " (1-D signals)", treatment=SIGNALS[treatment], control=SIGNALS[control])


# verdicts as observed on classifiers 0-9 (docs/split.md): the R_c^2 block hits the largest error rise on 8/10
# digits classifiers, 1/10 signals and 3/10 product CNNs; the logits (the only narrower block) on 2/10, 2/10, 8/10
JUMP_FINDINGS = [
    _jump_finding("digits", DIGITS, "chance", HOLDS),
    _jump_finding("digits", DIGITS, "dimension", NOT_AT_SCALE),
    _jump_finding("1-D signals", SIGNALS, "chance", NOT_AT_SCALE, "-signals"),
    _jump_finding("1-D signals", SIGNALS, "dimension", NOT_AT_SCALE, "-signals"),
    _jump_finding("product images, constant-width CNN", PRODUCTS, "chance", NOT_AT_SCALE, "-products"),
    _jump_finding("product images, constant-width CNN", PRODUCTS, "dimension", DOES_NOT_HOLD, "-products"),
]

FINDINGS = (DIGITS_FINDINGS + [_on_signals(DIGITS_FINDINGS[0], "rc2", "shallow"), _on_signals(DIGITS_FINDINGS[1], "logits", "features")]
            + JUMP_FINDINGS)

# ----------------------------------------------------------------------------- the standard tier
# `icmlgym findings split --tier standard --seeds 10` (docs/split.md "At the standard tier": MLP 6 x 64, 1,500 classifier
# steps, 400 attack steps; CNN 6 x 8 channels on products) gave another verdict than the smoke tier for four of the jump
# findings. Their smoke declarations stay as measured and hold at smoke only; a `-standard` twin declares what the
# standard tier gave. These twins were declared AFTER that run, from its table: they record an observation and are not
# a prediction fixed before looking (the other seven findings kept their declarations at the standard tier).
_STANDARD_VERDICTS = {
    "split-jump-follows-rc2-not-dimension": (
        HOLDS, ("Declared after the standard-tier run (classifiers 0-9): the R_c^2 block is the block of the largest error rise "
                "on 7/10 classifiers, the logits on 0/10: +0.70 [0.40, 1.00].")),
    "split-jump-follows-rc2-not-chance-signals": (
        DOES_NOT_HOLD, ("Declared after the standard-tier run (classifiers 0-9): the R_c^2 block hits the largest error rise on "
                        "0/10 classifiers, chance 1/6 per classifier: -0.167 [-0.167, -0.167].")),
    "split-jump-follows-rc2-not-chance-products": (
        HOLDS, ("Declared after the standard-tier run (classifiers 0-9): the R_c^2 block hits the largest error rise on 8/10 "
                "CNNs, chance 1/6 per classifier: +0.633 [0.333, 0.833].")),
    "split-jump-follows-rc2-not-dimension-products": (
        NOT_AT_SCALE, ("Declared after the standard-tier run (classifiers 0-9): R_c^2 block 8/10, logits 5/10: "
                       "+0.30 [0.00, 0.60].")),
}
FINDINGS = tier_twins(FINDINGS, _STANDARD_VERDICTS)
