import json

from typer.testing import CliRunner

from icmlgym.cli import app

runner = CliRunner()


def test_help_on_every_command():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for cmd in ("list", "info", "agents", "run", "check", "benchmark"):
        r = runner.invoke(app, [cmd, "--help"])
        assert r.exit_code == 0, cmd
        assert "Usage" in r.output


def test_list_and_info():
    r = runner.invoke(app, ["list", "--format", "csv"])
    assert r.exit_code == 0 and "icmlgym/Bandit-v0,bandit,single,pseudo_regret,yes,,bandit-thompson,min" in r.output
    r = runner.invoke(app, ["info", "icmlgym/Bandit-v0"])
    assert r.exit_code == 0
    for text in ("pseudo_regret", "bandit-thompson", "Discrete(10)", "Action Space", "smoke"):
        assert text in r.output
    r = runner.invoke(app, ["info", "icmlgym/Bandt-v0"])
    assert r.exit_code == 2 and "did you mean" in r.output


def test_check_command():
    r = runner.invoke(app, ["check", "icmlgym/Bandit-v0"])
    assert r.exit_code == 0, r.output
    for name in ("check_env", "sb3 check_env", "card contract", "seed determinism", "invalid action", "step after end", "recorded rollout", "docstrings"):
        assert name in r.output
    assert r.output.count("pass") == 8


def test_run_command_writes_json(tmp_path):
    out = tmp_path / "recs.json"
    r = runner.invoke(app, ["run", "icmlgym/Bandit-v0", "--agent", "ucb1", "--seeds", "2", "--executor", "inprocess",
                            "-e", "horizon=100", "--no-store", "--json", str(out)])
    assert r.exit_code == 0, r.output
    recs = json.loads(out.read_text())
    assert len(recs) == 2 and recs[0]["episodes"][0]["length"] == 100


def test_run_command_errors_clearly():
    r = runner.invoke(app, ["run", "icmlgym/Bandit-v0", "--agent", "nosuchagent", "--no-store"])
    assert r.exit_code == 2 and "unknown agent" in r.output
    r = runner.invoke(app, ["run", "icmlgym/Bandit-v0", "--agent", "ucb1", "--tier", "huge", "--no-store"])
    assert r.exit_code == 2 and "no tier" in r.output
    r = runner.invoke(app, ["run", "icmlgym/Bandit-v0", "--agent", "ucb1", "-e", "horizon", "--no-store"])
    assert r.exit_code != 0


def test_run_skips_stored_seeds_and_rerun_replaces_them(tmp_path):
    from icmlgym.leaderboard import Leaderboard

    store = str(tmp_path / "lb.db")
    args = ["run", "icmlgym/Bandit-v0", "--agent", "ucb1", "--seeds", "2", "--executor", "inprocess", "--store", store]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, args + ["--seed-list", "0,1,2"])
    assert r.exit_code == 0, r.output
    assert "skipping 2 of 3 run(s) already stored as ok" in r.output and "1 new" in r.output
    r = runner.invoke(app, args + ["--seed-list", "0,1,2", "--resume"])  # the old flag: the default
    assert r.exit_code == 0 and "skipping 3 of 3" in r.output
    with Leaderboard(store) as board:
        before = board.runs()
        assert sorted(before["seed"]) == [0, 1, 2]
    r = runner.invoke(app, args + ["--rerun"])
    assert r.exit_code == 0 and "2 replacing the stored run of their key" in r.output
    with Leaderboard(store) as board:
        after = board.runs()
        assert sorted(after["seed"]) == [0, 1, 2] and len(set(after["run_id"]) - set(before["run_id"])) == 2
    r = runner.invoke(app, ["run", "icmlgym/Bandit-v0", "--agent", "ucb1", "--no-store", "--resume"])
    assert r.exit_code == 2 and "--resume needs a store" in r.output


def test_run_refuses_a_foreign_store_without_touching_it(tmp_path):
    store = tmp_path / "notes.db"
    store.write_bytes(b"not a database\n")
    r = runner.invoke(app, ["run", "icmlgym/Bandit-v0", "--agent", "ucb1", "--store", str(store)])
    assert r.exit_code == 2 and "is not a leaderboard store" in r.output
    assert store.read_bytes() == b"not a database\n"
