"""The process-tree resident-memory limit (icmlgym.runner.limits) and the process executor's --memory-mb."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from icmlgym.runner import make_tasks, run_tasks
from icmlgym.runner.limits import TreeMemoryLimit, kill_tree, process_tree, rss_bytes, tree_rss_bytes

AGENTS = Path(__file__).with_name("substrate_agents.py")
BANDIT = "icmlgym/Bandit-v0"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except FileNotFoundError:
        return False


def _parent_with_child(child_code: str) -> subprocess.Popen:
    code = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {child_code!r}]); time.sleep(60)"
    return subprocess.Popen([sys.executable, "-c", code])


def test_tree_rss_counts_descendants_and_kill_tree_ends_them():
    proc = _parent_with_child("import time; x = b'\\x01' * (100 * 2**20); time.sleep(60)")
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            tree = process_tree(proc.pid)
            if len(tree) == 2 and rss_bytes(tree[1]) > 100 * 2**20:
                break
            time.sleep(0.05)
        tree = process_tree(proc.pid)
        assert len(tree) == 2 and tree[0] == proc.pid
        child = tree[1]
        assert rss_bytes(child) > 80 * 2**20 > rss_bytes(proc.pid)
        assert tree_rss_bytes(proc.pid) == pytest.approx(rss_bytes(proc.pid) + rss_bytes(child), rel=0.05)
    finally:
        killed = kill_tree(proc.pid)
        proc.wait(timeout=10)
    assert set(killed) == set(tree)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_limit_kills_a_tree_whose_child_passes_it():
    proc = _parent_with_child("import time; x = b'\\x01' * (300 * 2**20); time.sleep(60)")
    with TreeMemoryLimit(proc.pid, 200, interval=0.05) as watch:
        code = proc.wait(timeout=30)
    assert code < 0 and watch.exceeded
    assert watch.peak_bytes > 200 * 2**20 and len(watch.killed) == 2
    assert "exceeded its memory limit of 200 MB" in watch.message()


def test_limit_leaves_a_small_tree_alone():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    with TreeMemoryLimit(proc.pid, 500, interval=0.05) as watch:
        assert proc.wait(timeout=10) == 0
    assert not watch.exceeded and 0 < watch.peak_bytes < 500 * 2**20


@pytest.mark.parametrize("bad", [0, -5, None])
def test_limit_rejects_a_non_positive_limit(bad):
    with pytest.raises(ValueError, match="positive number of MB"):
        TreeMemoryLimit(os.getpid(), bad)


def test_process_executor_runs_torch_under_a_resident_limit_below_its_address_space(tmp_path):
    """torch reserves far more address space than it touches: an RLIMIT_AS of this size would kill it."""
    limit = 700
    report = tmp_path / "vmpeak"
    recs = run_tasks(
        make_tasks(BANDIT, f"{AGENTS}:TorchAgent", [0], agent_kwargs={"report": str(report)}),
        executor="process", timeout=120, memory_limit_mb=limit,
    )
    assert recs[0].status == "ok", recs[0].error
    assert int(report.read_text()) / 1024 > limit  # the run's virtual size passed the limit; its resident memory did not


def test_process_executor_fails_a_run_whose_child_exceeds_the_limit(tmp_path):
    pidfile = tmp_path / "child"
    tasks = make_tasks(BANDIT, f"{AGENTS}:ChildHogAgent", [0], agent_kwargs={"mb": 900, "pidfile": str(pidfile)})
    tasks += make_tasks(BANDIT, "ucb1", [0])
    recs = {r.agent_name: r for r in run_tasks(tasks, executor="process", workers=2, timeout=120, memory_limit_mb=600)}
    hog = recs["child-hog"]
    assert hog.status == "failed" and "exceeded its memory limit of 600 MB" in hog.error
    assert recs["ucb1"].status == "ok"
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the run's child process outlived the limit"


def test_cli_run_with_memory_mb(tmp_path):
    """`icmlgym run --memory-mb`: a torch run passes under the limit; a run whose child exceeds it is stored as failed."""
    import json

    from typer.testing import CliRunner

    from icmlgym.cli import app

    r = CliRunner()
    ok_json, hog_json = tmp_path / "ok.json", tmp_path / "hog.json"
    base = ["run", BANDIT, "--seeds", "1", "--executor", "process", "--no-store", "--memory-mb"]
    res = r.invoke(app, [*base, "700", "--agent", f"{AGENTS}:TorchAgent", "--json", str(ok_json)])
    assert json.loads(ok_json.read_text())[0]["status"] == "ok", res.output
    res = r.invoke(app, [*base, "600", "--agent", f"{AGENTS}:ChildHogAgent", "-k", "mb=900", "--json", str(hog_json)])
    rec = json.loads(hog_json.read_text())[0]
    assert rec["status"] == "failed" and "exceeded its memory limit of 600 MB" in rec["error"]
    res = r.invoke(app, ["run", BANDIT, "--agent", "random", "--executor", "inprocess", "--no-store", "--memory-mb", "100"])
    assert res.exit_code == 2 and "needs --executor process or ray" in res.output
