"""Credentials never reach a record, a label, an export or a report.

A keyword argument (of an env or an agent) whose name looks like a credential
(``api_key``, ``token``, ``password``, ``secret``, ...) is replaced by
:data:`REDACTED` wherever a run is described; the env itself still gets the real
value. Text an agent or env produced (error text, logs) has the values of such
arguments, and of environment variables named like credentials, blanked out.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable

REDACTED = "<redacted>"
_SECRET_NAME = re.compile(
    r"(api[_-]?key|apikey|token|passw(or)?d|passwd|secret|credential|private[_-]?key|access[_-]?key|auth[_-]?(key|token)|bearer)",
    re.IGNORECASE,
)
_MIN_SECRET_LEN = 6  # shorter values would blank out ordinary words


def is_secret_name(name: Any) -> bool:
    """Whether a keyword or variable name looks like it holds a credential."""
    return isinstance(name, str) and bool(_SECRET_NAME.search(name))


def redact(value: Any) -> Any:
    """``value`` with every dict entry whose key looks like a credential replaced (recursively)."""
    if isinstance(value, dict):
        return {k: (REDACTED if is_secret_name(k) and v is not None else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact(v) for v in value)
    return value


def secret_values(*mappings: Any, environ: bool = True) -> list[str]:
    """The values of credential-named entries of ``mappings`` (and of ``os.environ``), longest first."""
    found: set[str] = set()

    def walk(m: Any) -> None:
        if isinstance(m, dict):
            for k, v in m.items():
                if is_secret_name(k) and isinstance(v, (str, bytes)) and len(v) >= _MIN_SECRET_LEN:
                    found.add(v.decode(errors="replace") if isinstance(v, bytes) else v)
                else:
                    walk(v)
        elif isinstance(m, (list, tuple)):
            for v in m:
                walk(v)

    for m in mappings:
        walk(m)
    if environ:
        walk(dict(os.environ))
    return sorted(found, key=len, reverse=True)


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by :data:`REDACTED`."""
    for s in secrets:
        if s and s in text:
            text = text.replace(s, REDACTED)
    return text


__all__ = ["REDACTED", "is_secret_name", "redact", "redact_text", "secret_values"]
