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


def _warmed(modules: str) -> tuple[bool, bool]:
    import os
    import subprocess

    code = "import sys, icmlgym.runner.warm as w; assert not w.FAILED, w.FAILED; print('torch' in sys.modules, 'torch._inductor' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "ICMLGYM_WARM_MODULES": modules}, capture_output=True, text=True, check=True
    ).stdout.split()
    return out == ["True", "True"], out == ["False", "False"]


def test_warm_server_imports_torch_only_for_sweeps_that_reach_it() -> None:
    # a neural sweep's workers would each pay torch's import and torch._inductor's (seed_everything)
    assert _warmed("icmlgym.nn.runtime")[0]
    # a cheap sweep's server stays lean: no torch
    assert _warmed("icmlgym.envs.bandit.bernoulli_bandit,icmlgym.baselines.generic")[1]
