"""The cost of isolation: the evaluator/agent channel per step, and the start of a sandbox.

    python benchmarks/sandbox_channel.py [--rounds 7] [--steps 1000] [--starts 5] [--json out.json]

Per step, on Bandit-v0 with 1,000-step episodes and UCB1, interleaved in each round:

- ``inprocess``: the episode played by ``icmlgym.runner.rollout.rollout`` with the
  agent in this process (what a local run does);
- ``channel[bwrap|none]``: the same episode with the agent in a sandbox, reached
  through :class:`icmlgym.runner.evaluator.RemoteAgent` (one frame each way per step);
- ``bare``: the limit: a raw round trip over the same kind of socket to a Python echo
  process, of the same message sizes the channel sent and received (mean bytes
  per frame each way), with no encoding;
- ``machinery``: the channel alone: the same frames (a float32[2] observation, a float
  reward, a ``{"cost": ...}`` info out; an int action back) between an evaluator loop
  and the real agent host with a no-op agent, with no env (:class:`NoOpAgent`), to
  split the channel's overhead into its own code and what the env and the agent cost
  more when they run in two processes (their caches go cold at every switch);
- ``inprocess+bare``: the in-process episode plus one bare round trip per step (what
  switching to another process once a step costs, with no channel code at all).

Each row gives, per step: wall time; CPU time of both ends and of the far end alone,
and the time both ends waited for a CPU while runnable, all from the scheduler's own
nanosecond accounting (``/proc/<pid>/task/<tid>/schedstat``, every thread).

The channel's overhead per step is ``channel - inprocess``; the target is at most
2x ``bare``. The sandbox start is the time from starting the agent's process to its
``ready`` answer (its interpreter started, icmlgym imported, the agent loaded),
each kind ``--starts`` times, as wall time and as the CPU time the agent's processes
used (what a quiet machine's wall time approaches). Reports min / median / max and the load average,
since the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ECHO = r"""
import os, sys
fd, n_in, n_out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
out = b"y" * n_out
while True:
    need = n_in
    while need:
        chunk = os.read(fd, need)
        if not chunk:
            sys.exit(0)
        need -= len(chunk)
    os.write(fd, out)
"""


class NoOpAgent:
    """The agent of the ``machinery`` row: acts 1, learns nothing (loaded by the agent host from this file)."""

    def reset(self, seed, spec) -> None:
        pass

    def act(self, obs, info) -> int:
        return 1

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        pass


class Machinery:
    """The real agent host (a plain child process) with :class:`NoOpAgent`, driven by a loop without an env."""

    def __init__(self) -> None:
        import numpy as np

        from icmlgym.runner.channel import Channel
        from icmlgym.runner.evaluator import RemoteAgent

        self.ch, theirs = Channel.pair()
        self.proc = subprocess.Popen([sys.executable, "-s", "-m", "icmlgym.runner.agent_host", str(theirs.fileno())],
                                     pass_fds=(theirs.fileno(),), env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        theirs.close()
        self.agent = RemoteAgent(self.ch, 60.0, multi_agent=False)
        from gymnasium.spaces import Box, Discrete

        spec = {"kind": "single", "env_id": "noop", "env_kwargs": {}, "tier": "smoke", "device": "cpu", "card": None,
                "spaces": (Box(0.0, 1.0, (2,), np.float32), Discrete(2))}
        self.agent.hello(f"{Path(__file__).resolve()}:NoOpAgent", {}, spec, 60.0)
        self.obs = [np.array([1.0, t / 1000], dtype=np.float32) for t in range(1000)]  # made before timing: not the channel's cost
        self.infos = [{"cost": {"env_steps": t}} for t in range(1000)]

    def step_time(self, steps: int) -> dict[str, float]:
        """Per step, see :class:`Meter`."""
        from icmlgym.agents.protocol import AgentSpec

        agent, obs, infos = self.agent, self.obs, self.infos
        agent.reset(0, AgentSpec("noop", None, None, None))
        o, info = obs[0], infos[0]
        meter = Meter([self.proc.pid])
        for t in range(steps):
            a = agent.act(o, info)
            no, ni = obs[t % 1000], infos[t % 1000]
            agent.update(o, a, 0.5, no, False, False, ni)
            o, info = no, ni
        return meter.stop(steps)

    def close(self) -> None:
        try:
            self.agent.close(10.0)
        finally:
            self.ch.close()
            self.proc.wait(timeout=10)


def _sched(pids: list[int]) -> tuple[int, int]:
    """(ns on a CPU, ns waiting for one while runnable) summed over every thread of ``pids``
    (``/proc/<pid>/task/<tid>/schedstat``: the scheduler's own nanosecond accounting)."""
    run = wait = 0
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
                    r, w, _ = fh.read().split()
            except (OSError, ValueError):
                continue
            run += int(r)
            wait += int(w)
    return run, wait


class Meter:
    """Per step: wall time; CPU time of this process and of ``others`` (the other end of the round trip);
    the other end's CPU alone; and the time both spent runnable but waiting for a CPU (run-queue wait)."""

    def __init__(self, others: list[int]) -> None:
        self.others = others
        self.t0 = time.perf_counter()
        self.ours0, self.theirs0 = _sched([os.getpid()]), _sched(others)

    def stop(self, steps: int) -> dict[str, float]:
        wall = time.perf_counter() - self.t0
        ours, theirs = _sched([os.getpid()]), _sched(self.others)
        run_o, run_t = ours[0] - self.ours0[0], theirs[0] - self.theirs0[0]
        wait = ours[1] - self.ours0[1] + theirs[1] - self.theirs0[1]
        return {"wall": wall / steps, "cpu": (run_o + run_t) * 1e-9 / steps, "other cpu": run_t * 1e-9 / steps, "wait": wait * 1e-9 / steps}


def bare_round_trip(n_in: int, n_out: int, steps: int) -> dict[str, float]:
    """Per raw round trip (see :class:`Meter`): ``n_in`` bytes out, ``n_out`` back, Python at both ends."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    proc = subprocess.Popen([sys.executable, "-c", ECHO, str(theirs.fileno()), str(n_in), str(n_out)], pass_fds=(theirs.fileno(),))
    theirs.close()
    fd = ours.fileno()
    msg = b"x" * n_in
    try:
        for _ in range(50):  # warm up
            os.write(fd, msg)
            need = n_out
            while need:
                need -= len(os.read(fd, need))
        meter = Meter([proc.pid])
        for _ in range(steps):
            os.write(fd, msg)
            need = n_out
            while need:
                need -= len(os.read(fd, need))
        return meter.stop(steps)
    finally:
        ours.close()
        proc.wait(timeout=10)


def _spec(env, c):
    from icmlgym.agents.protocol import AgentSpec

    return AgentSpec(c.id, env.observation_space, env.action_space, c, {"horizon": 1000}, "smoke", 0, None, "cpu")


def inprocess_step(steps: int, seed: int) -> dict[str, float]:
    import icmlgym
    from icmlgym.agents.loading import load_agent
    from icmlgym.catalog import card
    from icmlgym.runner.rollout import rollout

    c = card("icmlgym/Bandit-v0")
    env = icmlgym.make(c.id, horizon=steps)
    agent = load_agent("ucb1")()
    meter = Meter([])
    ep = rollout(env, agent, seed, _spec(env, c))
    return meter.stop(ep.length)


class _Pinging:
    """UCB1 that makes one bare round trip to an echo process in every ``act`` (see ``inprocess+bare``)."""

    def __init__(self, agent, fd: int, n_in: int, n_out: int) -> None:
        self.agent, self.fd, self.msg, self.n_out = agent, fd, b"x" * n_in, n_out
        self.reset, self.update = agent.reset, agent.update

    def act(self, obs, info):
        os.write(self.fd, self.msg)
        need = self.n_out
        while need:
            need -= len(os.read(self.fd, need))
        return self.agent.act(obs, info)


def inprocess_with_round_trip(steps: int, seed: int, n_in: int, n_out: int) -> dict[str, float]:
    """The in-process episode, plus one bare round trip per step: what switching to another process
    once a step costs the env and the agent (their caches go cold) with no channel at all."""
    import icmlgym
    from icmlgym.agents.loading import load_agent
    from icmlgym.catalog import card
    from icmlgym.runner.rollout import rollout

    c = card("icmlgym/Bandit-v0")
    env = icmlgym.make(c.id, horizon=steps)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    proc = subprocess.Popen([sys.executable, "-c", ECHO, str(theirs.fileno()), str(n_in), str(n_out)], pass_fds=(theirs.fileno(),))
    theirs.close()
    try:
        agent = _Pinging(load_agent("ucb1")(), ours.fileno(), n_in, n_out)
        for _ in range(50):  # warm up the echo process
            os.write(ours.fileno(), agent.msg)
            need = n_out
            while need:
                need -= len(os.read(ours.fileno(), need))
        meter = Meter([proc.pid])
        ep = rollout(env, agent, seed, _spec(env, c))
        return meter.stop(ep.length)
    finally:
        ours.close()
        proc.wait(timeout=10)


class Remote:
    """A started sandbox with UCB1 loaded, ready for episodes."""

    def __init__(self, mode: str, steps: int) -> None:
        import icmlgym
        from icmlgym.catalog import card
        from icmlgym.runner.evaluator import RemoteAgent, _public_spec
        from icmlgym.runner.loop import RunTask
        from icmlgym.runner.sandbox import Sandbox, SandboxOptions

        self.c = card("icmlgym/Bandit-v0")
        self.env = icmlgym.make(self.c.id, horizon=steps)
        self.sandbox = Sandbox(SandboxOptions(mode=mode))
        t0 = time.perf_counter()
        ch = self.sandbox.start()
        self.agent = RemoteAgent(ch, 60.0, multi_agent=False)
        task = RunTask(self.c.id, "ucb1", 0, "smoke", {"horizon": steps})
        self.agent.hello("ucb1", {}, _public_spec(self.c, self.env, {"horizon": steps}, task), 60.0)
        self.start_s = time.perf_counter() - t0
        from icmlgym.runner.limits import process_tree

        # CPU the agent's processes used to get ready (bubblewrap, the interpreter, imports, the agent)
        self.start_cpu = _sched(process_tree(self.sandbox.proc.pid))[0] * 1e-9
        self.ch = ch

    def step_time(self, seed: int) -> tuple[dict[str, float], float, float]:
        """Per step (see :class:`Meter`), and the mean bytes per frame out and back."""
        from icmlgym.runner.limits import process_tree
        from icmlgym.runner.rollout import rollout

        tree = process_tree(self.sandbox.proc.pid)
        sent0, recv0, frames0 = self.ch.bytes_sent, self.ch.bytes_received, self.ch.frames_sent
        meter = Meter(tree)
        ep = rollout(self.env, self.agent, seed, _spec(self.env, self.c))
        m = meter.stop(ep.length)
        frames = self.ch.frames_sent - frames0
        return m, (self.ch.bytes_sent - sent0) / frames, (self.ch.bytes_received - recv0) / frames

    def close(self) -> None:
        try:
            self.agent.close(10.0)
        finally:
            self.sandbox.stop()


def start_time(mode: str) -> tuple[float, float]:
    r = Remote(mode, 10)
    try:
        return r.start_s, r.start_cpu
    finally:
        r.close()


def _stats(xs: list[float]) -> dict[str, float]:
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs)}


ROWS = ("wall", "cpu", "other cpu", "wait")


def main() -> None:
    import numpy as np

    from icmlgym.runner.sandbox import bwrap_path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    np.random.seed(0)
    modes = ["bwrap", "none"] if bwrap_path() else ["none"]
    load0 = os.getloadavg()
    remotes = {m: Remote(m, args.steps) for m in modes}
    machinery = Machinery()
    keys = ["inprocess", "bare", "inprocess+bare", "machinery", *[f"channel[{m}]" for m in modes]]
    out: dict[str, dict[str, list[float]]] = {k: {r: [] for r in ROWS} for k in keys}
    ratios: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []} for k in keys[3:]}
    sizes = (0, 0)
    try:
        for r in range(args.rounds):
            got = {"inprocess": inprocess_step(args.steps, r)}
            for m in modes:
                got[f"channel[{m}]"], n_in, n_out = remotes[m].step_time(r)
                sizes = (int(round(n_in)), int(round(n_out)))
            got["bare"] = bare_round_trip(sizes[0], sizes[1], args.steps)
            got["machinery"] = machinery.step_time(args.steps)
            got["inprocess+bare"] = inprocess_with_round_trip(args.steps, r, *sizes)
            for k, v in got.items():
                for row in ROWS:
                    out[k][row].append(v[row])
            base, bare = got["inprocess"], got["bare"]
            for k in ratios:  # the channel's overhead: what it adds to an in-process step (machinery: all of it)
                for row in ("wall", "cpu"):
                    extra = got[k][row] - (0.0 if k == "machinery" else base[row])
                    ratios[k][row].append(extra / bare[row])
    finally:
        for rem in remotes.values():
            rem.close()
        machinery.close()
    starts = {m: [start_time(m) for _ in range(args.starts)] for m in modes}
    load1 = os.getloadavg()
    print(f"Bandit-v0, {args.steps}-step episodes, UCB1, {args.rounds} interleaved rounds; frame sizes out/back: {sizes[0]}/{sizes[1]} bytes")
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f} (cores: {os.cpu_count()})")
    print("per step, us (median over rounds [min-max]); cpu: both ends; other cpu: the far end alone; wait: both ends runnable, not running")
    print(f"{'':<18}" + "".join(f"{row:>22}" for row in ROWS))
    for k in keys:
        cells = []
        for row in ROWS:
            s = _stats(out[k][row])
            cells.append(f"{s['median'] * 1e6:8.1f} [{s['min'] * 1e6:.0f}-{s['max'] * 1e6:.0f}]")
        print(f"{k:<18}" + "".join(f"{c:>22}" for c in cells))
    print("overhead / bare round trip (median [min-max]; target <= 2): channel: (channel - inprocess) / bare; machinery: machinery / bare")
    for k, v in ratios.items():
        w, c = _stats(v["wall"]), _stats(v["cpu"])
        print(f"  {k:<16} wall {w['median']:5.2f} [{w['min']:.2f}-{w['max']:.2f}]   cpu {c['median']:5.2f} [{c['min']:.2f}-{c['max']:.2f}]")
    for m in modes:
        s = _stats([w for w, _ in starts[m]])
        c = _stats([c for _, c in starts[m]])
        print(f"start [{m}]: wall {s['median']:.3f} s [{s['min']:.3f}-{s['max']:.3f}] (target < 0.5); cpu of the agent's processes {c['median']:.3f} s")
    if args.json:
        args.json.write_text(json.dumps({"per_step": {k: {row: _stats(v) for row, v in rows.items()} for k, rows in out.items()},
                                         "overhead_over_bare": {k: {row: _stats(v) for row, v in rows.items()} for k, rows in ratios.items()},
                                         "start_s": {m: _stats([w for w, _ in v]) for m, v in starts.items()},
                                         "start_cpu_s": {m: _stats([c for _, c in v]) for m, v in starts.items()},
                                         "frame_bytes": sizes, "load": [load0[0], load1[0]]}, indent=2))


if __name__ == "__main__":
    main()
