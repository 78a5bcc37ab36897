"""The LayerOOD-v0 findings as declared in icmlgym/findings/insides.py, on seeds 0-9 at the smoke tier.

The paper claims that SAE codes of consecutive layers and their transitions carry a domain
signature that separates OOD text better than last-layer detectors. On the shipped small
encoder (all-MiniLM-L6-v2) over docstring topics, one-class, we observe the opposite: the
transition detector loses to last-layer Mahalanobis and, by far, to kNN on the sentence
embedding (declared "does not hold"); trained SAEs do beat random-feature SAEs inside the same
detector, by a small margin (declared "holds"). ``icmlgym findings insides`` prints the table.
"""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.catalog import extra_installed
from icmlgym.findings import family_findings
from icmlgym.findings.testing import assert_declared, evaluate_declared

pytestmark = pytest.mark.skipif(not extra_installed("text"), reason="needs the [text] extra (the shipped encoder, transformers, torch)")

FINDINGS = [f for f in family_findings("insides") if f.treatment.env_id == "icmlgym/LayerOOD-v0"]  # APORIA's: test_hallucination_findings.py


@pytest.fixture(scope="module")
def results():
    return evaluate_declared(FINDINGS)


@pytest.mark.slow
@pytest.mark.finding
@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_declared_verdict_is_observed(results, finding):
    assert_declared(results[finding.id])


@pytest.mark.slow
def test_arms_are_paired_on_the_same_runs(results):
    """The transition arm is one set of runs shared by all three comparisons (same seeds, same episodes)."""
    first = results[FINDINGS[0].id].treatment
    for f in FINDINGS:
        assert results[f.id].effect.n == 10
        np.testing.assert_array_equal(results[f.id].treatment, first)
