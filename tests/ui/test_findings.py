"""UI2Code^N's findings, as declared in icmlgym/findings/ui.py, on their test seeds 0-9 at the smoke tier.

Smoke tier: 192x144 pages, fast renderer. Iterative vs single pass: the drafting task in HTML
mode with the exact evaluator, 16 rounds (4 for the rounds comparison). RVPO vs absolute: the
polishing task, 8 rounds of G=4 candidates under the noisy evaluator (round offset sd 0.05,
candidate noise sd 0.005), 240 training renders each. docs/ui.md has the table;
``icmlgym findings ui`` prints it on other seeds.
"""

from __future__ import annotations

import pytest

from icmlgym.findings import family_findings
from icmlgym.findings.testing import assert_declared, evaluate_declared

FINDINGS = family_findings("ui")


@pytest.fixture(scope="module")
def results():
    return evaluate_declared(FINDINGS)


@pytest.mark.finding
@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_declared_verdict_is_observed(results, finding):
    assert_declared(results[finding.id])
