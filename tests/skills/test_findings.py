"""The skills findings declared at the smoke tier (icmlgym/findings/skills.py), on seeds 0-9.

``icmlgym findings skills`` prints the table; docs/skills.md has it. The smoke runs (about a
minute of CPU) go through two worker processes (CI has two cores) and are marked slow; the
claims declared at the standard tier only are run by ``icmlgym findings skills --tier standard``
(results in docs/skills.md), not here.
"""

from __future__ import annotations

import pytest

from icmlgym.catalog import extra_installed
from icmlgym.findings import family_findings
from icmlgym.findings.testing import assert_declared, evaluate_declared

pytestmark = pytest.mark.skipif(not extra_installed("skills"), reason="needs the [skills] extra (torch)")

FINDINGS = [f for f in family_findings("skills") if "smoke" in f.tiers]


@pytest.fixture(scope="module")
def results():
    return evaluate_declared(FINDINGS, executor="process", workers=2)


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


def test_claims_declared_at_the_standard_tier_only_are_skipped_at_smoke():
    from dataclasses import replace

    from icmlgym.findings import evaluate

    later = [f for f in family_findings("skills") if "smoke" not in f.tiers]
    assert [f.id for f in later] == ["midtrain-late-high-does-not-recover-early"]
    assert later[0].tiers == ("standard", "full")
    assert evaluate(later, tier="smoke") == []
    with pytest.raises(ValueError, match="tiers must be a non-empty subset"):
        replace(later[0], tiers=("quick",))
