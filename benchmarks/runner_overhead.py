"""Runner overhead per step on Bandit-v0: ``icmlgym.runner.execute`` against the bare rollout.

Both sides make the env with ``gym.make`` (same wrappers), use the same agent class
and seeds, and play the same number of steps; the runner adds seeding, metering,
metrics and provenance. Reported: microseconds per step and the ratio runner / plain.

    python benchmarks/runner_overhead.py [--horizon 20000] [--episodes 5] [--repeats 5]
"""

from __future__ import annotations

import argparse
import platform
import time

import gymnasium as gym

import icmlgym
from icmlgym.agents import AgentSpec, load_agent
from icmlgym.runner import RunTask, execute, rollout
from icmlgym.runner.provenance import cpu_model


def plain_loop(agent_name: str, horizon: int, episodes: int, seed: int) -> float:
    """The episodes played by the bare rollout (the runner's one episode loop), without the runner."""
    env = gym.make("icmlgym/Bandit-v0", horizon=horizon)
    agent = load_agent(agent_name)()
    spec = AgentSpec("icmlgym/Bandit-v0", env.observation_space, env.action_space)
    t0 = time.perf_counter()
    for ep in range(episodes):
        rollout(env, agent, seed, spec, episode=ep)
    return time.perf_counter() - t0


def through_runner(agent_name: str, horizon: int, episodes: int, seed: int) -> float:
    task = RunTask("icmlgym/Bandit-v0", agent_name, seed, "smoke", {"horizon": horizon}, episodes=episodes)
    t0 = time.perf_counter()
    rec = execute(task)
    elapsed = time.perf_counter() - t0
    assert rec.status == "ok", rec.error
    return elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--horizon", type=int, default=20_000)
    p.add_argument("--episodes", type=int, default=5)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    steps = args.horizon * args.episodes
    through_runner("random", 100, 1, 0)  # warm caches (provenance, imports) once, as a long sweep would
    print(f"machine: {cpu_model()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}, icmlgym {icmlgym.__version__}")
    print(f"Bandit-v0, {args.episodes} episodes x {args.horizon} steps, best of {args.repeats} (interleaved)")
    print(f"{'agent':16s} {'plain us/step':>14s} {'runner us/step':>15s} {'ratio':>7s}")
    for agent in ("random", "ucb1", "bandit-thompson"):
        plain, runner = [], []
        for r in range(args.repeats):
            plain.append(plain_loop(agent, args.horizon, args.episodes, r))
            runner.append(through_runner(agent, args.horizon, args.episodes, r))
        bp, br = min(plain) / steps * 1e6, min(runner) / steps * 1e6
        print(f"{agent:16s} {bp:14.2f} {br:15.2f} {br / bp:7.3f}")


if __name__ == "__main__":
    main()
