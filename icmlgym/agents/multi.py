"""Multi-agent adapter: one single-agent instance per PettingZoo agent."""

from __future__ import annotations

from typing import Any, Callable

from icmlgym.agents.protocol import Agent, AgentSpec


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
