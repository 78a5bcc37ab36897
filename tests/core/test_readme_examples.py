"""Every Python block of README.md is a program: it runs verbatim as its own file, in a fresh
interpreter, in an empty folder (as a reader who pastes it into a file would run it).

A block's experiments use their own store (``experiments.db``), so nothing lands in the main
job's board: the test checks that ``icmlgym-results/`` is never created.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def readme_blocks() -> list[tuple[str, str]]:
    """``(id, code)`` for every ```python block, the id naming its section and position."""
    text = (ROOT / "README.md").read_text()
    out = []
    for section in re.split(r"\n## ", text)[1:]:
        title = re.sub(r"[^a-z0-9]+", "-", section.splitlines()[0].lower()).strip("-")[:30]
        for i, block in enumerate(re.findall(r"```python\n(.+?)```", section, re.S)):
            out.append((f"{title}-{i + 1}", block))
    return out


BLOCKS = readme_blocks()


def test_the_readme_has_its_examples():
    assert len(BLOCKS) >= 9  # Use (3) and one per family (6+)


@pytest.mark.parametrize("code", [c for _, c in BLOCKS], ids=[i for i, _ in BLOCKS])
def test_readme_block_runs_as_its_own_program(code, tmp_path):
    if "Craft-v0" in code:
        pytest.importorskip("crafter", reason="the craft example needs the [craft] extra")
    script = tmp_path / "example.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    env.pop("ICMLGYM_HOME", None)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    # no run failed silently (the run example prints "agent seed status ..." per run)
    assert not re.search(r"^\S+ \d+ (failed|timeout) ", proc.stdout, re.M), proc.stdout[-3000:]
    assert not (tmp_path / "icmlgym-results").exists(), "an example wrote into the main job's default store"
