"""The skill-neologism findings as declared in icmlgym/findings/skills.py, on seeds 0-9 at the smoke tier.

``icmlgym findings skills`` prints the table; docs/skills.md has it. The 80 smoke runs take about
4 minutes of one core, so the tests are marked slow (CI runs them).
"""

from __future__ import annotations

import pytest

from icmlgym.catalog import extra_installed
from icmlgym.findings import family_findings
from icmlgym.findings.testing import assert_declared, evaluate_declared

pytestmark = pytest.mark.skipif(not extra_installed("skills"), reason="needs the [skills] extra (torch)")

FINDINGS = family_findings("skills")


@pytest.fixture(scope="module")
def results():
    return evaluate_declared(FINDINGS)


@pytest.mark.slow
@pytest.mark.finding
@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_declared_verdict_is_observed(results, finding):
    assert_declared(results[finding.id])


@pytest.mark.slow
def test_the_neologism_arm_is_shared_between_findings(results):
    """One runner call: the neologism's runs are the same in every finding that uses them."""
    a = results["skills-full-ft-forgets-neologism-does-not"]
    b = results["skills-lora-forgets-neologism-does-not"]
    assert a.effect.n == b.effect.n == 10
