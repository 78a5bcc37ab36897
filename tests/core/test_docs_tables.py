"""The shared tables agree with the catalog, column by column (one source per fact: the cards).

- README's env table: every registered env is a row, and each row's family, kind, primary metric,
  direction and extra are the card's (the "family (paper)" text after the family name is free).
- The docs' agent tables (a header with ``name``/``agent`` and ``kind``): every agent named there is
  registered, and it is called ``reference`` exactly when some card names it as its reference agent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from icmlgym import catalog
from icmlgym.catalog import AGENTS, agent_kind

ROOT = Path(__file__).resolve().parents[2]


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Markdown tables as (header cells, rows of cells)."""
    out, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|\s*$", lines[i + 1]):
            header = [c.strip() for c in lines[i].strip().strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            out.append((header, rows))
        else:
            i += 1
    return out


def _readme_env_table() -> list[list[str]]:
    for header, rows in tables((ROOT / "README.md").read_text()):
        if header[:2] == ["id", "family (paper)"]:
            assert header == ["id", "family (paper)", "kind", "primary metric (direction)", "extra"], header
            return rows
    pytest.fail("README.md has no env table (header: | id | family (paper) | kind | primary metric (direction) | extra |)")


def test_readme_env_table_matches_the_cards():
    rows = _readme_env_table()
    ids = [r[0].strip("`") for r in rows]
    assert sorted(ids) == sorted(c.id for c in catalog.cards()), "README's env table and the catalog list different envs"
    for env_id, family, kind, metric, extra in rows:
        c = catalog.card(env_id.strip("`"))
        assert family.split(":")[0] == c.family, (c.id, "family", family)
        assert kind == c.kind, (c.id, "kind", kind)
        assert metric == f"`{c.primary_metric}` ({c.direction})", (c.id, "primary metric", metric)
        assert extra.split(" ")[0] == (c.extra or "—"), (c.id, "extra", extra)


def test_docs_agent_tables_match_the_cards():
    checked = 0
    for path in sorted((ROOT / "docs").glob("*.md")):
        for header, rows in tables(path.read_text()):
            names = [h.lower() for h in header]
            if "kind" not in names or not ({"name", "agent"} & set(names)):
                continue
            col = names.index("name") if "name" in names else names.index("agent")
            k = names.index("kind")
            for row in rows:
                m = re.fullmatch(r"`([a-z0-9][a-z0-9-]*)`", row[col])
                if not m or len(row) <= k:
                    continue
                name = m.group(1)
                assert name in AGENTS, f"{path.name}: agent {name!r} is not registered"
                says_reference = row[k].split(" ")[0].strip("*").lower() == "reference"
                # "reference" means exactly "some card's reference agent"; other agents may be described freely
                # (baseline, variant of the paper's method, ...)
                assert says_reference == (agent_kind(name) == "reference"), (
                    f"{path.name}: {name} is listed as {row[k]!r}, but the cards make it {agent_kind(name)!r}"
                )
                checked += 1
    assert checked > 0
