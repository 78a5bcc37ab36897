"""One on-disk cache for every family: content-addressed, atomic, safe under concurrent writers.

Layout: ``$ICMLGYM_HOME/cache/<namespace>/<key><suffix>`` (``$ICMLGYM_HOME``
defaults to ``~/.cache/icmlgym``; screening keeps its historical folder
``$ICMLGYM_HOME/screening``, see :data:`LEGACY`). A key is usually
:func:`content_key` of everything the entry depends on (name, configuration,
code hash), so a changed input is a new entry and never a stale one.

Rules every writer follows (and that this module enforces):

- **Atomic writes.** Data goes to a temporary file with a *unique* name
  (``mkstemp``) in the entry's folder and is renamed into place with
  ``os.replace``; a reader sees the old entry, the new one, or none, never half
  of one, and two writers never share a temporary file.
- **Build once.** :meth:`Cache.lock` is an exclusive ``flock`` per key: a
  process that builds an expensive entry takes it, re-checks, builds, writes;
  a second process building the same key waits, then finds the entry.
- **Corrupt entries are misses.** Readers that cannot parse an entry treat it as
  absent (and the next write replaces it).

``icmlgym cache list`` prints :func:`report`; ``icmlgym cache clear`` calls :func:`clear`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from icmlgym.catalog import canonical_json

# namespaces that live directly under $ICMLGYM_HOME rather than under cache/ (kept where users' files already are)
LEGACY: tuple[str, ...] = ("screening",)
_NAME_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def home() -> Path:
    """``$ICMLGYM_HOME`` if set, else ``~/.cache/icmlgym`` (not created here)."""
    env = os.environ.get("ICMLGYM_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "icmlgym"


def root() -> Path:
    """The folder holding every namespace of the cache."""
    return home() / "cache"


def content_key(*parts: Any, n: int = 24) -> str:
    """A hex key from anything JSON-able (dicts hash the same whatever their key order)."""
    return hashlib.sha256(canonical_json(list(parts)).encode()).hexdigest()[:n]


def file_hash(*paths: str | os.PathLike, n: int = 16) -> str:
    """A hex digest of the bytes of some files (e.g. the source code an entry was built by)."""
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:n]


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a uniquely named temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def _check_name(kind: str, name: str) -> str:
    if not name or name.startswith(".") or not set(name) <= _NAME_OK:
        raise ValueError(f"cache {kind} must be letters, digits, '-', '_' or '.' (not leading), got {name!r}")
    return name


class Cache:
    """One namespace of the cache (``Cache("zoo")``, ``Cache("embeddings")``, ...).

    Args:
        namespace: the folder name under the cache root.
        directory: an explicit folder instead of the default location (tests, user overrides).
    """

    def __init__(self, namespace: str, directory: str | os.PathLike | None = None) -> None:
        self.namespace = _check_name("namespace", namespace)
        if directory is not None:
            self.dir = Path(directory)
        elif namespace in LEGACY:
            self.dir = home() / namespace
        else:
            self.dir = root() / namespace

    def __repr__(self) -> str:
        return f"Cache({self.namespace!r}, {str(self.dir)!r})"

    def path(self, key: str, suffix: str = "") -> Path:
        """Where the entry ``key`` lives (it may not exist)."""
        return self.dir / (_check_name("key", key) + suffix)

    def exists(self, key: str, suffix: str = "") -> bool:
        return self.path(key, suffix).is_file()

    # --------------------------------------------------------------- bytes, JSON, arrays
    def write_bytes(self, key: str, data: bytes, suffix: str = "") -> Path:
        return atomic_write_bytes(self.path(key, suffix), data)

    def read_bytes(self, key: str, suffix: str = "") -> bytes | None:
        try:
            return self.path(key, suffix).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None

    def write_json(self, key: str, obj: Any) -> Path:
        return self.write_bytes(key, json.dumps(obj, sort_keys=True).encode(), ".json")

    def read_json(self, key: str) -> Any | None:
        raw = self.read_bytes(key, ".json")
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None

    def write_arrays(self, key: str, arrays: dict[str, Any]) -> Path:
        import numpy as np

        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return self.write_bytes(key, buf.getvalue(), ".npz")

    def read_arrays(self, key: str) -> dict[str, Any] | None:
        import numpy as np

        path = self.path(key, ".npz")
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                return {k: data[k] for k in data.files}
        except (OSError, ValueError, EOFError, KeyError):
            return None

    # --------------------------------------------------------------- build once
    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        """An exclusive inter-process lock on ``key`` (blocks until it is free)."""
        lock_dir = self.dir / ".locks"
        lock_dir.mkdir(parents=True, exist_ok=True)
        with open(lock_dir / f"{_check_name('key', key)}.lock", "a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def keys(self) -> list[str]:
        """Every entry's file name (without temporary files and locks)."""
        if not self.dir.is_dir():
            return []
        return sorted(p.name for p in self.dir.rglob("*") if p.is_file() and not _hidden(p, self.dir))

    def remove(self, key: str, suffix: str = "") -> bool:
        try:
            self.path(key, suffix).unlink()
            return True
        except FileNotFoundError:
            return False


def _hidden(path: Path, base: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(base).parts)


@dataclass(frozen=True)
class Usage:
    """What one namespace holds on disk."""

    namespace: str
    path: str
    files: int
    bytes: int


def namespaces() -> list[Cache]:
    """Every namespace present on disk."""
    out = []
    if root().is_dir():
        out += [Cache(p.name) for p in sorted(root().iterdir()) if p.is_dir() and not p.name.startswith(".")]
    out += [Cache(n) for n in LEGACY if (home() / n).is_dir()]
    return sorted(out, key=lambda c: c.namespace)


def report() -> list[Usage]:
    """Files and bytes per namespace (temporary files and locks excluded)."""
    rows = []
    for c in namespaces():
        files = [p for p in c.dir.rglob("*") if p.is_file() and not _hidden(p, c.dir)]
        rows.append(Usage(c.namespace, str(c.dir), len(files), sum(p.stat().st_size for p in files)))
    return rows


def clear(namespace: str | None = None) -> tuple[int, int]:
    """Delete one namespace (or all): returns (files, bytes) removed. An unknown namespace is an error."""
    present = {c.namespace: c for c in namespaces()}
    if namespace is not None and namespace not in present:
        raise KeyError(f"no cache namespace {namespace!r}; present: {sorted(present) or 'none'}")
    targets = [present[namespace]] if namespace is not None else list(present.values())
    files = nbytes = 0
    for c in targets:
        for p in c.dir.rglob("*"):
            if p.is_file() and not _hidden(p, c.dir):  # locks and temporary files are not entries
                files += 1
                nbytes += p.stat().st_size
        shutil.rmtree(c.dir, ignore_errors=True)
    return files, nbytes


__all__ = ["Cache", "Usage", "atomic_write_bytes", "clear", "content_key", "file_hash", "home", "namespaces", "report", "root"]
