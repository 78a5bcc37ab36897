"""Every family's docs page states each declared finding with its declared verdict and the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from icmlgym.findings import families, family_findings

DOCS = Path(__file__).resolve().parents[2] / "docs"
STATUSES = ("reproduced", "partly", "not at our scale")


@pytest.mark.parametrize("family", families())
def test_docs_state_every_declared_finding_with_its_verdict(family):
    text = (DOCS / f"{family}.md").read_text()
    assert f"icmlgym findings {family}" in text, f"docs/{family}.md does not give the command"
    lines = text.splitlines()
    for f in family_findings(family):
        rows = [line for line in lines if line.startswith("|") and f.id in line]
        assert rows, f"docs/{family}.md has no table row for {f.id}"
        assert any(f.expected in row for row in rows), f"docs/{family}.md's row for {f.id} does not state the declared verdict {f.expected!r}"


@pytest.mark.parametrize("family", ["arena", "craft", "fairbandit", "games", "screening", "sketch"])
def test_docs_state_reproduced_partly_or_not_per_claim(family):
    """The families of issue #15 give a status column: reproduced / partly / not at our scale."""
    text = (DOCS / f"{family}.md").read_text()
    for f in family_findings(family):
        row = next(line for line in text.splitlines() if line.startswith(f"| {f.id} |"))
        status = [c.strip() for c in row.split("|")][-2]
        assert status.startswith(STATUSES), f"docs/{family}.md {f.id}: status {status!r}"
