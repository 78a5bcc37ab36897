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
    # a family suite: compact tables, then the aggregate over the entries that ran every task
    r = invoke(app, "leaderboard", "--store", store, "--suite", "bandit", "--tier", "smoke")
    assert r.exit_code == 0 and "aggregate over entries that ran every task" in r.output and "IQM" in r.output
    # a suite across families: no aggregate, and it says why
    r = invoke(app, "leaderboard", "--store", store, "--suite", "bandits", "--tier", "smoke")
    assert r.exit_code == 0 and "IQM" not in r.output and "spans families bandit, fairbandit" in r.output
    r = invoke(app, "leaderboard", "--store", store, "--suite", "bandits", "--format", "html")
    assert r.exit_code == 0 and "spans families bandit, fairbandit" in r.stdout and 'id="aggregate"' not in r.stdout
    r = invoke(app, "leaderboard", "--store", store, "--env", BANDIT, "--format", "html")
    assert r.exit_code == 0 and r.stdout.startswith("<!DOCTYPE html>")  # the report itself, on stdout
    html = tmp_path / "r.html"
    r = invoke(app, "leaderboard", "--store", store, "--env", BANDIT, "--format", "html", "--output", str(html))
    assert r.exit_code == 0 and html.read_text().startswith("<!DOCTYPE html>") and r.stdout == ""
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


def test_leaderboard_selection_typos_are_errors_with_suggestions(app, tmp_path, real_records):
    store = str(tmp_path / "s.db")
    with Leaderboard(store) as b:
        b.add(real_records)
    for args, words in (
        (["--env", "icmlgym/Bandit-v9"], ["--env", "did you mean", "icmlgym/Bandit-v0"]),
        (["--suite", "bandit-s"], ["--suite", "no suite 'bandit-s'", "bandits"]),
        (["--agent", "ucb"], ["--agent", "no runs of agent 'ucb'", "ucb1"]),
        (["--columns", "entry,avg"], ["--columns", "'avg'"]),
        (["--level", "family-ish"], ["--level"]),
    ):
        r = invoke(app, "leaderboard", "--store", store, *args)
        assert r.exit_code == 2, (args, r.output)
        assert all(w in r.output for w in words), (args, r.output)
        assert len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output


def test_read_only_commands_never_create_a_store(app, tmp_path, monkeypatch):
    missing = tmp_path / "no" / "such" / "dir" / "lb.db"
    for cmd in (["leaderboard"], ["compare", "a", "b"]):
        r = invoke(app, *cmd, "--store", str(missing))
        assert r.exit_code == 2 and "does not exist" in r.output
    assert not (tmp_path / "no").exists()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ICMLGYM_HOME", raising=False)
    r = invoke(app, "leaderboard")
    assert r.exit_code == 2 and "the default store" in r.output and not (tmp_path / "icmlgym-results").exists()


def test_merging_a_foreign_file_is_an_error_not_a_traceback(app, tmp_path):
    foreign = tmp_path / "notes.db"
    foreign.write_text("not a database")
    r = invoke(app, "leaderboard", "--store", str(tmp_path / "s.db"), "--merge", str(foreign))
    assert r.exit_code == 2 and "--merge" in r.output and "not an SQLite database" in r.output


def test_delete_asks_first_and_removes_one_entry(app, tmp_path):
    store = str(tmp_path / "s.db")
    with Leaderboard(store) as b:
        b.add([make_record(a, s, [1.0]) for a in ("keep", "drop") for s in range(3)])
    r = CliRunner().invoke(app, ["leaderboard", "--store", store, "--delete", "drop"], input="n\n")
    assert r.exit_code == 2 and "add --yes" in r.output  # not a terminal: never deletes without --yes
    r = invoke(app, "leaderboard", "--store", store, "--delete", "drp", "--yes")
    assert r.exit_code == 2 and "did you mean drop" in r.output
    r = invoke(app, "leaderboard", "--store", store, "--delete", "drop", "--yes")
    assert r.exit_code == 0 and "deleted 3 run(s)" in r.output
    with Leaderboard(store) as b:
        assert set(b.runs()["agent_name"]) == {"keep"} and len(b) == 3


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
