"""icmlgym: ICML 2026 problems as registered Gymnasium / PettingZoo environments.

    import gymnasium as gym, icmlgym
    env = gym.make("icmlgym/Bandit-v0")
    records = icmlgym.run("icmlgym/Bandit-v0", "ucb1", seeds=5)
    board = icmlgym.Leaderboard()            # ./icmlgym-results/leaderboard.db
    board.add(records); board.table(env="icmlgym/Bandit-v0")

Importing the package registers every env (Gymnasium namespace ``icmlgym``;
multi-agent envs in PettingZoo's parallel registry). ``icmlgym.register(card)`` /
``icmlgym.unregister(env_id)`` add and remove one (a different card under a taken
id raises); ``with icmlgym.registered(card): ...`` does it for a block.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from icmlgym.catalog import MissingExtraError, TaskCard, Tier, card, suite, suites, tasks
from icmlgym.envs import make, make_parallel, register_all
from icmlgym.registry import DuplicateRegistrationError, register, register_agent, registered, unregister, unregister_agent

if TYPE_CHECKING:
    from icmlgym.agents import Agent, AgentSpec, BaseAgent, DictAgent, MultiAgent, load_agent
    from icmlgym.leaderboard import Leaderboard
    from icmlgym.runner import RunRecord, run

register_all()

# loaded on first use, so that `import icmlgym` (and `icmlgym --help`) stays quick: the runner,
# the agents and the leaderboard (SQLAlchemy, pandas) import a lot that registering envs does not need
_LAZY = {
    "Agent": "icmlgym.agents", "AgentSpec": "icmlgym.agents", "BaseAgent": "icmlgym.agents", "DictAgent": "icmlgym.agents",
    "MultiAgent": "icmlgym.agents", "load_agent": "icmlgym.agents", "RunRecord": "icmlgym.runner", "run": "icmlgym.runner",
    "Leaderboard": "icmlgym.leaderboard",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("icmlgym")
        except PackageNotFoundError:  # running from a source tree that is not installed
            value = "0.0.0"
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module 'icmlgym' has no attribute {name!r}")


__all__ = [
    "Agent",
    "AgentSpec",
    "BaseAgent",
    "DictAgent",
    "DuplicateRegistrationError",
    "Leaderboard",
    "MissingExtraError",
    "MultiAgent",
    "RunRecord",
    "TaskCard",
    "Tier",
    "card",
    "load_agent",
    "make",
    "make_parallel",
    "register",
    "register_agent",
    "registered",
    "run",
    "suite",
    "suites",
    "tasks",
    "unregister",
    "unregister_agent",
]
