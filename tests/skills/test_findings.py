"""The skills findings declared at the smoke tier (icmlgym/findings/skills.py), on seeds 0-9.

``icmlgym findings skills`` prints the table; docs/skills.md has it. The smoke runs (90 runs,
about 80 CPU-s: docs/skills.md, "Test and replication cost") go through two worker processes (CI has two cores) and are marked slow; the
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


def test_far_minus_near_is_a_difference_of_differences_and_reuses_the_code_runs():
    """The far-vs-near measure subtracts the near target's value from the far one's, per unit; over
    the two arms the effect is (gain on code) - (gain on near). Its bridge runs on ``code`` are the
    same runs (same plan key) as the other bridge claims', so the runner does them once."""
    from types import SimpleNamespace

    from icmlgym.findings.evaluate import _key
    from icmlgym.findings.skills import BRIDGE, BRIDGE_BOTH, GENERAL_BOTH, FarMinusNear

    def runs(**loss):
        return [[SimpleNamespace(episodes=[SimpleNamespace(metrics={"target_loss": v})])] for v in loss.values()]

    variants = [{"target": "code"}, {"target": "near"}]
    m = FarMinusNear("target_loss")
    general, bridge = m.value(runs(code=2.8, near=2.6), variants), m.value(runs(code=2.1, near=2.5), variants)
    assert general == pytest.approx(0.2) and bridge == pytest.approx(-0.4)
    assert general - bridge == pytest.approx((2.8 - 2.1) - (2.6 - 2.5))
    assert [dict(v) for v in GENERAL_BOTH.variants] == variants == [dict(v) for v in BRIDGE_BOTH.variants]
    assert _key(BRIDGE_BOTH, 3, {"target": "code"}, 3, "smoke") == _key(BRIDGE, 3, {}, 3, "smoke")
