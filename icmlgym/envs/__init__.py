"""Environment families and their registration.

Each family is a subpackage whose ``__init__`` imports nothing heavy and exposes
``CARDS`` (a list of :class:`icmlgym.catalog.TaskCard`) and, optionally,
``SUITES`` (suite name -> list of ``(env_id, env_kwargs)``) and ``AGENTS``
(shipped agent name -> :class:`icmlgym.catalog.AgentInfo`). Importing this
package puts every card in the catalog, registers single-agent envs with
Gymnasium (namespace ``icmlgym``) and multi-agent envs with PettingZoo's
parallel registry. Entry points are strings, so an env's module (and its
optional dependencies) is imported only when the env is made.

To add a family: create ``icmlgym/envs/<family>/``, list its cards, and add the
package name to ``FAMILIES`` below.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import gymnasium as gym

from icmlgym.catalog import AGENTS, TaskCard, add_card, add_to_suite, card, require_extra

FAMILIES: tuple[str, ...] = (
    "bandit",
    "screening",
    "fairbandit",
    "games",
    "craft",
    "sketch",
    "arena",
    "cognitive",
)

_registered = False


def _register_card(c: TaskCard) -> None:
    add_card(c)
    if c.kind == "single":
        if c.id not in gym.registry:
            gym.register(
                id=c.id, entry_point=c.entry_point, vector_entry_point=c.vector_entry_point, kwargs=dict(c.default_kwargs)
            )
    else:
        from pettingzoo.env_registry.registration import parallel_registry, register

        if c.id not in parallel_registry:
            register("parallel", c.id, entry_point=c.entry_point, kwargs=dict(c.default_kwargs))


def register_all() -> None:
    """Register every family (idempotent). Called by ``import icmlgym``."""
    global _registered
    if _registered:
        return
    for name in FAMILIES:
        try:
            module = importlib.import_module(f"icmlgym.envs.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"icmlgym.envs.{name}":
                continue  # family not present in this build
            raise
        for c in getattr(module, "CARDS", ()):
            _register_card(c)
        AGENTS.update(getattr(module, "AGENTS", {}))
        for suite_name, members in getattr(module, "SUITES", {}).items():
            for env_id, kwargs in members:
                add_to_suite(suite_name, env_id, kwargs)
    _registered = True


def make(env_id: str, **kwargs: Any):
    """Make a single-agent (Gymnasium) or multi-agent (PettingZoo Parallel) env by id.

    A missing optional extra raises :class:`icmlgym.catalog.MissingExtraError`
    naming the ``pip install "icmlgym[...]"`` to run; an unknown id raises with
    close matches.
    """
    register_all()
    c = card(env_id)
    if c.extra:
        require_extra(c.extra, what=c.id)
    if c.kind == "single":
        return gym.make(c.id, **kwargs)
    return make_parallel(c.id, **kwargs)


def make_parallel(env_id: str, **kwargs: Any):
    """Make a PettingZoo Parallel env registered by icmlgym."""
    register_all()
    c = card(env_id)
    if c.kind != "multi":
        raise ValueError(f"{c.id} is a single-agent env; use icmlgym.make or gymnasium.make")
    if c.extra:
        require_extra(c.extra, what=c.id)
    from pettingzoo.env_registry.registration import make as pz_make

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return pz_make("parallel", c.id, **kwargs)
