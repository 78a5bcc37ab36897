"""The vision findings as declared in icmlgym/findings/vision.py, on run seeds 0-9 at the smoke tier.

Olaf-World claims that Seq-Delta-REPA beats LAPO on cross-context probe accuracy and on
adaptation with 8 labels; we also test that the alignment (not the continuous latent) is what
helps, and whether it beats behaviour cloning from the same labels. LaViD claims gains over
cross-entropy and shuffled signatures, higher worst-group accuracy, an oracle upper bound, and a win over
MaKD (distillation from a vision-language teacher, LanguageToVisualKD-v1).
The declared verdicts are what we measured (docs/vision.md; ``icmlgym findings vision``).
110 runs, about 115 s of CPU, split over CI's two cores: the latent-action runs go in this
process (the pre-training of one seed is shared by its n_labels = 0 and 8 runs), the LaViD
runs meanwhile in worker processes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from icmlgym.catalog import extra_installed
from icmlgym.findings import family_findings
from icmlgym.findings.testing import assert_declared, evaluate_declared

pytestmark = pytest.mark.skipif(not extra_installed("vision"), reason="needs the [vision] extra (torch): pip install 'icmlgym[vision]'")

# the claims declared at the smoke tier; their standard-tier twins run with `icmlgym findings vision --tier standard`
FINDINGS = [f for f in family_findings("vision") if "smoke" in f.tiers]


@pytest.fixture(scope="module")
def results():
    latent = [f for f in FINDINGS if f.treatment.env_id == "icmlgym/LatentActionTransfer-v0"]
    assert len(FINDINGS) == 9 and len(family_findings("vision")) == 12  # 3 standard-tier twins
    lavid = [f for f in FINDINGS if f not in latent]
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(evaluate_declared, lavid, executor="process", workers=2)
        out = evaluate_declared(latent)
        out.update(pending.result())
    return out


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
