"""Suite-wide guards: no test module leaves envs, agents or suites behind in the global catalog."""

from __future__ import annotations

import pytest

from icmlgym import catalog


def _snapshot():
    return (
        dict(catalog._CARDS),
        dict(catalog.AGENTS),
        {name: list(members) for name, members in catalog._SUITES.items()},
        dict(catalog.EXTRAS),
    )


@pytest.fixture(scope="module", autouse=True)
def _catalog_left_as_found(request):
    """Tests register temporary envs with ``icmlgym.registered(...)``; anything left over fails here."""
    before = _snapshot()
    yield
    after = _snapshot()
    if after != before:
        parts = ("env ids", "agent names", "suites", "extras")
        diffs = [
            f"{what}: added {sorted(set(a) - set(b))}, removed {sorted(set(b) - set(a))}, changed {sorted(k for k in set(a) & set(b) if a[k] != b[k])}"
            for what, b, a in zip(parts, before, after)
            if a != b
        ]
        pytest.fail(f"{request.node.nodeid} left the catalog changed: " + "; ".join(diffs), pytrace=False)
