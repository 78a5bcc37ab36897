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

from importlib.metadata import PackageNotFoundError, version

from icmlgym.agents import Agent, AgentSpec, BaseAgent, DictAgent, MultiAgent, load_agent
from icmlgym.catalog import MissingExtraError, TaskCard, Tier, card, suite, suites, tasks
from icmlgym.envs import make, make_parallel, register_all
from icmlgym.registry import DuplicateRegistrationError, register, register_agent, registered, unregister, unregister_agent
from icmlgym.runner import RunRecord, run

try:
    __version__ = version("icmlgym")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

register_all()


def __getattr__(name: str):
    # the leaderboard pulls in SQLAlchemy; load it when first used
    if name == "Leaderboard":
        from icmlgym.leaderboard import Leaderboard

        return Leaderboard
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
