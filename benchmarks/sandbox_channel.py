"""The cost of isolation: the evaluator/agent channel per step, and the start of a sandbox.

    python benchmarks/sandbox_channel.py [--rounds 7] [--steps 1000] [--starts 5] [--json out.json]

Per step, on Bandit-v0 with 1,000-step episodes and UCB1, interleaved in each round:

- ``inprocess``: the episode played by ``icmlgym.runner.rollout.rollout`` with the
  agent in this process (what a local run does);
- ``channel[bwrap|none]``: the same episode with the agent in a sandbox, reached
  through :class:`icmlgym.runner.evaluator.RemoteAgent` (one frame each way per step),
  as an isolated run plays it: over the sandbox's pipes, with the evaluator's thread and
  the agent host's main thread on one CPU (:mod:`icmlgym.runner.affinity`; measured
  unpinned when ``ICMLGYM_SANDBOX_PIN=0``);
- ``channel[bwrap,unpinned]``: the same sandbox with the scheduler placing both ends (what
  runs did before session 5), and ``channel[bwrap,2cpus]``: each end on a CPU of its own
  (what the scheduler often chooses on a quiet machine);
- four raw round trips of the same bytes (the channel's mean frame sizes each way) to a
  Python echo process, with no encoding: ``bare`` (a Unix socket pair, both ends where
  the scheduler puts them: the limit before session 5), ``bare[socket,1cpu]`` (both ends
  pinned to one CPU), ``bare[pipe]`` and ``bare[pipe,1cpu]`` (a pipe each way);
- ``limit``: **the fastest of the four in each round** (its CPU: the least of the four).
  The limit is the cheapest way we measured to move the channel's bytes between two
  processes and back, not one transport or placement that happens to be slow here: on
  this machine's virtual CPUs a process that blocks on one core and is woken from the
  other pays for the idle core's wake-up, so an unpinned socket echo can be slower than
  the channel itself, and a ratio against it would flatter the channel. (Busy-polling
  round trips are not measured: the channel blocks, and spinning on a shared 2-core
  machine costs the other end its CPU.)
- ``machinery``: the channel alone: the same frames (a float32[2] observation, a float
  reward, a ``{"cost": ...}`` info out; an int action back) between an evaluator loop
  and the real agent host in a fallback sandbox with a no-op agent, with no env
  (:class:`NoOpAgent`), to split the channel's overhead into its own code and what the
  env and the agent cost more when they run in two processes (their caches go cold at
  every switch);
- ``floor``: the least Python work those frames need, between this process and a Python
  process over pipes, pinned as the channel is, with no checks, no deadline and no agent
  host: here ``struct`` for the reward and flags, ``tobytes`` of the observation,
  ``pickle.dumps`` of the info and one ``join`` and ``write``, then one ``read`` and an
  ``unpack`` of the 18-byte answer; there one ``read``, the ``unpack``, the observation
  rebuilt as a fresh writable array and the info unpickled, then one ``write``
  (:data:`FLOOR`). No Python implementation of the protocol costs less per step, so
  ``floor / limit`` bounds how close any can come to the 2x target, and ``machinery -
  floor`` is what the real channel's checks, deadline and dispatch cost on top;
- ``inprocess+bare``: the in-process episode plus one raw round trip per step, over the
  channel's transport and pinned as the channel is (what switching to another process
  once a step costs, with no channel code at all).

Each row gives, per step: wall time; CPU time of both ends and of the far end alone,
and the time both ends waited for a CPU while runnable, all from the scheduler's own
nanosecond accounting (``/proc/<pid>/task/<tid>/schedstat``, every thread).

The channel's overhead per step is ``channel - inprocess``; **the target is at most
2x ``limit``** (printed per channel row, wall and CPU, median and range over rounds; the
ratio against the old ``bare`` follows for comparison with earlier sessions). The
sandbox start is the time from starting the agent's process to its ``ready`` answer
(its interpreter started, icmlgym imported, the agent loaded), each kind ``--starts``
times, as wall time and as the CPU time the agent's processes used (what a quiet
machine's wall time approaches). Reports min / median / max and the load average,
since the machine may be shared. About 10 s with ``--rounds 7 --starts 5``.
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
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ECHO = r"""
import os, sys
rfd, wfd, n_in, n_out = map(int, sys.argv[1:5])
out = b"y" * n_out
while True:
    need = n_in
    while need:
        chunk = os.read(rfd, need)
        if not chunk:
            sys.exit(0)
        need -= len(chunk)
    os.write(wfd, out)
"""

FLOOR = r"""
import os, pickle, struct, sys
import numpy as np
rfd, wfd = map(int, sys.argv[1:3])
flags, dt, answer = struct.Struct("<dBB"), np.dtype("<f4"), struct.Struct("<10sq")
head = b"IG\x01\x02\x00\x00\x00\x0ai\x00"
while True:
    data = os.read(rfd, 65536)
    if not data:
        sys.exit(0)
    reward, terminated, truncated = flags.unpack_from(data, 8)
    obs = np.ndarray((2,), dt, bytearray(data[31:39]))
    info = pickle.loads(data[39:])
    os.write(wfd, answer.pack(head, 1))
"""

# the raw round trips measured for the limit: (transport, both ends pinned to one CPU)
BARE = {"bare": ("socket", False), "bare[socket,1cpu]": ("socket", True), "bare[pipe]": ("pipe", False), "bare[pipe,1cpu]": ("pipe", True)}


class NoOpAgent:
    """The agent of the ``machinery`` row: acts 1, learns nothing (loaded by the agent host from this file)."""

    def reset(self, seed, spec) -> None:
        pass

    def act(self, obs, info) -> int:
        return 1

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        pass


@contextmanager
def one_cpu(pids: list[int], on: bool | str = True):
    """This thread and the main threads of ``pids`` on the CPU this thread runs on now (what
    :mod:`icmlgym.runner.affinity` does for a run; here without its claim, and undone after).
    ``on="apart"``: this thread there and ``pids`` on another CPU (each end on a core of its own)."""
    from icmlgym.runner.affinity import current_cpu

    cpu = current_cpu() if on else None
    old = os.sched_getaffinity(0)
    if cpu is None or (on == "apart" and len(old) < 2):
        yield None
        return
    far = min(old - {cpu}) if on == "apart" else cpu
    os.sched_setaffinity(0, {cpu})
    done = []
    try:
        for p in pids:
            try:
                os.sched_setaffinity(p, {far})
                done.append(p)
            except OSError:
                pass
        yield cpu
    finally:
        for p in done:
            try:
                os.sched_setaffinity(p, old)
            except OSError:
                pass
        os.sched_setaffinity(0, old)


class Machinery:
    """The real sandbox (the fallback kind: it can load this file) with :class:`NoOpAgent`, driven by a loop without an env."""

    def __init__(self) -> None:
        import numpy as np
        from gymnasium.spaces import Box, Discrete

        from icmlgym.runner.evaluator import RemoteAgent
        from icmlgym.runner.sandbox import Sandbox, SandboxOptions

        self.sandbox = Sandbox(SandboxOptions(mode="none", pin_cpu=False))  # pinned by hand per measurement (see one_cpu)
        self.ch = self.sandbox.start()
        self.agent = RemoteAgent(self.ch, 60.0, multi_agent=False)
        spec = {"kind": "single", "env_id": "noop", "env_kwargs": {}, "tier": "smoke", "device": "cpu", "card": None,
                "spaces": (Box(0.0, 1.0, (2,), np.float32), Discrete(2))}
        self.agent.hello(f"{Path(__file__).resolve()}:NoOpAgent", {}, spec, 60.0)
        self.obs = [np.array([1.0, t / 1000], dtype=np.float32) for t in range(1000)]  # made before timing: not the channel's cost
        self.infos = [{"cost": {"env_steps": t}} for t in range(1000)]

    def step_time(self, steps: int, pin: bool) -> dict[str, float]:
        """Per step, see :class:`Meter`."""
        from icmlgym.agents.protocol import AgentSpec
        from icmlgym.runner.limits import process_tree

        agent, obs, infos = self.agent, self.obs, self.infos
        tree = process_tree(self.sandbox.proc.pid)
        with one_cpu(tree, pin):
            agent.reset(0, AgentSpec("noop", None, None, None))
            o, info = obs[0], infos[0]
            meter = Meter(tree)
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
            self.sandbox.stop()


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


class Echo:
    """A Python echo process over a socket pair or a pipe pair: reads ``n_in`` bytes, answers ``n_out``."""

    def __init__(self, transport: str, n_in: int, n_out: int) -> None:
        if transport == "socket":
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            self.rfd = self.wfd = ours.detach()
            far = (theirs.detach(),) * 2
        else:
            to_r, to_w = os.pipe()
            back_r, back_w = os.pipe()
            self.rfd, self.wfd, far = back_r, to_w, (to_r, back_w)
        self.proc = subprocess.Popen([sys.executable, "-c", ECHO, str(far[0]), str(far[1]), str(n_in), str(n_out)], pass_fds=tuple(set(far)))
        for fd in set(far):
            os.close(fd)
        self.msg, self.n_out = b"x" * n_in, n_out
        self.round_trip(50)  # warm up

    def round_trip(self, steps: int) -> None:
        rfd, wfd, msg, n_out = self.rfd, self.wfd, self.msg, self.n_out
        for _ in range(steps):
            os.write(wfd, msg)
            need = n_out
            while need:
                need -= len(os.read(rfd, need))

    def close(self) -> None:
        for fd in {self.rfd, self.wfd}:
            os.close(fd)
        self.proc.wait(timeout=10)


class Floor:
    """The ``floor`` row: the channel's frames with the least Python work at both ends (see :data:`FLOOR`)."""

    def __init__(self) -> None:
        import numpy as np

        to_r, to_w = os.pipe()
        back_r, back_w = os.pipe()
        self.rfd, self.wfd = back_r, to_w
        self.proc = subprocess.Popen([sys.executable, "-c", FLOOR, str(to_r), str(back_w)], pass_fds=(to_r, back_w))
        os.close(to_r)
        os.close(back_w)
        self.obs = [np.array([1.0, t / 1000], dtype=np.float32) for t in range(1000)]
        self.infos = [{"cost": {"env_steps": t}} for t in range(1000)]
        self.round_trips(50)  # warm up

    def round_trips(self, steps: int) -> None:
        import pickle
        import struct

        flags, size, answer = struct.Struct("<dBB"), struct.Struct(">I"), struct.Struct("<q")
        prefix, layout = b"IG\x01\x03", b"\x03\x01<f4" + struct.pack("<q", 2)
        rfd, wfd, obs, infos = self.rfd, self.wfd, self.obs, self.infos
        for t in range(steps):
            info = pickle.dumps(infos[t % 1000], pickle.HIGHEST_PROTOCOL)
            os.write(wfd, b"".join((prefix, size.pack(31 + len(info)), flags.pack(0.5, False, False), layout,
                                    obs[t % 1000].tobytes(), info)))
            answer.unpack_from(os.read(rfd, 65536), 10)

    def step_time(self, steps: int, pin: bool) -> dict[str, float]:
        """Per step (see :class:`Meter`)."""
        with one_cpu([self.proc.pid], pin):
            self.round_trips(20)  # settle on the CPU
            meter = Meter([self.proc.pid])
            self.round_trips(steps)
            return meter.stop(steps)

    def close(self) -> None:
        for fd in (self.rfd, self.wfd):
            os.close(fd)
        self.proc.wait(timeout=10)


def bare_round_trip(echo: Echo, steps: int, pin: bool) -> dict[str, float]:
    """Per raw round trip (see :class:`Meter`): the channel's bytes out and back, Python at both ends."""
    with one_cpu([echo.proc.pid], pin):
        echo.round_trip(20)  # settle on the CPU
        meter = Meter([echo.proc.pid])
        echo.round_trip(steps)
        return meter.stop(steps)


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

    def __init__(self, agent, echo: Echo) -> None:
        self.agent, self.echo = agent, echo
        self.reset, self.update = agent.reset, agent.update

    def act(self, obs, info):
        self.echo.round_trip(1)
        return self.agent.act(obs, info)


def inprocess_with_round_trip(steps: int, seed: int, echo: Echo, pin: bool) -> dict[str, float]:
    """The in-process episode, plus one bare round trip per step (the channel's transport and pinning):
    what switching to another process once a step costs the env and the agent, with no channel at all."""
    import icmlgym
    from icmlgym.agents.loading import load_agent
    from icmlgym.catalog import card
    from icmlgym.runner.rollout import rollout

    c = card("icmlgym/Bandit-v0")
    env = icmlgym.make(c.id, horizon=steps)
    agent = _Pinging(load_agent("ucb1")(), echo)
    with one_cpu([echo.proc.pid], pin):
        echo.round_trip(20)
        meter = Meter([echo.proc.pid])
        ep = rollout(env, agent, seed, _spec(env, c))
        return meter.stop(ep.length)


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
        self.sandbox = Sandbox(SandboxOptions(mode=mode, pin_cpu=False))  # pinned by hand per measurement (see one_cpu)
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

    def step_time(self, seed: int, pin: bool | str) -> tuple[dict[str, float], float, float]:
        """Per step (see :class:`Meter`), and the mean bytes per frame out and back."""
        from icmlgym.runner.limits import process_tree
        from icmlgym.runner.rollout import rollout

        tree = process_tree(self.sandbox.proc.pid)
        sent0, recv0, frames0 = self.ch.bytes_sent, self.ch.bytes_received, self.ch.frames_sent
        with one_cpu(tree, pin):
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


def _row(stats: dict[str, float], scale: float = 1e6, fmt: str = "8.1f") -> str:
    return f"{stats['median'] * scale:{fmt}} [{stats['min'] * scale:.0f}-{stats['max'] * scale:.0f}]"


def main() -> None:
    import numpy as np

    from icmlgym.runner.affinity import pinning_enabled
    from icmlgym.runner.sandbox import bwrap_path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    t_run = time.perf_counter()
    np.random.seed(0)
    pin = pinning_enabled()  # what an isolated run does (ICMLGYM_SANDBOX_PIN=0 turns it off there and here)
    modes = ["bwrap", "none"] if bwrap_path() else ["none"]
    load0 = os.getloadavg()
    remotes = {m: Remote(m, args.steps) for m in modes}
    machinery = Machinery()
    floor = Floor()
    # the channel's mean frame sizes, from a warm-up episode: the bare round trips carry the same bytes
    _, n_in, n_out = remotes[modes[0]].step_time(10_000, pin)
    sizes = (int(round(n_in)), int(round(n_out)))
    transport = remotes[modes[0]].ch.transport
    echoes = {k: Echo(t, *sizes) for k, (t, _) in BARE.items()}
    echoes["inprocess+bare"] = Echo(transport, *sizes)
    # the first mode also unpinned (the scheduler places the two ends) and with each end on a CPU of its own
    channels = [f"channel[{m}]" for m in modes] + ([f"channel[{modes[0]},unpinned]"] if pin else []) + [f"channel[{modes[0]},2cpus]"]
    keys = ["inprocess", *BARE, "limit", "inprocess+bare", "floor", "machinery", *channels]
    out: dict[str, dict[str, list[float]]] = {k: {r: [] for r in ROWS} for k in keys}
    ratio_keys = ["floor", "machinery", *channels]
    ratios: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []} for k in ratio_keys}
    old_ratio: dict[str, list[float]] = {k: [] for k in channels}
    fastest: list[str] = []
    try:
        for r in range(args.rounds):
            got = {"inprocess": inprocess_step(args.steps, r)}
            for m in modes:
                got[f"channel[{m}]"] = remotes[m].step_time(r, pin)[0]
            if pin:
                got[f"channel[{modes[0]},unpinned]"] = remotes[modes[0]].step_time(r, False)[0]
            got[f"channel[{modes[0]},2cpus]"] = remotes[modes[0]].step_time(r, "apart")[0]
            for k, (_, pinned) in BARE.items():
                got[k] = bare_round_trip(echoes[k], args.steps, pinned)
            got["machinery"] = machinery.step_time(args.steps, pin)
            got["floor"] = floor.step_time(args.steps, pin)
            got["inprocess+bare"] = inprocess_with_round_trip(args.steps, r, echoes["inprocess+bare"], pin)
            best = min(BARE, key=lambda k: got[k]["wall"])
            fastest.append(best)
            # the limit: the fastest raw round trip of the same bytes this round (wall and CPU each at its minimum)
            got["limit"] = {**got[best], "cpu": min(got[k]["cpu"] for k in BARE)}
            for k, v in got.items():
                for row in ROWS:
                    out[k][row].append(v[row])
            base, limit = got["inprocess"], got["limit"]
            for k in ratio_keys:  # the channel's overhead: what it adds to an in-process step (machinery: all of it)
                for row in ("wall", "cpu"):
                    extra = got[k][row] - (0.0 if k in ("floor", "machinery") else base[row])
                    ratios[k][row].append(extra / limit[row])
            for k in channels:
                old_ratio[k].append((got[k]["wall"] - base["wall"]) / got["bare"]["wall"])
    finally:
        for rem in remotes.values():
            rem.close()
        machinery.close()
        floor.close()
        for e in echoes.values():
            e.close()
    starts = {m: [start_time(m) for _ in range(args.starts)] for m in modes}
    load1 = os.getloadavg()
    print(f"Bandit-v0, {args.steps}-step episodes, UCB1, {args.rounds} interleaved rounds; frame sizes out/back: {sizes[0]}/{sizes[1]} bytes; "
          f"channel transport: {transport}; one CPU per run (affinity): {'on' if pin else 'off'}")
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f} (cores: {os.cpu_count()})")
    print("per step, us (median over rounds [min-max]); cpu: both ends; other cpu: the far end alone; wait: both ends runnable, not running")
    print(f"{'':<24}" + "".join(f"{row:>22}" for row in ROWS))
    for k in keys:
        print(f"{k:<24}" + "".join(f"{_row(_stats(out[k][row])):>22}" for row in ROWS))
    counts = {k: fastest.count(k) for k in BARE if fastest.count(k)}
    print(f"limit = the fastest of the {len(BARE)} bare round trips in each round (fastest: {', '.join(f'{k} {n}x' for k, n in counts.items())}); "
          "its cpu = the least cpu of the four")
    print("OVERHEAD / LIMIT (median [min-max] over rounds; target <= 2): channel: (channel - inprocess) / limit; "
          "floor, machinery: floor / limit, machinery / limit")
    for k in ratio_keys:
        w, c = _stats(ratios[k]["wall"]), _stats(ratios[k]["cpu"])
        verdict = "met" if w["median"] <= 2 else "not met"
        print(f"  {k:<24} wall {w['median']:5.2f} [{w['min']:.2f}-{w['max']:.2f}]   cpu {c['median']:5.2f} [{c['min']:.2f}-{c['max']:.2f}]"
              + (f"   wall target: {verdict}" if k not in ("floor", "machinery") else ""))
    print("against the unpinned socket round trip ('bare', the limit before session 5): "
          + "; ".join(f"{k} wall {_stats(v)['median']:.2f}" for k, v in old_ratio.items()))
    for m in modes:
        s = _stats([w for w, _ in starts[m]])
        c = _stats([c for _, c in starts[m]])
        print(f"start [{m}]: wall {s['median']:.3f} s [{s['min']:.3f}-{s['max']:.3f}] (target < 0.5: {'met' if s['median'] < 0.5 else 'not met'}); "
              f"cpu of the agent's processes {c['median']:.3f} s")
    print(f"({time.perf_counter() - t_run:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps({"per_step": {k: {row: _stats(v) for row, v in rows.items()} for k, rows in out.items()},
                                         "overhead_over_limit": {k: {row: _stats(v) for row, v in rows.items()} for k, rows in ratios.items()},
                                         "overhead_over_unpinned_socket": {k: _stats(v) for k, v in old_ratio.items()},
                                         "fastest_bare": fastest, "pinned": pin, "transport": transport,
                                         "start_s": {m: _stats([w for w, _ in v]) for m, v in starts.items()},
                                         "start_cpu_s": {m: _stats([c for _, c in v]) for m, v in starts.items()},
                                         "frame_bytes": sizes, "load": [load0[0], load1[0]]}, indent=2))


if __name__ == "__main__":
    main()
