"""Helpers for the security tests: run a submission isolated, as ``icmlgym submit`` does."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from icmlgym.envs import register_all
from icmlgym.runner.loop import RunTask, execute
from icmlgym.runner.record import RunRecord
from icmlgym.runner.sandbox import SandboxOptions, bwrap_path
from icmlgym.runner.submission import identify

register_all()  # once, before any test runs evaluators side by side in threads

HERE = Path(__file__).resolve().parent
ADVERSARIES = HERE / "adversaries.py"
BANDIT = "icmlgym/Bandit-v0"
SHORT = {"horizon": 300}  # a short bandit keeps every isolated run under a second or two
SECRET = bytes(range(32))

# bubblewrap is what a board uses; CI installs it (.ci/run). Without it the fallback is tested.
MODES = ["bwrap", "none"] if bwrap_path() else ["none"]


def _spec(agent: str) -> str:
    """A class of adversaries.py by its name (capitalised), else the agent as given (a shipped name, a file)."""
    return f"{ADVERSARIES}:{agent}" if agent[:1].isupper() else agent


def isolated(agent: str, env_id: str = BANDIT, seed: int = 0, env_kwargs: dict | None = None, episodes: int | None = 1,
             agent_kwargs: dict | None = None, name: str | None = None, **options) -> RunRecord:
    """One isolated run of ``agent`` (``Class`` of adversaries.py, or any submission spec)."""
    spec = _spec(agent)
    opts = SandboxOptions(**{"mode": "auto", "call_timeout": 30.0, "load_timeout": 30.0, **options})
    iso = identify(spec, name, opts)
    kwargs = SHORT if env_kwargs is None and env_id == BANDIT else (env_kwargs or {})
    task = RunTask(env_id, spec, seed, "smoke", dict(kwargs), dict(agent_kwargs or {}), episodes, isolation=iso)
    return execute(task)


def local(agent: str, env_id: str = BANDIT, seed: int = 0, env_kwargs: dict | None = None, episodes: int | None = 1,
          agent_kwargs: dict | None = None) -> RunRecord:
    """The same run in this process, without isolation (public seeds)."""
    spec = _spec(agent)
    kwargs = SHORT if env_kwargs is None and env_id == BANDIT else (env_kwargs or {})
    return execute(RunTask(env_id, spec, seed, "smoke", dict(kwargs), dict(agent_kwargs or {}), episodes))


def side_by_side(*runs: Callable[[], Any]) -> list[Any]:
    """Independent isolated runs, two at a time (the family's budget is two cores), results in order.

    Most of an isolated run is its sandbox's start (a new interpreter importing numpy, gymnasium
    and icmlgym) and the waits of the protocol, so two of them overlap well."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return [f.result() for f in [pool.submit(run) for run in runs]]


def live_with_marker(marker: str) -> list[int]:
    """Pids of live (non-zombie) processes whose command line holds ``marker``."""
    out = []
    for pid in Path("/proc").iterdir():
        if not pid.name.isdigit():
            continue
        try:
            cmd = (pid / "cmdline").read_bytes().decode(errors="replace")
            state = (pid / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state != "Z" and int(pid.name) != __import__("os").getpid():
            out.append(int(pid.name))
    return out


@pytest.fixture(params=MODES)
def mode(request) -> str:
    return request.param
