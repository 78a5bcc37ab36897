"""Agents used by the core tests (importable as tests.core.agents_for_tests:Class)."""

import os
import time

from icmlgym import BaseAgent


class FirstArm(BaseAgent):
    name = "first-arm"

    def act(self, obs, info):
        return 0


class CrashOnSeed(BaseAgent):
    """Raises during the episode when the run's agent seed is odd."""

    name = "crash-on-odd"

    def __init__(self, crash: bool = True):
        super().__init__()
        self.crash = crash
        self.steps = 0

    def reset(self, seed, spec):
        super().reset(seed, spec)
        self.steps = 0
        self.odd = bool(seed % 2)

    def act(self, obs, info):
        self.steps += 1
        if self.crash and self.odd and self.steps == 5:
            raise RuntimeError("agent exploded on purpose")
        return 0


class HangForever(BaseAgent):
    name = "hang"

    def act(self, obs, info):
        while True:
            time.sleep(0.05)


class SegfaultAgent(BaseAgent):
    name = "segfault"

    def act(self, obs, info):
        os._exit(13)


class NotAnAgent:
    def act(self, obs, info):
        return 0


class RecordsCalls(BaseAgent):
    """Logs every protocol call (to check the order the runner promises)."""

    calls: list = []

    def reset(self, seed, spec):
        super().reset(seed, spec)
        RecordsCalls.calls.append(("reset", spec.episode))

    def train(self, env, budget):
        RecordsCalls.calls.append(("train", budget))

    def act(self, obs, info):
        if RecordsCalls.calls[-1][0] != "act":
            RecordsCalls.calls.append(("act", self.spec.episode))
        return 0
