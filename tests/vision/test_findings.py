"""The vision findings as declared in icmlgym/findings/vision.py, on run seeds 0-9 at the smoke tier.

Olaf-World claims that Seq-Delta-REPA beats LAPO on cross-context probe accuracy and on
adaptation with 8 labels; we also test that the alignment (not the continuous latent) is what
helps, and whether it beats behaviour cloning from the same labels. LaViD claims gains over
cross-entropy and shuffled signatures, higher worst-group accuracy, and an oracle upper bound.
The declared verdicts are what we measured (docs/vision.md; ``icmlgym findings vision``).
The runs go in process: the pre-training of one seed is shared by its n_labels = 0 and 8 runs.
About 100 runs (3-4 minutes of CPU): marked slow, over the family's 90 s budget (see
/work/notes or docs/vision.md).
"""

from __future__ import annotations

import pytest

from icmlgym.catalog import extra_installed
from icmlgym.findings import family_findings
from icmlgym.findings.testing import assert_declared, evaluate_declared

pytestmark = pytest.mark.skipif(not extra_installed("vision"), reason="needs the [vision] extra (torch): pip install 'icmlgym[vision]'")

FINDINGS = family_findings("vision")


@pytest.fixture(scope="module")
def results():
    return evaluate_declared(FINDINGS)


@pytest.mark.slow
@pytest.mark.finding
@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_declared_verdict_is_observed(results, finding):
    assert_declared(results[finding.id])


@pytest.mark.slow
def test_arms_shared_between_findings_are_the_same_runs(results):
    """Seq-Delta-REPA at n_labels = 0 is one set of runs for two findings."""
    a = results["vision-seq-delta-repa-beats-lapo-cross-context"]
    b = results["vision-alignment-beats-no-alignment-cross-context"]
    assert a.effect.n == b.effect.n == 10
    assert (a.treatment == b.treatment).all()
