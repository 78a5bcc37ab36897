"""README.md stays true: its test command is the one CI runs, and its env table lists the catalog."""

import re
from pathlib import Path

import icmlgym

ROOT = Path(__file__).resolve().parents[2]


def _test_command() -> str:
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- test-command -->", 1)[1]
    return re.search(r"```bash\n(.+?)\n```", block, re.S).group(1).strip()


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert _test_command() in ci.splitlines()


def test_env_table_lists_every_registered_env():
    text = (ROOT / "README.md").read_text()
    table = text.split("<!-- env-table -->", 1)[1].split("<!-- /env-table -->", 1)[0]
    listed = set(re.findall(r"`(icmlgym/[A-Za-z0-9]+-v\d+)`", table))
    registered = {c.id for c in icmlgym.catalog.cards() if c.family != "test"}
    assert listed == registered
