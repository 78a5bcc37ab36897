"""Environment families and their registration.

Each family is a subpackage whose ``__init__`` imports nothing heavy and exposes
``CARDS`` (a list of :class:`icmlgym.catalog.TaskCard`) and, optionally,
``SUITES`` (suite name -> list of ``(env_id, env_kwargs)``), ``AGENTS``
(shipped agent name -> :class:`icmlgym.catalog.AgentInfo`), ``EXTRAS`` (extra
name -> import names) and ``PROVENANCE`` (distributions recorded with each run).
Families are discovered: :func:`register_all` registers every subpackage that
defines ``CARDS`` (through :mod:`icmlgym.registry`, which refuses duplicates);
a subpackage without ``CARDS`` is shared code, not a family. Single-agent envs
go to Gymnasium's registry (namespace ``icmlgym``), multi-agent envs to
PettingZoo's parallel registry. Entry points are strings, so an env's module
(and its optional dependencies) is imported only when the env is made.

To add a family: create ``icmlgym/envs/<family>/`` with its ``CARDS``; nothing
else in this package changes.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from typing import Any

import gymnasium as gym

from icmlgym.catalog import card, require_extra
from icmlgym.registry import FAMILIES, family_of, register_family

_registered = False


def family_names() -> list[str]:
    """The subpackages of this package, in name order: each one that defines ``CARDS`` is a family."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg)


def register_all() -> None:
    """Discover and register every family (idempotent). Called by ``import icmlgym``."""
    global _registered
    if _registered:
        return
    for name in family_names():
        if name in FAMILIES:
            continue
        family = family_of(importlib.import_module(f"icmlgym.envs.{name}"))
        if family is not None:
            register_family(family)
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
        with warnings.catch_warnings():
            # a superseded version is kept beside its successor as a benchmark entry of its own
            # (SkillNeologism-v0 on another model than -v1): making it is deliberate, not stale
            warnings.filterwarnings("ignore", message=_OUT_OF_DATE, category=DeprecationWarning)
            return gym.make(c.id, **kwargs)
    return make_parallel(c.id, **kwargs)


_OUT_OF_DATE = r".*The environment icmlgym/\S+ is out of date"


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
