"""Real English already on every machine: docstrings of the Python standard library and installed packages.

Each document is one docstring (a module's, a class's or a function's), cleaned to
its prose paragraphs, labelled with the package (or standard-library topic) it
comes from. Grouped by topic, the groups serve as in-domain and out-of-domain text
for detection tasks: near-OOD is the same register (API documentation) on another
topic. The standard-library topics are fixed lists of modules (:data:`STDLIB_TOPICS`),
so the corpus is the same on every machine with the same Python version; installed
third-party packages may differ between machines and are opt-in by name.

Docstrings are read with :mod:`inspect` after importing the module; modules that fail
to import (a missing optional dependency) are skipped and listed in the card.
Splits are fixed by a hash of the text (80/10/10).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import re
import warnings
from dataclasses import dataclass
from typing import Iterable, Sequence

STDLIB_TOPICS: dict[str, tuple[str, ...]] = {
    "text": ("string", "textwrap", "difflib", "re", "unicodedata", "stringprep", "codecs"),
    "numbers": ("math", "cmath", "decimal", "fractions", "numbers", "statistics", "random"),
    "files": ("os.path", "pathlib", "shutil", "glob", "fnmatch", "tempfile", "filecmp", "stat"),
    "network": ("socket", "ssl", "http.client", "urllib.request", "urllib.parse", "smtplib", "email.message"),
    "concurrency": ("threading", "multiprocessing", "concurrent.futures", "asyncio", "queue", "sched", "subprocess"),
    "data": ("json", "csv", "pickle", "sqlite3", "shelve", "configparser", "plistlib"),
    "time": ("datetime", "time", "calendar", "zoneinfo"),
    "language": ("ast", "dis", "inspect", "tokenize", "symtable", "typing", "dataclasses", "functools", "itertools"),
}


@dataclass(frozen=True)
class Document:
    """One docstring: where it comes from, its topic and its cleaned text."""

    topic: str
    module: str
    qualname: str
    text: str

    @property
    def split(self) -> str:
        h = int(hashlib.sha256(self.text.encode()).hexdigest()[:8], 16) % 10
        return "train" if h < 8 else ("val" if h == 8 else "test")


_DOCTEST = re.compile(r"^\s*(>>>|\.\.\.)")


def clean(doc: str, max_chars: int = 600) -> str:
    """The prose of a docstring: the first paragraphs without doctest lines, whitespace collapsed."""
    lines = [ln for ln in inspect.cleandoc(doc).splitlines() if not _DOCTEST.match(ln)]
    text = " ".join(" ".join(lines).split())
    return text[:max_chars].rsplit(" ", 1)[0] if len(text) > max_chars else text


def _docs_of(module_name: str, topic: str, min_words: int) -> Iterable[Document]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = importlib.import_module(module_name)
    seen: set[str] = set()  # by value: ids of freed docstrings are reused, so an id set would drop texts at random

    def emit(obj, qual: str):
        doc = inspect.getdoc(obj) if obj is not mod else mod.__doc__
        if not doc or doc in seen:
            return
        seen.add(doc)
        text = clean(doc)
        if len(text.split()) >= min_words:
            yield Document(topic, module_name, qual, text)

    yield from emit(mod, module_name)
    for name, obj in sorted(vars(mod).items()):
        if name.startswith("_") or getattr(obj, "__module__", None) not in (mod.__name__, module_name):
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield from emit(obj, f"{module_name}.{name}")
            if inspect.isclass(obj):
                for mname, meth in sorted(vars(obj).items()):
                    if not mname.startswith("_") and inspect.isfunction(meth):
                        yield from emit(meth, f"{module_name}.{name}.{mname}")


def docstrings(
    topics: Sequence[str] | None = None,
    packages: Sequence[str] = (),
    split: str | None = None,
    min_words: int = 8,
) -> list[Document]:
    """Docstrings of standard-library topics (default: all of :data:`STDLIB_TOPICS`) and of
    installed ``packages`` (each package is its own topic).

    Raises:
        ValueError: an unknown topic or split, or a package that is not installed.
    """
    if split not in (None, "train", "val", "test"):
        raise ValueError(f"split must be train, val, test or None, got {split!r}")
    chosen = list(STDLIB_TOPICS) if topics is None else list(topics)
    unknown = [t for t in chosen if t not in STDLIB_TOPICS]
    if unknown:
        raise ValueError(f"unknown topics {unknown}; topics: {sorted(STDLIB_TOPICS)}")
    plan = [(m, t) for t in chosen for m in STDLIB_TOPICS[t]]
    for pkg in packages:
        if importlib.util.find_spec(pkg) is None:
            raise ValueError(f"package {pkg!r} is not installed")
        plan.append((pkg, pkg))
    out: list[Document] = []
    for module_name, topic in plan:
        try:
            docs = list(_docs_of(module_name, topic, min_words))
        except Exception:  # noqa: BLE001 - an optional module that does not import is skipped
            continue
        out += [d for d in docs if split is None or d.split == split]
    return out


def card() -> dict:
    return {
        "name": "docstrings",
        "source": "docstrings of the Python standard library (fixed module lists per topic) and opt-in installed packages",
        "topics": {t: list(m) for t, m in STDLIB_TOPICS.items()},
        "split": "80/10/10 by a hash of the text",
        "use": "in-domain = some topics, near-OOD = other topics (same register)",
    }


__all__ = ["Document", "STDLIB_TOPICS", "card", "clean", "docstrings"]
