"""A submission's identity, taken from its bytes: the submitting process never imports it.

:func:`identify` turns what a user submits (a shipped agent name, ``path/to/file.py[:Class]``
or ``module:Class``) into an :class:`~icmlgym.runner.evaluator.Isolation`: the entry's
name (the submitter's ``--name``, by default the file's stem, with ``:Class`` when one is named; never a class
attribute), the entry point, a hash of the source file's bytes, and what the
agent host loads inside the sandbox. Shipped agent names are reserved for the
shipped agents. Files are located without executing anything
(``importlib.machinery.PathFinder`` reads directories, it does not import).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
import re
from pathlib import Path

from icmlgym.catalog import AGENTS
from icmlgym.runner.evaluator import Isolation
from icmlgym.runner.sandbox import SandboxOptions

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+@/-]{0,99}$")


class SubmissionError(ValueError):
    """A submission that cannot be identified or named; the message says why."""


def file_hash(path: str | os.PathLike) -> str:
    """The source hash of one file: SHA-256 of its bytes (16 hex digits, as agent source hashes are)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def locate_module(module: str) -> tuple[Path, Path]:
    """(the module's source file, the folder its top-level package lives in), found without importing it."""
    parts = module.split(".")
    spec = importlib.machinery.PathFinder.find_spec(parts[0])
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        raise SubmissionError(f"cannot find module {parts[0]!r} on the path (is it installed or on PYTHONPATH?)")
    top = Path(spec.origin)
    root = top.parent.parent if top.name == "__init__.py" else top.parent
    for part in parts[1:]:
        locations = list(spec.submodule_search_locations or [])
        if not locations:
            raise SubmissionError(f"{module!r}: {'.'.join(parts[:parts.index(part)])} is not a package")
        spec = importlib.machinery.PathFinder.find_spec(part, locations)
        if spec is None or not spec.origin:
            raise SubmissionError(f"cannot find module {module!r}")
    origin = Path(spec.origin)
    if origin.suffix != ".py":
        raise SubmissionError(f"module {module!r} is not Python source ({origin.name}); submit its .py file")
    return origin, root


def _check_name(name: str, shipped: str | None) -> str:
    if not _NAME.match(name):
        raise SubmissionError(f"entry name {name!r} must be 1-100 letters, digits or _.:+@/- and start with a letter or digit")
    if name in AGENTS and name != shipped:
        raise SubmissionError(f"the name {name!r} is reserved for the shipped agent; choose another --name")
    return name


def identify(agent: str, name: str | None = None, options: SandboxOptions | None = None) -> Isolation:
    """The identity and loading instructions of a submission (see the module docstring).

    Raises:
        SubmissionError: an unknown name, a missing file or module, or a reserved or malformed ``name``.
    """
    from icmlgym.envs import register_all

    register_all()
    text = agent.strip()
    opts = options or SandboxOptions()
    if text in AGENTS:
        info = AGENTS[text]
        mod = info.entry_point.partition(":")[0]
        path, _ = locate_module(mod)
        return Isolation(_check_name(name or text, text), info.entry_point, file_hash(path), text, opts, str(path), mod)
    path_part, sep, attr = text.rpartition(":")
    if not sep:
        path_part, attr = text, ""
    if path_part.endswith(".py"):
        p = Path(path_part).expanduser()
        if not p.is_file():
            raise SubmissionError(f"agent file {path_part!r} does not exist")
        p = p.resolve()
        opts.agent_path = str(p.parent)
        load = str(p) + (f":{attr}" if attr else "")
        default = p.stem + (f":{attr}" if attr else "")  # two classes of one file are two entries
        return Isolation(_check_name(name or default, None), text, file_hash(p), load, opts, str(p))
    if sep and path_part and attr:
        path, root = locate_module(path_part)
        opts.agent_path = str(root)
        return Isolation(_check_name(name or text, None), text, file_hash(path), text, opts, str(path))
    raise SubmissionError(
        f"unknown agent {text!r}: give a shipped name (`icmlgym agents`), module:Class, or a path to a .py file"
    )


__all__ = ["SubmissionError", "file_hash", "identify", "locate_module"]
