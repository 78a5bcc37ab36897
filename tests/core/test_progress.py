"""Progress of a sweep: a line per finished run where stderr is not a terminal, a bar with an ETA
where it is."""

from __future__ import annotations

import io

from icmlgym.runner.progress import RunProgress
from icmlgym.runner.record import RunRecord


def _rec(seed: int, status: str = "ok") -> RunRecord:
    return RunRecord(env_id="icmlgym/Bandit-v0", agent_name="ucb1", seed=seed, tier="smoke", status=status, wall_time=0.25)


def test_a_line_per_finished_run_when_not_a_terminal():
    out = io.StringIO()
    with RunProgress(3, stream=out) as p:
        for s in range(3):
            p.update(_rec(s))
    lines = out.getvalue().splitlines()
    assert [line.split("]")[0] for line in lines] == ["[1/3", "[2/3", "[3/3"]
    assert "icmlgym/Bandit-v0 ucb1 seed 0: ok in 0.2 s" in lines[0] and "left" in lines[0] and "left" not in lines[-1]


def test_every_n_runs_but_never_hides_a_failure():
    out = io.StringIO()
    with RunProgress(10, stream=out, every=5) as p:
        for s in range(10):
            p.update(_rec(s, "failed" if s == 2 else "ok"))
    heads = [line.split("]")[0].strip("[ ") for line in out.getvalue().splitlines()]
    assert heads == ["3/10", "5/10", "10/10"]


def test_a_live_bar_with_an_eta_in_a_terminal():
    out = io.StringIO()
    with RunProgress(4, stream=out, live=True) as p:
        for s in range(4):
            p.update(_rec(s))
        assert p.eta() == 0
    text = out.getvalue()
    assert "runs" in text and "4/4" in text and "eta" in text and "[1/4]" not in text
