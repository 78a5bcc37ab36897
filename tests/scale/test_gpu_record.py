"""GPU runs: the record carries the CUDA device the agent used and GPU-seconds as a cost counter,
and the leaderboard filters and groups by device.

No GPU exists on the development and CI machines, so torch is replaced by a stand-in module that
reports one CUDA device; what is tested is the runner's accounting, not CUDA itself."""

from __future__ import annotations

import sys
import types

import pytest

from icmlgym.leaderboard import Leaderboard
from icmlgym.runner import provenance
from icmlgym.runner.loop import RunTask, execute
from tests.scale.conftest import BANDIT, agent


@pytest.fixture()
def fake_cuda(monkeypatch):
    torch = types.ModuleType("torch")
    torch.__version__ = "2.13.0+stand-in"
    torch.cuda = types.SimpleNamespace(
        is_available=lambda: True,
        current_device=lambda: 0,
        get_device_name=lambda index=0: "Stand-in H200",
    )
    torch.version = types.SimpleNamespace(cuda="12.8")
    threads = {"n": 1}  # the runner sets and restores torch's thread count around a run
    torch.get_num_threads = lambda: threads["n"]
    torch.set_num_threads = lambda n: threads.update(n=int(n))
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(provenance, "nvidia_gpus", lambda: ["Stand-in H200, 570.86"])
    return torch


def test_cuda_run_records_the_device_and_gpu_seconds(fake_cuda):
    rec = execute(RunTask(BANDIT, agent("TrainsBriefly"), 0, device="cuda", agent_kwargs={"seconds": 0.2}))
    assert rec.status == "ok", rec.error
    device = dict(rec.device)
    # the agent never seeds torch, so the record says its run was not made deterministic
    assert device.pop("determinism") == {"mode": "unseeded", "threads": 1}
    assert device == {
        "requested": "cuda", "type": "cuda", "name": "Stand-in H200", "cuda": "12.8",
        "torch": "2.13.0+stand-in", "driver": "570.86",
    }
    assert rec.hardware["gpu"] == "Stand-in H200"
    share = rec.train_wall_time / len(rec.episodes)
    assert rec.train_wall_time >= 0.2
    for e in rec.episodes:
        assert e.cost["gpu_seconds"] == pytest.approx(e.wall_time + share)
    # the run's counter is the sum of its episodes' (which is what scoring sums): training included
    assert rec.cost["gpu_seconds"] == pytest.approx(rec.train_wall_time + sum(e.wall_time for e in rec.episodes))


def test_auto_means_cuda_when_torch_sees_it_and_cpu_runs_have_no_gpu_seconds(fake_cuda):
    auto = execute(RunTask(BANDIT, "ucb1", 0, device="auto"))
    cpu = execute(RunTask(BANDIT, "ucb1", 0, device="cpu"))
    assert auto.device["type"] == "cuda" and "gpu_seconds" in auto.cost
    assert cpu.device["type"] == "cpu" and "gpu_seconds" not in cpu.cost
    assert all("gpu_seconds" not in e.cost for e in cpu.episodes)
    assert auto.metric("pseudo_regret") == cpu.metric("pseudo_regret")  # the device does not change a bandit's play


def test_leaderboard_filters_and_groups_gpu_and_cpu_runs(fake_cuda, tmp_path):
    records = [execute(RunTask(BANDIT, "ucb1", s, device=d)) for d in ("cuda", "cpu") for s in range(3)]
    with Leaderboard(tmp_path / "lb.db") as board:
        board.add(records)
        assert len(board.runs(device="cuda")) == 3 and len(board.runs(device="cpu")) == 3
        assert set(board.runs(device="cuda")["device_name"]) == {"Stand-in H200"}
        eps = board.episodes(device="cuda")
        assert (eps["cost.gpu_seconds"] > 0).all()
        table = board.table(env=BANDIT, by_device=True)
        assert sorted(table["entry"]) == sorted(["ucb1 [cpu: " + records[3].device["name"] + "]", "ucb1 [cuda: Stand-in H200]"])
