"""Every family's docs page states each declared finding with its declared verdict and the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from icmlgym.findings import families, family_findings

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("family", families())
def test_docs_table_matches_the_declarations(family):
    text = (DOCS / f"{family}.md").read_text()
    assert f"icmlgym findings {family}" in text, f"docs/{family}.md does not give the command"
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| ") and line.count("|") > 8}
    for f in family_findings(family):
        assert f.id in rows, f"docs/{family}.md has no table row for {f.id}"
        cells = [c.strip() for c in rows[f.id].split("|")]
        assert f.expected in cells, f"docs/{family}.md row {f.id} does not state the declared verdict {f.expected!r}: {cells}"
        status = cells[-2]
        assert status.startswith(("reproduced", "partly", "not at our scale")), f"{f.id}: status {status!r}"
