"""Agents for the substrate's runner tests, loaded by file path (worker processes import them from here).

Each plays a Bernoulli bandit uniformly at random with its own seed, so the runs have metrics.
"""

from __future__ import annotations

import subprocess
import sys

from icmlgym.agents.protocol import BaseAgent


class _Uniform(BaseAgent):
    def act(self, obs, info):
        return int(self.np_random.integers(self.action_space.n))


class TorchAgent(_Uniform):
    """Imports torch and runs a small matmul at reset; writes its peak virtual size (VmPeak, kB) to ``report``."""

    name = "torch-user"

    def __init__(self, report: str = "") -> None:
        super().__init__()
        self.report = report

    def reset(self, seed, spec):
        super().reset(seed, spec)
        import torch

        torch.manual_seed(0)
        a = torch.randn(256, 256)
        float((a @ a).sum())
        if self.report:
            with open("/proc/self/status") as fh:
                peak = next(line.split()[1] for line in fh if line.startswith("VmPeak"))
            with open(self.report, "w") as fh:
                fh.write(peak)


class ChildHogAgent(_Uniform):
    """At reset, starts a child process that fills ``mb`` megabytes and waits for it."""

    name = "child-hog"

    def __init__(self, mb: int = 1500, pidfile: str = "") -> None:
        super().__init__()
        self.mb = mb
        self.pidfile = pidfile

    def reset(self, seed, spec):
        super().reset(seed, spec)
        code = f"import time; x = b'\\x01' * ({self.mb} * 2**20); time.sleep(60)"
        child = subprocess.Popen([sys.executable, "-c", code])
        if self.pidfile:
            with open(self.pidfile, "w") as fh:
                fh.write(str(child.pid))
        child.wait()
