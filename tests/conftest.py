"""Suite-wide guards and reports.

- No test module leaves envs, agents or suites behind in the global catalog.
- At the end of a run, the time each family's tests took (setup + call + teardown, per folder
  ``tests/<family>/``), against the budget in docs/contributing.md (``FAMILY_BUDGET_S`` on 2 cores),
  with the CPU seconds of the pytest process and the child processes it waited for, and the load
  average at the start and the end: on a shared machine the wall time says more about the others.
"""

from __future__ import annotations

import os
import resource
from collections import defaultdict
from pathlib import Path

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


FAMILY_BUDGET_S = 90.0  # seconds of tests per family on 2 cores, heavy finding tests included (docs/contributing.md)
_seconds: dict[str, float] = defaultdict(float)
_counts: dict[str, int] = defaultdict(int)


def _family(nodeid: str) -> str:
    parts = Path(nodeid.split("::", 1)[0]).parts
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "(top)"


_slow_seconds = [0.0]
_cpu: dict[str, float] = defaultdict(float)
_load_at_start = os.getloadavg()[0]


def _cpu_seconds() -> float:
    """CPU of this process and of the children it has waited for (not pool workers still alive)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _cpu_seconds()
    yield
    _cpu[_family(item.nodeid)] += _cpu_seconds() - before


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _seconds[_family(report.nodeid)] += report.duration
    if "slow" in report.keywords:
        _slow_seconds[0] += report.duration
    if report.when == "call":
        _counts[_family(report.nodeid)] += 1


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _seconds:
        return
    tr = terminalreporter
    tr.section("test time per family (budget %.0f s each on 2 cores)" % FAMILY_BUDGET_S)
    tr.write_line(f"load average {_load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
                  "cpu: this process and the children it waited for")
    for fam, secs in sorted(_seconds.items(), key=lambda kv: -kv[1]):
        flag = "  OVER BUDGET" if secs > FAMILY_BUDGET_S and fam not in ("core", "leaderboard", "scale", "security", "substrate") else ""
        tr.write_line(f"{fam:<14} {secs:8.1f} s  {_cpu[fam]:8.1f} s cpu  {_counts[fam]:4d} tests{flag}")
    tr.write_line(f"{'total':<14} {sum(_seconds.values()):8.1f} s  {sum(_cpu.values()):8.1f} s cpu  {sum(_counts.values()):4d} tests")
    if _slow_seconds[0]:
        tr.write_line(f"of which tests marked slow: {_slow_seconds[0]:.1f} s (-m 'not slow' skips them locally)")
