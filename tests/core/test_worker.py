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


MAIN_SCRIPT = """
import os
OUT = os.environ["DRIVER_OUT"]
with open(OUT + ".imports", "a") as fh:  # one line per process that runs this script
    fh.write(f"{os.getpid()}\\n")

if __name__ == "__main__":
    from icmlgym.runner.api import make_tasks, run_tasks

    records = run_tasks(make_tasks("icmlgym/Bandit-v0", "random", seeds=3, env_kwargs={"horizon": 10}), "process", workers=1)
    with open(OUT + ".result", "w") as fh:
        fh.write(" ".join(r.status for r in records) + f" {os.getpid()}")
"""


def test_workers_do_not_run_the_main_script_again(tmp_path) -> None:
    """The warm server imports the driver's main script once; its workers find it loaded (before, each
    worker of ``icmlgym benchmark`` imported the whole CLI again)."""
    import os
    import subprocess

    script = tmp_path / "driver.py"
    script.write_text(MAIN_SCRIPT)
    base = str(tmp_path / "out")
    subprocess.run([sys.executable, str(script)], check=True, timeout=300, env={**os.environ, "DRIVER_OUT": base, "ICMLGYM_TRACE": ""})
    statuses = open(base + ".result").read().split()
    assert statuses[:3] == ["ok"] * 3, statuses
    pids = open(base + ".imports").read().split()
    assert pids[0] == statuses[3] and len(pids) == 2, pids  # the driver, then the warm server; no worker


def test_lazy_imports_finds_the_listed_packages_at_any_depth(tmp_path) -> None:
    from icmlgym.runner.warm import lazy_imports

    src = tmp_path / "m.py"
    src.write_text(
        "import os\n"
        "import sklearnish\n"  # another package: not listed
        "def f():\n"
        "    from sklearn.linear_model import LogisticRegression\n"
        "    import stable_baselines3\n"
        "    from stable_baselines3.common.logger import Logger\n"
        "# import sklearn.cluster  (a comment is not an import)\n"
    )
    assert lazy_imports([src, tmp_path / "missing.py"]) == [
        "sklearn.linear_model", "stable_baselines3", "stable_baselines3.common.logger"]


def _lazily_warmed(modules: str, names: tuple[str, ...]) -> list[bool]:
    import os
    import subprocess

    code = f"import sys, icmlgym.runner.warm as w; assert not w.FAILED, w.FAILED; print(*[n in sys.modules for n in {names!r}])"
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "ICMLGYM_WARM_MODULES": modules}, capture_output=True, text=True, check=True
    ).stdout.split()
    return [o == "True" for o in out]


def test_warm_server_preloads_what_the_sweeps_code_imports_inside_functions() -> None:
    # corpora.vision imports sklearn.datasets inside digits(): each DigitsOOD/CIM run paid ~0.27 CPU-s for it
    names = ("sklearn.datasets", "stable_baselines3")
    assert _lazily_warmed("icmlgym.envs.prediction.digits_ood,icmlgym.agents.sb3", names) == [True, True]
    assert _lazily_warmed("icmlgym.envs.bandit.bernoulli_bandit,icmlgym.baselines.generic", names) == [False, False]


def test_run_hooks_calls_each_loaded_modules_hook_and_survives_a_failing_one(monkeypatch) -> None:
    import types

    from icmlgym.runner import warm

    calls = []
    good = types.ModuleType("icmlgym._hook_good")
    good.warm_fork_server = lambda: calls.append("good")
    bad = types.ModuleType("icmlgym._hook_bad")

    def boom():
        raise RuntimeError("a hook that fails")

    bad.warm_fork_server = boom
    other = types.ModuleType("not_icmlgym_hook")  # only icmlgym's own modules are asked
    other.warm_fork_server = lambda: calls.append("other")
    for m in (good, bad, other):
        monkeypatch.setitem(sys.modules, m.__name__, m)
    assert warm.run_hooks() == ["icmlgym._hook_bad"]
    assert calls == ["good"]


def test_craft_sweeps_fork_server_has_loaded_the_world_generators_jit_code() -> None:
    import os
    import subprocess

    import pytest

    from icmlgym.catalog import extra_installed

    if not extra_installed("craft"):
        pytest.skip("needs the [craft] extra")
    code = ("import icmlgym.runner.warm as w; assert not w.FAILED, w.FAILED; "
            "from opensimplex import internals as i; print(len(i._noise3.signatures))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "ICMLGYM_WARM_MODULES": "icmlgym.envs.craft.craft_env"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1"], out  # each run's first world used to load them (about 0.35 CPU-s a run)


BLAS_AGENT = """
from icmlgym.agents.protocol import BaseAgent


class BlasThreads(BaseAgent):
    name = "blas-threads"

    def reset(self, seed, spec):
        from threadpoolctl import threadpool_info

        raise RuntimeError(f"blas threads {sorted(i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas')}")

    def act(self, obs, info):
        return 0
"""


def test_a_worker_runs_blas_on_its_runs_threads(tmp_path) -> None:
    # OpenBLAS starts a thread per core; a run of one thread (the card's num_cpus) spun the other
    # worker's core (hal-uncertainty: 3.2 CPU-s a run with two BLAS threads, 0.3 s with one)
    import pytest

    pytest.importorskip("threadpoolctl")
    from icmlgym.runner.api import make_tasks, run_tasks

    agent = tmp_path / "blas_agent.py"
    agent.write_text(BLAS_AGENT)
    tasks = make_tasks("icmlgym/Bandit-v0", f"{agent}:BlasThreads", seeds=1, env_kwargs={"horizon": 5})
    (rec,) = run_tasks(tasks, "process", workers=1)
    assert rec.status == "failed" and "blas threads [1]" in rec.error, rec.error


def test_limit_blas_rejects_zero_threads() -> None:
    import pytest

    from icmlgym.nn.runtime import limit_blas

    with pytest.raises(ValueError, match="threads must be >= 1"):
        limit_blas(0)


def test_start_server_starts_the_warm_server_at_once_and_the_sweep_forks_from_it() -> None:
    import multiprocessing as mp
    import os
    from multiprocessing import forkserver

    from icmlgym.runner.worker import start_server

    server = forkserver._forkserver
    if server._forkserver_pid is not None and not mp.active_children():
        server._stop()  # this test's start, not an earlier test's
    tasks = make_tasks("icmlgym/Bandit-v0", "tests.core.test_worker:WarmCheckAgent", seeds=2, env_kwargs={"horizon": 20})
    start_server(tasks)
    pid = server._forkserver_pid
    assert pid is not None and not mp.active_children()
    os.kill(pid, 0)  # it runs (importing) before any worker was asked for
    records = run_tasks(tasks, "process", workers=2)
    assert [r.status for r in records] == ["ok"] * 2, [r.error for r in records]
    assert server._forkserver_pid == pid  # the sweep did not start another


def test_benchmark_on_the_process_executor_with_its_server_started_early(tmp_path) -> None:
    """`icmlgym benchmark` starts the fork server before it opens the store (worker.start_server); the
    sweep then forks every run from it."""
    import os
    import subprocess

    env = {**os.environ, "ICMLGYM_HOME": str(tmp_path / "home"), "ICMLGYM_TRACE": str(tmp_path / "trace")}
    r = subprocess.run([sys.executable, "-m", "icmlgym.cli", "benchmark", "--suite", "bandit", "--seeds", "2", "--workers", "2", "--no-batch-seeds",
                        "--store", str(tmp_path / "lb.db")], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "8 run(s) (0 not ok)" in r.stderr, r.stderr[-2000:]
    import json

    lines = [json.loads(x) for x in (tmp_path / "trace").read_text().splitlines()]
    children = {d["pid"] for d in lines if d["ev"] == "child"}
    assert len(children) == 8  # a process per run
