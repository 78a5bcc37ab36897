"""Killing the driver of a sandboxed sweep leaves no process behind and a readable store; --resume finishes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Callable

from icmlgym.leaderboard import Leaderboard
from icmlgym.runner.limits import process_tree

DRIVER = textwrap.dedent("""
    import sys
    from icmlgym import catalog
    from icmlgym.cli import app

    if __name__ == "__main__":
        catalog._SUITES["security-kill"] = [("icmlgym/Bandit-v0", {"horizon": 30})]
        app(["submit", sys.argv[1], "--suite", "security-kill", "--seeds", "4", "--workers", "1", "--store", sys.argv[2]])
""")

SLOW = textwrap.dedent("""
    import time
    from icmlgym.baselines.generic import RandomAgent

    class Slow(RandomAgent):
        def act(self, obs, info):
            time.sleep(0.03)
            return super().act(obs, info)
""")  # about 0.9 s a run in 30 steps: long enough to be killed mid-sweep, and few wake-ups for a loaded machine to delay


def _stored(store: Path) -> int:
    if not store.exists() or store.stat().st_size == 0:
        return 0
    try:
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute("SELECT count(*) FROM icmlgym_runs").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _alive(pids: set[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(pid)
    return out


def _kill_when(cmd: list[str], env: dict, ready: Callable[[set[int]], bool], sig: int) -> list[int]:
    """Start the driver, kill it with ``sig`` once ``ready(processes seen so far)`` (within 60 s), and
    return the processes it had started that are still alive 10 s later."""
    driver = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not ready(seen):
            seen.update(process_tree(driver.pid))
            time.sleep(0.05)
        assert ready(seen), f"the sweep was not ready within 60 s (processes seen: {sorted(seen)})"
        seen.update(process_tree(driver.pid))
        os.kill(driver.pid, sig)
        driver.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _alive(seen - {driver.pid}) and time.monotonic() < deadline:
            time.sleep(0.1)
        return _alive(seen - {driver.pid})
    finally:
        for pid in _alive(seen | {driver.pid}):
            os.kill(pid, signal.SIGKILL)


def _kill_mid_sweep(cmd: list[str], env: dict, store: Path, sig: int, wait_for: int) -> None:
    """Kill the sweep's driver with ``sig`` once ``wait_for`` runs are stored, and check that every
    process it had started (the driver, its forkserver, workers and their sandboxes) is gone."""
    left = _kill_when(cmd, env, lambda seen: _stored(store) >= wait_for and len(seen) > 3, sig)
    assert left == [], f"{signal.Signals(sig).name}: processes left behind"


def test_killing_the_driver_mid_sweep_then_resuming(tmp_path):
    agent = tmp_path / "slow.py"
    agent.write_text(SLOW)
    store = tmp_path / "lb.db"
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    cmd = [sys.executable, str(script), f"{agent}:Slow", str(store)]
    done = 0
    for sig in (signal.SIGTERM, signal.SIGKILL):
        _kill_mid_sweep(cmd, env, store, sig, done + 1)
        with Leaderboard(store) as b:  # readable, and what finished is there
            now = len(b)
            assert done < now <= 4 and b.damaged() == {} and set(b.runs()["status"]) == {"ok"}
            done = now
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"resuming: {done} run(s) already stored" in r.stderr
    with Leaderboard(store) as b:
        assert len(b) == 4 and set(b.runs()["status"]) == {"ok"}


LONG = textwrap.dedent("""
    import time
    from icmlgym.baselines.generic import RandomAgent

    class Long(RandomAgent):
        def act(self, obs, info):
            time.sleep(0.5)
            return super().act(obs, info)
""")  # 60 steps: a 30 s run, which must not outlive a killed driver by its remaining length


def test_a_killed_drivers_workers_end_with_it_not_with_their_runs(tmp_path):
    """The process executor without the sandbox: SIGKILL the driver while its two workers are in 30 s runs;
    the fork server and both workers are gone within 10 s (they held the driver's end of the fork
    server's alive pipe, and ran on until their runs ended)."""
    agent = tmp_path / "long.py"
    agent.write_text(LONG)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    cmd = [sys.executable, "-m", "icmlgym.cli", "run", "icmlgym/Bandit-v0", "--agent", f"{agent}:Long", "-e", "horizon=60",
           "--seeds", "2", "--workers", "2", "--store", str(tmp_path / "lb.db")]
    started: dict[str, float] = {}

    def in_their_runs(seen: set[int]) -> bool:  # the driver, its fork server and two workers, a second into their runs
        if len(seen) >= 4:
            started.setdefault("t", time.monotonic())
        return "t" in started and time.monotonic() - started["t"] > 1.0

    left = _kill_when(cmd, env, in_their_runs, signal.SIGKILL)
    assert left == [], f"processes left behind 10 s after the driver's SIGKILL: {left}"
