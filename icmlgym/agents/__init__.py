"""Agents: the protocol, loading, adapters (SB3, multi-agent) and the papers' methods.

Reference agents (a paper's method) live in ``icmlgym/agents/<family>.py``;
comparators in :mod:`icmlgym.baselines`.
"""

from icmlgym.agents.loading import AgentLoadError, LoadedAgent, agents_table, load_agent
from icmlgym.agents.multi import DictAgent
from icmlgym.agents.protocol import Agent, AgentSpec, BaseAgent, MultiAgent

__all__ = [
    "Agent",
    "AgentLoadError",
    "AgentSpec",
    "BaseAgent",
    "DictAgent",
    "LoadedAgent",
    "MultiAgent",
    "agents_table",
    "load_agent",
]
