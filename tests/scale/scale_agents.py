"""Agents that misbehave on purpose, loaded by file path in the scale tests (Ray workers import
them from this file, so they need not be importable as a package).

Each plays a Bernoulli bandit uniformly at random with its own seed when it does not misbehave,
so a run that survives its misbehaviour has well-defined metrics to compare.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np

from icmlgym.agents.protocol import BaseAgent


class _Uniform(BaseAgent):
    def act(self, obs, info):
        return int(self.np_random.integers(self.action_space.n))


class KillOnceAgent(_Uniform):
    """Kills its own worker process (SIGKILL) on its first attempt; ``marker`` remembers that it did."""

    name = "kill-once"

    def __init__(self, marker: str = "") -> None:
        super().__init__()
        if not marker:
            raise ValueError("KillOnceAgent needs a marker file path")
        self.marker = marker

    def reset(self, seed, spec):
        super().reset(seed, spec)
        if not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)


class AlwaysKillAgent(_Uniform):
    """Kills its own worker process on every attempt (a run that cannot succeed)."""

    name = "always-kill"

    def reset(self, seed, spec):
        super().reset(seed, spec)
        os.kill(os.getpid(), signal.SIGKILL)


class WaitForKillAgent(_Uniform):
    """On its first attempt writes its PID to ``marker`` and waits (up to 120 s) for someone to kill it."""

    name = "wait-for-kill"

    def __init__(self, marker: str = "") -> None:
        super().__init__()
        self.marker = marker

    def reset(self, seed, spec):
        super().reset(seed, spec)
        if not os.path.exists(self.marker):
            tmp = self.marker + ".tmp"
            Path(tmp).write_text(str(os.getpid()))
            os.replace(tmp, self.marker)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                time.sleep(0.05)


class HangAgent(_Uniform):
    """Never returns from reset (a hung run); writes its PID to ``pidfile`` first when given."""

    name = "hang"

    def __init__(self, pidfile: str = "") -> None:
        super().__init__()
        self.pidfile = pidfile

    def reset(self, seed, spec):
        super().reset(seed, spec)
        if self.pidfile:
            Path(self.pidfile).write_text(str(os.getpid()))
        while True:
            time.sleep(0.1)


class MemoryHogAgent(_Uniform):
    """Allocates ``mb`` megabytes at reset (a run past a memory limit)."""

    name = "memory-hog"

    def __init__(self, mb: int = 4000) -> None:
        super().__init__()
        self.mb = mb

    def reset(self, seed, spec):
        super().reset(seed, spec)
        self.block = np.ones(self.mb * 1024 * 1024 // 8)


class NeedsTwoCpus(_Uniform):
    """Declares that each of its runs needs two CPUs."""

    name = "two-cpus"
    num_cpus = 2


class TrainsBriefly(_Uniform):
    """Spends ``seconds`` in ``train`` (stands in for an agent that trains on the GPU)."""

    name = "trains-briefly"

    def __init__(self, seconds: float = 0.2) -> None:
        super().__init__()
        self.seconds = seconds

    def train(self, env, budget):
        time.sleep(self.seconds)


class RequiresEnvVar(_Uniform):
    """Fails unless the environment variable ``name`` is ``value`` in its worker (runtime_env test)."""

    name = "requires-env-var"

    def __init__(self, var: str = "ICMLGYM_SCALE_TEST", value: str = "1") -> None:
        super().__init__()
        self.var, self.value = var, value

    def reset(self, seed, spec):
        super().reset(seed, spec)
        if os.environ.get(self.var) != self.value:
            raise RuntimeError(f"{self.var} is {os.environ.get(self.var)!r}, not {self.value!r}")
