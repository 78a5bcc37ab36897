"""FairLinBandit's findings, as declared in icmlgym/findings/fairbandit.py, on instances 0-9 at the smoke tier.

The primary metrics are ex-ante (the expectation over the algorithm's randomness, estimated from
4 seeds per instance, inside the p-mean; docs/fairbandit.md); the per-run Nash regret is kept as a
secondary finding. The rate claim is a fitted exponent of the ex-ante regret against T over
T = 500, 1,000, 2,000, 4,000. ``icmlgym findings fairbandit --seed-list ...`` prints the same
table on other instances.
"""

from __future__ import annotations

import pytest

from icmlgym.findings import family_findings
from icmlgym.findings.testing import assert_declared, evaluate_declared

FINDINGS = family_findings("fairbandit")


@pytest.fixture(scope="module")
def results():
    return evaluate_declared(FINDINGS)


@pytest.mark.finding
@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_declared_verdict_is_observed(results, finding):
    assert_declared(results[finding.id])


def test_ex_ante_regret_is_at_most_the_mean_per_run_regret(results):
    """Concavity of the p-mean (p <= 1): the ex-ante regret never exceeds the mean per-run regret."""
    ex = results["fairbandit-ucb-nash-below-linnash"]
    per_run = results["fairbandit-ucb-nash-per-run"]
    assert (ex.treatment <= per_run.treatment + 1e-12).all()
    assert (ex.control <= per_run.control + 1e-12).all()
