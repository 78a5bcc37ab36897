"""Adversarial submissions: each tries one attack from issue #13 and, where it can, cheats.

They are submitted as files (``adversaries.py:Class``), so they run inside the agent
host of the sandbox exactly as a user's submission would. Each prints what it found
(the output lands in the run's capped log), so that the tests can say what the
attack saw, not only what it scored.
"""

from __future__ import annotations

import gc
import os
import sys
import time

import numpy as np

from icmlgym.baselines.generic import RandomAgent
from icmlgym.agents.protocol import BaseAgent
from icmlgym.runner.rollout import episode_seed


def _means_of(env) -> np.ndarray | None:
    inner = getattr(env, "unwrapped", env)
    means = getattr(inner, "means", None)
    return None if means is None else np.asarray(means)


class _Cheater(BaseAgent):
    """Plays the best arm of ``self.means`` once it has them, else uniformly at random."""

    means: np.ndarray | None = None

    def act(self, obs, info):
        if self.means is not None:
            return int(np.argmax(self.means))
        return int(self.np_random.integers(self.spec.action_space.n))


class TrainEnvReader(_Cheater):
    """Reads the answer from the env ``train(env, budget)`` hands it."""

    def train(self, env, budget):
        self.means = _means_of(env)
        print(f"train env means: {self.means}")


class FrameReader(_Cheater):
    """Looks for the evaluation env in its callers' stack frames and in the garbage collector."""

    looked = False

    def act(self, obs, info):
        if not self.looked:
            self.looked = True
            found = []
            f = sys._getframe(1)
            while f is not None:
                found += [_means_of(v) for v in list(f.f_locals.values()) if _means_of(v) is not None]
                f = f.f_back
            found += [_means_of(o) for o in gc.get_objects() if type(o).__name__ == "BernoulliBanditEnv"]
            print(f"envs found through frames and gc: {len(found)}")
            if found:
                self.means = found[0]
        return super().act(obs, info)


class Rebuilder(_Cheater):
    """Rebuilds the evaluation env from the public spec (kwargs) and the public run seed."""

    def reset(self, seed, spec):
        super().reset(seed, spec)
        import icmlgym

        env = icmlgym.make(spec.env_id, **spec.env_kwargs)
        env.reset(seed=episode_seed(0, spec.episode, "env"))
        self.means = _means_of(env)


class RunnerPatcher(RandomAgent):
    """Patches the runner's episode loop and the env's step in its own process to report a perfect score."""

    def reset(self, seed, spec):
        super().reset(seed, spec)
        import gymnasium
        import icmlgym.runner.loop as loop
        import icmlgym.runner.rollout as rollout
        from icmlgym.envs.bandit.bernoulli_bandit import BernoulliBanditEnv
        from icmlgym.runner.record import EpisodeRecord

        def perfect(*args, **kwargs):
            return EpisodeRecord(kwargs.get("episode", 0), 1e9, 1, {"pseudo_regret": 0.0}, {"env_steps": 1.0})

        rollout.rollout = loop.rollout = perfect
        original = BernoulliBanditEnv.step

        def step(self, action):
            obs, r, term, trunc, info = original(self, action)
            return obs, 1.0, term, trunc, {**info, "metrics": {"pseudo_regret": 0.0}}

        BernoulliBanditEnv.step = step
        gymnasium.Env.step = step


class StoreOpener(RandomAgent):
    """Looks for the leaderboard store (its parent's command line, the environment, the file
    system) and tries to rewrite stored episodes and insert forged runs."""

    def reset(self, seed, spec):
        super().reset(seed, spec)
        if getattr(self, "_tried", False):
            return
        self._tried = True
        candidates = set()
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    cmd = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
                except OSError:
                    continue
                candidates.update(w for w in cmd.split("\0") if w.endswith(".db"))
        for var in ("ICMLGYM_HOME", "HOME", "PWD"):
            if os.environ.get(var):
                candidates.add(os.path.join(os.environ[var], "leaderboard.db"))
        for root in ("/tmp", "/agent", os.getcwd(), "/work", "/root", "/home"):
            for dirpath, dirs, files in os.walk(root):
                if dirpath.count(os.sep) - root.count(os.sep) >= 3:
                    dirs[:] = []  # deep enough to find a store beside a project
                candidates.update(os.path.join(dirpath, f) for f in files if f.endswith(".db"))
        written = []
        import sqlite3

        for path in sorted(candidates):
            try:
                if os.path.getsize(path) == 0:
                    continue
                con = sqlite3.connect(path, timeout=1)
                con.execute("UPDATE icmlgym_episodes SET ret = 1e9")
                con.execute("UPDATE icmlgym_episode_values SET value = 0")
                con.commit()
                con.close()
                written.append(path)
            except Exception as err:  # noqa: BLE001
                print(f"cannot write {path}: {type(err).__name__}")
        print(f"store candidates: {sorted(candidates)}; written: {written}")


class RecordForger(RandomAgent):
    """Writes a forged record (the shape the old worker pipe accepted) to every open descriptor."""

    def act(self, obs, info):
        import json
        import pickle

        forged = {"env_id": "icmlgym/Bandit-v0", "agent_name": "ucb1", "seed": 0, "tier": "smoke", "status": "ok",
                  "episodes": [{"episode": 0, "ret": 1e9, "length": 1, "metrics": {"pseudo_regret": 0.0}}]}
        for payload in (pickle.dumps(forged), json.dumps(["bye", forged]).encode()):
            for fd in range(3, 64):
                try:
                    os.write(fd, payload)
                except OSError:
                    pass
        return super().act(obs, info)


class Impersonator(RandomAgent):
    """Claims to be the shipped Thompson-sampling entry through its class attribute."""

    name = "bandit-thompson"


class Forker(RandomAgent):
    """Leaves daemons behind: double-forked, new session, ignoring SIGTERM (marker in argv)."""

    marker = "icmlgym-security-forker"

    def reset(self, seed, spec):
        super().reset(seed, spec)
        if getattr(self, "_forked", False):
            return
        self._forked = True
        for _ in range(5):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execv(sys.executable, [sys.executable, "-c", f"import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)  # {self.marker}"])
                os._exit(0)
        time.sleep(0.3)


class Hog(RandomAgent):
    """Five child processes of 300 MB each, every one under the limit alone."""

    def reset(self, seed, spec):
        super().reset(seed, spec)
        if getattr(self, "_started", False):
            return
        self._started = True
        for _ in range(5):
            if os.fork() == 0:
                block = np.ones(300 * 2**20 // 8)
                block += 1
                time.sleep(600)
                os._exit(0)

    def act(self, obs, info):
        time.sleep(0.01)
        return super().act(obs, info)


class Printer(RandomAgent):
    """Prints 400 MB to stdout and to stderr."""

    def reset(self, seed, spec):
        super().reset(seed, spec)
        if getattr(self, "_printed", False):
            return
        self._printed = True
        chunk = "x" * (1 << 20)
        for i in range(200):
            sys.stdout.write(chunk)
            sys.stderr.write(chunk)
        sys.stdout.flush()


class HugeError(RandomAgent):
    """Raises an exception whose message is 50 MB."""

    def act(self, obs, info):
        raise RuntimeError("E" * (50 * 2**20))


class SecretReader(RandomAgent):
    """Publishes every environment variable and its own keyword arguments through its error text and log."""

    def __init__(self, api_key: str = "") -> None:
        super().__init__()
        self.api_key = api_key

    def act(self, obs, info):
        dump = f"api_key={self.api_key} " + " ".join(f"{k}={v}" for k, v in os.environ.items())
        print(dump)
        raise RuntimeError(dump)


def _channel_fd() -> int:
    """The descriptor the agent host answers on (its first argument, ``R,W``; a lone ``FD`` is a socket)."""
    return int(sys.argv[1].split(",")[-1])


class Garbler(RandomAgent):
    """Writes a malformed frame to the channel (the host's first argument: ``R,W``, its pipes' descriptors)."""

    def act(self, obs, info):
        os.write(_channel_fd(), b"GET / HTTP/1.1\r\n\r\n")
        time.sleep(5)
        return 0


class Oversized(RandomAgent):
    """Announces a 1 GB message on the channel."""

    def act(self, obs, info):
        import struct

        os.write(_channel_fd(), struct.pack(">2sBBI", b"IG", 1, 0, 2**30))
        time.sleep(5)
        return 0


class Late(RandomAgent):
    """Answers ``act`` after its deadline."""

    def act(self, obs, info):
        time.sleep(30)
        return 0


class LateMidway(RandomAgent):
    """Answers 20 steps on time, then one after its deadline (a step frame's answer, kept by the channel's watchdog)."""

    def reset(self, seed, spec):
        super().reset(seed, spec)
        self.calls = 0

    def act(self, obs, info):
        self.calls += 1
        if self.calls > 20:
            time.sleep(30)
        return super().act(obs, info)


class Trainer(BaseAgent):
    """An honest agent that trains: pulls every arm of its own training env, then plays UCB1."""

    def __init__(self) -> None:
        super().__init__()
        self.prior = None

    def train(self, env, budget):
        n = env.action_space.n
        sums, counts = np.zeros(n), np.zeros(n)
        for t in range(min(budget, 200)):
            a = t % n
            _, r, term, trunc, _ = env.step(a)
            sums[a] += r
            counts[a] += 1
            if term or trunc:
                env.reset(seed=int(self.np_random.integers(2**31 - 1)))
        self.prior = (sums, counts)

    def reset(self, seed, spec):
        super().reset(seed, spec)
        n = spec.action_space.n
        self.sums, self.counts = (self.prior[0].copy(), self.prior[1].copy()) if self.prior else (np.zeros(n), np.zeros(n))

    def act(self, obs, info):
        t = self.counts.sum() + 1
        bonus = np.sqrt(2 * np.log(t) / np.maximum(self.counts, 1e-9))
        return int(np.argmax(self.sums / np.maximum(self.counts, 1) + bonus + self.np_random.random(len(self.sums)) * 1e-9))

    def update(self, obs, action, reward, next_obs, terminated, truncated, info):
        self.sums[action] += reward
        self.counts[action] += 1


class ForkThenHang(Forker):
    """Leaves marked daemons behind, then never answers: only the executor's run timeout ends it."""

    marker = "icmlgym-security-fork-then-hang"

    def act(self, obs, info):
        time.sleep(3600)
        return 0


class _RaisingTwin:
    """A vector twin whose ``act`` raises."""

    def __init__(self, **kwargs) -> None:
        pass

    def reset(self, seeds, spec) -> None:
        pass

    def act(self, obs, info):
        raise RuntimeError("the vector twin failed")

    def update(self, *args) -> None:
        pass


class FailingTwin(RandomAgent):
    """Plays like a random agent alone; its vector twin (for batched seeds) raises."""

    vectorized = _RaisingTwin
