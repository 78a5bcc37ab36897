"""What every family's finding test does with its declarations (tests/<family>/test_findings.py)."""

from __future__ import annotations

from collections.abc import Sequence

from icmlgym.findings.claims import Finding
from icmlgym.findings.evaluate import Result, evaluate
from icmlgym.findings.table import markdown


def evaluate_declared(findings: Sequence[Finding], tier: str = "smoke", executor: str = "inprocess", workers: int | None = None) -> dict[str, Result]:
    """Every finding on its own ``test_units``, in one runner call; keyed by finding id.

    Families with many runs pass ``executor="process", workers=2`` (CI has two cores)."""
    return {r.finding.id: r for r in evaluate(findings, units=None, tier=tier, executor=executor, workers=workers)}


def assert_declared(result: Result) -> None:
    """The observed verdict is the declared one, and no run failed (the table row in the message)."""
    assert not result.failed_runs, result.failed_runs[:5]
    assert result.effect.n >= 10, f"{result.finding.id}: only {result.effect.n} units have a value\n{markdown([result])}"
    assert result.verdict == result.finding.expected, (
        f"{result.finding.id}: declared {result.finding.expected!r}, observed {result.verdict!r}\n{markdown([result])}"
    )
