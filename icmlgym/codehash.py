"""Hashes of the code a run executes: the agent's source, the env's source, and the icmlgym
modules each of them imports (followed transitively).

A run key must change whenever the code that produced the run changes, or a resumed
sweep would skip a run whose result is now different. Hashing only the agent's own
module misses a change in a module it imports (a shared policy core, a helper in the
env's family); hashing the whole package would make every edit anywhere invalidate
every stored run. So the import graph is followed statically: each module's source is
parsed (never executed) and every ``import icmlgym...`` / ``from icmlgym... import ...``
in it, at any depth (function-level imports included), adds that module and what it
imports in turn. Parent packages imported only implicitly (``icmlgym/__init__.py``
when ``icmlgym.catalog`` is imported) are not followed: they are the registry, not the
code a run executes; a package that is named explicitly (``from icmlgym.envs import
make``) is. The runner's episode loop is hashed with the env. Third-party modules are
covered by the package versions in the record.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import os
import sys
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

ROOT = "icmlgym"
# the episode loop that joins agent and env: its changes change results too (named, not imported:
# this module sits below the runner)
HARNESS = ("icmlgym.runner.rollout",)


def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` without importing it (None if it is not a source module)."""
    mod = sys.modules.get(name)
    path = getattr(mod, "__file__", None) if mod is not None else None
    if path is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, AttributeError):
            return None
        path = spec.origin if spec is not None else None
    if not path or not str(path).endswith(".py"):
        return None
    return Path(path)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


# CPython 3.11's AST construction is not safe in concurrent threads (python/cpython#106905: a spurious
# "AST constructor recursion depth mismatch" SystemError); threads of one process hash code one at a time
_PARSE_LOCK = threading.Lock()


@lru_cache(maxsize=4096)
def _parse_imports(path: str, mtime_ns: int, module: str, is_pkg: bool) -> tuple[bytes, tuple[str, ...]]:
    """(source bytes, icmlgym modules named by its imports); cached per file version."""
    data = Path(path).read_bytes()
    try:
        with _PARSE_LOCK:
            tree = ast.parse(data)
    except SyntaxError:
        return data, ()
    package = module if is_pkg else module.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base_parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base:
                found.append(base)
            # `from pkg import sub` imports the submodule pkg.sub when there is one
            found += [f"{base}.{a.name}" for a in node.names if a.name != "*"]
    return data, tuple(sorted({m for m in found if m == ROOT or m.startswith(ROOT + ".")}))


def module_closure(start: Iterable[str], extra_files: Iterable[str | os.PathLike] = ()) -> dict[str, Path]:
    """Every icmlgym module reachable from the ``start`` modules (and the given source files)
    through their import statements: ``{module name: source file}``.

    Names that are not modules (``from icmlgym.catalog import card`` names ``icmlgym.catalog.card``)
    are dropped. Files in ``extra_files`` (a user's agent file) are parsed as top-level modules."""
    out: dict[str, Path] = {}
    todo: list[tuple[str, Path]] = []
    for name in start:
        p = _module_file(name)
        if p is not None:
            todo.append((name, p))
    for i, f in enumerate(extra_files):
        todo.append((f"__file{i}__", Path(f)))
    seen: set[str] = set()
    while todo:
        name, path = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        out[name] = path
        try:
            st = path.stat()
        except OSError:
            continue
        _, imports = _parse_imports(str(path), st.st_mtime_ns, name, _is_package(path))
        for m in imports:
            if m not in seen:
                p = _module_file(m)
                if p is not None:
                    todo.append((m, p))
    return out


def hash_files(files: dict[str, Path]) -> str:
    """A 16-hex-digit hash over ``{name: file}``: names and contents, in name order."""
    h = hashlib.sha256()
    for name in sorted(files):
        path = files[name]
        try:
            st = path.stat()
            data, _ = _parse_imports(str(path), st.st_mtime_ns, name, _is_package(path))
        except OSError:
            data = b""
        rel = name if not name.startswith("__file") else "<agent file>"
        h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()[:16]


def _entry_module(entry_point: str) -> str:
    return entry_point.partition(":")[0]


def env_modules(entry_point: str) -> dict[str, Path]:
    """The env's module (from its card's ``module:Class`` entry point) and the icmlgym modules it imports."""
    return module_closure([_entry_module(entry_point)])


def env_source_hash(entry_point: str) -> str:
    """Hash of the env's source and the icmlgym modules it imports (stored with each run)."""
    return hash_files(env_modules(entry_point))


def agent_modules(cls: Any, path: str | os.PathLike | None = None) -> dict[str, Path]:
    """The agent's module (or its file) and the icmlgym modules it imports."""
    if path is not None:
        return module_closure([], [path])
    module = inspect.getmodule(cls if inspect.isclass(cls) or inspect.isfunction(cls) else type(cls))
    name = getattr(module, "__name__", None)
    file = getattr(module, "__file__", None)
    if name is None:
        return {}
    if name.startswith(ROOT + ".") or name == ROOT:
        return module_closure([name])
    # a user's module outside icmlgym: its own file, then the icmlgym modules it imports
    return module_closure([], [file]) if file and str(file).endswith(".py") else {}


def code_hash(agent_source_hash: str, agent_files: dict[str, Path], env_entry_point: str | None) -> str:
    """The "code" part of a run key, 16 hex digits: the first 8 hash the agent's own source and the
    icmlgym modules it imports (the agent's code version, the same on every env), the last 8 the
    env's module, the runner's episode loop (:data:`HARNESS`) and the icmlgym modules they import.
    Changing any of them changes the key; editing a module none of them imports does not."""
    agent = hashlib.sha256(f"{agent_source_hash}:{hash_files(dict(agent_files))}".encode()).hexdigest()[:8]
    files = module_closure(HARNESS)
    if env_entry_point:
        files.update(env_modules(env_entry_point))
    return agent + hash_files(files)[:8]


__all__ = ["agent_modules", "code_hash", "env_modules", "env_source_hash", "hash_files", "module_closure"]
