"""Isolated runs (submissions) on the Ray executor: the same sandbox, records and containment as on the
process pool.

A Ray worker runs the evaluator, which starts the agent's sandbox on the worker's node
(bubblewrap there, else the fallback); the driver never imports the submission and checks
every record against its task (``runner/checks.py``).
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from icmlgym.envs.bandit.bernoulli_bandit import BernoulliBanditEnv
from icmlgym.runner.evaluator import hidden_seed
from icmlgym.runner.loop import RunTask
from icmlgym.runner.sandbox import SandboxOptions
from icmlgym.runner.submission import identify
from tests.security.conftest import ADVERSARIES, BANDIT, MODES, SECRET, SHORT, live_with_marker, local

pytest.importorskip("ray", reason="the Ray executor needs the [ray] extra: pip install 'icmlgym[ray]'")


@pytest.fixture(scope="module")
def ray_executor():
    from icmlgym.runner.ray_executor import RayExecutor

    ex = RayExecutor(workers=2, timeout=60)
    yield ex
    ex.close()


def task(agent: str, seed: int = 0, **options) -> RunTask:
    """An isolated task as ``icmlgym submit`` builds it (``Class`` of adversaries.py, or a shipped name)."""
    spec = f"{ADVERSARIES}:{agent}" if agent[:1].isupper() else agent
    opts = SandboxOptions(**{"mode": "auto", "call_timeout": 30.0, "load_timeout": 30.0, **options})
    return RunTask(BANDIT, spec, seed, "smoke", dict(SHORT), {}, 1, isolation=identify(spec, None, opts))


def test_honest_isolated_runs_on_ray_score_bit_for_bit_as_local_runs(ray_executor):
    tasks = [task("ucb1", s, mode=m) for m in MODES for s in (0, 1)]
    records = list(ray_executor.imap(tasks))  # in the order they finish
    assert [r.status for r in records] == ["ok"] * len(tasks), [r.error for r in records]
    assert sorted((r.isolation["sandbox"], r.seed) for r in records) == sorted((m, s) for m in MODES for s in (0, 1))
    for r in records:
        assert r.isolation["seeds"] == "public" and r.agent_name == "ucb1"
        ref = local("ucb1", seed=r.seed)
        assert [e.metrics for e in r.episodes] == [e.metrics for e in ref.episodes]
        assert [e.ret for e in r.episodes] == [e.ret for e in ref.episodes]


def test_attacks_on_ray_are_contained(ray_executor):
    by_agent = {r.agent_name: r for r in ray_executor.imap([
        task("RecordForger"), task("TrainEnvReader", hidden_seeds=SECRET), task("Forker"),
    ])}
    forger, reader, forker = (by_agent[f"adversaries:{a}"] for a in ("RecordForger", "TrainEnvReader", "Forker"))
    assert forger.status == "failed" and forger.error.startswith("protocol:") and forger.episodes == []
    # hidden instances on a Ray worker: the train env is the public instance, the evaluation the hidden one
    truth = BernoulliBanditEnv(instance_seed=hidden_seed(SECRET, f"{BANDIT}/instance_seed", 0)).means
    public_best = int(np.argmax(BernoulliBanditEnv().means))
    assert reader.status == "ok" and reader.isolation["seeds"] == "hidden"
    assert reader.episodes[0].metrics["pseudo_regret"] == pytest.approx(SHORT["horizon"] * (truth.max() - truth[public_best]))
    assert forker.status == "ok"
    deadline = time.monotonic() + 5
    while live_with_marker("icmlgym-security-forker") and time.monotonic() < deadline:
        time.sleep(0.1)
    left = live_with_marker("icmlgym-security-forker")
    for pid in left:
        os.kill(pid, 9)
    assert left == []


def test_a_hung_submission_on_ray_times_out_and_leaves_no_process():
    from icmlgym.runner.ray_executor import RayExecutor

    marker = "icmlgym-security-fork-then-hang"
    ex = RayExecutor(workers=2, timeout=12, max_retries=0)  # shares the module's Ray instance
    try:  # one hung run per sandbox kind, side by side
        records = list(ex.imap([task("ForkThenHang", s, mode=m, call_timeout=3600) for s, m in enumerate(MODES)]))
    finally:
        ex.close()
    assert [r.status for r in records] == ["timeout"] * len(MODES)
    deadline = time.monotonic() + 10
    while live_with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = live_with_marker(marker)
    for pid in left:
        os.kill(pid, 9)
    assert left == []
