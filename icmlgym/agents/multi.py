"""Multi-agent adapters: one single-agent instance per PettingZoo agent, or the class's joint twin.

An agent class may declare ``joint = "module:Class"``: a multi-agent (``multi_agent = True``)
class taking the same constructor arguments that plays every PettingZoo agent at once and
gives, seed for seed, the records of one instance per agent id under :class:`DictAgent`
(e.g. :class:`icmlgym.agents.games_joint.JointFTRLAgent`). :func:`lift` is how the runner
turns a loaded single-agent class into a multi-agent one.
"""

from __future__ import annotations

from typing import Any, Callable

from icmlgym.agents.protocol import Agent, AgentSpec, declared_twin


class DictAgent:
    """Drives a PettingZoo Parallel env with one :class:`Agent` per agent id.

    Args:
        agents: a dict ``{agent_id: Agent}``, or a factory called once per agent id
            the first time that id is seen.
    """

    multi_agent = True

    def __init__(self, agents: dict[str, Agent] | Callable[[], Agent]) -> None:
        if callable(agents) and not isinstance(agents, dict):
            self._factory: Callable[[], Agent] | None = agents
            self.agents: dict[str, Agent] = {}
        else:
            self._factory = None
            self.agents = dict(agents)

    def _agent(self, agent_id: str) -> Agent:
        if agent_id not in self.agents:
            if self._factory is None:
                raise KeyError(f"no agent for PettingZoo agent {agent_id!r}; have {sorted(self.agents)}")
            self.agents[agent_id] = self._factory()
        return self.agents[agent_id]

    def reset(self, seed: int | None, spec: dict[str, AgentSpec]) -> None:
        for i, (agent_id, s) in enumerate(sorted(spec.items())):
            self._agent(agent_id).reset(None if seed is None else seed + 7919 * (i + 1), s)

    def act(self, observations: dict[str, Any], infos: dict[str, dict]) -> dict[str, Any]:
        return {a: self._agent(a).act(o, infos.get(a, {})) for a, o in observations.items()}

    def update(self, observations, actions, rewards, next_observations, terminations, truncations, infos) -> None:
        for a, action in actions.items():
            self._agent(a).update(
                observations[a],
                action,
                float(rewards.get(a, 0.0)),
                next_observations.get(a, observations[a]),
                bool(terminations.get(a, False)),
                bool(truncations.get(a, False)),
                infos.get(a, {}),
            )


def joint_class(agent_cls: Any) -> type | None:
    """The joint twin an agent class declares with ``joint = "module:Class"`` (None without one; not inherited)."""
    return declared_twin(agent_cls, "joint")


def lift(loaded: Any, agent: Any | None = None) -> Any:
    """A multi-agent agent from a loaded agent (:class:`icmlgym.agents.loading.LoadedAgent`).

    ``agent`` (default: a fresh ``loaded()``) is returned as it is when it is already
    multi-agent; otherwise the class's joint twin with the loaded keyword arguments, or a
    :class:`DictAgent` of fresh instances."""
    agent = loaded() if agent is None else agent
    if getattr(agent, "multi_agent", False):
        return agent
    twin = joint_class(loaded.cls)
    if twin is not None:
        return twin(**loaded.kwargs)
    return DictAgent(lambda: loaded())
