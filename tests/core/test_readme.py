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


def test_the_use_examples_run(tmp_path, monkeypatch):
    """The Python examples under "## Use" run as written (in a scratch folder)."""
    text = (ROOT / "README.md").read_text()
    use = text.split("## Use", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.+?)```", use, re.S)
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    assert (tmp_path / "report.html").exists()


def test_the_family_examples_run(tmp_path, monkeypatch):
    """The Python examples under "## The families" run as written, in order, in one namespace."""
    text = (ROOT / "README.md").read_text()
    families = text.split("## The families", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.+?)```", families, re.S)
    assert len(blocks) >= 6
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec("import gymnasium as gym\nimport icmlgym", namespace)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
