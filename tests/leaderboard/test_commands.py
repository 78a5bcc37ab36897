"""The leaderboard, compare and submit commands (through Typer's test runner)."""

from __future__ import annotations

import io
import textwrap

import pandas as pd
import pytest
from typer.testing import CliRunner

from icmlgym import catalog
from icmlgym.leaderboard import Leaderboard

from .conftest import BANDIT, make_record

SUITE = "leaderboard-test"  # a one-env suite, so that submissions stay small


@pytest.fixture(autouse=True)
def one_env_suite(monkeypatch):
    # only for these tests: the catalog's suites are left as they were afterwards
    monkeypatch.setitem(catalog._SUITES, SUITE, [(BANDIT, {})])


@pytest.fixture(scope="module")
def app():
    from icmlgym.cli import app as cli_app

    return cli_app


def invoke(app, *args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_help_texts(app):
    for cmd, words in (("leaderboard", ["--suite", "--format", "Pareto", "rank interval"]), ("compare", ["probability", "Mann"]), ("submit", ["--timeout", "--memory-mb", "source hash", "failed"])):
        out = invoke(app, cmd, "--help").output
        for w in words:
            assert w in out, (cmd, w)


def test_submit_stores_runs_and_resumes(app, tmp_path):
    store = str(tmp_path / "s.db")
    r = invoke(app, "submit", "ucb1", "--suite", SUITE, "--seeds", "2", "--store", store, "--timeout", "120")
    assert r.exit_code == 0, r.output
    assert "ucb1" in r.output and "2/3 ⚠" in r.output
    with Leaderboard(store) as b:
        runs = b.runs()
        assert len(runs) == 2 and set(runs["status"]) == {"ok"} and set(runs["suite"]) == {SUITE}
        assert runs["agent_source_hash"].str.len().min() > 0
    r = invoke(app, "submit", "ucb1", "--suite", SUITE, "--seeds", "3", "--store", store)
    assert "2 run(s) already stored, 1 to go" in r.output
    with Leaderboard(store) as b:
        assert len(b) == 3


def test_submission_that_fails_to_import_is_stored_as_failed(app, tmp_path):
    agent = tmp_path / "broken_agent.py"
    agent.write_text("import numpy\nraise RuntimeError('this submission cannot be imported')\n")
    store = str(tmp_path / "s.db")
    with Leaderboard(store) as b:
        b.add(make_record("earlier", 0, [1.0]))
    r = invoke(app, "submit", str(agent), "--suite", SUITE, "--seeds", "2", "--store", store)
    assert r.exit_code == 1
    with Leaderboard(store) as b:  # the store opens: unharmed
        runs = b.runs()
        failed = runs[runs["status"] == "failed"]
        assert len(failed) == 2 and failed["error"].str.contains("this submission cannot be imported").all()
        assert len(runs[runs["agent_name"] == "earlier"]) == 1
        t = b.table(env=BANDIT)
        # the store mixes a local entry (public seeds) with a submission (hidden seeds): each says which
        assert t.set_index("entry").loc[failed["agent_name"].iloc[0] + " [hidden seeds]", "failed"] == 2


def test_hanging_and_memory_hungry_submissions(app, tmp_path):
    agent = tmp_path / "bad_agents.py"
    agent.write_text(textwrap.dedent("""
        import time
        import numpy as np
        from icmlgym import BaseAgent

        class Hang(BaseAgent):
            def act(self, obs, info):
                time.sleep(3600)

        class Hog(BaseAgent):
            def act(self, obs, info):
                self.block = np.ones(8 * 1024**3 // 8)  # 8 GB
                return 0
    """))
    store = str(tmp_path / "s.db")
    r = invoke(app, "submit", f"{agent}:Hang", "--suite", SUITE, "--seeds", "2", "--store", store, "--timeout", "3", "--workers", "2")
    assert r.exit_code == 1
    r = invoke(app, "submit", f"{agent}:Hog", "--suite", SUITE, "--seeds", "1", "--store", store, "--memory-mb", "3000")
    assert r.exit_code == 1
    with Leaderboard(store) as b:
        runs = b.runs().set_index("agent_name")
        assert list(runs.loc[["bad_agents:Hang"], "status"]) == ["timeout", "timeout"]
        assert "timeout of 3 s" in runs.loc[["bad_agents:Hang"], "error"].iloc[0]
        assert runs.loc["bad_agents:Hog", "status"] == "failed" and "MemoryError" in runs.loc["bad_agents:Hog", "error"]


def test_submit_rejects_bad_arguments(app, tmp_path):
    r = invoke(app, "submit", "ucb1", "--suite", "no-such-suite", "--store", str(tmp_path / "s.db"))
    assert r.exit_code == 2 and "unknown suite 'no-such-suite'" in r.output
    r = invoke(app, "submit", "ucb1", "--suite", SUITE, "--seeds", "0")
    assert r.exit_code == 2 and "--seeds must be at least 1" in r.output
    r = invoke(app, "submit", "ucb1", "--suite", SUITE, "--tier", "huge", "--store", str(tmp_path / "s.db"))
    assert r.exit_code == 2 and "no tier 'huge'" in r.output


def test_leaderboard_and_compare_commands(app, tmp_path, real_records):
    store = str(tmp_path / "s.db")
    with Leaderboard(store) as b:
        b.add(real_records)
    r = invoke(app, "leaderboard", "--store", store, "--env", BANDIT, "--format", "markdown")
    assert r.exit_code == 0 and r.output.count("| icmlgym/Bandit-v0 |") == 3
    r = invoke(app, "leaderboard", "--store", store, "--suite", "bandits", "--tier", "smoke")
    assert r.exit_code == 0 and "aggregate" in r.output and "IQM" in r.output
    html = tmp_path / "r.html"
    r = invoke(app, "leaderboard", "--store", store, "--env", BANDIT, "--format", "html", "--output", str(html))
    assert r.exit_code == 0 and html.read_text().startswith("<!DOCTYPE html>")
    exported = tmp_path / "e.csv"
    r = invoke(app, "leaderboard", "--store", store, "--format", "csv", "--export", str(exported))
    assert r.exit_code == 0 and len(pd.read_csv(exported)) == len(real_records)
    other = str(tmp_path / "other.db")
    r = invoke(app, "leaderboard", "--store", other, "--merge", str(exported), "--format", "csv")
    assert r.exit_code == 0 and f"merged {len(real_records)} new run(s)" in r.output
    r = invoke(app, "compare", "bandit-thompson", "random", "--store", store, "--env", BANDIT, "--format", "csv")
    assert r.exit_code == 0
    rows = pd.read_csv(io.StringIO(r.output))
    assert rows.set_index("task").loc[BANDIT, "p_improve"] == pytest.approx(1.0)
    r = invoke(app, "compare", "bandit-thompson", "nobody", "--store", store)
    assert r.exit_code == 2 and "no entry 'nobody'" in r.output
    r = invoke(app, "leaderboard", "--store", store, "--env", "icmlgym/Nope-v0")
    assert r.exit_code == 0 and "no runs match" in r.output


def test_leaderboard_command_refuses_a_foreign_file(app, tmp_path):
    p = tmp_path / "thesis.db"
    p.write_text("not a database")
    r = invoke(app, "leaderboard", "--store", str(p))
    assert r.exit_code == 2 and "not an SQLite database" in r.output
    assert p.read_text() == "not a database"
    r = invoke(app, "leaderboard", "--store", str(tmp_path / "x.db"), "--format", "pdf")
    assert r.exit_code == 2 and "unknown --format 'pdf'" in r.output


def test_the_core_cli_stores_into_an_empty_board(tmp_path):
    """`icmlgym run` passes `board.add if board else None` to the runner: an empty board must count as a board."""
    from icmlgym.cli import app as core_app

    store = str(tmp_path / "core.db")
    r = CliRunner().invoke(core_app, ["run", BANDIT, "--agent", "ucb1", "--seeds", "2", "--executor", "inprocess", "--store", store])
    assert r.exit_code == 0, r.output
    with Leaderboard(store) as b:
        assert len(b) == 2
    r = CliRunner().invoke(core_app, ["leaderboard", "--store", store, "--format", "csv"])
    assert r.exit_code == 0 and pd.read_csv(io.StringIO(r.output)).loc[0, "seeds"] == 2
