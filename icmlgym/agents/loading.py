"""Shipped agent names and loading agents from a name, ``module:Class`` or a ``.py`` file.

Names are registered as strings (:class:`icmlgym.catalog.AgentInfo`), so listing
agents imports nothing. Generic baselines are listed in the catalog; each family
lists its own in ``icmlgym/envs/<family>/__init__.py`` (its ``AGENTS`` dict).
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from icmlgym.agents.protocol import missing_methods
from icmlgym.catalog import AGENTS, agent_kind, require_extra
from icmlgym.codehash import agent_modules


def agents_table() -> list[dict[str, str]]:
    """Every shipped agent name with its kind, entry point, extra and description."""
    from icmlgym.envs import register_all

    register_all()
    return [
        {"name": n, "kind": agent_kind(n), "entry_point": i.entry_point, "extra": i.extra or "", "description": i.description}
        for n, i in sorted(AGENTS.items())
    ]


class AgentLoadError(ValueError):
    """An agent spec that cannot be loaded; the message says why."""


@dataclass
class LoadedAgent:
    """A loaded agent class with its provenance. Call it to get a fresh instance."""

    name: str
    entry_point: str
    cls: Callable[..., Any]
    kwargs: dict[str, Any]
    source_hash: str
    # the agent's module (or file) and the icmlgym modules it imports: part of the run key's "code"
    code_files: dict[str, Path] = field(default_factory=dict, repr=False)

    def __call__(self) -> Any:
        return self.cls(**self.kwargs)


def _source_hash(obj: Any, path: str | None = None) -> str:
    try:
        if path is not None:
            data = Path(path).read_bytes()
        else:
            module = inspect.getmodule(obj)
            data = inspect.getsource(module if module is not None else obj).encode()
    except (OSError, TypeError):
        data = repr(obj).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def _check_protocol(cls: Any, spec: str) -> None:
    if getattr(cls, "multi_agent", False):
        return
    missing = missing_methods(cls)
    if missing:
        raise AgentLoadError(
            f"{spec!r} does not implement the icmlgym Agent protocol: missing {', '.join(missing)} "
            "(an agent needs reset(seed, spec), act(obs, info) and update(...); "
            "subclass icmlgym.BaseAgent for defaults)"
        )


def _load_from_file(path: str, attr: str | None) -> tuple[Any, str]:
    p = Path(path)
    if not p.is_file():
        raise AgentLoadError(f"agent file {path!r} does not exist")
    mod_name = f"icmlgym_user_agent_{hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:10]}"
    spec = importlib.util.spec_from_file_location(mod_name, p)
    if spec is None or spec.loader is None:
        raise AgentLoadError(f"cannot import {path!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        del sys.modules[mod_name]
        raise AgentLoadError(f"importing agent file {path!r} failed: {type(err).__name__}: {err}") from err
    if attr is None:
        candidates = [
            v
            for k, v in vars(module).items()
            if inspect.isclass(v) and v.__module__ == mod_name and not missing_methods(v) and not k.startswith("_")
        ]
        if len(candidates) != 1:
            names = [c.__name__ for c in candidates]
            raise AgentLoadError(
                f"{path!r} defines {len(candidates)} agent classes {names}; name one with {path}:ClassName"
            )
        return candidates[0], f"{p}:{candidates[0].__name__}"
    if not hasattr(module, attr):
        raise AgentLoadError(f"{path!r} has no attribute {attr!r}")
    return getattr(module, attr), f"{p}:{attr}"


def _load_from_module(module_name: str, attr: str) -> Any:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise AgentLoadError(
            f"cannot import module {module_name!r} for agent {module_name}:{attr} ({err}); "
            "is it installed or on PYTHONPATH?"
        ) from err
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            public = sorted(k for k in vars(module) if not k.startswith("_"))
            raise AgentLoadError(
                f"module {module_name!r} has no attribute {attr!r}"
                + (f"; it defines {', '.join(public[:15])}" if public else "")
            )
        obj = getattr(obj, part)
    return obj


def load_agent(spec: Any, **kwargs: Any) -> LoadedAgent:
    """Resolve an agent given as a shipped name, ``module:Class``, ``path.py[:Class]``, a class or an instance.

    Returns a :class:`LoadedAgent`; call it for a fresh, unseeded instance. Errors
    (unknown name, missing module or class, not an Agent) raise
    :class:`AgentLoadError` with the reason.
    """
    from icmlgym.envs import register_all

    register_all()
    if isinstance(spec, LoadedAgent):
        return spec
    if not isinstance(spec, str):
        if inspect.isclass(spec):
            _check_protocol(spec, spec.__name__)
            ep = f"{spec.__module__}:{spec.__qualname__}"
            return LoadedAgent(getattr(spec, "name", "") or spec.__name__, ep, spec, kwargs, _source_hash(spec), agent_modules(spec))
        if kwargs:
            raise AgentLoadError("keyword arguments only apply when loading an agent class, not an instance")
        _check_protocol(spec, type(spec).__name__)
        instance = spec
        ep = f"{type(spec).__module__}:{type(spec).__qualname__}"
        name = getattr(spec, "name", "") or type(spec).__name__
        return LoadedAgent(name, ep, lambda: _copy(instance), {}, _source_hash(type(spec)), agent_modules(type(spec)))

    text = spec.strip()
    if text in AGENTS:
        info = AGENTS[text]
        if info.extra:
            require_extra(info.extra, what=f"agent {text!r}")
        mod, _, attr = info.entry_point.partition(":")
        cls = _load_from_module(mod, attr)
        _check_protocol(cls, text)
        return LoadedAgent(text, info.entry_point, cls, {**info.kwargs, **kwargs}, _source_hash(cls), agent_modules(cls))

    path_part, sep, attr = text.rpartition(":") if text.count(":") else (text, "", "")
    if not sep:
        path_part, attr = text, ""
    is_file = path_part.endswith(".py") or os.sep in path_part and Path(path_part).suffix == ".py"
    if is_file:
        cls, ep = _load_from_file(path_part, attr or None)
        _check_protocol(cls, text)
        name = getattr(cls, "name", "") or Path(path_part).stem + ":" + cls.__name__
        return LoadedAgent(name, ep, cls, kwargs, _source_hash(cls, path_part), agent_modules(cls, path_part))
    if sep and path_part and attr:
        cls = _load_from_module(path_part, attr)
        _check_protocol(cls, text)
        name = getattr(cls, "name", "") or f"{path_part}:{attr}"
        return LoadedAgent(name, text, cls, kwargs, _source_hash(cls), agent_modules(cls))
    close = difflib.get_close_matches(text, list(AGENTS), n=3, cutoff=0.5)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise AgentLoadError(
        f"unknown agent {text!r}{hint}: give a shipped name (`icmlgym agents`), module:Class, or a path to a .py file"
    )


def _copy(instance: Any) -> Any:
    import copy

    return copy.deepcopy(instance)
