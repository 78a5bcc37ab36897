"""The CLI's polish: --version, list formats without extra packages, suites, info summaries, one
meaning per short flag, help without markup accidents, and bad input as one-line errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import click
import pytest
from typer.main import get_command
from typer.testing import CliRunner

import icmlgym
from icmlgym.cli import app

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_version():
    r = invoke("--version")
    assert r.exit_code == 0 and r.output.strip() == f"icmlgym {icmlgym.__version__}"


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "csv"])
def test_list_formats_need_no_extra_package(fmt):
    r = invoke("list", "--format", fmt)
    assert r.exit_code == 0, r.output
    ids = [c.id for c in icmlgym.catalog.cards()]
    if fmt == "json":
        assert [row["id"] for row in json.loads(r.output)] == ids
    elif fmt == "csv":
        assert [row["id"] for row in csv.DictReader(io.StringIO(r.output))] == ids
    elif fmt == "markdown":
        assert r.output.startswith("| id | family |") and all(f"| {i} |" in r.output for i in ids)
    else:
        assert all(i in r.output.split() for i in ids)  # every id whole


@pytest.mark.parametrize("width", [80, 120])
def test_list_table_fits_the_width_and_never_cuts_an_id(width, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(width))
    r = invoke("list")
    assert max(len(line) for line in r.output.splitlines()) <= width
    for c in icmlgym.catalog.cards():
        assert c.id in r.output.split()


def test_suites_command_says_which_suites_aggregate():
    r = invoke("suites", "--format", "json")
    rows = {row["suite"]: row for row in json.loads(r.output)}
    assert rows["bandit"]["aggregate"] == "yes" and rows["bandits"]["aggregate"].startswith("no")
    assert set(rows) == set(icmlgym.suites())


def test_info_summarises_long_lists_unless_all():
    short = invoke("info", "icmlgym/Craft-v0").output
    if "more line(s)" not in short:
        pytest.skip("the craft extra is not installed: no task list to summarise")
    full = invoke("info", "icmlgym/Craft-v0", "--all").output
    assert len(full.splitlines()) > 1000 > len(short.splitlines())


def test_one_meaning_per_short_flag_and_no_markup_accidents():
    group = get_command(app)
    meanings: dict[str, set[str]] = {}
    for name, cmd in group.commands.items():
        for p in cmd.params:
            if isinstance(p, click.Option):
                for opt in p.opts + p.secondary_opts:
                    if len(opt) == 2:
                        meanings.setdefault(opt, set()).add(p.name)
    assert {k: v for k, v in meanings.items() if len(v) > 1} == {}
    assert "extra [ray]" in invoke("submit", "--help").output


@pytest.mark.parametrize(
    "args, words",
    [
        (["run", "icmlgym/Bandit-v0", "-a", "ucb1", "--seeds", "0", "--no-store"], ["--seeds must be at least 1"]),
        (["run", "icmlgym/Bandit-v0", "-a", "ucb1", "--seeds", "-1", "--no-store"], ["--seeds must be at least 1"]),
        (["run", "icmlgym/Bandit-v0", "-a", "ucb1", "--seed-list", "1,x", "--no-store"], ["--seed-list", "'x'"]),
        (["run", "icmlgym/Bandit-v0", "-a", "ucb1", "--seed-list", "1,1", "--no-store"], ["repeats seed 1"]),
        (["run", "icmlgym/Bandit-v0", "-a", "ucb1", "-e", "horizon=abc", "--no-store"], ["horizon=", "horizon", "integer"]),
        (["run", "icmlgym/Bandit-v0", "-a", "ucb1", "-e", "horizn=5", "--no-store"], ["takes no argument 'horizn'", "did you mean horizon"]),
        (["run", "icmlgym/Bandit-v0", "-a", "ucb1", "-k", "nosuch=1", "--no-store"], ["--agent-kwarg", "'nosuch'"]),
        (["run", "icmlgym/Bandt-v0", "-a", "ucb1", "--no-store"], ["did you mean", "icmlgym/Bandit-v0"]),
        (["run", "icmlgym/Bandit-v0", "-a", "ucb", "--no-store"], ["did you mean ucb1"]),
        (["benchmark", "--suite", "bandit-s"], ["unknown suite", "bandits"]),
        (["benchmark", "--suite", "bandits", "-a", "ucb"], ["--agent", "did you mean ucb1"]),
        (["agents", "--env", "icmlgym/Bandt-v0"], ["--env", "did you mean"]),
        (["list", "--format", "xlsx"], ["unknown --format 'xlsx'"]),
        (["list", "--family", "bandt"], ["--family", "did you mean bandit"]),
    ],
)
def test_bad_input_is_a_one_line_error_before_anything_runs(args, words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1 and r.output.startswith("error: "), r.output
    assert all(w in r.output for w in words), r.output
    assert not (tmp_path / "icmlgym-results").exists()  # nothing ran, nothing was stored


def test_help_does_not_import_the_heavy_parts():
    code = "import sys; from icmlgym.cli import app; print(','.join(m for m in ('pandas', 'sqlalchemy', 'torch', 'scipy', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
