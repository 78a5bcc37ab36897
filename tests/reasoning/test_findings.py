"""The reasoning findings as declared in icmlgym/findings/reasoning.py, on seeds 0-9 at the smoke tier.

SpecExit's claims, at our scale (the shipped overthinking reasoner and draft, 4 problems per
seed): the exit head on the draft's hidden states shortens generations by a clear margin
against never exiting from the same prefix, with zero probes, and is cheaper than DEER under
the cost model; "accuracy within one point of never exiting" cannot be resolved with 40
paired episodes (the interval spans about +-0.14), so it is declared "not at our scale".
``icmlgym findings reasoning`` prints the table.
"""

from __future__ import annotations

import pytest

from icmlgym.catalog import extra_installed
from icmlgym.findings import family_findings
from icmlgym.findings.testing import assert_declared, evaluate_declared

pytestmark = pytest.mark.skipif(not extra_installed("reasoning"), reason="needs the [reasoning] extra (torch)")

FINDINGS = family_findings("reasoning")


@pytest.fixture(scope="module")
def results():
    return evaluate_declared(FINDINGS)


@pytest.mark.slow
@pytest.mark.finding
@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_declared_verdict_is_observed(results, finding):
    assert_declared(results[finding.id])


@pytest.mark.slow
def test_specexit_never_probes(results):
    """SpecExit's per-seed probe passes (the control side of the DEER-probes finding) are all zero."""
    res = results["reasoning-deer-pays-probes"]
    assert len(res.control) == 10 and (res.control == 0).all()
    assert (res.treatment > 0).all()
