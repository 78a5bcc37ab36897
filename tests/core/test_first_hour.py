"""A researcher's first hour, replayed through the command line (issue #16): the main job twice,
the README's commands, Ctrl-C and a rerun, four `--resume` drivers at once; after each step the
store holds one run per seed and the leaderboard counts each seed once.

The main job runs on the `bandit` family suite (4 agents x 3 seeds) so that it fits the test
budget; every command runs in its own interpreter, with stdout not a terminal (as in CI logs).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from icmlgym.leaderboard import Leaderboard

ROOT = Path(__file__).resolve().parents[2]
BANDIT = "icmlgym/Bandit-v0"

SLOW_AGENT = textwrap.dedent('''
    import os
    import time

    import icmlgym


    class Slow(icmlgym.BaseAgent):
        """Pulls arm 0. From its third run on it waits while the file ``hold`` exists, so that the
        sweep is surely interrupted mid-way however loaded the machine is (the test removes the
        file before it runs the same command again)."""

        name = "slow"

        def reset(self, seed, spec):
            super().reset(seed, spec)
            if spec.episode == 0:
                with open("runs.log", "a") as f:
                    f.write("run\\n")
                with open("runs.log") as f:
                    started = len(f.readlines())
                deadline = time.monotonic() + 120
                while started > 2 and os.path.exists("hold") and time.monotonic() < deadline:
                    time.sleep(0.05)

        def act(self, obs, info):
            return 0
''')


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore", "COLUMNS": "100"}
    env.pop("ICMLGYM_HOME", None)
    return env


def icmlgym(*args: str, cwd: Path, check: int | None = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "icmlgym.cli", *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)
    if check is not None:
        assert proc.returncode == check, f"{args}: rc {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc


def seeds_per_entry(store: Path, env_id: str = BANDIT) -> dict[str, int]:
    with Leaderboard(store) as board:
        runs = board.runs(env=env_id)
        assert len(runs) == runs["run_key"].nunique(), "two stored runs share a run key"
        t = board.table(env=env_id)
    return {row.entry: int(row.seeds) for row in t.itertuples()}


def test_the_first_hour(tmp_path):
    store = tmp_path / "lb.db"
    s = ["--store", str(store)]

    # the main job, as CI would run it: a progress line per finished run, then a table per family
    first = icmlgym("benchmark", "--suite", "bandit", "--executor", "inprocess", *s, cwd=tmp_path)
    assert "[12/12]" in first.stderr and "bandit\n======" in first.stdout and "95% CI" in first.stdout
    assert "bandit-thompson  *" in first.stdout  # the paper's method, marked
    main_job = {"bandit-thompson": 3, "epsilon-greedy": 3, "random": 3, "ucb1": 3}
    assert seeds_per_entry(store) == main_job

    # the main job again: nothing new to run, and it says so
    again = icmlgym("benchmark", "--suite", "bandit", "--executor", "inprocess", *s, cwd=tmp_path)
    assert "skipping 12 of 12 run(s) already stored" in again.stderr
    assert seeds_per_entry(store) == main_job

    # the README's commands after it: only the seeds not stored yet run
    readme = icmlgym("run", BANDIT, "--agent", "bandit-thompson", "--seeds", "5", *s, cwd=tmp_path)
    assert "skipping 3 of 5" in readme.stderr and "2 new" in readme.stderr
    assert seeds_per_entry(store) == {**main_job, "bandit-thompson": 5}
    report = icmlgym("leaderboard", *s, "--suite", "bandit", "--format", "html", cwd=tmp_path)
    (tmp_path / "report.html").write_text(report.stdout)
    assert report.stdout.startswith("<!DOCTYPE html>") and len(report.stdout) > 10_000

    # Ctrl-C in the middle of a sweep, then the same command again
    (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
    (tmp_path / "hold").touch()
    cmd = [sys.executable, "-m", "icmlgym.cli", "run", BANDIT, "--agent", "slow_agent.py:Slow", "--seeds", "8", "--executor", "inprocess", *s]
    # SIGINT at its default in the child: a test run started in the background from a script
    # (`cmd &`) inherits SIGINT ignored, and Python then never raises KeyboardInterrupt
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = ""
    deadline = time.monotonic() + 120
    while "[2/8]" not in seen and time.monotonic() < deadline:
        seen += proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (seen + err)[-2000:]
    assert "interrupted:" in err and "run the same command again to continue" in err
    done = seeds_per_entry(store)["slow"]
    assert 2 <= done < 8
    (tmp_path / "hold").unlink()
    rerun = icmlgym("run", BANDIT, "--agent", "slow_agent.py:Slow", "--seeds", "8", "--executor", "inprocess", *s, cwd=tmp_path)
    assert f"skipping {done} of 8" in rerun.stderr
    assert seeds_per_entry(store)["slow"] == 8

    # four drivers resume the same sweep at once: one run per seed all the same
    drivers = [
        subprocess.Popen([sys.executable, "-m", "icmlgym.cli", "run", BANDIT, "--agent", "ucb1", "--seeds", "6", "--resume",
                          "--executor", "inprocess", *s], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    for d in drivers:
        d.communicate(timeout=300)
        assert d.returncode == 0
    final = seeds_per_entry(store)
    assert final == {**main_job, "bandit-thompson": 5, "ucb1": 6, "slow": 8}
    with Leaderboard(store) as board:
        assert len(board) == sum(final.values())
