"""Registration: env cards and shipped agents, added and removed through one door.

    import icmlgym
    icmlgym.register(card)              # the catalog, and Gymnasium's (or PettingZoo's) registry
    icmlgym.unregister(card.id)         # both, again
    with icmlgym.registered(card):      # for tests: gone again afterwards
        icmlgym.run(card.id, "random")

Registering an env id or an agent name that is already registered raises
:class:`DuplicateRegistrationError` unless the new entry is identical to the old one
(so re-importing a family is harmless, and a later family cannot silently shadow an
earlier one's env or agent).

Families are discovered by :func:`icmlgym.envs.register_all`: every subpackage of
:mod:`icmlgym.envs` whose ``__init__`` defines ``CARDS`` is a family (see ``docs/contributing.md``). Besides ``CARDS`` a family
may define ``AGENTS``, ``SUITES``, ``EXTRAS`` (extra name -> import names that must be
importable) and ``PROVENANCE`` (distribution names whose versions each run records).
This module sits at the bottom of the layering with :mod:`icmlgym.catalog`: it never
imports an env module, only the families' light ``__init__`` files.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Iterator

import gymnasium as gym

from icmlgym import catalog
from icmlgym.catalog import AGENTS, EXTRAS, AgentInfo, TaskCard


class DuplicateRegistrationError(ValueError):
    """An env id, agent name or extra registered twice with different contents."""


@dataclass(frozen=True)
class Family:
    """What a family declares in its ``icmlgym/envs/<family>/__init__.py``."""

    name: str
    cards: tuple[TaskCard, ...]
    agents: dict[str, AgentInfo] = field(default_factory=dict)
    # a dict, or a function returning one: called after the family's extras are registered
    suites: Any = field(default_factory=dict)
    extras: dict[str, tuple[str, ...]] = field(default_factory=dict)
    provenance: tuple[str, ...] = ()


FAMILIES: dict[str, Family] = {}
"""Every registered family by name (``icmlgym.envs.register_all`` discovers them)."""


def _gym_entry(env_id: str):
    return gym.registry.get(env_id)


def _pz_registry():
    from pettingzoo.env_registry.registration import parallel_registry

    return parallel_registry


def register(card: TaskCard) -> None:
    """Add ``card`` to the catalog and its env to Gymnasium's registry (PettingZoo's for ``kind="multi"``).

    Raises :class:`DuplicateRegistrationError` if the id is registered with a different card
    (or, outside icmlgym, with a different entry point); registering the identical card again
    does nothing."""
    old = catalog.card(card.id) if catalog.has_card(card.id) else None
    if old is not None:
        if old == card:
            return
        raise DuplicateRegistrationError(
            f"{card.id} is already registered (family {old.family!r}, entry point {old.entry_point}); "
            f"unregister it first or bump the version (icmlgym/Name-v<N+1>)"
        )
    foreign = _gym_entry(card.id) if card.kind == "single" else _pz_registry().get(card.id)
    if foreign is not None and str(getattr(foreign, "entry_point", "")) != card.entry_point:
        raise DuplicateRegistrationError(
            f"{card.id} is already in {'Gymnasium' if card.kind == 'single' else 'PettingZoo'}'s registry "
            f"with entry point {foreign.entry_point}, not {card.entry_point}"
        )
    catalog.add_card(card)
    if foreign is None:
        if card.kind == "single":
            gym.register(
                id=card.id, entry_point=card.entry_point, vector_entry_point=card.vector_entry_point,
                kwargs=dict(card.default_kwargs),
            )
        else:
            from pettingzoo.env_registry.registration import register as pz_register

            pz_register("parallel", card.id, entry_point=card.entry_point, kwargs=dict(card.default_kwargs))


def unregister(env_id: str) -> TaskCard:
    """Remove an env from the catalog, its suites, and Gymnasium's (or PettingZoo's) registry; returns its card."""
    c = catalog.remove_card(catalog.card(env_id).id)
    if c.kind == "single":
        gym.registry.pop(c.id, None)
    else:
        _pz_registry().pop(c.id, None)
    return c


def register_agent(name: str, info: AgentInfo) -> None:
    """Ship an agent under ``name`` (usable as ``--agent name``); a different agent of that name raises."""
    old = AGENTS.get(name)
    if old is not None and old != info:
        raise DuplicateRegistrationError(f"agent name {name!r} is already registered for {old.entry_point}; pick another name")
    AGENTS[name] = info


def unregister_agent(name: str) -> AgentInfo:
    """Remove a shipped agent name; returns what it pointed to."""
    if name not in AGENTS:
        raise KeyError(f"no agent {name!r} is registered")
    return AGENTS.pop(name)


def register_extra(name: str, imports: tuple[str, ...]) -> None:
    """Declare an optional extra and the modules that must import for it to count as installed."""
    imports = tuple(imports)
    old = EXTRAS.get(name)
    if old is not None and old != imports:
        raise DuplicateRegistrationError(f"extra [{name}] is declared with imports {old}, now {imports}")
    EXTRAS[name] = imports


@contextmanager
def registered(*cards: TaskCard, agents: dict[str, AgentInfo] | None = None) -> Iterator[None]:
    """Register ``cards`` and ``agents`` for the duration of a ``with`` block (tests, notebooks).

    Afterwards the catalog and the registries are as they were: entries this block added are
    removed, entries that were already there (identical) are kept."""
    added_cards: list[str] = []
    added_agents: list[str] = []
    try:
        for c in cards:
            if not catalog.has_card(c.id):
                added_cards.append(c.id)
            register(c)
        for name, info in (agents or {}).items():
            if name not in AGENTS:
                added_agents.append(name)
            register_agent(name, info)
        yield
    finally:
        for env_id in reversed(added_cards):
            if catalog.has_card(env_id):
                unregister(env_id)
        for name in added_agents:
            AGENTS.pop(name, None)


def family_of(module: ModuleType) -> Family | None:
    """The :class:`Family` a package declares, or None if it defines no ``CARDS`` (shared code, not a family)."""
    if not hasattr(module, "CARDS"):
        return None
    name = module.__name__.rsplit(".", 1)[-1]
    cards = tuple(getattr(module, "CARDS"))
    for c in cards:
        if c.family != name:
            raise ValueError(f"{c.id} is declared in icmlgym.envs.{name} but its card says family={c.family!r}")
    return Family(
        name=name,
        cards=cards,
        agents=dict(getattr(module, "AGENTS", {})),
        suites=getattr(module, "SUITES", {}),
        extras={k: tuple(v) for k, v in getattr(module, "EXTRAS", {}).items()},
        provenance=tuple(getattr(module, "PROVENANCE", ())),
    )


def register_family(family: Family) -> None:
    """Register everything a family declares: extras first, then cards, agents and suites."""
    for extra, imports in family.extras.items():
        register_extra(extra, imports)
    for c in family.cards:
        if c.extra is not None and c.extra not in EXTRAS:
            raise ValueError(f"{c.id} needs extra [{c.extra}], which neither its family nor the core declares")
        register(c)
    for name, info in family.agents.items():
        register_agent(name, info)
    if callable(family.suites):  # built on first use (see catalog.add_suite_source)
        catalog.add_suite_source(family.suites)
    for suite_name, members in ({} if callable(family.suites) else family.suites).items():
        for env_id, kwargs in members:
            catalog.add_to_suite(suite_name, env_id, kwargs)
    FAMILIES[family.name] = family


def provenance_packages() -> tuple[str, ...]:
    """Distribution names whose versions a run records: the core's, then every family's declared ones."""
    out = list(catalog.CORE_PROVENANCE)
    for fam in FAMILIES.values():
        out += [p for p in fam.provenance if p not in out]
    return tuple(out)


__all__ = [
    "DuplicateRegistrationError",
    "FAMILIES",
    "Family",
    "family_of",
    "provenance_packages",
    "register",
    "register_agent",
    "register_extra",
    "register_family",
    "registered",
    "unregister",
    "unregister_agent",
]
