"""icmlgym.nn's runtime: seeding, devices, run context, counters; cards' resources and training budgets."""

import pickle
import random

import numpy as np
import pytest
import torch

from icmlgym.catalog import Resources, Tier, TrainBudget
from icmlgym.nn import CostMeter, count_flops, current, determinism, fixed_threads, resolve_device, run_context, seed_everything


def test_seed_everything_makes_python_numpy_and_torch_repeat():
    draws = []
    for _ in range(2):
        mode = seed_everything(123)
        draws.append((random.random(), np.random.rand(), torch.rand(3).tolist()))
    assert mode == "bitwise" and draws[0] == draws[1]
    assert torch.are_deterministic_algorithms_enabled()


def test_resolve_device():
    assert resolve_device("cpu") == resolve_device(None) == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="no CUDA GPU"):
            resolve_device("cuda")


def test_run_context_sets_threads_and_restores_them():
    before = torch.get_num_threads()
    assert current() is None and determinism() == {"mode": "unseeded"}
    with run_context("cpu", threads=1) as ctx:
        assert current() is ctx and torch.get_num_threads() == 1
        seed_everything(0)
        assert determinism() == {"mode": "bitwise", "threads": 1}
    assert torch.get_num_threads() == before and current() is None
    with pytest.raises(ValueError, match="threads must be >= 1"):
        with run_context("cpu", threads=0):
            pass


def test_cost_meter():
    m = CostMeter({"gradient_steps": 2})
    m.add("gradient_steps")
    m.merge({"train_examples": 64})
    assert m.as_dict() == {"gradient_steps": 3.0, "train_examples": 64.0}
    with pytest.raises(ValueError, match="non-negative"):
        m.add("x", float("nan"))


def test_count_flops_from_shapes():
    lin = torch.nn.Linear(16, 8)
    fwd, bwd = count_flops(lin, [torch.zeros(4, 16)], backward=True)
    assert fwd == 2 * 4 * 16 * 8  # one (4x16) @ (16x8) matmul
    assert bwd == fwd  # the weight's gradient (the input needs none)
    assert lin.weight.grad is None  # the counting pass leaves no gradients behind
    assert count_flops(lin, [torch.zeros(4, 16)]) == (fwd, 0)


_COUNT_IN_A_FRESH_PROCESS = """
import sys, torch
from icmlgym.nn import count_flops
conv = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride={stride}, padding=1), torch.nn.ReLU())
print(*count_flops(conv, [torch.zeros(1, 3, 16, 16)], key=("probe", 0)), "sympy" in sys.modules)
"""


def test_count_flops_is_read_from_the_cache_in_another_process(tmp_path):
    """A second process gets the same count from the cache without the counting pass (and its ~900
    imports, sympy among them); a change the key does not name but the module tree shows (a stride)
    counts again."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "ICMLGYM_HOME": str(tmp_path)}

    def count(stride: int) -> tuple[list[int], bool]:
        fwd, bwd, imported = subprocess.run([sys.executable, "-c", _COUNT_IN_A_FRESH_PROCESS.format(stride=stride)], env=env,
                                            capture_output=True, text=True, check=True).stdout.split()
        return [int(fwd), int(bwd)], imported == "True"

    first, counted_imports = count(1)
    assert counted_imports  # the counting pass ran (and imported sympy)
    assert first == [2 * 8 * 16 * 16 * 3 * 3 * 3, 0]
    again, imported = count(1)
    assert again == first and not imported  # read from the cache
    assert len(list((tmp_path / "cache" / "flops").glob("*.json"))) == 1
    strided, imported = count(2)
    assert strided == [2 * 8 * 8 * 8 * 3 * 3 * 3, 0] and imported
    assert len(list((tmp_path / "cache" / "flops").glob("*.json"))) == 2


def test_resources_and_training_budget():
    assert Resources().get("num_cpus") == 1 and Resources(num_gpus=1).num_gpus == 1
    with pytest.raises(ValueError, match="num_cpus > 0"):
        Resources(num_cpus=0)
    t = Tier(train_steps=500, train_unit="gradient_steps")
    b = t.train_budget
    assert b == 500 and b.unit == "gradient_steps" and list(range(b))[-1] == 499
    assert pickle.loads(pickle.dumps(b)).unit == "gradient_steps"
    assert Tier(train_steps=3).train_budget.unit == "env_steps"
    with pytest.raises(ValueError, match="unknown training budget unit 'parsecs'"):
        Tier(train_unit="parsecs")
    with pytest.raises(ValueError, match=">= 0"):
        TrainBudget(-1)


def test_fixed_threads_sets_the_count_keeps_the_runs_device_and_restores():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with fixed_threads():
            assert torch.get_num_threads() == 1 and current().device == "cpu"
        assert torch.get_num_threads() == 2
        with run_context("cpu", threads=2):
            with fixed_threads(1):
                assert torch.get_num_threads() == 1
            assert torch.get_num_threads() == 2 and current().threads == 2
    finally:
        torch.set_num_threads(before)
