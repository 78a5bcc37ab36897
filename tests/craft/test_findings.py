"""DeepHA's findings as declared in icmlgym/findings/craft.py, on worlds 0-9 through the runner.

The world is the unit: every task run at a seed plays the same generated world, so the 8
held-out ordered tasks of a world are pooled into one value per world (success rate; steps to
success given success). ``icmlgym findings craft --seed-list ...`` prints the same table on
other worlds; docs/craft.md has the numbers.
"""

from __future__ import annotations

import pytest

pytest.importorskip("crafter", reason="the Craft family needs the [craft] extra (crafter)")

from icmlgym.envs.craft.tasks import heldout_smoke_tasks  # noqa: E402
from icmlgym.findings import family_findings  # noqa: E402
from icmlgym.findings.craft import HELDOUT  # noqa: E402
from icmlgym.findings.testing import assert_declared, evaluate_declared  # noqa: E402

FINDINGS = family_findings("craft")


@pytest.fixture(scope="module")
def results():
    return evaluate_declared(FINDINGS, executor="process", workers=2)


@pytest.mark.finding
@pytest.mark.slow
@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_declared_verdict_is_observed(results, finding):
    assert_declared(results[finding.id])


def test_the_declared_tasks_are_the_held_out_split():
    assert tuple(t.name for t in heldout_smoke_tasks()) == HELDOUT
