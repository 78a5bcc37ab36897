"""The cost of isolation: the evaluator/agent channel per step, and the start of a sandbox.

    python benchmarks/sandbox_channel.py [--rounds 7] [--steps 1000] [--json out.json]

Per step, on Bandit-v0 with 1,000-step episodes and UCB1, interleaved in each round:

- ``inprocess``: the episode played by ``icmlgym.runner.rollout.rollout`` with the
  agent in this process (what a local run does);
- ``channel[bwrap|none]``: the same episode with the agent in a sandbox, reached
  through :class:`icmlgym.runner.evaluator.RemoteAgent` (one frame each way per step);
- ``bare``: the limit: a raw round trip over the same kind of socket to a Python echo
  process, of the same message sizes the channel sent and received (mean bytes
  per frame each way), with no encoding.

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


def _cpu(pid: int) -> float:
    from icmlgym.runner.sandbox import _cpu_seconds

    return _cpu_seconds(pid)


def bare_round_trip(n_in: int, n_out: int, steps: int) -> tuple[float, float]:
    """(wall, CPU of both ends) seconds per raw round trip: ``n_in`` bytes out, ``n_out`` back, Python at both ends."""
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
        t0, c0, k0 = time.perf_counter(), time.process_time(), _cpu(proc.pid)
        for _ in range(steps):
            os.write(fd, msg)
            need = n_out
            while need:
                need -= len(os.read(fd, need))
        return (time.perf_counter() - t0) / steps, (time.process_time() - c0 + _cpu(proc.pid) - k0) / steps
    finally:
        ours.close()
        proc.wait(timeout=10)


def _spec(env, c):
    from icmlgym.agents.protocol import AgentSpec

    return AgentSpec(c.id, env.observation_space, env.action_space, c, {"horizon": 1000}, "smoke", 0, None, "cpu")


def inprocess_step(steps: int, seed: int) -> tuple[float, float]:
    import icmlgym
    from icmlgym.agents.loading import load_agent
    from icmlgym.catalog import card
    from icmlgym.runner.rollout import rollout

    c = card("icmlgym/Bandit-v0")
    env = icmlgym.make(c.id, horizon=steps)
    agent = load_agent("ucb1")()
    t0, c0 = time.perf_counter(), time.process_time()
    ep = rollout(env, agent, seed, _spec(env, c))
    return (time.perf_counter() - t0) / ep.length, (time.process_time() - c0) / ep.length


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
        from icmlgym.runner.sandbox import _cpu_seconds

        # CPU the agent's processes used to get ready (bubblewrap, the interpreter, imports, the agent)
        self.start_cpu = sum(_cpu_seconds(p) for p in process_tree(self.sandbox.proc.pid))
        self.ch = ch

    def step_time(self, seed: int) -> tuple[float, float, float, float]:
        """(wall, CPU of evaluator and agent) per step, and mean bytes per frame out and back."""
        from icmlgym.runner.limits import process_tree
        from icmlgym.runner.rollout import rollout

        tree = process_tree(self.sandbox.proc.pid)
        sent0, recv0, frames0 = self.ch.bytes_sent, self.ch.bytes_received, self.ch.frames_sent
        t0, c0, k0 = time.perf_counter(), time.process_time(), sum(_cpu(p) for p in tree)
        ep = rollout(self.env, self.agent, seed, _spec(self.env, self.c))
        dt = (time.perf_counter() - t0) / ep.length
        cpu = (time.process_time() - c0 + sum(_cpu(p) for p in tree) - k0) / ep.length
        frames = self.ch.frames_sent - frames0
        return dt, cpu, (self.ch.bytes_sent - sent0) / frames, (self.ch.bytes_received - recv0) / frames

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
    keys = ["inprocess", "bare", *[f"channel[{m}]" for m in modes]]
    out: dict[str, list] = {k: [] for k in keys} | {f"cpu {k}": [] for k in keys} | {f"ratio[{m}]": [] for m in modes} | {f"cpu ratio[{m}]": [] for m in modes}
    try:
        for r in range(args.rounds):
            base, base_cpu = inprocess_step(args.steps, r)
            out["inprocess"].append(base)
            out["cpu inprocess"].append(base_cpu)
            sizes = None
            for m in modes:
                dt, cpu, n_in, n_out = remotes[m].step_time(r)
                out[f"channel[{m}]"].append(dt)
                out[f"cpu channel[{m}]"].append(cpu)
                sizes = (int(round(n_in)), int(round(n_out)))
            bare, bare_cpu = bare_round_trip(sizes[0], sizes[1], args.steps)
            out["bare"].append(bare)
            out["cpu bare"].append(bare_cpu)
            for m in modes:
                out[f"ratio[{m}]"].append((out[f"channel[{m}]"][-1] - base) / bare)
                out[f"cpu ratio[{m}]"].append((out[f"cpu channel[{m}]"][-1] - base_cpu) / bare_cpu)
    finally:
        for rem in remotes.values():
            rem.close()
    starts = {m: [start_time(m) for _ in range(args.starts)] for m in modes}
    load1 = os.getloadavg()
    print(f"Bandit-v0, {args.steps}-step episodes, UCB1, {args.rounds} interleaved rounds; frame sizes out/back: {sizes[0]}/{sizes[1]} bytes")
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f} (cores: {os.cpu_count()})")
    print(f"{'per step (us)':<22}{'min':>10}{'median':>10}{'max':>10}   (cpu: both processes, clock-tick resolution)")
    for k, v in out.items():
        if "ratio" in k:
            continue
        s = _stats(v)
        print(f"{k:<22}{s['min'] * 1e6:>10.1f}{s['median'] * 1e6:>10.1f}{s['max'] * 1e6:>10.1f}")
    for m in modes:
        for kind in ("", "cpu "):
            s = _stats(out[f"{kind}ratio[{m}]"])
            print(f"{kind + 'overhead/bare [' + m + ']':<22}{s['min']:>10.2f}{s['median']:>10.2f}{s['max']:>10.2f}   (target <= 2)")
    for m in modes:
        s = _stats([w for w, _ in starts[m]])
        print(f"{'start s [' + m + ']':<22}{s['min']:>10.3f}{s['median']:>10.3f}{s['max']:>10.3f}   (target < 0.5)")
        s = _stats([c for _, c in starts[m]])
        print(f"{'start cpu s [' + m + ']':<22}{s['min']:>10.3f}{s['median']:>10.3f}{s['max']:>10.3f}   (the agent's processes)")
    if args.json:
        args.json.write_text(json.dumps({"per_step": {k: _stats(v) for k, v in out.items()}, "start_s": {m: _stats([w for w, _ in v]) for m, v in starts.items()},
                                         "start_cpu_s": {m: _stats([c for _, c in v]) for m, v in starts.items()},
                                         "frame_bytes": sizes, "load": [load0[0], load1[0]]}, indent=2))


if __name__ == "__main__":
    main()
