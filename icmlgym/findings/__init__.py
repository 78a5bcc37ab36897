"""Findings: the papers' claims declared as data, run through the runner, judged by paired statistics.

    from icmlgym.findings import evaluate, family_findings
    results = evaluate(family_findings("screening"), units=range(10), tier="smoke")

Each family declares its claims once (``icmlgym/findings/<family>.py``, a ``FINDINGS`` list of
:class:`Finding`); ``icmlgym findings [FAMILY]`` and the family's finding tests use the same
declarations. See docs/findings.md.
"""

from icmlgym.findings.claims import (
    DOES_NOT_HOLD,
    HOLDS,
    MIN_UNITS,
    NOT_AT_SCALE,
    VERDICTS,
    Arm,
    ExAntePMeans,
    Exponent,
    Finding,
    Mean,
    Measure,
    Share,
)
from icmlgym.findings.evaluate import Result, evaluate
from icmlgym.findings.registry import all_findings, families, family_findings, get
from icmlgym.findings.stats import Effect, paired_effect, verdict

__all__ = [
    "DOES_NOT_HOLD",
    "HOLDS",
    "MIN_UNITS",
    "NOT_AT_SCALE",
    "VERDICTS",
    "Arm",
    "Effect",
    "ExAntePMeans",
    "Exponent",
    "Finding",
    "Mean",
    "Measure",
    "Result",
    "Share",
    "all_findings",
    "evaluate",
    "families",
    "family_findings",
    "get",
    "paired_effect",
    "verdict",
]
