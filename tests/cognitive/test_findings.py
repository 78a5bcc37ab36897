"""The cognitive findings as declared in icmlgym/findings/cognitive.py, on seeds 0-9 at the smoke tier.

The paper claims that heavy-tailed, Dale-constrained RNNs generalise better than Gaussian ones
and have an effectively lower-rank connectivity. At our scale the generalisation difference is
within noise (declared "not at our scale"), the heavy tail *raises* the effective rank against a
light tail of equal second moment (declared "does not hold"), and holding the distribution lowers
it against a free Dale network (declared "holds"). ``icmlgym findings cognitive`` prints the table;
docs/cognitive.md has the larger measurements.
"""

from __future__ import annotations

import pytest

from icmlgym.catalog import extra_installed
from icmlgym.findings import family_findings
from icmlgym.findings.testing import assert_declared, evaluate_declared

pytestmark = pytest.mark.skipif(not extra_installed("cognitive"), reason="needs the [cognitive] extra (torch, POT)")

FINDINGS = family_findings("cognitive")


@pytest.fixture(scope="module")
def results():
    return evaluate_declared(FINDINGS)


@pytest.mark.finding
@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_declared_verdict_is_observed(results, finding):
    assert_declared(results[finding.id])


def test_paired_units_share_their_training_data(results):
    """Both arms of a comparison run on the same seeds: the light-tailed arm's values are the same
    runs in the two findings that use it (one runner call, shared runs)."""
    a = results["cognitive-heavy-tail-generalises-better"]
    b = results["cognitive-heavy-tail-lower-rank-than-light"]
    assert a.effect.n == b.effect.n == 10
