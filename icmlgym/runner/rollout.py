"""The one episode loop: :func:`rollout` plays one episode of an agent in an env.

The runner's single- and multi-agent loops, the tests and the benchmarks all play
episodes through it, so that an episode is seeded the same way everywhere: episode
``e`` of run seed ``s`` resets the env with ``episode_seed(s, e, "env")`` and the
agent with ``episode_seed(s, e, "agent")``.

    from icmlgym.runner.rollout import rollout
    env = icmlgym.make("icmlgym/Bandit-v0")
    ep = rollout(env, load_agent("ucb1")(), seed=0)
    ep.metrics["pseudo_regret"], ep.cost["env_steps"]

**Order of calls** (the agent protocol): ``agent.reset(agent_seed, spec)``, then
``env.reset(seed=env_seed)``, then ``act`` / ``env.step`` / ``update`` until the
episode ends (terminated or truncated, for every PettingZoo agent in a Parallel
env) or ``max_steps`` steps were played (then the last step counts as truncated).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from icmlgym.agents.protocol import AgentSpec, with_episode
from icmlgym.runner.record import EpisodeRecord

_STREAMS = {"env": 0, "agent": 1, "train": 2}

StepHook = Callable[[Any, Any, Any, Any, Any, Any], None]
"""``on_step(obs, action, reward, terminated, truncated, info)`` after every step
(dicts keyed by agent id in a multi-agent env); ``obs`` is the observation the step returned."""


def episode_seed(seed: int, episode: int, stream: str) -> int:
    """A 31-bit seed for one stream (``env``, ``agent`` or ``train``) of one episode, derived from the run seed.

    Episode ``-1`` is the training phase."""
    ss = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, episode + 1, _STREAMS[stream]])
    return int(ss.generate_state(1, dtype=np.uint32)[0] >> 1)


# numpy's SeedSequence hash (numpy/random/bit_generator.pyx): its constants, for episode_seeds
_INIT_A, _MULT_A, _INIT_B, _MULT_B, _MIX_L, _MIX_R = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED, 0xCA01F9DD, 0x4973F715
_M32 = 0xFFFFFFFF


def episode_seeds(seeds: Sequence[int], episode: int, stream: str) -> list[int]:
    """``[episode_seed(s, episode, stream) for s in seeds]``, SeedSequence's hash run once over all seeds.

    The entropy of ``episode_seed`` is three 32-bit words (the seed's low word, ``episode + 1``, the stream), fewer
    than SeedSequence's pool of four: the pool is the words hashed in turn, a zero hashed after them, then every
    ordered pair of pool entries mixed; the first output word hashes the pool's first entry. The hash constants
    follow from the call count alone, so the hash is the same uint32 arithmetic (wrapping) elementwise over the seeds
    (equal to ``episode_seed``: ``tests/core/test_batched.py``)."""
    if not 0 <= episode + 1 <= _M32:  # another word count: seed by seed
        return [episode_seed(s, episode, stream) for s in seeds]
    n = len(seeds)
    h = _INIT_A

    def hashmix(v: np.ndarray) -> np.ndarray:
        nonlocal h
        v = v ^ np.uint32(h)
        h = (h * _MULT_A) & _M32
        v = v * np.uint32(h)
        return v ^ (v >> np.uint32(16))

    words = [np.array([int(s) & _M32 for s in seeds], dtype=np.uint32), np.full(n, episode + 1, np.uint32), np.full(n, _STREAMS[stream], np.uint32)]
    pool = [hashmix(w) for w in words] + [hashmix(np.zeros(n, np.uint32))]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                mixed = np.uint32(_MIX_L) * pool[dst] - np.uint32(_MIX_R) * hashmix(pool[src])
                pool[dst] = mixed ^ (mixed >> np.uint32(16))
    out = (pool[0] ^ np.uint32(_INIT_B)) * np.uint32((_INIT_B * _MULT_B) & _M32)
    return ((out ^ (out >> np.uint32(16))) >> np.uint32(1)).tolist()


def is_multi_agent(env: Any) -> bool:
    """Whether ``env`` is a PettingZoo Parallel env (it has ``possible_agents``) rather than a Gymnasium one."""
    return hasattr(env, "possible_agents") and callable(getattr(env, "observation_space", None))


def default_spec(env: Any, episode: int = 0) -> AgentSpec | dict[str, AgentSpec]:
    """The spec an agent gets when the caller passes none: the env's spaces and, when registered, its card."""
    from icmlgym.catalog import UnknownEnvError, card

    env_id = getattr(getattr(env, "spec", None), "id", None) or getattr(env, "env_id", None) or type(env).__name__
    try:
        c = card(env_id)
    except UnknownEnvError:
        c = None
    if is_multi_agent(env):
        return {a: AgentSpec(env_id, env.observation_space(a), env.action_space(a), c, episode=episode, agent_id=a) for a in env.possible_agents}
    return AgentSpec(env_id, env.observation_space, env.action_space, c, episode=episode)


def _scalar_metrics(info: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in info.get("metrics", {}).items() if np.isscalar(v) or np.ndim(v) == 0}


def _episode_cost(info: dict[str, Any], steps: int) -> dict[str, float]:
    cost = {k: float(v) for k, v in info.get("cost", {}).items()}
    cost.setdefault("env_steps", float(steps))
    return cost


def rollout(
    env: Any,
    agent: Any,
    seed: int,
    spec: AgentSpec | dict[str, AgentSpec] | None = None,
    *,
    episode: int = 0,
    max_steps: int | None = None,
    on_step: StepHook | None = None,
) -> EpisodeRecord:
    """Play episode ``episode`` of run seed ``seed``: ``agent`` in ``env`` until it ends.

    ``env`` is a Gymnasium env or a PettingZoo Parallel env (then ``agent`` follows the
    multi-agent protocol, e.g. a :class:`~icmlgym.agents.multi.DictAgent`). ``spec`` is
    what the agent may know (default: the env's spaces and card). Returns the episode's
    return, steps, scalar metrics and cost counters from the last ``info``.
    """
    if max_steps is not None and max_steps < 1:
        raise ValueError(f"max_steps must be at least 1 or None, got {max_steps}")
    spec = default_spec(env, episode) if spec is None else with_episode(spec, episode)
    if is_multi_agent(env):
        return _multi(env, agent, seed, spec, episode, max_steps, on_step)  # type: ignore[arg-type]
    return _single(env, agent, seed, spec, episode, max_steps, on_step)  # type: ignore[arg-type]


def _single(env, agent, seed: int, spec: AgentSpec, episode: int, max_steps: int | None, on_step: StepHook | None) -> EpisodeRecord:
    t0 = time.perf_counter()
    agent.reset(episode_seed(seed, episode, "agent"), spec)
    obs, info = env.reset(seed=episode_seed(seed, episode, "env"))
    ret = 0.0
    steps = 0
    act, update, step = agent.act, agent.update, env.step
    while True:
        action = act(obs, info)
        next_obs, reward, terminated, truncated, info = step(action)
        steps += 1
        if max_steps is not None and steps >= max_steps:
            truncated = True
        update(obs, action, reward, next_obs, terminated, truncated, info)
        if on_step is not None:
            on_step(next_obs, action, reward, terminated, truncated, info)
        ret += float(reward)
        obs = next_obs
        if terminated or truncated:
            break
    return EpisodeRecord(episode, ret, steps, _scalar_metrics(info), _episode_cost(info, steps), time.perf_counter() - t0)


def _multi(env, agent, seed: int, specs: dict[str, AgentSpec], episode: int, max_steps: int | None, on_step: StepHook | None) -> EpisodeRecord:
    t0 = time.perf_counter()
    agent.reset(episode_seed(seed, episode, "agent"), specs)
    obs, infos = env.reset(seed=episode_seed(seed, episode, "env"))
    ret = 0.0
    steps = 0
    last_infos = infos
    while env.agents:
        actions = agent.act(obs, infos)
        next_obs, rewards, terms, truncs, infos = env.step(actions)
        steps += 1
        if max_steps is not None and steps >= max_steps:
            truncs = {a: True for a in truncs}
        agent.update(obs, actions, rewards, next_obs, terms, truncs, infos)
        if on_step is not None:
            on_step(next_obs, actions, rewards, terms, truncs, infos)
        ret += float(sum(rewards.values()))
        obs = next_obs
        if infos:
            last_infos = infos
        if all(terms.get(a, False) or truncs.get(a, False) for a in actions):
            break
    first = next(iter(last_infos.values()), {}) if last_infos else {}
    return EpisodeRecord(episode, ret, steps, _scalar_metrics(first), _episode_cost(first, steps), time.perf_counter() - t0)


__all__ = ["StepHook", "default_spec", "episode_seed", "is_multi_agent", "rollout"]
