"""The worker protocol (icmlgym/runner/worker.py): workers forked from a warm server."""

from __future__ import annotations

import sys

from icmlgym.baselines.generic import RandomAgent
from icmlgym.runner.api import make_tasks, run_tasks
from icmlgym.runner.worker import warm_modules


class WarmCheckAgent(RandomAgent):
    """Fails its run unless its worker was forked from a server that imported the runner and the env."""

    name = "warm-check"

    def reset(self, seed, spec):
        warm = sys.modules.get("icmlgym.runner.warm")
        if warm is None or "icmlgym.envs.bandit.bernoulli_bandit" not in warm.os.environ.get(warm.ENV_VAR, ""):
            raise RuntimeError("this worker was not forked from a warm server")
        if warm.FAILED:
            raise RuntimeError(f"the warm server failed to import {warm.FAILED}")
        super().reset(seed, spec)


def test_workers_start_from_a_warm_server() -> None:
    tasks = make_tasks("icmlgym/Bandit-v0", "tests.core.test_worker:WarmCheckAgent", seeds=3, env_kwargs={"horizon": 20})
    records = run_tasks(tasks, "process", workers=2)
    assert [r.status for r in records] == ["ok"] * 3, [r.error for r in records]


def test_only_icmlgym_modules_are_preimported() -> None:
    tasks = make_tasks("icmlgym/Bandit-v0", "ucb1", seeds=1)
    tasks += make_tasks("icmlgym/Bandit-v0", "tests.core.test_worker:WarmCheckAgent", seeds=1)
    mods = warm_modules(tasks)
    assert "icmlgym.envs.bandit.bernoulli_bandit" in mods and "icmlgym.baselines.generic" in mods
    assert all(m.startswith("icmlgym.") for m in mods)
